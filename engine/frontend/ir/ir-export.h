/* clinfer — helpers shared by the OpenVINO IR op exporters
 * (ir-export-ops.c, ir-export-shape.c). */
#pragma once

#include "frontend/ir/ir-writer.h"

G_BEGIN_DECLS

/* Rank / element type of input @i of @n (-1 / UNDEFINED when unknown). */
int ir_export_rank (const ClinferNode *n, guint i);
ClinferElementType ir_export_type (const ClinferNode *n, guint i);
/* Values of a constant integer input (transfer full); FALSE when the input
 * is not a constant. */
gboolean ir_export_const_ints (const ClinferNode *n, guint i, int64_t **v,
    gsize *len);
/* Input @i of @n reshaped to @dims: a Const view when it is a constant,
 * else a Reshape layer. */
IrVal ir_export_reshape_const (IrWriter *w, const ClinferNode *n, guint i,
    const char *suffix, const int64_t *dims, int rank);
/* One-input and two-input (auto_broadcast numpy) layers typed like output
 * 0 of @n. */
IrVal ir_export_unary (IrWriter *w, const ClinferNode *n, const char *type,
    int opset, const char *suffix, IrVal x);
IrVal ir_export_binary (IrWriter *w, const ClinferNode *n, const char *type,
    const char *suffix, IrVal a, IrVal b);
/* ShapeOf-3 (i64) of @x. */
IrVal ir_export_shape_of (IrWriter *w, const ClinferNode *n, const char *suffix,
    IrVal x);
/* Name for helper layers and constants: "<node>/<suffix>". (transfer
 * full) */
char *ir_export_name (const ClinferNode *n, const char *suffix);

/* Exporters of part 1 used by the table in part 2. */
gboolean ir_export_unary_op (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_binary_op (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_mod (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_where (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_prelu (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_leaky_relu (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_elu (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_selu (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_hard_sigmoid (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_clip (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_round (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_reciprocal (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_softmax (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_conv (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_conv_transpose (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_max_pool (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_avg_pool (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_global_pool (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_batch_norm (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_instance_norm (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_layer_norm (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_mvn (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_lp_norm (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_lrn (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_matmul (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_gemm (IrWriter *w, const ClinferNode *n, GError **error);
gboolean ir_export_identity (IrWriter *w, const ClinferNode *n, GError **error);

G_END_DECLS
