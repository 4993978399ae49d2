/* clinfer OpenCL tests — the GPU device: device listing and selection,
 * BlazeFace on the device with fallback off against the CPU device, the
 * CPU fallback (policy, results, copies), and the program binary cache.
 * Exits 77 (skipped) when no OpenCL device exists. */
#include "opencl-test-util.h"
#include "devices/opencl/ocl-internal.h"
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

static void
test_device_list (void)
{
  g_autoptr (GPtrArray) devices = clinfer_device_list ();
  const ClinferDeviceInfo *cpu = g_ptr_array_index (devices, 0);

  g_assert_cmpstr (cpu->name, ==, "CPU");
  g_assert_cmpint (cpu->index, ==, -1);
  for (guint i = 1; i < devices->len; i++) {
    const ClinferDeviceInfo *d = g_ptr_array_index (devices, i);
    g_autofree char *name = g_strdup_printf ("GPU.%u", i - 1);
    g_assert_cmpstr (d->name, ==, name);
    g_assert_cmpint (d->index, ==, (int) i - 1);
    g_assert_true (d->device_name && *d->device_name);
    g_assert_true (d->platform && *d->platform);
    g_assert_nonnull (d->driver_version);
    g_test_message ("%s: %s (%s, %s, driver %s, fp16 %s)", d->name,
        d->device_name, d->type, d->platform, d->driver_version,
        d->fp16 ? "yes" : "no");
  }
}

static void
test_device_select (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferModel) model = clinfer_model_read (path, NULL);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) gpu = NULL, gpu0 = NULL, bad = NULL, autod = NULL;
  g_autoptr (GError) err = NULL;

  clinfer_compile_config_set_device (cfg, "gpu");
  gpu = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  g_assert_true (g_str_has_prefix (clinfer_compiled_get_device_name (gpu), "GPU."));
  clinfer_compile_config_set_device (cfg, "GPU.0");
  gpu0 = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (clinfer_compiled_get_device_name (gpu0), ==, "GPU.0");
  clinfer_compile_config_set_device (cfg, "GPU.99");
  bad = clinfer_compile (model, cfg, &err);
  g_assert_null (bad);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_DEVICE);
  g_assert_nonnull (strstr (err->message, "GPU.99"));
  g_clear_error (&err);
  /* AUTO: a GPU-type device if there is one, else the native CPU. */
  clinfer_compile_config_set_device (cfg, "AUTO");
  autod = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  g_test_message ("AUTO chose %s", clinfer_compiled_get_device_name (autod));
}

/* BlazeFace on the GPU with fallback off matches the CPU device. */
static void
test_blazeface_no_fallback (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) cpu = test_compile (path, "CPU", TRUE);
  g_autoptr (ClinferCompiled) gpu = test_compile (path, "GPU", FALSE);
  g_autoptr (GPtrArray) want = test_run_host (cpu, input);
  g_autoptr (GPtrArray) got = test_run_host (gpu, input);

  g_assert_cmpuint (got->len, ==, 4);
  for (guint i = 0; i < got->len; i++)
    test_assert_close (g_ptr_array_index (got, i),
        g_ptr_array_index (want, i), 1e-4);
}

/* With the Transpose nodes kept off the device: compile fails naming one
 * when fallback is off; with fallback they run on the CPU, the results
 * match, and the copies around them are counted. */
static void
test_fallback (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferModel) model = clinfer_model_read (path, NULL);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) cpu = test_compile (path, "CPU", TRUE);
  g_autoptr (ClinferCompiled) gpu = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (GPtrArray) want = test_run_host (cpu, input);
  g_autoptr (GError) err = NULL;
  guint64 h2d = 0, d2h = 0;

  g_setenv ("CLINFER_OPENCL_DISABLE_OPS", "Transpose", TRUE);
  clinfer_compile_config_set_device (cfg, "GPU");
  clinfer_compile_config_set_allow_fallback (cfg, FALSE);
  gpu = clinfer_compile (model, cfg, &err);
  g_assert_null (gpu);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (err->message, "Transpose"));
  g_assert_nonnull (strstr (err->message, "fallback"));
  g_clear_error (&err);
  clinfer_compile_config_set_allow_fallback (cfg, TRUE);
  gpu = clinfer_compile (model, cfg, &err);
  g_unsetenv ("CLINFER_OPENCL_DISABLE_OPS");
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (gpu, &err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, input, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  for (guint i = 0; i < 4; i++)
    test_assert_close (clinfer_request_get_output (r, i),
        g_ptr_array_index (want, i), 1e-4);
  clinfer_request_get_copy_stats (r, &h2d, &d2h);
  g_test_message ("fallback Transpose: %" G_GUINT64_FORMAT " bytes to the "
      "device, %" G_GUINT64_FORMAT " to the host", h2d, d2h);
  /* The first Transpose's output goes up; the last ones' inputs come down. */
  g_assert_cmpuint (h2d, >, 0);
  g_assert_cmpuint (d2h, >, 0);
}

