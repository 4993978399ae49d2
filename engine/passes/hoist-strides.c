/* clinfer — pass hoist-strides: when every reader of a 4-D tensor is a
 * 1x1 Conv with the same strides (sh, sw) > 1 and no padding (the first
 * block of a ResNet v1 stage: its branch and its shortcut projection both
 * subsample the stage's input), only every sh-th row and sw-th column of
 * that tensor is ever read. The subsampling moves up the graph to where
 * the tensor is computed:
 *   - through element-wise nodes (Relu, Clip, LeakyRelu, Sigmoid, Tanh,
 *     HardSigmoid, HardSwish, Add, Sub, Mul, Div; an operand broadcast
 *     over H and W stays as it is) and through 1x1 Convs without padding
 *     or stride, when the rewritten nodes alone read their inputs;
 *   - into a Conv, which takes the stride itself (its strides multiplied,
 *     its end pads cut to the last window it still computes): the 3x3
 *     conv before the block computes a quarter of its pixels;
 *   - where neither applies (a tensor other nodes read too, such as the
 *     previous block's output feeding the residual Add), a MaxPool with a
 *     1x1 window and the strides picks the pixels.
 * The 1x1 Convs then run with stride 1 on the subsampled tensor. Done
 * only when at least one Conv takes the stride; compile only. OpenVINO's
 * CPU plugin does the same (its "strides optimization"). */
#include "passes/passes.h"
#include "ops/op.h"
#include "ops/conv.h"
#include <string.h>

/* Nodes between two rewritten ones, at most: bounds the recursion. */
#define MAX_DEPTH 32

typedef struct {
  ClinferGraph *graph;
  int64_t sh, sw;
  gboolean apply;            /* FALSE: only count what would happen */
  guint absorbed;            /* Convs that take the stride */
  GPtrArray *dead;           /* replaced Convs, removed at the end */
} Hoist;

static const char *const unary_ops[] = { "Relu", "Clip", "LeakyRelu",
  "Sigmoid", "Tanh", "HardSigmoid", "HardSwish" };
static const char *const binary_ops[] = { "Add", "Sub", "Mul", "Div" };

static gboolean
is_one_of (const ClinferNode *node, const char *const *ops, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (clinfer_pass_is_op (node, ops[i]))
      return TRUE;
  return FALSE;
}

static gboolean
static_4d (const ClinferPortDesc *d)
{
  return d && d->shape.rank == 4 && clinfer_shape_is_static (&d->shape);
}

/* The explicit window of Conv @node (2-D, auto_pad NOTSET) with its kernel
 * from the weights when the attribute is absent. */
static gboolean
conv_window (const ClinferNode *node, ClinferWindowAttrs *a)
{
  const ClinferPortDesc *w = clinfer_node_input_desc (node, 1);

  if (!clinfer_pass_is_op (node, "Conv") || node->n_outputs != 1
      || !clinfer_window_attrs_parse (node, FALSE, a, NULL)
      || a->auto_pad != CLINFER_AUTO_PAD_NOTSET
      || (a->n_pads != 0 && a->n_pads != 4)
      || (a->n_strides != 0 && a->n_strides != 2)
      || (a->n_dilations != 0 && a->n_dilations != 2)
      || (a->n_kernel != 0 && a->n_kernel != 2)
      || w == NULL || w->shape.rank != 4
      || !static_4d (clinfer_node_input_desc (node, 0))
      || !static_4d (&node->outputs[0]))
    return FALSE;
  if (a->n_kernel == 0) {
    a->kernel[0] = w->shape.dims[2];
    a->kernel[1] = w->shape.dims[3];
  }
  if (a->n_strides == 0)
    a->strides[0] = a->strides[1] = 1;
  if (a->n_dilations == 0)
    a->dilations[0] = a->dilations[1] = 1;
  if (a->n_pads == 0)
    memset (a->pads, 0, sizeof (a->pads));
  a->n_kernel = a->n_strides = a->n_dilations = 2;
  a->n_pads = 4;
  return TRUE;
}

/* A 1x1 Conv with strides (sh, sw) > 1 and no padding: what the pass
 * starts from. */
