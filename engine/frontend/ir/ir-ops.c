/* clinfer — OpenVINO IR op translators, part 1: element-wise ops,
 * activations, convolutions, pooling and shape ops. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists every (type, opset range) read. */
#include "frontend/ir/ir-ops.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Shared helpers (declared in ir-ops.h)                             */

ClinferNode *
ir_simple (IrReader *r, IrLayer *l, const char *op_type, int opset,
    guint n_inputs, guint n_outputs)
{
  ClinferNode *n = ir_add_node (r, l, op_type, opset, n_inputs, n_outputs,
      NULL);

  for (guint i = 0; i < n_inputs && i < l->inputs->len; i++)
    ir_sink (l, i, n, i);
  for (guint i = 0; i < n_outputs && i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);
  return n;
}

gboolean
ir_try_const (IrReader *r, IrLayer *l, guint input, ClinferTensor **t,
    GError **error)
{
  GError *err = NULL;

  *t = ir_input_const (r, l, input, &err);
  if (err) {
    g_propagate_error (error, err);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_const_ints (IrReader *r, IrLayer *l, guint input, const char *what,
    int64_t **v, gsize *n, GError **error)
{
  ClinferTensor *t;
  ClinferElementType type;

  *v = NULL;
  *n = 0;
  if (!ir_try_const (r, l, input, &t, error))
    return FALSE;
  type = t ? clinfer_tensor_get_element_type (t) : CLINFER_TYPE_UNDEFINED;
  if (t == NULL || clinfer_element_type_is_float (type)
      || type == CLINFER_TYPE_BOOL || clinfer_tensor_get_shape (t)->rank > 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input %u (%s) must be a Const integer scalar or list", input, what);
    return FALSE;
  }
  *n = (gsize) clinfer_tensor_get_n_elements (t);
  *v = g_new0 (int64_t, MAX (*n, 1));
  for (gsize i = 0; i < *n; i++)
    (*v)[i] = clinfer_tensor_get_as_int64 (t, (int64_t) i);
  return TRUE;
}

gboolean
ir_const_float (IrReader *r, IrLayer *l, guint input, const char *what,
    float *out, GError **error)
{
  ClinferTensor *t;

  if (!ir_try_const (r, l, input, &t, error))
    return FALSE;
  if (t == NULL || clinfer_tensor_get_n_elements (t) != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input %u (%s) must be a Const holding one value", input, what);
    return FALSE;
  }
  *out = (float) clinfer_tensor_get_as_double (t, 0);
  return TRUE;
}

ClinferNode *
ir_add_scalar (IrReader *r, IrLayer *l, const char *suffix,
    ClinferElementType type, double v)
{
  ClinferShape s = clinfer_shape_make (0, NULL);
  g_autoptr (ClinferTensor) t = NULL;
  gpointer p;

  if (type != CLINFER_TYPE_F16 && type != CLINFER_TYPE_F64
      && type != CLINFER_TYPE_BF16)
    type = CLINFER_TYPE_F32;
  t = clinfer_tensor_new (type, &s, NULL);
  p = clinfer_tensor_get_data (t);
  if (type == CLINFER_TYPE_F16)
    *(uint16_t *) p = clinfer_float_to_half ((float) v);
  else if (type == CLINFER_TYPE_BF16)
    *(uint16_t *) p = clinfer_float_to_bfloat16 ((float) v);
  else if (type == CLINFER_TYPE_F64)
    *(double *) p = v;
  else
    *(float *) p = (float) v;
  return ir_add_const (r, l, suffix, t);
}

ClinferNode *
ir_binary (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    ClinferNode *a, ClinferNode *b)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 13, 2, 1, suffix);

  if (a)
    ir_connect (n, 0, a);
  if (b)
    ir_connect (n, 1, b);
  return n;
}

ClinferNode *
ir_unary (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    ClinferNode *a)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 13, 1, 1, suffix);

  if (a)
    ir_connect (n, 0, a);
  return n;
}

