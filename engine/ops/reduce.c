/* clinfer — reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/
 * LogSum/LogSumExp (axes by attribute or input) and ArgMax/ArgMin. */
#include "ops/op.h"
#include <math.h>
#include <string.h>

typedef enum {
  RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD, RED_L1, RED_L2, RED_SUMSQ,
  RED_LOGSUM, RED_LSE,
} RedKind;

static const struct { const char *name; RedKind kind; } red_names[] = {
  { "ReduceSum", RED_SUM }, { "ReduceMean", RED_MEAN },
  { "ReduceMax", RED_MAX }, { "ReduceMin", RED_MIN },
  { "ReduceProd", RED_PROD }, { "ReduceL1", RED_L1 }, { "ReduceL2", RED_L2 },
  { "ReduceSumSquare", RED_SUMSQ }, { "ReduceLogSum", RED_LOGSUM },
  { "ReduceLogSumExp", RED_LSE },
};

typedef struct {
  RedKind kind;
  gboolean keepdims;
  gboolean noop_empty;       /* noop_with_empty_axes */
  gboolean axes_input;       /* axes come from input 1 (opset-dependent) */
  gsize n_axes;              /* from the attribute */
  int64_t axes[CLINFER_MAX_RANK];
} ReduceData;

/* ---------------------------------------------------------------- */
/* Attributes and axes                                               */

static gboolean
prepare_reduce (ClinferNode *node, GError **error)
{
  g_autofree ReduceData *d = g_new0 (ReduceData, 1);
  int64_t keepdims = 1, noop = 0;
  const int64_t *axes;
  gsize n_axes;

  for (gsize i = 0; i < G_N_ELEMENTS (red_names); i++)
    if (strcmp (node->op_type, red_names[i].name) == 0)
      d->kind = red_names[i].kind;
  d->axes_input = node->opset >= 18
      || (d->kind == RED_SUM && node->opset >= 13);
  if (!clinfer_node_attr_int (node, "keepdims", 1, &keepdims, error)
      || !clinfer_node_attr_int (node, "noop_with_empty_axes", 0, &noop, error)
      || !clinfer_node_attr_ints (node, "axes", &axes, &n_axes, error))
    return FALSE;
  if (d->axes_input && n_axes > 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: at opset %d the axes are an input, not an attribute",
        clinfer_node_label (node), node->opset);
    return FALSE;
  }
  if (!d->axes_input && clinfer_node_n_present_inputs (node) > 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: an axes input needs opset %d or later (model has %d)",
        clinfer_node_label (node), d->kind == RED_SUM ? 13 : 18, node->opset);
    return FALSE;
  }
  if (n_axes > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %" G_GSIZE_FORMAT " axes given, at most %d are supported",
        clinfer_node_label (node), n_axes, CLINFER_MAX_RANK);
    return FALSE;
  }
  d->keepdims = keepdims != 0;
  d->noop_empty = noop != 0;
  d->n_axes = n_axes;
  if (n_axes)
    memcpy (d->axes, axes, n_axes * sizeof (int64_t));
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Marks the reduced dims of a rank-@rank input in @mask. @axes_t is the
 * axes input tensor (NULL when absent or not used). */
static gboolean
reduce_mask (const ClinferNode *node, const ClinferTensor *axes_t, int rank,
    gboolean *mask, GError **error)
{
  const ReduceData *d = node->op_data;
  g_autofree int64_t *list = NULL;
  const int64_t *axes = d->axes;
  gsize n = d->n_axes;

  if (axes_t) {
    if (!clinfer_op_read_int_list (node, axes_t, "axes", &list, &n, error))
      return FALSE;
    axes = list;
  }
  for (int i = 0; i < rank; i++)
    mask[i] = n == 0 && !d->noop_empty;
  for (gsize i = 0; i < n; i++) {
    int a;
    if (!clinfer_op_normalize_axis (node, axes[i], rank, &a, error))
      return FALSE;
    if (rank == 0)
      continue;
    if (mask[a]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: axis %" G_GINT64_FORMAT " is listed twice",
          clinfer_node_label (node), axes[i]);
      return FALSE;
    }
    mask[a] = TRUE;
  }
  return TRUE;
}

