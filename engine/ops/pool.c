/* clinfer — pooling ops: MaxPool (with optional Indices), AveragePool,
 * GlobalAveragePool and GlobalMaxPool, for 1-D to 3-D spatial inputs. */
#include "ops/conv.h"
#include <math.h>
#include <string.h>

typedef struct {
  ClinferWindowAttrs win;
  gboolean count_include_pad;
  gboolean column_major;     /* MaxPool storage_order = 1 */
} PoolParams;

typedef enum { POOL_MAX, POOL_AVG } PoolKind;

/* ---------------------------------------------------------------- */
/* Attributes and shape inference                                    */

static gboolean
prepare_pool (ClinferNode *node, GError **error)
{
  g_autofree PoolParams *p = g_new0 (PoolParams, 1);
  int64_t cip = 0, order = 0;

  if (!clinfer_window_attrs_parse (node, TRUE, &p->win, error)
      || !clinfer_node_attr_int (node, "count_include_pad", 0, &cip, error)
      || !clinfer_node_attr_int (node, "storage_order", 0, &order, error))
    return FALSE;
  if (p->win.n_kernel == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'kernel_shape' is required", clinfer_node_label (node));
    return FALSE;
  }
  if (order != 0 && order != 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: storage_order is %" G_GINT64_FORMAT ", expected 0 (row major) or "
        "1 (column major)", clinfer_node_label (node), order);
    return FALSE;
  }
  p->count_include_pad = cip != 0;
  p->column_major = order == 1;
  node->op_data = g_steal_pointer (&p);
  return TRUE;
}

static gboolean
check_pool_input (const ClinferNode *node, const ClinferValueInfo *in,
    gboolean allow_int8, GError **error)
{
  ClinferElementType t = in[0].type;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (t != CLINFER_TYPE_F32 && t != CLINFER_TYPE_F64 && t != CLINFER_TYPE_F16
      && !(allow_int8 && (t == CLINFER_TYPE_I8 || t == CLINFER_TYPE_U8))) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input X is %s, expected f32, f64, f16%s", clinfer_node_label (node),
        clinfer_element_type_name (t), allow_int8 ? ", i8 or u8" : "");
    return FALSE;
  }
  if (in[0].shape.rank >= 0 && in[0].shape.rank < 3) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input X has rank %d, expected at least 3 (N, C, spatial...)",
        clinfer_node_label (node), in[0].shape.rank);
    return FALSE;
  }
  return TRUE;
}

static gboolean
infer_pool (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const PoolParams *p = node->op_data;
  const ClinferShape *x = &in[0].shape;
  ClinferWindow win;
  gboolean is_max = strcmp (node->op_type, "MaxPool") == 0;

  if (!check_pool_input (node, in, is_max, error))
    return FALSE;
  out[0].type = in[0].type;
  if (node->n_outputs > 1)
    out[1].type = CLINFER_TYPE_I64;
  if (x->rank < 0)
    return TRUE;
  if (!clinfer_window_resolve (node, &p->win, x->rank - 2, x->dims + 2, NULL,
          &win, error))
    return FALSE;
  out[0].shape = *x;
  for (int i = 0; i < win.n; i++)
    out[0].shape.dims[i + 2] = win.out[i];
  if (node->n_outputs > 1)
    out[1].shape = out[0].shape;
  return TRUE;
}