static gboolean
strided_pointwise (const ClinferNode *node, int64_t *sh, int64_t *sw)
{
  ClinferWindowAttrs a;

  if (!conv_window (node, &a) || a.kernel[0] != 1 || a.kernel[1] != 1
      || a.pads[0] || a.pads[1] || a.pads[2] || a.pads[3]
      || (a.strides[0] == 1 && a.strides[1] == 1))
    return FALSE;
  *sh = a.strides[0];
  *sw = a.strides[1];
  return TRUE;
}

static gboolean subsample (Hoist *h, ClinferPortRef src, guint uses,
    int depth, ClinferPortRef *out, GError **error);

/* Conv @node with @a and its input replaced by @in, as a new node (its
 * parsed attributes would be stale in place); @node goes on the dead
 * list. */
static ClinferPortRef
conv_copy (Hoist *h, ClinferNode *node, const ClinferWindowAttrs *a,
    ClinferPortRef in)
{
  g_autofree char *name = g_strdup_printf ("%s/strided", node->name);
  ClinferNode *c = clinfer_graph_add_node (h->graph, node->op_type,
      node->domain, name, node->n_inputs, 1);

  /* The tensor keeps its name: the old node goes before anything looks
   * names up. */
  g_free (c->outputs[0].name);
  c->outputs[0].name = g_strdup (node->outputs[0].name);
  c->opset = node->opset;
  clinfer_node_copy_attrs (node, c);
  clinfer_node_set_attr (c, "strides", clinfer_attr_new_ints (a->strides, 2));
  clinfer_node_set_attr (c, "pads", clinfer_attr_new_ints (a->pads, 4));
  for (guint i = 0; i < node->n_inputs; i++)
    c->inputs[i] = node->inputs[i];
  c->inputs[0] = in;
  g_ptr_array_add (h->dead, node);
  return (ClinferPortRef) { c, 0 };
}

/* Conv @node computing @src: a 1x1 one without padding or stride passes
 * the subsampling on to its input when something up there takes it; any
 * other takes it: strides multiplied, end pads the least that still
 * reaches the last window kept. */
static gboolean
subsample_conv (Hoist *h, ClinferNode *node, const ClinferWindowAttrs *win,
    int depth, ClinferPortRef *out, GError **error)
{
  const ClinferShape *x = &clinfer_node_input_desc (node, 0)->shape;
  const ClinferShape *y = &node->outputs[0].shape;
  ClinferWindowAttrs a = *win;
  int64_t s[2] = { h->sh, h->sw };
  ClinferPortRef in = node->inputs[0];

  if (a.kernel[0] == 1 && a.kernel[1] == 1 && a.strides[0] == 1
      && a.strides[1] == 1 && !a.pads[0] && !a.pads[1] && !a.pads[2]
      && !a.pads[3]) {
    /* Passed on when a Conv up there takes it: known from a dry run
     * (a dry run is one itself), which then is not repeated below. */
    guint before = h->absorbed;
    gboolean deeper;
    if (h->apply) {
      Hoist dry = { h->graph, h->sh, h->sw, FALSE, 0, NULL };
      ClinferPortRef unused;
      if (!subsample (&dry, in, 1, depth + 1, &unused, error))
        return FALSE;
      deeper = dry.absorbed > 0;
    } else {
      ClinferPortRef unused;
      if (!subsample (h, in, 1, depth + 1, &unused, error))
        return FALSE;
      deeper = h->absorbed > before;
    }
    if (deeper) {
      if (h->apply) {
        if (!subsample (h, in, 1, depth + 1, &in, error))
          return FALSE;
        *out = conv_copy (h, node, &a, in);
      }
      return TRUE;
    }
  }
  for (int i = 0; i < 2; i++) {
    int64_t kept = (y->dims[2 + i] + s[i] - 1) / s[i];
    int64_t ext = a.dilations[i] * (a.kernel[i] - 1) + 1;
    int64_t stride = a.strides[i] * s[i];
    int64_t end = (kept - 1) * stride + ext - x->dims[2 + i] - a.pads[i];
    a.strides[i] = stride;
    a.pads[2 + i] = MAX (end, 0);
    /* The count the new window gives must be the one kept. */
    if ((x->dims[2 + i] + a.pads[i] + a.pads[2 + i] - ext) / stride + 1
        != kept) {
      ClinferPortRef unused;
      return subsample (h, (ClinferPortRef) { node, 0 }, G_MAXUINT, depth,
          h->apply ? out : &unused, error);
    }
  }
  h->absorbed++;
  if (h->apply)
    *out = conv_copy (h, node, &a, in);
  return TRUE;
}

