/* clinfer — OpenCL Resize and Upsample (kernels/resize.cl): the geometry
 * comes from the reference (ops/resize.h), so every mode, rounding and
 * coordinate transformation the CPU has runs here with the same taps. */
#include "devices/opencl/ocl-internal.h"
#include "ops/resize.h"
#include <string.h>

gboolean
clinfer_ocl_resize_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  const char *mode = "nearest";
  gsize es = clinfer_element_type_size (t);

  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && !clinfer_ocl_input_known (node, i)) {
      *reason = "roi, scales or sizes are not constants";
      return FALSE;
    }
  if (x == NULL || x->shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  if (!clinfer_node_attr_string (node, "mode", "nearest", &mode, NULL))
    mode = "";
  if (g_ascii_strcasecmp (mode, "nearest") != 0) {
    if (!clinfer_ocl_float_type (t)) {
      *reason = "linear and cubic take f32 or f16";
      return FALSE;
    }
    return TRUE;
  }
  if (t == CLINFER_TYPE_STRING || (es != 1 && es != 2 && es != 4 && es != 8)) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  return TRUE;
}

/* Nearest: one gather through per-dim offset maps. */
static gboolean
build_nearest (OclBuilder *b, const ClinferNode *node, ClinferElementType type,
    const ClinferShape *xs, const ClinferResizeGeometry *g, GError **error)
{
  int64_t st[CLINFER_MAX_RANK], total = 0, n = 1;
  int dims[8] = { 0 }, moff[8] = { 0 };
  g_autofree cl_int *map = NULL;
  OclLaunch *l;

  clinfer_shape_elem_strides (xs, st);
  for (int d = 0; d < g->rank; d++) {
    moff[d] = (int) total;
    dims[d] = (int) g->out[d];
    total += g->out[d];
    n *= g->out[d];
  }
  map = g_new0 (cl_int, MAX (total, 1));
  for (int d = 0; d < g->rank; d++)
    for (int64_t o = 0; o < g->out[d]; o++) {
      const ClinferResizeTap *t = &g->taps[d][o];
      map[moff[d] + o] = t->extrap ? -1 : (cl_int) (t->idx[0] * st[d]);
    }
  l = clinfer_ocl_launch_new (b, "resize", clinfer_ocl_elem_options (type),
      "resize_nearest", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  if (!clinfer_ocl_arg_data (b, l, map, MAX (total, 1) * sizeof (cl_int),
          error))
    return FALSE;
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, g->rank);
  clinfer_ocl_arg_int8 (l, dims, 8);
  clinfer_ocl_arg_int8 (l, moff, 8);
  clinfer_ocl_arg_raw (l, &g->fill, clinfer_element_type_size (type));
  clinfer_ocl_launch_set_global (l, 1, (size_t) n, 1, 1);
  return TRUE;
}

/* One linear/cubic pass along dim @d of @cur (updated to its output). */
static gboolean
build_pass (OclBuilder *b, const ClinferResizeGeometry *g, int d,
    ClinferShape *cur, OclArgKind src_kind, guint src, OclArgKind dst_kind,
    guint dst, const char *options, GError **error)
{
  int64_t outer = 1, inner = 1, n_in = cur->dims[d], n_out = g->out[d];
  g_autofree cl_int *idx = g_new0 (cl_int, 4 * MAX (n_out, 1));
  g_autofree cl_float *w = g_new0 (cl_float, 4 * MAX (n_out, 1));
  OclLaunch *l;

  for (int k = 0; k < d; k++)
    outer *= cur->dims[k];
  for (int k = d + 1; k < cur->rank; k++)
    inner *= cur->dims[k];
  cur->dims[d] = n_out;
  for (int64_t o = 0; o < n_out; o++) {
    const ClinferResizeTap *t = &g->taps[d][o];
    for (int k = 0; k < g->n_taps; k++) {
      idx[4 * o + k] = (cl_int) t->idx[k];
      w[4 * o + k] = t->w[k];
    }
    if (t->extrap)
      idx[4 * o] = -1;
  }
  l = clinfer_ocl_launch_new (b, "resize", options, "resize_pass", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_buffer (l, src_kind, src);
  clinfer_ocl_arg_buffer (l, dst_kind, dst);
  if (!clinfer_ocl_arg_data (b, l, idx, 4 * MAX (n_out, 1) * sizeof (cl_int),
          error)
      || !clinfer_ocl_arg_data (b, l, w, 4 * MAX (n_out, 1) * sizeof (cl_float),
          error))
    return FALSE;
  clinfer_ocl_arg_int (l, (int) (outer * n_out * inner));
  clinfer_ocl_arg_int (l, (int) n_in);
  clinfer_ocl_arg_int (l, (int) n_out);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, g->n_taps);
  clinfer_ocl_arg_float (l, g->extrapolation);
  clinfer_ocl_launch_set_global (l, 1, (size_t) (outer * n_out * inner), 1, 1);
  return TRUE;
}

