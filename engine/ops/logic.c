/* clinfer — comparison and logical ops (Equal, Less, Greater, LessOrEqual,
 * GreaterOrEqual, Not, And, Or, Xor) and Where, with numpy broadcasting. */
#include "ops/op.h"
#include "ops/broadcast.h"
#include <string.h>

#define PAR_MIN 32768


/* Bool output of EXPR (x from @a, y from @b, both of type T). */
#define CMP_LOOP(T, EXPR)                                                    \
  do {                                                                       \
    const T *pa_ = clinfer_tensor_get_const_data (a);                        \
    const T *pb_ = clinfer_tensor_get_const_data (b);                        \
    uint8_t *po_ = clinfer_tensor_get_data (o);                              \
    const gboolean sa_ = bc.st[0][bc.rank - 1] != 0;                         \
    const gboolean sb_ = bc.st[1][bc.rank - 1] != 0;                         \
    _Pragma ("omp parallel for schedule(static) if (bc.n > PAR_MIN)")        \
    for (int64_t t_ = 0; t_ < bc.tiles; t_++) {                              \
      int64_t off_[3];                                                       \
      int64_t len_ = clinfer_bcast_tile (&bc, t_, off_);                             \
      const T *ra_ = pa_ + off_[0], *rb_ = pb_ + off_[1];                    \
      uint8_t *ro_ = po_ + off_[2];                                          \
      if (sa_ && sb_) {                                                      \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          T x = ra_[i_], y = rb_[i_];                                        \
          ro_[i_] = (EXPR) ? 1 : 0;                                          \
        }                                                                    \
      } else if (sa_) {                                                      \
        T y = rb_[0];                                                        \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          T x = ra_[i_];                                                     \
          ro_[i_] = (EXPR) ? 1 : 0;                                          \
        }                                                                    \
      } else {                                                               \
        T x = ra_[0];                                                        \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          T y = rb_[sb_ ? i_ : 0];                                           \
          ro_[i_] = (EXPR) ? 1 : 0;                                          \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  } while (0)

/* A STRING tensor element (the typed loops need a one-token type). */
typedef char *String;

/* ---------------------------------------------------------------- */
/* Binary comparison and logic                                       */

typedef enum {
  L_EQ, L_LT, L_GT, L_LE, L_GE, L_AND, L_OR, L_XOR,
} LogicOp;

static const struct {
  const char *name;
  LogicOp op;
} logic_names[] = {
  { "Equal", L_EQ }, { "Less", L_LT }, { "Greater", L_GT },
  { "LessOrEqual", L_LE }, { "GreaterOrEqual", L_GE }, { "And", L_AND },
  { "Or", L_OR }, { "Xor", L_XOR },
};

typedef struct {
  LogicOp op;
  ClinferLegacyBcast legacy; /* opset < 7 broadcast/axis */
} LogicData;

static gboolean
prepare_logic (ClinferNode *node, GError **error)
{
  g_autofree LogicData *d = g_new0 (LogicData, 1);

  for (gsize i = 0; i < G_N_ELEMENTS (logic_names); i++)
    if (strcmp (node->op_type, logic_names[i].name) == 0)
      d->op = logic_names[i].op;
  if (node->opset > 0 && node->opset < 7
      && !clinfer_legacy_bcast_parse (node, &d->legacy, error))
    return FALSE;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Old opsets align B at "axis" of A. */
static gboolean
legacy_shape (const ClinferNode *node, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *eff, GError **error)
{
  const LogicData *d = node->op_data;

  return clinfer_legacy_bcast_shape (node, &d->legacy, a, b, eff, error);
}

static gboolean
infer_logic (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const LogicData *d = node->op_data;
  ClinferElementType t = in[0].type;
  ClinferShape eff;
  gboolean ok;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error))
    return FALSE;
  if (d->op >= L_AND)
    ok = t == CLINFER_TYPE_BOOL;
  else if (d->op == L_EQ)
    ok = t == CLINFER_TYPE_BOOL || t == CLINFER_TYPE_STRING
        || clinfer_op_type_is_numeric (t);
  else
    ok = clinfer_op_type_is_numeric (t);
  if (!ok || in[1].type != t) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: unsupported input types %s and %s", clinfer_node_label (node),
        clinfer_element_type_name (t), clinfer_element_type_name (in[1].type));
    return FALSE;
  }
  if (!legacy_shape (node, &in[0].shape, &in[1].shape, &eff, error))
    return FALSE;
  if (!clinfer_shape_broadcast (&in[0].shape, &eff, &out[0].shape, error)) {
    g_prefix_error (error, "%s: ", clinfer_node_label (node));
    return FALSE;
  }
  out[0].type = CLINFER_TYPE_BOOL;
  return TRUE;
}