void
ir_sink_int_list (IrReader *r, IrLayer *l, guint input, ClinferNode *node,
    guint index, const char *suffix)
{
  ClinferTensor *t = ir_input_const (r, l, input, NULL);
  ClinferElementType type = ir_input_type (l, input);
  ClinferNode *cast = NULL, *flat;

  if (t && !clinfer_element_type_is_float (clinfer_tensor_get_element_type (t))
      && clinfer_tensor_get_shape (t)->rank <= 1) {
    gsize n = (gsize) clinfer_tensor_get_n_elements (t);
    g_autofree int64_t *v = g_new0 (int64_t, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      v[i] = clinfer_tensor_get_as_int64 (t, (int64_t) i);
    ir_connect (node, index, ir_add_const_i64 (r, l, suffix, v, n, FALSE));
    return;
  }
  /* Computed: make it i64 and 1-D at run time. */
  if (type != CLINFER_TYPE_I64) {
    g_autofree char *s = g_strdup_printf ("%s/to_i64", suffix);
    cast = ir_add_node (r, l, "Cast", 13, 1, 1, s);
    clinfer_node_set_attr (cast, "to", clinfer_attr_new_int (CLINFER_TYPE_I64));
    ir_sink (l, input, cast, 0);
  }
  {
    g_autofree char *s = g_strdup_printf ("%s/flat", suffix);
    int64_t minus1 = -1;
    flat = ir_add_node (r, l, "Reshape", 14, 2, 1, s);
    if (cast)
      ir_connect (flat, 0, cast);
    else
      ir_sink (l, input, flat, 0);
    ir_connect (flat, 1, ir_add_const_i64 (r, l, s, &minus1, 1, FALSE));
  }
  ir_connect (node, index, flat);
}

ClinferNode *
ir_cast (IrReader *r, IrLayer *l, const char *suffix, ClinferElementType to)
{
  ClinferNode *n = ir_add_node (r, l, "Cast", 13, 1, 1, suffix);

  clinfer_node_set_attr (n, "to", clinfer_attr_new_int (to));
  return n;
}

gboolean
ir_check_broadcast (IrReader *r, IrLayer *l, GError **error)
{
  const char *v = ir_attr_str (l, "auto_broadcast", "numpy");

  if (g_ascii_strcasecmp (v, "numpy") == 0 || g_ascii_strcasecmp (v, "none") == 0
      || g_ascii_strcasecmp (v, "explicit") == 0)
    return TRUE;
  if (g_ascii_strcasecmp (v, "pdpd") == 0
      && strcmp (ir_attr_str (l, "axis", "-1"), "-1") == 0)
    return TRUE;              /* pdpd with axis -1 aligns like numpy */
  ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
      "auto_broadcast='%s' is not supported (expected numpy or none)", v);
  return FALSE;
}

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
/* Convolution and pooling                                           */

static const char *const auto_pad_names[] = { "explicit", "same_upper",
  "same_lower", "valid", "notset", NULL };
static const char *const onnx_auto_pad[] = { "NOTSET", "SAME_UPPER",
  "SAME_LOWER", "VALID", "NOTSET" };

/* strides, dilations (when @with_dilations), pads_begin/pads_end ->
 * pads, auto_pad: the window attributes shared by conv and pooling. */
static gboolean
set_window_attrs (IrReader *r, IrLayer *l, ClinferNode *n,
    gboolean with_dilations, GError **error)
{
  g_autofree int64_t *strides = NULL, *dil = NULL, *pb = NULL, *pe = NULL;
  gsize ns, nd, nb, ne;
  int ap;

  if (!ir_attr_ints (r, l, "strides", FALSE, &strides, &ns, error)
      || (with_dilations
          && !ir_attr_ints (r, l, "dilations", FALSE, &dil, &nd, error))
      || !ir_attr_ints (r, l, "pads_begin", FALSE, &pb, &nb, error)
      || !ir_attr_ints (r, l, "pads_end", FALSE, &pe, &ne, error)
      || !ir_attr_enum (r, l, "auto_pad", auto_pad_names, 0, &ap, error))
    return FALSE;
  if (nb != ne) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "pads_begin has %" G_GSIZE_FORMAT " values and pads_end %"
        G_GSIZE_FORMAT ", expected the same count", nb, ne);
    return FALSE;
  }
  if (ns)
    clinfer_node_set_attr (n, "strides", clinfer_attr_new_ints (strides, ns));
  if (with_dilations && nd)
    clinfer_node_set_attr (n, "dilations", clinfer_attr_new_ints (dil, nd));
  if ((ap == 0 || ap == 4) && nb) {
    g_autofree int64_t *pads = g_new (int64_t, 2 * nb);
    memcpy (pads, pb, nb * sizeof (int64_t));
    memcpy (pads + nb, pe, nb * sizeof (int64_t));
    clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (pads, 2 * nb));
  }
  clinfer_node_set_attr (n, "auto_pad", clinfer_attr_new_string (onnx_auto_pad[ap]));
  return TRUE;
}