/* Linear and cubic: separable passes, last dim first as the reference,
 * through f32 scratch buffers. */
static gboolean
build_interp (OclBuilder *b, ClinferElementType type, const ClinferShape *xs,
    const ClinferResizeGeometry *g, GError **error)
{
  gboolean half = type == CLINFER_TYPE_F16;
  ClinferShape cur = *xs;
  OclArgKind src_kind = OCL_ARG_INPUT;
  guint src = 0;
  int last = -1;

  for (int d = 0; d < g->rank; d++)
    if (g->taps[d] && last < 0)
      last = d;
  if (last < 0) {
    /* Every dim maps onto itself. */
    clinfer_ocl_copy_new (b, 0, 0, 0, 0, (gsize) clinfer_shape_n_elements (xs)
        * clinfer_element_type_size (type));
    return TRUE;
  }
  for (int d = g->rank - 1; d >= 0; d--) {
    g_autofree char *options = NULL;
    OclArgKind dst_kind = OCL_ARG_OUTPUT;
    guint dst = 0;
    if (g->taps[d] == NULL)
      continue;
    options = g_strdup_printf ("%s%s", src_kind == OCL_ARG_INPUT && half
        ? "-DIN_HALF " : "", d == last && half ? "-DOUT_HALF" : "");
    if (d != last) {
      ClinferShape next = cur;
      next.dims[d] = g->out[d];
      dst_kind = OCL_ARG_SCRATCH;
      dst = clinfer_ocl_scratch_new (b,
          (gsize) clinfer_shape_n_elements (&next) * sizeof (cl_float));
    }
    if (!build_pass (b, g, d, &cur, src_kind, src, dst_kind, dst, options,
            error))
      return FALSE;
    src_kind = dst_kind;
    src = dst;
  }
  return TRUE;
}

gboolean
clinfer_ocl_resize_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType type = clinfer_ocl_in_type (node, 0);
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *ys = &node->outputs[0].shape;
  ClinferValueInfo in[4] = { { 0 } };
  ClinferResizeGeometry g;
  gboolean ok;

  for (guint i = 0; i < MIN (node->n_inputs, 4); i++) {
    const ClinferShape *s = clinfer_ocl_in_shape (b, i);
    if (s == NULL)
      continue;
    in[i].present = TRUE;
    in[i].type = clinfer_ocl_in_type (node, i);
    in[i].shape = *s;
    in[i].value = clinfer_ocl_const_input (node, i);
  }
  if (!clinfer_resize_geometry (node, type, in, &g, error))
    return FALSE;
  for (int d = 0; d < g.rank; d++)
    if (g.out[d] != ys->dims[d] || (xs->dims[d] == 0 && g.out[d] > 0)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "cannot resize dimension %d from %" G_GINT64_FORMAT " to %"
          G_GINT64_FORMAT, d, xs->dims[d], ys->dims[d]);
      clinfer_resize_geometry_clear (&g);
      return FALSE;
    }
  if (clinfer_shape_n_elements (ys) == 0)
    ok = TRUE;
  else if (g.mode == CLINFER_RESIZE_NEAREST)
    ok = build_nearest (b, node, type, xs, &g, error);
  else
    ok = build_interp (b, type, xs, &g, error);
  clinfer_resize_geometry_clear (&g);
  return ok;
}
