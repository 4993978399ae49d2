/* clinfer OpenCL tests — remote tensors: property map and type_check,
 * wrapping an application's cl_mem (size checked), host memory and
 * engine-allocated buffers, contexts shared with the application, and
 * zero-copy inference proved by the copy counters. */
#include "opencl-test-util.h"
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

static const int64_t dims_2x3[] = { 2, 3 };

static cl_context
context_of (ClinferRemoteContext *ctx)
{
  GVariant *v = clinfer_remote_context_get_property (ctx,
      CLINFER_REMOTE_PROP_OCL_CONTEXT);

  g_assert_nonnull (v);
  return (cl_context) (guintptr) g_variant_get_uint64 (v);
}

static void
assert_error_mentions (GError *err, const char *text)
{
  g_assert_nonnull (err);
  if (strstr (err->message, text) == NULL)
    g_error ("'%s' does not mention '%s'", err->message, text);
}

static void
test_type_check (void)
{
  static const char *const ocl[] = { CLINFER_REMOTE_MEM_OCL_BUFFER, NULL };
  static const char *const host[] = { CLINFER_REMOTE_MEM_HOST_BUFFER, NULL };
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new ("GPU", &err);
  ClinferShape shape = clinfer_shape_make (2, dims_2x3);
  g_autoptr (ClinferRemoteTensor) t = NULL;
  g_auto (GStrv) keys = NULL;
  g_autofree char *ctx_text = NULL;
  const char *ctx_values[2] = { NULL, NULL };
  ClinferRemotePropertyRule ok_rules[] = {
    { CLINFER_REMOTE_PROP_SHARED_MEM_TYPE, ocl },
    { CLINFER_REMOTE_PROP_MEM_HANDLE, NULL },
    { CLINFER_REMOTE_PROP_OCL_CONTEXT, (const char *const *) ctx_values },
  };
  ClinferRemotePropertyRule host_rule = { CLINFER_REMOTE_PROP_SHARED_MEM_TYPE, host };
  ClinferRemotePropertyRule missing = { CLINFER_REMOTE_PROP_HOST_PTR, NULL };

  g_assert_no_error (err);
  t = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_F32, &shape, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (clinfer_remote_tensor_get_device_name (t), ==,
      clinfer_remote_context_get_device_name (ctx));
  keys = clinfer_remote_tensor_list_properties (t);
  g_assert_cmpuint (g_strv_length (keys), ==, 3);
  g_assert_cmpstr (keys[0], ==, CLINFER_REMOTE_PROP_MEM_HANDLE);
  g_assert_cmpstr (keys[1], ==, CLINFER_REMOTE_PROP_OCL_CONTEXT);
  g_assert_cmpstr (keys[2], ==, CLINFER_REMOTE_PROP_SHARED_MEM_TYPE);
  ctx_text = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x",
      (guint64) (guintptr) context_of (ctx));
  ctx_values[0] = ctx_text;
  g_assert_true (clinfer_remote_tensor_type_check (t, ok_rules,
          G_N_ELEMENTS (ok_rules), &err));
  g_assert_no_error (err);
  g_assert_nonnull (clinfer_remote_tensor_get_cl_mem (t, &err));
  g_assert_false (clinfer_remote_tensor_type_check (t, &host_rule, 1, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  assert_error_mentions (err, "'OCL_BUFFER', expected one of 'HOST_BUFFER'");
  g_clear_error (&err);
  g_assert_false (clinfer_remote_tensor_type_check (t, &missing, 1, &err));
  assert_error_mentions (err, "no property HOST_PTR");
  g_clear_error (&err);
  g_assert_false (clinfer_remote_tensor_type_check (NULL, &missing, 1, &err));
  assert_error_mentions (err, "not a remote tensor");
}

static void
test_cl_mem (void)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new ("GPU", &err);
  g_autoptr (ClinferRemoteContext) other = clinfer_remote_context_new ("GPU", &err);
  ClinferShape s23 = clinfer_shape_make (2, dims_2x3);
  const int64_t d24[] = { 2, 4 }, padded[] = { 32, 4 };
  ClinferShape s24 = clinfer_shape_make (2, d24);
  cl_int cerr = CL_SUCCESS;
  cl_mem mem = clCreateBuffer (context_of (ctx), CL_MEM_READ_WRITE, 24, NULL,
      &cerr);
  cl_mem foreign = clCreateBuffer (context_of (other), CL_MEM_READ_WRITE, 24,
      NULL, &cerr);
  ClinferRemoteTensor *t;

  g_assert_cmpint (cerr, ==, CL_SUCCESS);
  t = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32, &s23, NULL,
      mem, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_remote_tensor_get_cl_mem (t, NULL) == mem);
  clinfer_remote_tensor_unref (t);
  t = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32, &s24, NULL,
      mem, &err);
  g_assert_null (t);
  assert_error_mentions (err, "CL_MEM_SIZE");
  g_clear_error (&err);
  t = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32, &s23,
      padded, mem, &err);
  g_assert_null (t);
  assert_error_mentions (err, "need 44");
  g_clear_error (&err);
  t = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32, &s23, NULL,
      foreign, &err);
  g_assert_null (t);
  assert_error_mentions (err, "another cl_context");
  g_clear_error (&err);
  t = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32, &s23, NULL,
      NULL, &err);
  g_assert_null (t);
  g_clear_error (&err);
  clReleaseMemObject (mem);
  clReleaseMemObject (foreign);
}

