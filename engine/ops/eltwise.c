/* clinfer — element-wise ops: numpy-broadcast binary arithmetic and
 * unary activations, with reference evals for every numeric type. */
#include "ops/op.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Broadcast iteration                                               */

/* Per-input element strides over the output shape (0 on broadcast dims). */
typedef struct {
  int rank;
  int64_t dims[CLINFER_MAX_RANK];
  int64_t sa[CLINFER_MAX_RANK], sb[CLINFER_MAX_RANK];
} Bcast;

static void
bcast_strides (const ClinferShape *in, const ClinferShape *out, int64_t *s)
{
  int64_t st[CLINFER_MAX_RANK];

  clinfer_shape_elem_strides (in, st);
  for (int i = 0; i < out->rank; i++) {
    int j = in->rank - out->rank + i;
    s[i] = (j >= 0 && in->dims[j] != 1) ? st[j] : 0;
  }
}

static void
bcast_init (Bcast *b, const ClinferShape *a, const ClinferShape *bs,
    const ClinferShape *out)
{
  b->rank = out->rank;
  memcpy (b->dims, out->dims, sizeof (b->dims));
  bcast_strides (a, out, b->sa);
  bcast_strides (bs, out, b->sb);
}

/* Offsets of the first element of output row @row (all dims but the last). */
static void
bcast_row (const Bcast *b, int64_t row, int64_t *oa, int64_t *ob)
{
  int64_t a = 0, c = 0;

  for (int d = b->rank - 2; d >= 0; d--) {
    int64_t i = row % b->dims[d];
    row /= b->dims[d];
    a += i * b->sa[d];
    c += i * b->sb[d];
  }
  *oa = a;
  *ob = c;
}

/* ---------------------------------------------------------------- */
/* Binary ops                                                        */

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_MAX, OP_MIN } BinOp;

typedef struct {
  BinOp op;
  int legacy_axis;           /* opset < 7 "broadcast" with axis, else -1 */
  gboolean legacy_broadcast;
} BinData;

static const struct { const char *name; BinOp op; } bin_names[] = {
  { "Add", OP_ADD }, { "Sub", OP_SUB }, { "Mul", OP_MUL }, { "Div", OP_DIV },
  { "Pow", OP_POW }, { "Max", OP_MAX }, { "Min", OP_MIN },
};

static gboolean
prepare_binary (ClinferNode *node, GError **error)
{
  BinData *d = g_new0 (BinData, 1);
  int64_t bc = 0, axis = -1;

  for (gsize i = 0; i < G_N_ELEMENTS (bin_names); i++)
    if (strcmp (node->op_type, bin_names[i].name) == 0)
      d->op = bin_names[i].op;
  d->legacy_axis = -1;
  if (node->opset > 0 && node->opset < 7 && d->op <= OP_POW) {
    if (!clinfer_node_attr_int (node, "broadcast", 0, &bc, error)
        || !clinfer_node_attr_int (node, "axis", -1, &axis, error)) {
      g_free (d);
      return FALSE;
    }
    d->legacy_broadcast = bc != 0;
    d->legacy_axis = (int) axis;
  }
  node->op_data = d;
  return TRUE;
}

/* Old opsets align B at "axis" of A instead of at the end: pad B with
 * trailing 1s so numpy rules give the same result. */
static gboolean
legacy_shape (const ClinferNode *node, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *eff, GError **error)
{
  const BinData *d = node->op_data;
  int axis;

  *eff = *b;
  if (d == NULL || !d->legacy_broadcast || a->rank < 0 || b->rank < 0)
    return TRUE;
  axis = d->legacy_axis < 0 ? a->rank - b->rank : d->legacy_axis;
  if (axis < 0 || axis + b->rank > a->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: legacy broadcast axis %d does not fit B of rank %d into A of "
        "rank %d", clinfer_node_label (node), axis, b->rank, a->rank);
    return FALSE;
  }
  for (int i = b->rank; i < a->rank - axis; i++)
    eff->dims[eff->rank++] = 1;
  return TRUE;
}

static gboolean
infer_binary (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  ClinferShape eff;
  ClinferShape acc = in[0].shape;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  /* Max/Min/Sum/Mean are variadic; the rest have two inputs. */
  for (guint i = 1; i < node->n_inputs; i++) {
    if (!in[i].present)
      continue;
    if (in[i].type != in[0].type) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: input %u is %s but input 0 is %s", clinfer_node_label (node), i,
          clinfer_element_type_name (in[i].type),
          clinfer_element_type_name (in[0].type));
      return FALSE;
    }
    if (!legacy_shape (node, &acc, &in[i].shape, &eff, error))
      return FALSE;
    if (!clinfer_shape_broadcast (&acc, &eff, &acc, error)) {
      g_prefix_error (error, "%s: ", clinfer_node_label (node));
      return FALSE;
    }
  }
  out[0].type = in[0].type;
  out[0].shape = acc;
  return TRUE;
}

