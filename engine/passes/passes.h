/* clinfer — compile passes over the graph and the pass manager. */
#pragma once

#include "core/graph.h"

G_BEGIN_DECLS

typedef struct {
  /* Names (char*) of the passes not to run, or NULL. */
  const GPtrArray *disabled_passes;
  int opset;                 /* default-domain opset of the model */
  /* When set, the graph is written there as Graphviz .dot before the
   * first pass and after every pass that runs ("NN-<pass>.dot"). */
  const char *dump_dir;
  /* Converting to a file (clinfer-convert), not compiling: passes that
   * only help a device (fusions into engine-private ops) are skipped. */
  gboolean for_export;
  /* The device runs com.clinfer EltwiseChain nodes well: the
   * fuse-eltwise-chain pass makes them (ClinferDeviceClass). */
  gboolean fuse_eltwise_chains;
  /* The device has a kernel for com.clinfer LayerNormStd: fuse-layernorm
   * makes them (elsewhere that form stays written out). */
  gboolean layer_norm_std;
  /* The device runs MatMul and its bias Add fast but has no Gemm kernel:
   * gemm-to-matmul rewrites Gemm nodes. */
  gboolean gemm_as_matmul;
  /* The device runs 2-D convolutions fast but not 1-D ones: conv1d-to-2d
   * rewrites them. */
  gboolean conv1d_as_2d;
  /* The device has a kernel for com.clinfer Swish: fuse-swish makes
   * them. */
  gboolean swish;
} ClinferPassContext;

typedef struct {
  const char *name;          /* kebab-case, used by --disable-pass */
  const char *description;   /* one line */
  gboolean required;         /* cannot be disabled (e.g. shape inference) */
  /* Rewrites @graph in place. Shapes and types of every port are known
   * (shape inference runs before the optional passes and again after any
   * pass that reports changes through *changed). */
  gboolean (*run) (ClinferGraph *graph, const ClinferPassContext *ctx,
      gboolean *changed, GError **error);
  gboolean device_only;      /* skipped when ctx->for_export */
} ClinferPass;

/* Runs every enabled pass in order on @graph (input shapes fixed). */
gboolean clinfer_passes_run (ClinferGraph *graph, const ClinferPassContext *ctx,
    GError **error);
const ClinferPass *clinfer_pass_lookup (const char *name);

/* TRUE when @node (may be NULL) is the built-in op @op_type of the
 * default domain (not a custom op overriding it): what the passes'
 * patterns match on. */
gboolean clinfer_pass_is_op (const ClinferNode *node, const char *op_type);

/* TRUE when @a and @b name the same output port. */
static inline gboolean
clinfer_pass_same_port (ClinferPortRef a, ClinferPortRef b)
{
  return a.node == b.node && a.port == b.port;
}

/* Individual passes: pass <name> is engine/passes/<name>.c. */
gboolean clinfer_pass_infer_shapes (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fold_constants (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fold_pad (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fold_space_to_depth (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_hoist_strides (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_remove_dead_nodes (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_eltwise_chain (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_conv_activation (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_hardswish (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_swish (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_conv_batchnorm (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_conv_scale (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_batchnorm_to_affine (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_residual_gate (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_layernorm (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_gemm_to_matmul (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_conv1d_to_2d (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);

/* For fusion passes: @node (new, its inputs set) takes over @tail's
 * output (name, type, shape and every reader), the matched @nodes (@tail
 * among them) are removed and recorded in @removed, and the ops resolved
 * and @node's shapes inferred again. */
gboolean clinfer_pass_replace_pattern (ClinferGraph *graph, ClinferNode *tail,
    ClinferNode *node, GPtrArray *nodes, GHashTable *removed, GError **error);

/* Writes @graph as a Graphviz digraph to @path (dot-dump.c): one box per
 * node (op type, name), edges labelled with element type and shape,
 * constants as small ellipses with their shape, graph outputs as sinks.
 * @title (may be NULL) labels the drawing. */
gboolean clinfer_graph_write_dot (const ClinferGraph *graph, const char *path,
    const char *title, GError **error);

/* Shape inference for one node from its inputs' port descriptions
 * (shared by the pass and the executor's dynamic-shape path). */
gboolean clinfer_node_infer (ClinferNode *node, GError **error);

G_END_DECLS
