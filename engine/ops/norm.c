/* clinfer — normalisations: BatchNormalization, InstanceNormalization,
 * LayerNormalization, LRN, LpNormalization, MeanVarianceNormalization, and
 * com.clinfer LayerNormStd. */
#include "ops/op.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Shared helpers                                                    */

static gboolean
check_float (const ClinferNode *node, const ClinferValueInfo *in, guint i,
    GError **error)
{
  ClinferElementType t = in[i].type;

  if (t == CLINFER_TYPE_F32 || t == CLINFER_TYPE_F64
      || clinfer_op_type_is_half (t))
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
      "%s: input %u is %s, expected a floating-point type",
      clinfer_node_label (node), i, clinfer_element_type_name (t));
  return FALSE;
}

static gboolean
require_rank (const ClinferNode *node, const ClinferShape *s, int min_rank,
    const char *what, GError **error)
{
  if (s->rank < 0 || s->rank >= min_rank)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "%s: %s has rank %d, expected at least %d", clinfer_node_label (node),
      what, s->rank, min_rank);
  return FALSE;
}

/* A parameter input (scale, bias, mean, var) must hold @n values. */
static gboolean
check_param_count (const ClinferNode *node, const ClinferTensor *t,
    const char *what, int64_t n, GError **error)
{
  if (clinfer_tensor_get_n_elements (t) == n)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "%s: %s has %" G_GINT64_FORMAT " values, expected %" G_GINT64_FORMAT,
      clinfer_node_label (node), what, clinfer_tensor_get_n_elements (t), n);
  return FALSE;
}

/* @n zeroed elements of @size bytes, or NULL with an error naming the
 * node when they cannot be allocated. */
static gpointer
try_alloc (const ClinferNode *node, int64_t n, gsize size, GError **error)
{
  gpointer p = NULL;

  if (n >= 0 && (guint64) n < G_MAXSIZE / size)
    p = g_try_malloc0 (MAX ((gsize) n, 1) * size);
  if (p == NULL)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: cannot allocate %" G_GINT64_FORMAT " temporary values",
        clinfer_node_label (node), n);
  return p;
}

/* Converts the tensor to a new double array (NULL with @error). */
static double *
to_doubles (const ClinferNode *node, const ClinferTensor *t, GError **error)
{
  int64_t n = clinfer_tensor_get_n_elements (t);
  double *d = try_alloc (node, n, sizeof (double), error);

  for (int64_t i = 0; d && i < n; i++)
    d[i] = clinfer_tensor_get_as_double (t, i);
  return d;
}

static gboolean
any_half (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out)
{
  for (guint i = 0; i < node->n_inputs; i++)
    if (in[i] && clinfer_op_type_is_half (clinfer_tensor_get_element_type (in[i])))
      return TRUE;
  for (guint i = 0; i < node->n_outputs; i++)
    if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (out[i])))
      return TRUE;
  return FALSE;
}

/* y = x * a[p] + b[p] over [n, c, s] with p = c * pc + s * ps. */
#define DEFINE_AFFINE(NAME, T)                                               \
static void                                                                  \
NAME (const T *x, T *y, int64_t n, int64_t c, int64_t s, const double *a,    \
    const double *b, int64_t pc, int64_t ps)                                 \
{                                                                            \
  gboolean par_ = n * c * s > 32768;                                         \
  _Pragma ("omp parallel for collapse(2) schedule(static) if (par_)")        \
  for (int64_t i = 0; i < n; i++)                                            \
    for (int64_t j = 0; j < c; j++) {                                        \
      const T *xp = x + (i * c + j) * s;                                     \
      T *yp = y + (i * c + j) * s;                                           \
      if (ps == 0) {                                                         \
        T av = (T) a[j * pc], bv = (T) b[j * pc];                            \
        for (int64_t k = 0; k < s; k++)                                      \
          yp[k] = xp[k] * av + bv;                                           \
      } else                                                                 \
        for (int64_t k = 0; k < s; k++)                                      \
          yp[k] = (T) (xp[k] * a[j * pc + k * ps] + b[j * pc + k * ps]);     \
    }                                                                        \
}

DEFINE_AFFINE (affine_f32, float)
DEFINE_AFFINE (affine_f64, double)