/* Group weights [G, A, B, k...] -> [G * A, B, k...], on a Const in place
 * or with a Reshape. */
static gboolean
sink_group_weights (IrReader *r, IrLayer *l, ClinferNode *conv, GError **error)
{
  ClinferShape ws = ir_input_shape (l, 1);
  ClinferTensor *t;
  int64_t dims[CLINFER_MAX_RANK];
  ClinferShape s;

  if (!ir_try_const (r, l, 1, &t, error))
    return FALSE;
  if (t)
    ws = *clinfer_tensor_get_shape (t);
  if (ws.rank < 3 || !clinfer_shape_is_static (&ws)) {
    g_autofree char *str = clinfer_shape_to_string (&ws);
    ir_set_error (r, l, error, CLINFER_ERROR_SHAPE_MISMATCH,
        "group weights have shape %s, expected a static [G, Cout/G, Cin/G, "
        "k...] shape", str);
    return FALSE;
  }
  dims[0] = ws.dims[0] * ws.dims[1];
  for (int i = 2; i < ws.rank; i++)
    dims[i - 1] = ws.dims[i];
  s = clinfer_shape_make (ws.rank - 1, dims);
  clinfer_node_set_attr (conv, "group", clinfer_attr_new_int (ws.dims[0]));
  if (t && clinfer_tensor_is_contiguous (t)) {
    g_autoptr (ClinferTensor) view = clinfer_tensor_new_wrapped (
        clinfer_tensor_get_element_type (t), &s, NULL,
        clinfer_tensor_get_data (t), (GDestroyNotify) clinfer_tensor_unref,
        clinfer_tensor_ref (t), error);
    if (view == NULL)
      return FALSE;
    ir_connect (conv, 1, ir_add_const (r, l, "weights", view));
  } else {
    ClinferNode *reshape = ir_add_node (r, l, "Reshape", 14, 2, 1, "weights");
    ir_sink (l, 1, reshape, 0);
    ir_connect (reshape, 1, ir_add_const_i64 (r, l, "weights_shape", dims,
        (gsize) s.rank, FALSE));
    ir_connect (conv, 1, reshape);
  }
  return TRUE;
}

static gboolean
tr_convolution (IrReader *r, IrLayer *l, GError **error)
{
  gboolean group = g_ascii_strcasecmp (l->def->type, "GroupConvolution") == 0;
  ClinferNode *n = ir_add_node (r, l, "Conv", 11, 2, 1, NULL);

  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  if (group)
    return sink_group_weights (r, l, n, error)
        && set_window_attrs (r, l, n, TRUE, error);
  ir_sink (l, 1, n, 1);
  return set_window_attrs (r, l, n, TRUE, error);
}

/* ConvolutionBackpropData (weights [Cin, Cout, k...], the ONNX layout) and
 * its group form ([G, Cin/G, Cout/G, k...]). */
static gboolean
tr_conv_backprop (IrReader *r, IrLayer *l, GError **error)
{
  gboolean group = g_ascii_strcasecmp (l->def->type,
      "GroupConvolutionBackpropData") == 0;
  ClinferNode *n = ir_add_node (r, l, "ConvTranspose", 11, 2, 1, NULL);
  g_autofree int64_t *op = NULL, *os = NULL;
  gsize nop, nos;

  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  if (!group)
    ir_sink (l, 1, n, 1);
  else if (!sink_group_weights (r, l, n, error))
    return FALSE;
  if (!set_window_attrs (r, l, n, TRUE, error)
      || !ir_attr_ints (r, l, "output_padding", FALSE, &op, &nop, error))
    return FALSE;
  if (nop)
    clinfer_node_set_attr (n, "output_padding", clinfer_attr_new_ints (op, nop));
  if (l->inputs->len > 2) {
    if (!ir_const_ints (r, l, 2, "output_shape", &os, &nos, error))
      return FALSE;
    clinfer_node_set_attr (n, "output_shape", clinfer_attr_new_ints (os, nos));
  }
  return TRUE;
}

static const char *const rounding_names[] = { "floor", "ceil", "ceil_torch",
  NULL };

