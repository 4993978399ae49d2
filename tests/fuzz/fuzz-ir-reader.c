/* clinfer — libFuzzer target for the OpenVINO IR reader. The input is the
 * .xml text, optionally followed by a line "--clinfer-bin--" and the .bin
 * bytes; without one, a fixed 4 KiB weights blob is used so that Const
 * offsets hit real data. Every graph that reads also has its ops resolved
 * (attribute checks). Build with meson -Dfuzzing=true and clang. */
#include "frontend/ir/ir-reader.h"
#include "ops/op.h"
#include <string.h>

#define SEPARATOR "\n--clinfer-bin--\n"

static void
quiet_log (const gchar *domain, GLogLevelFlags level, const gchar *message,
    gpointer data)
{
}

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data, size_t size)
{
  static guint8 pattern[4096];
  const guint8 *sep = size >= strlen (SEPARATOR)
      ? memmem (data, size, SEPARATOR, strlen (SEPARATOR)) : NULL;
  gsize xml_size = sep ? (gsize) (sep - data) : size;
  g_autoptr (GBytes) weights = NULL;
  g_autoptr (GError) err = NULL;
  ClinferGraph *g;

  if (pattern[1] == 0) {
    for (gsize i = 0; i < sizeof (pattern); i++)
      pattern[i] = (guint8) (i * 131 + 7);
    g_log_set_default_handler (quiet_log, NULL);
  }
  if (sep)
    weights = g_bytes_new (sep + strlen (SEPARATOR),
        size - xml_size - strlen (SEPARATOR));
  else
    weights = g_bytes_new_static (pattern, sizeof (pattern));
  g = clinfer_ir_read_from_data ((const char *) data, xml_size, weights,
      "fuzz.xml", &err);
  if (g) {
    g_clear_error (&err);
    clinfer_graph_resolve_ops (g, &err);
    clinfer_graph_free (g);
  }
  return 0;
}
