/* clinfer — pass conv1d-to-2d: a 1-D Conv or FusedConv (x [N, C, W],
 * constant weights [M, C / group, K]) becomes the 2-D one on x viewed as
 * [N, C, 1, W] (kernel 1 x K, strides, dilations and pads of 1 on the new
 * axis), between Reshapes that the CPU device runs as views of the same
 * bytes. Its 2-D convolutions are oneDNN's; 1-D ones had only the
 * reference eval (silero-vad's STFT and encoder: 1.5 ms of reference
 * steps, OpenVINO 0.17 ms; OpenVINO converts 1-D convs the same way).
 * Runs after fuse-conv-activation, so a Relu and a residual stay fused
 * (a FusedConv's residual is reshaped too). Compile only, for devices
 * that ask (ClinferPassContext.conv1d_as_2d). */
#include "passes/conv-affine.h"
#include <string.h>

static gboolean
is_conv (const ClinferNode *node)
{
  return clinfer_pass_is_op (node, "Conv")
      || clinfer_node_is_builtin_op (node, "com.clinfer", "FusedConv");
}

static gboolean
match (const ClinferNode *node)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);

  return is_conv (node) && node->n_outputs == 1 && x && w
      && x->type == CLINFER_TYPE_F32 && x->shape.rank == 3
      && clinfer_conv_affine_const_f32 (node, 1, -1) != NULL
      && w->shape.rank == 3
      && node->outputs[0].shape.rank == 3;
}

/* An i64 constant @name holding @n @values. */
static ClinferNode *
shape_constant (ClinferGraph *graph, const char *name, const int64_t *values,
    int n, GError **error)
{
  int64_t d = n;
  ClinferShape s = clinfer_shape_make (1, &d);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_I64, &s,
      error);

  if (t == NULL)
    return NULL;
  memcpy (clinfer_tensor_get_data (t), values, n * sizeof (int64_t));
  return clinfer_graph_add_constant (graph, name, t);
}

/* A Reshape of @src by @shape, its output named @out_name. */
static ClinferNode *
reshape (ClinferGraph *graph, const char *name, int opset, ClinferPortRef src,
    ClinferNode *shape)
{
  ClinferNode *r = clinfer_graph_add_node (graph, "Reshape", "", name, 2, 1);

  r->opset = opset;
  r->inputs[0] = src;
  r->inputs[1] = (ClinferPortRef) { shape, 0 };
  return r;
}

/* Ints attribute @name of @node ([a] or [a, b]) as [@pad, a] or [@pad, a,
 * @pad, b] (pads: begins then ends), when present. */
static void
widen_ints (ClinferNode *node, const char *name, int64_t pad)
{
  const int64_t *v;
  gsize n;
  int64_t out[4];

  if (!clinfer_node_attr_ints (node, name, &v, &n, NULL) || n == 0 || n > 2)
    return;
  if (n == 1) {
    out[0] = pad;
    out[1] = v[0];
  } else {
    out[0] = pad;
    out[1] = v[0];
    out[2] = pad;
    out[3] = v[1];
  }
  clinfer_node_set_attr (node, name, clinfer_attr_new_ints (out, 2 * n));
}

static gboolean
rewrite (ClinferGraph *graph, ClinferNode *conv, int opset, GError **error)
{
  static const int64_t to4[] = { 0, 0, 1, -1 }, to3[] = { 0, 0, -1 };
  const char *out_name = conv->outputs[0].name;
  g_autofree char *n_to4 = g_strdup_printf ("%s/as_2d_shape", out_name);
  g_autofree char *n_to3 = g_strdup_printf ("%s/as_1d_shape", out_name);
  g_autofree char *n_x = g_strdup_printf ("%s/x_2d", out_name);
  g_autofree char *n_z = g_strdup_printf ("%s/residual_2d", out_name);
  g_autofree char *n_w = g_strdup_printf ("%s/w_2d", out_name);
  g_autofree char *n_conv = g_strdup_printf ("%s/conv_2d", out_name);
  ClinferPortDesc *w = clinfer_node_input_desc (conv, 1);
  ClinferShape ws = w->shape;
  g_autoptr (ClinferTensor) w4 = NULL;
  ClinferNode *s4, *s3, *rx, *rz = NULL, *wn, *c2, *ry;
  gboolean has_z = conv->n_inputs > 3 && conv->inputs[3].node != NULL;

  ws.rank = 4;
  ws.dims[3] = w->shape.dims[2];
  ws.dims[2] = 1;
  if ((w4 = clinfer_tensor_new (CLINFER_TYPE_F32, &ws, error)) == NULL
      || !(s4 = shape_constant (graph, n_to4, to4, 4, error))
      || !(s3 = shape_constant (graph, n_to3, to3, 3, error)))
    return FALSE;
  memcpy (clinfer_tensor_get_data (w4),
      clinfer_tensor_get_const_data (w->value),
      clinfer_tensor_get_byte_size (w4));
  wn = clinfer_graph_add_constant (graph, n_w, w4);
  rx = reshape (graph, n_x, opset, conv->inputs[0], s4);
  if (has_z)
    rz = reshape (graph, n_z, opset, conv->inputs[3], s4);
  c2 = clinfer_graph_add_node (graph, conv->op_type, conv->domain, n_conv,
      conv->n_inputs, 1);
  c2->opset = conv->opset;
  clinfer_node_copy_attrs (conv, c2);
  c2->inputs[0] = (ClinferPortRef) { rx, 0 };
  c2->inputs[1] = (ClinferPortRef) { wn, 0 };
  for (guint i = 2; i < conv->n_inputs; i++)
    c2->inputs[i] = conv->inputs[i];
  if (rz)
    c2->inputs[3] = (ClinferPortRef) { rz, 0 };
  widen_ints (c2, "kernel_shape", 1);
  widen_ints (c2, "strides", 1);
  widen_ints (c2, "dilations", 1);
  widen_ints (c2, "pads", 0);
  ry = reshape (graph, conv->name, opset, (ClinferPortRef) { c2, 0 }, s3);
  g_free (ry->outputs[0].name);
  ry->outputs[0].name = g_strdup (out_name);
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { conv, 0 },
      (ClinferPortRef) { ry, 0 });
  clinfer_graph_remove_node (graph, conv);
  return clinfer_graph_resolve_ops (graph, error)
      && clinfer_node_infer (s4, error) && clinfer_node_infer (s3, error)
      && clinfer_node_infer (wn, error) && clinfer_node_infer (rx, error)
      && (rz == NULL || clinfer_node_infer (rz, error))
      && clinfer_node_infer (c2, error) && clinfer_node_infer (ry, error);
}

gboolean
clinfer_pass_conv1d_to_2d (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;

  /* Reshape with a shape input (and 0 keeping a dim) is opset 5+. */
  if (!ctx->conv1d_as_2d || ctx->opset < 5)
    return TRUE;
  if ((order = clinfer_graph_topological_order (graph, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);

    if (!match (node))
      continue;
    if (!rewrite (graph, node, ctx->opset, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
