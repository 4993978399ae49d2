/* clinfer — index ops: GatherElements, GatherND, ScatterND, ScatterElements
 * (and legacy Scatter), OneHot, NonZero, TopK, CumSum, Trilu and Range. */
#include "ops/op.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV CLINFER_OP_SHAPE_NEEDS_VALUES

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static gboolean
check_numeric (const ClinferNode *node, ClinferElementType t, GError **error)
{
  if (!clinfer_op_type_is_numeric (t)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: element type %s is not supported (expected a numeric type)",
        clinfer_node_label (node), clinfer_element_type_name (t));
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_index_input (const ClinferNode *node, const ClinferValueInfo *in, guint i,
    const char *what, GError **error)
{
  return clinfer_op_require_input (node, in, i, error)
      && clinfer_op_check_int_input (node, in, i, what, error);
}

static inline int64_t
load_index (const ClinferTensor *t, int64_t i)
{
  gconstpointer p = clinfer_tensor_get_const_data (t);

  return clinfer_tensor_get_element_type (t) == CLINFER_TYPE_I32
      ? ((const int32_t *) p)[i] : ((const int64_t *) p)[i];
}

/* Normalises index @v against extent @dim; FALSE (naming the node) when out
 * of range. */
static gboolean
norm_index (const ClinferNode *node, int64_t v, int64_t dim, int64_t *out,
    GError **error)
{
  if (v < -dim || v >= dim) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: index %" G_GINT64_FORMAT " is out of range for a dimension of "
        "extent %" G_GINT64_FORMAT, clinfer_node_label (node), v, dim);
    return FALSE;
  }
  *out = v < 0 ? v + dim : v;
  return TRUE;
}

static float
half_load (ClinferElementType t, const guint8 *p)
{
  uint16_t h;

  memcpy (&h, p, 2);
  return t == CLINFER_TYPE_F16 ? clinfer_half_to_float (h) : clinfer_bfloat16_to_float (h);
}

static void
half_store (ClinferElementType t, guint8 *p, float v)
{
  uint16_t h = t == CLINFER_TYPE_F16 ? clinfer_float_to_half (v)
      : clinfer_float_to_bfloat16 (v);

  memcpy (p, &h, 2);
}

/* ---------------------------------------------------------------- */
/* GatherElements                                                    */

/* Indices and data have the same rank; indices may not exceed the data on
 * any dim but the axis. */
static gboolean
check_elements_shapes (const ClinferNode *node, const ClinferShape *ds,
    const ClinferShape *is, int axis, GError **error)
{
  if (is->rank != ds->rank || ds->rank < 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: indices have rank %d but the data has rank %d (both must match "
        "and be at least 1)",
        clinfer_node_label (node), is->rank, ds->rank);
    return FALSE;
  }
  for (int d = 0; d < ds->rank; d++)
    if (d != axis && is->dims[d] >= 0 && ds->dims[d] >= 0
        && is->dims[d] > ds->dims[d]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: indices extent %" G_GINT64_FORMAT " exceeds the data's %"
          G_GINT64_FORMAT " on dimension %d", clinfer_node_label (node),
          is->dims[d], ds->dims[d], d);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_gather_elements (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_index_input (node, in, 1, "indices", error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[1].shape;
  if (in[0].shape.rank < 0 || in[1].shape.rank < 0)
    return TRUE;
  return clinfer_op_axis_attr (node, 0, in[0].shape.rank, &axis, error)
      && check_elements_shapes (node, &in[0].shape, &in[1].shape, axis, error);
}

/* Element offset in the data of every index element (axis coordinate
 * replaced by the index); validates every index first. */
static int64_t *
elements_offsets (const ClinferNode *node, const ClinferShape *ds,
    const ClinferTensor *idx, int axis, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (idx);
  int64_t n = clinfer_tensor_get_n_elements (idx), dstr[CLINFER_MAX_RANK];
  int64_t *offs = g_new (int64_t, MAX (n, 1));

  clinfer_shape_elem_strides (ds, dstr);
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, off = 0, v;
    if (!norm_index (node, load_index (idx, i), ds->dims[axis], &v, error)) {
      g_free (offs);
      return NULL;
    }
    for (int d = is->rank - 1; d >= 0; d--) {
      int64_t c = rem % is->dims[d];
      rem /= is->dims[d];
      off += (d == axis ? v : c) * dstr[d];
    }
    offs[i] = off;
  }
  return offs;
}

static gboolean
eval_gather_elements (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ds = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[1]);
  g_autofree int64_t *offs = NULL;
  int axis;

  if (!clinfer_op_axis_attr (node, 0, ds->rank, &axis, error)
      || !check_elements_shapes (node, ds, clinfer_tensor_get_shape (in[1]), axis,
          error)
      || (offs = elements_offsets (node, ds, in[1], axis, error)) == NULL)
    return FALSE;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; i++)
    memcpy (dst + i * es, src + offs[i] * es, es);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Reductions shared by the scatter ops                              */

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } Reduction;