/* write/read round trip, and host memory with padded rows read back. */
static void
test_read_write (void)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new ("GPU", &err);
  ClinferShape shape = clinfer_shape_make (2, dims_2x3);
  g_autoptr (ClinferTensor) src = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, &err);
  g_autoptr (ClinferTensor) dst = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, &err);
  g_autoptr (ClinferRemoteTensor) t = NULL, wrapped = NULL;
  float rows[2][8] = { { 1, 2, 3, -1, -1, -1, -1, -1 },
    { 4, 5, 6, -1, -1, -1, -1, -1 } };
  const int64_t strides[] = { 32, 4 };
  float *p = clinfer_tensor_get_data (src);

  for (int i = 0; i < 6; i++)
    p[i] = (float) i * 1.5f;
  t = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_F32, &shape, &err);
  g_assert_true (clinfer_remote_tensor_write (t, src, &err));
  g_assert_true (clinfer_remote_tensor_read (t, dst, &err));
  g_assert_no_error (err);
  g_assert_cmpmem (clinfer_tensor_get_data (dst), 24, p, 24);
  wrapped = clinfer_remote_tensor_new_from_host (ctx, CLINFER_TYPE_F32, &shape,
      strides, rows, NULL, NULL, &err);
  g_assert_no_error (err);
  g_assert_false (clinfer_remote_tensor_is_contiguous (wrapped));
  g_assert_nonnull (clinfer_remote_tensor_get_property (wrapped,
          CLINFER_REMOTE_PROP_HOST_PTR));
  g_assert_true (clinfer_remote_tensor_read (wrapped, dst, &err));
  p = clinfer_tensor_get_data (dst);
  g_assert_cmpfloat (p[2], ==, 3.f);
  g_assert_cmpfloat (p[3], ==, 4.f);
  g_assert_cmpfloat (p[5], ==, 6.f);
}

/* Remote input + remote outputs: the inference copies nothing; a host
 * input is wrapped, not copied, on unified memory. */
/* CL_DEVICE_HOST_UNIFIED_MEMORY of @ctx's device. */
static gboolean
context_unified (ClinferRemoteContext *ctx)
{
  GVariant *v = clinfer_remote_context_get_property (ctx,
      CLINFER_REMOTE_PROP_OCL_CONTEXT);
  cl_context cl = (cl_context) (guintptr) g_variant_get_uint64 (v);
  cl_device_id dev = NULL;
  cl_bool unified = CL_FALSE;

  g_assert_cmpint (clGetContextInfo (cl, CL_CONTEXT_DEVICES, sizeof (dev),
          &dev, NULL), ==, CL_SUCCESS);
  g_assert_cmpint (clGetDeviceInfo (dev, CL_DEVICE_HOST_UNIFIED_MEMORY,
          sizeof (unified), &unified, NULL), ==, CL_SUCCESS);
  return unified;
}

