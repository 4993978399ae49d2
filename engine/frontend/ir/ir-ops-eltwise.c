/* clinfer — OpenVINO IR op translators: element-wise ops and activations. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Element-wise                                                      */

static gboolean
tr_onnx_1to1 (IrReader *r, IrLayer *l, GError **error)
{
  ir_simple (r, l, l->def->onnx_op, l->def->onnx_opset, l->inputs->len,
      l->outputs->len);
  return TRUE;
}

static gboolean
tr_binary (IrReader *r, IrLayer *l, GError **error)
{
  if (!ir_check_broadcast (r, l, error))
    return FALSE;
  return tr_onnx_1to1 (r, l, error);
}

static gboolean
tr_mod (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n;

  if (!ir_check_broadcast (r, l, error))
    return FALSE;
  n = ir_simple (r, l, "Mod", 13, 2, 1);
  /* Mod is C fmod (sign of the dividend); FloorMod is Python's. */
  clinfer_node_set_attr (n, "fmod", clinfer_attr_new_int (
      g_ascii_strcasecmp (l->def->type, "Mod") == 0));
  return TRUE;
}

static gboolean
tr_not_equal (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *eq, *not;

  if (!ir_check_broadcast (r, l, error))
    return FALSE;
  eq = ir_add_node (r, l, "Equal", 13, 2, 1, "equal");
  ir_sink (l, 0, eq, 0);
  ir_sink (l, 1, eq, 1);
  not = ir_unary (r, l, "Not", NULL, eq);
  ir_output (r, l, 0, not, 0);
  return TRUE;
}

static gboolean
tr_squared_difference (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *d, *sq;

  if (!ir_check_broadcast (r, l, error))
    return FALSE;
  d = ir_add_node (r, l, "Sub", 13, 2, 1, "diff");
  ir_sink (l, 0, d, 0);
  ir_sink (l, 1, d, 1);
  sq = ir_binary (r, l, "Mul", NULL, d, d);
  ir_output (r, l, 0, sq, 0);
  return TRUE;
}

static gboolean
tr_clamp (IrReader *r, IrLayer *l, GError **error)
{
  float lo, hi;
  ClinferNode *n;

  if (!ir_attr_float (r, l, "min", TRUE, 0.f, &lo, error)
      || !ir_attr_float (r, l, "max", TRUE, 0.f, &hi, error))
    return FALSE;
  n = ir_simple (r, l, "Clip", 6, 1, 1);
  clinfer_node_set_attr (n, "min", clinfer_attr_new_float (lo));
  clinfer_node_set_attr (n, "max", clinfer_attr_new_float (hi));
  return TRUE;
}

static gboolean
tr_elu (IrReader *r, IrLayer *l, GError **error)
{
  float alpha;

  if (!ir_attr_float (r, l, "alpha", TRUE, 1.f, &alpha, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, "Elu", 6, 1, 1), "alpha",
      clinfer_attr_new_float (alpha));
  return TRUE;
}

static gboolean
tr_hsigmoid (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_simple (r, l, "HardSigmoid", 6, 1, 1);

  clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (1.f / 6.f));
  clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (0.5f));
  return TRUE;
}

/* HardSigmoid-1 and Selu-1 take their parameters as Const inputs. */
static gboolean
tr_two_param_activation (IrReader *r, IrLayer *l, GError **error)
{
  gboolean selu = g_ascii_strcasecmp (l->def->type, "Selu") == 0;
  float a, b;
  ClinferNode *n;

  if (!ir_const_float (r, l, 1, "alpha", &a, error)
      || !ir_const_float (r, l, 2, selu ? "lambda" : "beta", &b, error))
    return FALSE;
  n = ir_add_node (r, l, selu ? "Selu" : "HardSigmoid", 6, 1, 1, NULL);
  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (a));
  clinfer_node_set_attr (n, selu ? "gamma" : "beta", clinfer_attr_new_float (b));
  return TRUE;
}

/* Swish: x * sigmoid (beta * x), beta an optional scalar input. */
static gboolean
tr_swish (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *arg = x, *sig, *mul;
  float beta = 1.f;

  ir_sink (l, 0, x, 0);
  if (l->inputs->len > 1) {
    ClinferTensor *t;
    if (!ir_try_const (r, l, 1, &t, error))
      return FALSE;
    if (t && clinfer_tensor_get_n_elements (t) == 1)
      beta = (float) clinfer_tensor_get_as_double (t, 0);
    if (t == NULL || beta != 1.f) {
      arg = ir_binary (r, l, "Mul", "beta_x", x, NULL);
      ir_sink (l, 1, arg, 1);
    }
  }
  sig = ir_unary (r, l, "Sigmoid", "sigmoid", arg);
  mul = ir_binary (r, l, "Mul", NULL, x, sig);
  ir_output (r, l, 0, mul, 0);
  return TRUE;
}

