/* clinfer — fusion pass: Conv -> BatchNormalization (inference) becomes
 * one Conv whose weights and bias absorb the normalisation, when the Conv
 * output feeds only the BatchNormalization and every parameter is a
 * constant f32 tensor:
 *   s = scale / sqrt (var + eps)
 *   W'[m] = W[m] * s[m]      b'[m] = (b[m] - mean[m]) * s[m] + B[m]   */
#include "passes/passes.h"
#include "ops/op.h"
#include <math.h>
#include <string.h>

static gboolean
is_op (const ClinferNode *node, const char *op_type)
{
  return *node->domain == '\0' && strcmp (node->op_type, op_type) == 0;
}

/* Constant f32 value of input @i of @node with @n elements, or NULL. */
static const ClinferTensor *
const_f32 (const ClinferNode *node, guint i, int64_t n)
{
  ClinferPortDesc *d = clinfer_node_input_desc (node, i);

  if (d == NULL || d->value == NULL
      || clinfer_tensor_get_element_type (d->value) != CLINFER_TYPE_F32
      || !clinfer_tensor_is_contiguous (d->value)
      || (n >= 0 && clinfer_tensor_get_n_elements (d->value) != n))
    return NULL;
  return d->value;
}

/* Output channels M of @conv when the pair can be fused, else -1. */
static int64_t
fusable_channels (const ClinferGraph *graph, const ClinferNode *conv,
    const ClinferNode *bn)
{
  const ClinferTensor *w = const_f32 (conv, 1, -1);
  int64_t m, spatial = 1;

  if (w == NULL || clinfer_tensor_get_shape (w)->rank < 3
      || conv->inputs[0].node == NULL)
    return -1;
  m = clinfer_tensor_get_shape (w)->dims[0];
  if (bn->opset < 9 && clinfer_node_attr_int (bn, "spatial", 1, &spatial, NULL)
      && spatial == 0)
    return -1;
  for (guint i = 1; i < bn->n_outputs; i++)
    if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) bn, i }))
      return -1;
  if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) conv, 0 }) != 1
      || (conv->n_inputs > 2 && conv->inputs[2].node && !const_f32 (conv, 2, m)))
    return -1;
  for (guint i = 1; i < 5; i++)
    if (const_f32 (bn, i, m) == NULL)
      return -1;
  return m;
}

/* New weights and bias for the fused Conv. */
static gboolean
fold_params (const ClinferNode *conv, const ClinferNode *bn, int64_t m,
    ClinferTensor **w_out, ClinferTensor **b_out, GError **error)
{
  const ClinferTensor *w = const_f32 (conv, 1, -1);
  const ClinferTensor *b = conv->n_inputs > 2 ? const_f32 (conv, 2, m) : NULL;
  const float *scale = clinfer_tensor_get_const_data (const_f32 (bn, 1, m));
  const float *shift = clinfer_tensor_get_const_data (const_f32 (bn, 2, m));
  const float *mean = clinfer_tensor_get_const_data (const_f32 (bn, 3, m));
  const float *var = clinfer_tensor_get_const_data (const_f32 (bn, 4, m));
  int64_t per = clinfer_tensor_get_n_elements (w) / MAX (m, 1);
  ClinferShape bs = clinfer_shape_make (1, &m);
  const float *src = clinfer_tensor_get_const_data (w);
  float eps, *dw, *db;

  if (!clinfer_node_attr_float (bn, "epsilon", 1e-5f, &eps, error))
    return FALSE;
  *w_out = clinfer_tensor_new (CLINFER_TYPE_F32, clinfer_tensor_get_shape (w),
      error);
  *b_out = *w_out ? clinfer_tensor_new (CLINFER_TYPE_F32, &bs, error) : NULL;
  if (*b_out == NULL)
    return FALSE;
  dw = clinfer_tensor_get_data (*w_out);
  db = clinfer_tensor_get_data (*b_out);
  for (int64_t c = 0; c < m; c++) {
    double s = scale[c] / sqrt ((double) var[c] + eps);
    double b0 = b ? ((const float *) clinfer_tensor_get_const_data (b))[c] : 0.;
    for (int64_t k = 0; k < per; k++)
      dw[c * per + k] = (float) (src[c * per + k] * s);
    db[c] = (float) ((b0 - mean[c]) * s + shift[c]);
  }
  return TRUE;
}

