/* clinfer — the pass manager: the ordered list of named compile passes,
 * each of which can be disabled by name for debugging. */
#include "passes/passes.h"
#include <clinfer/config.h>
#include "ops/op.h"
#include <string.h>

static const ClinferPass passes[] = {
  { "infer-shapes", "infer element types and shapes of every port (required)",
    TRUE, clinfer_pass_infer_shapes },
  { "fold-constants", "evaluate nodes whose inputs are all known at compile "
    "time and replace them by constants", FALSE, clinfer_pass_fold_constants },
  { "remove-dead-nodes", "drop nodes that no graph output depends on",
    FALSE, clinfer_pass_remove_dead_nodes },
  { "fold-pad", "fold a Pad with zeros on the spatial dims into the "
    "padding of the Conv, AveragePool or MaxPool that reads it", FALSE,
    clinfer_pass_fold_pad },
  { "fuse-conv-batchnorm", "fold a BatchNormalization into the weights and "
    "bias of the Conv before it (when the Conv feeds only it)", FALSE,
    clinfer_pass_fuse_conv_batchnorm },
  { "fuse-conv-scale", "fold a Mul/Add/Sub/Div by a constant (one value or "
    "one per output channel) into the weights and bias of the Conv before "
    "it (when the Conv feeds only it)", FALSE, clinfer_pass_fuse_conv_scale },
  { "fold-space-to-depth", "fold Slices that take every s-th row and "
    "column at each of the s * s offsets, concatenated on the channels "
    "before a stride-1 Conv (YOLOv5's Focus), into that Conv: an s-times "
    "larger kernel at stride s on the sliced tensor (compile only)", FALSE,
    clinfer_pass_fold_space_to_depth, TRUE },
  { "hoist-strides", "when only 1x1 Convs with the same strides read a "
    "tensor, compute just the pixels they read: the stride moves up through "
    "element-wise nodes into the Conv that computes it (compile only)",
    FALSE, clinfer_pass_hoist_strides, TRUE },
  { "batchnorm-to-affine", "replace a BatchNormalization with constant "
    "parameters that no Conv absorbed (and a per-channel Mul/Add/Sub before "
    "it) by Mul and Add by per-channel constants (compile only)", FALSE,
    clinfer_pass_batchnorm_to_affine, TRUE },
  { "gemm-to-matmul", "replace a Gemm with a constant B (or an "
    "activation B at alpha 1) by MatMul and Add, alpha and beta folded into "
    "the constants, transA (and an activation B's transB) as Transpose "
    "nodes, for devices with no Gemm kernel (the CPU device; compile only)", FALSE, clinfer_pass_gemm_to_matmul, TRUE },
  { "fuse-hardswish", "replace x * Clip (x + 3, 0, 6) / 6 and x * "
    "HardSigmoid (x) (alpha 1/6, beta 0.5) by one HardSwish node (compile "
    "only)", FALSE, clinfer_pass_fuse_hardswish, TRUE },
  { "fuse-swish", "replace x * Sigmoid (x) by one com.clinfer Swish node, "
    "for devices with a kernel for it (the CPU device; compile only)", FALSE,
    clinfer_pass_fuse_swish, TRUE },
  { "fuse-residual-gate", "replace x + x * s, s broadcast over x (a "
    "squeeze-and-excitation gate), by x * (s + 1): one pass over x (compile "
    "only)", FALSE, clinfer_pass_fuse_residual_gate, TRUE },
  { "fuse-layernorm", "replace layer normalisation written out as "
    "ReduceMean, Sub, Pow, Add, Sqrt, Div [, Mul, Add] over the last axis by "
    "one LayerNormalization node (com.clinfer LayerNormStd where eps is "
    "added to the standard deviation; compile only)", FALSE,
    clinfer_pass_fuse_layernorm, TRUE },
  { "fuse-conv-activation", "merge Conv [+ bias/residual Add] [+ Relu/Clip/"
    "LeakyRelu] chains into one FusedConv node (compile only, not run by "
    "clinfer-convert)", FALSE, clinfer_pass_fuse_conv_activation, TRUE },
  { "conv1d-to-2d", "run a 1-D Conv / FusedConv as the 2-D one on its "
    "input viewed as [N, C, 1, W], between Reshapes, for devices with fast "
    "2-D convolutions only (the CPU device; compile only)", FALSE,
    clinfer_pass_conv1d_to_2d, TRUE },
  { "fuse-eltwise-chain", "merge runs of element-wise nodes (activations, "
    "arithmetic with a constant or a same-shape tensor) into one "
    "EltwiseChain node, for devices that launch one kernel per node (the "
    "GPU device; compile only)", FALSE, clinfer_pass_fuse_eltwise_chain,
    TRUE },
};