/* Gelu: 0.5 x (1 + erf (x / sqrt 2)) or the tanh approximation. */
static gboolean
tr_gelu (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "erf", "tanh", NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *inner, *one_plus, *y;
  int mode;

  if (!ir_attr_enum (r, l, "approximation_mode", modes, 0, &mode, error))
    return FALSE;
  ir_sink (l, 0, x, 0);
  if (mode == 0) {
    inner = ir_binary (r, l, "Mul", "scaled", x,
        ir_add_scalar (r, l, "rsqrt2", t, M_SQRT1_2));
    inner = ir_unary (r, l, "Erf", "erf", inner);
  } else {
    ClinferNode *x3 = ir_binary (r, l, "Mul", "x3", ir_binary (r, l, "Mul",
        "x2", x, x), x);
    inner = ir_binary (r, l, "Add", "poly", x, ir_binary (r, l, "Mul", "cx3",
        x3, ir_add_scalar (r, l, "c", t, 0.044715)));
    inner = ir_binary (r, l, "Mul", "scaled", inner,
        ir_add_scalar (r, l, "sqrt_2_pi", t, sqrt (2.0 / G_PI)));
    inner = ir_unary (r, l, "Tanh", "tanh", inner);
  }
  one_plus = ir_binary (r, l, "Add", "one_plus", inner,
      ir_add_scalar (r, l, "one", t, 1.0));
  y = ir_binary (r, l, "Mul", "half_x", x, ir_add_scalar (r, l, "half", t, 0.5));
  y = ir_binary (r, l, "Mul", NULL, y, one_plus);
  ir_output (r, l, 0, y, 0);
  return TRUE;
}

/* PRelu: a 1-D slope of C values applies along the channel axis (1) in
 * OpenVINO, along the last axis in ONNX: reshape it to [C, 1, ..., 1]. */
static gboolean
tr_prelu (IrReader *r, IrLayer *l, GError **error)
{
  ClinferShape xs = ir_input_shape (l, 0), ss = ir_input_shape (l, 1);
  ClinferNode *n = ir_add_node (r, l, "PRelu", 9, 2, 1, NULL);

  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  /* A 1-D slope as long as the channels runs along them (axis 1); any
   * other slope broadcasts numpy-style, as ONNX's. */
  if (ss.rank == 1 && xs.rank > 2 && ss.dims[0] != 1
      && (xs.dims[1] < 0 || ss.dims[0] == xs.dims[1])) {
    int64_t dims[CLINFER_MAX_RANK];
    ClinferNode *reshape = ir_add_node (r, l, "Reshape", 14, 2, 1, "slope");
    dims[0] = -1;
    for (int i = 1; i < xs.rank - 1; i++)
      dims[i] = 1;
    ir_sink (l, 1, reshape, 0);
    ir_connect (reshape, 1, ir_add_const_i64 (r, l, "slope_shape", dims,
        (gsize) xs.rank - 1, FALSE));
    ir_connect (n, 1, reshape);
  } else {
    ir_sink (l, 1, n, 1);
  }
  return TRUE;
}

static gboolean
tr_softmax (IrReader *r, IrLayer *l, GError **error)
{
  int64_t axis;

  if (!ir_attr_int (r, l, "axis", FALSE, 1, &axis, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, l->def->onnx_op, 13, 1, 1), "axis",
      clinfer_attr_new_int (axis));
  return TRUE;
}

