/* clinfer — clinfer_model_set_batch (): a model whose inputs have a batch
 * (first) dimension of 1, or a dynamic one, made to run @batch items per
 * request.
 *
 * The batch is followed through the graph at batch 1: a tensor carries
 * it when its first dimension is 1 and a carrying tensor feeds the node
 * that makes it (the inputs carry it). A node fed a carrying tensor must
 * give carrying outputs (Shape excepted: its output is a shape, which
 * then follows the batch by itself), and must not work along the first
 * dimension (Softmax-like ops and normalisations over axis 0). Where the
 * model wrote the batch of 1 into a constant it is rewritten:
 * - a Reshape's constant target shape starting with 1 starts with the
 *   batch;
 * - a Resize's constant sizes likewise;
 * - a Concat (not along axis 0) of carrying tensors with one that does
 *   not carry the batch: a constant is repeated batch times, a
 *   ConstantOfShape of a constant shape gets a shape starting with the
 *   batch (BlazeFace pads its channels so).
 * Then every input carrying the batch gets it, shapes are inferred again
 * and each tensor must have its batch-1 shape, with the batch first
 * where it carries it; every graph output must carry it. Anything else
 * is an error naming the node, and the model is left as it was. */
#include "runtime/runtime.h"
#include "ops/op.h"
#include "passes/passes.h"
#include <stdarg.h>
#include <string.h>

/* What the walk at batch 1 found for one node. */
typedef struct {
  guint64 carry;             /* bit i: output i carries the batch (i < 64) */
  ClinferShape *shapes;      /* the outputs' shapes at batch 1 */
} NodeBatch;

static void
node_batch_free (gpointer data)
{
  NodeBatch *nb = data;

  g_free (nb->shapes);
  g_free (nb);
}

static gboolean
batch_fail (GError **error, const ClinferGraph *g, int64_t batch,
    const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
batch_fail (GError **error, const ClinferGraph *g, int64_t batch,
    const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "%s: cannot run batches of %" G_GINT64_FORMAT ": %s", g->origin, batch,
      msg);
  return FALSE;
}

static gboolean
carries (GHashTable *info, ClinferPortRef ref)
{
  NodeBatch *nb = ref.node ? g_hash_table_lookup (info, ref.node) : NULL;

  return nb && ref.port < 64 && (nb->carry >> ref.port & 1);
}

static gboolean
is_constant (const ClinferNode *node)
{
  return node && strcmp (node->op_type, "Constant") == 0
      && node->n_outputs == 1 && node->outputs[0].value != NULL;
}

/* TRUE when @axis of a rank-@rank input is 0, or out of range (the
 * op's own checks refuse it; here it counts as the batch's). */
static gboolean
is_batch_axis (const ClinferNode *node, int64_t axis, int rank)
{
  int a;

  return !clinfer_op_normalize_axis (node, axis, rank, &a, NULL) || a == 0;
}

/* TRUE when @node, fed the batch, would work along it: Softmax, its
 * kin and the normalisations over axis 0, CumSum along 0. */
static gboolean
works_along_batch (const ClinferNode *node, int rank)
{
  int axis;

  if (clinfer_pass_is_op (node, "Softmax")
      || clinfer_pass_is_op (node, "LogSoftmax")
      || clinfer_pass_is_op (node, "Hardmax"))
    return !clinfer_op_axis_attr (node, node->opset >= 13 ? -1 : 1, rank,
        &axis, NULL) || axis == 0;
  if (clinfer_pass_is_op (node, "LayerNormalization")
      || clinfer_pass_is_op (node, "LpNormalization"))
    return !clinfer_op_axis_attr (node, -1, rank, &axis, NULL) || axis == 0;
  if (clinfer_pass_is_op (node, "MeanVarianceNormalization")) {
    const int64_t *axes = NULL;
    gsize n = 0;
    if (!clinfer_node_attr_ints (node, "axes", &axes, &n, NULL) || axes == NULL)
      return TRUE;           /* default axes 0, 2, 3 */
    for (gsize i = 0; i < n; i++)
      if (is_batch_axis (node, axes[i], rank))
        return TRUE;
    return FALSE;
  }
  if (clinfer_pass_is_op (node, "CumSum")) {
    ClinferPortDesc *a = clinfer_node_input_desc (node, 1);
    if (a == NULL || a->value == NULL || a->type != CLINFER_TYPE_I64
        || clinfer_tensor_get_n_elements (a->value) < 1)
      return TRUE;
    return is_batch_axis (node,
        ((const int64_t *) clinfer_tensor_get_const_data (a->value))[0], rank);
  }
  return FALSE;
}

