/* clinfer — pass gemm-to-matmul: Y = alpha * A B' + beta * C (Gemm, B'
 * = B or B^T) becomes MatMul (A, B'') [+ Add (., C'')], for devices whose
 * fast paths take MatMul and its bias Add but have no Gemm kernel (the
 * CPU device: oneDNN's matmul or clinfer's GEMM with the bias as a
 * post-op). PyTorch exports every Linear layer on a 2-D input as Gemm with
 * transB = 1 (ddddocr's CTC head: 32 x 1024 by 1024 x 8210, 35 ms on the
 * reference eval).
 *
 * Rewritten when A is f32 of rank 2 (with transA 1, through a Transpose
 * node) and B is a constant (B'' = alpha * B', transposed once here) or
 * an activation with alpha 1 (with transB 1, through a Transpose node);
 * C is absent, a constant (C'' = beta * C; dropped when beta is 0) or an
 * activation with beta 1. Gemm's C broadcasts to [M, N] as numpy's rules
 * do, so Add reads it unchanged. The CPU device runs such a Transpose as
 * the MatMul's strides or on its transpose kernel. Compile only. */
#include "passes/conv-affine.h"
#include <string.h>

typedef struct {
  float alpha, beta;
  gboolean trans_a, trans_b;
  const ClinferTensor *b_const, *c_const;
  gboolean has_c;
} GemmForm;

static gboolean
match (const ClinferNode *node, GemmForm *f)
{
  ClinferPortDesc *a = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 1);
  int64_t ta = 0, tb = 0;

  if (!clinfer_pass_is_op (node, "Gemm") || node->n_outputs != 1
      || clinfer_node_get_attr (node, "broadcast") != NULL
      || node->outputs[0].type != CLINFER_TYPE_F32 || a == NULL || b == NULL
      || a->type != CLINFER_TYPE_F32 || a->shape.rank != 2
      || b->type != CLINFER_TYPE_F32 || b->shape.rank != 2
      || !clinfer_shape_is_static (&b->shape)
      || !clinfer_node_attr_int (node, "transA", 0, &ta, NULL)
      || !clinfer_node_attr_int (node, "transB", 0, &tb, NULL)
      || !clinfer_node_attr_float (node, "alpha", 1.f, &f->alpha, NULL)
      || !clinfer_node_attr_float (node, "beta", 1.f, &f->beta, NULL))
    return FALSE;
  f->trans_a = ta != 0;
  f->trans_b = tb != 0;
  f->b_const = clinfer_conv_affine_const_f32 (node, 1, -1);
  if (f->b_const == NULL && f->alpha != 1.f)
    return FALSE;
  f->has_c = node->n_inputs > 2 && node->inputs[2].node != NULL
      && f->beta != 0.f;
  f->c_const = f->has_c ? clinfer_conv_affine_const_f32 (node, 2, -1) : NULL;
  if (f->has_c && f->c_const == NULL
      && (f->beta != 1.f || clinfer_node_input_desc (node, 2)->type
          != CLINFER_TYPE_F32))
    return FALSE;
  return TRUE;
}

/* A constant @name of @shape whose values are @scale * @src, read through
 * @transpose (a 2-D @src, @shape its transpose). */
static ClinferNode *
scaled_constant (ClinferGraph *graph, const char *name,
    const ClinferTensor *src, gboolean transpose, float scale, GError **error)
{
  const ClinferShape *s = clinfer_tensor_get_shape (src);
  ClinferShape shape = *s;
  g_autoptr (ClinferTensor) t = NULL;
  const float *x = clinfer_tensor_get_const_data (src);
  float *y;
  int64_t n = clinfer_shape_n_elements (s);

  if (transpose) {
    shape.dims[0] = s->dims[1];
    shape.dims[1] = s->dims[0];
  }
  if ((t = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, error)) == NULL)
    return NULL;
  y = clinfer_tensor_get_data (t);
  if (transpose) {
    for (int64_t i = 0; i < s->dims[0]; i++)
      for (int64_t j = 0; j < s->dims[1]; j++)
        y[j * s->dims[0] + i] = scale * x[i * s->dims[1] + j];
  } else {
    for (int64_t i = 0; i < n; i++)
      y[i] = scale * x[i];
  }
  return clinfer_graph_add_constant (graph, name, t);
}