static void
test_zero_copy (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) cpu = test_compile (path, "CPU", TRUE);
  g_autoptr (ClinferCompiled) gpu = test_compile (path, "GPU", FALSE);
  g_autoptr (GPtrArray) want = test_run_host (cpu, input);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (gpu);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (gpu, &err);
  g_autoptr (ClinferRemoteTensor) rin = clinfer_remote_context_create_tensor (ctx,
      CLINFER_TYPE_F32, clinfer_tensor_get_shape (input), &err);
  ClinferRemoteTensor *routs[4];
  guint64 h2d = 1, d2h = 1, out_bytes = 0;

  g_assert_true (clinfer_remote_tensor_write (rin, input, &err));
  g_assert_true (clinfer_request_set_remote_input_by_index (r, 0, rin, &err));
  for (guint i = 0; i < 4; i++) {
    ClinferPortInfo info;
    clinfer_compiled_get_output (gpu, i, &info);
    routs[i] = clinfer_remote_context_create_tensor (ctx, info.type,
        &info.shape, &err);
    g_assert_true (clinfer_request_set_remote_output (r, i, routs[i], &err));
    out_bytes += clinfer_shape_n_elements (&info.shape) * 4;
  }
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  clinfer_request_get_copy_stats (r, &h2d, &d2h);
  g_assert_cmpuint (h2d, ==, 0);
  g_assert_cmpuint (d2h, ==, 0);
  for (guint i = 0; i < 4; i++) {
    g_autoptr (ClinferTensor) host = clinfer_tensor_new (CLINFER_TYPE_F32,
        clinfer_remote_tensor_get_shape (routs[i]), &err);
    g_assert_null (clinfer_request_get_output (r, i));
    g_assert_true (clinfer_remote_tensor_read (routs[i], host, &err));
    test_assert_close (host, g_ptr_array_index (want, i), 1e-4);
    g_assert_true (clinfer_request_set_remote_output (r, i, NULL, &err));
    clinfer_remote_tensor_unref (routs[i]);
  }
  /* A host input (wrapped with CL_MEM_USE_HOST_PTR) and host outputs. */
  g_assert_true (clinfer_request_set_input_by_index (r, 0, input, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  clinfer_request_get_copy_stats (r, &h2d, &d2h);
  g_test_message ("host input: %" G_GUINT64_FORMAT " bytes to the device, %"
      G_GUINT64_FORMAT " to the host", h2d, d2h);
  /* PoCL and iGPUs share host memory: wrapped in place; a discrete
   * device (oclgrind says it is one) copies the input once. */
  g_assert_cmpuint (h2d, ==, context_unified (ctx) ? 0
      : clinfer_tensor_get_byte_size (input));
  g_assert_cmpuint (d2h, ==, out_bytes);
  for (guint i = 0; i < 4; i++)
    test_assert_close (clinfer_request_get_output (r, i),
        g_ptr_array_index (want, i), 1e-4);
}

/* Host memory wrapped as a remote tensor (CL_MEM_USE_HOST_PTR). */
static void
test_host_wrap (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) gpu = test_compile (path, "GPU", FALSE);
  g_autoptr (GPtrArray) want = test_run_host (gpu, input);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (gpu, &err);
  g_autoptr (ClinferRemoteTensor) rin = clinfer_remote_tensor_new_from_host (
      clinfer_compiled_get_remote_context (gpu), CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (input), NULL, clinfer_tensor_get_data (input),
      (GDestroyNotify) clinfer_tensor_unref, clinfer_tensor_ref (input), &err);
  guint64 h2d = 1;

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_remote_input (r, "input:0", rin, &err));
  for (int k = 0; k < 2; k++) {
    g_assert_true (clinfer_request_infer (r, &err));
    clinfer_request_get_copy_stats (r, &h2d, NULL);
    g_assert_cmpuint (h2d, ==, 0);
    for (guint i = 0; i < 4; i++)
      test_assert_close (clinfer_request_get_output (r, i),
          g_ptr_array_index (want, i), 1e-6);
  }
}