/* A new constant from @src with its first dim made @batch: @repeat the
 * whole value @batch times (a tensor of first dim 1), else (a 1-D i64
 * shape) its first element set to @batch. */
static ClinferNode *
batched_constant (ClinferGraph *g, const ClinferNode *src, int64_t batch,
    gboolean repeat, GError **error)
{
  ClinferTensor *v = src->outputs[0].value;
  ClinferShape shape = *clinfer_tensor_get_shape (v);
  g_autoptr (ClinferTensor) t = NULL;
  g_autofree char *name = g_strdup_printf ("%s/batch%" G_GINT64_FORMAT
      "/%u", src->outputs[0].name, batch, g->next_id);
  gsize bytes = clinfer_tensor_get_byte_size (v);
  guint64 limit = clinfer_graph_get_memory_limit (g);

  if (repeat) {
    shape.dims[0] = batch;
    if (bytes > limit / (guint64) batch) {
      batch_fail (error, g, batch, "the constant %s (%" G_GSIZE_FORMAT
          " bytes) repeated for each item needs more than the memory limit "
          "of a tensor (%" G_GUINT64_FORMAT " bytes)", src->outputs[0].name,
          bytes, limit);
      return NULL;
    }
  }
  if ((t = clinfer_tensor_new (clinfer_tensor_get_element_type (v), &shape,
              error)) == NULL)
    return NULL;
  if (repeat) {
    for (int64_t b = 0; b < batch; b++)
      memcpy ((guint8 *) clinfer_tensor_get_data (t) + b * bytes,
          clinfer_tensor_get_const_data (v), bytes);
  } else {
    memcpy (clinfer_tensor_get_data (t), clinfer_tensor_get_const_data (v),
        bytes);
    ((int64_t *) clinfer_tensor_get_data (t))[0] = batch;
  }
  return clinfer_graph_add_constant (g, name, t);
}

/* TRUE when input @i of @node is a constant 1-D i64 shape starting with
 * 1. */
static gboolean
shape_starts_with_one (const ClinferNode *node, guint i)
{
  ClinferNode *p = i < node->n_inputs ? node->inputs[i].node : NULL;
  ClinferTensor *v = is_constant (p) ? p->outputs[0].value : NULL;

  return v && clinfer_tensor_get_element_type (v) == CLINFER_TYPE_I64
      && clinfer_tensor_get_shape (v)->rank == 1
      && clinfer_tensor_get_n_elements (v) >= 1
      && ((const int64_t *) clinfer_tensor_get_const_data (v))[0] == 1;
}

/* Rewrites the constants of @node that hold the batch of 1 (see the top
 * comment). @info says which of its inputs carry the batch. */
static gboolean
rewrite_constants (ClinferGraph *g, ClinferNode *node, GHashTable *info,
    int64_t batch, GError **error)
{
  ClinferNode *c;

  if ((clinfer_pass_is_op (node, "Reshape") && shape_starts_with_one (node, 1))
      || (clinfer_pass_is_op (node, "Resize")
          && shape_starts_with_one (node, 3))) {
    guint i = clinfer_pass_is_op (node, "Reshape") ? 1 : 3;
    if ((c = batched_constant (g, node->inputs[i].node, batch, FALSE,
                error)) == NULL)
      return FALSE;
    node->inputs[i] = (ClinferPortRef) { c, 0 };
    return TRUE;
  }
  if (!clinfer_pass_is_op (node, "Concat"))
    return TRUE;
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    ClinferNode *p = node->inputs[i].node;

    if (d == NULL || carries (info, node->inputs[i]) || d->shape.rank < 1
        || d->shape.dims[0] != 1)
      continue;
    if (is_constant (p) && clinfer_tensor_get_element_type
        (p->outputs[0].value) != CLINFER_TYPE_STRING) {
      if ((c = batched_constant (g, p, batch, TRUE, error)) == NULL)
        return FALSE;
      node->inputs[i] = (ClinferPortRef) { c, 0 };
    } else if (clinfer_pass_is_op (p, "ConstantOfShape")
        && shape_starts_with_one (p, 0)) {
      ClinferNode *cs = clinfer_graph_add_node (g, "ConstantOfShape", "",
          NULL, 1, 1);
      if ((c = batched_constant (g, p->inputs[0].node, batch, FALSE,
                  error)) == NULL)
        return FALSE;
      cs->opset = p->opset;
      clinfer_node_copy_attrs (p, cs);
      cs->inputs[0] = (ClinferPortRef) { c, 0 };
      node->inputs[i] = (ClinferPortRef) { cs, 0 };
    } else {
      g_autofree char *s = clinfer_shape_to_string (&d->shape);
      return batch_fail (error, g, batch, "node %s: input %u (shape %s) "
          "does not carry the batch and is not a numeric constant",
          clinfer_node_label (node), i, s);
    }
  }
  return TRUE;
}