static gboolean
tr_round (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "half_to_even", "half_away_from_zero",
    NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x, *mag, *y;
  int mode;

  if (!ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  if (mode == 0) {
    ir_simple (r, l, "Round", 11, 1, 1);
    return TRUE;
  }
  /* sign (x) * floor (|x| + 0.5) */
  x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ir_sink (l, 0, x, 0);
  mag = ir_binary (r, l, "Add", "abs_half", ir_unary (r, l, "Abs", "abs", x),
      ir_add_scalar (r, l, "half", t, 0.5));
  y = ir_binary (r, l, "Mul", NULL, ir_unary (r, l, "Sign", "sign", x),
      ir_unary (r, l, "Floor", "floor", mag));
  ir_output (r, l, 0, y, 0);
  return TRUE;
}

static gboolean
tr_is_inf (IrReader *r, IrLayer *l, GError **error)
{
  gboolean neg, pos;
  ClinferNode *n;

  if (!ir_attr_bool (r, l, "detect_negative", TRUE, &neg, error)
      || !ir_attr_bool (r, l, "detect_positive", TRUE, &pos, error))
    return FALSE;
  n = ir_simple (r, l, "IsInf", 10, 1, 1);
  clinfer_node_set_attr (n, "detect_negative", clinfer_attr_new_int (neg));
  clinfer_node_set_attr (n, "detect_positive", clinfer_attr_new_int (pos));
  return TRUE;
}

static gboolean
tr_select (IrReader *r, IrLayer *l, GError **error)
{
  if (!ir_check_broadcast (r, l, error))
    return FALSE;
  ir_simple (r, l, "Where", 16, 3, 1);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define ONE(type, onnx, opset, since) \
  { type, since, 0, 1, 1, 1, 1, tr_onnx_1to1, onnx, opset }
#define BIN(type, onnx, opset) \
  { type, 1, 0, 2, 2, 1, 1, tr_binary, onnx, opset }

const IrOpDef clinfer_ir_ops_eltwise[] = {
  BIN ("Add", "Add", 14),
  BIN ("Subtract", "Sub", 14),
  BIN ("Multiply", "Mul", 14),
  BIN ("Divide", "Div", 14),
  BIN ("Maximum", "Max", 13),
  BIN ("Minimum", "Min", 13),
  BIN ("Power", "Pow", 15),
  BIN ("Equal", "Equal", 13),
  BIN ("Less", "Less", 13),
  BIN ("LessEqual", "LessOrEqual", 16),
  BIN ("Greater", "Greater", 13),
  BIN ("GreaterEqual", "GreaterOrEqual", 16),
  BIN ("LogicalAnd", "And", 7),
  BIN ("LogicalOr", "Or", 7),
  BIN ("LogicalXor", "Xor", 7),
  { "NotEqual", 1, 0, 2, 2, 1, 1, tr_not_equal, NULL, 0 },
  { "SquaredDifference", 1, 0, 2, 2, 1, 1, tr_squared_difference, NULL, 0 },
  { "Mod", 1, 0, 2, 2, 1, 1, tr_mod, NULL, 0 },
  { "FloorMod", 1, 0, 2, 2, 1, 1, tr_mod, NULL, 0 },
  ONE ("Relu", "Relu", 14, 1),
  ONE ("Sigmoid", "Sigmoid", 13, 1),
  ONE ("Tanh", "Tanh", 13, 1),
  ONE ("Exp", "Exp", 13, 1),
  ONE ("Sqrt", "Sqrt", 13, 1),
  ONE ("Abs", "Abs", 13, 1),
  ONE ("Ceiling", "Ceil", 13, 1),
  ONE ("Floor", "Floor", 13, 1),
  ONE ("Log", "Log", 13, 1),
  ONE ("Negative", "Neg", 13, 1),
  ONE ("Sin", "Sin", 7, 1),
  ONE ("Cos", "Cos", 7, 1),
  ONE ("Tan", "Tan", 7, 1),
  ONE ("Asin", "Asin", 7, 1),
  ONE ("Acos", "Acos", 7, 1),
  ONE ("Atan", "Atan", 7, 1),
  ONE ("Sinh", "Sinh", 9, 1),
  ONE ("Cosh", "Cosh", 9, 1),
  ONE ("Asinh", "Asinh", 9, 3),
  ONE ("Acosh", "Acosh", 9, 3),
  ONE ("Atanh", "Atanh", 9, 3),
  ONE ("Erf", "Erf", 13, 1),
  ONE ("Sign", "Sign", 13, 1),
  ONE ("HSwish", "HardSwish", 14, 4),
  ONE ("Mish", "Mish", 18, 4),
  ONE ("SoftPlus", "Softplus", 1, 4),
  ONE ("SoftSign", "Softsign", 1, 9),
  ONE ("LogicalNot", "Not", 1, 1),
  ONE ("IsNaN", "IsNaN", 13, 10),
  ONE ("Identity", "Identity", 16, 16),
  { "IsInf", 10, 0, 1, 1, 1, 1, tr_is_inf, NULL, 0 },
  { "Round", 5, 0, 1, 1, 1, 1, tr_round, NULL, 0 },
  { "Clamp", 1, 0, 1, 1, 1, 1, tr_clamp, NULL, 0 },
  { "Elu", 1, 0, 1, 1, 1, 1, tr_elu, NULL, 0 },
  { "HSigmoid", 5, 0, 1, 1, 1, 1, tr_hsigmoid, NULL, 0 },
  { "HardSigmoid", 1, 0, 3, 3, 1, 1, tr_two_param_activation, NULL, 0 },
  { "Selu", 1, 0, 3, 3, 1, 1, tr_two_param_activation, NULL, 0 },
  { "Swish", 4, 0, 1, 2, 1, 1, tr_swish, NULL, 0 },
  { "Gelu", 2, 0, 1, 1, 1, 1, tr_gelu, NULL, 0 },
  { "PRelu", 1, 0, 2, 2, 1, 1, tr_prelu, NULL, 0 },
  { "SoftMax", 1, 0, 1, 1, 1, 1, tr_softmax, "Softmax", 13 },
  { "LogSoftmax", 5, 0, 1, 1, 1, 1, tr_softmax, "LogSoftmax", 13 },
  { "Select", 1, 0, 3, 3, 1, 1, tr_select, NULL, 0 },
  { NULL }
};
