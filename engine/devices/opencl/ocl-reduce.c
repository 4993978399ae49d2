/* clinfer — OpenCL reductions (kernels/reduce.cl): Reduce* over any axes
 * (attribute or constant input), ArgMax/ArgMin, Cast (kernels/cast.cl);
 * and rows along one axis (kernels/softmax.cl, kernels/norm.cl): Softmax,
 * LogSoftmax, Hardmax, LayerNormalization, MeanVarianceNormalization,
 * LpNormalization. f32/f16, computed in float (the kernels/norm.cl ones
 * also f64, in double);
 * Reduce* on f64 and integers as the CPU device accumulates them;
 * ArgMax/ArgMin on f64 and integers in their own type. */
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

/* float_io for the kernels/norm.cl families, whose f64 build computes in
 * double where the device has cl_khr_fp64. */
static gboolean
norm_io (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (clinfer_ocl_in_type (node, 0) == CLINFER_TYPE_F64)
    return clinfer_ocl_fp64_ok (dev, CLINFER_TYPE_F64, reason);
  return float_io (node, reason);
}

const char *
clinfer_ocl_norm_options (ClinferElementType type)
{
  return type == CLINFER_TYPE_F64 ? "-DNORM_F64"
      : clinfer_ocl_data_options (type);
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

/* Options of reduce_typed for @node's input type, as the CPU device
 * accumulates: f64 and integers up to 32 bits in double; i64/u64 in 64-bit
 * integers except L2, LogSum and LogSumExp (double). NULL for the float
 * kernels' types (and bf16/strings). */
static const char *
reduce_typed_options (const ClinferNode *node)
{
  int op = reduce_code (node->op_type);
  gboolean dbl = op == 6 || op == 7 || op == 8;   /* L2, LogSum, LSE */

  switch (clinfer_ocl_in_type (node, 0)) {
    case CLINFER_TYPE_F64: return "-DRED_T=double -DUSE_FP64";
    case CLINFER_TYPE_I8: return "-DRED_T=char -DUSE_FP64";
    case CLINFER_TYPE_U8: return "-DRED_T=uchar -DUSE_FP64";
    case CLINFER_TYPE_I16: return "-DRED_T=short -DUSE_FP64";
    case CLINFER_TYPE_U16: return "-DRED_T=ushort -DUSE_FP64";
    case CLINFER_TYPE_I32: return "-DRED_T=int -DUSE_FP64";
    case CLINFER_TYPE_U32: return "-DRED_T=uint -DUSE_FP64";
    case CLINFER_TYPE_I64:
      return dbl ? "-DRED_T=long -DUSE_FP64" : "-DRED_T=long -DRED_ACC=long "
          "-DRED_INT_ACC -DRED_LOW=LONG_MIN -DRED_HIGH=LONG_MAX";
    case CLINFER_TYPE_U64:
      return dbl ? "-DRED_T=ulong -DUSE_FP64" : "-DRED_T=ulong -DRED_ACC=ulong "
          "-DRED_INT_ACC -DRED_LOW=0 -DRED_HIGH=ULONG_MAX";
    default: return NULL;
  }
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
  if (reduce_typed_options (node)) {
    if (strstr (reduce_typed_options (node), "USE_FP64") && !dev->core->fp64) {
      *reason = "reductions of f64 and integer tensors accumulate in f64, "
          "which needs the cl_khr_fp64 extension this OpenCL device lacks";
      return FALSE;
    }
    return TRUE;
  }
  return float_io (node, reason);
}

/* Kept and reduced dims of @in (@reduced[d] per dim) as the reduce-style
 * kernels take them: dims and input strides of each group, rank >= 1. */
typedef struct {
  int od[8], os[8], rd[8], rs[8];
  int orank, rrank;
  int64_t count;
} RedSplit;

static void
red_split (const ClinferShape *in, const gboolean *reduced, RedSplit *r)
{
  int64_t st[8], acc = 1;

  memset (r, 0, sizeof (*r));
  for (int i = 0; i < 8; i++)
    r->od[i] = r->rd[i] = 1;
  r->count = 1;
  for (int i = in->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= in->dims[i];
  }
  for (int i = 0; i < in->rank; i++) {
    if (reduced[i]) {
      r->rd[r->rrank] = (int) in->dims[i];
      r->rs[r->rrank++] = (int) st[i];
      r->count *= in->dims[i];
    } else {
      r->od[r->orank] = (int) in->dims[i];
      r->os[r->orank++] = (int) st[i];
    }
  }
}

static void
red_split_args (OclLaunch *l, const RedSplit *r)
{
  clinfer_ocl_arg_int (l, MAX (r->orank, 1));
  clinfer_ocl_arg_int8 (l, r->od, 8);
  clinfer_ocl_arg_int8 (l, r->os, 8);
  clinfer_ocl_arg_int (l, MAX (r->rrank, 1));
  clinfer_ocl_arg_int8 (l, r->rd, 8);
  clinfer_ocl_arg_int8 (l, r->rs, 8);
  clinfer_ocl_arg_int (l, (int) r->count);
}

gboolean
clinfer_ocl_reduce_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  g_autofree int64_t *axes = NULL;
  gboolean noop, reduced[8] = { FALSE };
  const char *typed;
  int64_t n_out;
  gsize n_axes;
  RedSplit r;
  OclLaunch *l;

  if (!reduce_axes (node, &axes, &n_axes, &noop, error))
    return FALSE;
  for (gsize i = 0; i < n_axes; i++)
    reduced[axes[i] < 0 ? axes[i] + in->rank : axes[i]] = TRUE;
  if (n_axes == 0)
    for (int i = 0; i < in->rank; i++)
      reduced[i] = !noop;
  red_split (in, reduced, &r);
  n_out = clinfer_shape_n_elements (&node->outputs[0].shape);
  typed = reduce_typed_options (node);
  l = clinfer_ocl_launch_new (b, "reduce", typed ? typed
      : clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      typed ? "reduce_typed" : "reduce", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n_out);
  red_split_args (l, &r);
  clinfer_ocl_arg_int (l, reduce_code (node->op_type));
  clinfer_ocl_launch_set_global (l, 1, n_out, 1, 1);
  return TRUE;
}

