/* clinfer — OpenCL index and layout ops beyond plain gathers
 * (kernels/layout.cl, raw bits for any element type): Gather,
 * GatherElements, Trilu, Pad, Tile, DepthToSpace, SpaceToDepth. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

static gboolean
storable (ClinferElementType t, const char **reason)
{
  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  return TRUE;
}

static void
dims8 (const ClinferShape *s, int *d)
{
  for (int i = 0; i < 8; i++)
    d[i] = i < s->rank ? (int) s->dims[i] : 1;
}

static OclLaunch *
layout_launch (OclBuilder *b, const ClinferNode *node, const char *extra,
    const char *kernel, GError **error)
{
  g_autofree char *opts = g_strdup_printf ("%s%s",
      clinfer_ocl_elem_options (node->outputs[0].type), extra ? extra : "");

  return clinfer_ocl_launch_new (b, "layout", opts, kernel, error);
}

/* ---- Gather, GatherElements ---- */

static const char *
index_option (ClinferElementType t)
{
  return t == CLINFER_TYPE_I32 ? " -DIDX_T=int" : " -DIDX_T=long";
}

gboolean
clinfer_ocl_gather_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferElementType it = clinfer_ocl_in_type (node, 1);

  if (it != CLINFER_TYPE_I32 && it != CLINFER_TYPE_I64) {
    *reason = "indices are not i32 or i64";
    return FALSE;
  }
  return storable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_gather_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t axis = 0, outer, n_axis, inner;
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  int64_t n_idx = clinfer_shape_n_elements (clinfer_ocl_in_shape (b, 1));
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  clinfer_ocl_split_axis (in, (int) axis, &outer, &n_axis, &inner);
  l = layout_launch (b, node, index_option (clinfer_ocl_in_type (node, 1)),
      "gather_axis", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) n_idx);
  clinfer_ocl_arg_int (l, (int) n_axis);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_gather_elements_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  if (clinfer_node_input_desc (node, 0)->shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  return clinfer_ocl_gather_supports (dev, node, reason);
}

gboolean
clinfer_ocl_gather_elements_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *out = &node->outputs[0].shape;
  int d[8], xs[8] = { 0 };
  int64_t axis = 0, acc = 1, n = clinfer_shape_n_elements (out);
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  for (int i = in->rank - 1; i >= 0; i--) {
    xs[i] = (int) acc;
    acc *= in->dims[i];
  }
  dims8 (out, d);
  l = layout_launch (b, node, index_option (clinfer_ocl_in_type (node, 1)),
      "gather_elements", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, xs, 8);
  clinfer_ocl_arg_int (l, (int) axis);
  clinfer_ocl_arg_int (l, (int) in->dims[axis]);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- Trilu ---- */

gboolean
clinfer_ocl_trilu_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  if (node->n_inputs > 1 && node->inputs[1].node
      && clinfer_ocl_in_type (node, 1) != CLINFER_TYPE_I64) {
    *reason = "k is not int64";
    return FALSE;
  }
  return storable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_trilu_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *s = &node->outputs[0].shape;
  gboolean has_k = node->n_inputs > 1 && node->inputs[1].node != NULL;
  int64_t upper = 1, n = clinfer_shape_n_elements (s);
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "upper", 1, &upper, error)
      || !(l = layout_launch (b, node, NULL, "trilu", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) s->dims[s->rank - 2]);
  clinfer_ocl_arg_int (l, (int) s->dims[s->rank - 1]);
  clinfer_ocl_arg_int (l, has_k);
  clinfer_ocl_arg_int (l, upper != 0);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- Pad ---- */

gboolean
clinfer_ocl_pad_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && !clinfer_ocl_input_known (node, i)) {
      *reason = "pads, value or axes are not constants";
      return FALSE;
    }
  if (node->outputs[0].shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  return storable (clinfer_ocl_in_type (node, 0), reason);
}

/* The constant value as raw bits of the element type. */
static guint64
pad_value_bits (const ClinferNode *node, ClinferElementType t, float attr)
{
  const ClinferTensor *v = node->opset >= 11 ? clinfer_ocl_const_input (node, 2)
      : NULL;
  double d = v && clinfer_tensor_get_n_elements (v)
      ? clinfer_tensor_get_as_double (v, 0) : attr;
  guint64 bits = 0;

  if (v && clinfer_tensor_get_n_elements (v))
    memcpy (&bits, clinfer_tensor_get_const_data (v),
        clinfer_element_type_size (t));
  else if (t == CLINFER_TYPE_F32) {
    float f = (float) d;
    memcpy (&bits, &f, 4);
  } else if (t == CLINFER_TYPE_F16)
    bits = clinfer_float_to_half ((float) d);
  else
    bits = (guint64) (int64_t) d;
  return bits;
}

