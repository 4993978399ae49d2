/* clinfer — OpenCL element-wise ops (kernels/eltwise.cl): binary ops with
 * numpy broadcasting (Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean,
 * PRelu), unary activations and math, and BatchNormalization (folded into
 * a per-channel affine map when its statistics are constants; else read
 * on the device, kernels/norm.cl, with training mode's batch statistics).
 * f32 and f16, computed in float; other types go to ocl-binary.c. */
#include "devices/opencl/ocl-internal.h"
#include "ops/eltwise-chain.h"
#include <float.h>
#include <math.h>
#include <string.h>

static gboolean
float_inputs (const ClinferNode *node, guint n, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (!clinfer_ocl_float_type (t) || node->outputs[0].type != t) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  for (guint i = 1; i < n && i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_in_type (node, i) != t) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Binary                                                            */

static const struct {
  const char *name;
  int op;
} binary_ops[] = {
  { "Add", 0 }, { "Sub", 1 }, { "Mul", 2 }, { "Div", 3 }, { "Pow", 4 },
  { "Max", 5 }, { "Min", 6 }, { "PRelu", 7 }, { "Mean", 8 }, { "Sum", 0 },
};

static int
binary_code (const char *op_type)
{
  for (guint i = 0; i < G_N_ELEMENTS (binary_ops); i++)
    if (strcmp (binary_ops[i].name, op_type) == 0)
      return binary_ops[i].op;
  return -1;
}

/* Integer and f64 arithmetic runs in the typed kernels (kernels/binary.cl,
 * ocl-binary.c), as does Pow of a float base with a float exponent of
 * another type (in double). */
static gboolean
binary_typed (const ClinferNode *node)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  return !clinfer_ocl_float_type (t) || (strcmp (node->op_type, "Pow") == 0
      && node->n_inputs == 2 && clinfer_ocl_in_type (node, 1) != t
      && clinfer_element_type_is_float (clinfer_ocl_in_type (node, 1)));
}

gboolean
clinfer_ocl_binary_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (binary_typed (node))
    return clinfer_ocl_int_binary_supports (dev, node, reason);
  if (node->n_inputs < 1) {
    *reason = "no input";
    return FALSE;
  }
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i].node == NULL) {
      *reason = "absent input";
      return FALSE;
    }
  if (node->outputs[0].shape.rank > 8) {
    *reason = "rank above 8";
    return FALSE;
  }
  /* Pow takes an exponent of any integer type too. */
  if (strcmp (node->op_type, "Pow") == 0 && node->n_inputs == 2
      && clinfer_ocl_in_type (node, 1) != t) {
    ClinferElementType et = clinfer_ocl_in_type (node, 1);
    if (clinfer_ocl_c_type (et) == NULL || clinfer_element_type_is_float (et)
        || et == CLINFER_TYPE_BOOL) {
      *reason = "exponent type not supported";
      return FALSE;
    }
    return float_inputs (node, 1, reason);
  }
  return float_inputs (node, node->n_inputs, reason);
}

/* Launches @kernel of @program on inputs 0 and 1 broadcast to output 0:
 * arguments a, b, y, n, [op,] rank, dims[8], a strides[8], b strides[8]
 * (@op < 0: no op argument). Shared by the typed and mixed-type binaries. */
gboolean
clinfer_ocl_launch_broadcast2 (OclBuilder *b, const ClinferNode *node,
    const char *program, const char *opts, const char *kernel, int op,
    GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  OclLaunch *l = clinfer_ocl_launch_new (b, program, opts, kernel, error);
  int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, sa[8] = { 0 }, sb[8] = { 0 };
  int64_t n = clinfer_shape_n_elements (out);
  ClinferShape beff;

  if (l == NULL)
    return FALSE;
  for (int i = 0; i < out->rank; i++)
    dims[i] = (int) out->dims[i];
  clinfer_ocl_b_shape (node, clinfer_ocl_in_shape (b, 0),
      clinfer_ocl_in_shape (b, 1), &beff);
  clinfer_ocl_broadcast_strides (clinfer_ocl_in_shape (b, 0), out, sa);
  clinfer_ocl_broadcast_strides (&beff, out, sb);
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  if (op >= 0)
    clinfer_ocl_arg_int (l, op);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, dims, 8);
  clinfer_ocl_arg_int8 (l, sa, 8);
  clinfer_ocl_arg_int8 (l, sb, 8);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* Pow (float base, integer exponent), broadcast. */