/* The application's own cl_context and in-order queue. */
static void
test_app_context (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferModel) model = clinfer_model_read (path, NULL);
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) ref = test_compile (path, "GPU", FALSE);
  g_autoptr (GPtrArray) want = test_run_host (ref, input);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;
  cl_platform_id platform;
  cl_device_id dev;
  cl_int cerr = CL_SUCCESS;
  cl_context app;
  cl_command_queue q, ooo;
  cl_mem mem;

  g_assert_cmpint (clGetPlatformIDs (1, &platform, NULL), ==, CL_SUCCESS);
  g_assert_cmpint (clGetDeviceIDs (platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL),
      ==, CL_SUCCESS);
  app = clCreateContext (NULL, 1, &dev, NULL, NULL, &cerr);
  q = clCreateCommandQueue (app, dev, 0, &cerr);
  ooo = clCreateCommandQueue (app, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
      &cerr);
  mem = clCreateBuffer (app, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
      clinfer_tensor_get_byte_size (input), clinfer_tensor_get_data (input),
      &cerr);
  g_assert_cmpint (cerr, ==, CL_SUCCESS);
  for (int from_queue = 0; from_queue < 2; from_queue++) {
    g_autoptr (ClinferRemoteContext) ctx = from_queue
        ? clinfer_remote_context_new_from_cl_queue (q, &err)
        : clinfer_remote_context_new_from_cl_context (app, &err);
    g_autoptr (ClinferCompiled) c = NULL;
    g_autoptr (ClinferRequest) r = NULL;
    g_autoptr (ClinferRemoteTensor) rin = NULL;
    guint64 h2d = 1;

    g_assert_no_error (err);
    g_assert_true (context_of (ctx) == app);
    clinfer_compile_config_set_remote_context (cfg, ctx);
    c = clinfer_compile (model, cfg, &err);
    g_assert_no_error (err);
    g_assert_true (context_of (clinfer_compiled_get_remote_context (c)) == app);
    rin = clinfer_remote_tensor_new_from_cl_mem (ctx, CLINFER_TYPE_F32,
        clinfer_tensor_get_shape (input), NULL, mem, &err);
    r = clinfer_compiled_create_request (c, &err);
    g_assert_true (clinfer_request_set_remote_input_by_index (r, 0, rin, &err));
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
    clinfer_request_get_copy_stats (r, &h2d, NULL);
    g_assert_cmpuint (h2d, ==, 0);
    for (guint i = 0; i < 4; i++)
      test_assert_close (clinfer_request_get_output (r, i),
          g_ptr_array_index (want, i), 1e-6);
  }
  clinfer_compile_config_set_remote_context (cfg, NULL);
  g_assert_null (clinfer_remote_context_new_from_cl_queue (ooo, &err));
  assert_error_mentions (err, "in-order");
  clReleaseMemObject (mem);
  clReleaseCommandQueue (ooo);
  clReleaseCommandQueue (q);
  clReleaseContext (app);
}

/* A buffer of another context still works (through the host, counted);
 * the CPU device reads OpenCL buffers and host-memory remote tensors. */
