/* clinfer — pass fuse-swish: x * Sigmoid (x) (SiLU, the activation of
 * YOLO-family detectors and EfficientNets) becomes one com.clinfer Swish
 * node, for devices with a kernel for it (the CPU device, whose oneDNN
 * path then runs it as a post-op of the conv before). Recognised: Mul
 * (x, Sigmoid (x)) in either operand order, f32, the Sigmoid read only
 * by the Mul. Written out, x is read twice and Sigmoid (x) written and
 * read once more; after the conv that makes x it cannot be fused, x
 * having two readers. */
#include "passes/passes.h"

/* Mul (x, Sigmoid (x)): sets *x and *sig. */
static gboolean
match (const ClinferGraph *graph, const ClinferNode *mul, ClinferPortRef *x,
    ClinferNode **sig)
{
  if (!clinfer_pass_is_op (mul, "Mul") || mul->n_inputs != 2
      || mul->n_outputs != 1 || mul->outputs[0].type != CLINFER_TYPE_F32
      || clinfer_node_get_attr (mul, "broadcast") != NULL)
    return FALSE;
  for (guint k = 0; k < 2; k++) {
    ClinferNode *s = mul->inputs[k].node;

    if (s == NULL || !clinfer_pass_is_op (s, "Sigmoid") || s->n_inputs != 1
        || mul->inputs[k].port != 0
        || !clinfer_pass_same_port (s->inputs[0], mul->inputs[1 - k])
        || clinfer_graph_count_uses (graph, mul->inputs[k]) != 1)
      continue;
    *x = s->inputs[0];
    *sig = s;
    return TRUE;
  }
  return FALSE;
}

gboolean
clinfer_pass_fuse_swish (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;
  g_autoptr (GHashTable) removed = NULL;
  g_autoptr (GPtrArray) nodes = NULL;

  if (!ctx->swish)
    return TRUE;
  order = clinfer_graph_topological_order (graph, error);
  if (order == NULL)
    return FALSE;
  removed = g_hash_table_new (NULL, NULL);
  nodes = g_ptr_array_new ();
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i), *sig = NULL, *sw;
    ClinferPortRef x = { NULL, 0 };

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node) || !match (graph, node, &x, &sig))
      continue;
    sw = clinfer_graph_add_node (graph, "Swish", "com.clinfer", node->name,
        1, 1);
    sw->opset = 1;
    sw->inputs[0] = x;
    g_ptr_array_set_size (nodes, 0);
    g_ptr_array_add (nodes, node);
    g_ptr_array_add (nodes, sig);
    if (!clinfer_pass_replace_pattern (graph, node, sw, nodes, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
