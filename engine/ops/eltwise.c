/* clinfer — element-wise binary and variadic arithmetic (Add, Sub, Mul, Div,
 * Pow, Mod, Max, Min, Sum, Mean, PRelu, BitShift) with numpy broadcasting
 * and the legacy (opset < 7) broadcast/axis attributes. */
#include "ops/op.h"
#include "ops/broadcast.h"
#include <math.h>
#include <string.h>

#define PAR_MIN 32768


/* Runs EXPR (of x from @a and y from @b) over the broadcast output @o. */
#define BIN_LOOP(TA, TB, TO, EXPR)                                           \
  do {                                                                       \
    const TA *pa_ = clinfer_tensor_get_const_data (a);                       \
    const TB *pb_ = clinfer_tensor_get_const_data (b);                       \
    TO *po_ = clinfer_tensor_get_data (o);                                   \
    const gboolean sa_ = bc.st[0][bc.rank - 1] != 0;                         \
    const gboolean sb_ = bc.st[1][bc.rank - 1] != 0;                         \
    _Pragma ("omp parallel for schedule(static) if (bc.n > PAR_MIN)")        \
    for (int64_t t_ = 0; t_ < bc.tiles; t_++) {                              \
      int64_t off_[3];                                                       \
      int64_t len_ = clinfer_bcast_tile (&bc, t_, off_);                             \
      const TA *ra_ = pa_ + off_[0];                                         \
      const TB *rb_ = pb_ + off_[1];                                         \
      TO *ro_ = po_ + off_[2];                                               \
      if (sa_ && sb_) {                                                      \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          TA x = ra_[i_];                                                    \
          TB y = rb_[i_];                                                    \
          ro_[i_] = (EXPR);                                                  \
        }                                                                    \
      } else if (sa_) {                                                      \
        TB y = rb_[0];                                                       \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          TA x = ra_[i_];                                                    \
          ro_[i_] = (EXPR);                                                  \
        }                                                                    \
      } else {                                                               \
        TA x = ra_[0];                                                       \
        for (int64_t i_ = 0; i_ < len_; i_++) {                              \
          TB y = rb_[sb_ ? i_ : 0];                                          \
          ro_[i_] = (EXPR);                                                  \
        }                                                                    \
      }                                                                      \
    }                                                                        \
  } while (0)

/* ---------------------------------------------------------------- */
/* Op table                                                          */

typedef enum {
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MOD, OP_FMOD, OP_MAX, OP_MIN,
  OP_SUM, OP_MEAN, OP_PRELU, OP_SHL, OP_SHR,
} BinOp;

typedef enum {
  TY_NUMERIC,                /* every integer and float type */
  TY_SIGNED,                 /* floats and signed integers */
  TY_FLOAT,
  TY_UNSIGNED,
} TypeClass;

static const struct {
  const char *name;
  BinOp op;
  TypeClass types;
  gboolean legacy;           /* had broadcast/axis attributes before opset 7 */
} bin_info[] = {
  { "Add", OP_ADD, TY_NUMERIC, TRUE }, { "Sub", OP_SUB, TY_NUMERIC, TRUE },
  { "Mul", OP_MUL, TY_NUMERIC, TRUE }, { "Div", OP_DIV, TY_NUMERIC, TRUE },
  { "Pow", OP_POW, TY_NUMERIC, TRUE }, { "Mod", OP_MOD, TY_NUMERIC, FALSE },
  { "Max", OP_MAX, TY_NUMERIC, FALSE }, { "Min", OP_MIN, TY_NUMERIC, FALSE },
  { "Sum", OP_SUM, TY_NUMERIC, FALSE }, { "Mean", OP_MEAN, TY_FLOAT, FALSE },
  { "PRelu", OP_PRELU, TY_SIGNED, FALSE },
  { "BitShift", OP_SHL, TY_UNSIGNED, FALSE },
};

