/* clinfer — pass fuse-conv-batchnorm: a BatchNormalization (inference)
 * after a Conv folds into the Conv's weights and bias (conv-affine.c),
 * with s = scale / sqrt (var + eps) and t = B - mean * s. */
#include "passes/conv-affine.h"

gboolean
clinfer_pass_fuse_conv_batchnorm (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error)
{
  gboolean again = TRUE;

  /* Restart after each fusion: the node list changes under us. */
  while (again) {
    again = FALSE;
    for (guint i = 0; i < graph->nodes->len && !again; i++) {
      ClinferNode *bn = g_ptr_array_index (graph->nodes, i), *conv, *f;
      int64_t m;

      if (!clinfer_pass_is_op (bn, "BatchNormalization") || bn->n_inputs < 5
          || (conv = bn->inputs[0].node) == NULL || bn->inputs[0].port != 0
          || !clinfer_conv_affine_is_conv (conv)
          || (m = clinfer_conv_affine_bn_channels (graph, conv, bn)) < 0)
        continue;
      {
        g_autofree double *s = g_new (double, m), *t = g_new (double, m);
        if (!clinfer_pass_bn_affine (bn, m, s, t, error)
            || !(f = clinfer_conv_affine_fuse (graph, conv, bn, m, s, t, "bn",
                    error)))
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