gboolean
clinfer_reduce_const_mask (const ClinferNode *node, int rank, gboolean *mask)
{
  const ReduceData *d = node->op_data;
  const ClinferTensor *axes_t = NULL;

  if (d == NULL || rank > CLINFER_MAX_RANK)
    return FALSE;
  if (d->axes_input && node->n_inputs > 1 && node->inputs[1].node) {
    ClinferPortDesc *a = clinfer_node_input_desc (node, 1);
    if (a == NULL || a->value == NULL)
      return FALSE;
    axes_t = a->value;
  }
  return reduce_mask (node, axes_t, rank, mask, NULL);
}

static gboolean
check_numeric (const ClinferNode *node, ClinferElementType t, GError **error)
{
  if (clinfer_op_type_is_numeric (t))
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
      "%s: input is %s, expected a numeric type", clinfer_node_label (node),
      clinfer_element_type_name (t));
  return FALSE;
}

static gboolean
infer_reduce (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ReduceData *d = node->op_data;
  const ClinferShape *x = &in[0].shape;
  gboolean axes_present = d->axes_input && node->n_inputs > 1 && in[1].present;
  gboolean mask[CLINFER_MAX_RANK];
  ClinferShape *o = &out[0].shape;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_numeric (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  if (axes_present && in[1].type != CLINFER_TYPE_I64
      && in[1].type != CLINFER_TYPE_UNDEFINED) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: axes input is %s, expected i64", clinfer_node_label (node),
        clinfer_element_type_name (in[1].type));
    return FALSE;
  }
  if (x->rank < 0)
    return TRUE;
  if (axes_present && in[1].value == NULL) {
    /* Axes known only at run time: only the rank may be known. */
    if (d->keepdims) {
      o->rank = x->rank;
      for (int i = 0; i < x->rank; i++)
        o->dims[i] = CLINFER_DIM_DYNAMIC;
    }
    return TRUE;
  }
  if (!reduce_mask (node, axes_present ? in[1].value : NULL, x->rank, mask,
          error))
    return FALSE;
  o->rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!mask[i])
      o->dims[o->rank++] = x->dims[i];
    else if (d->keepdims)
      o->dims[o->rank++] = 1;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Iteration plan: kept and reduced dims, merged where contiguous    */

typedef struct {
  int n_keep, n_red;
  int64_t keep_dims[CLINFER_MAX_RANK], keep_strides[CLINFER_MAX_RANK];
  int64_t red_dims[CLINFER_MAX_RANK], red_strides[CLINFER_MAX_RANK];
  int64_t n_out, count;      /* output elements, elements per output */
} RedPlan;

static void
plan_push (int64_t *dims, int64_t *strides, int *n, int64_t dim, int64_t stride,
    gboolean *prev_same)
{
  if (*prev_same && *n > 0 && strides[*n - 1] == dim * stride) {
    dims[*n - 1] *= dim;
    strides[*n - 1] = stride;
  } else {
    dims[*n] = dim;
    strides[*n] = stride;
    (*n)++;
  }
}

static void
red_plan_init (RedPlan *p, const ClinferShape *x, const gboolean *mask)
{
  int64_t st[CLINFER_MAX_RANK];
  int last = -1;             /* 0 = last pushed dim kept, 1 = reduced */

  memset (p, 0, sizeof (*p));
  clinfer_shape_elem_strides (x, st);
  p->n_out = 1;
  p->count = 1;
  for (int i = 0; i < x->rank; i++) {
    gboolean same;
    if (mask[i])
      p->count *= x->dims[i];
    else
      p->n_out *= x->dims[i];
    if (x->dims[i] == 1)
      continue;
    same = last == (mask[i] ? 1 : 0);
    if (mask[i])
      plan_push (p->red_dims, p->red_strides, &p->n_red, x->dims[i], st[i],
          &same);
    else
      plan_push (p->keep_dims, p->keep_strides, &p->n_keep, x->dims[i], st[i],
          &same);
    last = mask[i] ? 1 : 0;
  }
  if (p->n_red == 0) {
    p->n_red = 1;
    p->red_dims[0] = 1;
    p->red_strides[0] = 0;
  }
}

static int64_t
plan_base (const RedPlan *p, int64_t o)
{
  int64_t off = 0;

  for (int d = p->n_keep - 1; d >= 0; d--) {
    off += (o % p->keep_dims[d]) * p->keep_strides[d];
    o /= p->keep_dims[d];
  }
  return off;
}

/* Runs BODY with `off` set to the offset of every reduced element of the
 * output whose first input element is at @base. */