typedef struct {
  BinOp op;
  TypeClass types;
  ClinferLegacyBcast legacy; /* opset < 7 broadcast/axis */
  gboolean legacy_prelu;     /* opset < 7 PRelu: 1-D slope is per channel */
} BinData;

static gboolean
type_in_class (ClinferElementType t, TypeClass c)
{
  switch (c) {
    case TY_NUMERIC:
      return clinfer_element_type_is_float (t)
          || clinfer_op_type_is_signed_int (t)
          || clinfer_op_type_is_unsigned_int (t);
    case TY_SIGNED:
      return clinfer_element_type_is_float (t)
          || clinfer_op_type_is_signed_int (t);
    case TY_FLOAT:
      return clinfer_element_type_is_float (t);
    case TY_UNSIGNED:
      return clinfer_op_type_is_unsigned_int (t);
  }
  return FALSE;
}

static gboolean
prepare_mode_attrs (ClinferNode *node, BinData *d, GError **error)
{
  int64_t fmod = 0;
  const char *dir = NULL;

  if (d->op == OP_MOD) {
    if (!clinfer_node_attr_int (node, "fmod", 0, &fmod, error))
      return FALSE;
    if (fmod != 0 && fmod != 1) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: attribute 'fmod' must be 0 or 1, got %" G_GINT64_FORMAT,
          clinfer_node_label (node), fmod);
      return FALSE;
    }
    d->op = fmod ? OP_FMOD : OP_MOD;
  } else if (d->op == OP_SHL) {
    if (!clinfer_node_attr_string (node, "direction", NULL, &dir, error))
      return FALSE;
    if (dir == NULL || (strcmp (dir, "LEFT") != 0 && strcmp (dir, "RIGHT") != 0)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: attribute 'direction' must be \"LEFT\" or \"RIGHT\", got %s%s%s",
          clinfer_node_label (node), dir ? "\"" : "", dir ? dir : "none",
          dir ? "\"" : "");
      return FALSE;
    }
    d->op = strcmp (dir, "LEFT") == 0 ? OP_SHL : OP_SHR;
  }
  return TRUE;
}

static gboolean
prepare_binary (ClinferNode *node, GError **error)
{
  g_autofree BinData *d = g_new0 (BinData, 1);
  gboolean legacy = FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (bin_info); i++) {
    if (strcmp (node->op_type, bin_info[i].name) == 0) {
      d->op = bin_info[i].op;
      d->types = bin_info[i].types;
      legacy = bin_info[i].legacy;
    }
  }
  if (!prepare_mode_attrs (node, d, error))
    return FALSE;
  if (node->opset > 0 && node->opset < 7 && legacy
      && !clinfer_legacy_bcast_parse (node, &d->legacy, error))
    return FALSE;
  d->legacy_prelu = d->op == OP_PRELU && node->opset > 0 && node->opset < 7;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Shape that input @i broadcasts with under the node's rules: old opsets
 * align B at "axis" of A instead of at the end; old PRelu takes a 1-D
 * slope per channel. */
static gboolean
effective_shape (const ClinferNode *node, guint i, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *eff, GError **error)
{
  const BinData *d = node->op_data;

  *eff = *b;
  if (i != 1 || a->rank < 0 || b->rank < 0)
    return TRUE;
  if (d->legacy_prelu && b->rank == 1 && a->rank >= 2 && b->dims[0] != 1
      && b->dims[0] == a->dims[1]) {
    for (int k = 1; k < a->rank - 1; k++)
      eff->dims[eff->rank++] = 1;
    return TRUE;
  }
  return clinfer_legacy_bcast_shape (node, &d->legacy, a, b, eff, error);
}