/* ---- MeanVarianceNormalization, LpNormalization ---- */

gboolean
clinfer_ocl_mvn_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (x == NULL || x->shape.rank > 8
      || clinfer_shape_n_elements (&x->shape) == 0) {
    *reason = "rank above 8 or an empty input";
    return FALSE;
  }
  return norm_io (dev, node, reason);
}

gboolean
clinfer_ocl_mvn_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  static const int64_t def_axes[] = { 0, 2, 3 };
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const int64_t *axes = def_axes;
  gsize n_axes = G_N_ELEMENTS (def_axes);
  gboolean reduced[8] = { FALSE };
  int64_t n_groups;
  RedSplit r;
  OclLaunch *l;

  if (clinfer_node_get_attr (node, "axes")
      && !clinfer_node_attr_ints (node, "axes", &axes, &n_axes, error))
    return FALSE;
  for (gsize i = 0; i < n_axes; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + in->rank : axes[i];
    if (a < 0 || a >= in->rank) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: axis %" G_GINT64_FORMAT " is out of range for rank %d",
          clinfer_node_label (node), axes[i], in->rank);
      return FALSE;
    }
    reduced[a] = TRUE;
  }
  red_split (in, reduced, &r);
  n_groups = clinfer_shape_n_elements (in) / MAX (r.count, 1);
  l = clinfer_ocl_launch_new (b, "norm",
      clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0)), "mvn", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n_groups);
  red_split_args (l, &r);
  clinfer_ocl_launch_set_global (l, 1, n_groups, 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_lp_norm_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  int64_t p = 2;

  if (!clinfer_node_attr_int (node, "p", 2, &p, NULL) || (p != 1 && p != 2)) {
    *reason = "p other than 1 or 2";
    return FALSE;
  }
  return norm_io (dev, node, reason);
}

