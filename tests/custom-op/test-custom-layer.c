/* Custom OpenCL layers for ops the engine does not know (issue: a custom
 * layer makes an unknown op runnable): tests/custom-op/data/
 * example-layers.onnx uses com.example.ScaleShift and Upsample2x between
 * built-in ops; data/example-layers.xml provides their kernels (the
 * Upsample2x output shape from <OutputShape>). Checked against the numpy
 * reference of make-reference.py on the GPU device with fallback off.
 * Exits 77 (skipped) without an OpenCL device. */
#include <clinfer/clinfer.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

static char *
src_path (const char *rel)
{
  return g_build_filename (g_getenv ("CLINFER_SRCDIR"), rel, NULL);
}

static ClinferCompileConfig *
layers_config (const char *device)
{
  ClinferCompileConfig *cfg = clinfer_compile_config_new ();
  g_autofree char *xml = src_path ("tests/custom-op/data/example-layers.xml");

  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_allow_fallback (cfg, FALSE);
  clinfer_compile_config_set_config_file (cfg, xml);
  return cfg;
}

static void
test_unknown_ops_run (void)
{
  g_autoptr (ClinferCompileConfig) cfg = layers_config ("GPU");
  g_autofree char *path = src_path ("tests/custom-op/data/example-layers.onnx");
  g_autofree char *xp = src_path ("tests/custom-op/data/layers-x.npy");
  g_autofree char *yp = src_path ("tests/custom-op/data/layers-y.npy");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) m = clinfer_model_read_with_config (path, cfg, &err);
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) x = clinfer_npy_read (xp, NULL);
  g_autoptr (ClinferTensor) want = clinfer_npy_read (yp, NULL);
  ClinferTensor *y;
  ClinferPortInfo info;

  g_assert_no_error (err);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  /* The output shape went through Upsample2x's <OutputShape>. */
  g_assert_true (clinfer_compiled_get_output (c, 0, &info));
  g_assert_cmpint (info.shape.dims[2], ==, 8);
  g_assert_cmpint (info.shape.dims[3], ==, 8);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  y = clinfer_request_get_output (r, 0);
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (y),
          clinfer_tensor_get_shape (want)));
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (want); i++) {
    float a = ((float *) clinfer_tensor_get_data (y))[i];
    float b = ((float *) clinfer_tensor_get_data (want))[i];
    if (fabsf (a - b) > 1e-5f)
      g_error ("element %" G_GINT64_FORMAT ": got %g, want %g", i, a, b);
  }
}

/* Without the config file the ops are unknown at read time; with it but
 * on the CPU device, compiling says the layers need OpenCL. */
static void
test_unknown_ops_errors (void)
{
  g_autofree char *path = src_path ("tests/custom-op/data/example-layers.onnx");
  g_autoptr (ClinferCompileConfig) cpu = layers_config ("CPU");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) plain = clinfer_model_read (path, &err);
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;

  g_assert_null (plain);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (err->message, "com.example.ScaleShift"));
  g_clear_error (&err);
  m = clinfer_model_read_with_config (path, cpu, &err);
  g_assert_no_error (err);
  c = clinfer_compile (m, cpu, &err);
  g_assert_null (c);
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "example-layers.xml"));
  g_assert_nonnull (strstr (err->message, "OpenCL"));
}

/* A broken <OutputShape> is an error naming the file and the layer. */
static void
test_output_shape_error (void)
{
  g_autofree char *dir = g_dir_make_tmp ("clinfer-layers-XXXXXX", NULL);
  g_autofree char *xml = g_build_filename (dir, "bad.xml", NULL);
  g_autofree char *cl = g_build_filename (dir, "k.cl", NULL);
  g_autofree char *path = src_path ("tests/custom-op/data/example-layers.onnx");
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;
  ClinferModel *m;

  g_assert_true (g_file_set_contents (cl, "__kernel void k () {}\n", -1, NULL));
  g_assert_true (g_file_set_contents (xml,
          "<CustomLayer name=\"Upsample2x\" type=\"SimpleGPU\" version=\"1\">\n"
          "  <Kernel entry=\"k\"><Source filename=\"k.cl\"/></Kernel>\n"
          "  <Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\"/></Buffers>\n"
          "  <OutputShape port-index=\"0\" dims=\"B,F,Y*-2,X\"/>\n"
          "</CustomLayer>\n", -1, NULL));
  clinfer_compile_config_set_device (cfg, "GPU");
  clinfer_compile_config_set_config_file (cfg, xml);
  m = clinfer_model_read_with_config (path, cfg, &err);
  g_assert_null (m);
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "bad.xml:4"));
  g_assert_nonnull (strstr (err->message, "'Upsample2x'"));
  g_assert_nonnull (strstr (err->message, "OutputShape"));
  g_remove (xml);
  g_remove (cl);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_autofree char *probe = src_path ("tests/custom-op/data/relu.onnx");
  g_autoptr (ClinferModel) m = clinfer_model_read (probe, NULL);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) c = NULL;

  g_test_init (&argc, &argv, NULL);
  clinfer_compile_config_set_device (cfg, "GPU");
  c = m ? clinfer_compile (m, cfg, NULL) : NULL;
  if (c == NULL) {
    g_printerr ("no OpenCL device: skipped\n");
    return 77;
  }
  g_test_add_func ("/custom-layer/unknown-ops-run", test_unknown_ops_run);
  g_test_add_func ("/custom-layer/unknown-ops-errors", test_unknown_ops_errors);
  g_test_add_func ("/custom-layer/output-shape-error", test_output_shape_error);
  return g_test_run ();
}
