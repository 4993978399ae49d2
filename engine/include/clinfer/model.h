/* clinfer — a model read from a file: the graph plus its inputs and outputs. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/tensor.h>

G_BEGIN_DECLS

/**
 * ClinferPortInfo:
 * @name: tensor name as in the model file (owned by the model/compiled model)
 * @type: element type
 * @shape: shape; dynamic dims are CLINFER_DIM_DYNAMIC
 */
typedef struct {
  const char *name;
  ClinferElementType type;
  ClinferShape shape;
} ClinferPortInfo;

/**
 * ClinferModel:
 *
 * A model as read from disk (ONNX today, OpenVINO IR later): a graph of
 * nodes, its named inputs and outputs and metadata. Reading never executes
 * anything; unknown ops are reported here, naming the node. Refcounted.
 */
typedef struct _ClinferModel ClinferModel;

/* (transfer full) Reads a model; the format is chosen by the file's
 * extension and magic. NULL with a CLINFER_ERROR naming @path on failure. */
CLINFER_API ClinferModel *clinfer_model_read (const char *path, GError **error);

typedef struct _ClinferCompileConfig ClinferCompileConfig;

/* Like clinfer_model_read(), with the extensions of @config: nodes whose
 * op is a custom CPU op of the config (clinfer_compile_config_add_custom_lib())
 * or a custom OpenCL layer of its config file resolve to it instead of
 * being reported as unknown. Compile the model with the same config (or
 * one holding the same extensions). @config may be NULL. */
CLINFER_API ClinferModel *clinfer_model_read_with_config (const char *path,
    const ClinferCompileConfig *config, GError **error);
/* (transfer full) Reads a model held in memory: an ONNX ModelProto, or
 * OpenVINO IR XML text (recognised by its leading '<') whose weights are
 * @weights (the .bin's bytes; NULL when it has no Const data). @name
 * (may be NULL: "model") stands for the file in messages. ONNX external
 * data is refused (there is no folder to resolve it in). @config as in
 * clinfer_model_read_with_config(). */
CLINFER_API ClinferModel *clinfer_model_read_from_data (const guint8 *data, gsize size,
    const guint8 *weights, gsize weights_size, const char *name,
    const ClinferCompileConfig *config, GError **error);
CLINFER_API ClinferModel *clinfer_model_ref (ClinferModel *model);
CLINFER_API void clinfer_model_unref (ClinferModel *model);

CLINFER_API const char *clinfer_model_get_path (const ClinferModel *model);
CLINFER_API guint clinfer_model_get_n_inputs (const ClinferModel *model);
CLINFER_API guint clinfer_model_get_n_outputs (const ClinferModel *model);
/* FALSE when @index is out of range. */
CLINFER_API gboolean clinfer_model_get_input (const ClinferModel *model, guint index,
    ClinferPortInfo *info);
CLINFER_API gboolean clinfer_model_get_output (const ClinferModel *model, guint index,
    ClinferPortInfo *info);
/* Index of the input called @name, or -1. */
CLINFER_API int clinfer_model_find_input (const ClinferModel *model, const char *name);
/* Metadata value (ONNX metadata_props), or NULL. */
CLINFER_API const char *clinfer_model_get_metadata (const ClinferModel *model,
    const char *key);

/* Fixes the dynamic dims of input @name. The new shape must have the
 * input's rank and agree with its static dims. */
CLINFER_API gboolean clinfer_model_reshape (ClinferModel *model, const char *name,
    const ClinferShape *shape, GError **error);

/* The most items clinfer_model_set_batch() takes. */
#define CLINFER_MAX_BATCH 4096

/* Makes the model run @batch items per request: every input whose first
 * (batch) dimension is 1 or dynamic gets @batch, and constants that hold
 * the batch of 1 (a Reshape's target shape, a Resize's sizes, a constant
 * concatenated to the batch) are rewritten so that the batch reaches
 * every output first. The other dynamic dims of those inputs must be
 * fixed first (clinfer_model_reshape()). FALSE, naming the node and the
 * model unchanged, where the batch cannot be followed (a node that works
 * along the first dimension, a reshape that moves it, an output without
 * it first). Like clinfer_model_reshape(), call it before compiling the
 * model: a compiled model reads its graph when it builds a plan. */
CLINFER_API gboolean clinfer_model_set_batch (ClinferModel *model, guint batch,
    GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferModel, clinfer_model_unref)

G_END_DECLS