#define BIN_LOOP(T, EXPR)                                                    \
  do {                                                                       \
    const T *pa = clinfer_tensor_get_const_data (a);                         \
    const T *pb = clinfer_tensor_get_const_data (b);                         \
    T *po = clinfer_tensor_get_data (o);                                     \
    _Pragma ("omp parallel for schedule(static) if (rows * inner > 32768)")  \
    for (int64_t r = 0; r < rows; r++) {                                     \
      int64_t oa, ob;                                                        \
      bcast_row (&bc, r, &oa, &ob);                                          \
      const T *ra = pa + oa, *rb = pb + ob;                                  \
      T *ro = po + r * inner;                                                \
      for (int64_t i = 0; i < inner; i++) {                                  \
        T x = ra[i * ia], y = rb[i * ib];                                    \
        ro[i] = (EXPR);                                                      \
      }                                                                      \
    }                                                                        \
  } while (0)

#define BIN_SWITCH_OP(T, DIVEXPR, POWEXPR)                                   \
  switch (op) {                                                              \
    case OP_ADD: BIN_LOOP (T, x + y); break;                                 \
    case OP_SUB: BIN_LOOP (T, x - y); break;                                 \
    case OP_MUL: BIN_LOOP (T, x * y); break;                                 \
    case OP_DIV: BIN_LOOP (T, DIVEXPR); break;                               \
    case OP_POW: BIN_LOOP (T, POWEXPR); break;                               \
    case OP_MAX: BIN_LOOP (T, x > y ? x : y); break;                         \
    case OP_MIN: BIN_LOOP (T, x < y ? x : y); break;                         \
  }

/* Integer division truncates toward zero like C; division by zero gives 0
 * instead of a trap (the result is undefined in ONNX). */
#define IDIV(x, y) ((y) == 0 ? 0 : (x) / (y))

static gboolean
binary_apply (const ClinferNode *node, BinOp op, const ClinferTensor *a,
    const ClinferTensor *b, const ClinferShape *b_eff, ClinferTensor *o,
    GError **error)
{
  const ClinferShape *os = clinfer_tensor_get_shape (o);
  Bcast bc;
  int64_t n = clinfer_shape_n_elements (os), inner, rows, ia, ib;

  if (n == 0)
    return TRUE;
  bcast_init (&bc, clinfer_tensor_get_shape (a), b_eff, os);
  inner = os->rank > 0 ? os->dims[os->rank - 1] : 1;
  rows = n / MAX (inner, 1);
  ia = os->rank > 0 ? bc.sa[os->rank - 1] : 0;
  ib = os->rank > 0 ? bc.sb[os->rank - 1] : 0;
  if (os->rank == 0) {
    bc.rank = 0;
    rows = 1;
    inner = 1;
  }
  switch (clinfer_tensor_get_element_type (o)) {
    case CLINFER_TYPE_F32: BIN_SWITCH_OP (float, x / y, powf (x, y)); break;
    case CLINFER_TYPE_F64: BIN_SWITCH_OP (double, x / y, pow (x, y)); break;
    case CLINFER_TYPE_I8: BIN_SWITCH_OP (int8_t, IDIV (x, y), (int8_t) pow (x, y)); break;
    case CLINFER_TYPE_U8: BIN_SWITCH_OP (uint8_t, IDIV (x, y), (uint8_t) pow (x, y)); break;
    case CLINFER_TYPE_I16: BIN_SWITCH_OP (int16_t, IDIV (x, y), (int16_t) pow (x, y)); break;
    case CLINFER_TYPE_U16: BIN_SWITCH_OP (uint16_t, IDIV (x, y), (uint16_t) pow (x, y)); break;
    case CLINFER_TYPE_I32: BIN_SWITCH_OP (int32_t, IDIV (x, y), (int32_t) pow (x, y)); break;
    case CLINFER_TYPE_U32: BIN_SWITCH_OP (uint32_t, IDIV (x, y), (uint32_t) pow (x, y)); break;
    case CLINFER_TYPE_I64: BIN_SWITCH_OP (int64_t, IDIV (x, y), (int64_t) pow ((double) x, (double) y)); break;
    case CLINFER_TYPE_U64: BIN_SWITCH_OP (uint64_t, IDIV (x, y), (uint64_t) pow ((double) x, (double) y)); break;
    default:
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: element type %s is not supported", clinfer_node_label (node),
          clinfer_element_type_name (clinfer_tensor_get_element_type (o)));
      return FALSE;
  }
  return TRUE;
}