#define CMP_OPS(T)                                                           \
  switch (op) {                                                              \
    case L_EQ: CMP_LOOP (T, x == y); break;                                  \
    case L_LT: CMP_LOOP (T, x < y); break;                                   \
    case L_GT: CMP_LOOP (T, x > y); break;                                   \
    case L_LE: CMP_LOOP (T, x <= y); break;                                  \
    case L_GE: CMP_LOOP (T, x >= y); break;                                  \
    case L_AND: CMP_LOOP (T, x && y); break;                                 \
    case L_OR: CMP_LOOP (T, x || y); break;                                  \
    case L_XOR: CMP_LOOP (T, !x != !y); break;                               \
  }

static gboolean
logic_apply (const ClinferNode *node, LogicOp op, const ClinferTensor *a,
    const ClinferTensor *b, const ClinferShape *b_shape, ClinferTensor *o,
    GError **error)
{
  const ClinferShape *ins[2] = { clinfer_tensor_get_shape (a), b_shape };
  ClinferElementType t = clinfer_tensor_get_element_type (a);
  ClinferBcast bc;

  clinfer_bcast_init (&bc, 2, ins, clinfer_tensor_get_shape (o));
  if (bc.n <= 0)
    return TRUE;
  switch (t) {
    case CLINFER_TYPE_F32: CMP_OPS (float); break;
    case CLINFER_TYPE_F64: CMP_OPS (double); break;
    case CLINFER_TYPE_I8: CMP_OPS (int8_t); break;
    case CLINFER_TYPE_I16: CMP_OPS (int16_t); break;
    case CLINFER_TYPE_I32: CMP_OPS (int32_t); break;
    case CLINFER_TYPE_I64: CMP_OPS (int64_t); break;
    case CLINFER_TYPE_U8: case CLINFER_TYPE_BOOL: CMP_OPS (uint8_t); break;
    case CLINFER_TYPE_U16: CMP_OPS (uint16_t); break;
    case CLINFER_TYPE_U32: CMP_OPS (uint32_t); break;
    case CLINFER_TYPE_U64: CMP_OPS (uint64_t); break;
    case CLINFER_TYPE_STRING:
      CMP_LOOP (String, g_strcmp0 (x, y) == 0);
      break;
    default:
      return clinfer_op_unsupported_type (node, t, error);
  }
  return TRUE;
}

static gboolean
eval_logic (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const LogicData *d = node->op_data;
  ClinferShape eff;

  if (!legacy_shape (node, clinfer_tensor_get_shape (in[0]),
          clinfer_tensor_get_shape (in[1]), &eff, error))
    return FALSE;
  if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (in[0])))
    return clinfer_op_eval_via_f32 (node, in, out, eval_logic, error);
  return logic_apply (node, d->op, in[0], in[1], &eff, out[0], error);
}

/* ---------------------------------------------------------------- */
/* Not                                                               */

