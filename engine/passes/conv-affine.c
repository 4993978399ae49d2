/* clinfer — what the passes that fold a per-channel affine map into the
 * Conv before it share (fuse-conv-batchnorm, fuse-conv-scale): which
 * Convs qualify, the maps of a BatchNormalization, and the fold itself,
 * when the Conv output feeds only that node and every parameter is a
 * constant f32 tensor:
 *   W'[m] = W[m] * s[m]      b'[m] = b[m] * s[m] + t[m]
 * ConvTranspose is left alone: oneDNN 2.6's deconvolution with a bias
 * took 5-7x its time without one on PP-OCR det's 2x2 stride-2 layers, more
 * than the separate Add and BatchNormalization it would save. */
#include "passes/conv-affine.h"
#include <math.h>
#include <string.h>

/* Constant f32 value of input @i of @node with @n elements, or NULL. */
const ClinferTensor *
clinfer_conv_affine_const_f32 (const ClinferNode *node, guint i, int64_t n)
{
  ClinferPortDesc *d = clinfer_node_input_desc (node, i);

  if (d == NULL || d->value == NULL
      || clinfer_tensor_get_element_type (d->value) != CLINFER_TYPE_F32
      || !clinfer_tensor_is_contiguous (d->value)
      || (n >= 0 && clinfer_tensor_get_n_elements (d->value) != n))
    return NULL;
  return d->value;
}

gboolean
clinfer_conv_affine_is_conv (const ClinferNode *node)
{
  return clinfer_pass_is_op (node, "Conv");
}

/* Output channels M of @conv when its weights and bias are constants
 * and its output feeds one node only, else -1. */
int64_t
clinfer_conv_affine_channels (const ClinferGraph *graph, const ClinferNode *conv)
{
  const ClinferTensor *w = clinfer_conv_affine_const_f32 (conv, 1, -1);
  int64_t m;

  if (w == NULL || clinfer_tensor_get_shape (w)->rank < 3
      || conv->inputs[0].node == NULL)
    return -1;
  m = clinfer_tensor_get_shape (w)->dims[0];
  if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) conv, 0 }) != 1
      || (conv->n_inputs > 2 && conv->inputs[2].node
          && !clinfer_conv_affine_const_f32 (conv, 2, m)))
    return -1;
  return m;
}

/* Output channels M of @conv when the pair can be fused, else -1. */
int64_t
clinfer_conv_affine_bn_channels (const ClinferGraph *graph, const ClinferNode *conv,
    const ClinferNode *bn)
{
  int64_t m = clinfer_conv_affine_channels (graph, conv), spatial = 1;

  if (m < 0)
    return -1;
  if (bn->opset < 9 && clinfer_node_attr_int (bn, "spatial", 1, &spatial, NULL)
      && spatial == 0)
    return -1;
  for (guint i = 1; i < bn->n_outputs; i++)
    if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) bn, i }))
      return -1;
  for (guint i = 1; i < 5; i++)
    if (clinfer_conv_affine_const_f32 (bn, i, m) == NULL)
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
  const ClinferTensor *w = clinfer_conv_affine_const_f32 (conv, 1, -1);
  const ClinferTensor *b = conv->n_inputs > 2
      ? clinfer_conv_affine_const_f32 (conv, 2, m) : NULL;
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
  const float *scale = clinfer_tensor_get_const_data (
      clinfer_conv_affine_const_f32 (bn, 1, m));
  const float *shift = clinfer_tensor_get_const_data (
      clinfer_conv_affine_const_f32 (bn, 2, m));
  const float *mean = clinfer_tensor_get_const_data (
      clinfer_conv_affine_const_f32 (bn, 3, m));
  const float *var = clinfer_tensor_get_const_data (
      clinfer_conv_affine_const_f32 (bn, 4, m));
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
ClinferNode *
clinfer_conv_affine_fuse (ClinferGraph *graph, ClinferNode *conv, ClinferNode *next,
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