static gboolean
prepare_reduction (ClinferNode *node, GError **error)
{
  static const char *const names[] = { "none", "add", "mul", "max", "min" };
  const char *r;

  if (!clinfer_node_attr_string (node, "reduction", "none", &r, error))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (r, names[i]) == 0) {
      node->op_data = GINT_TO_POINTER ((int) i);
      return TRUE;
    }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: reduction '%s' is not supported (expected none, add, mul, max or "
      "min)", clinfer_node_label (node), r);
  return FALSE;
}

#define RED_CASE(T)                                                        \
  do {                                                                     \
    T a, b;                                                                \
    memcpy (&a, dst, sizeof (T));                                          \
    memcpy (&b, src, sizeof (T));                                          \
    a = r == RED_ADD ? (T) (a + b) : r == RED_MUL ? (T) (a * b)            \
        : r == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);                \
    memcpy (dst, &a, sizeof (T));                                          \
  } while (0)

static void
scatter_apply (ClinferElementType t, Reduction r, guint8 *dst,
    const guint8 *src, gsize es)
{
  if (r == RED_NONE) {
    memcpy (dst, src, es);
    return;
  }
  switch (t) {
    case CLINFER_TYPE_F32: RED_CASE (float); break;
    case CLINFER_TYPE_F64: RED_CASE (double); break;
    case CLINFER_TYPE_I8: RED_CASE (int8_t); break;
    case CLINFER_TYPE_U8: RED_CASE (uint8_t); break;
    case CLINFER_TYPE_I16: RED_CASE (int16_t); break;
    case CLINFER_TYPE_U16: RED_CASE (uint16_t); break;
    case CLINFER_TYPE_I32: RED_CASE (int32_t); break;
    case CLINFER_TYPE_U32: RED_CASE (uint32_t); break;
    case CLINFER_TYPE_I64: RED_CASE (int64_t); break;
    case CLINFER_TYPE_U64: RED_CASE (uint64_t); break;
    case CLINFER_TYPE_BOOL:
      *dst = r == RED_ADD || r == RED_MAX ? (*dst || *src) : (*dst && *src);
      break;
    case CLINFER_TYPE_F16:
    case CLINFER_TYPE_BF16: {
      float a = half_load (t, dst), b = half_load (t, src);
      a = r == RED_ADD ? a + b : r == RED_MUL ? a * b
          : r == RED_MAX ? fmaxf (a, b) : fminf (a, b);
      half_store (t, dst, a);
      break;
    }
    default:
      memcpy (dst, src, es);
      break;
  }
}

/* ---------------------------------------------------------------- */
/* ScatterElements / Scatter                                         */

/* Data, indices and updates of one type; the output is the data.
 * *known_ranks is FALSE while a rank is unknown (nothing more to check). */
static gboolean
infer_scatter_common (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, gboolean *known_ranks, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_index_input (node, in, 1, "indices", error)
      || !clinfer_op_require_input (node, in, 2, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  if (in[2].type != in[0].type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: updates are %s but the data is %s", clinfer_node_label (node),
        clinfer_element_type_name (in[2].type),
        clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  *known_ranks = in[0].shape.rank >= 0 && in[1].shape.rank >= 0;
  return TRUE;
}

static gboolean
infer_scatter_elements (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  gboolean known;
  int axis;

  if (!infer_scatter_common (node, in, out, &known, error))
    return FALSE;
  if (!known)
    return TRUE;
  if (in[2].shape.rank >= 0 && clinfer_shape_is_static (&in[1].shape)
      && clinfer_shape_is_static (&in[2].shape)
      && !clinfer_shape_equal (&in[1].shape, &in[2].shape)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: indices and updates must have the same shape",
        clinfer_node_label (node));
    return FALSE;
  }
  return clinfer_op_axis_attr (node, 0, in[0].shape.rank, &axis, error)
      && check_elements_shapes (node, &in[0].shape, &in[1].shape, axis, error);
}

static gboolean
eval_scatter_elements (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ds = clinfer_tensor_get_shape (in[0]);
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  gsize es = clinfer_element_type_size (t);
  const guint8 *upd = clinfer_tensor_get_const_data (in[2]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[1]);
  Reduction r = GPOINTER_TO_INT (node->op_data);
  g_autofree int64_t *offs = NULL;
  int axis;

  if (!clinfer_op_axis_attr (node, 0, ds->rank, &axis, error)
      || !check_elements_shapes (node, ds, clinfer_tensor_get_shape (in[1]), axis,
          error))
    return FALSE;
  if (!clinfer_shape_equal (clinfer_tensor_get_shape (in[1]),
          clinfer_tensor_get_shape (in[2]))) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: indices and updates must have the same shape",
        clinfer_node_label (node));
    return FALSE;
  }
  if ((offs = elements_offsets (node, ds, in[1], axis, error)) == NULL)
    return FALSE;
  memcpy (dst, clinfer_tensor_get_const_data (in[0]),
      clinfer_tensor_get_byte_size (in[0]));
  for (int64_t i = 0; i < n; i++)
    scatter_apply (t, r, dst + offs[i] * es, upd + i * es, es);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* GatherND / ScatterND                                              */