static gboolean
pow_mixed (OclBuilder *b, const ClinferNode *node, GError **error)
{
  g_autofree char *opts = g_strdup_printf ("%s -DEXP_T=%s",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      clinfer_ocl_c_type (clinfer_ocl_in_type (node, 1)));

  return clinfer_ocl_launch_broadcast2 (b, node, "eltwise", opts, "pow_mixed",
      -1, error);
}

/* y = a op b; @a_is_output reads a from the output (chained Sum/Max/Min). */
static gboolean
binary_launch (OclBuilder *b, const ClinferNode *node, int op, guint a_port,
    gboolean a_is_output, guint b_port, GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  const ClinferShape *as = a_is_output ? out : clinfer_ocl_in_shape (b, a_port);
  ClinferShape beff;
  const ClinferShape *bs = &beff;
  const char *opts = clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0));
  int64_t n = clinfer_shape_n_elements (out);
  gboolean a_full = clinfer_shape_n_elements (as) == n;
  gboolean b_full, b_one, flat;
  OclLaunch *l;

  clinfer_ocl_b_shape (node, as, clinfer_ocl_in_shape (b, b_port), &beff);
  b_full = clinfer_shape_n_elements (bs) == n;
  b_one = clinfer_shape_n_elements (bs) == 1;
  flat = a_full && clinfer_shape_equal (as, out)
      && (b_one || (b_full && clinfer_shape_equal (bs, out)));
  l = clinfer_ocl_launch_new (b, "eltwise", opts,
      flat ? "binary_flat" : "binary_broadcast", error);
  if (l == NULL)
    return FALSE;
  if (a_is_output)
    clinfer_ocl_arg_output (l, 0);
  else
    clinfer_ocl_arg_input (l, a_port);
  clinfer_ocl_arg_input (l, b_port);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, op);
  if (flat) {
    clinfer_ocl_arg_int (l, b_one && !b_full);
    clinfer_ocl_arg_int (l, 0);
    clinfer_ocl_arg_float (l, 0.f);
    clinfer_ocl_arg_float (l, 0.f);
  } else {
    int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, sa[8] = { 0 }, sb[8] = { 0 };
    for (int i = 0; i < out->rank; i++)
      dims[i] = (int) out->dims[i];
    clinfer_ocl_broadcast_strides (as, out, sa);
    clinfer_ocl_broadcast_strides (bs, out, sb);
    clinfer_ocl_arg_int (l, MAX (out->rank, 1));
    clinfer_ocl_arg_int8 (l, dims, 8);
    clinfer_ocl_arg_int8 (l, sa, 8);
    clinfer_ocl_arg_int8 (l, sb, 8);
  }
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_binary_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  int op = binary_code (node->op_type);
  const ClinferShape *out = &node->outputs[0].shape;

  if (binary_typed (node))
    return clinfer_ocl_int_binary_build (b, node, error);
  if (node->n_inputs == 2
      && clinfer_ocl_in_type (node, 1) != clinfer_ocl_in_type (node, 0))
    return pow_mixed (b, node, error);
  /* Mean of more than two inputs: the sum, then scaled by 1/N. */
  if (op == 8 && node->n_inputs > 2) {
    for (guint i = 1; i < node->n_inputs; i++)
      if (!binary_launch (b, node, 0, 0, i > 1, i, error))
        return FALSE;
    return clinfer_ocl_scale_output (b, node, 1.0f / (float) node->n_inputs,
        error);
  }

  if (node->n_inputs == 1) {
    /* Sum/Max/Min/Mean of one input: a copy (same shape). */
    clinfer_ocl_copy_new (b, 0, 0, 0, 0, (gsize) clinfer_shape_n_elements (out)
        * clinfer_element_type_size (node->outputs[0].type));
    return TRUE;
  }
  if (!binary_launch (b, node, op, 0, FALSE, 1, error))
    return FALSE;
  for (guint i = 2; i < node->n_inputs; i++)
    if (!binary_launch (b, node, op, 0, TRUE, i, error))
      return FALSE;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Unary                                                             */

typedef struct {
  const char *name;
  int op;
  const char *a_name;
  float a_def;
  const char *b_name;
  float b_def;
} UnaryInfo;