static void
test_foreign_and_cpu (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) gpu = test_compile (path, "GPU", FALSE);
  g_autoptr (ClinferCompiled) cpu = test_compile (path, "CPU", TRUE);
  g_autoptr (GPtrArray) want = test_run_host (cpu, input);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRemoteContext) other = clinfer_remote_context_new ("GPU", &err);
  g_autoptr (ClinferRemoteContext) host_ctx = clinfer_remote_context_new ("CPU", &err);
  g_autoptr (ClinferRemoteTensor) foreign = clinfer_remote_context_create_tensor (
      other, CLINFER_TYPE_F32, clinfer_tensor_get_shape (input), &err);
  g_autoptr (ClinferRemoteTensor) hostmem = clinfer_remote_tensor_new_from_host (
      host_ctx, CLINFER_TYPE_F32, clinfer_tensor_get_shape (input), NULL,
      clinfer_tensor_get_data (input), NULL, NULL, &err);
  g_autoptr (ClinferRemoteTensor) hostout = NULL;
  ClinferPortInfo info;
  ClinferCompiled *models[] = { gpu, cpu };

  g_assert_no_error (err);
  g_assert_true (clinfer_remote_tensor_write (foreign, input, &err));
  g_assert_cmpstr (g_variant_get_string (clinfer_remote_tensor_get_property (
              hostmem, CLINFER_REMOTE_PROP_SHARED_MEM_TYPE), NULL), ==,
      CLINFER_REMOTE_MEM_HOST_BUFFER);
  g_assert_null (clinfer_remote_tensor_get_cl_mem (hostmem, NULL));
  clinfer_compiled_get_output (cpu, 0, &info);
  hostout = clinfer_remote_context_create_tensor (host_ctx, info.type,
      &info.shape, &err);
  for (guint m = 0; m < G_N_ELEMENTS (models); m++) {
    g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (models[m], &err);
    ClinferRemoteTensor *ins[] = { foreign, hostmem };
    for (guint k = 0; k < G_N_ELEMENTS (ins); k++) {
      g_autoptr (ClinferTensor) out0 = clinfer_tensor_new (info.type,
          &info.shape, &err);
      guint64 h2d = 0, d2h = 0;
      g_assert_true (clinfer_request_set_remote_input_by_index (r, 0, ins[k], &err));
      g_assert_true (clinfer_request_set_remote_output (r, 0, hostout, &err));
      g_assert_true (clinfer_request_infer (r, &err));
      g_assert_no_error (err);
      clinfer_request_get_copy_stats (r, &h2d, &d2h);
      g_test_message ("%s, %s input: %" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT,
          clinfer_compiled_get_device_name (models[m]),
          k ? "host-memory" : "foreign OpenCL", h2d, d2h);
      /* A foreign buffer is read through the host and uploaded again. */
      if (m == 0 && k == 0)
        g_assert_cmpuint (h2d, >=, clinfer_tensor_get_byte_size (input));
      g_assert_true (clinfer_remote_tensor_read (hostout, out0, &err));
      test_assert_close (out0, g_ptr_array_index (want, 0), 1e-4);
      for (guint i = 1; i < 4; i++)
        test_assert_close (clinfer_request_get_output (r, i),
            g_ptr_array_index (want, i), 1e-4);
    }
  }
}

static void
test_request_errors (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferCompiled) gpu = test_compile (path, "GPU", FALSE);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (gpu);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (gpu, &err);
  const int64_t d[] = { 1, 128, 128, 3 }, small[] = { 1, 64, 64, 3 };
  ClinferShape s = clinfer_shape_make (4, d), s_small = clinfer_shape_make (4, small);
  g_autoptr (ClinferRemoteTensor) ti = clinfer_remote_context_create_tensor (ctx,
      CLINFER_TYPE_I32, &s, &err);
  g_autoptr (ClinferRemoteTensor) ts = clinfer_remote_context_create_tensor (ctx,
      CLINFER_TYPE_F32, &s_small, &err);

  g_assert_false (clinfer_request_set_remote_input_by_index (r, 0, ti, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_remote_input_by_index (r, 0, ts, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_remote_input (r, "nope", ts, &err));
  assert_error_mentions (err, "nope");
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_remote_output (r, 0, ts, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_remote_output (r, 9, ts, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_null (clinfer_remote_context_new ("GPU.77", &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_DEVICE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!test_have_opencl ()) {
    printf ("no OpenCL device: skipped\n");
    return TEST_SKIP_STATUS;
  }
  g_test_add_func ("/remote/type-check", test_type_check);
  g_test_add_func ("/remote/cl-mem", test_cl_mem);
  g_test_add_func ("/remote/read-write", test_read_write);
  g_test_add_func ("/remote/zero-copy", test_zero_copy);
  g_test_add_func ("/remote/host-wrap", test_host_wrap);
  g_test_add_func ("/remote/app-context", test_app_context);
  g_test_add_func ("/remote/foreign-and-cpu", test_foreign_and_cpu);
  g_test_add_func ("/remote/request-errors", test_request_errors);
  return g_test_run ();
}