/* The walk at batch 1 (@g's shapes inferred): @info for every node, and
 * the nodes whose constants need rewriting in @rewrite. */
static gboolean
follow_batch (ClinferGraph *g, GPtrArray *order, GHashTable *info,
    GPtrArray *rewrite, int64_t batch, GError **error)
{
  for (guint k = 0; k < order->len; k++) {
    ClinferNode *node = g_ptr_array_index (order, k);
    NodeBatch *nb = g_new0 (NodeBatch, 1);
    gboolean fed = FALSE;

    nb->shapes = g_new (ClinferShape, MAX (node->n_outputs, 1));
    for (guint i = 0; i < node->n_outputs; i++)
      nb->shapes[i] = node->outputs[i].shape;
    g_hash_table_insert (info, node, nb);
    if (g_ptr_array_find (g->inputs, node, NULL)) {
      nb->carry = node->outputs[0].shape.rank >= 1
          && node->outputs[0].shape.dims[0] == 1;
      continue;
    }
    for (guint i = 0; i < node->n_inputs; i++)
      fed = fed || carries (info, node->inputs[i]);
    if (!fed)
      continue;
    if (works_along_batch (node, node->outputs[0].shape.rank))
      return batch_fail (error, g, batch, "node %s (%s) works along the "
          "first dimension, which would mix the items of a batch",
          clinfer_node_label (node), node->op_type);
    if (clinfer_pass_is_op (node, "Shape"))
      continue;
    for (guint i = 0; i < node->n_outputs && i < 64; i++) {
      const ClinferShape *s = &node->outputs[i].shape;
      g_autofree char *str = NULL;

      if (node->outputs[i].left_out)
        continue;
      if (s->rank >= 1 && s->dims[0] == 1 && clinfer_shape_is_static (s)) {
        nb->carry |= (guint64) 1 << i;
        continue;
      }
      str = clinfer_shape_to_string (s);
      return batch_fail (error, g, batch, "node %s: output %s has shape %s "
          "at batch 1, expected a static shape with the batch (1) first",
          clinfer_node_label (node), node->outputs[i].name, str);
    }
    g_ptr_array_add (rewrite, node);
  }
  return TRUE;
}

/* Each node's shapes at @batch against the walk's at batch 1, in the
 * walk's @order (the first node that differs is named). */
static gboolean
check_shapes (ClinferGraph *g, GPtrArray *order, GHashTable *info,
    int64_t batch, GError **error)
{
  for (guint k = 0; k < order->len; k++) {
    ClinferNode *node = g_ptr_array_index (order, k);
    NodeBatch *nb = g_hash_table_lookup (info, node);

    for (guint i = 0; i < node->n_outputs && i < 64; i++) {
      ClinferShape want = nb->shapes[i];
      g_autofree char *w = NULL, *got = NULL;

      if (node->outputs[i].left_out)
        continue;
      if (nb->carry >> i & 1)
        want.dims[0] = batch;
      if (clinfer_shape_equal (&want, &node->outputs[i].shape))
        continue;
      w = clinfer_shape_to_string (&want);
      got = clinfer_shape_to_string (&node->outputs[i].shape);
      return batch_fail (error, g, batch, "node %s: output %s has shape %s, "
          "expected %s (its shape at batch 1%s)", clinfer_node_label (node),
          node->outputs[i].name, got, w,
          nb->carry >> i & 1 ? " with the batch first" : "");
    }
  }
  for (guint i = 0; i < g->outputs->len; i++) {
    ClinferGraphOutput *o = &g_array_index (g->outputs, ClinferGraphOutput, i);
    if (!carries (info, o->ref))
      return batch_fail (error, g, batch, "output %s does not have the "
          "batch as its first dimension", o->name);
  }
  return TRUE;
}