static const char *pass_names[G_N_ELEMENTS (passes) + 1];

const char *const *
clinfer_pass_get_names (void)
{
  if (pass_names[0] == NULL)
    for (gsize i = 0; i < G_N_ELEMENTS (passes); i++)
      pass_names[i] = passes[i].name;
  return pass_names;
}

const ClinferPass *
clinfer_pass_lookup (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (passes); i++)
    if (strcmp (passes[i].name, name) == 0)
      return &passes[i];
  return NULL;
}

const char *
clinfer_pass_get_description (const char *name)
{
  const ClinferPass *p = clinfer_pass_lookup (name);
  return p ? p->description : NULL;
}

/* ctx->dump_dir/NN-<name>.dot, for --dump-graph. */
static gboolean
dump_graph (ClinferGraph *graph, const ClinferPassContext *ctx, guint step,
    const char *name, GError **error)
{
  g_autofree char *file = NULL, *path = NULL, *title = NULL;

  if (ctx->dump_dir == NULL)
    return TRUE;
  file = g_strdup_printf ("%02u-%s.dot", step, name);
  path = g_build_filename (ctx->dump_dir, file, NULL);
  title = g_strdup_printf ("%s after %s", graph->origin, name);
  return clinfer_graph_write_dot (graph, path, title, error);
}

gboolean
clinfer_pass_is_op (const ClinferNode *node, const char *op_type)
{
  return clinfer_node_is_builtin_op (node, "", op_type);
}

static gboolean
is_disabled (const ClinferPassContext *ctx, const char *name)
{
  for (guint i = 0; ctx->disabled_passes && i < ctx->disabled_passes->len; i++)
    if (strcmp (g_ptr_array_index (ctx->disabled_passes, i), name) == 0)
      return TRUE;
  return FALSE;
}

gboolean
clinfer_passes_run (ClinferGraph *graph, const ClinferPassContext *ctx,
    GError **error)
{
  guint step = 0;

  if (!dump_graph (graph, ctx, step++, "input", error))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (passes); i++) {
    gboolean changed = FALSE;

    if (!passes[i].required && is_disabled (ctx, passes[i].name)) {
      g_debug ("pass %s disabled", passes[i].name);
      continue;
    }
    if (passes[i].device_only && ctx->for_export)
      continue;
    if (!passes[i].run (graph, ctx, &changed, error))
      return FALSE;
    /* Keep every port's shape right for the passes that follow. */
    if (changed && !passes[i].required
        && !clinfer_pass_infer_shapes (graph, ctx, &changed, error))
      return FALSE;
    if (!dump_graph (graph, ctx, step++, passes[i].name, error))
      return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_pass_replace_pattern (ClinferGraph *graph, ClinferNode *tail,
    ClinferNode *node, GPtrArray *nodes, GHashTable *removed, GError **error)
{
  ClinferPortDesc *out = &tail->outputs[0];

  g_free (node->outputs[0].name);
  node->outputs[0].name = g_strdup (out->name);
  node->outputs[0].type = out->type;
  node->outputs[0].shape = out->shape;
  clinfer_graph_replace_uses (graph, (ClinferPortRef) { tail, 0 },
      (ClinferPortRef) { node, 0 });
  for (guint i = 0; i < nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (nodes, i);
    g_hash_table_add (removed, n);
    clinfer_graph_remove_node (graph, n);
  }
  return clinfer_graph_resolve_ops (graph, error)
      && clinfer_node_infer (node, error);
}
