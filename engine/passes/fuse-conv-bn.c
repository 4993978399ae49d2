/* clinfer — fusion passes that fold a per-channel affine map into the
 * weights and bias of the Conv before it, when the Conv output feeds only
 * that node and every parameter is a constant f32 tensor:
 *   W'[m] = W[m] * s[m]      b'[m] = b[m] * s[m] + t[m]
 * fuse-conv-batchnorm: BatchNormalization (inference), with
 *   s = scale / sqrt (var + eps)      t = B - mean * s
 * fuse-conv-scale: Mul / Add / Sub / Div by a constant that is one value
 * or one value per output channel (s = c, t = c, t = -c or s = 1 / c),
 * and BatchNormalization again (a Conv -> Add -> BatchNormalization chain
 * only becomes a pair once the Add is folded).
 * ConvTranspose is left alone: oneDNN 2.6's deconvolution with a bias
 * took 5-7x its time without one on PP-OCR det's 2x2 stride-2 layers, more
 * than the separate Add and BatchNormalization it would save. */
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

static gboolean
is_conv (const ClinferNode *node)
{
  return is_op (node, "Conv");
}

/* Output channels M of @conv when its weights and bias are constants
 * and its output feeds one node only, else -1. */
static int64_t
conv_channels (const ClinferGraph *graph, const ClinferNode *conv)
{
  const ClinferTensor *w = const_f32 (conv, 1, -1);
  int64_t m;

  if (w == NULL || clinfer_tensor_get_shape (w)->rank < 3
      || conv->inputs[0].node == NULL)
    return -1;
  m = clinfer_tensor_get_shape (w)->dims[0];
  if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) conv, 0 }) != 1
      || (conv->n_inputs > 2 && conv->inputs[2].node && !const_f32 (conv, 2, m)))
    return -1;
  return m;
}

/* Output channels M of @conv when the pair can be fused, else -1. */
static int64_t
fusable_channels (const ClinferGraph *graph, const ClinferNode *conv,
    const ClinferNode *bn)
{
  int64_t m = conv_channels (graph, conv), spatial = 1;

  if (m < 0)
    return -1;
  if (bn->opset < 9 && clinfer_node_attr_int (bn, "spatial", 1, &spatial, NULL)
      && spatial == 0)
    return -1;
  for (guint i = 1; i < bn->n_outputs; i++)
    if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) bn, i }))
      return -1;
  for (guint i = 1; i < 5; i++)
    if (const_f32 (bn, i, m) == NULL)
      return -1;
  return m;
}

/* New weights and bias for the fused Conv: W * s and b * s + t per
 * output channel (@t may be NULL: zero). */
static gboolean
fold_params (const ClinferNode *conv, int64_t m, const double *s,
    const double *t, ClinferTensor **w_out, ClinferTensor **b_out,
    GError **error)
{
  const ClinferTensor *w = const_f32 (conv, 1, -1);
  const ClinferTensor *b = conv->n_inputs > 2 ? const_f32 (conv, 2, m) : NULL;
  int64_t per = clinfer_tensor_get_n_elements (w) / MAX (m, 1);
  ClinferShape bs = clinfer_shape_make (1, &m);
  const float *src = clinfer_tensor_get_const_data (w);
  float *dw, *db;

  *w_out = clinfer_tensor_new (CLINFER_TYPE_F32, clinfer_tensor_get_shape (w),
      error);
  *b_out = *w_out ? clinfer_tensor_new (CLINFER_TYPE_F32, &bs, error) : NULL;
  if (*b_out == NULL)
    return FALSE;
  dw = clinfer_tensor_get_data (*w_out);
  db = clinfer_tensor_get_data (*b_out);
  for (int64_t c = 0; c < m; c++) {
    double b0 = b ? ((const float *) clinfer_tensor_get_const_data (b))[c] : 0.;
    for (int64_t k = 0; k < per; k++)
      dw[c * per + k] = (float) (src[c * per + k] * s[c]);
    db[c] = (float) (b0 * s[c] + (t ? t[c] : 0.));
  }
  return TRUE;
}

