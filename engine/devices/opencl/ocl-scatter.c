/* clinfer — OpenCL index-tuple and scatter ops (kernels/scatter.cl):
 * GatherND, ScatterND and ScatterElements / Scatter with every reduction
 * (none, add, mul, max, min). A scatter's output starts as a device copy
 * of the data. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

static void
dims8 (const ClinferShape *s, int *d)
{
  for (int i = 0; i < 8; i++)
    d[i] = i < s->rank ? (int) s->dims[i] : 1;
}

/* Row-major element strides of @s into s[0..8). */
static void
strides8 (const ClinferShape *s, int *st)
{
  int64_t acc = 1;

  for (int i = 7; i >= 0; i--) {
    st[i] = i < s->rank ? (int) acc : 0;
    if (i < s->rank)
      acc *= s->dims[i];
  }
}

static const char *
raw_type (ClinferElementType t)
{
  switch (clinfer_element_type_size (t)) {
    case 1: return "uchar";
    case 2: return "ushort";
    case 4: return "uint";
    default: return "ulong";
  }
}

/* Reduction code of the kernels (0 none, 1 add, 2 mul, 3 max, 4 min), or
 * -1 with @error. */
static int
reduction_code (const ClinferNode *node, GError **error)
{
  static const char *const names[] = { "none", "add", "mul", "max", "min" };
  const char *r = "none";

  if (!clinfer_node_attr_string (node, "reduction", "none", &r, error))
    return -1;
  for (int i = 0; i < (int) G_N_ELEMENTS (names); i++)
    if (strcmp (r, names[i]) == 0)
      return i;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: reduction '%s' is not supported (expected none, add, mul, max or "
      "min)", clinfer_node_label (node), r);
  return -1;
}

static char *
scatter_options (ClinferElementType t, ClinferElementType it, int red)
{
  const char *idx = it == CLINFER_TYPE_I32 ? "int" : "long";

  if (red == 0)
    return g_strdup_printf ("-DIDX_T=%s -DSC_T=%s", idx, raw_type (t));
  if (t == CLINFER_TYPE_F16)
    return g_strdup_printf ("-DIDX_T=%s -DSC_HALF -DRED=%d", idx, red);
  return g_strdup_printf ("-DIDX_T=%s -DSC_T=%s -DRED=%d%s", idx,
      clinfer_ocl_c_type (t), red, t == CLINFER_TYPE_BOOL ? " -DSC_BOOL" : "");
}

/* Types (data input 0, indices input 1) and ranks every family here
 * handles; @scatter: reductions need typed arithmetic. */
static gboolean
index_supports (const ClinferNode *node, gboolean scatter, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  ClinferElementType it = clinfer_ocl_in_type (node, 1);
  const char *red = "none";

  if (it != CLINFER_TYPE_I32 && it != CLINFER_TYPE_I64) {
    *reason = "indices are not i32 or i64";
    return FALSE;
  }
  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  if (clinfer_node_input_desc (node, 0)->shape.rank > 8
      || clinfer_node_input_desc (node, 1)->shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  if (scatter && clinfer_node_attr_string (node, "reduction", "none", &red, NULL)
      && strcmp (red, "none") != 0 && (t == CLINFER_TYPE_F64
          || t == CLINFER_TYPE_BF16 || clinfer_ocl_c_type (t) == NULL)) {
    *reason = "reduction on f64 or bf16 data";
    return FALSE;
  }
  return TRUE;
}

/* ---- GatherND ---- */

gboolean
clinfer_ocl_gather_nd_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  return index_supports (node, FALSE, reason);
}

gboolean
clinfer_ocl_gather_nd_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *ds = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *is = clinfer_ocl_in_shape (b, 1);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *opts = scatter_options (t, clinfer_ocl_in_type (node, 1), 0);
  int64_t batch = 0, last, per_batch = 1, slice = 1;
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  int d[8], st[8];
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "batch_dims", 0, &batch, error))
    return FALSE;
  last = is->rank > 0 ? is->dims[is->rank - 1] : -1;
  if (last < 0 || batch < 0 || batch + last > ds->rank || batch >= is->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: batch_dims %" G_GINT64_FORMAT " and index tuples of %"
        G_GINT64_FORMAT " do not fit data of rank %d",
        clinfer_node_label (node), batch, last, ds->rank);
    return FALSE;
  }
  for (int k = (int) batch; k < is->rank - 1; k++)
    per_batch *= is->dims[k];
  for (int k = (int) (batch + last); k < ds->rank; k++)
    slice *= ds->dims[k];
  dims8 (ds, d);
  strides8 (ds, st);
  if (!(l = clinfer_ocl_launch_new (b, "scatter", opts, "gather_nd", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) MAX (slice, 1));
  clinfer_ocl_arg_int (l, (int) last);
  clinfer_ocl_arg_int (l, (int) batch);
  clinfer_ocl_arg_int (l, (int) MAX (per_batch, 1));
  clinfer_ocl_arg_int (l, batch > 0 ? st[batch - 1] : 0);
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, st, 8);
  clinfer_ocl_launch_set_global (l, 1, slice > 0 ? n : 0, 1, 1);
  return TRUE;
}