#define FOR_REDUCED(p, base, BODY)                                           \
  do {                                                                       \
    int64_t idx_[CLINFER_MAX_RANK] = { 0 }, off_ = (base);                   \
    int nr_ = (p)->n_red;                                                    \
    int64_t in_n_ = (p)->red_dims[nr_ - 1], in_s_ = (p)->red_strides[nr_ - 1]; \
    if ((p)->count == 0)                                                     \
      break;                                                                 \
    for (;;) {                                                               \
      int d_;                                                                \
      for (int64_t t_ = 0; t_ < in_n_; t_++) {                               \
        int64_t off = off_ + t_ * in_s_;                                     \
        BODY;                                                                \
      }                                                                      \
      for (d_ = nr_ - 2; d_ >= 0; d_--) {                                    \
        off_ += (p)->red_strides[d_];                                        \
        if (++idx_[d_] < (p)->red_dims[d_])                                  \
          break;                                                             \
        off_ -= (p)->red_strides[d_] * (p)->red_dims[d_];                    \
        idx_[d_] = 0;                                                        \
      }                                                                      \
      if (d_ < 0)                                                            \
        break;                                                               \
    }                                                                        \
  } while (0)

/* ---------------------------------------------------------------- */
/* Typed reduction kernels                                           */

/* Accumulator arithmetic: plain for double, wrapping (two's complement,
 * like numpy) for the 64-bit integer accumulators, never signed overflow. */
#define A_ADD(ACC, a, b) ((ACC) ((a) + (b)))
#define A_MUL(ACC, a, b) ((ACC) ((a) * (b)))
#define W_ADD(ACC, a, b) ((ACC) ((uint64_t) (a) + (uint64_t) (b)))
#define W_MUL(ACC, a, b) ((ACC) ((uint64_t) (a) * (uint64_t) (b)))

/* A double accumulator back to an integer T, saturated (a converted value
 * out of T's range is undefined behaviour in C); NaN gives 0. */
#define SAT_CAST(T, LO, HI, v)                                               \
  ((v) != (v) ? (T) 0 : (v) <= (double) (LO) ? (T) (LO)                      \
      : (v) >= (double) (HI) ? (T) (HI) : (T) (v))
#define PLAIN_CAST(T, LO, HI, v) ((T) (v))

static inline int64_t
sat_i64 (double v)
{
  return v != v ? 0 : v <= -9223372036854775808.0 ? INT64_MIN
      : v >= 9223372036854775808.0 ? INT64_MAX : (int64_t) v;
}

static inline uint64_t
sat_u64 (double v)
{
  return v != v || v <= 0 ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX
      : (uint64_t) v;
}

/* A double result (sqrt, log, exp) as accumulator ACC, saturated. */
#define TO_ACC(ACC, v) _Generic ((ACC) 0, double: (double) (v),              \
    int64_t: sat_i64 (v), uint64_t: sat_u64 (v))

/* One kernel per (element type T, accumulator ACC). ISNAN tests a value
 * of ACC for NaN (FALSE for integer accumulators); LO/HI are the results
 * of Max/Min over an empty set, EMPTY_MEAN that of Mean. ADD and MUL are
 * A_ or W_ above, CAST how the accumulator becomes a T. */
