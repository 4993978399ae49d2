/* clinfer — pass batchnorm-to-affine: an inference BatchNormalization
 * with constant parameters on a 4-D f32 tensor that no Conv absorbed
 * (fuse-conv-batchnorm runs first) becomes Mul (x, s) -> Add (., t) with
 * [C, 1, 1] constants, s = scale / sqrt (var + eps), t = B - mean * s.
 * A Mul / Add / Sub (x - c) by a constant of one value or one value per
 * channel whose output feeds only the BatchNormalization is folded in
 * first (PP-OCR det: ConvTranspose -> Add (bias) -> BatchNormalization).
 * Devices then run two element-wise steps they have fast kernels for (the
 * CPU device's oneDNN path keeps them in its blocked layout) instead of
 * the reference BatchNormalization. Compile only. */
#include "passes/conv-affine.h"
#include "ops/op.h"
#include <string.h>

/* Constant f32 input @i of @node with @n elements (or 1 when @or_one). */
static const float *
const_f32 (const ClinferNode *node, guint i, int64_t n, gboolean or_one,
    int64_t *got)
{
  ClinferPortDesc *d = clinfer_node_input_desc (node, i);
  int64_t k;

  if (d == NULL || d->value == NULL
      || clinfer_tensor_get_element_type (d->value) != CLINFER_TYPE_F32
      || !clinfer_tensor_is_contiguous (d->value))
    return NULL;
  k = clinfer_tensor_get_n_elements (d->value);
  if (k != n && !(or_one && k == 1))
    return NULL;
  if (got)
    *got = k;
  return clinfer_tensor_get_const_data (d->value);
}

/* The channels of @bn when it can be rewritten, else -1. */
static int64_t
bn_channels (const ClinferGraph *graph, const ClinferNode *bn)
{
  ClinferPortDesc *x = clinfer_node_input_desc (bn, 0);
  int64_t c, spatial = 1, training = 0;

  if (!clinfer_pass_is_op (bn, "BatchNormalization") || x == NULL
      || x->type != CLINFER_TYPE_F32 || x->shape.rank != 4
      || !clinfer_shape_is_static (&x->shape))
    return -1;
  if (bn->opset < 9 && clinfer_node_attr_int (bn, "spatial", 1, &spatial, NULL)
      && spatial == 0)
    return -1;
  if (clinfer_node_attr_int (bn, "training_mode", 0, &training, NULL)
      && training != 0)
    return -1;
  for (guint i = 1; i < bn->n_outputs; i++)
    if (clinfer_graph_count_uses (graph, (ClinferPortRef) { (ClinferNode *) bn, i }))
      return -1;
  c = x->shape.dims[1];
  for (guint i = 1; i < 5; i++)
    if (const_f32 (bn, i, c, FALSE, NULL) == NULL)
      return -1;
  return c;
}

/* @p (the producer of the BatchNormalization's input) as y = x * a + b per
 * channel, when it is Mul/Add/Sub by a per-channel or scalar constant
 * whose output feeds only that node: sets the activation input @x. */
static gboolean
affine_of (const ClinferGraph *graph, ClinferNode *p, const ClinferShape *y,
    int64_t c, double *a, double *b, ClinferPortRef *x)
{
  gboolean add = clinfer_pass_is_op (p, "Add"), sub = clinfer_pass_is_op (p, "Sub"), mul = clinfer_pass_is_op (p, "Mul");

  if ((!add && !sub && !mul) || p->n_inputs != 2
      || clinfer_node_get_attr (p, "broadcast") != NULL
      || clinfer_graph_count_uses (graph, (ClinferPortRef) { p, 0 }) != 1)
    return FALSE;
  for (guint i = 0; i < 2; i++) {
    ClinferPortDesc *xd = clinfer_node_input_desc (p, i);
    ClinferPortDesc *kd = clinfer_node_input_desc (p, 1 - i);
    const float *k;
    int64_t n = 0;

    if (sub && i != 0)
      break;
    if (xd == NULL || kd == NULL || xd->value != NULL || p->inputs[i].node == NULL
        || xd->type != CLINFER_TYPE_F32 || !clinfer_shape_equal (&xd->shape, y)
        || (k = const_f32 (p, 1 - i, c, TRUE, &n)) == NULL)
      continue;
    /* Per channel means the constant's shape is [C, 1, 1] or [1, C, 1, 1]. */
    if (n == c && c != 1 && !(kd->shape.rank >= 3
            && kd->shape.dims[kd->shape.rank - 3] == c
            && kd->shape.dims[kd->shape.rank - 2] == 1
            && kd->shape.dims[kd->shape.rank - 1] == 1))
      continue;
    for (int64_t j = 0; j < c; j++) {
      double v = k[n == 1 ? 0 : j];
      a[j] = mul ? v : 1.;
      b[j] = add ? v : sub ? -v : 0.;
    }
    *x = p->inputs[i];
    return TRUE;
  }
  return FALSE;
}