static void
remove_if_unused (ClinferGraph *graph, ClinferNode *n)
{
  if (n && strcmp (n->op_type, "Constant") == 0
      && clinfer_graph_count_uses (graph, (ClinferPortRef) { n, 0 }) == 0)
    clinfer_graph_remove_node (graph, n);
}

/* Replaces conv -> bn by one Conv (conv's attributes, bn's output name). */
static ClinferNode *
fuse_pair (ClinferGraph *graph, ClinferNode *conv, ClinferNode *bn, int64_t m,
    GError **error)
{
  g_autoptr (ClinferTensor) w = NULL, b = NULL;
  g_autofree char *wname = NULL, *bname = NULL;
  ClinferNode *f, *old_w = conv->inputs[1].node;
  ClinferNode *old_b = conv->n_inputs > 2 ? conv->inputs[2].node : NULL;
  GHashTableIter it;
  gpointer k, v;

  if (!fold_params (conv, bn, m, &w, &b, error))
    return NULL;
  f = clinfer_graph_add_node (graph, "Conv", "", conv->name, 3, 1);
  f->opset = conv->opset;
  g_hash_table_iter_init (&it, conv->attrs);
  while (g_hash_table_iter_next (&it, &k, &v)) {
    const ClinferAttr *a = v;
    if (a->type == CLINFER_ATTR_INT)
      clinfer_node_set_attr (f, k, clinfer_attr_new_int (a->i));
    else if (a->type == CLINFER_ATTR_INTS)
      clinfer_node_set_attr (f, k, clinfer_attr_new_ints (a->ints.v, a->ints.n));
    else if (a->type == CLINFER_ATTR_STRING)
      clinfer_node_set_attr (f, k, clinfer_attr_new_string (a->s));
    else if (a->type == CLINFER_ATTR_FLOAT)
      clinfer_node_set_attr (f, k, clinfer_attr_new_float (a->f));
  }
  wname = g_strdup_printf ("%s/bn_weights", bn->outputs[0].name);
  bname = g_strdup_printf ("%s/bn_bias", bn->outputs[0].name);
  f->inputs[0] = conv->inputs[0];
  f->inputs[1] = (ClinferPortRef) { clinfer_graph_add_constant (graph, wname, w), 0 };
  f->inputs[2] = (ClinferPortRef) { clinfer_graph_add_constant (graph, bname, b), 0 };
  g_free (f->outputs[0].name);
  f->outputs[0].name = g_strdup (bn->outputs[0].name);
  f->outputs[0].type = bn->outputs[0].type;
  f->outputs[0].shape = bn->outputs[0].shape;
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { bn, 0 },
      (ClinferPortRef) { f, 0 });
  clinfer_graph_remove_node (graph, bn);
  clinfer_graph_remove_node (graph, conv);
  if (old_b != old_w)
    remove_if_unused (graph, old_b);
  remove_if_unused (graph, old_w);
  return f;
}

gboolean
clinfer_pass_fuse_conv_bn (ClinferGraph *graph, const ClinferPassContext *ctx,
    gboolean *changed, GError **error)
{
  gboolean again = TRUE;

  /* Restart after each fusion: the node list changes under us. */
  while (again) {
    again = FALSE;
    for (guint i = 0; i < graph->nodes->len && !again; i++) {
      ClinferNode *bn = g_ptr_array_index (graph->nodes, i), *conv, *f;
      int64_t m;

      if (!is_op (bn, "BatchNormalization") || bn->n_inputs < 5
          || (conv = bn->inputs[0].node) == NULL || bn->inputs[0].port != 0
          || !is_op (conv, "Conv")
          || (m = fusable_channels (graph, conv, bn)) < 0)
        continue;
      if (!(f = fuse_pair (graph, conv, bn, m, error)))
        return FALSE;
      if (!clinfer_graph_resolve_ops (graph, error)
          || !clinfer_node_infer (f, error))
        return FALSE;
      *changed = TRUE;
      again = TRUE;
    }
  }
  return TRUE;
}
