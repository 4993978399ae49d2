/* clinfer — OpenCL reductions (kernels/reduce.cl): Reduce* over any axes
 * (attribute or constant input), ArgMax/ArgMin, Cast (kernels/cast.cl);
 * and rows along one axis (kernels/softmax.cl, kernels/norm.cl): Softmax,
 * LogSoftmax, Hardmax, LayerNormalization. f32/f16, computed in float. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

static const struct {
  const char *name;
  int op;
} reduce_ops[] = {
  { "ReduceSum", 0 }, { "ReduceMean", 1 }, { "ReduceMax", 2 },
  { "ReduceMin", 3 }, { "ReduceProd", 4 }, { "ReduceL1", 5 },
  { "ReduceL2", 6 }, { "ReduceLogSum", 7 }, { "ReduceLogSumExp", 8 },
  { "ReduceSumSquare", 9 },
};

static int
reduce_code (const char *op_type)
{
  for (guint i = 0; i < G_N_ELEMENTS (reduce_ops); i++)
    if (strcmp (reduce_ops[i].name, op_type) == 0)
      return reduce_ops[i].op;
  return -1;
}

static gboolean
float_io (const ClinferNode *node, const char **reason)
{
  if (!clinfer_ocl_float_type (clinfer_ocl_in_type (node, 0))) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  return TRUE;
}

/* The axes to reduce (attribute, or constant input 1 for ReduceSum-13
 * and every Reduce-18); *n = 0 means "all" unless *noop. */
static gboolean
reduce_axes (const ClinferNode *node, int64_t **axes, gsize *n,
    gboolean *noop, GError **error)
{
  const int64_t *a = NULL;
  int64_t noop_attr = 0;

  *axes = NULL;
  *n = 0;
  if (!clinfer_node_attr_int (node, "noop_with_empty_axes", 0, &noop_attr,
          error))
    return FALSE;
  *noop = noop_attr != 0;
  if (node->n_inputs > 1 && node->inputs[1].node)
    return clinfer_op_read_int_list (node, clinfer_ocl_const_input (node, 1),
        "axes", axes, n, error);
  if (!clinfer_node_attr_ints (node, "axes", &a, n, error))
    return FALSE;
  *axes = *n ? g_memdup2 (a, sizeof (int64_t) * *n) : NULL;
  return TRUE;
}

gboolean
clinfer_ocl_reduce_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (node->n_inputs > 1 && node->inputs[1].node
      && !clinfer_ocl_input_known (node, 1)) {
    *reason = "axes are not constants";
    return FALSE;
  }
  if (x == NULL || x->shape.rank > 8 || clinfer_shape_n_elements (&x->shape) == 0) {
    *reason = "rank above 8 or an empty input";
    return FALSE;
  }
  return float_io (node, reason);
}

gboolean
clinfer_ocl_reduce_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  g_autofree int64_t *axes = NULL;
  gboolean noop, reduced[8] = { FALSE };
  int od[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, os[8] = { 0 };
  int rd[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, rs[8] = { 0 };
  int64_t st[8], acc = 1, count = 1, n_out;
  int orank = 0, rrank = 0;
  gsize n_axes;
  OclLaunch *l;

  if (!reduce_axes (node, &axes, &n_axes, &noop, error))
    return FALSE;
  for (int i = in->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= in->dims[i];
  }
  for (gsize i = 0; i < n_axes; i++)
    reduced[axes[i] < 0 ? axes[i] + in->rank : axes[i]] = TRUE;
  for (int i = 0; i < in->rank; i++) {
    gboolean r = n_axes ? reduced[i] : !noop;
    if (r) {
      rd[rrank] = (int) in->dims[i];
      rs[rrank++] = (int) st[i];
      count *= in->dims[i];
    } else {
      od[orank] = (int) in->dims[i];
      os[orank++] = (int) st[i];
    }
  }
  n_out = clinfer_shape_n_elements (&node->outputs[0].shape);
  l = clinfer_ocl_launch_new (b, "reduce",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "reduce", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n_out);
  clinfer_ocl_arg_int (l, MAX (orank, 1));
  clinfer_ocl_arg_int8 (l, od, 8);
  clinfer_ocl_arg_int8 (l, os, 8);
  clinfer_ocl_arg_int (l, MAX (rrank, 1));
  clinfer_ocl_arg_int8 (l, rd, 8);
  clinfer_ocl_arg_int8 (l, rs, 8);
  clinfer_ocl_arg_int (l, (int) count);
  clinfer_ocl_arg_int (l, reduce_code (node->op_type));
  clinfer_ocl_launch_set_global (l, 1, n_out, 1, 1);
  return TRUE;
}

/* ---- ArgMax, ArgMin ---- */

gboolean
clinfer_ocl_arg_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (x == NULL || clinfer_shape_n_elements (&x->shape) == 0) {
    *reason = "empty input";
    return FALSE;
  }
  return float_io (node, reason);
}