static gboolean
check_input_type (const ClinferNode *node, const ClinferValueInfo *in, guint i,
    GError **error)
{
  const BinData *d = node->op_data;
  ClinferElementType t = in[i].type;
  gboolean ok;

  if (d->op == OP_POW && i == 1) {
    ok = type_in_class (t, TY_NUMERIC);     /* any exponent type */
  } else if (i > 0) {
    if (t == in[0].type)
      return TRUE;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input %u is %s but input 0 is %s", clinfer_node_label (node), i,
        clinfer_element_type_name (t), clinfer_element_type_name (in[0].type));
    return FALSE;
  } else {
    ok = type_in_class (t, d->types);
  }
  if (!ok)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: element type %s of input %u is not supported",
        clinfer_node_label (node), clinfer_element_type_name (t), i);
  return ok;
}

static gboolean
infer_binary (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const BinData *d = node->op_data;
  ClinferShape acc = in[0].shape, eff;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_input_type (node, in, 0, error))
    return FALSE;
  for (guint i = 1; i < node->n_inputs; i++) {
    if (!clinfer_op_require_input (node, in, i, error)
        || !check_input_type (node, in, i, error)
        || !effective_shape (node, i, &in[0].shape, &in[i].shape, &eff, error))
      return FALSE;
    if (!clinfer_shape_broadcast (&acc, &eff, &acc, error)) {
      g_prefix_error (error, "%s: ", clinfer_node_label (node));
      return FALSE;
    }
  }
  /* PRelu broadcasts the slope to X, never the other way. */
  if (d->op == OP_PRELU && acc.rank >= 0 && in[0].shape.rank >= 0
      && clinfer_shape_is_static (&acc) && clinfer_shape_is_static (&in[0].shape)
      && !clinfer_shape_equal (&acc, &in[0].shape)) {
    g_autofree char *sx = clinfer_shape_to_string (&in[0].shape);
    g_autofree char *ss = clinfer_shape_to_string (&in[1].shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: slope of shape %s does not broadcast to X of shape %s",
        clinfer_node_label (node), ss, sx);
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = acc;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Typed kernels                                                     */

/* Two's complement negation without signed overflow. */
#define SNEG(T, x) ((T) (0 - (uint64_t) (x)))

/* Integer +, - and * wrap (two's complement, as numpy and ONNX Runtime
 * do): computed in uint64_t, so never signed overflow, and never int
 * promotion overflow (uint16 * uint16). */
#define ADD_F(T, x, y) ((T) ((x) + (y)))
#define SUB_F(T, x, y) ((T) ((x) - (y)))
#define MUL_F(T, x, y) ((T) ((x) * (y)))
#define ADD_S(T, x, y) ((T) ((uint64_t) (x) + (uint64_t) (y)))
#define SUB_S(T, x, y) ((T) ((uint64_t) (x) - (uint64_t) (y)))
#define MUL_S(T, x, y) ((T) ((uint64_t) (x) * (uint64_t) (y)))
#define ADD_U ADD_S
#define SUB_U SUB_S
#define MUL_U MUL_S

#define DIV_F(T, x, y) ((x) / (y))
/* Integer division truncates like C; x/0 gives 0 instead of a trap (the
 * result is undefined in ONNX) and MIN/-1 wraps. */
#define DIV_S(T, x, y) ((y) == 0 ? (T) 0 : (y) == -1 ? SNEG (T, x) : (T) ((x) / (y)))
#define DIV_U(T, x, y) ((y) == 0 ? (T) 0 : (T) ((x) / (y)))
/* fmod=1: sign of the dividend (C fmod / %). */
#define FMOD_F(T, x, y) ((T) fmod ((double) (x), (double) (y)))
#define FMOD_S(T, x, y) ((y) == 0 || (y) == -1 ? (T) 0 : (T) ((x) % (y)))
#define FMOD_U(T, x, y) ((y) == 0 ? (T) 0 : (T) ((x) % (y)))
/* fmod=0: sign of the divisor (Python / numpy mod). */
#define MOD_F(T, x, y) ((T) py_fmod ((double) (x), (double) (y)))
#define MOD_S(T, x, y) ((T) py_imod ((int64_t) (x), (int64_t) (y)))
#define MOD_U(T, x, y) FMOD_U (T, x, y)
/* Max/Min propagate NaN like numpy. */
#define MAX_F(T, x, y) ((x) != (x) || (x) > (y) ? (x) : (y))
#define MIN_F(T, x, y) ((x) != (x) || (x) < (y) ? (x) : (y))
#define MAX_S(T, x, y) ((x) > (y) ? (x) : (y))
#define MIN_S(T, x, y) ((x) < (y) ? (x) : (y))
#define MAX_U MAX_S
#define MIN_U MIN_S

static inline double
py_fmod (double x, double y)
{
  double r = fmod (x, y);

  if (r != 0 && (r < 0) != (y < 0))
    r += y;
  return r;
}

static inline int64_t
py_imod (int64_t x, int64_t y)
{
  int64_t r;

  if (y == 0 || y == -1)
    return 0;
  r = x % y;
  if (r != 0 && (r < 0) != (y < 0))
    r += y;
  return r;
}

#define BIN_COMMON(T, K)                                                     \
  case OP_ADD: case OP_SUM: case OP_MEAN: BIN_LOOP (T, T, T, ADD_##K (T, x, y)); break; \
  case OP_SUB: BIN_LOOP (T, T, T, SUB_##K (T, x, y)); break;                 \
  case OP_MUL: BIN_LOOP (T, T, T, MUL_##K (T, x, y)); break;                 \
  case OP_DIV: BIN_LOOP (T, T, T, DIV_##K (T, x, y)); break;                 \
  case OP_MOD: BIN_LOOP (T, T, T, MOD_##K (T, x, y)); break;                 \
  case OP_FMOD: BIN_LOOP (T, T, T, FMOD_##K (T, x, y)); break;               \
  case OP_MAX: BIN_LOOP (T, T, T, MAX_##K (T, x, y)); break;                 \
  case OP_MIN: BIN_LOOP (T, T, T, MIN_##K (T, x, y)); break

#define BIN_SIGNED(T, K)                                                     \
  switch (op) {                                                              \
    BIN_COMMON (T, K);                                                       \
    case OP_PRELU: BIN_LOOP (T, T, T, x < 0 ? MUL_##K (T, x, y) : x); break;  \
    default: break;                                                          \
  }

#define BIN_UNSIGNED(T)                                                      \
  switch (op) {                                                              \
    BIN_COMMON (T, U);                                                       \
    case OP_SHL:                                                             \
      BIN_LOOP (T, T, T, y >= 8 * sizeof (T) ? (T) 0 : (T) (x << y)); break; \
    case OP_SHR:                                                             \
      BIN_LOOP (T, T, T, y >= 8 * sizeof (T) ? (T) 0 : (T) (x >> y)); break; \
    default: break;                                                          \
  }

/* o = a op b for one non-half element type; @b_shape is B's effective
 * (broadcast) shape. Pow is handled by eval_pow (). */
static gboolean
binary_apply (const ClinferNode *node, BinOp op, const ClinferTensor *a,
    const ClinferTensor *b, const ClinferShape *b_shape, ClinferTensor *o,
    GError **error)
{
  const ClinferShape *ins[2] = { clinfer_tensor_get_shape (a), b_shape };
  ClinferElementType t = clinfer_tensor_get_element_type (o);
  ClinferBcast bc;

  clinfer_bcast_init (&bc, 2, ins, clinfer_tensor_get_shape (o));
  if (bc.n <= 0)
    return TRUE;
  switch (t) {
    case CLINFER_TYPE_F32: BIN_SIGNED (float, F); break;
    case CLINFER_TYPE_F64: BIN_SIGNED (double, F); break;
    case CLINFER_TYPE_I8: BIN_SIGNED (int8_t, S); break;
    case CLINFER_TYPE_I16: BIN_SIGNED (int16_t, S); break;
    case CLINFER_TYPE_I32: BIN_SIGNED (int32_t, S); break;
    case CLINFER_TYPE_I64: BIN_SIGNED (int64_t, S); break;
    case CLINFER_TYPE_U8: BIN_UNSIGNED (uint8_t); break;
    case CLINFER_TYPE_U16: BIN_UNSIGNED (uint16_t); break;
    case CLINFER_TYPE_U32: BIN_UNSIGNED (uint32_t); break;
    case CLINFER_TYPE_U64: BIN_UNSIGNED (uint64_t); break;
    default:
      return clinfer_op_unsupported_type (node, t, error);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Mixed-type Pow                                                    */

/* Element-wise conversion of @src into @dst (same shape). */
static void
convert_into (const ClinferTensor *src, ClinferTensor *dst)
{
  ClinferElementType st = clinfer_tensor_get_element_type (src);
  ClinferElementType dt = clinfer_tensor_get_element_type (dst);
  int64_t n = clinfer_tensor_get_n_elements (src);

  if (clinfer_op_type_is_half (st) && dt == CLINFER_TYPE_F32)
    clinfer_op_half_to_float (st, clinfer_tensor_get_const_data (src),
        clinfer_tensor_get_data (dst), n);
  else if (st == CLINFER_TYPE_F32 && clinfer_op_type_is_half (dt))
    clinfer_op_float_to_half (dt, clinfer_tensor_get_const_data (src),
        clinfer_tensor_get_data (dst), n);
  else
    for (int64_t i = 0; i < n; i++)
      clinfer_op_store_double (dst, i, clinfer_tensor_get_as_double (src, i));
}

/* (transfer full) @t converted to @type (a new reference when it already
 * has it). */
static ClinferTensor *
convert (ClinferTensor *t, ClinferElementType type, GError **error)
{
  ClinferTensor *r;

  if (clinfer_tensor_get_element_type (t) == type)
    return clinfer_tensor_ref (t);
  r = clinfer_tensor_new (type, clinfer_tensor_get_shape (t), error);
  if (r)
    convert_into (t, r);
  return r;
}

static void
pow_apply (const ClinferTensor *a, const ClinferTensor *b,
    const ClinferShape *b_shape, ClinferTensor *o)
{
  const ClinferShape *ins[2] = { clinfer_tensor_get_shape (a), b_shape };
  ClinferBcast bc;

  clinfer_bcast_init (&bc, 2, ins, clinfer_tensor_get_shape (o));
  if (bc.n <= 0)
    return;
  if (clinfer_tensor_get_element_type (o) == CLINFER_TYPE_F32
      && clinfer_tensor_get_n_elements (b) == 1
      && clinfer_tensor_get_n_elements (a) == bc.n
      && ((const float *) clinfer_tensor_get_const_data (b))[0] == 2.f) {
    /* x^2 (a variance, LayerNorm written out): x * x is what powf
     * returns, at a fraction of its cost. */
    const float *x = clinfer_tensor_get_const_data (a);
    float *y = clinfer_tensor_get_data (o);
    for (int64_t i = 0; i < bc.n; i++)
      y[i] = x[i] * x[i];
    return;
  }
  if (clinfer_tensor_get_element_type (o) == CLINFER_TYPE_F32)
    BIN_LOOP (float, float, float, powf (x, y));
  else
    BIN_LOOP (double, double, double, pow (x, y));
}

/* Pow: the exponent may have another type than the base (opset 12+); f32
 * computes in f32, everything else in f64. */
static gboolean
eval_pow (ClinferTensor *a, ClinferTensor *b, const ClinferShape *b_shape,
    ClinferTensor *o, GError **error)
{
  ClinferElementType ot = clinfer_tensor_get_element_type (o);
  ClinferElementType ct = ot == CLINFER_TYPE_F32 ? ot : CLINFER_TYPE_F64;
  g_autoptr (ClinferTensor) ca = NULL, cb = NULL, tmp = NULL;

  cb = convert (b, ct, error);
  ca = cb ? convert (a, ct, error) : NULL;
  if (ca && ot != ct)
    tmp = clinfer_tensor_new (ct, clinfer_tensor_get_shape (o), error);
  if (ca == NULL || (ot != ct && tmp == NULL))
    return FALSE;
  pow_apply (ca, cb, b_shape, tmp ? tmp : o);
  if (tmp)
    convert_into (tmp, o);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Eval                                                              */

static void
scale_mean (ClinferTensor *o, guint n)
{
  int64_t count = clinfer_tensor_get_n_elements (o);

  if (clinfer_tensor_get_element_type (o) == CLINFER_TYPE_F32) {
    float *p = clinfer_tensor_get_data (o);
    for (int64_t i = 0; i < count; i++)
      p[i] /= (float) n;
  } else if (clinfer_tensor_get_element_type (o) == CLINFER_TYPE_F64) {
    double *p = clinfer_tensor_get_data (o);
    for (int64_t i = 0; i < count; i++)
      p[i] /= (double) n;
  }
}

/* o = in[0] op in[1] op ... (left fold, in place in @o, which has the
 * broadcast shape of all inputs); no half types here. */
static gboolean
eval_fold (const ClinferNode *node, ClinferTensor **in, guint n,
    ClinferTensor *o, GError **error)
{
  const BinData *d = node->op_data;
  ClinferShape eff;

  if (n == 1) {
    if (clinfer_tensor_get_byte_size (o) > 0)
      memcpy (clinfer_tensor_get_data (o), clinfer_tensor_get_const_data (in[0]),
          clinfer_tensor_get_byte_size (o));
    return TRUE;
  }
  for (guint i = 1; i < n; i++) {
    ClinferTensor *a = i == 1 ? in[0] : o;
    if (!effective_shape (node, i, clinfer_tensor_get_shape (in[0]),
            clinfer_tensor_get_shape (in[i]), &eff, error))
      return FALSE;
    if (d->op == OP_POW) {
      if (!eval_pow (a, in[i], &eff, o, error))
        return FALSE;
    } else if (!binary_apply (node, d->op, a, in[i], &eff, o, error)) {
      return FALSE;
    }
  }
  if (d->op == OP_MEAN)
    scale_mean (o, n);
  return TRUE;
}

static gboolean
eval_binary (const ClinferNode *node, ClinferTensor *const *inputs,
    ClinferTensor *const *outputs, GError **error)
{
  g_autofree ClinferTensor **in = g_new0 (ClinferTensor *, node->n_inputs + 1);
  guint n = 0;

  for (guint i = 0; i < node->n_inputs; i++)
    if (inputs[i])
      in[n++] = inputs[i];
  if (n == 0 || n < node->n_inputs) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: every input must be present", clinfer_node_label (node));
    return FALSE;
  }
  /* f16/bf16 compute through f32 copies. */
  if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (outputs[0])))
    return clinfer_op_eval_via_f32 (node, inputs, outputs, eval_binary, error);
  return eval_fold (node, in, n, outputs[0], error);
}

#define BINARY(name, since, min_in, max_in) \
  { name, "", since, 0, min_in, max_in, 1, 1, 0, prepare_binary, g_free, \
    infer_binary, eval_binary }

const ClinferOpDef clinfer_ops_eltwise[] = {
  BINARY ("Add", 1, 2, 2),
  BINARY ("Sub", 1, 2, 2),
  BINARY ("Mul", 1, 2, 2),
  BINARY ("Div", 1, 2, 2),
  BINARY ("Pow", 1, 2, 2),
  BINARY ("Mod", 10, 2, 2),
  BINARY ("Max", 1, 1, CLINFER_VARIADIC),
  BINARY ("Min", 1, 1, CLINFER_VARIADIC),
  BINARY ("Sum", 1, 1, CLINFER_VARIADIC),
  BINARY ("Mean", 1, 1, CLINFER_VARIADIC),
  BINARY ("PRelu", 1, 2, 2),
  BINARY ("BitShift", 11, 2, 2),
  { NULL }
};