static gboolean
infer_not (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (in[0].type != CLINFER_TYPE_BOOL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: expected a bool input, got %s", clinfer_node_label (node),
        clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  out[0].type = CLINFER_TYPE_BOOL;
  out[0].shape = in[0].shape;
  return TRUE;
}

static gboolean
eval_not (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const uint8_t *p = clinfer_tensor_get_const_data (in[0]);
  uint8_t *q = clinfer_tensor_get_data (out[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]);

#pragma omp parallel for schedule(static) if (n > PAR_MIN)
  for (int64_t i = 0; i < n; i++)
    q[i] = !p[i];
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Where                                                             */

static gboolean
infer_where (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  ClinferShape s;

  for (guint i = 0; i < 3; i++)
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
  if (in[0].type != CLINFER_TYPE_BOOL || in[1].type != in[2].type
      || clinfer_element_type_size (in[1].type) == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: expected a bool condition and two inputs of one type, got %s, "
        "%s and %s", clinfer_node_label (node),
        clinfer_element_type_name (in[0].type),
        clinfer_element_type_name (in[1].type),
        clinfer_element_type_name (in[2].type));
    return FALSE;
  }
  if (!clinfer_shape_broadcast (&in[0].shape, &in[1].shape, &s, error)
      || !clinfer_shape_broadcast (&s, &in[2].shape, &s, error)) {
    g_prefix_error (error, "%s: ", clinfer_node_label (node));
    return FALSE;
  }
  out[0].type = in[1].type;
  out[0].shape = s;
  return TRUE;
}

/* Copies by element size: the values are never interpreted. */
#define WHERE_LOOP(T, COPY)                                                  \
  do {                                                                       \
    const T *px_ = clinfer_tensor_get_const_data (in[1]);                    \
    const T *py_ = clinfer_tensor_get_const_data (in[2]);                    \
    T *po_ = clinfer_tensor_get_data (out[0]);                               \
    _Pragma ("omp parallel for schedule(static) if (bc.n > PAR_MIN)")        \
    for (int64_t t_ = 0; t_ < bc.tiles; t_++) {                              \
      int64_t off_[4];                                                       \
      int64_t len_ = clinfer_bcast_tile (&bc, t_, off_);                             \
      const uint8_t *rc_ = pc + off_[0];                                     \
      const T *rx_ = px_ + off_[1], *ry_ = py_ + off_[2];                    \
      T *ro_ = po_ + off_[3];                                                \
      for (int64_t i_ = 0; i_ < len_; i_++)                                  \
        ro_[i_] = COPY (rc_[i_ * sc] ? rx_[i_ * sx] : ry_[i_ * sy]);         \
    }                                                                        \
  } while (0)

#define PLAIN(v) (v)

static gboolean
eval_where (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ins[3];
  const uint8_t *pc = clinfer_tensor_get_const_data (in[0]);
  ClinferElementType t = clinfer_tensor_get_element_type (in[1]);
  int64_t sc, sx, sy;
  ClinferBcast bc;

  for (int k = 0; k < 3; k++)
    ins[k] = clinfer_tensor_get_shape (in[k]);
  clinfer_bcast_init (&bc, 3, ins, clinfer_tensor_get_shape (out[0]));
  if (bc.n <= 0)
    return TRUE;
  sc = bc.st[0][bc.rank - 1] != 0;
  sx = bc.st[1][bc.rank - 1] != 0;
  sy = bc.st[2][bc.rank - 1] != 0;
  if (t == CLINFER_TYPE_STRING) {
    WHERE_LOOP (String, g_strdup);
    return TRUE;
  }
  switch (clinfer_element_type_size (t)) {
    case 1: WHERE_LOOP (uint8_t, PLAIN); break;
    case 2: WHERE_LOOP (uint16_t, PLAIN); break;
    case 4: WHERE_LOOP (uint32_t, PLAIN); break;
    case 8: WHERE_LOOP (uint64_t, PLAIN); break;
    default:
      return clinfer_op_unsupported_type (node, t, error);
  }
  return TRUE;
}

#define LOGIC(name, since) \
  { name, "", since, 0, 2, 2, 1, 1, 0, prepare_logic, g_free, infer_logic, \
    eval_logic }

const ClinferOpDef clinfer_ops_logic[] = {
  LOGIC ("Equal", 1),
  LOGIC ("Less", 1),
  LOGIC ("Greater", 1),
  LOGIC ("LessOrEqual", 12),
  LOGIC ("GreaterOrEqual", 12),
  LOGIC ("And", 1),
  LOGIC ("Or", 1),
  LOGIC ("Xor", 1),
  { "Not", "", 1, 0, 1, 1, 1, 1, 0, NULL, NULL, infer_not, eval_not },
  { "Where", "", 9, 0, 3, 3, 1, 1, 0, NULL, NULL, infer_where, eval_where },
  { NULL }
};