static const UnaryInfo unary_ops[] = {
  { "Relu", 0 }, { "LeakyRelu", 1, "alpha", 0.01f }, { "Elu", 2, "alpha", 1.f },
  { "Selu", 3, "alpha", 1.67326319217681884765625f,
    "gamma", 1.05070102214813232421875f },
  { "Celu", 4, "alpha", 1.f }, { "ThresholdedRelu", 5, "alpha", 1.f },
  { "Sigmoid", 6 }, { "HardSigmoid", 7, "alpha", 0.2f, "beta", 0.5f },
  { "HardSwish", 8 }, { "Tanh", 9 }, { "Clip", 10, "min", -FLT_MAX, "max", FLT_MAX },
  { "Softplus", 11 }, { "Softsign", 12 }, { "Mish", 13 }, { "Erf", 14 },
  { "Shrink", 15, "bias", 0.f, "lambd", 0.5f }, { "Sign", 16 }, { "Abs", 17 },
  { "Neg", 18 }, { "Reciprocal", 19 }, { "Floor", 20 }, { "Ceil", 21 },
  { "Round", 22 }, { "Exp", 23 }, { "Log", 24 }, { "Sqrt", 25 }, { "Sin", 26 },
  { "Cos", 27 }, { "Tan", 28 }, { "Asin", 29 }, { "Acos", 30 }, { "Atan", 31 },
  { "Sinh", 32 }, { "Cosh", 33 }, { "Asinh", 34 }, { "Acosh", 35 },
  { "Atanh", 36 },
};

static const UnaryInfo *
unary_info (const char *op_type)
{
  for (guint i = 0; i < G_N_ELEMENTS (unary_ops); i++)
    if (strcmp (unary_ops[i].name, op_type) == 0)
      return &unary_ops[i];
  return NULL;
}

static gboolean
is_signed_int (ClinferElementType t)
{
  return t == CLINFER_TYPE_I8 || t == CLINFER_TYPE_I16 || t == CLINFER_TYPE_I32
      || t == CLINFER_TYPE_I64;
}

static gboolean
is_unsigned_int (ClinferElementType t)
{
  return t == CLINFER_TYPE_U8 || t == CLINFER_TYPE_U16 || t == CLINFER_TYPE_U32
      || t == CLINFER_TYPE_U64;
}

/* Options of the typed unary program (kernels/eltwise.cl unary_typed,
 * classify_typed) for @node's input type: every op on f64, Relu, Abs,
 * Neg, Sign and Shrink on integers (as the CPU device); NULL otherwise. */
static const char *
unary_typed_options (const ClinferNode *node)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  static const char *int_ops[] = { "Relu", "Abs", "Neg", "Sign", "Shrink" };
  gboolean int_op = FALSE;

  if (t == CLINFER_TYPE_F64)
    return "-DU_T=double -DU_FLOAT -DUSE_FP64";
  for (guint i = 0; i < G_N_ELEMENTS (int_ops); i++)
    int_op |= strcmp (node->op_type, int_ops[i]) == 0;
  if (!int_op || !(is_signed_int (t) || is_unsigned_int (t)))
    return NULL;
  switch (t) {
    case CLINFER_TYPE_I8: return "-DU_T=char";
    case CLINFER_TYPE_I16: return "-DU_T=short";
    case CLINFER_TYPE_I32: return "-DU_T=int";
    case CLINFER_TYPE_I64: return "-DU_T=long";
    case CLINFER_TYPE_U8: return "-DU_T=uchar -DU_UNSIGNED";
    case CLINFER_TYPE_U16: return "-DU_T=ushort -DU_UNSIGNED";
    case CLINFER_TYPE_U32: return "-DU_T=uint -DU_UNSIGNED";
    default: return "-DU_T=ulong -DU_UNSIGNED";
  }
}

static gboolean
unary_typed_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  if (node->outputs[0].type != clinfer_ocl_in_type (node, 0)) {
    *reason = "output of another element type than the input";
    return FALSE;
  }
  if (!clinfer_ocl_fp64_ok (dev, clinfer_ocl_in_type (node, 0), reason))
    return FALSE;
  return TRUE;
}

