/* clinfer — ONNX frontend: reads .onnx models and serialized TensorProto
 * files into ClinferGraph / ClinferTensor. */
#pragma once

#include "core/graph.h"

G_BEGIN_DECLS

/* Declared, not included, so users of this header do not need the
 * protoc-c generated onnx.pb-c.h on their include path. */
struct Onnx__TensorProto;

/* Oldest and newest ONNX IR versions and default-domain opset accepted.
 * The Debian ONNX backend test data (libonnx-testdata) uses IR 3..8 and
 * opsets 1..17. */
#define CLINFER_ONNX_IR_VERSION_MIN 3
#define CLINFER_ONNX_IR_VERSION_MAX 8
#define CLINFER_ONNX_OPSET_MAX 17

/* (transfer full) Reads the model at @path. External tensor data is
 * resolved relative to the model's directory. Errors: CLINFER_ERROR_IO,
 * CLINFER_ERROR_PARSE, CLINFER_ERROR_UNSUPPORTED_VERSION; messages name
 * @path. */
ClinferGraph *clinfer_onnx_read (const char *path, GError **error);

/* (transfer full) Same from a serialized ModelProto in memory. @origin
 * (may be NULL) names it in messages and becomes graph->origin; @base_dir
 * (may be NULL: external data is then rejected) resolves external data. */
ClinferGraph *clinfer_onnx_read_from_data (const guint8 *data, gsize size,
    const char *origin, const char *base_dir, GError **error);

/* (transfer full) Converts one TensorProto (raw_data, typed fields or
 * external data relative to @base_dir) to a contiguous host tensor.
 * @origin names the file in messages. */
ClinferTensor *clinfer_onnx_tensor_from_proto (
    const struct Onnx__TensorProto *proto, const char *base_dir,
    const char *origin, GError **error);

/* (transfer full) Reads a file holding one serialized TensorProto (the
 * input_N.pb / output_N.pb files of the ONNX backend test data). @name
 * (optional) receives the tensor's name, "" when it has none; free with
 * g_free(). */
ClinferTensor *clinfer_onnx_read_tensor_file (const char *path, char **name,
    GError **error);

G_END_DECLS