static gboolean
set_pool_attrs (IrReader *r, IrLayer *l, ClinferNode *n, gboolean dilations,
    GError **error)
{
  g_autofree int64_t *kernel = NULL;
  gsize nk;
  int rounding;

  if (!ir_attr_ints (r, l, "kernel", TRUE, &kernel, &nk, error)
      || !ir_attr_enum (r, l, "rounding_type", rounding_names, 0, &rounding,
          error)
      || !set_window_attrs (r, l, n, dilations, error))
    return FALSE;
  clinfer_node_set_attr (n, "kernel_shape", clinfer_attr_new_ints (kernel, nk));
  clinfer_node_set_attr (n, "ceil_mode", clinfer_attr_new_int (rounding != 0));
  return TRUE;
}

/* MaxPool-1 (values), -8 and -14 (values, indices over the flattened
 * tensor when axis is 0). */
static gboolean
tr_max_pool (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, "MaxPool", 12, 1, l->outputs->len, NULL);
  int64_t axis = 0;
  const char *itype = ir_attr_str (l, "index_element_type", "i64");

  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  if (!set_pool_attrs (r, l, n, l->opset >= 8, error)
      || !ir_attr_int (r, l, "axis", FALSE, 0, &axis, error))
    return FALSE;
  /* Indices of another axis have no ONNX equivalent: a consumer of that
   * output fails when the edges are wired. */
  if (l->outputs->len > 1 && axis == 0) {
    ClinferElementType it = clinfer_ir_type_from_name (itype);
    if (it == CLINFER_TYPE_I64) {
      ir_output (r, l, 1, n, 1);
    } else {
      ClinferNode *cast = ir_cast (r, l, "indices", it);
      cast->inputs[0].node = n;
      cast->inputs[0].port = 1;
      ir_output (r, l, 1, cast, 0);
    }
  }
  return TRUE;
}

static gboolean
tr_avg_pool (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_simple (r, l, "AveragePool", 11, 1, 1);
  gboolean exclude;

  if (!ir_attr_bool (r, l, "exclude-pad", FALSE, &exclude, error)
      || !set_pool_attrs (r, l, n, FALSE, error))
    return FALSE;
  clinfer_node_set_attr (n, "count_include_pad", clinfer_attr_new_int (!exclude));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Shape ops                                                         */

static gboolean
tr_concat (IrReader *r, IrLayer *l, GError **error)
{
  int64_t axis;

  if (!ir_attr_int (r, l, "axis", TRUE, 0, &axis, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, "Concat", 13, l->inputs->len, 1),
      "axis", clinfer_attr_new_int (axis));
  return TRUE;
}

/* special_zero true: 0 copies the input dim (ONNX allowzero 0); false: 0
 * is a real zero (allowzero 1). */
static gboolean
tr_reshape (IrReader *r, IrLayer *l, GError **error)
{
  gboolean special_zero;
  ClinferNode *n;

  if (!ir_attr_bool (r, l, "special_zero", FALSE, &special_zero, error))
    return FALSE;
  n = ir_add_node (r, l, "Reshape", 14, 2, 1, NULL);
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "shape");
  ir_output (r, l, 0, n, 0);
  clinfer_node_set_attr (n, "allowzero", clinfer_attr_new_int (!special_zero));
  return TRUE;
}

static gboolean
tr_transpose (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *order = NULL;
  gsize n;
  ClinferNode *t;

  if (!ir_const_ints (r, l, 1, "order", &order, &n, error))
    return FALSE;
  t = ir_add_node (r, l, "Transpose", 13, 1, 1, NULL);
  ir_sink (l, 0, t, 0);
  ir_output (r, l, 0, t, 0);
  if (n)                     /* empty order reverses, as ONNX's default */
    clinfer_node_set_attr (t, "perm", clinfer_attr_new_ints (order, n));
  return TRUE;
}

