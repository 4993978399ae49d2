/* clinfer — OpenVINO IR op translators: convolutions and pooling. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <string.h>

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
/* Table                                                             */

const IrOpDef clinfer_ir_ops_conv[] = {
  { "Convolution", 1, 0, 2, 2, 1, 1, tr_convolution, NULL, 0 },
  { "GroupConvolution", 1, 0, 2, 2, 1, 1, tr_convolution, NULL, 0 },
  { "ConvolutionBackpropData", 1, 0, 2, 3, 1, 1, tr_conv_backprop, NULL, 0 },
  { "GroupConvolutionBackpropData", 1, 0, 2, 3, 1, 1, tr_conv_backprop, NULL, 0 },
  { "MaxPool", 1, 7, 1, 1, 1, 1, tr_max_pool, NULL, 0 },
  { "MaxPool", 8, 0, 1, 1, 1, 2, tr_max_pool, NULL, 0 },
  { "AvgPool", 1, 0, 1, 1, 1, 1, tr_avg_pool, NULL, 0 },
  { NULL }
};
