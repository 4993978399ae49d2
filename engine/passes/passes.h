/* clinfer — compile passes over the graph and the pass manager. */
#pragma once

#include "core/graph.h"
#include <clinfer/compiled.h>

G_BEGIN_DECLS

typedef struct {
  const ClinferCompileConfig *config;
  int opset;                 /* default-domain opset of the model */
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
} ClinferPass;

/* Runs every enabled pass in order on @graph (input shapes fixed). */
gboolean clinfer_passes_run (ClinferGraph *graph, const ClinferPassContext *ctx,
    GError **error);
const ClinferPass *clinfer_pass_lookup (const char *name);

/* Individual passes (one file each in engine/passes/). */
gboolean clinfer_pass_infer_shapes (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fold_constants (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_remove_dead_nodes (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);
gboolean clinfer_pass_fuse_conv (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);

/* Shape inference for one node from its inputs' port descriptions
 * (shared by the pass and the executor's dynamic-shape path). */
gboolean clinfer_node_infer (ClinferNode *node, GError **error);

G_END_DECLS