/* ---- program binary cache ---- */

static guint
count_entries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while (d && (name = g_dir_read_name (d)))
    n += g_str_has_suffix (name, ".bin");
  return n;
}

static void
corrupt_entries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d))) {
    g_autofree char *path = g_build_filename (dir, name, NULL);
    g_assert_true (g_file_set_contents (path, "CLINFERB garbage", -1, NULL));
  }
}

static void
remove_entries (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d))) {
    g_autofree char *path = g_build_filename (dir, name, NULL);
    g_remove (path);
  }
  g_rmdir (dir);
}

static double
compile_ms (const char *path)
{
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (ClinferCompiled) c = test_compile (path, "GPU", FALSE);

  g_assert_nonnull (c);
  return (g_get_monotonic_time () - t0) / 1000.0;
}

/* A second compile (new context, so no in-process program reuse) loads
 * every program from the cache; a corrupt entry is rebuilt. */
static void
test_program_cache (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autofree char *dir = g_dir_make_tmp ("clinfer-cache-XXXXXX", NULL);
  g_autofree char *old = g_strdup (g_getenv ("CLINFER_CACHE_DIR"));
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) cpu = test_compile (path, "CPU", TRUE);
  g_autoptr (ClinferCompiled) gpu = NULL;
  g_autoptr (GPtrArray) want = test_run_host (cpu, input);
  g_autoptr (GPtrArray) got = NULL;
  OclCacheStats s0, s1, s2, s3;
  double cold, warm, rebuilt;
  guint n;

  g_setenv ("CLINFER_CACHE_DIR", dir, TRUE);
  clinfer_ocl_cache_get_stats (&s0);
  cold = compile_ms (path);
  clinfer_ocl_cache_get_stats (&s1);
  n = count_entries (dir);
  g_assert_cmpuint (n, >, 0);
  g_assert_cmpuint (s1.misses - s0.misses, ==, n);
  g_assert_cmpuint (s1.stores - s0.stores, ==, n);
  warm = compile_ms (path);
  clinfer_ocl_cache_get_stats (&s2);
  g_assert_cmpuint (count_entries (dir), ==, n);
  g_assert_cmpuint (s2.hits - s1.hits, ==, n);
  g_assert_cmpuint (s2.misses, ==, s1.misses);
  g_test_message ("BlazeFace compile for GPU: cold %.1f ms, warm (%u cached "
      "programs) %.1f ms", cold, n, warm);
  printf ("# compile_ms cold=%.1f warm=%.1f programs=%u\n", cold, warm, n);
  corrupt_entries (dir);
  rebuilt = compile_ms (path);
  clinfer_ocl_cache_get_stats (&s3);
  g_assert_cmpuint (s3.corrupt - s2.corrupt, ==, n);
  g_assert_cmpuint (s3.stores - s2.stores, ==, n);
  g_test_message ("after corrupting every entry: %.1f ms", rebuilt);
  gpu = test_compile (path, "GPU", FALSE);
  got = test_run_host (gpu, input);
  for (guint i = 0; i < got->len; i++)
    test_assert_close (g_ptr_array_index (got, i),
        g_ptr_array_index (want, i), 1e-4);
  if (old)
    g_setenv ("CLINFER_CACHE_DIR", old, TRUE);
  else
    g_unsetenv ("CLINFER_CACHE_DIR");
  remove_entries (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!test_have_opencl ()) {
    printf ("no OpenCL device: skipped\n");
    return TEST_SKIP_STATUS;
  }
  g_test_add_func ("/opencl/device-list", test_device_list);
  g_test_add_func ("/opencl/device-select", test_device_select);
  g_test_add_func ("/opencl/blazeface-no-fallback", test_blazeface_no_fallback);
  g_test_add_func ("/opencl/fallback", test_fallback);
  g_test_add_func ("/opencl/program-cache", test_program_cache);
  return g_test_run ();
}
