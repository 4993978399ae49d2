/* clinfer — OpenCL selection ops (kernels/select.cl): NonZero and Compress,
 * whose output extent depends on the input values (counted on the device,
 * read back as one int before the output is written: count_launches),
 * TopK, and CumSum along an axis that is not a constant. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

#define SELECT_CHUNK 256     /* as kernels/select.cl */

static void
dims8 (const ClinferShape *s, int *d)
{
  for (int i = 0; i < 8; i++)
    d[i] = i < s->rank ? (int) s->dims[i] : 1;
}

/* -DELEM=... plus, for float types, the mask that makes -0.0 a zero. */
static char *
nonzero_options (ClinferElementType t)
{
  const char *mask = "";

  switch (t) {
    case CLINFER_TYPE_F32: mask = " -DNZ_MASK=0x7fffffffu"; break;
    case CLINFER_TYPE_F16:
    case CLINFER_TYPE_BF16: mask = " -DNZ_MASK=0x7fff"; break;
    case CLINFER_TYPE_F64: mask = " -DNZ_MASK=0x7fffffffffffffffUL"; break;
    default: break;
  }
  return g_strdup_printf ("%s%s", clinfer_ocl_elem_options (t), mask);
}

static gboolean
movable (ClinferElementType t, const char **reason)
{
  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  return TRUE;
}

/* Appends the count launches over input @port (@n elements, type @t):
 * scratch 0 = [total, chunk offsets...]. Returns the number of chunks. */
static int
add_count (OclBuilder *b, guint port, ClinferElementType t, int64_t n,
    GError **error)
{
  g_autofree char *opts = nonzero_options (t);
  int chunks = (int) ((n + SELECT_CHUNK - 1) / SELECT_CHUNK);
  guint counts = clinfer_ocl_scratch_new (b, sizeof (cl_int) * (1 + chunks));
  OclLaunch *l;

  /* The executor reads the extent from scratch buffer 0. */
  if (counts != 0 || n > CLINFER_OCL_MAX_ELEMENTS) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: input %u is too large for the OpenCL kernels or the step has "
        "other scratch buffers", clinfer_node_label (b->step->node), port);
    return -1;
  }
  if (!(l = clinfer_ocl_launch_new (b, "select", opts, "select_count", error)))
    return -1;
  clinfer_ocl_arg_input (l, port);
  clinfer_ocl_arg_scratch (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_launch_set_global (l, 1, chunks, 1, 1);
  if (!(l = clinfer_ocl_launch_new (b, "select", opts, "select_scan", error)))
    return -1;
  clinfer_ocl_arg_scratch (l, 0);
  clinfer_ocl_arg_int (l, chunks);
  clinfer_ocl_launch_set_global (l, 1, 1, 1, 1);
  return chunks;
}

/* The launches so far count the extent when some output dim is known only
 * from the values (else the kernels read the count on the device). */
static void
mark_count (OclBuilder *b, const ClinferNode *node)
{
  if (!clinfer_shape_is_static (&node->outputs[0].shape))
    b->impl->count_launches = b->impl->launches->len;
}

/* ---- NonZero ---- */

gboolean
clinfer_ocl_nonzero_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  if (clinfer_node_input_desc (node, 0)->shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  return movable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_nonzero_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *opts = nonzero_options (t);
  int64_t n = clinfer_shape_n_elements (in);
  int d[8], chunks;
  OclLaunch *l;

  /* The scratch buffers are never empty (clinfer_ocl_scratch_new). */
  if ((chunks = add_count (b, 0, t, n, error)) < 0)
    return FALSE;
  mark_count (b, node);
  if (!(l = clinfer_ocl_launch_new (b, "select", opts, "nonzero_write", error)))
    return FALSE;
  dims8 (in, d);
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_scratch (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, in->rank);
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_launch_set_global (l, 1, chunks, 1, 1);
  return TRUE;
}

/* ---- Compress ---- */

gboolean
clinfer_ocl_compress_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType ct = clinfer_ocl_in_type (node, 1);

  if (clinfer_element_type_is_float (ct) || !movable (ct, reason)) {
    *reason = "the condition is not bool or integer";
    return FALSE;
  }
  return movable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_compress_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  int64_t a = G_MININT64, n = clinfer_shape_n_elements (in), outer = 1, dim,
      inner = 1, m;
  guint pos;
  int axis = 0;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", G_MININT64, &a, error))
    return FALSE;
  if (a != G_MININT64) {
    if (!clinfer_op_normalize_axis (node, a, in->rank, &axis, error))
      return FALSE;
    clinfer_ocl_split_axis (in, axis, &outer, &dim, &inner);
  } else
    dim = n;
  m = MIN (dim, clinfer_shape_n_elements (clinfer_ocl_in_shape (b, 1)));
  if (add_count (b, 1, clinfer_ocl_in_type (node, 1), m, error) < 0)
    return FALSE;
  mark_count (b, node);
  pos = clinfer_ocl_scratch_new (b, sizeof (cl_int) * MAX (m, 1));
  l = clinfer_ocl_launch_new (b, "select",
      clinfer_ocl_elem_options (clinfer_ocl_in_type (node, 1)),
      "select_positions", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_scratch (l, 0);
  clinfer_ocl_arg_scratch (l, pos);
  clinfer_ocl_arg_int (l, (int) m);
  clinfer_ocl_launch_set_global (l, 1, (m + SELECT_CHUNK - 1) / SELECT_CHUNK,
      1, 1);
  l = clinfer_ocl_launch_new (b, "select", clinfer_ocl_elem_options (t),
      "compress_copy", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_scratch (l, pos);
  clinfer_ocl_arg_scratch (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) dim);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, (int) m);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- TopK ---- */