static gboolean
infer_global_pool (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!check_pool_input (node, in, FALSE, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  for (int i = 2; i < in[0].shape.rank; i++)
    out[0].shape.dims[i] = 1;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Reference evaluation                                              */

typedef struct {
  int64_t planes;            /* N * C */
  ClinferWindow3 w;
  gboolean count_include_pad, column_major;
} PoolDims;

static void
pool_dims_from_window (const ClinferWindow *win, const ClinferShape *xs,
    PoolDims *pd)
{
  pd->planes = xs->dims[0] * xs->dims[1];
  clinfer_window_to_3d (win, &pd->w);
}

/* Kernel taps [*k0, *k1) of output position @o along dim @i that read the
 * input, and the number of taps inside the padded extent. */
static void
pool_taps (const PoolDims *pd, int i, int64_t o, int64_t *k0, int64_t *k1,
    int64_t *n_padded)
{
  const ClinferWindow3 *w = &pd->w;
  int64_t start = o * w->s[i] - w->pb[i], lo = 0, hi = w->k[i], plo, phi;

  /* Taps are start + k*d; clamp k to keep the index in [0, in). */
  if (start < 0)
    lo = (-start + w->d[i] - 1) / w->d[i];
  if (start + (hi - 1) * w->d[i] >= w->in[i])
    hi = start >= w->in[i] ? 0 : (w->in[i] - 1 - start) / w->d[i] + 1;
  *k0 = lo;
  *k1 = MAX (lo, hi);
  /* Same within [-pb, in + pe): the divisor of count_include_pad. */
  plo = 0;
  phi = w->k[i];
  if (start >= w->in[i] + w->pe[i])
    phi = 0;
  else if (start + (phi - 1) * w->d[i] >= w->in[i] + w->pe[i])
    phi = (w->in[i] + w->pe[i] - 1 - start) / w->d[i] + 1;
  *n_padded = MAX (0, phi - plo);
}

#define DEFINE_MAX_POOL(NAME, T, LOWEST)                                      \
static void                                                                   \
NAME (const PoolDims *pd, const T *x, T *y, int64_t *idx)                     \
{                                                                             \
  const ClinferWindow3 *w = &pd->w;                                           \
  int64_t in_sp = w->in[0] * w->in[1] * w->in[2];                             \
  int64_t out_sp = w->out[0] * w->out[1] * w->out[2];                         \
                                                                              \
  _Pragma ("omp parallel for schedule(static)")                               \
  for (int64_t pl = 0; pl < pd->planes; pl++) {                               \
    const T *xp = x + pl * in_sp;                                             \
    for (int64_t o = 0; o < out_sp; o++) {                                    \
      int64_t o2 = o % w->out[2], o1 = o / w->out[2] % w->out[1];             \
      int64_t o0 = o / w->out[2] / w->out[1], r[3][2], np, best_i = -1;       \
      T best = LOWEST;                                                        \
      pool_taps (pd, 0, o0, &r[0][0], &r[0][1], &np);                         \
      pool_taps (pd, 1, o1, &r[1][0], &r[1][1], &np);                         \
      pool_taps (pd, 2, o2, &r[2][0], &r[2][1], &np);                         \
      for (int64_t a = r[0][0]; a < r[0][1]; a++)                             \
        for (int64_t b = r[1][0]; b < r[1][1]; b++)                           \
          for (int64_t c = r[2][0]; c < r[2][1]; c++) {                       \
            int64_t i0 = o0 * w->s[0] - w->pb[0] + a * w->d[0];               \
            int64_t i1 = o1 * w->s[1] - w->pb[1] + b * w->d[1];               \
            int64_t i2 = o2 * w->s[2] - w->pb[2] + c * w->d[2];               \
            int64_t i = (i0 * w->in[1] + i1) * w->in[2] + i2;                 \
            if (best_i < 0 || xp[i] > best) {                                 \
              best = xp[i];                                                   \
              best_i = pd->column_major                                       \
                  ? i0 + (i1 + i2 * w->in[1]) * w->in[0] : i;                 \
            }                                                                 \
          }                                                                   \
      y[pl * out_sp + o] = best;                                              \
      if (idx)                                                                \
        idx[pl * out_sp + o] = best_i < 0 ? -1 : pl * in_sp + best_i;         \
    }                                                                         \
  }                                                                           \
}

DEFINE_MAX_POOL (max_pool_f32, float, -INFINITY)
DEFINE_MAX_POOL (max_pool_f64, double, -INFINITY)
DEFINE_MAX_POOL (max_pool_i8, int8_t, INT8_MIN)
DEFINE_MAX_POOL (max_pool_u8, uint8_t, 0)

#define DEFINE_AVG_POOL(NAME, T)                                              \
static void                                                                   \
NAME (const PoolDims *pd, const T *x, T *y)                                   \
{                                                                             \
  const ClinferWindow3 *w = &pd->w;                                           \
  int64_t in_sp = w->in[0] * w->in[1] * w->in[2];                             \
  int64_t out_sp = w->out[0] * w->out[1] * w->out[2];                         \
                                                                              \
  _Pragma ("omp parallel for schedule(static)")                               \
  for (int64_t pl = 0; pl < pd->planes; pl++) {                               \
    const T *xp = x + pl * in_sp;                                             \
    for (int64_t o = 0; o < out_sp; o++) {                                    \
      int64_t o2 = o % w->out[2], o1 = o / w->out[2] % w->out[1];             \
      int64_t o0 = o / w->out[2] / w->out[1], r[3][2], np[3], count;          \
      double sum = 0;                                                         \
      pool_taps (pd, 0, o0, &r[0][0], &r[0][1], &np[0]);                      \
      pool_taps (pd, 1, o1, &r[1][0], &r[1][1], &np[1]);                      \
      pool_taps (pd, 2, o2, &r[2][0], &r[2][1], &np[2]);                      \
      for (int64_t a = r[0][0]; a < r[0][1]; a++)                             \
        for (int64_t b = r[1][0]; b < r[1][1]; b++)                           \
          for (int64_t c = r[2][0]; c < r[2][1]; c++) {                       \
            int64_t i0 = o0 * w->s[0] - w->pb[0] + a * w->d[0];               \
            int64_t i1 = o1 * w->s[1] - w->pb[1] + b * w->d[1];               \
            int64_t i2 = o2 * w->s[2] - w->pb[2] + c * w->d[2];               \
            sum += xp[(i0 * w->in[1] + i1) * w->in[2] + i2];                  \
          }                                                                   \
      count = pd->count_include_pad ? np[0] * np[1] * np[2]                   \
          : (r[0][1] - r[0][0]) * (r[1][1] - r[1][0]) * (r[2][1] - r[2][0]);  \
      y[pl * out_sp + o] = count > 0 ? (T) (sum / count) : (T) 0;             \
    }                                                                         \
  }                                                                           \
}

DEFINE_AVG_POOL (avg_pool_f32, float)
DEFINE_AVG_POOL (avg_pool_f64, double)

static gboolean
run_pool (const ClinferNode *node, PoolKind kind, const PoolDims *pd,
    const ClinferTensor *x, ClinferTensor *y, ClinferTensor *idx,
    GError **error)
{
  ClinferElementType t = clinfer_tensor_get_element_type (x);
  const void *xp = clinfer_tensor_get_const_data (x);
  void *yp = clinfer_tensor_get_data (y);
  int64_t *ip = idx ? clinfer_tensor_get_data (idx) : NULL;

  if (kind == POOL_MAX && t == CLINFER_TYPE_F32)
    max_pool_f32 (pd, xp, yp, ip);
  else if (kind == POOL_MAX && t == CLINFER_TYPE_F64)
    max_pool_f64 (pd, xp, yp, ip);
  else if (kind == POOL_MAX && t == CLINFER_TYPE_I8)
    max_pool_i8 (pd, xp, yp, ip);
  else if (kind == POOL_MAX && t == CLINFER_TYPE_U8)
    max_pool_u8 (pd, xp, yp, ip);
  else if (kind == POOL_AVG && t == CLINFER_TYPE_F32)
    avg_pool_f32 (pd, xp, yp);
  else if (kind == POOL_AVG && t == CLINFER_TYPE_F64)
    avg_pool_f64 (pd, xp, yp);
  else if (t == CLINFER_TYPE_F16) {
    g_autoptr (ClinferTensor) xf = clinfer_op_half_to_f32 (x, error);
    g_autoptr (ClinferTensor) yf = NULL;
    if (xf == NULL)
      return FALSE;
    yf = clinfer_tensor_new (CLINFER_TYPE_F32, clinfer_tensor_get_shape (y), error);
    if (yf == NULL || !run_pool (node, kind, pd, xf, yf, idx, error))
      return FALSE;
    clinfer_op_f32_to_half (yf, y);
  } else {
    return clinfer_op_unsupported_type (node, t, error);
  }
  return TRUE;
}

static gboolean
eval_pool (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const PoolParams *p = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  gboolean is_max = strcmp (node->op_type, "MaxPool") == 0;
  ClinferWindow win;
  PoolDims pd;

  if (!clinfer_window_resolve (node, &p->win, xs->rank - 2, xs->dims + 2, NULL,
          &win, error))
    return FALSE;
  pool_dims_from_window (&win, xs, &pd);
  pd.count_include_pad = p->count_include_pad;
  pd.column_major = p->column_major;
  if (clinfer_tensor_get_n_elements (out[0]) == 0)
    return TRUE;
  return run_pool (node, is_max ? POOL_MAX : POOL_AVG, &pd, in[0], out[0],
      node->n_outputs > 1 ? out[1] : NULL, error);
}

static gboolean
eval_global_pool (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  gboolean is_max = strcmp (node->op_type, "GlobalMaxPool") == 0;
  PoolDims pd;
  ClinferWindow win = { 0 };

  /* A global pool is a window covering the whole spatial extent. */
  if (xs->rank - 2 > CLINFER_MAX_SPATIAL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %d spatial dims are not supported (1 to %d)",
        clinfer_node_label (node), xs->rank - 2, CLINFER_MAX_SPATIAL);
    return FALSE;
  }
  win.n = xs->rank - 2;
  for (int i = 0; i < win.n; i++) {
    win.in[i] = win.kernel[i] = xs->dims[i + 2];
    win.out[i] = win.stride[i] = win.dilation[i] = 1;
  }
  pool_dims_from_window (&win, xs, &pd);
  pd.count_include_pad = FALSE;
  pd.column_major = FALSE;
  if (clinfer_tensor_get_n_elements (in[0]) == 0)
    return TRUE;
  return run_pool (node, is_max ? POOL_MAX : POOL_AVG, &pd, in[0], out[0],
      NULL, error);
}

const ClinferOpDef clinfer_ops_pool[] = {
  { "MaxPool", "", 1, 0, 1, 1, 1, 2, 0,
    prepare_pool, g_free, infer_pool, eval_pool },
  { "AveragePool", "", 1, 0, 1, 1, 1, 1, 0,
    prepare_pool, g_free, infer_pool, eval_pool },
  { "GlobalAveragePool", "", 1, 0, 1, 1, 1, 1, 0,
    NULL, NULL, infer_global_pool, eval_global_pool },
  { "GlobalMaxPool", "", 1, 0, 1, 1, 1, 1, 0,
    NULL, NULL, infer_global_pool, eval_global_pool },
  { NULL }
};