static ClinferNode *
add_vector (ClinferGraph *graph, const char *name, const double *v, int64_t c,
    GError **error)
{
  int64_t dims[] = { c, 1, 1 };
  ClinferShape shape = clinfer_shape_make (3, dims);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_F32, &shape,
      error);
  float *d;

  if (t == NULL)
    return NULL;
  d = clinfer_tensor_get_data (t);
  for (int64_t j = 0; j < c; j++)
    d[j] = (float) v[j];
  return clinfer_graph_add_constant (graph, name, t);
}

static gboolean
rewrite (ClinferGraph *graph, ClinferNode *bn, int64_t c, GError **error)
{
  const ClinferShape *y = &bn->outputs[0].shape;
  g_autofree double *s = g_new (double, c), *t = g_new (double, c);
  g_autofree double *a = g_new (double, c), *b = g_new (double, c);
  g_autofree char *sname = g_strdup_printf ("%s/affine_scale", bn->outputs[0].name);
  g_autofree char *tname = g_strdup_printf ("%s/affine_shift", bn->outputs[0].name);
  g_autofree char *mname = g_strdup_printf ("%s/affine_mul", bn->name);
  ClinferNode *p = bn->inputs[0].node, *sn, *tn, *mul, *add;
  ClinferPortRef x = bn->inputs[0];
  ClinferNode *olds[6] = { NULL };

  if (!clinfer_pass_bn_affine (bn, c, s, t, error))
    return FALSE;
  /* BN (x * a + b) = x * (a s) + (b s + t) */
  if (p && bn->inputs[0].port == 0 && affine_of (graph, p, y, c, a, b, &x)) {
    for (int64_t j = 0; j < c; j++) {
      t[j] += b[j] * s[j];
      s[j] *= a[j];
    }
  } else {
    p = NULL;
  }
  if ((sn = add_vector (graph, sname, s, c, error)) == NULL
      || (tn = add_vector (graph, tname, t, c, error)) == NULL)
    return FALSE;
  mul = clinfer_graph_add_node (graph, "Mul", "", mname, 2, 1);
  mul->opset = bn->opset < 7 ? 7 : bn->opset;
  mul->inputs[0] = x;
  mul->inputs[1] = (ClinferPortRef) { sn, 0 };
  add = clinfer_graph_add_node (graph, "Add", "", bn->name, 2, 1);
  add->opset = mul->opset;
  add->inputs[0] = (ClinferPortRef) { mul, 0 };
  add->inputs[1] = (ClinferPortRef) { tn, 0 };
  g_free (add->outputs[0].name);
  add->outputs[0].name = g_strdup (bn->outputs[0].name);
  for (guint i = 1; i < 5; i++)
    olds[i - 1] = bn->inputs[i].node;
  for (guint i = 0; p && i < 2; i++)
    olds[4 + i] = p->inputs[i].node;
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { bn, 0 },
      (ClinferPortRef) { add, 0 });
  clinfer_graph_remove_node (graph, bn);
  if (p)
    clinfer_graph_remove_node (graph, p);
  /* The parameters' constants, once nothing reads them (one node may
   * hold several inputs: remove it once). */
  for (guint i = 0; i < G_N_ELEMENTS (olds); i++) {
    gboolean seen = FALSE;
    for (guint j = 0; j < i; j++)
      seen = seen || olds[j] == olds[i];
    if (olds[i] && !seen && clinfer_pass_is_op (olds[i], "Constant")
        && clinfer_graph_count_uses (graph, (ClinferPortRef) { olds[i], 0 }) == 0)
      clinfer_graph_remove_node (graph, olds[i]);
  }
  return clinfer_graph_resolve_ops (graph, error)
      && clinfer_node_infer (sn, error) && clinfer_node_infer (tn, error)
      && clinfer_node_infer (mul, error) && clinfer_node_infer (add, error);
}

gboolean
clinfer_pass_batchnorm_to_affine (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  gboolean again = TRUE;

  /* Restart after each rewrite: the node list changes under us. */
  while (again) {
    again = FALSE;
    for (guint i = 0; i < graph->nodes->len && !again; i++) {
      ClinferNode *bn = g_ptr_array_index (graph->nodes, i);
      int64_t c = bn_channels (graph, bn);
      if (c <= 0)
        continue;
      if (!rewrite (graph, bn, c, error))
        return FALSE;
      *changed = again = TRUE;
    }
  }
  return TRUE;
}
