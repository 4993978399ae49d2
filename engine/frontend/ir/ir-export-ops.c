/* clinfer — OpenVINO IR op exporters, part 1: element-wise ops,
 * activations, convolutions, pooling, normalisations and MatMul, each
 * engine (ONNX-semantics) node written as one or a few OpenVINO opset
 * layers. An exporter returns FALSE without an error, before writing
 * anything, to leave a node it cannot express to the clinfer extension
 * opset. */
#include "frontend/ir/ir-export.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Helpers (ir-export.h)                                             */

int
ir_export_rank (const ClinferNode *n, guint i)
{
  ClinferPortDesc *d = clinfer_node_input_desc (n, i);
  return d ? d->shape.rank : -1;
}

ClinferElementType
ir_export_type (const ClinferNode *n, guint i)
{
  ClinferPortDesc *d = clinfer_node_input_desc (n, i);
  return d ? d->type : CLINFER_TYPE_UNDEFINED;
}

char *
ir_export_name (const ClinferNode *n, const char *suffix)
{
  return g_strdup_printf ("%s/%s", *n->name ? n->name : n->outputs[0].name,
      suffix);
}

gboolean
ir_export_const_ints (const ClinferNode *n, guint i, int64_t **v, gsize *len)
{
  const ClinferTensor *t = irw_in_value (n, i);

  *v = NULL;
  *len = 0;
  if (t == NULL
      || clinfer_element_type_is_float (clinfer_tensor_get_element_type (t)))
    return FALSE;
  *len = (gsize) clinfer_tensor_get_n_elements (t);
  *v = g_new0 (int64_t, MAX (*len, 1));
  for (gsize k = 0; k < *len; k++)
    (*v)[k] = clinfer_tensor_get_as_int64 (t, (int64_t) k);
  return TRUE;
}

IrVal
ir_export_reshape_const (IrWriter *w, const ClinferNode *n, guint i,
    const char *suffix, const int64_t *dims, int rank)
{
  const ClinferTensor *t = irw_in_value (n, i);
  ClinferShape s = clinfer_shape_make (rank, dims);
  g_autofree char *name = ir_export_name (n, suffix);
  IrVal x, shape;
  int l;

  if (t && clinfer_tensor_is_contiguous (t)
      && clinfer_shape_n_elements (&s) == clinfer_tensor_get_n_elements (t)) {
    g_autoptr (ClinferTensor) view = clinfer_tensor_new_wrapped (
        clinfer_tensor_get_element_type (t), &s, NULL,
        (gpointer) clinfer_tensor_get_const_data (t), NULL, NULL, NULL);
    if (view)
      return irw_const (w, view, name, TRUE);
  }
  x = irw_in (w, n, i);
  shape = irw_const_i64 (w, name, dims, (gsize) rank, FALSE);
  l = irw_layer (w, "Reshape", 1, name, NULL);
  irw_attr (w, l, "special_zero", "false");
  irw_input (w, l, x);
  irw_input (w, l, shape);
  return irw_output (w, l, ir_export_type (n, i), &s);
}

IrVal
ir_export_unary (IrWriter *w, const ClinferNode *n, const char *type,
    int opset, const char *suffix, IrVal x)
{
  return irw_op (w, n, type, opset, suffix, &x, 1, 0);
}

IrVal
ir_export_binary (IrWriter *w, const ClinferNode *n, const char *type,
    const char *suffix, IrVal a, IrVal b)
{
  IrVal ins[2] = { a, b };
  IrVal v = irw_op (w, n, type, 1, suffix, ins, 2, 0);

  irw_attr (w, v.layer, "auto_broadcast", "numpy");
  return v;
}

IrVal
ir_export_shape_of (IrWriter *w, const ClinferNode *n, const char *suffix,
    IrVal x)
{
  int l = irw_layer (w, "ShapeOf", 3, *n->name ? n->name : n->outputs[0].name,
      suffix);
  int64_t rank = irw_shape (w, x)->rank;
  ClinferShape s = clinfer_shape_make (1, &rank);

  irw_attr (w, l, "output_type", "i64");
  irw_input (w, l, x);
  return irw_output (w, l, CLINFER_TYPE_I64, rank >= 0 ? &s : NULL);
}

/* A scalar of @n's output type (f32 for non-float outputs). */
static IrVal
scalar (IrWriter *w, const ClinferNode *n, const char *suffix, double v)
{
  g_autofree char *name = ir_export_name (n, suffix);
  return irw_const_float (w, name, n->outputs[0].type, v, FALSE);
}

static IrVal
axes_const (IrWriter *w, const ClinferNode *n, const char *suffix, int from,
    int to)
{
  g_autofree char *name = ir_export_name (n, suffix);
  int64_t axes[CLINFER_MAX_RANK];

  for (int i = from; i < to; i++)
    axes[i - from] = i;
  return irw_const_i64 (w, name, axes, (gsize) MAX (to - from, 0), FALSE);
}