/* f16/bf16 go through f32 copies: simple and exact enough for reference. */
static ClinferTensor *
to_f32 (const ClinferTensor *t, GError **error)
{
  ClinferTensor *f = clinfer_tensor_new (CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (t), error);
  int64_t n = clinfer_tensor_get_n_elements (t);

  if (f == NULL)
    return NULL;
  for (int64_t i = 0; i < n; i++)
    ((float *) clinfer_tensor_get_data (f))[i] =
        (float) clinfer_tensor_get_as_double (t, i);
  return f;
}

static void
from_f32 (const ClinferTensor *f, ClinferTensor *t)
{
  const float *p = clinfer_tensor_get_const_data (f);
  uint16_t *q = clinfer_tensor_get_data (t);
  int64_t n = clinfer_tensor_get_n_elements (t);
  gboolean bf = clinfer_tensor_get_element_type (t) == CLINFER_TYPE_BF16;

  for (int64_t i = 0; i < n; i++)
    q[i] = bf ? clinfer_float_to_bfloat16 (p[i]) : clinfer_float_to_half (p[i]);
}

static gboolean
is_half (ClinferElementType t)
{
  return t == CLINFER_TYPE_F16 || t == CLINFER_TYPE_BF16;
}

static gboolean
eval_binary_pair (const ClinferNode *node, BinOp op, ClinferTensor *a,
    ClinferTensor *b, ClinferTensor *o, GError **error)
{
  ClinferShape eff;

  if (!legacy_shape (node, clinfer_tensor_get_shape (a),
          clinfer_tensor_get_shape (b), &eff, error))
    return FALSE;
  if (is_half (clinfer_tensor_get_element_type (o))) {
    g_autoptr (ClinferTensor) fa = to_f32 (a, error);
    g_autoptr (ClinferTensor) fb = fa ? to_f32 (b, error) : NULL;
    g_autoptr (ClinferTensor) fo = fb ? clinfer_tensor_new (CLINFER_TYPE_F32,
        clinfer_tensor_get_shape (o), error) : NULL;
    if (fo == NULL || !binary_apply (node, op, fa, fb, &eff, fo, error))
      return FALSE;
    from_f32 (fo, o);
    return TRUE;
  }
  return binary_apply (node, op, a, b, &eff, o, error);
}