gboolean
clinfer_ocl_arg_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t axis = 0, last = 0, outer, n, inner;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error)
      || !clinfer_node_attr_int (node, "select_last_index", 0, &last, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  clinfer_ocl_split_axis (in, (int) axis, &outer, &n, &inner);
  l = clinfer_ocl_launch_new (b, "reduce",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "arg_extreme",
      error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) outer);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, strcmp (node->op_type, "ArgMax") == 0);
  clinfer_ocl_arg_int (l, last != 0);
  clinfer_ocl_launch_set_global (l, 1, outer * inner, 1, 1);
  return TRUE;
}

/* ---- Cast, CastLike ---- */

gboolean
clinfer_ocl_cast_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferElementType s = clinfer_ocl_in_type (node, 0), d = node->outputs[0].type;

  if (clinfer_ocl_c_type (s) == NULL || clinfer_ocl_c_type (d) == NULL
      || ((s == CLINFER_TYPE_F64 || d == CLINFER_TYPE_F64) && !dev->core->fp64)) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_cast_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  ClinferElementType s = clinfer_ocl_in_type (node, 0), d = node->outputs[0].type;
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  g_autofree char *opts = g_strdup_printf ("-DSRC_T=%s -DDST_T=%s%s%s%s%s",
      clinfer_ocl_c_type (s), clinfer_ocl_c_type (d),
      s == CLINFER_TYPE_F16 ? " -DSRC_HALF" : "",
      d == CLINFER_TYPE_F16 ? " -DDST_HALF" : "",
      d == CLINFER_TYPE_BOOL ? " -DDST_BOOL" : "",
      s == CLINFER_TYPE_F64 || d == CLINFER_TYPE_F64 ? " -DUSE_FP64" : "");
  OclLaunch *l = clinfer_ocl_launch_new (b, "cast", opts, "cast", error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

gboolean
clinfer_ocl_softmax_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return float_io (node, reason);
}

gboolean
clinfer_ocl_softmax_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  gboolean coerce = node->opset > 0 && node->opset < 13;
  int64_t axis, outer = 1, n = 1, inner = 1;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", coerce ? 1 : -1, &axis, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  for (int i = 0; i < in->rank; i++) {
    if (i < axis)
      outer *= in->dims[i];
    else if (i == axis || coerce)
      n *= in->dims[i];
    else
      inner *= in->dims[i];
  }
  l = clinfer_ocl_launch_new (b, "softmax",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "softmax_rows",
      error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) outer);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, strcmp (node->op_type, "LogSoftmax") == 0 ? 1
      : strcmp (node->op_type, "Hardmax") == 0 ? 2 : 0);
  clinfer_ocl_launch_set_global (l, 1, outer * inner, 1, 1);
  return TRUE;
}

/* ---- LayerNormalization ---- */

gboolean
clinfer_ocl_layer_norm_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  for (guint i = 1; i < node->n_outputs; i++)
    if (node->outputs[i].type != CLINFER_TYPE_F32) {
      *reason = "Mean and InvStdDev outputs of another type than f32";
      return FALSE;
    }
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node
        && clinfer_ocl_in_type (node, i) != clinfer_ocl_in_type (node, 0)) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  return float_io (node, reason);
}