gboolean
clinfer_ocl_pad_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *out = &node->outputs[0].shape;
  const char *mode = "constant";
  int d[8], xd[8], pb[8] = { 0 }, m;
  float attr_value = 0.f;
  int64_t n = clinfer_shape_n_elements (out);
  guint64 bits;
  OclLaunch *l;

  if (!clinfer_node_attr_string (node, "mode", "constant", &mode, error)
      || !clinfer_node_attr_float (node, "value", 0.f, &attr_value, error))
    return FALSE;
  m = strcmp (mode, "edge") == 0 ? 1 : strcmp (mode, "reflect") == 0 ? 2 : 0;
  dims8 (out, d);
  dims8 (in, xd);
  /* Leading pads = output dims - input dims split at the front: derived
   * from the shapes and the pads input / attribute. */
  {
    g_autofree int64_t *pads = NULL;
    const int64_t *pa = NULL;
    const ClinferTensor *axes_t = clinfer_ocl_const_input (node, 3);
    g_autofree int64_t *axes = NULL;
    gsize np = 0, na = 0;
    if (node->opset >= 11) {
      if (!clinfer_op_read_int_list (node, clinfer_ocl_const_input (node, 1),
              "pads", &pads, &np, error))
        return FALSE;
      pa = pads;
    } else if (!clinfer_node_attr_ints (node, node->opset >= 2 ? "pads"
            : "paddings", &pa, &np, error))
      return FALSE;
    if (axes_t && !clinfer_op_read_int_list (node, axes_t, "axes", &axes, &na,
            error))
      return FALSE;
    for (gsize i = 0; i < (na ? na : np / 2); i++) {
      int64_t ax = na ? axes[i] : (int64_t) i;
      if (ax < 0)
        ax += in->rank;
      if (ax >= 0 && ax < 8)
        pb[ax] = (int) pa[i];
    }
  }
  bits = pad_value_bits (node, node->outputs[0].type, attr_value);
  if (!(l = layout_launch (b, node, NULL, "pad", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, xd, 8);
  clinfer_ocl_arg_int8 (l, pb, 8);
  clinfer_ocl_arg_raw (l, &bits, clinfer_element_type_size (node->outputs[0].type));
  clinfer_ocl_arg_int (l, m);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- Tile ---- */

gboolean
clinfer_ocl_tile_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (node->outputs[0].shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  return storable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_tile_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  int d[8], xd[8];
  int64_t n = clinfer_shape_n_elements (out);
  OclLaunch *l = layout_launch (b, node, NULL, "tile", error);

  if (l == NULL)
    return FALSE;
  dims8 (out, d);
  dims8 (clinfer_ocl_in_shape (b, 0), xd);
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, xd, 8);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- DepthToSpace, SpaceToDepth: 6-D transposes ---- */

gboolean
clinfer_ocl_depth_to_space_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  if (clinfer_node_input_desc (node, 0)->shape.rank != 4) {
    *reason = "4-D input expected";
    return FALSE;
  }
  return storable (clinfer_ocl_in_type (node, 0), reason);
}

gboolean
clinfer_ocl_depth_to_space_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  gboolean d2s = strcmp (node->op_type, "DepthToSpace") == 0;
  const char *mode = "DCR";
  int64_t bs = 1, N = in->dims[0], C = in->dims[1], H = in->dims[2],
      W = in->dims[3], v[6], st[6], xs[6], acc = 1;
  const int dcr[6] = { 0, 3, 4, 1, 5, 2 }, crd[6] = { 0, 1, 4, 2, 5, 3 };
  const int s2d[6] = { 0, 3, 5, 1, 2, 4 };
  const int *perm;
  ClinferShape dims = { 6, { 0 } };

  if (!clinfer_node_attr_int (node, "blocksize", 1, &bs, error)
      || !clinfer_node_attr_string (node, "mode", "DCR", &mode, error))
    return FALSE;
  if (d2s && strcmp (mode, "CRD") == 0) {
    int64_t t[6] = { N, C / (bs * bs), bs, bs, H, W };
    memcpy (v, t, sizeof (v));
    perm = crd;
  } else if (d2s) {
    int64_t t[6] = { N, bs, bs, C / (bs * bs), H, W };
    memcpy (v, t, sizeof (v));
    perm = dcr;
  } else {
    int64_t t[6] = { N, C, H / bs, bs, W / bs, bs };
    memcpy (v, t, sizeof (v));
    perm = s2d;
  }
  for (int i = 5; i >= 0; i--) {
    st[i] = acc;
    acc *= v[i];
  }
  for (int i = 0; i < 6; i++) {
    dims.dims[i] = v[perm[i]];
    xs[i] = st[perm[i]];
  }
  return clinfer_ocl_gather_new (b, clinfer_ocl_in_type (node, 0),
      OCL_ARG_INPUT, 0, OCL_ARG_OUTPUT, 0, &dims, xs, 0, error);
}