gboolean
clinfer_ocl_unary_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (unary_info (node->op_type) == NULL) {
    *reason = "no OpenCL kernel for this op";
    return FALSE;
  }
  if (strcmp (node->op_type, "Clip") == 0 && node->opset >= 11
      && !clinfer_ocl_float_type (clinfer_ocl_in_type (node, 0)))
    return clinfer_ocl_clip_typed_supports (dev, node, reason);
  if (unary_typed_options (node))
    return unary_typed_supports (dev, node, reason);
  return float_inputs (node, node->n_inputs, reason);
}

/* Clip-11+ bounds from constant inputs 1 and 2 (absent: no bound). */
static void
clip_bounds (const ClinferNode *node, float *lo, float *hi)
{
  const ClinferTensor *t;

  *lo = -INFINITY;
  *hi = INFINITY;
  if ((t = clinfer_ocl_const_input (node, 1)) && clinfer_tensor_get_n_elements (t))
    *lo = (float) clinfer_tensor_get_as_double (t, 0);
  if ((t = clinfer_ocl_const_input (node, 2)) && clinfer_tensor_get_n_elements (t))
    *hi = (float) clinfer_tensor_get_as_double (t, 0);
}

static gboolean
clip_bounds_constant (const ClinferNode *node)
{
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_const_input (node, i) == NULL)
      return FALSE;
  return TRUE;
}

/* Clip whose bounds come from other nodes: read on the device. */
static gboolean
clip_tensor_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  OclLaunch *l = clinfer_ocl_launch_new (b, "eltwise",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)), "clip_tensor",
      error);

  if (l == NULL)
    return FALSE;
  for (guint i = 0; i < 3; i++)
    clinfer_ocl_arg_input (l, i);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, node->n_inputs > 1 && node->inputs[1].node != NULL);
  clinfer_ocl_arg_int (l, node->n_inputs > 2 && node->inputs[2].node != NULL);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_unary_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const UnaryInfo *info = unary_info (node->op_type);
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  float a = info->a_def, c = info->b_def;
  const char *typed;
  OclLaunch *l;

  if (info->op == 10 && node->opset >= 11
      && !clinfer_ocl_float_type (clinfer_ocl_in_type (node, 0)))
    return clinfer_ocl_clip_typed_build (b, node, error);
  if (info->op == 10 && node->opset >= 11 && !clip_bounds_constant (node))
    return clip_tensor_build (b, node, error);
  if (info->op == 10 && node->opset >= 11)
    clip_bounds (node, &a, &c);
  else if ((info->a_name && !clinfer_node_attr_float (node, info->a_name,
              info->a_def, &a, error))
      || (info->b_name && !clinfer_node_attr_float (node, info->b_name,
              info->b_def, &c, error)))
    return FALSE;
  typed = unary_typed_options (node);
  l = clinfer_ocl_launch_new (b, "eltwise", typed ? typed
      : clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      typed ? "unary_typed" : "unary", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, info->op);
  clinfer_ocl_arg_float (l, a);
  clinfer_ocl_arg_float (l, c);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  g_free (b->impl->name);
  b->impl->name = g_strdup_printf ("ocl:unary_%s", info->name);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* BatchNormalization (inference)                                    */

/* Opset 14+ training_mode (batch statistics, running mean/var outputs). */
static gboolean
bn_training (const ClinferNode *node)
{
  int64_t training = 0;

  return node->opset >= 14 && clinfer_node_attr_int (node, "training_mode", 0,
      &training, NULL) && training != 0;
}

/* f64 BatchNormalization always reads its statistics on the device (the
 * folded affine map is f32). */
static gboolean
bn_f64 (const ClinferNode *node)
{
  return clinfer_ocl_in_type (node, 0) == CLINFER_TYPE_F64;
}

/* Inputs 0 .. @n - 1 and output 0 all of input 0's type. */
static gboolean
same_types (const ClinferNode *node, guint n, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (node->outputs[0].type != t) {
    *reason = "output of another element type than the input";
    return FALSE;
  }
  for (guint i = 1; i < n && i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_in_type (node, i) != t) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  return TRUE;
}

static gboolean
bn_params_constant (const ClinferNode *node)
{
  for (guint i = 1; i < 5; i++)
    if (clinfer_ocl_const_input (node, i) == NULL)
      return FALSE;
  return TRUE;
}