static gboolean
eval_binary (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const BinData *d = node->op_data;
  guint n = clinfer_node_n_present_inputs (node);
  g_autoptr (ClinferTensor) acc = NULL;

  if (n == 1) {              /* variadic Max/Min with one input */
    memcpy (clinfer_tensor_get_data (out[0]), clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_byte_size (in[0]));
    return TRUE;
  }
  if (n == 2)
    return eval_binary_pair (node, d->op, in[0], in[1], out[0], error);
  /* Variadic: fold left into temporaries broadcast to growing shapes. */
  acc = clinfer_tensor_ref (in[0]);
  for (guint i = 1; i < n; i++) {
    ClinferShape s;
    g_autoptr (ClinferTensor) next = NULL;
    if (!clinfer_shape_broadcast (clinfer_tensor_get_shape (acc),
            clinfer_tensor_get_shape (in[i]), &s, error))
      return FALSE;
    next = i == n - 1 ? clinfer_tensor_ref (out[0])
        : clinfer_tensor_new (clinfer_tensor_get_element_type (acc), &s, error);
    if (next == NULL
        || !eval_binary_pair (node, d->op, acc, in[i], next, error))
      return FALSE;
    clinfer_tensor_unref (acc);
    acc = g_steal_pointer (&next);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Unary ops (float types; Abs/Neg also integers)                    */

typedef float (*UnaryFn) (float x, float alpha, float beta);

static float u_relu (float x, float a, float b) { return x > 0.f ? x : 0.f; }
static float u_sigmoid (float x, float a, float b) { return 1.f / (1.f + expf (-x)); }
static float u_tanh (float x, float a, float b) { return tanhf (x); }
static float u_exp (float x, float a, float b) { return expf (x); }
static float u_log (float x, float a, float b) { return logf (x); }
static float u_sqrt (float x, float a, float b) { return sqrtf (x); }
static float u_abs (float x, float a, float b) { return fabsf (x); }
static float u_neg (float x, float a, float b) { return -x; }
static float u_recip (float x, float a, float b) { return 1.f / x; }
static float u_floor (float x, float a, float b) { return floorf (x); }
static float u_ceil (float x, float a, float b) { return ceilf (x); }
static float u_leaky (float x, float a, float b) { return x >= 0.f ? x : a * x; }
static float u_elu (float x, float a, float b) { return x >= 0.f ? x : a * (expf (x) - 1.f); }
static float u_clip (float x, float a, float b) { return x < a ? a : (x > b ? b : x); }
static float u_hsigmoid (float x, float a, float b) { return fmaxf (0.f, fminf (1.f, a * x + b)); }
static float u_hswish (float x, float a, float b) { return x * fmaxf (0.f, fminf (1.f, x / 6.f + 0.5f)); }
static float u_softplus (float x, float a, float b) { return x > 20.f ? x : log1pf (expf (x)); }

typedef struct {
  const char *name;
  UnaryFn fn;
  const char *alpha_attr;
  float alpha_def;
  const char *beta_attr;
  float beta_def;
} UnaryInfo;

static const UnaryInfo unary_table[] = {
  { "Relu", u_relu }, { "Sigmoid", u_sigmoid }, { "Tanh", u_tanh },
  { "Exp", u_exp }, { "Log", u_log }, { "Sqrt", u_sqrt }, { "Abs", u_abs },
  { "Neg", u_neg }, { "Reciprocal", u_recip }, { "Floor", u_floor },
  { "Ceil", u_ceil }, { "LeakyRelu", u_leaky, "alpha", 0.01f },
  { "Elu", u_elu, "alpha", 1.f }, { "Clip", u_clip, "min", -INFINITY, "max", INFINITY },
  { "HardSigmoid", u_hsigmoid, "alpha", 0.2f, "beta", 0.5f },
  { "HardSwish", u_hswish }, { "Softplus", u_softplus },
};

typedef struct {
  const UnaryInfo *info;
  float alpha, beta;
} UnaryData;

static gboolean
prepare_unary (ClinferNode *node, GError **error)
{
  UnaryData *d = g_new0 (UnaryData, 1);

  for (gsize i = 0; i < G_N_ELEMENTS (unary_table); i++)
    if (strcmp (node->op_type, unary_table[i].name) == 0)
      d->info = &unary_table[i];
  d->alpha = d->info->alpha_def;
  d->beta = d->info->beta_def;
  if ((d->info->alpha_attr && !clinfer_node_attr_float (node,
              d->info->alpha_attr, d->info->alpha_def, &d->alpha, error))
      || (d->info->beta_attr && !clinfer_node_attr_float (node,
              d->info->beta_attr, d->info->beta_def, &d->beta, error))) {
    g_free (d);
    return FALSE;
  }
  node->op_data = d;
  return TRUE;
}

static gboolean
infer_unary (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (strcmp (node->op_type, "Abs") != 0 && strcmp (node->op_type, "Neg") != 0
      && strcmp (node->op_type, "Relu") != 0 && strcmp (node->op_type, "Clip") != 0
      && !clinfer_element_type_is_float (in[0].type)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: expected a floating-point input, got %s",
        clinfer_node_label (node), clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

/* Clip-11+ takes min and max as optional scalar inputs. */
static void
clip_bounds (const ClinferNode *node, ClinferTensor *const *in, float *lo,
    float *hi)
{
  if (strcmp (node->op_type, "Clip") != 0 || node->opset < 11)
    return;
  if (node->n_inputs > 1 && in[1])
    *lo = (float) clinfer_tensor_get_as_double (in[1], 0);
  if (node->n_inputs > 2 && in[2])
    *hi = (float) clinfer_tensor_get_as_double (in[2], 0);
}

#define UNARY_INT(T)                                                     \
  do {                                                                   \
    const T *p = clinfer_tensor_get_const_data (in[0]);                  \
    T *q = clinfer_tensor_get_data (out[0]);                             \
    for (int64_t i = 0; i < n; i++) {                                    \
      T x = p[i];                                                        \
      if (fn == u_abs) q[i] = (double) x < 0 ? (T) -x : x;               \
      else if (fn == u_neg) q[i] = (T) -x;                               \
      else if (fn == u_relu) q[i] = x > 0 ? x : 0;                       \
      else q[i] = (double) x < lo ? (T) lo : ((double) x > hi ? (T) hi : x); \
    }                                                                    \
  } while (0)

static gboolean
eval_unary (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const UnaryData *d = node->op_data;
  UnaryFn fn = d->info->fn;
  float lo = d->alpha, hi = d->beta;
  int64_t n = clinfer_tensor_get_n_elements (in[0]);
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);

  clip_bounds (node, in, &lo, &hi);
  if (t == CLINFER_TYPE_F32) {
    const float *p = clinfer_tensor_get_const_data (in[0]);
    float *q = clinfer_tensor_get_data (out[0]);
#pragma omp parallel for schedule(static) if (n > 32768)
    for (int64_t i = 0; i < n; i++)
      q[i] = fn (p[i], lo, hi);
  } else if (t == CLINFER_TYPE_F64) {
    const double *p = clinfer_tensor_get_const_data (in[0]);
    double *q = clinfer_tensor_get_data (out[0]);
    for (int64_t i = 0; i < n; i++)
      q[i] = fn == u_abs ? fabs (p[i]) : fn == u_neg ? -p[i]
          : fn == u_exp ? exp (p[i]) : fn == u_log ? log (p[i])
          : fn == u_sqrt ? sqrt (p[i]) : fn == u_tanh ? tanh (p[i])
          : (double) fn ((float) p[i], lo, hi);
  } else if (is_half (t)) {
    uint16_t *q = clinfer_tensor_get_data (out[0]);
    for (int64_t i = 0; i < n; i++) {
      float v = fn ((float) clinfer_tensor_get_as_double (in[0], i), lo, hi);
      q[i] = t == CLINFER_TYPE_F16 ? clinfer_float_to_half (v)
          : clinfer_float_to_bfloat16 (v);
    }
  } else {
    switch (t) {
      case CLINFER_TYPE_I8: UNARY_INT (int8_t); break;
      case CLINFER_TYPE_I16: UNARY_INT (int16_t); break;
      case CLINFER_TYPE_I32: UNARY_INT (int32_t); break;
      case CLINFER_TYPE_I64: UNARY_INT (int64_t); break;
      case CLINFER_TYPE_U8: UNARY_INT (uint8_t); break;
      case CLINFER_TYPE_U16: UNARY_INT (uint16_t); break;
      case CLINFER_TYPE_U32: UNARY_INT (uint32_t); break;
      case CLINFER_TYPE_U64: UNARY_INT (uint64_t); break;
      default:
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
            "%s: element type %s is not supported", clinfer_node_label (node),
            clinfer_element_type_name (t));
        return FALSE;
    }
  }
  return TRUE;
}

#define BINARY(name, lo, hi, nin) \
  { name, "", lo, hi, 2, nin, 1, 1, 0, prepare_binary, g_free, infer_binary, eval_binary }
#define UNARY(name, lo, nin) \
  { name, "", lo, 0, 1, nin, 1, 1, 0, prepare_unary, g_free, infer_unary, eval_unary }

const ClinferOpDef clinfer_ops_eltwise[] = {
  BINARY ("Add", 1, 0, 2),
  BINARY ("Sub", 1, 0, 2),
  BINARY ("Mul", 1, 0, 2),
  BINARY ("Div", 1, 0, 2),
  BINARY ("Pow", 1, 0, 2),
  { "Max", "", 1, 0, 1, CLINFER_VARIADIC, 1, 1, 0, prepare_binary, g_free, infer_binary, eval_binary },
  { "Min", "", 1, 0, 1, CLINFER_VARIADIC, 1, 1, 0, prepare_binary, g_free, infer_binary, eval_binary },
  UNARY ("Relu", 1, 1),
  UNARY ("Sigmoid", 1, 1),
  UNARY ("Tanh", 1, 1),
  UNARY ("Exp", 1, 1),
  UNARY ("Log", 1, 1),
  UNARY ("Sqrt", 1, 1),
  UNARY ("Abs", 1, 1),
  UNARY ("Neg", 1, 1),
  UNARY ("Reciprocal", 1, 1),
  UNARY ("Floor", 1, 1),
  UNARY ("Ceil", 1, 1),
  UNARY ("LeakyRelu", 1, 1),
  UNARY ("Elu", 1, 1),
  UNARY ("Clip", 1, 3),
  UNARY ("HardSigmoid", 1, 1),
  UNARY ("HardSwish", 14, 1),
  UNARY ("Softplus", 1, 1),
  { NULL }
};