/* ---------------------------------------------------------------- */
/* Element-wise                                                      */

static const struct { const char *onnx, *ov; int opset; } unary_map[] = {
  { "Relu", "ReLU", 1 }, { "Sigmoid", "Sigmoid", 1 }, { "Tanh", "Tanh", 1 },
  { "Exp", "Exp", 1 }, { "Sqrt", "Sqrt", 1 }, { "Abs", "Abs", 1 },
  { "Ceil", "Ceiling", 1 }, { "Floor", "Floor", 1 }, { "Log", "Log", 1 },
  { "Neg", "Negative", 1 }, { "Sin", "Sin", 1 }, { "Cos", "Cos", 1 },
  { "Tan", "Tan", 1 }, { "Asin", "Asin", 1 }, { "Acos", "Acos", 1 },
  { "Atan", "Atan", 1 }, { "Sinh", "Sinh", 1 }, { "Cosh", "Cosh", 1 },
  { "Asinh", "Asinh", 4 }, { "Acosh", "Acosh", 4 }, { "Atanh", "Atanh", 4 },
  { "Erf", "Erf", 1 }, { "Sign", "Sign", 1 }, { "HardSwish", "HSwish", 4 },
  { "Mish", "Mish", 4 }, { "Softplus", "SoftPlus", 4 },
  { "Softsign", "SoftSign", 9 }, { "Not", "LogicalNot", 1 },
  { "IsNaN", "IsNaN", 10 },
};

gboolean
ir_export_unary_op (IrWriter *w, const ClinferNode *n, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (unary_map); i++)
    if (strcmp (unary_map[i].onnx, n->op_type) == 0) {
      irw_set (w, n, 0, ir_export_unary (w, n, unary_map[i].ov,
          unary_map[i].opset, NULL, irw_in (w, n, 0)));
      return TRUE;
    }
  return FALSE;
}

static const struct { const char *onnx, *ov; } binary_map[] = {
  { "Add", "Add" }, { "Sub", "Subtract" }, { "Mul", "Multiply" },
  { "Div", "Divide" }, { "Pow", "Power" }, { "Max", "Maximum" },
  { "Min", "Minimum" }, { "Sum", "Add" }, { "Mean", "Add" },
  { "Equal", "Equal" }, { "Less", "Less" }, { "Greater", "Greater" },
  { "LessOrEqual", "LessEqual" }, { "GreaterOrEqual", "GreaterEqual" },
  { "And", "LogicalAnd" }, { "Or", "LogicalOr" }, { "Xor", "LogicalXor" },
};

/* Binary ops, and the variadic Sum/Max/Min/Mean as chains. */
gboolean
ir_export_binary_op (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *ov = NULL;
  guint k = clinfer_node_n_present_inputs (n);
  gboolean mean = strcmp (n->op_type, "Mean") == 0;
  IrVal acc;

  for (gsize i = 0; i < G_N_ELEMENTS (binary_map); i++)
    if (strcmp (binary_map[i].onnx, n->op_type) == 0)
      ov = binary_map[i].ov;
  /* Legacy (opset < 7) broadcasting along an axis has no equivalent. */
  if (ov == NULL || k == 0 || clinfer_node_get_attr (n, "axis"))
    return FALSE;
  acc = irw_in (w, n, 0);
  for (guint i = 1; i < k; i++) {
    g_autofree char *suffix = i + 1 < k || mean ? g_strdup_printf ("acc%u", i)
        : NULL;
    acc = ir_export_binary (w, n, ov, suffix, acc, irw_in (w, n, i));
    /* ONNX integer division truncates; OpenVINO's default floors. */
    if (strcmp (ov, "Divide") == 0)
      irw_attr (w, acc.layer, "m_pythondiv", "false");
  }
  if (mean)
    acc = ir_export_binary (w, n, "Divide", NULL, acc,
        scalar (w, n, "count", k));
  irw_set (w, n, 0, acc);
  return TRUE;
}

gboolean
ir_export_mod (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t fmod = 0;

  clinfer_node_attr_int (n, "fmod", 0, &fmod, NULL);
  irw_set (w, n, 0, ir_export_binary (w, n, fmod ? "Mod" : "FloorMod", NULL,
      irw_in (w, n, 0), irw_in (w, n, 1)));
  return TRUE;
}

