/* The request's ordinary set_input / set_output calls take host tensors
 * and tensors standing for remote tensors alike
 * (clinfer_remote_tensor_to_tensor()): a remote input and a remote output
 * bound that way run without copies, a host output tensor receives its
 * output in place of the engine's. On the CPU device (HOST_BUFFER remote
 * tensors) always, and with --device GPU on an OpenCL device (exit 77
 * without one). Model: tests/custom-op/data/relu.onnx (x [2,3] -> Relu). */
#include <clinfer/clinfer.h>
#include <string.h>

static const char *device = "CPU";

static ClinferCompiled *
compile_relu (ClinferRemoteContext *ctx, GError **error)
{
  g_autofree char *path = g_build_filename (g_getenv ("CLINFER_SOURCE_ROOT"),
      "tests", "custom-op", "data", "relu.onnx", NULL);
  g_autoptr (ClinferModel) m = clinfer_model_read (path, error);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();

  if (m == NULL)
    return NULL;
  clinfer_compile_config_set_device (cfg, device);
  if (ctx)
    clinfer_compile_config_set_remote_context (cfg, ctx);
  return clinfer_compile (m, cfg, error);
}

static ClinferTensor *
input_tensor (void)
{
  static const int64_t dims[] = { 2, 3 };
  ClinferShape s = clinfer_shape_make (2, dims);
  ClinferTensor *x = clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL);
  float *p = clinfer_tensor_get_data (x);

  for (int i = 0; i < 6; i++)
    p[i] = (float) i - 2.5f;
  return x;
}

static void
assert_relu (const ClinferTensor *x, const ClinferTensor *y)
{
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (((const float *) clinfer_tensor_get_const_data (y))[i], ==,
        MAX (((const float *) clinfer_tensor_get_const_data (x))[i], 0.0f));
}

/* A host output tensor bound with set_output gets the output; the
 * request hands back that very tensor. On the CPU device the Relu's C
 * kernel writes it in place: 0 bytes copied; elsewhere the request copies
 * the output (its byte size). Unbound again, the engine's own memory is
 * written, the caller's tensor is left alone. Wrong type or shape:
 * errors. */
static void
test_host_output (void)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) c = compile_relu (NULL, &err);
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) x = input_tensor ();
  g_autoptr (ClinferTensor) y = input_tensor ();   /* overwritten */
  static const int64_t bad_dims[] = { 3, 2 };
  ClinferShape bad = clinfer_shape_make (2, bad_dims);
  g_autoptr (ClinferTensor) wrong_shape = clinfer_tensor_new (CLINFER_TYPE_F32, &bad, NULL);
  g_autoptr (ClinferTensor) wrong_type = NULL;
  static const int64_t dims[] = { 2, 3 };
  ClinferShape s = clinfer_shape_make (2, dims);

  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_false (clinfer_request_set_output (r, 0, wrong_shape, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_clear_error (&err);
  wrong_type = clinfer_tensor_new (CLINFER_TYPE_I32, &s, NULL);
  g_assert_false (clinfer_request_set_output_by_name (r, "y", wrong_type, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_output_by_name (r, "nope", y, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_true (clinfer_request_set_output_by_name (r, "y", y, &err));
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  g_assert_true (clinfer_request_get_output (r, 0) == y);
  assert_relu (x, y);
  g_assert_cmpuint (clinfer_request_get_bound_output_copy_bytes (r), ==,
      strcmp (device, "CPU") == 0 ? 0 : 6 * sizeof (float));
  /* A second inference on new input values, into the same tensor. */
  ((float *) clinfer_tensor_get_data (x))[5] = 7.0f;
  ((float *) clinfer_tensor_get_data (y))[5] = -1.0f;
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  assert_relu (x, y);
  /* Unbound again: the engine's own output tensor. */
  g_assert_true (clinfer_request_set_output (r, 0, NULL, &err));
  ((float *) clinfer_tensor_get_data (y))[0] = 42.0f;
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_true (clinfer_request_get_output (r, 0) != y);
  assert_relu (x, clinfer_request_get_output (r, 0));
  g_assert_cmpuint (clinfer_request_get_bound_output_copy_bytes (r), ==, 0);
  g_assert_cmpfloat (((float *) clinfer_tensor_get_data (y))[0], ==, 42.0f);
}

/* The input tensor bound as the output too: never written in place (a
 * kernel would read what it writes), copied at the end instead, so it
 * ends up holding the output. */
static void
test_host_output_is_input (void)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) c = compile_relu (NULL, &err);
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) x = input_tensor ();
  g_autoptr (ClinferTensor) want = input_tensor ();

  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_set_output (r, 0, x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  g_assert_true (clinfer_request_get_output (r, 0) == x);
  assert_relu (want, x);
  g_assert_cmpuint (clinfer_request_get_bound_output_copy_bytes (r), ==,
      6 * sizeof (float));
}

/* Remote tensors through the same calls: bound in place, 0 bytes copied,
 * the output read back from the remote tensor. */
static void
test_remote_through_set_input (void)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new (device, &err);
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) x = input_tensor ();
  g_autoptr (ClinferTensor) y = input_tensor ();
  g_autoptr (ClinferRemoteTensor) rx = NULL, ry = NULL;
  g_autoptr (ClinferTensor) vx = NULL, vy = NULL;
  guint64 to_dev = 1, to_host = 1;

  g_assert_no_error (err);
  c = compile_relu (ctx, &err);
  g_assert_no_error (err);
  rx = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (x), &err);
  ry = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (x), &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_remote_tensor_write (rx, x, &err));
  vx = clinfer_remote_tensor_to_tensor (rx);
  vy = clinfer_remote_tensor_to_tensor (ry);
  g_assert_true (clinfer_tensor_get_remote (vx) == rx);
  g_assert_null (clinfer_tensor_get_remote (x));
  g_assert_null (clinfer_tensor_get_data (vx));
  g_assert_null (clinfer_tensor_copy (vx, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", vx, &err));
  g_assert_true (clinfer_request_set_output (r, 0, vy, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  clinfer_request_get_copy_stats (r, &to_dev, &to_host);
  g_assert_cmpuint (to_dev, ==, 0);
  g_assert_cmpuint (to_host, ==, 0);
  g_assert_null (clinfer_request_get_output (r, 0));
  g_assert_true (clinfer_remote_tensor_read (ry, y, &err));
  assert_relu (x, y);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
  if (strcmp (device, "CPU") != 0) {
    g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new (device, NULL);
    if (ctx == NULL) {
      g_printerr ("no %s device: skipped\n", device);
      return 77;
    }
  }
  g_test_add_func ("/bind/host-output", test_host_output);
  g_test_add_func ("/bind/host-output-is-input", test_host_output_is_input);
  g_test_add_func ("/bind/remote-through-set-input", test_remote_through_set_input);
  return g_test_run ();
}
