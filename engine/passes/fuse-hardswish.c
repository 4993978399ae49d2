/* clinfer — pass fuse-hardswish: HardSwish written out as element-wise nodes
 * (exporters from frameworks without the op, e.g. Paddle2ONNX) becomes
 * one HardSwish node (opset 14), which the devices run in one pass (the
 * CPU's oneDNN path as a conv post-op). Recognised, x being any f32
 * tensor and each inner node used only inside the pattern:
 *   Div (Mul (x, Clip (Add (x, 3), 0, 6)), 6)
 *   Mul (x, Div (Clip (Add (x, 3), 0, 6), 6))
 *   Mul (x, HardSigmoid (x, alpha = 1/6, beta = 0.5))
 * (Add and Mul in either operand order; Div by 6 or Mul by 1/6.) */
#include "passes/passes.h"
#include "ops/op.h"
#include <math.h>
#include <string.h>

static gboolean
near (float v, float want)
{
  return fabsf (v - want) <= 1e-6f * fabsf (want);
}

/* @node is a binary op of a tensor and the scalar @want; its tensor
 * operand is stored in *other. @commutes: the scalar may come first. */
static gboolean
with_scalar (const ClinferNode *node, const char *op, float want,
    gboolean commutes, ClinferPortRef *other)
{
  float v;

  if (!clinfer_pass_is_op (node, op) || node->n_inputs != 2
      || clinfer_node_get_attr (node, "broadcast") != NULL)
    return FALSE;
  if (clinfer_op_scalar_f32_input (node, 1, &v) && near (v, want)) {
    *other = node->inputs[0];
    return TRUE;
  }
  if (commutes && clinfer_op_scalar_f32_input (node, 0, &v) && near (v, want)) {
    *other = node->inputs[1];
    return TRUE;
  }
  return FALSE;
}

/* x / 6 or x * (1/6). */
static gboolean
divides_by_six (const ClinferNode *node, ClinferPortRef *other)
{
  return with_scalar (node, "Div", 6.f, FALSE, other)
      || with_scalar (node, "Mul", 1.f / 6.f, TRUE, other);
}

static gboolean
single_use (const ClinferGraph *graph, const ClinferNode *node)
{
  return clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) node, 0 }) == 1;
}

/* Clip (Add (x, 3), 0, 6) at @ref, inner nodes single-use: sets *x. */
static gboolean
relu6_of_plus_three (const ClinferGraph *graph, ClinferPortRef ref,
    ClinferPortRef *x, GPtrArray *inner)
{
  ClinferNode *clip = ref.node, *add;
  float lo, hi;

  if (!clinfer_pass_is_op (clip, "Clip") || clip->n_inputs != 3 || !single_use (graph, clip)
      || !clinfer_op_scalar_f32_input (clip, 1, &lo) || !clinfer_op_scalar_f32_input (clip, 2, &hi)
      || lo != 0.f || hi != 6.f)
    return FALSE;
  add = clip->inputs[0].node;
  if (!single_use (graph, add) || !with_scalar (add, "Add", 3.f, TRUE, x))
    return FALSE;
  g_ptr_array_add (inner, clip);
  g_ptr_array_add (inner, add);
  return TRUE;
}

/* Mul (x, f (x)) where f (x) is clip (x + 3, 0, 6) [/ 6 when @divided]
 * or HardSigmoid (x) with 1/6, 0.5 (when @divided). */
static gboolean
times_gate (const ClinferGraph *graph, const ClinferNode *mul,
    gboolean divided, ClinferPortRef *x, GPtrArray *inner)
{
  if (!clinfer_pass_is_op (mul, "Mul") || mul->n_inputs != 2
      || clinfer_node_get_attr (mul, "broadcast") != NULL)
    return FALSE;
  for (guint k = 0; k < 2; k++) {
    ClinferPortRef gate = mul->inputs[k], in;
    ClinferNode *g = gate.node;
    float alpha, beta;
    guint mark = inner->len;

    if (g == NULL || !single_use (graph, g))
      continue;
    if (divided && clinfer_pass_is_op (g, "HardSigmoid")
        && clinfer_node_attr_float (g, "alpha", 0.2f, &alpha, NULL)
        && clinfer_node_attr_float (g, "beta", 0.5f, &beta, NULL)
        && near (alpha, 1.f / 6.f) && beta == 0.5f
        && clinfer_pass_same_port (g->inputs[0], mul->inputs[1 - k])) {
      g_ptr_array_add (inner, g);
      *x = g->inputs[0];
      return TRUE;
    }
    if (divided) {
      if (!divides_by_six (g, &in)
          || !relu6_of_plus_three (graph, in, x, inner)) {
        g_ptr_array_set_size (inner, mark);
        continue;
      }
      g_ptr_array_add (inner, g);
    } else if (!relu6_of_plus_three (graph, gate, x, inner)) {
      g_ptr_array_set_size (inner, mark);
      continue;
    }
    if (clinfer_pass_same_port (*x, mul->inputs[1 - k]))
      return TRUE;
    g_ptr_array_set_size (inner, mark);
  }
  return FALSE;
}

/* The pattern ending at @tail: its input x and the nodes it replaces. */
static gboolean
match (const ClinferGraph *graph, ClinferNode *tail, ClinferPortRef *x,
    GPtrArray *nodes)
{
  ClinferPortRef in;
  ClinferPortDesc *out = &tail->outputs[0];

  if (tail->n_outputs != 1 || out->type != CLINFER_TYPE_F32)
    return FALSE;
  g_ptr_array_set_size (nodes, 0);
  g_ptr_array_add (nodes, tail);
  if (divides_by_six (tail, &in) && in.node && single_use (graph, in.node)
      && times_gate (graph, in.node, FALSE, x, nodes)) {
    g_ptr_array_add (nodes, in.node);
    return TRUE;
  }
  g_ptr_array_set_size (nodes, 1);
  return times_gate (graph, tail, TRUE, x, nodes);
}

static gboolean
replace (ClinferGraph *graph, ClinferNode *tail, ClinferPortRef x,
    GPtrArray *nodes, GHashTable *removed, GError **error)
{
  ClinferNode *hs = clinfer_graph_add_node (graph, "HardSwish", "",
      tail->name, 1, 1);

  hs->opset = MAX (tail->opset, 14);
  hs->inputs[0] = x;
  return clinfer_pass_replace_pattern (graph, tail, hs, nodes, removed, error);
}

gboolean
clinfer_pass_fuse_hardswish (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new ();

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);
    ClinferPortRef x = { NULL, 0 };

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node)
        || !(clinfer_pass_is_op (node, "Div") || clinfer_pass_is_op (node, "Mul"))
        || !match (graph, node, &x, nodes))
      continue;
    if (!replace (graph, node, x, nodes, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