/* Normalises @rows contiguous rows of @d elements:
 * y = (x - mean) / sqrt (var + eps) * scale + bias, where scale and bias
 * come per row (rs, rb) or per column (cs, cb), each may be NULL. Mean and
 * 1/std of each row go to @mean / @inv when not NULL. */
#define DEFINE_ROWNORM(NAME, T)                                              \
static void                                                                  \
NAME (const T *x, T *y, int64_t rows, int64_t d, double eps,                 \
    const double *rs, const double *rb, const double *cs, const double *cb,  \
    double *mean, double *inv)                                               \
{                                                                            \
  _Pragma ("omp parallel for schedule(static) if (rows * d > 16384)")        \
  for (int64_t r = 0; r < rows; r++) {                                       \
    const T *xp = x + r * d;                                                 \
    T *yp = y + r * d;                                                       \
    double m = 0, v = 0, is;                                                 \
    for (int64_t j = 0; j < d; j++)                                          \
      m += xp[j];                                                            \
    m /= (double) d;                                                         \
    for (int64_t j = 0; j < d; j++)                                          \
      v += (xp[j] - m) * (xp[j] - m);                                        \
    v /= (double) d;                                                         \
    is = 1.0 / sqrt (v + eps);                                               \
    if (mean)                                                                \
      mean[r] = m;                                                           \
    if (inv)                                                                 \
      inv[r] = is;                                                           \
    for (int64_t j = 0; j < d; j++) {                                        \
      double t = (xp[j] - m) * is;                                           \
      t = t * (rs ? rs[r] : cs ? cs[j] : 1.0)                                \
          + (rb ? rb[r] : cb ? cb[j] : 0.0);                                 \
      yp[j] = (T) t;                                                         \
    }                                                                        \
  }                                                                          \
}

DEFINE_ROWNORM (rownorm_f32, float)
DEFINE_ROWNORM (rownorm_f64, double)

static gboolean
rownorm (const ClinferTensor *x, ClinferTensor *y, int64_t rows, int64_t d,
    double eps, const double *rs, const double *rb, const double *cs,
    const double *cb, double *mean, double *inv)
{
  if (rows == 0 || d == 0)
    return TRUE;
  if (clinfer_tensor_get_element_type (x) == CLINFER_TYPE_F64)
    rownorm_f64 (clinfer_tensor_get_const_data (x), clinfer_tensor_get_data (y),
        rows, d, eps, rs, rb, cs, cb, mean, inv);
  else
    rownorm_f32 (clinfer_tensor_get_const_data (x), clinfer_tensor_get_data (y),
        rows, d, eps, rs, rb, cs, cb, mean, inv);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* BatchNormalization                                                */

typedef struct {
  float epsilon, momentum;
  gboolean spatial;          /* opset < 9 */
  gboolean training;         /* opset >= 14 training_mode */
} BnData;

static gboolean
prepare_bn (ClinferNode *node, GError **error)
{
  g_autofree BnData *d = g_new0 (BnData, 1);
  int64_t spatial = 1, training = 0, is_test = 1;

  if (!clinfer_node_attr_float (node, "epsilon", 1e-5f, &d->epsilon, error)
      || !clinfer_node_attr_float (node, "momentum", 0.9f, &d->momentum, error)
      || (node->opset < 9 && !clinfer_node_attr_int (node, "spatial", 1,
              &spatial, error))
      || (node->opset < 7 && !clinfer_node_attr_int (node, "is_test", 0,
              &is_test, error))
      || (node->opset >= 14 && !clinfer_node_attr_int (node, "training_mode",
              0, &training, error)))
    return FALSE;
  /* Before opset 14, extra outputs mean training; only inference runs.
   * Opset 14+ training_mode computes batch statistics and the running
   * averages (momentum). */
  if (node->opset < 14 && node->n_outputs > 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: training outputs (mean, var, saved statistics) are not "
        "supported before opset 14; only inference is",
        clinfer_node_label (node));
    return FALSE;
  }
  if (node->opset >= 14 && training == 0 && node->n_outputs > 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: running mean/var outputs need training_mode=1",
        clinfer_node_label (node));
    return FALSE;
  }
  d->spatial = spatial != 0;
  d->training = training != 0;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* scale, B, mean and var hold one value per channel (per channel and
 * spatial position with spatial=0) when the shapes are known. */
