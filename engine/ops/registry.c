/* clinfer — the op registry: one line per op family table, lookup by
 * (domain, op type, opset) and resolution of a graph's nodes. */
#include "ops/op.h"
#include "ops/custom-ops.h"
#include <string.h>

static const ClinferOpDef *const families[] = {
  clinfer_ops_source,
  clinfer_ops_eltwise,
  clinfer_ops_conv,
  clinfer_ops_pool,
  clinfer_ops_shape,
  clinfer_ops_fused,
  clinfer_ops_eltwise_chain,
  clinfer_ops_activation,
  clinfer_ops_logic,
  clinfer_ops_reduce,
  clinfer_ops_softmax,
  clinfer_ops_matmul,
  clinfer_ops_norm,
  clinfer_ops_index,
  clinfer_ops_resize,
  clinfer_ops_layout,
  clinfer_ops_convtranspose,
  clinfer_ops_recurrent,
};

gboolean
clinfer_op_domain_equal (const char *a, const char *b)
{
  if (a == NULL || strcmp (a, "ai.onnx") == 0)
    a = "";
  if (b == NULL || strcmp (b, "ai.onnx") == 0)
    b = "";
  return strcmp (a, b) == 0;
}

gboolean
clinfer_node_is_builtin (const ClinferNode *node)
{
  return node->def == NULL || !(node->def->flags & CLINFER_OP_CUSTOM);
}

gboolean
clinfer_node_is_builtin_op (const ClinferNode *node, const char *domain,
    const char *op_type)
{
  return node && strcmp (node->op_type, op_type) == 0
      && clinfer_op_domain_equal (node->domain, domain)
      && clinfer_node_is_builtin (node);
}

const ClinferOpDef *
clinfer_op_lookup (const char *domain, const char *op_type, int opset)
{
  for (gsize f = 0; f < G_N_ELEMENTS (families); f++) {
    for (const ClinferOpDef *d = families[f]; d->op_type; d++) {
      if (strcmp (d->op_type, op_type) != 0 || !clinfer_op_domain_equal (d->domain, domain))
        continue;
      /* opset 0 means "not imported" (internal domains): take any. */
      if (opset == 0 || (opset >= d->since_version
              && (d->last_version == 0 || opset <= d->last_version)))
        return d;
    }
  }
  return NULL;
}

gboolean
clinfer_op_is_known (const char *domain, const char *op_type)
{
  for (gsize f = 0; f < G_N_ELEMENTS (families); f++)
    for (const ClinferOpDef *d = families[f]; d->op_type; d++)
      if (strcmp (d->op_type, op_type) == 0 && clinfer_op_domain_equal (d->domain, domain))
        return TRUE;
  return FALSE;
}

/* "2", "1 to 3" or "at least 1" */
static char *
count_range (guint min, guint max)
{
  if (max == CLINFER_VARIADIC)
    return g_strdup_printf ("at least %u", min);
  if (min == max)
    return g_strdup_printf ("%u", min);
  return g_strdup_printf ("%u to %u", min, max);
}

static gboolean
resolve_node (ClinferNode *node, const ClinferOpSet *extra, GError **error)
{
  const ClinferOpDef *def;
  guint n_in = clinfer_node_n_present_inputs (node);

  if (node->def)
    return TRUE;
  def = clinfer_op_set_lookup (extra, node->domain, node->op_type, node->opset);
  if (def == NULL)
    def = clinfer_op_lookup (node->domain, node->op_type, node->opset);
  if (def == NULL) {
    if (clinfer_op_is_known (node->domain, node->op_type))
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_VERSION,
          "%s: node %s: opset version %d of %s is not supported",
          node->graph->origin, clinfer_node_label (node), node->opset,
          node->op_type);
    else
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
          "%s: node %s: unknown op '%s%s%s' (no built-in implementation; "
          "a custom op library (custom-lib) or a custom OpenCL layer "
          "(config-file) can provide it)",
          node->graph->origin, clinfer_node_label (node),
          *node->domain ? node->domain : "", *node->domain ? "." : "",
          node->op_type);
    return FALSE;
  }
  clinfer_node_set_label_note (node, def->note);
  if (n_in < def->min_inputs || (def->max_inputs != CLINFER_VARIADIC
          && n_in > def->max_inputs)) {
    g_autofree char *want = count_range (def->min_inputs, def->max_inputs);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: node %s: %u input%s, the op takes %s", node->graph->origin,
        clinfer_node_label (node), n_in, n_in == 1 ? "" : "s", want);
    return FALSE;
  }
  if (node->n_outputs < def->min_outputs || (def->max_outputs != CLINFER_VARIADIC
          && node->n_outputs > def->max_outputs)) {
    g_autofree char *want = count_range (def->min_outputs, def->max_outputs);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: node %s: %u output%s, the op has %s", node->graph->origin,
        clinfer_node_label (node), node->n_outputs,
        node->n_outputs == 1 ? "" : "s", want);
    return FALSE;
  }
  node->def = def;
  node->op_data_free = def->free_data;
  if (def->prepare && !def->prepare (node, error)) {
    node->def = NULL;        /* prepare failed: nothing to free */
    node->op_data_free = NULL;
    clinfer_node_prefix_error (error, node, NULL);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_graph_resolve_ops (ClinferGraph *graph, GError **error)
{
  return clinfer_graph_resolve_ops_with (graph, NULL, error);
}

gboolean
clinfer_graph_resolve_ops_with (ClinferGraph *graph, const ClinferOpSet *extra,
    GError **error)
{
  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *node = g_ptr_array_index (graph->nodes, i);
    GHashTableIter it;
    gpointer k, v;

    if (!resolve_node (node, extra, error))
      return FALSE;
    /* Subgraphs (If/Loop bodies) resolve with the node. */
    g_hash_table_iter_init (&it, node->attrs);
    while (g_hash_table_iter_next (&it, &k, &v)) {
      ClinferAttr *a = v;
      if (a->type == CLINFER_ATTR_GRAPH
          && !clinfer_graph_resolve_ops_with (a->g, extra, error))
        return FALSE;
      if (a->type == CLINFER_ATTR_GRAPHS)
        for (gsize j = 0; j < a->graphs.n; j++)
          if (!clinfer_graph_resolve_ops_with (a->graphs.v[j], extra, error))
            return FALSE;
    }
  }
  return TRUE;
}

void
clinfer_op_foreach (ClinferOpFunc func, gpointer user_data)
{
  for (gsize f = 0; f < G_N_ELEMENTS (families); f++)
    for (const ClinferOpDef *d = families[f]; d->op_type; d++)
      func (d, user_data);
}