#define DEFINE_REDUCE(NAME, T, ACC, ISNAN, LO, HI, EMPTY_MEAN, ADD, MUL, CAST) \
static void                                                                  \
NAME (const RedPlan *p, RedKind kind, const T *x, T *y)                      \
{                                                                            \
  gboolean par_ = p->n_out * p->count > 32768;                               \
  _Pragma ("omp parallel for schedule(static) if (par_)")                    \
  for (int64_t o = 0; o < p->n_out; o++) {                                   \
    int64_t base = plan_base (p, o);                                         \
    ACC acc = kind == RED_PROD ? (ACC) 1 : (ACC) 0, mx = (ACC) 0;            \
    gboolean first = TRUE;                                                   \
    switch (kind) {                                                          \
      case RED_SUM: case RED_MEAN: case RED_LOGSUM:                          \
        FOR_REDUCED (p, base, acc = ADD (ACC, acc, (ACC) x[off]));           \
        break;                                                               \
      case RED_SUMSQ: case RED_L2:                                           \
        FOR_REDUCED (p, base, { ACC v_ = (ACC) x[off];                       \
            acc = ADD (ACC, acc, MUL (ACC, v_, v_)); });                     \
        break;                                                               \
      case RED_L1:                                                           \
        FOR_REDUCED (p, base, { ACC v_ = (ACC) x[off];                       \
            acc = ADD (ACC, acc, (double) v_ < 0                             \
                ? MUL (ACC, v_, (ACC) -1) : v_); });                         \
        break;                                                               \
      case RED_PROD:                                                         \
        FOR_REDUCED (p, base, acc = MUL (ACC, acc, (ACC) x[off]));           \
        break;                                                               \
      case RED_MAX: case RED_MIN: case RED_LSE:                              \
        /* NaN wins and sticks, like numpy */                               \
        FOR_REDUCED (p, base, {                                              \
            ACC v_ = (ACC) x[off];                                           \
            gboolean take_ = kind == RED_MIN ? v_ < mx : v_ > mx;            \
            if (first || (!ISNAN (mx) && (take_ || ISNAN (v_))))             \
              mx = v_;                                                       \
            first = FALSE; });                                               \
        acc = first ? (kind == RED_MIN ? (ACC) (HI) : (ACC) (LO)) : mx;      \
        if (kind == RED_LSE && !first && isfinite ((double) mx)) {           \
          double s_ = 0;                                                     \
          FOR_REDUCED (p, base, s_ += exp ((double) x[off] - (double) mx));  \
          acc = TO_ACC (ACC, (double) mx + log (s_));                        \
        }                                                                    \
        break;                                                               \
    }                                                                        \
    switch (kind) {                                                          \
      case RED_MEAN:                                                         \
        acc = p->count ? acc / (ACC) p->count : (ACC) (EMPTY_MEAN);          \
        break;                                                               \
      case RED_L2: acc = TO_ACC (ACC, sqrt ((double) acc)); break;           \
      case RED_LOGSUM: acc = TO_ACC (ACC, log ((double) acc)); break;        \
      default: break;                                                        \
    }                                                                        \
    y[o] = CAST (T, LO, HI, acc);                                            \
  }                                                                          \
}

#define NO_NAN(v) FALSE
#define D_NAN(v) isnan ((double) (v))

DEFINE_REDUCE (reduce_f32, float, double, D_NAN, -INFINITY, INFINITY, NAN, A_ADD, A_MUL, PLAIN_CAST)
DEFINE_REDUCE (reduce_f64, double, double, D_NAN, -INFINITY, INFINITY, NAN, A_ADD, A_MUL, PLAIN_CAST)
DEFINE_REDUCE (reduce_i8, int8_t, double, NO_NAN, INT8_MIN, INT8_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_u8, uint8_t, double, NO_NAN, 0, UINT8_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_i16, int16_t, double, NO_NAN, INT16_MIN, INT16_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_u16, uint16_t, double, NO_NAN, 0, UINT16_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_i32, int32_t, double, NO_NAN, INT32_MIN, INT32_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_u32, uint32_t, double, NO_NAN, 0, UINT32_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_i64, int64_t, int64_t, NO_NAN, INT64_MIN, INT64_MAX, 0, W_ADD, W_MUL, PLAIN_CAST)
DEFINE_REDUCE (reduce_u64, uint64_t, uint64_t, NO_NAN, 0, UINT64_MAX, 0, W_ADD, W_MUL, PLAIN_CAST)
DEFINE_REDUCE (reduce_i64d, int64_t, double, NO_NAN, INT64_MIN, INT64_MAX, 0, A_ADD, A_MUL, SAT_CAST)
DEFINE_REDUCE (reduce_u64d, uint64_t, double, NO_NAN, 0, UINT64_MAX, 0, A_ADD, A_MUL, SAT_CAST)

#define RUN(FN, T) FN (&p, d->kind, (const T *) xd, (T *) yd)