/* Offsets (in elements of the data) of every index tuple of @idx, whose
 * last dim indexes data dims [batch, batch + last). Batches advance by the
 * data's batch stride. */
static int64_t *
nd_offsets (const ClinferNode *node, const ClinferShape *ds,
    const ClinferTensor *idx, int batch, int64_t *n_tuples, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (idx);
  int last = (int) is->dims[is->rank - 1];
  int64_t dstr[CLINFER_MAX_RANK], n = 1, per_batch = 1, *offs;

  clinfer_shape_elem_strides (ds, dstr);
  for (int d = 0; d < is->rank - 1; d++)
    n *= is->dims[d];
  for (int d = batch; d < is->rank - 1; d++)
    per_batch *= is->dims[d];
  offs = g_new (int64_t, MAX (n, 1));
  for (int64_t i = 0; i < n; i++) {
    int64_t off = batch > 0 ? (i / per_batch) * dstr[batch - 1] : 0, v;
    for (int k = 0; k < last; k++) {
      if (!norm_index (node, load_index (idx, i * last + k), ds->dims[batch + k],
              &v, error)) {
        g_free (offs);
        return NULL;
      }
      off += v * dstr[batch + k];
    }
    offs[i] = off;
  }
  *n_tuples = n;
  return offs;
}

/* Output shape of GatherND (= updates shape of ScatterND). */
static gboolean
nd_shape (const ClinferNode *node, const ClinferShape *ds, const ClinferShape *is,
    int batch, ClinferShape *os, GError **error)
{
  int64_t last = is->rank > 0 ? is->dims[is->rank - 1] : -1;

  if (is->rank < 1 || batch < 0 || batch >= MIN (is->rank, ds->rank + 1)
      || (last >= 0 && last > ds->rank - batch)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: indices of shape rank %d (last dim %" G_GINT64_FORMAT ") do not "
        "fit data of rank %d with batch_dims %d", clinfer_node_label (node),
        is->rank, last, ds->rank, batch);
    return FALSE;
  }
  for (int d = 0; d < batch; d++)
    if (is->dims[d] >= 0 && ds->dims[d] >= 0 && is->dims[d] != ds->dims[d]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: batch dimension %d differs between data and indices",
          clinfer_node_label (node), d);
      return FALSE;
    }
  *os = clinfer_shape_unknown ();
  if (last < 0 || is->rank - 1 + ds->rank - batch - last > CLINFER_MAX_RANK)
    return TRUE;
  os->rank = 0;
  for (int d = 0; d < is->rank - 1; d++)
    os->dims[os->rank++] = is->dims[d];
  for (int d = batch + (int) last; d < ds->rank; d++)
    os->dims[os->rank++] = ds->dims[d];
  return TRUE;
}

static gboolean
infer_gather_nd (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  int64_t batch;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_index_input (node, in, 1, "indices", error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_node_attr_int (node, "batch_dims", 0, &batch, error))
    return FALSE;
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0 || in[1].shape.rank < 0)
    return TRUE;
  return nd_shape (node, &in[0].shape, &in[1].shape, (int) CLAMP (batch, -1, 64),
      &out[0].shape, error);
}