static gboolean
tr_squeeze_like (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, l->def->onnx_op, 13, l->inputs->len, 1,
      NULL);

  ir_sink (l, 0, n, 0);
  if (l->inputs->len > 1)
    ir_sink_int_list (r, l, 1, n, 1, "axes");
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_shape_of (IrReader *r, IrLayer *l, GError **error)
{
  ClinferElementType t = clinfer_ir_type_from_name (
      ir_attr_str (l, "output_type", "i64"));
  ClinferNode *n = ir_add_node (r, l, "Shape", 13, 1, 1, NULL);

  ir_sink (l, 0, n, 0);
  if (t != CLINFER_TYPE_I64 && t != CLINFER_TYPE_I32) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "output_type '%s' is not supported (expected i64 or i32)",
        ir_attr_str (l, "output_type", ""));
    return FALSE;
  }
  if (t == CLINFER_TYPE_I32) {
    ClinferNode *cast = ir_cast (r, l, "i32", t);
    ir_connect (cast, 0, n);
    n = cast;
  }
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_convert (IrReader *r, IrLayer *l, GError **error)
{
  const char *name = ir_attr_str (l, "destination_type", NULL);
  gboolean like = g_ascii_strcasecmp (l->def->type, "ConvertLike") == 0;
  ClinferElementType t = like ? ir_input_type (l, 1)
      : clinfer_ir_type_from_name (name);
  ClinferNode *n;

  if (t == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP, like
        ? "the element type of input 1 is unknown"
        : "destination_type '%s' is not supported", name ? name : "(missing)");
    return FALSE;
  }
  n = ir_cast (r, l, NULL, t);
  ir_sink (l, 0, n, 0);
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_gather (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL;
  int64_t batch_dims = 0;
  gsize n;
  ClinferNode *g;

  if (!ir_const_ints (r, l, 2, "axis", &axis, &n, error)
      || !ir_attr_int (r, l, "batch_dims", FALSE, 0, &batch_dims, error))
    return FALSE;
  if (n != 1 || batch_dims != 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        n != 1 ? "the axis input must hold one value"
        : "batch_dims=%" G_GINT64_FORMAT " is not supported (expected 0)",
        batch_dims);
    return FALSE;
  }
  g = ir_simple (r, l, "Gather", 13, 2, 1);
  clinfer_node_set_attr (g, "axis", clinfer_attr_new_int (axis[0]));
  return TRUE;
}

/* Broadcast: numpy and bidirectional are Expand; explicit reshapes the
 * data to the target rank by axes_mapping first. */
static gboolean
tr_broadcast (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "numpy", "bidirectional", "explicit",
    "pdpd", NULL };
  ClinferNode *n = ir_add_node (r, l, "Expand", 13, 2, 1, NULL);
  int mode;

  if (!ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  ir_sink_int_list (r, l, 1, n, 1, "target_shape");
  ir_output (r, l, 0, n, 0);
  if (mode == 2) {
    g_autofree int64_t *map = NULL;
    gsize nm;
    ClinferShape ds = ir_input_shape (l, 0), ts = ir_input_shape (l, 1);
    int64_t dims[CLINFER_MAX_RANK];
    ClinferNode *reshape;

    if (!ir_const_ints (r, l, 2, "axes_mapping", &map, &nm, error))
      return FALSE;
    if (ts.rank != 1 || ts.dims[0] < 0 || ts.dims[0] > CLINFER_MAX_RANK
        || !clinfer_shape_is_static (&ds) || (gsize) ds.rank != nm) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "explicit broadcast needs a static data shape and target rank");
      return FALSE;
    }
    for (int i = 0; i < ts.dims[0]; i++)
      dims[i] = 1;
    for (gsize i = 0; i < nm; i++) {
      if (map[i] < 0 || map[i] >= ts.dims[0]) {
        ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
            "axes_mapping value %" G_GINT64_FORMAT " is out of range",
            map[i]);
        return FALSE;
      }
      dims[map[i]] = ds.dims[i];
    }
    reshape = ir_add_node (r, l, "Reshape", 14, 2, 1, "explicit");
    ir_sink (l, 0, reshape, 0);
    ir_connect (reshape, 1, ir_add_const_i64 (r, l, "explicit_shape", dims,
        (gsize) ts.dims[0], FALSE));
    ir_connect (n, 0, reshape);
  } else {
    ir_sink (l, 0, n, 0);
  }
  return TRUE;
}

/* Tile: repeats shorter than the rank are padded with leading 1s; longer
 * ones add leading unit dims to the data. */
