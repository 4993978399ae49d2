/* clinfer — OpenVINO IR frontend: reads .xml + .bin models (IR v10/v11)
 * into a ClinferGraph of the engine's ONNX-semantics ops, and writes a
 * ClinferGraph back as IR v11. */
#pragma once

#include "core/graph.h"

G_BEGIN_DECLS

/* IR versions read; the writer emits the newest. */
#define CLINFER_IR_VERSION_MIN 10
#define CLINFER_IR_VERSION_MAX 11
/* Newest OpenVINO opset ("opsetN") whose ops are read. */
#define CLINFER_IR_OPSET_MAX 17
/* Version string of layers written in clinfer's own extension opset (ops
 * with no OpenVINO equivalent). Only clinfer reads those. */
#define CLINFER_IR_EXTENSION_OPSET "clinfer"

/* (transfer full) Reads the IR at @xml_path; @bin_path NULL means the
 * file beside it with the extension .bin (no .bin is needed when the
 * model has no constants). Constants reference the read-only mapped .bin
 * where their alignment allows, else are copied. Errors:
 * CLINFER_ERROR_IO, CLINFER_ERROR_PARSE (with line and column for
 * malformed XML), CLINFER_ERROR_UNSUPPORTED_OP (naming the layer, its type
 * and opset), CLINFER_ERROR_UNSUPPORTED_VERSION. */
ClinferGraph *clinfer_ir_read (const char *xml_path, const char *bin_path,
    GError **error);

/* (transfer full) Same from memory: @weights (may be NULL when the model
 * has no constants) is referenced, not copied. @origin (may be NULL) names
 * the model in messages. */
ClinferGraph *clinfer_ir_read_from_data (const char *xml, gsize xml_size,
    GBytes *weights, const char *origin, GError **error);

/* Reads a shape as IR files write it: "1,3,224,224" or "1, 3, 224, 224"
 * (optionally in brackets), "?" or "-1" for a dynamic dim, "a..b"
 * intervals (dynamic unless a == b), "..." for a dynamic rank, "" for a
 * scalar. FALSE when malformed. */
gboolean clinfer_ir_parse_shape (const char *text, ClinferShape *shape);

/**
 * ClinferIrWriteOptions:
 * @compress_to_fp16: store f32 constants as f16 followed by a Convert
 *   (OpenVINO's compress_to_fp16), when every value fits f16
 * @n_extension_layers: (out) layers written in the clinfer extension opset
 *   (OpenVINO cannot load a file with any)
 * @extension_ops: (out) (transfer full) comma-separated op types written in
 *   the extension opset, or NULL when none; free with g_free()
 */
typedef struct {
  gboolean compress_to_fp16;
  guint n_extension_layers;
  char *extension_ops;
} ClinferIrWriteOptions;

/* Writes @graph (types and shapes of every port inferred) to @xml_path and
 * the .bin beside it as IR v11: layer ids renumbered in topological order,
 * each distinct constant stored once, tensor names kept on Parameter and
 * Result ports. @options may be NULL. */
gboolean clinfer_ir_write (const ClinferGraph *graph, const char *xml_path,
    ClinferIrWriteOptions *options, GError **error);

G_END_DECLS