/* A MaxPool with a 1x1 window and the strides reading @src. */
static ClinferPortRef
pick_pixels (Hoist *h, ClinferPortRef src)
{
  const int64_t k[2] = { 1, 1 }, s[2] = { h->sh, h->sw };
  g_autofree char *name = g_strdup_printf ("%s/stride%dx%d_%u",
      src.node->outputs[src.port].name, (int) h->sh, (int) h->sw,
      h->graph->next_id);
  ClinferNode *p = clinfer_graph_add_node (h->graph, "MaxPool", "", name, 1, 1);

  p->opset = MAX (clinfer_graph_get_opset (h->graph, ""), 1);
  clinfer_node_set_attr (p, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (p, "strides", clinfer_attr_new_ints (s, 2));
  p->inputs[0] = src;
  return (ClinferPortRef) { p, 0 };
}

/* Sets *out to a port holding @src subsampled, rewriting its producer
 * when the rewritten nodes are its only readers (@uses of them: G_MAXUINT
 * to pick the pixels where it is). In a dry run (h->apply FALSE) only
 * h->absorbed changes. */
static gboolean
subsample (Hoist *h, ClinferPortRef src, guint uses, int depth,
    ClinferPortRef *out, GError **error)
{
  ClinferNode *p = src.node;
  ClinferWindowAttrs win;
  gboolean own = p && depth < MAX_DEPTH && src.port == 0
      && p->n_outputs == 1 && uses != G_MAXUINT
      && clinfer_graph_count_uses (h->graph, src) == uses
      && static_4d (&p->outputs[0]);

  if (own && conv_window (p, &win))
    return subsample_conv (h, p, &win, depth, out, error);
  if (own && p->n_inputs >= 1 && is_one_of (p, unary_ops,
          G_N_ELEMENTS (unary_ops))
      && static_4d (clinfer_node_input_desc (p, 0))
      && clinfer_shape_equal (&clinfer_node_input_desc (p, 0)->shape,
          &p->outputs[0].shape)) {
    ClinferPortRef in;
    for (guint i = 1; i < p->n_inputs; i++)
      if (p->inputs[i].node && clinfer_node_input_desc (p, i)->value == NULL)
        goto pick;
    if (!subsample (h, p->inputs[0], 1, depth + 1, &in, error))
      return FALSE;
    if (h->apply) {
      p->inputs[0] = in;
      *out = src;
    }
    return TRUE;
  }
  if (own && p->n_inputs == 2 && p->opset >= 7
      && is_one_of (p, binary_ops, G_N_ELEMENTS (binary_ops))) {
    const ClinferShape *y = &p->outputs[0].shape;
    gboolean full[2];
    for (guint i = 0; i < 2; i++) {
      const ClinferPortDesc *d = clinfer_node_input_desc (p, i);
      if (d == NULL || d->shape.rank < 0)
        goto pick;
      full[i] = clinfer_shape_equal (&d->shape, y);
      /* Broadcast over H and W, or equal: nothing else. */
      if (!full[i] && !(d->shape.rank < 2 ? d->shape.rank == 0
              || d->shape.dims[0] == 1
              : d->shape.dims[d->shape.rank - 1] == 1
              && d->shape.dims[d->shape.rank - 2] == 1))
        goto pick;
    }
    if (full[0] && full[1] && p->inputs[0].node == p->inputs[1].node
        && p->inputs[0].port == p->inputs[1].port) {
      ClinferPortRef in;
      if (!subsample (h, p->inputs[0], 2, depth + 1, &in, error))
        return FALSE;
      if (h->apply)
        p->inputs[0] = p->inputs[1] = in;
    } else {
      for (guint i = 0; i < 2; i++) {
        ClinferPortRef in;
        if (!full[i])
          continue;
        if (!subsample (h, p->inputs[i], 1, depth + 1, &in, error))
          return FALSE;
        if (h->apply)
          p->inputs[i] = in;
      }
    }
    if (h->apply)
      *out = src;
    return TRUE;
  }
pick:
  if (h->apply)
    *out = pick_pixels (h, src);
  return TRUE;
}

/* Every reader of @t is a strided 1x1 Conv's data input, all with one
 * stride: their count (0 when not). */
static guint
pointwise_readers (ClinferGraph *graph, ClinferPortRef t, int64_t *sh,
    int64_t *sw, GPtrArray *readers)
{
  guint uses = clinfer_graph_count_uses (graph, t);

  g_ptr_array_set_size (readers, 0);
  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    int64_t h, w;
    for (guint j = 0; j < n->n_inputs; j++) {
      if (n->inputs[j].node != t.node || n->inputs[j].port != t.port)
        continue;
      if (j != 0 || !strided_pointwise (n, &h, &w)
          || (readers->len > 0 && (h != *sh || w != *sw)))
        return 0;
      *sh = h;
      *sw = w;
      g_ptr_array_add (readers, n);
    }
  }
  return readers->len == uses ? uses : 0;
}

