/* clinfer — pass remove-dead-nodes: drops every node no graph output depends on. */
#include "passes/passes.h"

gboolean
clinfer_pass_remove_dead_nodes (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GHashTable) live = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) stack = g_ptr_array_new ();

  for (guint i = 0; i < graph->outputs->len; i++) {
    ClinferNode *n = g_array_index (graph->outputs, ClinferGraphOutput, i).ref.node;
    if (n && g_hash_table_add (live, n))
      g_ptr_array_add (stack, n);
  }
  /* Graph inputs stay: a request must be able to bind every input. */
  for (guint i = 0; i < graph->inputs->len; i++)
    g_hash_table_add (live, g_ptr_array_index (graph->inputs, i));
  while (stack->len > 0) {
    ClinferNode *n = g_ptr_array_steal_index_fast (stack, stack->len - 1);
    for (guint j = 0; j < n->n_inputs; j++) {
      ClinferNode *p = n->inputs[j].node;
      if (p && g_hash_table_add (live, p))
        g_ptr_array_add (stack, p);
    }
  }
  for (guint i = graph->nodes->len; i > 0; i--) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i - 1);
    if (!g_hash_table_contains (live, n)) {
      clinfer_graph_remove_node (graph, n);
      *changed = TRUE;
    }
  }
  return TRUE;
}