/* The batch normalisation of @bn as s and t per channel (its inputs 1-4
 * constant f32 tensors of @m values). */
gboolean
clinfer_pass_bn_affine (const ClinferNode *bn, int64_t m, double *s, double *t,
    GError **error)
{
  const float *scale = clinfer_tensor_get_const_data (const_f32 (bn, 1, m));
  const float *shift = clinfer_tensor_get_const_data (const_f32 (bn, 2, m));
  const float *mean = clinfer_tensor_get_const_data (const_f32 (bn, 3, m));
  const float *var = clinfer_tensor_get_const_data (const_f32 (bn, 4, m));
  float eps;

  if (!clinfer_node_attr_float (bn, "epsilon", 1e-5f, &eps, error))
    return FALSE;
  for (int64_t c = 0; c < m; c++) {
    s[c] = scale[c] / sqrt ((double) var[c] + eps);
    t[c] = shift[c] - mean[c] * s[c];
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

/* Replaces conv -> @next by one Conv with W * s and b * s + t (conv's
 * attributes, @next's output name); @what names the constants. */
static ClinferNode *
fuse_pair (ClinferGraph *graph, ClinferNode *conv, ClinferNode *next,
    int64_t m, const double *s, const double *t, const char *what,
    GError **error)
{
  g_autoptr (ClinferTensor) w = NULL, b = NULL;
  g_autofree char *wname = NULL, *bname = NULL;
  ClinferNode *f, *old_w = conv->inputs[1].node;
  ClinferNode *old_b = conv->n_inputs > 2 ? conv->inputs[2].node : NULL;
  GHashTableIter it;
  gpointer k, v;

  if (!fold_params (conv, m, s, t, &w, &b, error))
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
  wname = g_strdup_printf ("%s/%s_weights", next->outputs[0].name, what);
  bname = g_strdup_printf ("%s/%s_bias", next->outputs[0].name, what);
  f->inputs[0] = conv->inputs[0];
  f->inputs[1] = (ClinferPortRef) { clinfer_graph_add_constant (graph, wname, w), 0 };
  f->inputs[2] = (ClinferPortRef) { clinfer_graph_add_constant (graph, bname, b), 0 };
  g_free (f->outputs[0].name);
  f->outputs[0].name = g_strdup (next->outputs[0].name);
  f->outputs[0].type = next->outputs[0].type;
  f->outputs[0].shape = next->outputs[0].shape;
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { next, 0 },
      (ClinferPortRef) { f, 0 });
  clinfer_graph_remove_node (graph, next);
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
          || !is_conv (conv)
          || (m = fusable_channels (graph, conv, bn)) < 0)
        continue;
      {
        g_autofree double *s = g_new (double, m), *t = g_new (double, m);
        if (!clinfer_pass_bn_affine (bn, m, s, t, error)
            || !(f = fuse_pair (graph, conv, bn, m, s, t, "bn", error)))
          return FALSE;
      }
      if (!clinfer_graph_resolve_ops (graph, error)
          || !clinfer_node_infer (f, error))
        return FALSE;
      *changed = TRUE;
      again = TRUE;
    }
  }
  return TRUE;
}

/* The constant operand of @op (Mul/Add/Sub/Div of the Conv @conv's
 * output and a constant) as one value or one value per channel: its
 * input index, or -1 when the pair does not fold. The output must have
 * the Conv's shape (the constant does not broadcast the Conv's output
 * up) and Sub/Div must have the Conv first. */