gboolean
clinfer_ocl_layer_norm_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  gboolean has_bias = node->n_inputs > 2 && node->inputs[2].node != NULL;
  int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, ss[8] = { 0 }, bs[8] = { 0 };
  ClinferShape norm = { 0 };
  int64_t axis, outer = 1, inner = 1;
  float eps;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", -1, &axis, error)
      || !clinfer_node_attr_float (node, "epsilon", 1e-5f, &eps, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  for (int i = 0; i < in->rank; i++) {
    if (i < axis)
      outer *= in->dims[i];
    else {
      inner *= in->dims[i];
      norm.dims[norm.rank++] = in->dims[i];
    }
  }
  for (int i = 0; i < norm.rank; i++)
    dims[i] = (int) norm.dims[i];
  clinfer_ocl_broadcast_strides (clinfer_ocl_in_shape (b, 1), &norm, ss);
  if (has_bias)
    clinfer_ocl_broadcast_strides (clinfer_ocl_in_shape (b, 2), &norm, bs);
  l = clinfer_ocl_launch_new (b, "norm",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "layer_norm",
      error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  for (guint k = 1; k < 3; k++)
    if (k < node->n_outputs)
      clinfer_ocl_arg_output (l, k);
    else
      clinfer_ocl_arg_output (l, 0);    /* unused: has_stats says which */
  clinfer_ocl_arg_int (l, (int) MIN (node->n_outputs, 3) - 1);
  clinfer_ocl_arg_int (l, (int) outer);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_float (l, eps);
  clinfer_ocl_arg_int (l, has_bias);
  clinfer_ocl_arg_int (l, MAX (norm.rank, 1));
  clinfer_ocl_arg_int8 (l, dims, 8);
  clinfer_ocl_arg_int8 (l, ss, 8);
  clinfer_ocl_arg_int8 (l, bs, 8);
  clinfer_ocl_launch_set_global (l, 1, outer, 1, 1);
  return TRUE;
}

/* ---- InstanceNormalization, LRN ---- */

gboolean
clinfer_ocl_instance_norm_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  if (clinfer_node_input_desc (node, 0)->shape.rank < 3) {
    *reason = "rank below 3";
    return FALSE;
  }
  return clinfer_ocl_layer_norm_supports (dev, node, reason);
}

gboolean
clinfer_ocl_instance_norm_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t plane = 1;
  float eps;
  OclLaunch *l;

  if (!clinfer_node_attr_float (node, "epsilon", 1e-5f, &eps, error))
    return FALSE;
  for (int i = 2; i < in->rank; i++)
    plane *= in->dims[i];
  l = clinfer_ocl_launch_new (b, "norm",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      "instance_norm", error);
  if (l == NULL)
    return FALSE;
  for (guint i = 0; i < 3; i++)
    clinfer_ocl_arg_input (l, i);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) (in->dims[0] * in->dims[1]));
  clinfer_ocl_arg_int (l, (int) in->dims[1]);
  clinfer_ocl_arg_int (l, (int) plane);
  clinfer_ocl_arg_float (l, eps);
  clinfer_ocl_launch_set_global (l, 1, in->dims[0] * in->dims[1], 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_lrn_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  return float_io (node, reason);
}

gboolean
clinfer_ocl_lrn_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t size = 1, inner = 1, n = clinfer_shape_n_elements (in);
  float alpha, beta, bias;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "size", 1, &size, error)
      || !clinfer_node_attr_float (node, "alpha", 1e-4f, &alpha, error)
      || !clinfer_node_attr_float (node, "beta", 0.75f, &beta, error)
      || !clinfer_node_attr_float (node, "bias", 1.f, &bias, error))
    return FALSE;
  for (int i = 2; i < in->rank; i++)
    inner *= in->dims[i];
  l = clinfer_ocl_launch_new (b, "norm",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "lrn", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) in->dims[1]);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, (int) size);
  clinfer_ocl_arg_float (l, alpha);
  clinfer_ocl_arg_float (l, beta);
  clinfer_ocl_arg_float (l, bias);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}