/* A node with a subgraph attribute (If, Loop, Scan): its body may read
 * a tensor of this graph by name, which the pass cannot see. */
static gboolean
has_subgraphs (const ClinferGraph *graph)
{
  for (guint i = 0; i < graph->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (graph->nodes, i);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init (&it, n->attrs);
    while (g_hash_table_iter_next (&it, NULL, &value)) {
      const ClinferAttr *a = value;
      if (a->type == CLINFER_ATTR_GRAPH || a->type == CLINFER_ATTR_GRAPHS)
        return TRUE;
    }
  }
  return FALSE;
}

gboolean
clinfer_pass_hoist_strides (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (graph, error);
  g_autoptr (GPtrArray) readers = g_ptr_array_new ();
  g_autoptr (GPtrArray) dead = g_ptr_array_new ();
  g_autoptr (GHashTable) removed = g_hash_table_new (NULL, NULL);

  if (order == NULL)
    return FALSE;
  if (has_subgraphs (graph))
    return TRUE;
  /* Latest tensors first: a rewrite only touches nodes before the one it
   * starts from. */
  for (guint i = order->len; i-- > 0;) {
    ClinferNode *node = g_ptr_array_index (order, i);
    ClinferPortRef t = { node, 0 }, in;
    Hoist h = { graph, 1, 1, FALSE, 0, dead };
    gboolean reinferred = FALSE;
    guint uses;

    if (g_hash_table_contains (removed, node) || node->n_outputs != 1
        || !static_4d (&node->outputs[0])
        || (uses = pointwise_readers (graph, t, &h.sh, &h.sw, readers)) == 0
        || !subsample (&h, t, uses, 0, &in, error))
      continue;
    if (h.absorbed == 0)
      continue;
    h.apply = TRUE;
    h.absorbed = 0;
    if (!subsample (&h, t, uses, 0, &in, error))
      return FALSE;
    for (guint r = 0; r < readers->len; r++) {
      ClinferNode *c = g_ptr_array_index (readers, r);
      ClinferWindowAttrs a;
      ClinferPortRef y;
      conv_window (c, &a);
      a.strides[0] = a.strides[1] = 1;
      y = conv_copy (&h, c, &a, in);
      clinfer_graph_replace_uses (graph, (ClinferPortRef) { c, 0 }, y);
    }
    /* Replaced Convs: nothing reads them now. */
    for (guint d = 0; d < dead->len; d++) {
      ClinferNode *n = g_ptr_array_index (dead, d);
      if (!g_hash_table_contains (removed, n)) {
        g_hash_table_add (removed, n);
        clinfer_graph_remove_node (graph, n);
      }
    }
    g_ptr_array_set_size (dead, 0);
    *changed = TRUE;
    /* Shapes right again before the next rewrite looks at them. */
    if (!clinfer_graph_resolve_ops (graph, error)
        || !clinfer_pass_infer_shapes (graph, ctx, &reinferred, error))
      return FALSE;
  }
  return TRUE;
}