static gboolean
bn_check_params (const ClinferNode *node, const ClinferValueInfo *in,
    GError **error)
{
  const BnData *d = node->op_data;
  const ClinferShape *x = &in[0].shape;
  const char *names[] = { "scale", "B", "mean", "var" };
  ClinferShape want = { 0 };
  int64_t n;

  if (x->rank < 2)
    return TRUE;
  want.rank = d->spatial ? 1 : x->rank - 1;
  memcpy (want.dims, x->dims + 1, want.rank * sizeof (int64_t));
  n = clinfer_shape_n_elements (&want);
  for (int i = 1; i < 5 && n >= 0; i++) {
    int64_t m = clinfer_shape_n_elements (&in[i].shape);
    if (m >= 0 && m != n) {
      g_autofree char *ps = clinfer_shape_to_string (&in[i].shape);
      g_autofree char *ws = clinfer_shape_to_string (&want);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: %s has shape %s, expected %s", clinfer_node_label (node),
          names[i - 1], ps, ws);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
infer_bn (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *x = &in[0].shape;

  for (guint i = 0; i < 5; i++)
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
  if (!check_float (node, in, 0, error)
      || !require_rank (node, x, 2, "input X", error))
    return FALSE;
  /* Opset 14+ allows other float types for mean/var; keep X's for Y. */
  if (node->opset < 14 && !clinfer_op_check_same_types (node, in, 1, error))
    return FALSE;
  if (!bn_check_params (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = *x;
  for (guint i = 1; i < node->n_outputs; i++) {
    out[i].type = in[i + 2].type;
    out[i].shape = in[i + 2].shape;
  }
  return TRUE;
}

/* Batch statistics per channel (population variance) and the running
 * averages of training mode. */
static void
bn_batch_stats (const double *xd, int64_t n, int64_t c, int64_t s,
    double *mean, double *var)
{
  for (int64_t j = 0; j < c; j++) {
    double m = 0, v = 0;
    int64_t cnt = n * s;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < s; k++)
        m += xd[(i * c + j) * s + k];
    m /= (double) MAX (cnt, 1);
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < s; k++) {
        double t = xd[(i * c + j) * s + k] - m;
        v += t * t;
      }
    mean[j] = m;
    var[j] = v / (double) MAX (cnt, 1);
  }
}

static gboolean
bn_training (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, int64_t n, int64_t c, int64_t s, double *mean,
    double *var, GError **error)
{
  const BnData *d = node->op_data;
  g_autofree double *xd = to_doubles (node, in[0], error);
  g_autofree double *bm = NULL, *bv = NULL;

  if (xd == NULL
      || (bm = try_alloc (node, c, sizeof (double), error)) == NULL
      || (bv = try_alloc (node, c, sizeof (double), error)) == NULL)
    return FALSE;
  bn_batch_stats (xd, n, c, s, bm, bv);
  for (int64_t j = 0; j < c; j++) {
    double mom = d->momentum;
    if (node->n_outputs > 1)
      clinfer_op_store_double (out[1], j, mean[j] * mom + bm[j] * (1 - mom));
    if (node->n_outputs > 2)
      clinfer_op_store_double (out[2], j, var[j] * mom + bv[j] * (1 - mom));
    mean[j] = bm[j];
    var[j] = bv[j];
  }
  return TRUE;
}

static gboolean
eval_bn (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const BnData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t n = xs->dims[0], c = xs->dims[1], s = 1, np;
  g_autofree double *sc = NULL, *bi = NULL, *mean = NULL, *var = NULL;
  g_autofree double *a = NULL, *b = NULL;
  const char *names[] = { "scale", "B", "mean", "var" };

  if (any_half (node, in, out))
    return clinfer_op_eval_via_f32 (node, in, out, eval_bn, error);
  for (int i = 2; i < xs->rank; i++)
    s *= xs->dims[i];
  np = d->spatial ? c : c * s;
  for (int i = 1; i < 5; i++)
    if (!check_param_count (node, in[i], names[i - 1], np, error))
      return FALSE;
  if ((sc = to_doubles (node, in[1], error)) == NULL
      || (bi = to_doubles (node, in[2], error)) == NULL
      || (mean = to_doubles (node, in[3], error)) == NULL
      || (var = to_doubles (node, in[4], error)) == NULL
      || (a = try_alloc (node, np, sizeof (double), error)) == NULL
      || (b = try_alloc (node, np, sizeof (double), error)) == NULL)
    return FALSE;
  if (d->training
      && !bn_training (node, in, out, n, c, s, mean, var, error))
    return FALSE;
  for (int64_t i = 0; i < np; i++) {
    a[i] = sc[i] / sqrt (var[i] + d->epsilon);
    b[i] = bi[i] - mean[i] * a[i];
  }
  if (clinfer_tensor_get_element_type (in[0]) == CLINFER_TYPE_F64)
    affine_f64 (clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), n, c, s, a, b,
        d->spatial ? 1 : s, d->spatial ? 0 : 1);
  else
    affine_f32 (clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), n, c, s, a, b,
        d->spatial ? 1 : s, d->spatial ? 0 : 1);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* InstanceNormalization                                             */

static gboolean
prepare_eps (ClinferNode *node, GError **error)
{
  float *eps = g_new (float, 1);

  if (!clinfer_node_attr_float (node, "epsilon", 1e-5f, eps, error)) {
    g_free (eps);
    return FALSE;
  }
  node->op_data = eps;
  return TRUE;
}

static gboolean
infer_instnorm (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  for (guint i = 0; i < 3; i++)
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
  if (!check_float (node, in, 0, error)
      || !clinfer_op_check_same_types (node, in, 1, error)
      || !require_rank (node, &in[0].shape, 3, "input", error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

static gboolean
eval_instnorm (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t n = xs->dims[0], c = xs->dims[1], s = 1;
  g_autofree double *sc = NULL, *bi = NULL, *rs = NULL, *rb = NULL;

  if (any_half (node, in, out))
    return clinfer_op_eval_via_f32 (node, in, out, eval_instnorm, error);
  for (int i = 2; i < xs->rank; i++)
    s *= xs->dims[i];
  if (!check_param_count (node, in[1], "scale", c, error)
      || !check_param_count (node, in[2], "B", c, error))
    return FALSE;
  if ((sc = to_doubles (node, in[1], error)) == NULL
      || (bi = to_doubles (node, in[2], error)) == NULL
      || (rs = try_alloc (node, n * c, sizeof (double), error)) == NULL
      || (rb = try_alloc (node, n * c, sizeof (double), error)) == NULL)
    return FALSE;
  for (int64_t r = 0; r < n * c; r++) {
    rs[r] = sc[r % c];
    rb[r] = bi[r % c];
  }
  return rownorm (in[0], out[0], n * c, s, *(const float *) node->op_data, rs,
      rb, NULL, NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- */
/* LayerNormalization                                                */

typedef struct {
  int64_t axis;
  float epsilon;
  ClinferElementType stash;
} LnData;

static gboolean
prepare_ln (ClinferNode *node, GError **error)
{
  g_autofree LnData *d = g_new0 (LnData, 1);
  int64_t stash = 1;

  if (!clinfer_node_attr_int (node, "axis", -1, &d->axis, error)
      || !clinfer_node_attr_float (node, "epsilon", 1e-5f, &d->epsilon, error)
      || !clinfer_node_attr_int (node, "stash_type", 1, &stash, error))
    return FALSE;
  d->stash = (ClinferElementType) stash;
  if (stash != CLINFER_TYPE_F32 && stash != CLINFER_TYPE_F64
      && stash != CLINFER_TYPE_F16 && stash != CLINFER_TYPE_BF16) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: stash_type %" G_GINT64_FORMAT " is not a floating-point type",
        clinfer_node_label (node), stash);
    return FALSE;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Scale/B must broadcast to X's dims from @axis on. */
static gboolean
check_ln_param (const ClinferNode *node, const ClinferShape *x, int axis,
    const ClinferShape *p, const char *what, GError **error)
{
  gboolean ok = p->rank <= x->rank - axis;

  for (int i = 0; ok && i < p->rank; i++) {
    int64_t pd = p->dims[i], xd = x->dims[x->rank - p->rank + i];
    ok = pd == 1 || pd == xd || pd == CLINFER_DIM_DYNAMIC
        || xd == CLINFER_DIM_DYNAMIC;
  }
  if (!ok) {
    g_autofree char *ps = clinfer_shape_to_string (p);
    g_autofree char *xs = clinfer_shape_to_string (x);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: %s of shape %s does not broadcast to the normalised dims of X "
        "(%s from axis %d)", clinfer_node_label (node), what, ps, xs, axis);
  }
  return ok;
}

static gboolean
infer_ln (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const LnData *d = node->op_data;
  const ClinferShape *x = &in[0].shape;
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !check_float (node, in, 0, error)
      || !clinfer_op_check_same_types (node, in, 1, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = *x;
  for (guint i = 1; i < node->n_outputs; i++)
    out[i].type = d->stash;
  if (x->rank < 0)
    return TRUE;
  if (!clinfer_op_normalize_axis (node, d->axis, x->rank, &axis, error)
      || (in[1].shape.rank >= 0 && !check_ln_param (node, x, axis,
              &in[1].shape, "Scale", error))
      || (node->n_inputs > 2 && in[2].present && in[2].shape.rank >= 0
          && !check_ln_param (node, x, axis, &in[2].shape, "B", error)))
    return FALSE;
  for (guint i = 1; i < node->n_outputs; i++) {
    out[i].shape = *x;
    for (int k = axis; k < x->rank; k++)
      out[i].shape.dims[k] = 1;
  }
  return TRUE;
}

/* Per-column values of a parameter broadcast over the last dims @dims of
 * X (@n of them, @d elements in all). */
static double *
ln_columns (const ClinferNode *node, const ClinferTensor *t,
    const int64_t *dims, int n, int64_t d, GError **error)
{
  const ClinferShape *ps = clinfer_tensor_get_shape (t);
  int64_t st[CLINFER_MAX_RANK];
  double *v = try_alloc (node, d, sizeof (double), error);

  clinfer_shape_elem_strides (ps, st);
  for (int64_t j = 0; v && j < d; j++) {
    int64_t r = j, off = 0;
    for (int k = n - 1; k >= 0; k--) {
      int pk = k - (n - ps->rank);
      int64_t i = r % dims[k];
      r /= dims[k];
      if (pk >= 0 && ps->dims[pk] != 1)
        off += i * st[pk];
    }
    v[j] = clinfer_tensor_get_as_double (t, off);
  }
  return v;
}

static gboolean
eval_ln (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const LnData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t rows = 1, cols = 1;
  g_autofree double *cs = NULL, *cb = NULL, *mean = NULL, *inv = NULL;
  int axis;

  if (any_half (node, in, out))
    return clinfer_op_eval_via_f32 (node, in, out, eval_ln, error);
  if (!clinfer_op_normalize_axis (node, d->axis, xs->rank, &axis, error))
    return FALSE;
  for (int i = 0; i < xs->rank; i++) {
    if (i < axis)
      rows *= xs->dims[i];
    else
      cols *= xs->dims[i];
  }
  if ((cs = ln_columns (node, in[1], xs->dims + axis, xs->rank - axis, cols,
              error)) == NULL
      || (node->n_inputs > 2 && in[2] && (cb = ln_columns (node, in[2],
                  xs->dims + axis, xs->rank - axis, cols, error)) == NULL)
      || (mean = try_alloc (node, rows, sizeof (double), error)) == NULL
      || (inv = try_alloc (node, rows, sizeof (double), error)) == NULL)
    return FALSE;
  rownorm (in[0], out[0], rows, cols, d->epsilon, NULL, NULL, cs, cb, mean,
      inv);
  for (int64_t r = 0; r < rows && cols > 0; r++) {
    if (node->n_outputs > 1)
      clinfer_op_store_double (out[1], r, mean[r]);
    if (node->n_outputs > 2)
      clinfer_op_store_double (out[2], r, inv[r]);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* com.clinfer LayerNormStd                                          */

/* Layer normalisation over the last axis in the form PyTorch-style
 * exporters write out with the standard deviation, which
 * LayerNormalization cannot express:
 *   y = Scale * (x - mean) / (sqrt (var_scale * var) + epsilon) + B,
 * var the mean of (x - mean)^2 (var_scale n / (n - 1): the unbiased
 * standard deviation). Made by the fuse-layernorm pass; Scale and B are
 * [n] (B optional). */
typedef struct {
  float epsilon, var_scale;
} LnStdData;

static gboolean
prepare_ln_std (ClinferNode *node, GError **error)
{
  g_autofree LnStdData *d = g_new0 (LnStdData, 1);

  if (!clinfer_node_attr_float (node, "epsilon", 0.f, &d->epsilon, error)
      || !clinfer_node_attr_float (node, "var_scale", 1.f, &d->var_scale,
          error))
    return FALSE;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_ln_std (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *x = &in[0].shape;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error))
    return FALSE;
  for (guint i = 0; i < node->n_inputs; i++)
    if (in[i].present && in[i].type != CLINFER_TYPE_F32) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: input %u is %s, expected f32", clinfer_node_label (node), i,
          clinfer_element_type_name (in[i].type));
      return FALSE;
    }
  out[0].type = CLINFER_TYPE_F32;
  out[0].shape = *x;
  if (x->rank == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: X is a scalar, expected at least one dim",
        clinfer_node_label (node));
    return FALSE;
  }
  for (guint i = 1; x->rank > 0 && i < node->n_inputs; i++)
    if (in[i].present && in[i].shape.rank >= 0
        && !check_ln_param (node, x, x->rank - 1, &in[i].shape,
            i == 1 ? "Scale" : "B", error))
      return FALSE;
  return TRUE;
}

static gboolean
eval_ln_std (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const LnStdData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t cols = xs->dims[xs->rank - 1];
  int64_t rows = cols ? clinfer_tensor_get_n_elements (in[0]) / cols : 0;
  const float *x = clinfer_tensor_get_const_data (in[0]);
  float *y = clinfer_tensor_get_data (out[0]);
  g_autofree double *cs = NULL, *cb = NULL;

  if ((cs = ln_columns (node, in[1], xs->dims + xs->rank - 1, 1, cols,
              error)) == NULL
      || (node->n_inputs > 2 && in[2] && (cb = ln_columns (node, in[2],
                  xs->dims + xs->rank - 1, 1, cols, error)) == NULL))
    return FALSE;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    double mean = 0, var = 0, den;
    for (int64_t i = 0; i < cols; i++)
      mean += xr[i];
    mean /= (double) cols;
    for (int64_t i = 0; i < cols; i++)
      var += (xr[i] - mean) * (xr[i] - mean);
    var /= (double) cols;
    den = sqrt (var * d->var_scale) + d->epsilon;
    for (int64_t i = 0; i < cols; i++)
      y[r * cols + i] = (float) (cs[i] * (xr[i] - mean) / den
          + (cb ? cb[i] : 0.));
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* LRN                                                               */

typedef struct {
  float alpha, beta, bias;
  int64_t size;
} LrnData;

static gboolean
prepare_lrn (ClinferNode *node, GError **error)
{
  g_autofree LrnData *d = g_new0 (LrnData, 1);

  if (!clinfer_node_attr_float (node, "alpha", 1e-4f, &d->alpha, error)
      || !clinfer_node_attr_float (node, "beta", 0.75f, &d->beta, error)
      || !clinfer_node_attr_float (node, "bias", 1.f, &d->bias, error)
      || !clinfer_node_attr_int (node, "size", 0, &d->size, error))
    return FALSE;
  if (d->size < 1 || d->size > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'size' is %" G_GINT64_FORMAT ", expected a positive "
        "window size (it is required)", clinfer_node_label (node), d->size);
    return FALSE;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_same_float (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, int min_rank, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_float (node, in, 0, error)
      || !require_rank (node, &in[0].shape, min_rank, "input", error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

static gboolean
infer_lrn (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  return infer_same_float (node, in, out, 2, error);
}

/* Sum of squares over a window of channels around each one. */
#define DEFINE_LRN(NAME, T)                                                  \
static void                                                                  \
NAME (const LrnData *d, const T *x, T *y, int64_t n, int64_t c, int64_t s)   \
{                                                                            \
  int64_t lo = (d->size - 1) / 2, hi = d->size - 1 - lo;                     \
  gboolean par_ = n * c * s > 16384;                                         \
  _Pragma ("omp parallel for collapse(2) schedule(static) if (par_)")        \
  for (int64_t i = 0; i < n; i++)                                            \
    for (int64_t j = 0; j < c; j++) {                                        \
      int64_t c0 = MAX (0, j - lo), c1 = MIN (c - 1, j + hi);                \
      for (int64_t k = 0; k < s; k++) {                                      \
        double sum = 0;                                                      \
        for (int64_t q = c0; q <= c1; q++) {                                 \
          double v = x[(i * c + q) * s + k];                                 \
          sum += v * v;                                                      \
        }                                                                    \
        y[(i * c + j) * s + k] = (T) (x[(i * c + j) * s + k]                 \
            / pow (d->bias + d->alpha / (double) d->size * sum, d->beta));   \
      }                                                                      \
    }                                                                        \
}

DEFINE_LRN (lrn_f32, float)
DEFINE_LRN (lrn_f64, double)

static gboolean
eval_lrn (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t s = 1;

  if (any_half (node, in, out))
    return clinfer_op_eval_via_f32 (node, in, out, eval_lrn, error);
  for (int i = 2; i < xs->rank; i++)
    s *= xs->dims[i];
  if (clinfer_tensor_get_element_type (in[0]) == CLINFER_TYPE_F64)
    lrn_f64 (node->op_data, clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), xs->dims[0], xs->dims[1], s);
  else
    lrn_f32 (node->op_data, clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), xs->dims[0], xs->dims[1], s);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* LpNormalization                                                   */

typedef struct {
  int64_t axis, p;
} LpData;

static gboolean
prepare_lp (ClinferNode *node, GError **error)
{
  g_autofree LpData *d = g_new0 (LpData, 1);

  if (!clinfer_node_attr_int (node, "axis", -1, &d->axis, error)
      || !clinfer_node_attr_int (node, "p", 2, &d->p, error))
    return FALSE;
  if (d->p != 1 && d->p != 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'p' is %" G_GINT64_FORMAT ", expected 1 or 2",
        clinfer_node_label (node), d->p);
    return FALSE;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_lp (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const LpData *d = node->op_data;
  int axis;

  if (!infer_same_float (node, in, out, 1, error))
    return FALSE;
  return in[0].shape.rank < 0 || clinfer_op_normalize_axis (node, d->axis,
      in[0].shape.rank, &axis, error);
}

#define DEFINE_LP(NAME, T)                                                   \
static void                                                                  \
NAME (const T *x, T *y, int64_t outer, int64_t n, int64_t inner, int64_t p)  \
{                                                                            \
  gboolean par_ = outer * n * inner > 32768;                                 \
  _Pragma ("omp parallel for collapse(2) schedule(static) if (par_)")        \
  for (int64_t o = 0; o < outer; o++)                                        \
    for (int64_t i = 0; i < inner; i++) {                                    \
      const T *xp = x + o * n * inner + i;                                   \
      T *yp = y + o * n * inner + i;                                         \
      double norm = 0;                                                       \
      for (int64_t k = 0; k < n; k++)                                        \
        norm += p == 1 ? fabs ((double) xp[k * inner])                       \
            : (double) xp[k * inner] * xp[k * inner];                        \
      if (p == 2)                                                            \
        norm = sqrt (norm);                                                  \
      for (int64_t k = 0; k < n; k++)                                        \
        yp[k * inner] = (T) (xp[k * inner] / norm);                          \
    }                                                                        \
}

DEFINE_LP (lp_f32, float)
DEFINE_LP (lp_f64, double)

static gboolean
eval_lp (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const LpData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t outer, n, inner;
  int axis;

  if (any_half (node, in, out))
    return clinfer_op_eval_via_f32 (node, in, out, eval_lp, error);
  if (!clinfer_op_normalize_axis (node, d->axis, xs->rank, &axis, error))
    return FALSE;
  clinfer_shape_split_axis (xs, axis, &outer, &n, &inner);
  if (clinfer_tensor_get_element_type (in[0]) == CLINFER_TYPE_F64)
    lp_f64 (clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), outer, n, inner, d->p);
  else
    lp_f32 (clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]), outer, n, inner, d->p);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* MeanVarianceNormalization: (x - mean) / (std + 1e-9) over axes     */

typedef struct {
  gsize n_axes;
  int64_t axes[CLINFER_MAX_RANK];
} MvnData;

static gboolean
prepare_mvn (ClinferNode *node, GError **error)
{
  g_autofree MvnData *d = g_new0 (MvnData, 1);
  const int64_t *axes;
  gsize n;

  if (!clinfer_node_attr_ints (node, "axes", &axes, &n, error))
    return FALSE;
  if (n > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %" G_GSIZE_FORMAT " axes given, at most %d are supported",
        clinfer_node_label (node), n, CLINFER_MAX_RANK);
    return FALSE;
  }
  if (!clinfer_node_get_attr (node, "axes")) {
    static const int64_t def[] = { 0, 2, 3 };
    axes = def;
    n = 3;
  }
  d->n_axes = n;
  memcpy (d->axes, axes, n * sizeof (int64_t));
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
mvn_mask (const ClinferNode *node, int rank, gboolean *mask, GError **error)
{
  const MvnData *d = node->op_data;

  memset (mask, 0, CLINFER_MAX_RANK * sizeof (gboolean));
  for (gsize i = 0; i < d->n_axes; i++) {
    int a;
    if (!clinfer_op_normalize_axis (node, d->axes[i], rank, &a, error))
      return FALSE;
    mask[a] = TRUE;
  }
  return TRUE;
}

static gboolean
infer_mvn (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  gboolean mask[CLINFER_MAX_RANK];

  if (!infer_same_float (node, in, out, 0, error))
    return FALSE;
  return in[0].shape.rank < 0 || mvn_mask (node, in[0].shape.rank, mask, error);
}

/* Group (index over the kept dims) of every element. */
static int64_t *
mvn_groups (const ClinferNode *node, const ClinferShape *xs,
    const gboolean *mask, int64_t n, int64_t *n_groups, GError **error)
{
  int64_t *g = try_alloc (node, n, sizeof (int64_t), error);

  *n_groups = 1;
  if (g == NULL)
    return NULL;
  for (int k = 0; k < xs->rank; k++)
    if (!mask[k])
      *n_groups *= xs->dims[k];
  for (int64_t i = 0; i < n; i++) {
    int64_t r = i, gi = 0, mul = 1;
    for (int k = xs->rank - 1; k >= 0; k--) {
      int64_t v = r % xs->dims[k];
      r /= xs->dims[k];
      if (!mask[k]) {
        gi += v * mul;
        mul *= xs->dims[k];
      }
    }
    g[i] = gi;
  }
  return g;
}

static gboolean
eval_mvn (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]), ng;
  gboolean mask[CLINFER_MAX_RANK];
  g_autofree double *x = NULL, *mean = NULL, *var = NULL, *cnt = NULL;
  g_autofree int64_t *grp = NULL;

  if (!mvn_mask (node, xs->rank, mask, error))
    return FALSE;
  if ((x = to_doubles (node, in[0], error)) == NULL
      || (grp = mvn_groups (node, xs, mask, n, &ng, error)) == NULL
      || (mean = try_alloc (node, ng, sizeof (double), error)) == NULL
      || (var = try_alloc (node, ng, sizeof (double), error)) == NULL
      || (cnt = try_alloc (node, ng, sizeof (double), error)) == NULL)
    return FALSE;
  for (int64_t i = 0; i < n; i++) {
    mean[grp[i]] += x[i];
    cnt[grp[i]] += 1;
  }
  for (int64_t gi = 0; gi < ng; gi++)
    mean[gi] /= MAX (cnt[gi], 1);
  for (int64_t i = 0; i < n; i++)
    var[grp[i]] += (x[i] - mean[grp[i]]) * (x[i] - mean[grp[i]]);
  for (int64_t gi = 0; gi < ng; gi++)
    var[gi] = sqrt (var[gi] / MAX (cnt[gi], 1)) + 1e-9;
  for (int64_t i = 0; i < n; i++)
    clinfer_op_store_double (out[0], i, (x[i] - mean[grp[i]]) / var[grp[i]]);
  return TRUE;
}

const ClinferOpDef clinfer_ops_norm[] = {
  { "BatchNormalization", "", 1, 0, 5, 5, 1, 5, 0, prepare_bn, g_free,
    infer_bn, eval_bn },
  { "InstanceNormalization", "", 1, 0, 3, 3, 1, 1, 0, prepare_eps, g_free,
    infer_instnorm, eval_instnorm },
  { "LayerNormalization", "", 17, 0, 2, 3, 1, 3, 0, prepare_ln, g_free,
    infer_ln, eval_ln },
  { "LayerNormStd", "com.clinfer", 1, 0, 2, 3, 1, 1, 0, prepare_ln_std, g_free,
    infer_ln_std, eval_ln_std },
  { "LRN", "", 1, 0, 1, 1, 1, 1, 0, prepare_lrn, g_free, infer_lrn, eval_lrn },
  { "LpNormalization", "", 1, 0, 1, 1, 1, 1, 0, prepare_lp, g_free, infer_lp,
    eval_lp },
  { "MeanVarianceNormalization", "", 1, 0, 1, 1, 1, 1, 0, prepare_mvn, g_free,
    infer_mvn, eval_mvn },
  { NULL }
};