static gboolean
tr_tile (IrReader *r, IrLayer *l, GError **error)
{
  ClinferShape ds = ir_input_shape (l, 0);
  ClinferTensor *t;
  ClinferNode *n;
  int64_t reps[CLINFER_MAX_RANK];
  int64_t k;

  if (!ir_try_const (r, l, 1, &t, error))
    return FALSE;
  n = ir_add_node (r, l, "Tile", 13, 2, 1, NULL);
  ir_output (r, l, 0, n, 0);
  k = t ? clinfer_tensor_get_n_elements (t) : -1;
  if (t == NULL || ds.rank < 0 || k == ds.rank || k > CLINFER_MAX_RANK) {
    ir_sink (l, 0, n, 0);
    ir_sink_int_list (r, l, 1, n, 1, "repeats");
    return TRUE;
  }
  for (int64_t i = 0; i < MAX (k, ds.rank); i++) {
    int64_t j = i - (MAX (k, ds.rank) - k);
    reps[i] = j >= 0 ? clinfer_tensor_get_as_int64 (t, j) : 1;
  }
  ir_connect (n, 1, ir_add_const_i64 (r, l, "repeats", reps,
      (gsize) MAX (k, ds.rank), FALSE));
  if (k > ds.rank) {
    int64_t axes[CLINFER_MAX_RANK];
    ClinferNode *u = ir_add_node (r, l, "Unsqueeze", 13, 2, 1, "rank");
    for (int64_t i = 0; i < k - ds.rank; i++)
      axes[i] = i;
    ir_sink (l, 0, u, 0);
    ir_connect (u, 1, ir_add_const_i64 (r, l, "rank_axes", axes,
        (gsize) (k - ds.rank), FALSE));
    ir_connect (n, 0, u);
  } else {
    ir_sink (l, 0, n, 0);
  }
  return TRUE;
}

/* Range-4 has an output_type; ONNX Range needs inputs of that type. */
static gboolean
tr_range (IrReader *r, IrLayer *l, GError **error)
{
  const char *ot = ir_attr_str (l, "output_type", NULL);
  ClinferElementType t = ot ? clinfer_ir_type_from_name (ot)
      : ir_input_type (l, 0);
  ClinferNode *n = ir_add_node (r, l, "Range", 11, 3, 1, NULL);

  if (t == CLINFER_TYPE_UNDEFINED) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "output_type '%s' is not supported", ot ? ot : "(unknown)");
    return FALSE;
  }
  for (guint i = 0; i < 3; i++) {
    static const char *names[] = { "start", "stop", "step" };
    ClinferNode *c = ir_cast (r, l, names[i], t);
    ir_sink (l, i, c, 0);
    ir_connect (n, i, c);
  }
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define V G_MAXUINT
#define ONE(type, onnx, opset, since) \
  { type, since, 0, 1, 1, 1, 1, tr_onnx_1to1, onnx, opset }
#define BIN(type, onnx, opset) \
  { type, 1, 0, 2, 2, 1, 1, tr_binary, onnx, opset }