static gboolean
eval_gather_nd (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ds = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *is = clinfer_tensor_get_shape (in[1]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  g_autofree int64_t *offs = NULL;
  int64_t batch, n, slice = 1;
  ClinferShape os;

  if (!clinfer_node_attr_int (node, "batch_dims", 0, &batch, error)
      || !nd_shape (node, ds, is, (int) CLAMP (batch, -1, 64), &os, error)
      || (offs = nd_offsets (node, ds, in[1], (int) batch, &n, error)) == NULL)
    return FALSE;
  for (int d = (int) (batch + is->dims[is->rank - 1]); d < ds->rank; d++)
    slice *= ds->dims[d];
#pragma omp parallel for schedule(static) if (n * slice > 65536)
  for (int64_t i = 0; i < n; i++)
    memcpy (dst + i * slice * es, src + offs[i] * es, slice * es);
  return TRUE;
}

static gboolean
infer_scatter_nd (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  ClinferShape us;
  gboolean known;

  if (!infer_scatter_common (node, in, out, &known, error))
    return FALSE;
  if (!known)
    return TRUE;
  if (!nd_shape (node, &in[0].shape, &in[1].shape, 0, &us, error))
    return FALSE;
  /* The updates' shape, where it is known, as eval_scatter_nd requires. */
  if (us.rank >= 0 && in[2].present && in[2].shape.rank >= 0) {
    gboolean ok = us.rank == in[2].shape.rank;
    for (int d = 0; ok && d < us.rank; d++)
      ok = us.dims[d] < 0 || in[2].shape.dims[d] < 0
          || us.dims[d] == in[2].shape.dims[d];
    if (!ok) {
      g_autofree char *want = clinfer_shape_to_string (&us);
      g_autofree char *got = clinfer_shape_to_string (&in[2].shape);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: updates must have shape %s, not %s", clinfer_node_label (node),
          want, got);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
eval_scatter_nd (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ds = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *is = clinfer_tensor_get_shape (in[1]);
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  gsize es = clinfer_element_type_size (t);
  const guint8 *upd = clinfer_tensor_get_const_data (in[2]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  Reduction r = GPOINTER_TO_INT (node->op_data);
  g_autofree int64_t *offs = NULL;
  int64_t n, slice = 1;
  ClinferShape us;

  if (!nd_shape (node, ds, is, 0, &us, error))
    return FALSE;
  if (!clinfer_shape_equal (&us, clinfer_tensor_get_shape (in[2]))) {
    g_autofree char *want = clinfer_shape_to_string (&us);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: updates must have shape %s", clinfer_node_label (node), want);
    return FALSE;
  }
  if ((offs = nd_offsets (node, ds, in[1], 0, &n, error)) == NULL)
    return FALSE;
  for (int d = (int) is->dims[is->rank - 1]; d < ds->rank; d++)
    slice *= ds->dims[d];
  memcpy (dst, clinfer_tensor_get_const_data (in[0]),
      clinfer_tensor_get_byte_size (in[0]));
  for (int64_t i = 0; i < n; i++) {
    if (r == RED_NONE) {
      memcpy (dst + offs[i] * es, upd + i * slice * es, slice * es);
      continue;
    }
    for (int64_t j = 0; j < slice; j++)
      scatter_apply (t, r, dst + (offs[i] + j) * es, upd + (i * slice + j) * es, es);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* OneHot                                                            */

/* Element @i as an index; floats truncate (NaN and huge values map to an
 * out-of-range index instead of an undefined cast). */
static int64_t
as_index (const ClinferTensor *t, int64_t i)
{
  double v;

  if (!clinfer_element_type_is_float (clinfer_tensor_get_element_type (t)))
    return clinfer_tensor_get_as_int64 (t, i);
  v = clinfer_tensor_get_as_double (t, i);
  return isnan (v) ? G_MININT64 : (int64_t) CLAMP (v, -9.2e18, 9.2e18);
}

static gboolean
onehot_depth (const ClinferNode *node, const ClinferTensor *t, int64_t *depth,
    GError **error)
{
  if (clinfer_tensor_get_n_elements (t) != 1
      || clinfer_tensor_get_element_type (t) == CLINFER_TYPE_STRING
      || (*depth = as_index (t, 0)) < 0 || *depth > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: depth must be one non-negative number", clinfer_node_label (node));
    return FALSE;
  }
  return TRUE;
}

static gboolean
infer_onehot (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *is = &in[0].shape;
  int64_t depth = CLINFER_DIM_DYNAMIC;
  int axis;

  for (guint i = 0; i < 3; i++)
    if (!clinfer_op_require_input (node, in, i, error)
        || !clinfer_op_check_movable (node, in[i].type, error))
      return FALSE;
  if (in[0].type == CLINFER_TYPE_BOOL || in[1].type == CLINFER_TYPE_BOOL)
    return check_numeric (node, CLINFER_TYPE_BOOL, error);
  out[0].type = in[2].type;
  if (is->rank < 0)
    return TRUE;
  if (is->rank + 1 > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the output would exceed rank %d", clinfer_node_label (node),
        CLINFER_MAX_RANK);
    return FALSE;
  }
  if (!clinfer_op_axis_attr (node, -1, is->rank + 1, &axis, error)
      || (in[1].value && !onehot_depth (node, in[1].value, &depth, error)))
    return FALSE;
  out[0].shape.rank = is->rank + 1;
  for (int d = 0, k = 0; d < is->rank + 1; d++)
    out[0].shape.dims[d] = d == axis ? depth : is->dims[k++];
  return TRUE;
}

static gboolean
eval_onehot (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *os = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[2]));
  const guint8 *vals = clinfer_tensor_get_const_data (in[2]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t depth, outer, dim, inner, n = clinfer_tensor_get_n_elements (out[0]);
  int axis;

  if (!onehot_depth (node, in[1], &depth, error)
      || !clinfer_op_axis_attr (node, -1, os->rank, &axis, error))
    return FALSE;
  if (clinfer_tensor_get_n_elements (in[2]) != 2 || os->dims[axis] != depth) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: values must hold [off, on] and the output depth %" G_GINT64_FORMAT,
        clinfer_node_label (node), depth);
    return FALSE;
  }
  clinfer_shape_split_axis (os, axis, &outer, &dim, &inner);
  for (int64_t i = 0; i < n; i++)
    memcpy (dst + i * es, vals, es);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < inner; j++) {
      int64_t k = as_index (in[0], o * inner + j);
      if (k < 0 && node->opset >= 11)
        k += depth;
      if (k >= 0 && k < depth)
        memcpy (dst + ((o * depth + k) * inner + j) * es, vals + es, es);
    }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* NonZero                                                           */

static gboolean
elem_nonzero (const ClinferTensor *t, const guint8 *p, int64_t i, gsize es)
{
  if (clinfer_element_type_is_float (clinfer_tensor_get_element_type (t)))
    return clinfer_tensor_get_as_double (t, i) != 0.;
  for (gsize b = 0; b < es; b++)
    if (p[i * es + b])
      return TRUE;
  return FALSE;
}

static int64_t
count_nonzero (const ClinferTensor *t)
{
  int64_t n = clinfer_tensor_get_n_elements (t), c = 0;
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (t));
  const guint8 *p = clinfer_tensor_get_const_data (t);

  for (int64_t i = 0; i < n; i++)
    c += elem_nonzero (t, p, i, es);
  return c;
}

static gboolean
infer_nonzero (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = CLINFER_TYPE_I64;
  out[0].shape.rank = 2;
  out[0].shape.dims[0] = in[0].shape.rank < 0 ? CLINFER_DIM_DYNAMIC
      : MAX (in[0].shape.rank, 1);
  out[0].shape.dims[1] = in[0].value ? count_nonzero (in[0].value)
      : CLINFER_DIM_DYNAMIC;
  return TRUE;
}

static gboolean
eval_nonzero (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]), c = count_nonzero (in[0]), k = 0;
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *p = clinfer_tensor_get_const_data (in[0]);
  int64_t *dst = clinfer_tensor_get_data (out[0]);

  if (clinfer_tensor_get_shape (out[0])->dims[1] != c) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the output does not match the %" G_GINT64_FORMAT " non-zero "
        "elements", clinfer_node_label (node), c);
    return FALSE;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i;
    if (!elem_nonzero (in[0], p, i, es))
      continue;
    if (is->rank == 0)
      dst[k] = 0;
    for (int d = is->rank - 1; d >= 0; d--) {
      dst[d * c + k] = rem % is->dims[d];
      rem /= is->dims[d];
    }
    k++;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* TopK                                                              */

