/* clinfer — pass fold-pad: a Pad with zeros on the spatial dims before a
 * Conv, AveragePool or MaxPool becomes that node's own padding. Exporters
 * write one for TensorFlow's asymmetric "SAME" padding before strided
 * convolutions (tf2onnx), and as an IR Pad layer; run as its own step the
 * Pad copies the whole tensor once more. Folded when:
 *   - the Pad is the built-in op, mode constant, its pads (attribute or a
 *     constant input) all >= 0 and 0 on the batch and channel dims, and
 *     its output read only by the consumer's data input;
 *   - Conv: auto_pad NOTSET; the pad value 0;
 *   - AveragePool: auto_pad NOTSET, ceil_mode 0, value 0, and its own
 *     pads 0 or count_include_pad 1: the padded zeros were real input, so
 *     the result takes count_include_pad 1;
 *   - MaxPool (one output): auto_pad NOTSET, ceil_mode 0, and a value that
 *     never wins a max: -inf, or 0 over an input that cannot be negative
 *     (the output of Relu, or of Clip with a lower bound >= 0).
 * The consumer is replaced by a copy with the summed pads reading the
 * Pad's input. */
#include "passes/passes.h"
#include "ops/op.h"
#include "ops/conv.h"
#include "ops/pad.h"
#include <math.h>
#include <string.h>

typedef struct {
  int rank;
  ClinferPadParams p;
} PadInfo;

/* @pad's pads and fill value when it is a zero-or-positive constant
 * padding of the spatial dims of a rank 3 to 5 f32 tensor. */
static gboolean
read_pad (const ClinferNode *pad, PadInfo *pi)
{
  const ClinferPortDesc *x = clinfer_node_input_desc (pad, 0);

  if (!clinfer_pass_is_op (pad, "Pad") || x == NULL
      || x->type != CLINFER_TYPE_F32 || x->shape.rank < 3
      || x->shape.rank > 5
      || !clinfer_pad_params (pad, x->shape.rank, &pi->p) || !pi->p.constant)
    return FALSE;
  pi->rank = x->shape.rank;
  for (int i = 0; i < 2 * pi->rank; i++)
    if (pi->p.pads[i] < 0 || pi->p.pads[i] > G_MAXINT32)
      return FALSE;
  /* Batch and channel dims: no padding. */
  return pi->p.pads[0] == 0 && pi->p.pads[1] == 0 && pi->p.pads[pi->rank] == 0
      && pi->p.pads[pi->rank + 1] == 0;
}

/* The output of @ref's node cannot be negative. */
static gboolean
non_negative (ClinferPortRef ref)
{
  const ClinferNode *n = ref.node;
  float lo;

  if (clinfer_pass_is_op (n, "Relu"))
    return TRUE;
  if (!clinfer_pass_is_op (n, "Clip"))
    return FALSE;
  if (n->opset < 11)
    return clinfer_node_get_attr (n, "min") != NULL
        && clinfer_node_attr_float (n, "min", 0.f, &lo, NULL) && lo >= 0.f;
  return n->n_inputs > 1 && clinfer_op_scalar_f32_input (n, 1, &lo)
      && lo >= 0.f;
}

/* The consumer's own pads (spatial begins then ends, zeros when it has
 * none), when it pads explicitly: no auto_pad, no ceil_mode. */
static gboolean
window_pads (const ClinferNode *node, int spatial, int64_t *pads)
{
  ClinferWindowAttrs a;

  memset (pads, 0, 2 * spatial * sizeof (int64_t));
  if (!clinfer_window_attrs_parse (node, !clinfer_pass_is_op (node, "Conv"),
          &a, NULL) || a.auto_pad != CLINFER_AUTO_PAD_NOTSET || a.ceil_mode
      || (a.n_pads != 0 && a.n_pads != (gsize) 2 * spatial))
    return FALSE;
  memcpy (pads, a.pads, a.n_pads * sizeof (int64_t));
  return TRUE;
}

/* @node can take the padding @pi of its input 0 (whose producer is
 * @pad). */
static gboolean
can_fold (const ClinferNode *node, const ClinferNode *pad, const PadInfo *pi,
    const int64_t *own)
{
  int64_t cip = 0;
  int spatial = pi->rank - 2;
  gboolean own_zero = TRUE;

  for (int i = 0; i < 2 * spatial; i++)
    own_zero &= own[i] == 0;
  if (clinfer_pass_is_op (node, "Conv"))
    return pi->p.value == 0.f;
  if (clinfer_pass_is_op (node, "AveragePool"))
    return pi->p.value == 0.f
        && clinfer_node_attr_int (node, "count_include_pad", 0, &cip, NULL)
        && (own_zero || cip != 0);
  if (clinfer_pass_is_op (node, "MaxPool"))
    return node->n_outputs == 1
        && ((isinf (pi->p.value) && pi->p.value < 0)
            || (pi->p.value == 0.f && non_negative (pad->inputs[0])));
  return FALSE;
}

static gboolean
fold (ClinferGraph *graph, ClinferNode *node, ClinferNode *pad,
    const PadInfo *pi, const int64_t *own, GHashTable *removed, GError **error)
{
  ClinferNode *f = clinfer_graph_add_node (graph, node->op_type, node->domain,
      node->name, node->n_inputs, node->n_outputs);
  g_autoptr (GPtrArray) nodes = g_ptr_array_new ();
  int spatial = pi->rank - 2;
  int64_t pads[2 * CLINFER_MAX_RANK];

  f->opset = node->opset;
  clinfer_node_copy_attrs (node, f);
  for (int i = 0; i < spatial; i++) {
    pads[i] = own[i] + pi->p.pads[2 + i];
    pads[spatial + i] = own[spatial + i] + pi->p.pads[pi->rank + 2 + i];
  }
  clinfer_node_set_attr (f, "pads", clinfer_attr_new_ints (pads, 2 * spatial));
  if (clinfer_pass_is_op (node, "AveragePool"))
    clinfer_node_set_attr (f, "count_include_pad", clinfer_attr_new_int (1));
  for (guint i = 0; i < node->n_inputs; i++)
    f->inputs[i] = node->inputs[i];
  f->inputs[0] = pad->inputs[0];
  g_ptr_array_add (nodes, node);
  g_ptr_array_add (nodes, pad);
  return clinfer_pass_replace_pattern (graph, node, f, nodes, removed, error);
}

gboolean
clinfer_pass_fold_pad (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i), *pad;
    int64_t own[2 * CLINFER_MAX_RANK];
    PadInfo pi;

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node) || node->n_inputs == 0
        || (pad = node->inputs[0].node) == NULL
        || g_hash_table_contains (removed, pad)
        || !(clinfer_pass_is_op (node, "Conv")
            || clinfer_pass_is_op (node, "AveragePool")
            || clinfer_pass_is_op (node, "MaxPool"))
        || node->outputs[0].type != CLINFER_TYPE_F32
        || !read_pad (pad, &pi)
        || clinfer_graph_count_uses (graph, node->inputs[0]) != 1
        || !window_pads (node, pi.rank - 2, own)
        || !can_fold (node, pad, &pi, own))
      continue;
    if (!fold (graph, node, pad, &pi, own, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
