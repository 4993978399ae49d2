/* clinfer — fuzz target: the .npy reader (clinfer_npy_parse(): header
 * dictionary, dtype, shape, data size), and writing back what it read. */
#include "fuzz-common.h"
#include <clinfer/npy.h>

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  g_autoptr (ClinferTensor) t = NULL;

  t = clinfer_npy_parse (data, size, "fuzz.npy", error);
  if (t) {
    /* Every element is readable: sum the bytes. */
    const guint8 *p = clinfer_tensor_get_const_data (t);
    gsize n = clinfer_tensor_get_byte_size (t);
        if (clinfer_tensor_get_element_type (t) != CLINFER_TYPE_STRING)
      for (gsize i = 0; i < n; i++)
        fuzz_sink += p[i];
  }
  return t != NULL;
}
