/* clinfer — pass fold-constants: every node whose inputs all have known
 * values is evaluated once with its reference eval and replaced by a
 * Constant. Shape chains (Shape -> Gather -> Concat -> Reshape) collapse
 * because Shape of a static-shaped tensor is itself known. */
#include "passes/passes.h"
#include "ops/op.h"
#include <string.h>

/* Largest tensor folding may create from small inputs: folding must not
 * blow up memory (an Expand or Tile of a constant to a huge activation is
 * cheaper at run time). A node may fold to more when its inputs' values
 * already take as much (a Transpose or Cast of a large weight). */
#define FOLD_MAX_BYTES (16 * 1024 * 1024)

static gboolean
inputs_known (const ClinferNode *node)
{
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (node->inputs[i].node != NULL && (d == NULL || d->value == NULL))
      return FALSE;
  }
  return TRUE;
}

/* Shape, Size and friends only need static input shapes, not values. */
static gboolean
shape_only_op (const ClinferNode *node)
{
  return clinfer_node_is_builtin_op (node, "", "Shape")
      || clinfer_node_is_builtin_op (node, "", "Size");
}

/* Bytes the values of @node's inputs take. */
static guint64
input_value_bytes (const ClinferNode *node)
{
  guint64 total = 0;

  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d && d->value)
      total += clinfer_tensor_get_byte_size (d->value);
  }
  return total;
}

/* Most inputs and outputs fold_node() takes. */
#define FOLD_MAX_INPUTS 64
#define FOLD_MAX_OUTPUTS 16

/* TRUE when fold_node() can evaluate @node now: an op with an eval,
 * its inputs known (or only their shapes, for Shape and Size), its
 * outputs within the folding budget. */
static gboolean
can_fold (const ClinferNode *node)
{
  guint64 out_bytes = 0, max_bytes;

  if (node->def == NULL || node->def->eval == NULL
      || (node->def->flags & (CLINFER_OP_NO_FOLD | CLINFER_OP_SOURCE))
      || node->n_inputs > FOLD_MAX_INPUTS || node->n_outputs > FOLD_MAX_OUTPUTS)
    return FALSE;
  max_bytes = MIN (MAX (FOLD_MAX_BYTES, input_value_bytes (node)),
      clinfer_graph_get_memory_limit (node->graph));
  for (guint i = 0; i < node->n_outputs; i++) {
    guint64 bytes;
    if (!clinfer_shape_get_byte_size (&node->outputs[i].shape,
            node->outputs[i].type, &bytes)
        || !g_uint64_checked_add (&out_bytes, out_bytes, bytes)
        || out_bytes > max_bytes)
      return FALSE;
  }
  if (shape_only_op (node)) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, 0);
    /* fold_node() stands a placeholder tensor for the input: its type
     * must be one a tensor can have. */
    return d && clinfer_shape_is_static (&d->shape)
        && clinfer_element_type_size (d->type) > 0;
  }
  return node->n_inputs > 0 && inputs_known (node);
}

/* Evaluates @node, which can_fold() accepted, on its inputs' values and
 * stores the results as port values. */
static gboolean
fold_node (ClinferNode *node, GError **error)
{
  ClinferTensor *in[FOLD_MAX_INPUTS] = { NULL }, *out[FOLD_MAX_OUTPUTS] = { NULL };
  g_autoptr (GPtrArray) dummies = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);
  gboolean ok = FALSE;

  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d && d->value)
      in[i] = d->value;
    else if (d) {             /* shape-only op: a placeholder of that shape */
      in[i] = clinfer_tensor_new_wrapped (d->type, &d->shape, NULL,
          (gpointer) 1, NULL, NULL, error);
      if (in[i] == NULL)
        return FALSE;
      g_ptr_array_add (dummies, in[i]);
    }
  }
  for (guint i = 0; i < node->n_outputs; i++) {
    out[i] = clinfer_tensor_new (node->outputs[i].type, &node->outputs[i].shape,
        error);
    if (out[i] == NULL)
      goto done;
  }
  if (!node->def->eval (node, in, out, error)) {
    g_prefix_error (error, "%s: while folding constants: ", node->graph->origin);
    goto done;
  }
  for (guint i = 0; i < node->n_outputs; i++) {
    if (node->outputs[i].value)
      clinfer_tensor_unref (node->outputs[i].value);
    node->outputs[i].value = g_steal_pointer (&out[i]);
  }
  ok = TRUE;
done:
  for (guint i = 0; i < node->n_outputs; i++)
    if (out[i])
      clinfer_tensor_unref (out[i]);
  return ok;
}

/* Replaces each output of a folded node by a Constant node. */
static void
replace_by_constants (ClinferGraph *graph, ClinferNode *node)
{
  for (guint i = 0; i < node->n_outputs; i++) {
    ClinferPortRef from = { node, i };
    ClinferNode *c;
    ClinferPortRef to;

    if (clinfer_graph_count_uses (graph, from) == 0)
      continue;
    c = clinfer_graph_add_constant (graph, node->outputs[i].name,
        node->outputs[i].value);
    c->def = clinfer_op_lookup ("", "Constant", 0);
    to.node = c;
    to.port = 0;
    clinfer_graph_replace_uses (graph, from, to);
  }
}

gboolean
clinfer_pass_fold_constants (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GPtrArray) folded = g_ptr_array_new ();

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);

    /* Inferred again with every value folded before it, so a shape that
     * became static upstream (a Reshape whose target was just folded)
     * reaches Shape nodes further down in this same walk. */
    if (node->def != NULL && !clinfer_node_infer (node, error))
      return FALSE;
    if (!can_fold (node))
      continue;
    if (!fold_node (node, error))
      return FALSE;
    g_ptr_array_add (folded, node);
  }
  for (guint i = 0; i < folded->len; i++)
    replace_by_constants (graph, g_ptr_array_index (folded, i));
  if (folded->len > 0)
    *changed = TRUE;
  return TRUE;
}
