/* clinfer — OpenVINO IR writer internals: the layer builder that the op
 * exporters (ir-export-ops*.c) use to turn engine nodes into IR layers,
 * and the serialisation of layers, edges and the .bin (ir-writer.c). */
#pragma once

#include "frontend/ir/ir-private.h"

G_BEGIN_DECLS

typedef struct _IrWriter IrWriter;

/* An IR output port: layer index (emission order = final layer id) and
 * output position; layer -1 = absent. */
typedef struct {
  int layer;
  guint out;
} IrVal;

#define IR_VAL_NONE ((IrVal) { -1, 0 })

/* Writes node @n as IR layers, calling irw_set() for each of its outputs.
 * FALSE with an error, or FALSE without one to fall back to the clinfer
 * extension opset. */
typedef gboolean (*IrExportFunc) (IrWriter *w, const ClinferNode *n,
    GError **error);

/* The exporter of (domain "", @op_type), or NULL (ir-export-ops.c). */
IrExportFunc clinfer_ir_exporter_lookup (const char *op_type);

/* ---- building layers ---- */

/* Starts a layer of OpenVINO @type from opset @opset (0: the clinfer
 * extension opset) named @name (+ "/@suffix"). Returns its index. */
int irw_layer (IrWriter *w, const char *type, int opset, const char *name,
    const char *suffix);
/* Adds data attribute @key; values are printf-formatted. */
void irw_attr (IrWriter *w, int layer, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF (4, 5);
void irw_attr_ints (IrWriter *w, int layer, const char *key,
    const int64_t *v, gsize n);
void irw_input (IrWriter *w, int layer, IrVal v);
/* Adds an output port; @shape NULL or rank -1 when unknown. */
IrVal irw_output (IrWriter *w, int layer, ClinferElementType type,
    const ClinferShape *shape);
/* Marks @layer's data as decompression (an f16 weight Convert). */
void irw_mark_decompression (IrWriter *w, int layer);

/* Element type and shape of a value. */
ClinferElementType irw_type (IrWriter *w, IrVal v);
const ClinferShape *irw_shape (IrWriter *w, IrVal v);

/* ---- values of the graph being written ---- */

/* Value of input @i of @n (constants are written on first use); NONE for
 * an absent input. */
IrVal irw_in (IrWriter *w, const ClinferNode *n, guint i);
/* Constant value of input @i of @n, or NULL. */
const ClinferTensor *irw_in_value (const ClinferNode *n, guint i);
/* Output @port of @n is @v. */
void irw_set (IrWriter *w, const ClinferNode *n, guint port, IrVal v);

/* Const layers. @compressible: may be stored as f16 with
 * compress_to_fp16. */
IrVal irw_const (IrWriter *w, const ClinferTensor *t, const char *name,
    gboolean compressible);
IrVal irw_const_i64 (IrWriter *w, const char *name, const int64_t *v, gsize n,
    gboolean scalar);
/* Scalar (or [1] when @one_d) constant of float type @type. */
IrVal irw_const_float (IrWriter *w, const char *name, ClinferElementType type,
    double v, gboolean one_d);

/* One-output layer of @type reading @ins, its output typed like output
 * @port of @n; named after @n (+ @suffix). */
IrVal irw_op (IrWriter *w, const ClinferNode *n, const char *type, int opset,
    const char *suffix, const IrVal *ins, guint n_ins, guint port);

G_END_DECLS
