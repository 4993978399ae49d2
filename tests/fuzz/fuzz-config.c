/* clinfer — fuzz target: the custom-layer config file (OpenVINO's GPU
 * custom-layer XML with clinfer's <OutputShape> extension), read with the
 * model it applies to (tests/custom-op/data/example-layers.onnx: a
 * ScaleShift and an Upsample2x node) and compiled: layer parsing, the
 * WorkSizes and OutputShape expressions, op resolution and shape
 * inference through the layers. The input is the XML text; it is written
 * beside copies of the example's kernel sources, so <Source> references
 * resolve. Compiles for the CPU device (which refuses the GPU layers after
 * shape inference), or for CLINFER_FUZZ_DEVICE (e.g. GPU: then the JIT
 * defines and the OpenCL build run too; much slower). */
#include "fuzz-common.h"
#include <glib/gstdio.h>
#include <stdlib.h>

static char *dir, *xml_path, *model_path;

static void
copy_file (const char *name)
{
  g_autofree char *src = g_build_filename (FUZZ_CUSTOM_OP_DATA, name, NULL);
  g_autofree char *dst = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;
  gsize len;

  if (!g_file_get_contents (src, &text, &len, NULL)
      || !g_file_set_contents (dst, text, (gssize) len, NULL)) {
    g_printerr ("fuzz-config: cannot copy %s to %s\n", src, dir);
    exit (1);
  }
}

static void
remove_dir (void)
{
  const char *names[] = { "layers.xml", "scale-shift.cl", "upsample2x.cl" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    g_autofree char *p = g_build_filename (dir, names[i], NULL);
    g_unlink (p);
  }
  g_rmdir (dir);
}

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  g_autoptr (ClinferCompileConfig) config = NULL;
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;

  if (dir == NULL) {
    dir = g_dir_make_tmp ("clinfer-fuzz-config-XXXXXX", NULL);
    if (dir == NULL)
      exit (1);
    copy_file ("scale-shift.cl");
    copy_file ("upsample2x.cl");
    xml_path = g_build_filename (dir, "layers.xml", NULL);
    model_path = g_build_filename (FUZZ_CUSTOM_OP_DATA, "example-layers.onnx",
        NULL);
    atexit (remove_dir);
  }
  if (!g_file_set_contents (xml_path, (const char *) data, (gssize) size,
          error))
    return FALSE;
  config = clinfer_compile_config_new ();
  clinfer_compile_config_set_config_file (config, xml_path);
  model = clinfer_model_read_with_config (model_path, config, error);
  if (model)
    compiled = fuzz_compile (model, g_getenv ("CLINFER_FUZZ_DEVICE"), error);
  return compiled != NULL;
}