static int
scale_operand (const ClinferNode *op, const ClinferNode *conv, int64_t m)
{
  const ClinferShape *y = &conv->outputs[0].shape;
  const ClinferShape *cs;
  const ClinferTensor *c;
  gboolean commutes = is_op (op, "Mul") || is_op (op, "Add");
  int ci = op->inputs[0].node == conv ? 1 : 0;
  int64_t n;

  if (!commutes && !is_op (op, "Sub") && !is_op (op, "Div"))
    return -1;
  if (op->n_inputs != 2 || op->inputs[1 - ci].node != conv
      || op->inputs[1 - ci].port != 0 || (!commutes && ci != 1)
      || op->outputs[0].type != CLINFER_TYPE_F32
      || !clinfer_shape_is_static (y) || y->rank < 3
      || !clinfer_shape_equal (&op->outputs[0].shape, y)
      || (c = const_f32 (op, ci, -1)) == NULL)
    return -1;
  n = clinfer_tensor_get_n_elements (c);
  cs = clinfer_tensor_get_shape (c);
  if (n == 1)
    return ci;
  /* [M, 1, ..] or [1, M, 1, ..], aligned with the output's trailing dims */
  if (n != m || cs->rank < y->rank - 1 || cs->rank > y->rank
      || cs->dims[cs->rank - (y->rank - 1)] != m)
    return -1;
  return ci;
}

/* s and t of @op with its constant @c (one value or @m values). */
static gboolean
scale_affine (const ClinferNode *op, const ClinferTensor *c, int64_t m,
    double *s, double *t)
{
  const float *v = clinfer_tensor_get_const_data (c);
  gboolean one = clinfer_tensor_get_n_elements (c) == 1;

  for (int64_t i = 0; i < m; i++) {
    double x = v[one ? 0 : i];
    s[i] = 1.;
    t[i] = 0.;
    if (is_op (op, "Mul"))
      s[i] = x;
    else if (is_op (op, "Add"))
      t[i] = x;
    else if (is_op (op, "Sub"))
      t[i] = -x;
    else if (x == 0. || !isfinite (x))
      return FALSE;              /* Div by zero stays as it is */
    else
      s[i] = 1. / x;
  }
  return TRUE;
}

/* Conv @conv and the node @op after it when @op is an affine map that
 * folds into it: s and t (m values each, freed by the caller) and the
 * name of the fold, else NULL. */
static const char *
affine_after_conv (const ClinferGraph *graph, const ClinferNode *op,
    ClinferNode **conv, int64_t *m, double **s, double **t)
{
  int ci;

  *conv = NULL;
  if (is_op (op, "BatchNormalization") && op->n_inputs >= 5
      && op->inputs[0].node && op->inputs[0].port == 0
      && is_conv (op->inputs[0].node)
      && (*m = fusable_channels (graph, op->inputs[0].node, op)) >= 0) {
    *conv = op->inputs[0].node;
    *s = g_new (double, *m);
    *t = g_new (double, *m);
    return clinfer_pass_bn_affine (op, *m, *s, *t, NULL) ? "bn" : NULL;
  }
  for (guint j = 0; j < MIN (op->n_inputs, 2) && *conv == NULL; j++)
    if (op->inputs[j].node && is_conv (op->inputs[j].node))
      *conv = op->inputs[j].node;
  if (*conv == NULL || op->n_outputs != 1
      || (*m = conv_channels (graph, *conv)) < 0
      || (ci = scale_operand (op, *conv, *m)) < 0)
    return NULL;
  *s = g_new (double, *m);
  *t = g_new (double, *m);
  return scale_affine (op, const_f32 (op, ci, -1), *m, *s, *t) ? "scale" : NULL;
}

gboolean
clinfer_pass_fuse_conv_scale (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  gboolean again = TRUE;

  /* Restart after each fusion: the node list changes under us. A chain
   * Conv -> Mul -> Add folds in two rounds. */
  while (again) {
    again = FALSE;
    for (guint i = 0; i < graph->nodes->len && !again; i++) {
      ClinferNode *op = g_ptr_array_index (graph->nodes, i), *conv, *f;
      g_autofree double *s = NULL, *t = NULL;
      const char *what;
      int64_t m;

      if (!(what = affine_after_conv (graph, op, &conv, &m, &s, &t)))
        continue;
      if (!(f = fuse_pair (graph, conv, op, m, s, t, what, error))
          || !clinfer_graph_resolve_ops (graph, error)
          || !clinfer_node_infer (f, error))
        return FALSE;
      *changed = TRUE;
      again = TRUE;
    }
  }
  return TRUE;
}
