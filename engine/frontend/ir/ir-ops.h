/* clinfer — helpers shared by the OpenVINO IR op translators (ir-ops.c,
 * ir-ops-<family>.c): building small node chains for one layer. */
#pragma once

#include "frontend/ir/ir-private.h"

G_BEGIN_DECLS

/* One node of @op_type reading the layer's first @n_inputs IR inputs in
 * order and giving its first @n_outputs IR outputs. */
ClinferNode *ir_simple (IrReader *r, IrLayer *l, const char *op_type,
    int opset, guint n_inputs, guint n_outputs);
/* *t = value of IR input @input when it is a Const, else NULL; FALSE only
 * when the Const itself is broken. */
gboolean ir_try_const (IrReader *r, IrLayer *l, guint input, ClinferTensor **t,
    GError **error);
/* Values of a Const integer input (scalar or 1-D); an error naming @what
 * when the input is not a Const. (transfer full) */
gboolean ir_const_ints (IrReader *r, IrLayer *l, guint input, const char *what,
    int64_t **v, gsize *n, GError **error);
/* The one value of a Const input. */
gboolean ir_const_float (IrReader *r, IrLayer *l, guint input, const char *what,
    float *out, GError **error);
/* Scalar float constant of @type (f32 unless f16/bf16/f64). */
ClinferNode *ir_add_scalar (IrReader *r, IrLayer *l, const char *suffix,
    ClinferElementType type, double v);
/* Nodes reading port 0 of @a (and @b); NULL leaves the input to be set. */
ClinferNode *ir_binary (IrReader *r, IrLayer *l, const char *op_type,
    const char *suffix, ClinferNode *a, ClinferNode *b);
ClinferNode *ir_unary (IrReader *r, IrLayer *l, const char *op_type,
    const char *suffix, ClinferNode *a);
/* A Cast node to @to (input unset). */
ClinferNode *ir_cast (IrReader *r, IrLayer *l, const char *suffix,
    ClinferElementType to);
/* Feeds IR input @input to @node's input @index as a 1-D i64 list (a new
 * Const when the input is a Const, else Cast + Reshape [-1]). */
void ir_sink_int_list (IrReader *r, IrLayer *l, guint input, ClinferNode *node,
    guint index, const char *suffix);
/* auto_broadcast must be numpy or none. */
gboolean ir_check_broadcast (IrReader *r, IrLayer *l, GError **error);

G_END_DECLS