gboolean
clinfer_ocl_lp_norm_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t axis = -1, p = 2, outer, n, inner;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", -1, &axis, error)
      || !clinfer_node_attr_int (node, "p", 2, &p, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  clinfer_ocl_split_axis (in, (int) axis, &outer, &n, &inner);
  l = clinfer_ocl_launch_new (b, "norm",
      clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0)), "lp_norm",
      error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) outer);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, (int) p);
  clinfer_ocl_launch_set_global (l, 1, outer * inner, 1, 1);
  return TRUE;
}

/* ---- ArgMax, ArgMin ---- */

/* Options of arg_typed for @t (f64 and every integer type), or NULL. */
static const char *
arg_typed_options (ClinferElementType t)
{
  switch (t) {
    case CLINFER_TYPE_F64: return "-DARG_T=double -DARG_FLOAT -DUSE_FP64";
    case CLINFER_TYPE_I8: return "-DARG_T=char";
    case CLINFER_TYPE_U8: return "-DARG_T=uchar";
    case CLINFER_TYPE_I16: return "-DARG_T=short";
    case CLINFER_TYPE_U16: return "-DARG_T=ushort";
    case CLINFER_TYPE_I32: return "-DARG_T=int";
    case CLINFER_TYPE_U32: return "-DARG_T=uint";
    case CLINFER_TYPE_I64: return "-DARG_T=long";
    case CLINFER_TYPE_U64: return "-DARG_T=ulong";
    default: return NULL;
  }
}

gboolean
clinfer_ocl_arg_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);

  if (x == NULL || clinfer_shape_n_elements (&x->shape) == 0) {
    *reason = "empty input";
    return FALSE;
  }
  if (arg_typed_options (clinfer_ocl_in_type (node, 0))) {
    if (!clinfer_ocl_fp64_ok (dev, clinfer_ocl_in_type (node, 0), reason))
      return FALSE;
    return TRUE;
  }
  return float_io (node, reason);
}

gboolean
clinfer_ocl_arg_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t axis = 0, last = 0, outer, n, inner;
  const char *typed;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error)
      || !clinfer_node_attr_int (node, "select_last_index", 0, &last, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  clinfer_ocl_split_axis (in, (int) axis, &outer, &n, &inner);
  typed = arg_typed_options (clinfer_ocl_in_type (node, 0));
  l = clinfer_ocl_launch_new (b, "reduce", typed ? typed
      : clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      typed ? "arg_typed" : "arg_extreme", error);
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
  return norm_io (dev, node, reason);
}

gboolean
clinfer_ocl_layer_norm_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  gboolean has_bias = node->n_inputs > 2 && node->inputs[2].node != NULL;
  /* com.clinfer LayerNormStd: the last axis, eps added to the std */
  gboolean std_form = strcmp (node->domain, "com.clinfer") == 0;
  int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, ss[8] = { 0 }, bs[8] = { 0 };
  ClinferShape norm = { 0 };
  int64_t axis, outer = 1, inner = 1;
  float eps, var_scale = 1.f;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "axis", -1, &axis, error)
      || !clinfer_node_attr_float (node, "epsilon", std_form ? 0.f : 1e-5f,
          &eps, error)
      || (std_form && !clinfer_node_attr_float (node, "var_scale", 1.f,
              &var_scale, error)))
    return FALSE;
  if (std_form)
    axis = -1;
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
      clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0)), "layer_norm",
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
  clinfer_ocl_arg_int (l, std_form);
  clinfer_ocl_arg_float (l, var_scale);
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
      clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0)),
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
  return norm_io (dev, node, reason);
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
      clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0)), "lrn", error);
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