/* ---- ScatterND ---- */

gboolean
clinfer_ocl_scatter_nd_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  return index_supports (node, TRUE, reason);
}

/* The output starts as the data. */
static void
copy_data (OclBuilder *b, const ClinferNode *node)
{
  const ClinferShape *ds = clinfer_ocl_in_shape (b, 0);

  clinfer_ocl_copy_new (b, 0, 0, 0, 0, clinfer_shape_n_elements (ds)
      * clinfer_element_type_size (clinfer_ocl_in_type (node, 0)));
}

gboolean
clinfer_ocl_scatter_nd_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *ds = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *is = clinfer_ocl_in_shape (b, 1);
  int red = reduction_code (node, error);
  g_autofree char *opts = NULL;
  int64_t last = is->rank > 0 ? is->dims[is->rank - 1] : -1, tuples = 1,
      slice = 1;
  int d[8], st[8];
  OclLaunch *l;

  if (red < 0)
    return FALSE;
  if (last < 0 || last > ds->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: index tuples of %" G_GINT64_FORMAT " do not fit data of rank %d",
        clinfer_node_label (node), last, ds->rank);
    return FALSE;
  }
  for (int k = 0; k < is->rank - 1; k++)
    tuples *= is->dims[k];
  for (int k = (int) last; k < ds->rank; k++)
    slice *= ds->dims[k];
  if (clinfer_shape_n_elements (clinfer_ocl_in_shape (b, 2)) != tuples * slice) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: updates hold %" G_GINT64_FORMAT " elements, expected %"
        G_GINT64_FORMAT " (tuples x slice)", clinfer_node_label (node),
        clinfer_shape_n_elements (clinfer_ocl_in_shape (b, 2)), tuples * slice);
    return FALSE;
  }
  opts = scatter_options (clinfer_ocl_in_type (node, 0),
      clinfer_ocl_in_type (node, 1), red);
  dims8 (ds, d);
  strides8 (ds, st);
  copy_data (b, node);
  l = clinfer_ocl_launch_new (b, "scatter", opts,
      red ? "scatter_nd_reduce" : "scatter_nd", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) (red ? tuples : tuples * slice));
  clinfer_ocl_arg_int (l, (int) MAX (slice, 1));
  clinfer_ocl_arg_int (l, (int) last);
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, st, 8);
  clinfer_ocl_launch_set_global (l, 1, tuples == 0 ? 0
      : red ? slice : tuples * slice, 1, 1);
  return TRUE;
}

/* ---- ScatterElements, Scatter ---- */

gboolean
clinfer_ocl_scatter_elements_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  return index_supports (node, TRUE, reason);
}

gboolean
clinfer_ocl_scatter_elements_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *ds = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *is = clinfer_ocl_in_shape (b, 1);
  int red = reduction_code (node, error);
  g_autofree char *opts = NULL;
  int64_t axis = 0, n_idx = clinfer_shape_n_elements (is);
  int ax, d[8], st[8];
  OclLaunch *l;

  if (red < 0 || !clinfer_node_attr_int (node, "axis", 0, &axis, error)
      || !clinfer_op_normalize_axis (node, axis, ds->rank, &ax, error))
    return FALSE;
  if (is->rank != ds->rank || !clinfer_shape_equal (is,
          clinfer_ocl_in_shape (b, 2))) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: indices have rank %d but the data has rank %d, or the updates "
        "have another shape than the indices", clinfer_node_label (node),
        is->rank, ds->rank);
    return FALSE;
  }
  opts = scatter_options (clinfer_ocl_in_type (node, 0),
      clinfer_ocl_in_type (node, 1), red);
  dims8 (is, d);
  strides8 (ds, st);
  copy_data (b, node);
  if (!(l = clinfer_ocl_launch_new (b, "scatter", opts, "scatter_elements",
              error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, n_idx ? (int) (n_idx / is->dims[ax]) : 0);
  clinfer_ocl_arg_int (l, is->rank);
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, st, 8);
  clinfer_ocl_arg_int (l, ax);
  clinfer_ocl_arg_int (l, (int) ds->dims[ax]);
  clinfer_ocl_launch_set_global (l, 1, n_idx ? n_idx / is->dims[ax] : 0, 1, 1);
  return TRUE;
}