static gboolean
reduce_typed (const ClinferNode *node, const ClinferTensor *x,
    const gboolean *mask, ClinferTensor *y, GError **error)
{
  const ReduceData *d = node->op_data;
  gconstpointer xd = clinfer_tensor_get_const_data (x);
  gpointer yd = clinfer_tensor_get_data (y);
  gboolean float_kind = d->kind == RED_L2 || d->kind == RED_LOGSUM
      || d->kind == RED_LSE;
  RedPlan p;

  red_plan_init (&p, clinfer_tensor_get_shape (x), mask);
  if (p.n_out == 0)
    return TRUE;
  switch (clinfer_tensor_get_element_type (x)) {
    case CLINFER_TYPE_F32: RUN (reduce_f32, float); break;
    case CLINFER_TYPE_F64: RUN (reduce_f64, double); break;
    case CLINFER_TYPE_I8: RUN (reduce_i8, int8_t); break;
    case CLINFER_TYPE_U8: RUN (reduce_u8, uint8_t); break;
    case CLINFER_TYPE_I16: RUN (reduce_i16, int16_t); break;
    case CLINFER_TYPE_U16: RUN (reduce_u16, uint16_t); break;
    case CLINFER_TYPE_I32: RUN (reduce_i32, int32_t); break;
    case CLINFER_TYPE_U32: RUN (reduce_u32, uint32_t); break;
    case CLINFER_TYPE_I64:
      if (float_kind)
        RUN (reduce_i64d, int64_t);
      else
        RUN (reduce_i64, int64_t);
      break;
    case CLINFER_TYPE_U64:
      if (float_kind)
        RUN (reduce_u64d, uint64_t);
      else
        RUN (reduce_u64, uint64_t);
      break;
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (x), error);
  }
  return TRUE;
}

static gboolean
eval_reduce (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ReduceData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  const ClinferTensor *axes_t = d->axes_input && node->n_inputs > 1
      ? in[1] : NULL;
  gboolean mask[CLINFER_MAX_RANK];

  if (!reduce_mask (node, axes_t, xs->rank, mask, error))
    return FALSE;
  /* f16/bf16 run in f32 copies. */
  if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (in[0])))
    return clinfer_op_eval_via_f32 (node, in, out, eval_reduce, error);
  return reduce_typed (node, in[0], mask, out[0], error);
}

/* ---------------------------------------------------------------- */
/* ArgMax / ArgMin                                                   */

typedef struct {
  gboolean is_min;
  gboolean keepdims;
  gboolean last;             /* select_last_index */
  int64_t axis;
} ArgData;

static gboolean
prepare_arg (ClinferNode *node, GError **error)
{
  g_autofree ArgData *d = g_new0 (ArgData, 1);
  int64_t keepdims = 1, last = 0;

  d->is_min = strcmp (node->op_type, "ArgMin") == 0;
  if (!clinfer_node_attr_int (node, "axis", 0, &d->axis, error)
      || !clinfer_node_attr_int (node, "keepdims", 1, &keepdims, error)
      || !clinfer_node_attr_int (node, "select_last_index", 0, &last, error))
    return FALSE;
  d->keepdims = keepdims != 0;
  d->last = last != 0;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_arg (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ArgData *d = node->op_data;
  const ClinferShape *x = &in[0].shape;
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_numeric (node, in[0].type, error))
    return FALSE;
  out[0].type = CLINFER_TYPE_I64;
  if (x->rank < 0)
    return TRUE;
  if (x->rank == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: input must have rank >= 1, got a scalar",
        clinfer_node_label (node));
    return FALSE;
  }
  if (!clinfer_op_normalize_axis (node, d->axis, x->rank, &axis, error))
    return FALSE;
  if (x->dims[axis] == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: cannot take the arg%s of an empty axis %d",
        clinfer_node_label (node), d->is_min ? "min" : "max", axis);
    return FALSE;
  }
  out[0].shape.rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i != axis)
      out[0].shape.dims[out[0].shape.rank++] = x->dims[i];
    else if (d->keepdims)
      out[0].shape.dims[out[0].shape.rank++] = 1;
  }
  return TRUE;
}

/* NaN counts as the extreme value (first NaN wins, like numpy). */
#define DEFINE_ARG(NAME, T, ISNAN)                                           \
static void                                                                  \
NAME (const T *x, int64_t *y, int64_t outer, int64_t n, int64_t inner,       \
    gboolean is_min, gboolean last)                                          \
{                                                                            \
  _Pragma ("omp parallel for schedule(static) if (outer * n * inner > 32768)") \
  for (int64_t o = 0; o < outer; o++)                                        \
    for (int64_t i = 0; i < inner; i++) {                                    \
      const T *p = x + o * n * inner + i;                                    \
      T best = p[0];                                                         \
      int64_t bi = 0;                                                        \
      for (int64_t k = 1; k < n && !ISNAN (best); k++) {                     \
        T v = p[k * inner];                                                  \
        gboolean better = ISNAN (v) || (is_min ? v < best : v > best)        \
            || (last && v == best);                                          \
        if (better) {                                                        \
          best = v;                                                          \
          bi = k;                                                            \
        }                                                                    \
      }                                                                      \
      y[o * inner + i] = bi;                                                 \
    }                                                                        \
}