gboolean
clinfer_model_set_batch (ClinferModel *model, guint batch, GError **error)
{
  g_autoptr (ClinferGraph) g = NULL;
  g_autoptr (GHashTable) info = NULL;
  g_autoptr (GPtrArray) order = NULL, rewrite = NULL;
  gboolean any = FALSE, changed = FALSE;
  GError *local = NULL;

  g_return_val_if_fail (model != NULL, FALSE);
  if (batch < 1 || batch > CLINFER_MAX_BATCH) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: a batch of %u, expected 1 to %d", model->path, batch,
        CLINFER_MAX_BATCH);
    return FALSE;
  }
  g = clinfer_graph_copy (model->graph);
  if (!clinfer_graph_resolve_ops_with (g, model->ops, error))
    return FALSE;
  for (guint i = 0; i < g->inputs->len; i++) {
    ClinferNode *in = g_ptr_array_index (g->inputs, i);
    ClinferShape *s = &in->outputs[0].shape;
    if (s->rank < 1 || (s->dims[0] != 1 && s->dims[0] != CLINFER_DIM_DYNAMIC))
      continue;
    s->dims[0] = 1;
    if (!clinfer_shape_is_static (s)) {
      g_autofree char *str = clinfer_shape_to_string (s);
      return batch_fail (error, g, batch, "input %s has the dynamic shape %s "
          "past its batch: fix it first (clinfer_model_reshape (), "
          "--shape, input-shape)", in->outputs[0].name, str);
    }
    any = TRUE;
  }
  if (!any) {
    g_autoptr (GString) list = g_string_new (NULL);
    for (guint i = 0; i < g->inputs->len; i++) {
      ClinferNode *in = g_ptr_array_index (g->inputs, i);
      g_autofree char *str = clinfer_shape_to_string (&in->outputs[0].shape);
      g_string_append_printf (list, "%s%s %s", i ? ", " : "",
          in->outputs[0].name, str);
    }
    return batch_fail (error, g, batch, "no input has a first (batch) "
        "dimension of 1 or a dynamic one (%s)", list->str);
  }
  if (!clinfer_pass_infer_shapes (g, NULL, &changed, &local)) {
    batch_fail (error, g, batch, "at batch 1: %s", local->message);
    g_error_free (local);
    return FALSE;
  }
  if ((order = clinfer_graph_topological_order (g, error)) == NULL)
    return FALSE;
  info = g_hash_table_new_full (NULL, NULL, NULL, node_batch_free);
  rewrite = g_ptr_array_new ();
  if (!follow_batch (g, order, info, rewrite, batch, error))
    return FALSE;
  for (guint i = 0; i < rewrite->len; i++)
    if (!rewrite_constants (g, g_ptr_array_index (rewrite, i), info, batch,
            error))
      return FALSE;
  for (guint i = 0; i < g->inputs->len; i++) {
    ClinferNode *in = g_ptr_array_index (g->inputs, i);
    if (carries (info, (ClinferPortRef) { in, 0 }))
      in->outputs[0].shape.dims[0] = batch;
  }
  if (!clinfer_graph_resolve_ops_with (g, model->ops, error))
    return FALSE;
  if (!clinfer_pass_infer_shapes (g, NULL, &changed, &local)) {
    batch_fail (error, g, batch, "%s", local->message);
    g_error_free (local);
    return FALSE;
  }
  if (!check_shapes (g, order, info, batch, error))
    return FALSE;
  clinfer_graph_free (model->graph);
  model->graph = g_steal_pointer (&g);
  return TRUE;
}