typedef struct {
  uint64_t key;
  int64_t idx;
} SortItem;

/* Order-preserving unsigned key of element @i of @t. */
static uint64_t
order_key (const ClinferTensor *t, int64_t i)
{
  const uint64_t sign = G_GUINT64_CONSTANT (1) << 63;
  gconstpointer p = clinfer_tensor_get_const_data (t);
  double d;
  uint64_t bits;

  switch (clinfer_tensor_get_element_type (t)) {
    case CLINFER_TYPE_I64: return (uint64_t) ((const int64_t *) p)[i] ^ sign;
    case CLINFER_TYPE_U64: return ((const uint64_t *) p)[i];
    case CLINFER_TYPE_U8: case CLINFER_TYPE_U16: case CLINFER_TYPE_U32:
    case CLINFER_TYPE_BOOL:
      return (uint64_t) clinfer_tensor_get_as_int64 (t, i);
    case CLINFER_TYPE_I8: case CLINFER_TYPE_I16: case CLINFER_TYPE_I32:
      return (uint64_t) clinfer_tensor_get_as_int64 (t, i) ^ sign;
    default:
      d = clinfer_tensor_get_as_double (t, i);
      if (d == 0.)
        d = 0.;              /* -0 ties with +0 */
      memcpy (&bits, &d, 8);
      return (bits & sign) ? ~bits : bits | sign;
  }
}

static int
sort_item_cmp (const void *a, const void *b)
{
  const SortItem *x = a, *y = b;

  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct {
  int64_t k;                 /* attribute k (TopK-1), else -1 */
  int64_t axis;
  gboolean largest;
} TopKData;

static gboolean
prepare_topk (ClinferNode *node, GError **error)
{
  TopKData d = { -1, -1, TRUE };
  int64_t largest = 1, sorted = 1;

  if (!clinfer_node_attr_int (node, "axis", -1, &d.axis, error)
      || (node->opset < 10 && !clinfer_node_attr_int (node, "k", -1, &d.k, error))
      || !clinfer_node_attr_int (node, "largest", 1, &largest, error)
      || !clinfer_node_attr_int (node, "sorted", 1, &sorted, error))
    return FALSE;
  if (node->opset < 10 && d.k < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute k is required and must be non-negative",
        clinfer_node_label (node));
    return FALSE;
  }
  d.largest = largest != 0;
  node->op_data = g_memdup2 (&d, sizeof (d));
  return TRUE;
}