/* A Transpose (perm 1, 0) of @src named @name. */
static ClinferNode *
transpose_2d (ClinferGraph *graph, const char *name, ClinferPortRef src,
    int opset)
{
  static const int64_t perm[] = { 1, 0 };
  ClinferNode *t = clinfer_graph_add_node (graph, "Transpose", "", name, 1, 1);

  t->opset = opset;
  t->inputs[0] = src;
  clinfer_node_set_attr (t, "perm", clinfer_attr_new_ints (perm, 2));
  return t;
}

static gboolean
rewrite (ClinferGraph *graph, ClinferNode *gemm, const GemmForm *f,
    GError **error)
{
  const char *out_name = gemm->outputs[0].name;
  g_autofree char *b_name = g_strdup_printf ("%s/matmul_b", out_name);
  g_autofree char *c_name = g_strdup_printf ("%s/add_c", out_name);
  g_autofree char *mm_name = g_strdup_printf ("%s/matmul", out_name);
  g_autofree char *at_name = g_strdup_printf ("%s/a_transposed", out_name);
  g_autofree char *bt_name = g_strdup_printf ("%s/b_transposed", out_name);
  ClinferNode *b = NULL, *c = NULL, *mm, *add = NULL, *last;
  ClinferNode *at = NULL, *bt = NULL;
  ClinferPortRef a_port = gemm->inputs[0], b_port = gemm->inputs[1];
  ClinferPortRef c_port = { NULL, 0 };

  if (f->b_const) {
    b = scaled_constant (graph, b_name, f->b_const, f->trans_b, f->alpha,
        error);
    if (b == NULL)
      return FALSE;
    b_port = (ClinferPortRef) { b, 0 };
  } else if (f->trans_b) {
    bt = transpose_2d (graph, bt_name, b_port, gemm->opset);
    b_port = (ClinferPortRef) { bt, 0 };
  }
  if (f->trans_a) {
    at = transpose_2d (graph, at_name, a_port, gemm->opset);
    a_port = (ClinferPortRef) { at, 0 };
  }
  if (f->has_c) {
    c_port = gemm->inputs[2];
    if (f->c_const && f->beta != 1.f) {
      c = scaled_constant (graph, c_name, f->c_const, FALSE, f->beta, error);
      if (c == NULL)
        return FALSE;
      c_port = (ClinferPortRef) { c, 0 };
    }
  }
  mm = clinfer_graph_add_node (graph, "MatMul", "",
      f->has_c ? mm_name : gemm->name, 2, 1);
  mm->opset = gemm->opset;
  mm->inputs[0] = a_port;
  mm->inputs[1] = b_port;
  last = mm;
  if (f->has_c) {
    add = clinfer_graph_add_node (graph, "Add", "", gemm->name, 2, 1);
    add->opset = gemm->opset;
    add->inputs[0] = (ClinferPortRef) { mm, 0 };
    add->inputs[1] = c_port;
    last = add;
  }
  g_free (last->outputs[0].name);
  last->outputs[0].name = g_strdup (out_name);
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { gemm, 0 },
      (ClinferPortRef) { last, 0 });
  clinfer_graph_remove_node (graph, gemm);
  return clinfer_graph_resolve_ops (graph, error)
      && (b == NULL || clinfer_node_infer (b, error))
      && (at == NULL || clinfer_node_infer (at, error))
      && (bt == NULL || clinfer_node_infer (bt, error))
      && (c == NULL || clinfer_node_infer (c, error))
      && clinfer_node_infer (mm, error)
      && (add == NULL || clinfer_node_infer (add, error));
}

gboolean
clinfer_pass_gemm_to_matmul (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;

  if (!ctx->gemm_as_matmul)
    return TRUE;
  if ((order = clinfer_graph_topological_order (graph, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);
    GemmForm f;

    if (!match (node, &f))
      continue;
    if (!rewrite (graph, node, &f, error))
      return FALSE;
    *changed = TRUE;
  }
  return TRUE;
}
