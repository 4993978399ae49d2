/* clinfer OpenCL tests — shared helpers (see opencl-test-util.h). */
#include "opencl-test-util.h"
#include "runtime/runtime.h"
#include <math.h>

gboolean
test_have_opencl (void)
{
  g_autoptr (GPtrArray) devices = clinfer_device_list ();

  for (guint i = 0; i < devices->len; i++)
    if (((ClinferDeviceInfo *) g_ptr_array_index (devices, i))->index >= 0)
      return TRUE;
  return FALSE;
}

char *
test_source_path (const char *relative)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");

  return g_build_filename (root ? root : CLINFER_TEST_SOURCE_ROOT, relative,
      NULL);
}

char *
test_blazeface_path (void)
{
  return test_source_path ("models/blazeface/"
      "face_detection_front_128x128_barracuda.onnx");
}

ClinferTensor *
test_blazeface_input (void)
{
  g_autofree char *path = test_source_path ("tests/data/astronaut-128.npy");
  g_autoptr (GError) err = NULL;
  ClinferTensor *t = clinfer_npy_read (path, &err);

  g_assert_no_error (err);
  return t;
}

ClinferCompiled *
test_compile (const char *path, const char *device, gboolean allow_fallback)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = clinfer_model_read (path, &err);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  ClinferCompiled *c;

  g_assert_no_error (err);
  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_allow_fallback (cfg, allow_fallback);
  c = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  return c;
}

GPtrArray *
test_run_host (ClinferCompiled *compiled, ClinferTensor *input)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (compiled, &err);
  GPtrArray *out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, input, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  for (guint i = 0; i < clinfer_compiled_get_n_outputs (compiled); i++) {
    ClinferTensor *t = clinfer_tensor_copy (clinfer_request_get_output (r, i),
        &err);
    g_assert_no_error (err);
    g_ptr_array_add (out, t);
  }
  return out;
}

void
test_assert_close (const ClinferTensor *a, const ClinferTensor *b, double tol)
{
  int64_t n = clinfer_tensor_get_n_elements (b);
  double ref_max = 1.0, worst = 0.0;

  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (a),
          clinfer_tensor_get_shape (b)));
  g_assert_cmpint (clinfer_tensor_get_element_type (a), ==,
      clinfer_tensor_get_element_type (b));
  for (int64_t i = 0; i < n; i++)
    ref_max = MAX (ref_max, fabs (clinfer_tensor_get_as_double (b, i)));
  for (int64_t i = 0; i < n; i++)
    worst = MAX (worst, fabs (clinfer_tensor_get_as_double (a, i)
            - clinfer_tensor_get_as_double (b, i)));
  g_assert_cmpfloat (worst, <=, tol * ref_max);
}

char *
test_onnx_node_model (const char *test_name)
{
  const char *data = g_getenv ("CLINFER_CONFORMANCE_DATA");
  char *path;

  path = g_build_filename (data ? data : CLINFER_TEST_CONFORMANCE_DATA, "node",
      test_name, "model.onnx", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    g_clear_pointer (&path, g_free);
  return path;
}

ClinferCompiled *
test_compile_graph (ClinferGraph *graph, const char *label,
    const char *device, gboolean allow_fallback, GError **error)
{
  g_autoptr (ClinferModel) m = g_new0 (ClinferModel, 1);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();

  m->ref_count = 1;
  m->path = g_strdup (label);
  m->graph = clinfer_graph_copy (graph);
  if (!clinfer_graph_resolve_ops (m->graph, error))
    return NULL;
  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_allow_fallback (cfg, allow_fallback);
  return clinfer_compile (m, cfg, error);
}