gboolean
clinfer_ocl_batchnorm_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  int64_t spatial = 1;

  if (node->n_outputs > 1 && !bn_training (node)) {
    *reason = "training outputs without training_mode (opset < 14)";
    return FALSE;
  }
  if (node->n_inputs < 5 || clinfer_node_input_desc (node, 0)->shape.rank < 2) {
    *reason = "expected X (rank >= 2), scale, B, mean, var";
    return FALSE;
  }
  for (guint i = 1; i < 5; i++)
    if (node->inputs[i].node == NULL) {
      *reason = "expected X (rank >= 2), scale, B, mean, var";
      return FALSE;
    }
  for (guint i = 1; i < node->n_outputs; i++)
    if (node->outputs[i].type != clinfer_ocl_in_type (node, 0)) {
      *reason = "running mean/var outputs of another type than X";
      return FALSE;
    }
  if (!clinfer_ocl_fp64_ok (dev, clinfer_ocl_in_type (node, 0), reason))
    return FALSE;
  /* The kernels take one statistic per channel. */
  if (node->opset < 9 && clinfer_node_attr_int (node, "spatial", 1, &spatial,
          NULL) && spatial == 0) {
    *reason = "spatial=0 (statistics per channel and position)";
    return FALSE;
  }
  if (!bn_params_constant (node) || bn_training (node) || bn_f64 (node)) {
    /* Statistics on the device: per channel, all of X's type. */
    return bn_f64 (node) ? same_types (node, 5, reason)
        : float_inputs (node, 5, reason);
  }
  return float_inputs (node, 1, reason);
}

/* BatchNormalization reading scale, B, mean and var on the device; in
 * training mode the batch statistics (scratch buffers) replace mean and
 * var, and the running ones go to outputs 1 and 2. */
static gboolean
batchnorm_tensor_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  const char *opts = clinfer_ocl_norm_options (clinfer_ocl_in_type (node, 0));
  gsize esize = clinfer_element_type_size (clinfer_ocl_in_type (node, 0));
  int64_t channels = xs->dims[1], inner = 1, n = clinfer_shape_n_elements (xs);
  gboolean training = bn_training (node);
  guint stats[2] = { 0, 0 };
  float eps = 1e-5f, momentum = 0.9f;
  OclLaunch *l;

  if (!clinfer_node_attr_float (node, "epsilon", 1e-5f, &eps, error)
      || !clinfer_node_attr_float (node, "momentum", 0.9f, &momentum, error))
    return FALSE;
  for (int i = 2; i < xs->rank; i++)
    inner *= xs->dims[i];
  if (training) {
    stats[0] = clinfer_ocl_scratch_new (b, esize * MAX (channels, 1));
    stats[1] = clinfer_ocl_scratch_new (b, esize * MAX (channels, 1));
    if (!(l = clinfer_ocl_launch_new (b, "norm", opts, "bn_stats", error)))
      return FALSE;
    clinfer_ocl_arg_input (l, 0);
    clinfer_ocl_arg_input (l, 3);
    clinfer_ocl_arg_input (l, 4);
    clinfer_ocl_arg_scratch (l, stats[0]);
    clinfer_ocl_arg_scratch (l, stats[1]);
    /* Absent outputs are never written: the batch statistics stand in. */
    if (node->n_outputs > 1)
      clinfer_ocl_arg_output (l, 1);
    else
      clinfer_ocl_arg_scratch (l, stats[0]);
    if (node->n_outputs > 2)
      clinfer_ocl_arg_output (l, 2);
    else
      clinfer_ocl_arg_scratch (l, stats[1]);
    clinfer_ocl_arg_int (l, (int) xs->dims[0]);
    clinfer_ocl_arg_int (l, (int) channels);
    clinfer_ocl_arg_int (l, (int) inner);
    clinfer_ocl_arg_float (l, momentum);
    clinfer_ocl_arg_int (l, (node->n_outputs > 1 ? 1 : 0)
        | (node->n_outputs > 2 ? 2 : 0));
    clinfer_ocl_launch_set_global (l, 1, channels, 1, 1);
  }
  if (!(l = clinfer_ocl_launch_new (b, "norm", opts, "bn_apply", error)))
    return FALSE;
  for (guint i = 0; i < 3; i++)
    clinfer_ocl_arg_input (l, i);
  for (guint i = 0; i < 2; i++)
    if (training)
      clinfer_ocl_arg_scratch (l, stats[i]);
    else
      clinfer_ocl_arg_input (l, 3 + i);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) channels);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_float (l, eps);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