/* K from the attribute or input 1; -1 when not known yet. */
static gboolean
topk_k (const ClinferNode *node, const ClinferTensor *kt, int64_t dim,
    int64_t *k, GError **error)
{
  const TopKData *d = node->op_data;

  *k = d->k;
  if (node->opset >= 10) {
    if (kt == NULL) {
      *k = -1;
      return TRUE;
    }
    if (clinfer_tensor_get_n_elements (kt) != 1) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: K must hold exactly one value", clinfer_node_label (node));
      return FALSE;
    }
    *k = clinfer_tensor_get_as_int64 (kt, 0);
  }
  if (*k < 0 || (dim >= 0 && *k > dim)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: K %" G_GINT64_FORMAT " is out of range for an axis of extent %"
        G_GINT64_FORMAT, clinfer_node_label (node), *k, dim);
    return FALSE;
  }
  return TRUE;
}

static gboolean
infer_topk (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const TopKData *d = node->op_data;
  int64_t k;
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error)
      || (node->opset >= 10 && !check_index_input (node, in, 1, "K", error))
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  if (node->n_outputs > 1)
    out[1].type = CLINFER_TYPE_I64;
  if (in[0].shape.rank < 0)
    return TRUE;
  if (in[0].shape.rank == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the input must have rank 1 or more", clinfer_node_label (node));
    return FALSE;
  }
  if (!clinfer_op_normalize_axis (node, d->axis, in[0].shape.rank, &axis, error)
      || !topk_k (node, node->opset >= 10 ? in[1].value : NULL,
          in[0].shape.dims[axis], &k, error))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++) {
    out[i].shape = in[0].shape;
    out[i].shape.dims[axis] = k;
  }
  return TRUE;
}

static gboolean
eval_topk (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const TopKData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *vals = clinfer_tensor_get_data (out[0]);
  int64_t *idxs = node->n_outputs > 1 ? clinfer_tensor_get_data (out[1]) : NULL;
  int64_t outer, dim, inner, k;
  int axis;

  if (!clinfer_op_normalize_axis (node, d->axis, xs->rank, &axis, error))
    return FALSE;
  clinfer_shape_split_axis (xs, axis, &outer, &dim, &inner);
  if (!topk_k (node, node->opset >= 10 ? in[1] : NULL, dim, &k, error))
    return FALSE;
  if (clinfer_tensor_get_shape (out[0])->dims[axis] != k) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the output does not hold K=%" G_GINT64_FORMAT " elements",
        clinfer_node_label (node), k);
    return FALSE;
  }
