/* clinfer — fuzz target: an OpenVINO IR model read from memory and
 * compiled for the CPU device (op resolution, every compile pass, memory
 * planning, kernel selection). The input is the .xml text, optionally
 * followed by a line "--clinfer-bin--" and the .bin bytes; without one, a
 * fixed 4 KiB weights blob is used so that Const offsets hit real data. */
#include "fuzz-common.h"
#include <string.h>

#define SEPARATOR "\n--clinfer-bin--\n"

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  static guint8 pattern[4096];
  const guint8 *sep = size >= strlen (SEPARATOR)
      ? memmem (data, size, SEPARATOR, strlen (SEPARATOR)) : NULL;
  gsize xml_size = sep ? (gsize) (sep - data) : size;
  const guint8 *weights = pattern;
  gsize weights_size = sizeof (pattern);
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;

  if (pattern[1] == 0)
    for (gsize i = 0; i < sizeof (pattern); i++)
      pattern[i] = (guint8) (i * 131 + 7);
  if (sep) {
    weights = sep + strlen (SEPARATOR);
    weights_size = size - xml_size - strlen (SEPARATOR);
  }
  /* Text without a leading '<' would be read as ONNX: not this target's. */
  if (xml_size == 0 || data[0] != '<')
    return TRUE;
  model = clinfer_model_read_from_data (data, xml_size, weights, weights_size,
      "fuzz.xml", NULL, error);
  if (model)
    compiled = fuzz_compile (model, NULL, error);
  return compiled != NULL;
}