gboolean
clinfer_ocl_batchnorm_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *xs = clinfer_ocl_in_shape (b, 0);
  int64_t channels = xs->dims[1], inner = 1;
  int64_t n = clinfer_shape_n_elements (xs);
  g_autofree float *scale = g_new0 (float, MAX (channels, 1));
  g_autofree float *shift = g_new0 (float, MAX (channels, 1));
  float eps = 1e-5f;
  OclLaunch *l;

  if (!bn_params_constant (node) || bn_training (node) || bn_f64 (node))
    return batchnorm_tensor_build (b, node, error);
  if (!clinfer_node_attr_float (node, "epsilon", 1e-5f, &eps, error))
    return FALSE;
  for (int i = 2; i < xs->rank; i++)
    inner *= xs->dims[i];
  for (int64_t c = 0; c < channels; c++) {
    double sc = clinfer_tensor_get_as_double (clinfer_ocl_const_input (node, 1), c);
    double bi = clinfer_tensor_get_as_double (clinfer_ocl_const_input (node, 2), c);
    double mu = clinfer_tensor_get_as_double (clinfer_ocl_const_input (node, 3), c);
    double var = clinfer_tensor_get_as_double (clinfer_ocl_const_input (node, 4), c);
    double k = sc / sqrt (var + (double) eps);
    scale[c] = (float) k;
    shift[c] = (float) (bi - mu * k);
  }
  l = clinfer_ocl_launch_new (b, "eltwise",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      "channel_affine", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  if (!clinfer_ocl_arg_data (b, l, scale, sizeof (float) * channels, error)
      || !clinfer_ocl_arg_data (b, l, shift, sizeof (float) * channels, error))
    return FALSE;
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) channels);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* IsNaN, IsInf                                                      */

gboolean
clinfer_ocl_classify_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (t == CLINFER_TYPE_F64 && dev->core->fp64)
    return TRUE;
  if (!clinfer_ocl_float_type (t)) {
    *reason = t == CLINFER_TYPE_F64 ? "f64 needs the cl_khr_fp64 extension, "
        "which this OpenCL device lacks" : "element type is not a float type";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_classify_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  int64_t neg = 1, pos = 1;
  gboolean f64;
  OclLaunch *l;

  if (!clinfer_node_attr_int (node, "detect_negative", 1, &neg, error)
      || !clinfer_node_attr_int (node, "detect_positive", 1, &pos, error))
    return FALSE;
  f64 = clinfer_ocl_in_type (node, 0) == CLINFER_TYPE_F64;
  l = clinfer_ocl_launch_new (b, "eltwise", f64
      ? "-DU_T=double -DU_FLOAT -DUSE_FP64"
      : clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      f64 ? "classify_typed" : "classify", error);
  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, strcmp (node->op_type, "IsNaN") == 0 ? 0 : 1);
  clinfer_ocl_arg_int (l, neg != 0);
  clinfer_ocl_arg_int (l, pos != 0);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- com.clinfer EltwiseChain (kernels/eltwise.cl ew_chain) ---- */

gboolean
clinfer_ocl_eltwise_chain_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason)
{
  if (!clinfer_ocl_float_type (node->outputs[0].type)) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  if (clinfer_shape_n_elements (&node->outputs[0].shape) > G_MAXINT32) {
    *reason = "more than 2^31 elements";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_eltwise_chain_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferChain *c = node->op_data;   /* zero past n_ops */
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  OclLaunch *l;

  G_STATIC_ASSERT (CLINFER_CHAIN_MAX_OPS == 8);
  l = clinfer_ocl_launch_new (b, "eltwise",
      clinfer_ocl_data_options (node->outputs[0].type), "ew_chain", error);
  if (l == NULL)
    return FALSE;
  /* Absent operands are bound to x0 (never read): no NULL pointer a
   * compiler could load from speculatively. */
  for (guint i = 0; i < CLINFER_CHAIN_MAX_INPUTS; i++)
    clinfer_ocl_arg_input (l, i < node->n_inputs ? i : 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) c->n_ops);
  clinfer_ocl_arg_int8 (l, c->op, 8);
  clinfer_ocl_arg_int8 (l, c->operand, 8);
  clinfer_ocl_arg_raw (l, c->a, sizeof (c->a));
  clinfer_ocl_arg_raw (l, c->b, sizeof (c->b));
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  clinfer_ocl_launch_tile0 (l, 64);
  return TRUE;
}
