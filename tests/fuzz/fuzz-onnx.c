/* clinfer — fuzz target: an ONNX model (a serialized ModelProto) read from
 * memory and compiled for the CPU device: the protobuf reader, op
 * resolution (attribute checks), every compile pass (shape inference,
 * constant folding, the fusions), memory planning and kernel selection.
 * Dynamic input dims are set to 2 first, so the plan is built. A second
 * copy of the model is given a batch of 3 (clinfer_model_set_batch ():
 * the walk, the constant rewrites, the shapes at 3), its outcome not
 * reported: most models cannot take one. */
#include "fuzz-common.h"

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;

  /* A leading '<' would make it IR: that is fuzz-ir's. */
  if (size > 0 && data[0] == '<')
    return TRUE;
  model = clinfer_model_read_from_data (data, size, NULL, 0, "fuzz.onnx",
      NULL, error);
  if (model) {
    g_autoptr (ClinferModel) batched = clinfer_model_read_from_data (data,
        size, NULL, 0, "fuzz.onnx", NULL, NULL);
    if (batched)
      (void) clinfer_model_set_batch (batched, 3, NULL);
    compiled = fuzz_compile (model, NULL, error);
  }
  return compiled != NULL;
}
