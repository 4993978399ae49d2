/* clinfer — pass fuse-residual-gate: a gate added back to its input, x + x * s with s
 * broadcast over x (the squeeze-and-excitation blocks of PP-OCR det: s is
 * [N, C, 1, 1]), becomes x * (s + 1): one pass over the large x instead of
 * two; the new Add touches only the few values of s. Compile only (the
 * exported graph keeps the model's form). */
#include "passes/passes.h"
#include "ops/op.h"
#include <string.h>

static gboolean
is_op (const ClinferNode *node, const char *op_type)
{
  return clinfer_pass_is_op (node, op_type)
      && node->n_inputs == 2 && clinfer_node_get_attr (node, "broadcast") == NULL;
}

/* @add is x + x * s (either operand order in both ops): sets x, s and the
 * Mul. */
static gboolean
match (const ClinferGraph *graph, const ClinferNode *add, ClinferPortRef *x,
    ClinferPortRef *s, ClinferNode **mul)
{
  ClinferPortDesc *xd, *sd;

  if (!is_op (add, "Add") || add->outputs[0].type != CLINFER_TYPE_F32)
    return FALSE;
  for (guint i = 0; i < 2; i++) {
    ClinferNode *m = add->inputs[1 - i].node;
    *x = add->inputs[i];
    if (x->node == NULL || !is_op (m, "Mul") || add->inputs[1 - i].port != 0
        || clinfer_graph_count_uses (graph, add->inputs[1 - i]) != 1)
      continue;
    for (guint j = 0; j < 2; j++) {
      if (!clinfer_pass_same_port (m->inputs[j], *x) || m->inputs[1 - j].node == NULL)
        continue;
      *s = m->inputs[1 - j];
      *mul = m;
      xd = clinfer_node_input_desc (m, j);
      sd = clinfer_node_input_desc (m, 1 - j);
      /* s is the smaller operand that broadcasts; the sum keeps x's shape */
      if (xd && sd && xd->type == CLINFER_TYPE_F32 && sd->type == CLINFER_TYPE_F32
          && clinfer_shape_is_static (&xd->shape)
          && clinfer_shape_is_static (&sd->shape)
          && clinfer_shape_equal (&add->outputs[0].shape, &xd->shape)
          && clinfer_shape_n_elements (&sd->shape)
              < clinfer_shape_n_elements (&xd->shape))
        return TRUE;
    }
  }
  return FALSE;
}

static gboolean
replace (ClinferGraph *graph, ClinferNode *add, ClinferPortRef x,
    ClinferPortRef s, ClinferNode *mul, GError **error)
{
  g_autofree char *one_name = g_strdup_printf ("%s/one", add->outputs[0].name);
  g_autofree char *plus_name = g_strdup_printf ("%s/gate_plus_one",
      add->outputs[0].name);
  g_autoptr (ClinferTensor) one_value = NULL;
  ClinferShape scalar = clinfer_shape_make (0, NULL);
  ClinferNode *one, *plus, *times;
  float v = 1.f;

  one_value = clinfer_tensor_new (CLINFER_TYPE_F32, &scalar, error);
  if (one_value == NULL)
    return FALSE;
  memcpy (clinfer_tensor_get_data (one_value), &v, sizeof (v));
  one = clinfer_graph_add_constant (graph, one_name, one_value);
  plus = clinfer_graph_add_node (graph, "Add", "", plus_name, 2, 1);
  plus->opset = add->opset;
  plus->inputs[0] = s;
  plus->inputs[1] = (ClinferPortRef) { one, 0 };
  times = clinfer_graph_add_node (graph, "Mul", "", add->name, 2, 1);
  times->opset = add->opset;
  times->inputs[0] = x;
  times->inputs[1] = (ClinferPortRef) { plus, 0 };
  g_free (times->outputs[0].name);
  times->outputs[0].name = g_strdup (add->outputs[0].name);
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { add, 0 },
      (ClinferPortRef) { times, 0 });
  clinfer_graph_remove_node (graph, add);
  clinfer_graph_remove_node (graph, mul);
  return clinfer_graph_resolve_ops (graph, error)
      && clinfer_node_infer (one, error) && clinfer_node_infer (plus, error)
      && clinfer_node_infer (times, error);
}

gboolean
clinfer_pass_fuse_residual_gate (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i), *mul = NULL;
    ClinferPortRef x, s;

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node)
        || !match (graph, node, &x, &s, &mul))
      continue;
    g_hash_table_add (removed, node);
    g_hash_table_add (removed, mul);
    if (!replace (graph, node, x, s, mul, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
