/* clinfer — OpenCL ops that make a tensor from a few parameters
 * (kernels/generate.cl): Range, ConstantOfShape, OneHot. Their shapes
 * come from input values: when those are not constants the step is built
 * when it runs, from the values brought to the host (a few bytes; the op
 * table's host_inputs names which). */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

static gboolean
all_known (const ClinferNode *node, guint from, guint to, const char **reason)
{
  for (guint i = from; i < to && i < node->n_inputs; i++)
    if (!clinfer_ocl_input_known (node, i)) {
      *reason = "a parameter input is not known when the step is built";
      return FALSE;
    }
  return TRUE;
}

/* ---- Range ---- */

gboolean
clinfer_ocl_range_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (t == CLINFER_TYPE_BF16 || t == CLINFER_TYPE_BOOL
      || clinfer_ocl_c_type (t) == NULL
      || (t == CLINFER_TYPE_F64 && !dev->core->fp64)) {
    *reason = "element type not supported by the OpenCL Range kernel";
    return FALSE;
  }
  return all_known (node, 0, 3, reason);
}

gboolean
clinfer_ocl_range_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType t = node->outputs[0].type;
  const ClinferTensor *start = clinfer_ocl_const_input (node, 0);
  const ClinferTensor *delta = clinfer_ocl_const_input (node, 2);
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  g_autofree char *opts = NULL;
  OclLaunch *l;

  if (start == NULL || delta == NULL
      || clinfer_tensor_get_n_elements (start) != 1
      || clinfer_tensor_get_n_elements (delta) != 1 || n < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: start and delta must be known scalars", clinfer_node_label (node));
    return FALSE;
  }
  if (t == CLINFER_TYPE_F16)
    opts = g_strdup ("-DRANGE_HALF");
  else
    opts = g_strdup_printf ("-DRANGE_T=%s%s", clinfer_ocl_c_type (t),
        t == CLINFER_TYPE_F64 ? " -DUSE_FP64" : "");
  if (!(l = clinfer_ocl_launch_new (b, "generate", opts, "range_fill", error)))
    return FALSE;
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  if (t == CLINFER_TYPE_F16) {
    float s = (float) clinfer_tensor_get_as_double (start, 0);
    float d = (float) clinfer_tensor_get_as_double (delta, 0);
    clinfer_ocl_arg_float (l, s);
    clinfer_ocl_arg_float (l, d);
  } else {
    /* start and delta as stored (the scalars have the output's type). */
    clinfer_ocl_arg_raw (l, clinfer_tensor_get_const_data (start),
        clinfer_element_type_size (t));
    clinfer_ocl_arg_raw (l, clinfer_tensor_get_const_data (delta),
        clinfer_element_type_size (t));
  }
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- ConstantOfShape ---- */

gboolean
clinfer_ocl_constant_of_shape_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  ClinferElementType t = node->outputs[0].type;

  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0
      || clinfer_element_type_size (t) > 8) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  return all_known (node, 0, 1, reason);
}

gboolean
clinfer_ocl_constant_of_shape_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType t = node->outputs[0].type;
  const ClinferAttr *a = clinfer_node_get_attr (node, "value");
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  guint64 bits = 0;
  OclLaunch *l;

  if (a && a->type == CLINFER_ATTR_TENSOR && clinfer_tensor_get_n_elements (a->t) == 1
      && clinfer_tensor_get_element_type (a->t) == t)
    memcpy (&bits, clinfer_tensor_get_const_data (a->t),
        clinfer_element_type_size (t));
  else if (a) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'value' must be a tensor of one element",
        clinfer_node_label (node));
    return FALSE;
  }
  if (!(l = clinfer_ocl_launch_new (b, "generate",
              clinfer_ocl_elem_options (t), "fill_bits", error)))
    return FALSE;
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_raw (l, &bits, clinfer_element_type_size (t));
  clinfer_ocl_launch_set_global (l, 1, MAX (n, 0), 1, 1);
  return TRUE;
}

/* ---- OneHot ---- */

gboolean
clinfer_ocl_onehot_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType it = clinfer_ocl_in_type (node, 0);
  ClinferElementType vt = clinfer_ocl_in_type (node, 2);

  if (it == CLINFER_TYPE_BOOL || it == CLINFER_TYPE_BF16
      || it == CLINFER_TYPE_F64 || clinfer_ocl_c_type (it) == NULL) {
    *reason = "indices type not supported by the OpenCL OneHot kernel";
    return FALSE;
  }
  if (vt == CLINFER_TYPE_STRING || clinfer_element_type_size (vt) == 0) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  if (clinfer_node_input_desc (node, 0)->shape.rank > 7) {
    *reason = "rank above 8";
    return FALSE;
  }
  return all_known (node, 1, 2, reason);
}

gboolean
clinfer_ocl_onehot_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *os = &node->outputs[0].shape;
  ClinferElementType it = clinfer_ocl_in_type (node, 0);
  int64_t axis = -1, outer, depth, inner, n = clinfer_shape_n_elements (os);
  g_autofree char *opts = NULL;
  int ax;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", -1, &axis, error)
      || !clinfer_op_normalize_axis (node, axis, os->rank, &ax, error))
    return FALSE;
  if (clinfer_shape_n_elements (clinfer_ocl_in_shape (b, 2)) != 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: values must hold two elements [off, on]",
        clinfer_node_label (node));
    return FALSE;
  }
  clinfer_ocl_split_axis (os, ax, &outer, &depth, &inner);
  opts = g_strdup_printf ("%s -DOH_IDX=%s%s",
      clinfer_ocl_elem_options (node->outputs[0].type), clinfer_ocl_c_type (it),
      it == CLINFER_TYPE_F16 ? " -DOH_IDX_HALF"
      : it == CLINFER_TYPE_F32 ? " -DOH_IDX_FLOAT" : "");
  if (!(l = clinfer_ocl_launch_new (b, "generate", opts, "onehot", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) depth);
  clinfer_ocl_arg_int (l, (int) MAX (inner, 1));
  clinfer_ocl_arg_int (l, node->opset >= 11);
  clinfer_ocl_launch_set_global (l, 1, depth > 0 ? n : 0, 1, 1);
  return TRUE;
}