static char *
topk_options (ClinferElementType t)
{
  const char *key;

  switch (t) {
    case CLINFER_TYPE_F32: key = " -DTK_FLOAT"; break;
    case CLINFER_TYPE_F16: key = " -DTK_HALF"; break;
    case CLINFER_TYPE_I8: key = " -DTK_SIGNED=char"; break;
    case CLINFER_TYPE_I16: key = " -DTK_SIGNED=short"; break;
    case CLINFER_TYPE_I32: key = " -DTK_SIGNED=int"; break;
    case CLINFER_TYPE_I64: key = " -DTK_SIGNED=long"; break;
    default: key = ""; break;
  }
  return g_strdup_printf ("%s%s", clinfer_ocl_elem_options (t), key);
}

gboolean
clinfer_ocl_topk_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (node->opset >= 10 && !clinfer_ocl_input_known (node, 1)) {
    *reason = "K is not a constant";
    return FALSE;
  }
  if (t == CLINFER_TYPE_F64 || t == CLINFER_TYPE_BF16
      || clinfer_ocl_c_type (t) == NULL) {
    *reason = "element type not supported by the OpenCL TopK kernel";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_topk_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *opts = topk_options (t);
  int64_t axis = -1, largest = 1, outer, dim, inner, k;
  gboolean has_idx = node->n_outputs > 1;
  int ax;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", -1, &axis, error)
      || !clinfer_node_attr_int (node, "largest", 1, &largest, error)
      || !clinfer_op_normalize_axis (node, axis, in->rank, &ax, error))
    return FALSE;
  clinfer_ocl_split_axis (in, ax, &outer, &dim, &inner);
  /* K is the output's extent on the axis (inferred from the attribute or
   * the value of input 1). */
  k = node->outputs[0].shape.dims[ax];
  if (k < 0 || k > dim) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "TopK: K %" G_GINT64_FORMAT " is not known or exceeds the axis extent %"
        G_GINT64_FORMAT, k, dim);
    return FALSE;
  }
  if (!(l = clinfer_ocl_launch_new (b, "select", opts, "topk_rank", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  if (has_idx)
    clinfer_ocl_arg_output (l, 1);
  else
    clinfer_ocl_arg_scratch (l, clinfer_ocl_scratch_new (b, sizeof (cl_long)));
  clinfer_ocl_arg_int (l, (int) (outer * inner));
  clinfer_ocl_arg_int (l, (int) dim);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, (int) k);
  clinfer_ocl_arg_int (l, largest != 0);
  clinfer_ocl_arg_int (l, has_idx);
  clinfer_ocl_launch_set_global (l, 1, outer * inner * dim, 1, 1);
  return TRUE;
}

/* ---- CumSum with the axis read on the device ---- */

gboolean
clinfer_ocl_cumsum_axis_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  ClinferElementType at = clinfer_ocl_in_type (node, 1);

  if (at != CLINFER_TYPE_I32 && at != CLINFER_TYPE_I64) {
    *reason = "axis is not i32 or i64";
    return FALSE;
  }
  if (clinfer_node_input_desc (node, 0)->shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  if (clinfer_ocl_c_type (t) == NULL || t == CLINFER_TYPE_BOOL) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  if (!clinfer_ocl_fp64_ok (dev, t, reason))
    return FALSE;
  return TRUE;
}

gboolean
clinfer_ocl_cumsum_axis_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  const char *ct = clinfer_ocl_c_type (t);
  g_autofree char *opts = g_strdup_printf ("%s -DCS_T=%s -DCS_ACC=%s%s%s "
      "-DAXIS_T=%s", clinfer_ocl_elem_options (t), ct,
      t == CLINFER_TYPE_F16 ? "float" : ct,
      t == CLINFER_TYPE_F16 ? " -DCS_HALF" : "",
      t == CLINFER_TYPE_F64 ? " -DUSE_FP64" : "",
      clinfer_ocl_in_type (node, 1) == CLINFER_TYPE_I32 ? "int" : "long");
  int64_t ex = 0, rev = 0, n = clinfer_shape_n_elements (in);
  int d[8];
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "exclusive", 0, &ex, error)
      || !clinfer_node_attr_int (node, "reverse", 0, &rev, error)
      || !(l = clinfer_ocl_launch_new (b, "select", opts, "cumsum_axis", error)))
    return FALSE;
  dims8 (in, d);
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, in->rank);
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int (l, ex != 0);
  clinfer_ocl_arg_int (l, rev != 0);
  /* outer * inner <= n whatever the axis. */
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}
