/* clinfer — pass infer-shapes: shape and type inference over the graph in topological order,
 * with constant values of inputs passed to each op (value propagation). */
#include "passes/passes.h"
#include "ops/op.h"

gboolean
clinfer_node_infer (ClinferNode *node, GError **error)
{
  ClinferValueInfo in[64], *inp = in, *outp;
  g_autofree ClinferValueInfo *in_heap = NULL, *out_heap = NULL;

  if (node->def == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
        "%s: node %s: no implementation", node->graph->origin,
        clinfer_node_label (node));
    return FALSE;
  }
  if (node->n_inputs > G_N_ELEMENTS (in))
    inp = in_heap = g_new0 (ClinferValueInfo, node->n_inputs);
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    inp[i].present = d != NULL;
    inp[i].type = d ? d->type : CLINFER_TYPE_UNDEFINED;
    inp[i].shape = d ? d->shape : clinfer_shape_unknown ();
    inp[i].value = d ? d->value : NULL;
  }
  outp = out_heap = g_new0 (ClinferValueInfo, MAX (node->n_outputs, 1));
  for (guint i = 0; i < node->n_outputs; i++) {
    outp[i].present = TRUE;
    outp[i].shape = clinfer_shape_unknown ();
  }
  if (!clinfer_node_infer_checked (node, inp, outp, error)) {
    clinfer_node_prefix_error (error, node, NULL);
    return FALSE;
  }
  for (guint i = 0; i < node->n_outputs; i++) {
    node->outputs[i].type = outp[i].type;
    node->outputs[i].shape = outp[i].shape;
  }
  return TRUE;
}

gboolean
clinfer_pass_infer_shapes (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);
    if (!clinfer_node_infer (node, error))
      return FALSE;
  }
  return TRUE;
}
