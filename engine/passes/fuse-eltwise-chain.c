/* clinfer — pass fuse-eltwise-chain: a run of element-wise nodes, each reading the
 * previous one's output as its only reader, becomes one com.clinfer
 * EltwiseChain (engine/ops/eltwise-chain.h): one pass over memory and, on
 * the OpenCL device, one kernel launch instead of one per node (a GPU
 * spends a few microseconds per launch whatever the op). Runs only for
 * devices that ask for it (ClinferDeviceClass.fuses_eltwise_chains; the
 * CPU device fuses activations into its oneDNN steps instead) or with
 * CLINFER_FUSE_ELTWISE_CHAINS=1.
 *
 * Links: Relu, Clip (constant bounds), Sigmoid, Tanh, LeakyRelu,
 * HardSigmoid, HardSwish, Exp, Neg, Abs, Sqrt, and Add, Sub, Mul, Div, Max,
 * Min whose other operand is a one-element constant or a tensor of the
 * chained value's type and shape (at most 3 such tensors per chain). Every
 * value has one static shape and is f32 or f16; chains of at least two
 * links, at most CLINFER_CHAIN_MAX_OPS. */
#include "passes/passes.h"
#include "ops/eltwise-chain.h"
#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
  ClinferElementType type;
  ClinferShape shape;
  ClinferPortRef inputs[CLINFER_CHAIN_MAX_INPUTS];   /* [0]: the chain's x */
  guint n_inputs;
  ClinferChain chain;
  GPtrArray *nodes;          /* the links' nodes, in order */
} Chain;

/* Index of tensor @ref among the chain's inputs, added when new; -1 when
 * it has another type or shape, or the chain has no room. */
static int
tensor_operand (Chain *c, ClinferPortRef ref)
{
  ClinferPortDesc *d = ref.node ? &ref.node->outputs[ref.port] : NULL;

  if (d == NULL || d->type != c->type || !clinfer_shape_equal (&d->shape,
          &c->shape))
    return -1;
  for (guint i = 1; i < c->n_inputs; i++)
    if (clinfer_pass_same_port (c->inputs[i], ref))
      return (int) i;
  if (c->n_inputs == CLINFER_CHAIN_MAX_INPUTS)
    return -1;
  c->inputs[c->n_inputs] = ref;
  return (int) c->n_inputs++;
}

/* The value of input @i of @node when it is a one-element f32 or f16
 * constant (an f16 chain's constants are f16). */
static gboolean
scalar_input (const ClinferNode *node, guint i, float *v)
{
  ClinferPortDesc *d = i < node->n_inputs ? clinfer_node_input_desc (node, i)
      : NULL;

  if (d == NULL || d->value == NULL || (d->type != CLINFER_TYPE_F32
          && d->type != CLINFER_TYPE_F16)
      || clinfer_tensor_get_n_elements (d->value) != 1)
    return FALSE;
  *v = (float) clinfer_tensor_get_as_double (d->value, 0);
  return TRUE;
}

/* Clip's bounds: attributes before opset 11, optional scalar inputs
 * since (absent: unbounded). FALSE when a bound is not a constant. */
static gboolean
clip_bounds (const ClinferNode *node, float *lo, float *hi)
{
  *lo = -INFINITY;
  *hi = INFINITY;
  if (node->opset < 11)
    return node->n_inputs == 1
        && clinfer_node_attr_float (node, "min", -FLT_MAX, lo, NULL)
        && clinfer_node_attr_float (node, "max", FLT_MAX, hi, NULL);
  if (node->n_inputs > 1 && node->inputs[1].node
      && !scalar_input (node, 1, lo))
    return FALSE;
  if (node->n_inputs > 2 && node->inputs[2].node
      && !scalar_input (node, 2, hi))
    return FALSE;
  return node->n_inputs <= 3;
}

/* Appends @node as a link applied to the chain value at @value (one of
 * its inputs). FALSE (chain unchanged but for a tensor input it may have
 * added) when @node cannot be one. */
static gboolean
add_link (Chain *c, ClinferNode *node, ClinferPortRef value)
{
  guint k = c->chain.n_ops;
  int op = *node->domain || !clinfer_node_is_builtin (node) ? -1
      : clinfer_chain_op_from_type (node->op_type);
  float a = 0.f, b = 0.f;
  int operand = 0;

  if (op < 0 || k == CLINFER_CHAIN_MAX_OPS || node->n_outputs != 1
      || node->outputs[0].type != c->type
      || !clinfer_shape_equal (&node->outputs[0].shape, &c->shape))
    return FALSE;
  if (CLINFER_CHAIN_IS_BINARY (op)) {
    guint at;
    float v;
    if (node->n_inputs != 2 || clinfer_node_get_attr (node, "broadcast"))
      return FALSE;
    at = clinfer_pass_same_port (node->inputs[0], value) ? 0 : 1;
    if (!clinfer_pass_same_port (node->inputs[at], value)
        || clinfer_pass_same_port (node->inputs[1 - at], value))
      return FALSE;
    if (scalar_input (node, 1 - at, &v))
      a = v;
    else if ((operand = tensor_operand (c, node->inputs[1 - at])) < 0)
      return FALSE;
    if (at == 1)
      operand |= CLINFER_CHAIN_REVERSED;
  } else {
    if (!clinfer_pass_same_port (node->inputs[0], value))
      return FALSE;
    switch (op) {
      case CLINFER_CHAIN_CLIP:
        if (!clip_bounds (node, &a, &b))
          return FALSE;
        break;
      case CLINFER_CHAIN_LEAKY_RELU:
        if (!clinfer_node_attr_float (node, "alpha", 0.01f, &a, NULL))
          return FALSE;
        break;
      case CLINFER_CHAIN_HARD_SIGMOID:
        if (!clinfer_node_attr_float (node, "alpha", 0.2f, &a, NULL)
            || !clinfer_node_attr_float (node, "beta", 0.5f, &b, NULL))
          return FALSE;
        break;
      default:
        break;
    }
    if (op != CLINFER_CHAIN_CLIP && node->n_inputs != 1)
      return FALSE;
  }
  c->chain.op[k] = op;
  c->chain.operand[k] = operand;
  c->chain.a[k] = a;
  c->chain.b[k] = b;
  c->chain.n_ops++;
  g_ptr_array_add (c->nodes, node);
  return TRUE;
}