gboolean
ir_export_where (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal ins[3] = { irw_in (w, n, 0), irw_in (w, n, 1), irw_in (w, n, 2) };
  IrVal v = irw_op (w, n, "Select", 1, NULL, ins, 3, 0);

  irw_attr (w, v.layer, "auto_broadcast", "numpy");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* PRelu: a lower-rank slope is made full rank so that OpenVINO's channel
 * rule for 1-D slopes cannot apply. */
gboolean
ir_export_prelu (IrWriter *w, const ClinferNode *n, GError **error)
{
  int xr = ir_export_rank (n, 0), sr = ir_export_rank (n, 1);
  ClinferPortDesc *d = clinfer_node_input_desc (n, 1);
  IrVal ins[2];

  if (sr < 0 || xr < 0 || (sr < xr && !clinfer_shape_is_static (&d->shape)))
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  if (sr < xr) {
    int64_t dims[CLINFER_MAX_RANK];
    /* Before opset 7 a 1-D slope of C values is per channel (dim 1). */
    gboolean legacy = n->opset > 0 && n->opset < 7 && sr == 1 && xr >= 2
        && d->shape.dims[0] != 1;
    for (int i = 0; i < xr; i++)
      dims[i] = legacy ? (i == 1 ? d->shape.dims[0] : 1)
          : i < xr - sr ? 1 : d->shape.dims[i - (xr - sr)];
    ins[1] = ir_export_reshape_const (w, n, 1, "slope", dims, xr);
  } else {
    ins[1] = irw_in (w, n, 1);
  }
  irw_set (w, n, 0, irw_op (w, n, "PRelu", 1, NULL, ins, 2, 0));
  return TRUE;
}

gboolean
ir_export_leaky_relu (IrWriter *w, const ClinferNode *n, GError **error)
{
  float alpha;
  g_autofree char *name = ir_export_name (n, "alpha");
  IrVal ins[2];

  if (!clinfer_node_attr_float (n, "alpha", 0.01f, &alpha, NULL))
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_const_float (w, name, n->outputs[0].type, alpha, TRUE);
  irw_set (w, n, 0, irw_op (w, n, "PRelu", 1, NULL, ins, 2, 0));
  return TRUE;
}

gboolean
ir_export_elu (IrWriter *w, const ClinferNode *n, GError **error)
{
  float alpha;
  IrVal v;

  if (!clinfer_node_attr_float (n, "alpha", 1.f, &alpha, NULL))
    return FALSE;
  v = ir_export_unary (w, n, "Elu", 1, NULL, irw_in (w, n, 0));
  irw_attr (w, v.layer, "alpha", "%.9g", alpha);
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Selu-1 and HardSigmoid-1 take their parameters as scalar inputs. */
static gboolean
export_two_params (IrWriter *w, const ClinferNode *n, const char *type,
    const char *a_name, float a_def, const char *b_name, float b_def)
{
  float a, b;
  IrVal ins[3];

  if (!clinfer_node_attr_float (n, a_name, a_def, &a, NULL)
      || !clinfer_node_attr_float (n, b_name, b_def, &b, NULL))
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = scalar (w, n, a_name, a);
  ins[2] = scalar (w, n, b_name, b);
  irw_set (w, n, 0, irw_op (w, n, type, 1, NULL, ins, 3, 0));
  return TRUE;
}

gboolean
ir_export_selu (IrWriter *w, const ClinferNode *n, GError **error)
{
  return export_two_params (w, n, "Selu", "alpha", 1.67326319217681884765625f,
      "gamma", 1.05070102214813232421875f);
}

gboolean
ir_export_hard_sigmoid (IrWriter *w, const ClinferNode *n, GError **error)
{
  return export_two_params (w, n, "HardSigmoid", "alpha", 0.2f, "beta", 0.5f);
}

/* Clip: Clamp with constant bounds (attributes before opset 11, scalar
 * inputs since), else Maximum / Minimum with the bound inputs. */
gboolean
ir_export_clip (IrWriter *w, const ClinferNode *n, GError **error)
{
  float bound[2] = { -FLT_MAX, FLT_MAX };
  gboolean present[2] = { FALSE, FALSE }, all_const = TRUE;
  static const char *const names[] = { "min", "max" };
  IrVal v;

  for (guint k = 0; k < 2; k++) {
    const ClinferTensor *t;
    if (n->opset < 11) {
      present[k] = clinfer_node_get_attr (n, names[k]) != NULL;
      if (!clinfer_node_attr_float (n, names[k], bound[k], &bound[k], NULL))
        return FALSE;
      continue;
    }
    present[k] = k + 1 < n->n_inputs && n->inputs[k + 1].node;
    t = present[k] ? irw_in_value (n, k + 1) : NULL;
    if (t && clinfer_tensor_get_n_elements (t) == 1)
      bound[k] = (float) clinfer_tensor_get_as_double (t, 0);
    else if (present[k])
      all_const = FALSE;
  }
  v = irw_in (w, n, 0);
  if (all_const && (clinfer_element_type_is_float (n->outputs[0].type)
          || (present[0] && present[1]))) {
    v = ir_export_unary (w, n, "Clamp", 1, NULL, v);
    irw_attr (w, v.layer, "min", "%.9g", bound[0]);
    irw_attr (w, v.layer, "max", "%.9g", bound[1]);
  } else if (n->opset < 11) {
    return FALSE;
  } else {
    /* Bounds of the input's own type, only the ones given. */
    if (present[0])
      v = ir_export_binary (w, n, "Maximum", present[1] ? "min" : NULL, v,
          irw_in (w, n, 1));
    if (present[1])
      v = ir_export_binary (w, n, "Minimum", NULL, v, irw_in (w, n, 2));
  }
  irw_set (w, n, 0, v);
  return TRUE;
}

gboolean
ir_export_round (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal v = ir_export_unary (w, n, "Round", 5, NULL, irw_in (w, n, 0));

  irw_attr (w, v.layer, "mode", "half_to_even");
  irw_set (w, n, 0, v);
  return TRUE;
}

gboolean
ir_export_reciprocal (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal v = ir_export_binary (w, n, "Divide", NULL, scalar (w, n, "one", 1.0),
      irw_in (w, n, 0));

  irw_set (w, n, 0, v);
  return TRUE;
}

/* Softmax/LogSoftmax: one axis from opset 13; before, over the input
 * flattened to 2-D at the axis (a Reshape pair unless axis is last). */
gboolean
ir_export_softmax (IrWriter *w, const ClinferNode *n, GError **error)
{
  gboolean log = strcmp (n->op_type, "LogSoftmax") == 0;
  const char *type = log ? "LogSoftmax" : "SoftMax";
  int opset = log ? 5 : 8, rank = ir_export_rank (n, 0);
  int64_t axis;
  ClinferPortDesc *d = clinfer_node_input_desc (n, 0);
  IrVal x, v;

  if (strcmp (n->op_type, "Hardmax") == 0
      || !clinfer_node_attr_int (n, "axis", n->opset >= 13 ? -1 : 1, &axis, NULL)
      || rank < 0 || axis < -rank || axis >= MAX (rank, 1))
    return FALSE;
  if (axis < 0)
    axis += rank;
  x = irw_in (w, n, 0);
  if (n->opset >= 13 || axis == rank - 1) {
    v = ir_export_unary (w, n, type, opset, NULL, x);
    irw_attr (w, v.layer, "axis", "%" G_GINT64_FORMAT, axis);
  } else {
    int64_t flat[2] = { 1, -1 };
    g_autofree char *name = ir_export_name (n, "flat_shape");
    IrVal ins[2];
    for (int i = 0; i < axis; i++)
      flat[0] = d->shape.dims[i] < 0 || flat[0] < 0 ? -2 : flat[0] * d->shape.dims[i];
    if (flat[0] == -2 && axis != 1)
      return FALSE;
    if (flat[0] == -2)
      flat[0] = 0;              /* copy dim 0 (special_zero) */
    ins[0] = x;
    ins[1] = irw_const_i64 (w, name, flat, 2, FALSE);
    v = irw_op (w, n, "Reshape", 1, "flat", ins, 2, 0);
    irw_attr (w, v.layer, "special_zero", "true");
    v = ir_export_unary (w, n, type, opset, "2d", v);
    irw_attr (w, v.layer, "axis", "1");
    ins[0] = v;
    ins[1] = ir_export_shape_of (w, n, "shape", x);
    v = irw_op (w, n, "Reshape", 1, NULL, ins, 2, 0);
    irw_attr (w, v.layer, "special_zero", "false");
  }
  irw_set (w, n, 0, v);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Convolution and pooling                                           */

typedef struct {
  int sp;                    /* spatial dims */
  int64_t strides[CLINFER_MAX_RANK], dil[CLINFER_MAX_RANK];
  int64_t pb[CLINFER_MAX_RANK], pe[CLINFER_MAX_RANK];
  const char *auto_pad;
} Window;

/* ONNX window attributes (defaults: strides and dilations 1, pads 0). */
static gboolean
window_read (const ClinferNode *n, int sp, Window *win)
{
  static const char *const onnx[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER",
    "VALID" };
  static const char *const ov[] = { "explicit", "same_upper", "same_lower",
    "valid" };
  const int64_t *v;
  gsize k;
  const char *ap;

  if (sp <= 0 || sp > CLINFER_MAX_RANK - 2)
    return FALSE;
  win->sp = sp;
  for (int i = 0; i < sp; i++) {
    win->strides[i] = win->dil[i] = 1;
    win->pb[i] = win->pe[i] = 0;
  }
  if (!clinfer_node_attr_ints (n, "strides", &v, &k, NULL) || (k && k != (gsize) sp))
    return FALSE;
  memcpy (win->strides, v ? v : win->strides, k * sizeof (int64_t));
  if (!clinfer_node_attr_ints (n, "dilations", &v, &k, NULL) || (k && k != (gsize) sp))
    return FALSE;
  memcpy (win->dil, v ? v : win->dil, k * sizeof (int64_t));
  if (!clinfer_node_attr_ints (n, "pads", &v, &k, NULL) || (k && k != 2 * (gsize) sp))
    return FALSE;
  for (gsize i = 0; i < k / 2; i++) {
    win->pb[i] = v[i];
    win->pe[i] = v[i + k / 2];
  }
  if (!clinfer_node_attr_string (n, "auto_pad", "NOTSET", &ap, NULL))
    return FALSE;
  win->auto_pad = NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (onnx); i++)
    if (strcmp (ap, onnx[i]) == 0)
      win->auto_pad = ov[i];
  return win->auto_pad != NULL;
}

static void
window_write (IrWriter *w, int l, const Window *win, gboolean dilations)
{
  irw_attr_ints (w, l, "strides", win->strides, (gsize) win->sp);
  if (dilations)
    irw_attr_ints (w, l, "dilations", win->dil, (gsize) win->sp);
  irw_attr_ints (w, l, "pads_begin", win->pb, (gsize) win->sp);
  irw_attr_ints (w, l, "pads_end", win->pe, (gsize) win->sp);
  irw_attr (w, l, "auto_pad", "%s", win->auto_pad);
}

/* Conv bias [M] as an Add of [1, M, 1, ...]. */
static IrVal
add_bias (IrWriter *w, const ClinferNode *n, guint i, int64_t m, int rank,
    IrVal v)
{
  int64_t dims[CLINFER_MAX_RANK];

  if (i >= n->n_inputs || n->inputs[i].node == NULL)
    return v;
  for (int k = 0; k < rank; k++)
    dims[k] = k == 1 ? m : 1;
  return ir_export_binary (w, n, "Add", NULL, v,
      ir_export_reshape_const (w, n, i, "bias", dims, rank));
}

/* Convolution, or GroupConvolution with weights [G, M/G, C/G, k...]. */
gboolean
ir_export_conv (IrWriter *w, const ClinferNode *n, GError **error)
{
  ClinferPortDesc *wd = clinfer_node_input_desc (n, 1);
  gboolean bias = n->n_inputs > 2 && n->inputs[2].node;
  int64_t group = 1, dims[CLINFER_MAX_RANK];
  Window win;
  IrVal x, wt;
  int l, r;

  if (wd == NULL || !clinfer_shape_is_static (&wd->shape) || wd->shape.rank < 3
      || !clinfer_node_attr_int (n, "group", 1, &group, NULL) || group < 1
      || wd->shape.dims[0] % group
      || !window_read (n, wd->shape.rank - 2, &win))
    return FALSE;
  r = wd->shape.rank;
  x = irw_in (w, n, 0);
  if (group == 1) {
    wt = irw_in (w, n, 1);
  } else {
    dims[0] = group;
    dims[1] = wd->shape.dims[0] / group;
    for (int i = 1; i < r; i++)
      dims[i + 1] = wd->shape.dims[i];
    wt = ir_export_reshape_const (w, n, 1, "group_weights", dims, r + 1);
  }
  l = irw_layer (w, group == 1 ? "Convolution" : "GroupConvolution", 1,
      *n->name ? n->name : n->outputs[0].name, bias ? "conv" : NULL);
  window_write (w, l, &win, TRUE);
  irw_input (w, l, x);
  irw_input (w, l, wt);
  irw_set (w, n, 0, add_bias (w, n, 2, wd->shape.dims[0], r,
      irw_output (w, l, n->outputs[0].type, &n->outputs[0].shape)));
  return TRUE;
}

/* ConvTranspose: weights [C, M/G, k...] are OpenVINO's layout for one
 * group; groups become [G, C/G, M/G, k...]. */
gboolean
ir_export_conv_transpose (IrWriter *w, const ClinferNode *n, GError **error)
{
  ClinferPortDesc *wd = clinfer_node_input_desc (n, 1);
  gboolean bias = n->n_inputs > 2 && n->inputs[2].node;
  int64_t group = 1, dims[CLINFER_MAX_RANK];
  const int64_t *op, *os;
  gsize nop, nos;
  Window win;
  IrVal x, wt;
  int l, r;

  if (wd == NULL || !clinfer_shape_is_static (&wd->shape) || wd->shape.rank < 3
      || !clinfer_node_attr_int (n, "group", 1, &group, NULL) || group < 1
      || wd->shape.dims[0] % group
      || !window_read (n, wd->shape.rank - 2, &win)
      || !clinfer_node_attr_ints (n, "output_padding", &op, &nop, NULL)
      || !clinfer_node_attr_ints (n, "output_shape", &os, &nos, NULL))
    return FALSE;
  r = wd->shape.rank;
  x = irw_in (w, n, 0);
  if (group == 1) {
    wt = irw_in (w, n, 1);
  } else {
    dims[0] = group;
    dims[1] = wd->shape.dims[0] / group;
    for (int i = 1; i < r; i++)
      dims[i + 1] = wd->shape.dims[i];
    wt = ir_export_reshape_const (w, n, 1, "group_weights", dims, r + 1);
  }
  l = irw_layer (w, group == 1 ? "ConvolutionBackpropData"
      : "GroupConvolutionBackpropData", 1, *n->name ? n->name
      : n->outputs[0].name, bias ? "deconv" : NULL);
  window_write (w, l, &win, TRUE);
  if (nop)
    irw_attr_ints (w, l, "output_padding", op, nop);
  irw_input (w, l, x);
  irw_input (w, l, wt);
  if (nos) {
    g_autofree char *name = ir_export_name (n, "output_shape");
    /* ONNX output_shape may include N and C: keep the spatial dims. */
    gsize skip = nos > (gsize) win.sp ? nos - (gsize) win.sp : 0;
    irw_input (w, l, irw_const_i64 (w, name, os + skip, nos - skip, FALSE));
  }
  irw_set (w, n, 0, add_bias (w, n, 2, wd->shape.dims[1] * group, r,
      irw_output (w, l, n->outputs[0].type, &n->outputs[0].shape)));
  return TRUE;
}

/* kernel_shape, ceil_mode and the window of a pooling node. */
static gboolean
pool_read (const ClinferNode *n, Window *win, const int64_t **kernel,
    int64_t *ceil_mode)
{
  int rank = ir_export_rank (n, 0);
  gsize nk;

  return rank > 2 && clinfer_node_attr_ints (n, "kernel_shape", kernel, &nk, NULL)
      && nk == (gsize) rank - 2 && window_read (n, rank - 2, win)
      && clinfer_node_attr_int (n, "ceil_mode", 0, ceil_mode, NULL);
}

gboolean
ir_export_max_pool (IrWriter *w, const ClinferNode *n, GError **error)
{
  const int64_t *kernel;
  int64_t ceil_mode, order = 0;
  Window win;
  int l;

  if (!pool_read (n, &win, &kernel, &ceil_mode)
      || !clinfer_node_attr_int (n, "storage_order", 0, &order, NULL) || order)
    return FALSE;
  l = irw_layer (w, "MaxPool", 8, *n->name ? n->name : n->outputs[0].name, NULL);
  window_write (w, l, &win, TRUE);
  irw_attr_ints (w, l, "kernel", kernel, (gsize) win.sp);
  irw_attr (w, l, "rounding_type", "%s", ceil_mode ? "ceil" : "floor");
  irw_attr (w, l, "index_element_type", "i64");
  irw_attr (w, l, "axis", "0");
  irw_input (w, l, irw_in (w, n, 0));
  irw_set (w, n, 0, irw_output (w, l, n->outputs[0].type, &n->outputs[0].shape));
  {
    IrVal idx = irw_output (w, l, CLINFER_TYPE_I64, &n->outputs[0].shape);
    if (n->n_outputs > 1)
      irw_set (w, n, 1, idx);
  }
  return TRUE;
}

gboolean
ir_export_avg_pool (IrWriter *w, const ClinferNode *n, GError **error)
{
  const int64_t *kernel;
  int64_t ceil_mode, include_pad = 0;
  Window win;
  IrVal v;

  if (!pool_read (n, &win, &kernel, &ceil_mode)
      || !clinfer_node_attr_int (n, "count_include_pad", 0, &include_pad, NULL))
    return FALSE;
  for (int i = 0; i < win.sp; i++)
    if (win.dil[i] != 1)
      return FALSE;
  v = ir_export_unary (w, n, "AvgPool", 1, NULL, irw_in (w, n, 0));
  window_write (w, v.layer, &win, FALSE);
  irw_attr_ints (w, v.layer, "kernel", kernel, (gsize) win.sp);
  irw_attr (w, v.layer, "rounding_type", "%s", ceil_mode ? "ceil" : "floor");
  irw_attr (w, v.layer, "exclude-pad", "%s", include_pad ? "false" : "true");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* GlobalAveragePool / GlobalMaxPool: a reduction over the spatial axes. */
gboolean
ir_export_global_pool (IrWriter *w, const ClinferNode *n, GError **error)
{
  int rank = ir_export_rank (n, 0);
  IrVal ins[2];

  if (rank < 3)
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = axes_const (w, n, "axes", 2, rank);
  ins[0] = irw_op (w, n, strcmp (n->op_type, "GlobalMaxPool") == 0
      ? "ReduceMax" : "ReduceMean", 1, NULL, ins, 2, 0);
  irw_attr (w, ins[0].layer, "keep_dims", "true");
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Normalisation                                                     */

gboolean
ir_export_batch_norm (IrWriter *w, const ClinferNode *n, GError **error)
{
  float eps;
  int64_t training = 0;
  IrVal ins[5], v;

  if (n->n_outputs > 1
      || !clinfer_node_attr_float (n, "epsilon", 1e-5f, &eps, NULL)
      || !clinfer_node_attr_int (n, "training_mode", 0, &training, NULL)
      || training)
    return FALSE;
  for (guint i = 0; i < 5; i++)
    ins[i] = irw_in (w, n, i);
  v = irw_op (w, n, "BatchNormInference", 5, NULL, ins, 5, 0);
  irw_attr (w, v.layer, "epsilon", "%.9g", eps);
  irw_set (w, n, 0, v);
  return TRUE;
}

/* MVN-6 over @axes (an IrVal) with the given eps placement. */
static IrVal
mvn (IrWriter *w, const ClinferNode *n, const char *suffix, IrVal x,
    IrVal axes, float eps, gboolean inside)
{
  IrVal ins[2] = { x, axes };
  IrVal v = irw_op (w, n, "MVN", 6, suffix, ins, 2, 0);

  irw_attr (w, v.layer, "normalize_variance", "true");
  irw_attr (w, v.layer, "eps", "%.9g", eps);
  irw_attr (w, v.layer, "eps_mode", "%s", inside ? "inside_sqrt" : "outside_sqrt");
  return v;
}

gboolean
ir_export_instance_norm (IrWriter *w, const ClinferNode *n, GError **error)
{
  int rank = ir_export_rank (n, 0);
  ClinferPortDesc *sd = clinfer_node_input_desc (n, 1);
  int64_t dims[CLINFER_MAX_RANK];
  float eps;
  IrVal v;

  if (rank < 3 || sd == NULL || sd->shape.rank != 1 || sd->shape.dims[0] < 0
      || !clinfer_node_attr_float (n, "epsilon", 1e-5f, &eps, NULL))
    return FALSE;
  v = mvn (w, n, "mvn", irw_in (w, n, 0), axes_const (w, n, "axes", 2, rank),
      eps, TRUE);
  dims[0] = sd->shape.dims[0];
  for (int i = 1; i < rank - 1; i++)
    dims[i] = 1;
  v = ir_export_binary (w, n, "Multiply", "scale", v,
      ir_export_reshape_const (w, n, 1, "scale_c", dims, rank - 1));
  v = ir_export_binary (w, n, "Add", NULL, v,
      ir_export_reshape_const (w, n, 2, "bias_c", dims, rank - 1));
  irw_set (w, n, 0, v);
  return TRUE;
}

gboolean
ir_export_layer_norm (IrWriter *w, const ClinferNode *n, GError **error)
{
  int rank = ir_export_rank (n, 0);
  gboolean bias = n->n_inputs > 2 && n->inputs[2].node;
  int64_t axis;
  float eps;
  IrVal v;

  if (rank < 1 || n->n_outputs > 1
      || !clinfer_node_attr_int (n, "axis", -1, &axis, NULL)
      || !clinfer_node_attr_float (n, "epsilon", 1e-5f, &eps, NULL)
      || axis < -rank || axis >= rank)
    return FALSE;
  if (axis < 0)
    axis += rank;
  v = mvn (w, n, "mvn", irw_in (w, n, 0),
      axes_const (w, n, "axes", (int) axis, rank), eps, TRUE);
  v = ir_export_binary (w, n, "Multiply", bias ? "scale" : NULL, v,
      irw_in (w, n, 1));
  if (bias)
    v = ir_export_binary (w, n, "Add", NULL, v, irw_in (w, n, 2));
  irw_set (w, n, 0, v);
  return TRUE;
}

/* MeanVarianceNormalization: eps 1e-9 outside the root, as ONNX defines. */
gboolean
ir_export_mvn (IrWriter *w, const ClinferNode *n, GError **error)
{
  static const int64_t def_axes[] = { 0, 2, 3 };
  const int64_t *axes;
  gsize k;
  g_autofree char *name = ir_export_name (n, "axes");

  if (!clinfer_node_attr_ints (n, "axes", &axes, &k, NULL))
    return FALSE;
  if (axes == NULL) {
    axes = def_axes;
    k = 3;
  }
  irw_set (w, n, 0, mvn (w, n, NULL, irw_in (w, n, 0),
      irw_const_i64 (w, name, axes, k, FALSE), 1e-9f, FALSE));
  return TRUE;
}

gboolean
ir_export_lp_norm (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis, p;
  g_autofree char *name = ir_export_name (n, "axes");
  IrVal ins[2];

  if (!clinfer_node_attr_int (n, "axis", -1, &axis, NULL)
      || !clinfer_node_attr_int (n, "p", 2, &p, NULL) || p != 2)
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_const_i64 (w, name, &axis, 1, FALSE);
  ins[0] = irw_op (w, n, "NormalizeL2", 1, NULL, ins, 2, 0);
  irw_attr (w, ins[0].layer, "eps", "0");
  irw_attr (w, ins[0].layer, "eps_mode", "add");
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

gboolean
ir_export_lrn (IrWriter *w, const ClinferNode *n, GError **error)
{
  float alpha, beta, bias;
  int64_t size, one = 1;
  g_autofree char *name = ir_export_name (n, "axes");
  IrVal ins[2];

  if (!clinfer_node_attr_float (n, "alpha", 1e-4f, &alpha, NULL)
      || !clinfer_node_attr_float (n, "beta", 0.75f, &beta, NULL)
      || !clinfer_node_attr_float (n, "bias", 1.f, &bias, NULL)
      || !clinfer_node_attr_int (n, "size", 0, &size, NULL) || size < 1)
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_const_i64 (w, name, &one, 1, FALSE);
  ins[0] = irw_op (w, n, "LRN", 1, NULL, ins, 2, 0);
  irw_attr (w, ins[0].layer, "alpha", "%.9g", alpha);
  irw_attr (w, ins[0].layer, "beta", "%.9g", beta);
  irw_attr (w, ins[0].layer, "bias", "%.9g", bias);
  irw_attr (w, ins[0].layer, "size", "%" G_GINT64_FORMAT, size);
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* MatMul, Gemm, Identity                                            */

gboolean
ir_export_matmul (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal ins[2] = { irw_in (w, n, 0), irw_in (w, n, 1) };
  IrVal v = irw_op (w, n, "MatMul", 1, NULL, ins, 2, 0);

  irw_attr (w, v.layer, "transpose_a", "false");
  irw_attr (w, v.layer, "transpose_b", "false");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Gemm: alpha * op (A) op (B) + beta * C. */
gboolean
ir_export_gemm (IrWriter *w, const ClinferNode *n, GError **error)
{
  float alpha, beta;
  int64_t ta, tb;
  gboolean c = n->n_inputs > 2 && n->inputs[2].node;
  IrVal ins[2], v;

  if (!clinfer_node_attr_float (n, "alpha", 1.f, &alpha, NULL)
      || !clinfer_node_attr_float (n, "beta", 1.f, &beta, NULL)
      || !clinfer_node_attr_int (n, "transA", 0, &ta, NULL)
      || !clinfer_node_attr_int (n, "transB", 0, &tb, NULL))
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_in (w, n, 1);
  v = irw_op (w, n, "MatMul", 1, alpha != 1.f || c ? "matmul" : NULL, ins, 2, 0);
  irw_attr (w, v.layer, "transpose_a", "%s", ta ? "true" : "false");
  irw_attr (w, v.layer, "transpose_b", "%s", tb ? "true" : "false");
  if (alpha != 1.f)
    v = ir_export_binary (w, n, "Multiply", c ? "alpha" : NULL, v,
        scalar (w, n, "alpha_value", alpha));
  if (c) {
    IrVal cv = irw_in (w, n, 2);
    if (beta != 1.f)
      cv = ir_export_binary (w, n, "Multiply", "beta", cv,
          scalar (w, n, "beta_value", beta));
    v = ir_export_binary (w, n, "Add", NULL, v, cv);
  }
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Identity and inference Dropout: the output is the input, and a Dropout
 * mask is all true. Training Dropout is random: not written here. */
gboolean
ir_export_identity (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal x, ins[2];
  g_autoptr (ClinferTensor) yes = NULL;
  ClinferShape scalar = clinfer_shape_make (0, NULL);
  g_autofree char *name = NULL;

  if (strcmp (n->op_type, "Dropout") == 0 && n->opset >= 12
      && n->n_inputs > 2 && n->inputs[2].node) {
    const ClinferTensor *t = irw_in_value (n, 2);
    if (t == NULL || clinfer_tensor_get_as_double (t, 0) != 0)
      return FALSE;
  }
  x = irw_in (w, n, 0);
  irw_set (w, n, 0, x);
  if (n->n_outputs < 2)
    return TRUE;
  yes = clinfer_tensor_new (CLINFER_TYPE_BOOL, &scalar, NULL);
  *(guint8 *) clinfer_tensor_get_data (yes) = 1;
  name = ir_export_name (n, "mask_value");
  ins[0] = irw_const (w, yes, name, FALSE);
  ins[1] = ir_export_shape_of (w, n, "shape", x);
  ins[0] = irw_op (w, n, "Broadcast", 3, "mask", ins, 2, 1);
  irw_attr (w, ins[0].layer, "mode", "numpy");
  irw_set (w, n, 1, ins[0]);
  return TRUE;
}