#pragma omp parallel for schedule(dynamic) if (outer * inner * dim > 65536)
  for (int64_t s = 0; s < outer * inner; s++) {
    int64_t o = s / inner, j = s % inner;
    SortItem *items = g_new (SortItem, MAX (dim, 1));
    for (int64_t i = 0; i < dim; i++) {
      uint64_t key = order_key (in[0], (o * dim + i) * inner + j);
      items[i].key = d->largest ? ~key : key;
      items[i].idx = i;
    }
    qsort (items, dim, sizeof (SortItem), sort_item_cmp);
    for (int64_t i = 0; i < k; i++) {
      int64_t at = (o * k + i) * inner + j;
      memcpy (vals + at * es, src + ((o * dim + items[i].idx) * inner + j) * es, es);
      if (idxs)
        idxs[at] = items[i].idx;
    }
    g_free (items);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* CumSum                                                            */

typedef struct {
  gboolean exclusive, reverse;
} CumSumData;

static gboolean
prepare_cumsum (ClinferNode *node, GError **error)
{
  int64_t ex, rev;
  CumSumData d;

  if (!clinfer_node_attr_int (node, "exclusive", 0, &ex, error)
      || !clinfer_node_attr_int (node, "reverse", 0, &rev, error))
    return FALSE;
  d.exclusive = ex != 0;
  d.reverse = rev != 0;
  node->op_data = g_memdup2 (&d, sizeof (d));
  return TRUE;
}

static gboolean
infer_cumsum (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !check_index_input (node, in, 1, "axis", error)
      || !check_numeric (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

#define CUMSUM_LOOP(T, ACC, LOAD, STORE)                                    \
  do {                                                                     \
    _Pragma ("omp parallel for schedule(static) if (outer * inner * dim > 65536)") \
    for (int64_t s = 0; s < outer * inner; s++) {                          \
      int64_t o = s / inner, j = s % inner;                                \
      ACC acc = 0;                                                         \
      for (int64_t q = 0; q < dim; q++) {                                  \
        int64_t i = d->reverse ? dim - 1 - q : q;                          \
        int64_t at = (o * dim + i) * inner + j;                            \
        ACC v = LOAD (at);                                                 \
        if (d->exclusive) {                                                \
          STORE (at, acc);                                                 \
          acc += v;                                                        \
        } else {                                                           \
          acc += v;                                                        \
          STORE (at, acc);                                                 \
        }                                                                  \
      }                                                                    \
    }                                                                      \
  } while (0)

#define LOAD_NATIVE(at) px[at]
#define STORE_NATIVE(at, v) (py[at] = (v))
#define LOAD_HALF(at) half_load (t, px + (at) * 2)
#define STORE_HALF(at, v) half_store (t, py + (at) * 2, (v))

static gboolean
eval_cumsum (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const CumSumData *d = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  int64_t outer, dim, inner;
  int axis;

  if (clinfer_tensor_get_n_elements (in[1]) != 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: axis must be a scalar", clinfer_node_label (node));
    return FALSE;
  }
  if (!clinfer_op_normalize_axis (node, load_index (in[1], 0), xs->rank, &axis,
          error))
    return FALSE;
  clinfer_shape_split_axis (xs, axis, &outer, &dim, &inner);
#define NATIVE(T)                                                           \
  do {                                                                     \
    const T *px = clinfer_tensor_get_const_data (in[0]);                   \
    T *py = clinfer_tensor_get_data (out[0]);                              \
    CUMSUM_LOOP (T, T, LOAD_NATIVE, STORE_NATIVE);                         \
  } while (0)
  switch (t) {
    case CLINFER_TYPE_F32: NATIVE (float); break;
    case CLINFER_TYPE_F64: NATIVE (double); break;
    case CLINFER_TYPE_I8: NATIVE (int8_t); break;
    case CLINFER_TYPE_U8: NATIVE (uint8_t); break;
    case CLINFER_TYPE_I16: NATIVE (int16_t); break;
    case CLINFER_TYPE_U16: NATIVE (uint16_t); break;
    case CLINFER_TYPE_I32: NATIVE (int32_t); break;
    case CLINFER_TYPE_U32: NATIVE (uint32_t); break;
    case CLINFER_TYPE_I64: NATIVE (int64_t); break;
    case CLINFER_TYPE_U64: NATIVE (uint64_t); break;
    case CLINFER_TYPE_F16:
    case CLINFER_TYPE_BF16: {
      const guint8 *px = clinfer_tensor_get_const_data (in[0]);
      guint8 *py = clinfer_tensor_get_data (out[0]);
      CUMSUM_LOOP (float, float, LOAD_HALF, STORE_HALF);
      break;
    }
    default:
      return check_numeric (node, t, error);
  }
#undef NATIVE
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Trilu                                                             */

static gboolean
infer_trilu (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || (node->n_inputs > 1 && in[1].present
          && !check_index_input (node, in, 1, "k", error)))
    return FALSE;
  if (in[0].shape.rank >= 0 && in[0].shape.rank < 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: expected an input of rank 2 or more, got %d",
        clinfer_node_label (node), in[0].shape.rank);
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

static gboolean
eval_trilu (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t upper, k = 0, rows = xs->dims[xs->rank - 2], cols = xs->dims[xs->rank - 1];
  int64_t mats = clinfer_tensor_get_n_elements (in[0]) / MAX (rows * cols, 1);

  if (!clinfer_node_attr_int (node, "upper", 1, &upper, error))
    return FALSE;
  if (node->n_inputs > 1 && in[1]) {
    if (clinfer_tensor_get_n_elements (in[1]) != 1) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: k must be a scalar", clinfer_node_label (node));
      return FALSE;
    }
    k = load_index (in[1], 0);
  }
  k = CLAMP (k, -rows - 1, cols + 1);
  memset (dst, 0, clinfer_tensor_get_byte_size (out[0]));
  for (int64_t m = 0; m < mats * rows; m++) {
    int64_t i = m % rows, lo, hi;
    /* Kept columns: j - i >= k (upper) or j - i <= k (lower). */
    lo = upper ? MAX (i + k, 0) : 0;
    hi = upper ? cols : MIN (i + k + 1, cols);
    if (hi > lo)
      memcpy (dst + (m * cols + lo) * es, src + (m * cols + lo) * es,
          (hi - lo) * es);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Range                                                             */

static gboolean
range_count (const ClinferNode *node, const ClinferTensor *const *v,
    int64_t *n, GError **error)
{
  ClinferElementType t = clinfer_tensor_get_element_type (v[0]);
  double c;

  for (int i = 0; i < 3; i++)
    if (clinfer_tensor_get_n_elements (v[i]) != 1) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: start, limit and delta must be scalars", clinfer_node_label (node));
      return FALSE;
    }
  if (clinfer_element_type_is_float (t)) {
    double s = clinfer_tensor_get_as_double (v[0], 0);
    double l = clinfer_tensor_get_as_double (v[1], 0);
    double d = clinfer_tensor_get_as_double (v[2], 0);
    if (t == CLINFER_TYPE_F32)
      c = ceil ((double) ((float) l - (float) s) / d);
    else
      c = ceil ((l - s) / d);
  } else {
    int64_t s = clinfer_tensor_get_as_int64 (v[0], 0);
    int64_t l = clinfer_tensor_get_as_int64 (v[1], 0);
    int64_t d = clinfer_tensor_get_as_int64 (v[2], 0);
    c = d == 0 ? NAN : ceil (((double) l - (double) s) / (double) d);
  }
  if (isnan (c) || isinf (c) || c > (double) G_MAXINT32 * 64) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the range length is not finite or too large (delta zero or tiny)",
        clinfer_node_label (node));
    return FALSE;
  }
  *n = c < 0 ? 0 : (int64_t) c;
  return TRUE;
}

static gboolean
infer_range (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferTensor *v[3];
  int64_t n = CLINFER_DIM_DYNAMIC;

  for (guint i = 0; i < 3; i++) {
    if (!clinfer_op_require_input (node, in, i, error)
        || !check_numeric (node, in[i].type, error))
      return FALSE;
    if (in[i].type != in[0].type) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: start, limit and delta must have the same type",
          clinfer_node_label (node));
      return FALSE;
    }
    v[i] = in[i].value;
  }
  if (v[0] && v[1] && v[2] && !range_count (node, v, &n, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape.rank = 1;
  out[0].shape.dims[0] = n;
  return TRUE;
}

#define RANGE_FILL(T, GET)                                                  \
  do {                                                                     \
    T s = (T) GET (in[0], 0), dl = (T) GET (in[2], 0);                     \
    T *p = clinfer_tensor_get_data (out[0]);                               \
    for (int64_t i = 0; i < n; i++)                                        \
      p[i] = (T) (s + (T) i * dl);                                         \
  } while (0)

static gboolean
eval_range (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferTensor *v[3] = { in[0], in[1], in[2] };
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  int64_t n;

  if (!range_count (node, v, &n, error))
    return FALSE;
  if (clinfer_tensor_get_n_elements (out[0]) != n) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the output does not hold the %" G_GINT64_FORMAT " range elements",
        clinfer_node_label (node), n);
    return FALSE;
  }
  switch (t) {
    case CLINFER_TYPE_F32: RANGE_FILL (float, clinfer_tensor_get_as_double); break;
    case CLINFER_TYPE_F64: RANGE_FILL (double, clinfer_tensor_get_as_double); break;
    case CLINFER_TYPE_I8: RANGE_FILL (int8_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_U8: RANGE_FILL (uint8_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_I16: RANGE_FILL (int16_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_U16: RANGE_FILL (uint16_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_I32: RANGE_FILL (int32_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_U32: RANGE_FILL (uint32_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_I64: RANGE_FILL (int64_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_U64: RANGE_FILL (uint64_t, clinfer_tensor_get_as_int64); break;
    case CLINFER_TYPE_F16:
    case CLINFER_TYPE_BF16: {
      float s = (float) clinfer_tensor_get_as_double (in[0], 0);
      float dl = (float) clinfer_tensor_get_as_double (in[2], 0);
      guint8 *p = clinfer_tensor_get_data (out[0]);
      for (int64_t i = 0; i < n; i++)
        half_store (t, p + i * 2, s + (float) i * dl);
      break;
    }
    default:
      return check_numeric (node, t, error);
  }
  return TRUE;
}

const ClinferOpDef clinfer_ops_index[] = {
  { "GatherElements", "", 11, 0, 2, 2, 1, 1, 0, NULL, NULL,
    infer_gather_elements, eval_gather_elements },
  { "GatherND", "", 11, 0, 2, 2, 1, 1, 0, NULL, NULL, infer_gather_nd,
    eval_gather_nd },
  { "ScatterND", "", 11, 0, 3, 3, 1, 1, 0, prepare_reduction, NULL,
    infer_scatter_nd, eval_scatter_nd },
  { "ScatterElements", "", 11, 0, 3, 3, 1, 1, 0, prepare_reduction, NULL,
    infer_scatter_elements, eval_scatter_elements },
  { "Scatter", "", 9, 10, 3, 3, 1, 1, 0, prepare_reduction, NULL,
    infer_scatter_elements, eval_scatter_elements },
  { "OneHot", "", 9, 0, 3, 3, 1, 1, NV, NULL, NULL, infer_onehot, eval_onehot },
  { "NonZero", "", 9, 0, 1, 1, 1, 1, NV, NULL, NULL, infer_nonzero, eval_nonzero },
  { "TopK", "", 10, 0, 2, 2, 1, 2, NV, prepare_topk, g_free, infer_topk, eval_topk },
  { "TopK", "", 1, 9, 1, 1, 1, 2, 0, prepare_topk, g_free, infer_topk, eval_topk },
  { "CumSum", "", 11, 0, 2, 2, 1, 1, 0, prepare_cumsum, g_free, infer_cumsum,
    eval_cumsum },
  { "Trilu", "", 14, 0, 1, 2, 1, 1, 0, NULL, NULL, infer_trilu, eval_trilu },
  { "Range", "", 11, 0, 3, 3, 1, 1, NV, NULL, NULL, infer_range, eval_range },
  { NULL }
};