DEFINE_ARG (arg_f32, float, D_NAN)
DEFINE_ARG (arg_f64, double, D_NAN)
DEFINE_ARG (arg_i8, int8_t, NO_NAN)
DEFINE_ARG (arg_u8, uint8_t, NO_NAN)
DEFINE_ARG (arg_i16, int16_t, NO_NAN)
DEFINE_ARG (arg_u16, uint16_t, NO_NAN)
DEFINE_ARG (arg_i32, int32_t, NO_NAN)
DEFINE_ARG (arg_u32, uint32_t, NO_NAN)
DEFINE_ARG (arg_i64, int64_t, NO_NAN)
DEFINE_ARG (arg_u64, uint64_t, NO_NAN)

#define ARG(FN, T) FN ((const T *) xd, yd, outer, n, inner, d->is_min, d->last)

static gboolean
eval_arg (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ArgData *d = node->op_data;
  const ClinferTensor *x = in[0];
  gconstpointer xd;
  int64_t *yd = clinfer_tensor_get_data (out[0]);
  int64_t outer, inner, n;
  int axis;

  if (!clinfer_op_normalize_axis (node, d->axis,
          clinfer_tensor_get_shape (x)->rank, &axis, error))
    return FALSE;
  clinfer_shape_split_axis (clinfer_tensor_get_shape (x), axis, &outer, &n,
      &inner);
  if (outer * inner == 0)
    return TRUE;
  if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (x)))
    return clinfer_op_eval_via_f32 (node, in, out, eval_arg, error);
  xd = clinfer_tensor_get_const_data (x);
  switch (clinfer_tensor_get_element_type (x)) {
    case CLINFER_TYPE_F32: ARG (arg_f32, float); break;
    case CLINFER_TYPE_F64: ARG (arg_f64, double); break;
    case CLINFER_TYPE_I8: ARG (arg_i8, int8_t); break;
    case CLINFER_TYPE_U8: ARG (arg_u8, uint8_t); break;
    case CLINFER_TYPE_I16: ARG (arg_i16, int16_t); break;
    case CLINFER_TYPE_U16: ARG (arg_u16, uint16_t); break;
    case CLINFER_TYPE_I32: ARG (arg_i32, int32_t); break;
    case CLINFER_TYPE_U32: ARG (arg_u32, uint32_t); break;
    case CLINFER_TYPE_I64: ARG (arg_i64, int64_t); break;
    case CLINFER_TYPE_U64: ARG (arg_u64, uint64_t); break;
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (x), error);
  }
  return TRUE;
}

/* Axes are an attribute up to opset 12 (ReduceSum) or 17 (the others),
 * an input afterwards: a run-time value can decide the output shape. */
#define REDUCE_RANGE(name, lo, hi, flags) \
  { name, "", lo, hi, 1, 2, 1, 1, flags, prepare_reduce, g_free, \
    infer_reduce, eval_reduce }
#define REDUCE(name) \
  REDUCE_RANGE (name, 1, 17, 0), \
  REDUCE_RANGE (name, 18, 0, CLINFER_OP_SHAPE_NEEDS_VALUES)
#define ARGOP(name) \
  { name, "", 1, 0, 1, 1, 1, 1, 0, prepare_arg, g_free, infer_arg, eval_arg }

const ClinferOpDef clinfer_ops_reduce[] = {
  REDUCE_RANGE ("ReduceSum", 1, 12, 0),
  REDUCE_RANGE ("ReduceSum", 13, 0, CLINFER_OP_SHAPE_NEEDS_VALUES),
  REDUCE ("ReduceMean"),
  REDUCE ("ReduceMax"),
  REDUCE ("ReduceMin"),
  REDUCE ("ReduceProd"),
  REDUCE ("ReduceL1"),
  REDUCE ("ReduceL2"),
  REDUCE ("ReduceSumSquare"),
  REDUCE ("ReduceLogSum"),
  REDUCE ("ReduceLogSumExp"),
  ARGOP ("ArgMax"),
  ARGOP ("ArgMin"),
  { NULL }
};