/* Starts a chain at @node, its value read from input @at. */
static gboolean
start (Chain *c, ClinferNode *node, guint at)
{
  ClinferPortRef x = node->inputs[at];
  ClinferPortDesc *d = x.node ? &x.node->outputs[x.port] : NULL;

  c->chain.n_ops = 0;
  c->n_inputs = 1;
  c->inputs[0] = x;
  g_ptr_array_set_size (c->nodes, 0);
  if (d == NULL || node->n_outputs != 1
      || (d->type != CLINFER_TYPE_F32 && d->type != CLINFER_TYPE_F16)
      || !clinfer_shape_is_static (&d->shape))
    return FALSE;
  c->type = d->type;
  c->shape = d->shape;
  return add_link (c, node, x);
}

/* The one node reading output 0 of @node when that is its only use (not
 * a graph output, not read twice). */
static ClinferNode *
only_reader (const ClinferGraph *graph, ClinferNode *node)
{
  ClinferPortRef out = { node, 0 };
  ClinferNode *reader = NULL;
  guint uses = 0;

  for (guint i = 0; i < graph->outputs->len; i++)
    if (clinfer_pass_same_port (g_array_index (graph->outputs, ClinferGraphOutput,
                i).ref, out))
      return NULL;
  for (guint i = 0; i < graph->nodes->len && uses < 2; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    for (guint j = 0; j < n->n_inputs; j++)
      if (clinfer_pass_same_port (n->inputs[j], out)) {
        reader = n;
        uses++;
      }
  }
  return uses == 1 ? reader : NULL;
}

static gboolean
replace (ClinferGraph *graph, Chain *c, GHashTable *removed, GError **error)
{
  ClinferNode *tail = g_ptr_array_index (c->nodes, c->nodes->len - 1);
  ClinferNode *node = clinfer_graph_add_node (graph, "EltwiseChain",
      "com.clinfer", tail->name, c->n_inputs, 1);
  int64_t ops[CLINFER_CHAIN_MAX_OPS], operands[CLINFER_CHAIN_MAX_OPS];

  for (guint k = 0; k < c->chain.n_ops; k++) {
    ops[k] = c->chain.op[k];
    operands[k] = c->chain.operand[k];
  }
  for (guint i = 0; i < c->n_inputs; i++)
    node->inputs[i] = c->inputs[i];
  clinfer_node_set_attr (node, "ops", clinfer_attr_new_ints (ops,
          c->chain.n_ops));
  clinfer_node_set_attr (node, "operands", clinfer_attr_new_ints (operands,
          c->chain.n_ops));
  clinfer_node_set_attr (node, "a", clinfer_attr_new_floats (c->chain.a,
          c->chain.n_ops));
  clinfer_node_set_attr (node, "b", clinfer_attr_new_floats (c->chain.b,
          c->chain.n_ops));
  return clinfer_pass_replace_pattern (graph, tail, node, c->nodes, removed,
      error);
}

gboolean
clinfer_pass_fuse_eltwise_chain (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;
  g_autoptr (GHashTable) removed = NULL;
  g_autoptr (GPtrArray) nodes = NULL;
  Chain c = { 0 };

  if (!ctx->fuse_eltwise_chains)
    return TRUE;
  if (!(order = clinfer_graph_topological_order (graph, error)))
    return FALSE;
  removed = g_hash_table_new (NULL, NULL);
  nodes = g_ptr_array_new ();
  c.nodes = nodes;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i), *next;
    gboolean ok = FALSE;

    /* @removed holds freed nodes: test membership before touching one. */
    if (g_hash_table_contains (removed, node) || node->n_inputs == 0)
      continue;
    for (guint at = 0; at < MIN (node->n_inputs, 2) && !ok; at++)
      ok = start (&c, node, at);
    if (!ok)
      continue;
    while ((next = only_reader (graph,
                g_ptr_array_index (c.nodes, c.nodes->len - 1)))
        && add_link (&c, next, (ClinferPortRef) {
              g_ptr_array_index (c.nodes, c.nodes->len - 1), 0 }))
      ;
    if (c.chain.n_ops < 2)
      continue;
    if (!replace (graph, &c, removed, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