const IrOpDef clinfer_ir_ops_basic[] = {
  { "Parameter", 1, 0, 0, 0, 1, 1, NULL, NULL, 0 },
  { "Const", 1, 0, 0, 0, 1, 1, NULL, NULL, 0 },
  { "Result", 1, 0, 1, 1, 0, 0, NULL, NULL, 0 },
  BIN ("Add", "Add", 14), BIN ("Subtract", "Sub", 14),
  BIN ("Multiply", "Mul", 14), BIN ("Divide", "Div", 14),
  BIN ("Maximum", "Max", 13), BIN ("Minimum", "Min", 13),
  BIN ("Power", "Pow", 15), BIN ("Equal", "Equal", 13),
  BIN ("Less", "Less", 13), BIN ("LessEqual", "LessOrEqual", 16),
  BIN ("Greater", "Greater", 13), BIN ("GreaterEqual", "GreaterOrEqual", 16),
  BIN ("LogicalAnd", "And", 7), BIN ("LogicalOr", "Or", 7),
  BIN ("LogicalXor", "Xor", 7),
  { "NotEqual", 1, 0, 2, 2, 1, 1, tr_not_equal, NULL, 0 },
  { "SquaredDifference", 1, 0, 2, 2, 1, 1, tr_squared_difference, NULL, 0 },
  { "Mod", 1, 0, 2, 2, 1, 1, tr_mod, NULL, 0 },
  { "FloorMod", 1, 0, 2, 2, 1, 1, tr_mod, NULL, 0 },
  ONE ("Relu", "Relu", 14, 1), ONE ("Sigmoid", "Sigmoid", 13, 1),
  ONE ("Tanh", "Tanh", 13, 1), ONE ("Exp", "Exp", 13, 1),
  ONE ("Sqrt", "Sqrt", 13, 1), ONE ("Abs", "Abs", 13, 1),
  ONE ("Ceiling", "Ceil", 13, 1), ONE ("Floor", "Floor", 13, 1),
  ONE ("Log", "Log", 13, 1), ONE ("Negative", "Neg", 13, 1),
  ONE ("Sin", "Sin", 7, 1), ONE ("Cos", "Cos", 7, 1), ONE ("Tan", "Tan", 7, 1),
  ONE ("Asin", "Asin", 7, 1), ONE ("Acos", "Acos", 7, 1),
  ONE ("Atan", "Atan", 7, 1), ONE ("Sinh", "Sinh", 9, 1),
  ONE ("Cosh", "Cosh", 9, 1), ONE ("Asinh", "Asinh", 9, 3),
  ONE ("Acosh", "Acosh", 9, 3), ONE ("Atanh", "Atanh", 9, 3),
  ONE ("Erf", "Erf", 13, 1), ONE ("Sign", "Sign", 13, 1),
  ONE ("HSwish", "HardSwish", 14, 4), ONE ("Mish", "Mish", 18, 4),
  ONE ("SoftPlus", "Softplus", 1, 4), ONE ("SoftSign", "Softsign", 1, 9),
  ONE ("LogicalNot", "Not", 1, 1), ONE ("IsNaN", "IsNaN", 13, 10),
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
  { "Convolution", 1, 0, 2, 2, 1, 1, tr_convolution, NULL, 0 },
  { "GroupConvolution", 1, 0, 2, 2, 1, 1, tr_convolution, NULL, 0 },
  { "ConvolutionBackpropData", 1, 0, 2, 3, 1, 1, tr_conv_backprop, NULL, 0 },
  { "GroupConvolutionBackpropData", 1, 0, 2, 3, 1, 1, tr_conv_backprop, NULL, 0 },
  { "MaxPool", 1, 7, 1, 1, 1, 1, tr_max_pool, NULL, 0 },
  { "MaxPool", 8, 0, 1, 1, 1, 2, tr_max_pool, NULL, 0 },
  { "AvgPool", 1, 0, 1, 1, 1, 1, tr_avg_pool, NULL, 0 },
  { "Concat", 1, 0, 1, V, 1, 1, tr_concat, NULL, 0 },
  { "Reshape", 1, 0, 2, 2, 1, 1, tr_reshape, NULL, 0 },
  { "Transpose", 1, 0, 2, 2, 1, 1, tr_transpose, NULL, 0 },
  { "Squeeze", 1, 0, 1, 2, 1, 1, tr_squeeze_like, "Squeeze", 13 },
  { "Unsqueeze", 1, 0, 2, 2, 1, 1, tr_squeeze_like, "Unsqueeze", 13 },
  { "ShapeOf", 1, 0, 1, 1, 1, 1, tr_shape_of, NULL, 0 },
  { "Convert", 1, 0, 1, 1, 1, 1, tr_convert, NULL, 0 },
  { "ConvertLike", 1, 0, 2, 2, 1, 1, tr_convert, NULL, 0 },
  { "Gather", 1, 0, 3, 3, 1, 1, tr_gather, NULL, 0 },
  { "Broadcast", 1, 0, 2, 3, 1, 1, tr_broadcast, NULL, 0 },
  { "Tile", 1, 0, 2, 2, 1, 1, tr_tile, NULL, 0 },
  { "Range", 1, 0, 3, 3, 1, 1, tr_range, NULL, 0 },
  { NULL }
};

/* Spellings the file format accepts besides the canonical ones. */
static const struct { const char *alias, *type; } aliases[] = {
  { "Constant", "Const" }, { "ReLU", "Relu" }, { "Softmax", "SoftMax" },
  { "PReLU", "PRelu" },
};

const IrOpDef *
clinfer_ir_op_lookup (const char *type, int opset, gboolean *type_known)
{
  const IrOpDef *const tables[] = { clinfer_ir_ops_basic, clinfer_ir_ops_more };

  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (type, aliases[i].alias) == 0)
      type = aliases[i].type;
  *type_known = FALSE;
  for (gsize t = 0; t < G_N_ELEMENTS (tables); t++)
    for (const IrOpDef *d = tables[t]; d->type; d++) {
      if (g_ascii_strcasecmp (d->type, type) != 0)
        continue;
      *type_known = TRUE;
      if (opset >= d->since_opset && opset <= CLINFER_IR_OPSET_MAX
          && (d->last_opset == 0 || opset <= d->last_opset))
        return d;
    }
  return NULL;
}
