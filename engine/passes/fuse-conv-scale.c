/* clinfer — pass fuse-conv-scale: a Mul / Add / Sub / Div by a constant
 * that is one value or one value per output channel (s = c, t = c,
 * t = -c or s = 1 / c) after a Conv folds into the Conv's weights and
 * bias (conv-affine.c); and BatchNormalization again (a Conv -> Add ->
 * BatchNormalization chain only becomes a pair once the Add is folded). */
#include "passes/conv-affine.h"
#include <math.h>


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
  gboolean commutes = clinfer_pass_is_op (op, "Mul") || clinfer_pass_is_op (op, "Add");
  int ci = op->inputs[0].node == conv ? 1 : 0;
  int64_t n;

  if (!commutes && !clinfer_pass_is_op (op, "Sub") && !clinfer_pass_is_op (op, "Div"))
    return -1;
  if (op->n_inputs != 2 || op->inputs[1 - ci].node != conv
      || op->inputs[1 - ci].port != 0 || (!commutes && ci != 1)
      || op->outputs[0].type != CLINFER_TYPE_F32
      || !clinfer_shape_is_static (y) || y->rank < 3
      || !clinfer_shape_equal (&op->outputs[0].shape, y)
      || (c = clinfer_conv_affine_const_f32 (op, ci, -1)) == NULL)
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
    if (clinfer_pass_is_op (op, "Mul"))
      s[i] = x;
    else if (clinfer_pass_is_op (op, "Add"))
      t[i] = x;
    else if (clinfer_pass_is_op (op, "Sub"))
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
  if (clinfer_pass_is_op (op, "BatchNormalization") && op->n_inputs >= 5
      && op->inputs[0].node && op->inputs[0].port == 0
      && clinfer_conv_affine_is_conv (op->inputs[0].node)
      && (*m = clinfer_conv_affine_bn_channels (graph, op->inputs[0].node,
              op)) >= 0) {
    *conv = op->inputs[0].node;
    *s = g_new (double, *m);
    *t = g_new (double, *m);
    return clinfer_pass_bn_affine (op, *m, *s, *t, NULL) ? "bn" : NULL;
  }
  for (guint j = 0; j < MIN (op->n_inputs, 2) && *conv == NULL; j++)
    if (op->inputs[j].node && clinfer_conv_affine_is_conv (op->inputs[j].node))
      *conv = op->inputs[j].node;
  if (*conv == NULL || op->n_outputs != 1
      || (*m = clinfer_conv_affine_channels (graph, *conv)) < 0
      || (ci = scale_operand (op, *conv, *m)) < 0)
    return NULL;
  *s = g_new (double, *m);
  *t = g_new (double, *m);
  return scale_affine (op, clinfer_conv_affine_const_f32 (op, ci, -1), *m, *s,
      *t) ? "scale" : NULL;
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
      if (!(f = clinfer_conv_affine_fuse (graph, conv, op, m, s, t, what, error))
          || !clinfer_graph_resolve_ops (graph, error)
          || !clinfer_node_infer (f, error))
        return FALSE;
      *changed = TRUE;
      again = TRUE;
    }
  }
  return TRUE;
}
