/* Element tests of clinfer on an OpenCL device (device=GPU; PoCL on a CPU
 * does): the pre-processing kernel against the naive reference for every
 * format, zero copy (the engine's copy counter, the OpenCL buffer pool
 * offered upstream; tests/engine/test-preprocess.c checks that the
 * driver maps a wrapped frame at its own address) and BlazeFace giving the CPU device's face. The program exits
 * 77 (skipped) when the engine lists no OpenCL device. */
#include "test-util.h"
#include "preprocess-ref.h"
#include "gst/gstclinferclmemory.h"

#include <clinfer/clinfer.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRONT_MODEL "blazeface/face_detection_front_128x128_barracuda.onnx"

static ClinferRemoteContext *
gpu_context (void)
{
  GError *err = NULL;
  ClinferRemoteContext *ctx = clinfer_remote_context_new ("GPU", &err);

  fail_unless (ctx != NULL, "%s", err ? err->message : "");
  return ctx;
}

static gpointer
context_handle (ClinferRemoteContext * ctx, const gchar * key)
{
  GVariant *v = clinfer_remote_context_get_property (ctx, key);

  fail_unless (v != NULL, "no %s", key);
  return (gpointer) (guintptr) g_variant_get_uint64 (v);
}

/* Whether the OpenCL device shares host memory (CPU devices, integrated
 * GPUs): then nothing may be copied at all. Not with
 * CLINFER_OPENCL_DISCRETE=1, which makes the engine treat any device as a
 * discrete GPU. */
static gboolean
gpu_has_unified_memory (ClinferRemoteContext * ctx)
{
  cl_command_queue q = context_handle (ctx, CLINFER_REMOTE_PROP_OCL_QUEUE);
  cl_device_id dev = NULL;
  cl_bool unified = CL_FALSE;

  fail_unless_equals_int (clGetCommandQueueInfo (q, CL_QUEUE_DEVICE,
          sizeof (dev), &dev, NULL), CL_SUCCESS);
  fail_unless_equals_int (clGetDeviceInfo (dev, CL_DEVICE_HOST_UNIFIED_MEMORY,
          sizeof (unified), &unified, NULL), CL_SUCCESS);
  return unified == CL_TRUE
      && g_strcmp0 (g_getenv ("CLINFER_OPENCL_DISCRETE"), "1") != 0;
}

/* A frame of @info in page-aligned system memory filled from @seed. */
static GstBuffer *
aligned_frame (const GstVideoInfo * info, guint32 seed)
{
  GstAllocationParams params = { 0, GST_CLINFER_CL_ALIGN, 0, 0, };
  GstBuffer *src = test_make_frame (info, seed);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, &params);
  GstMapInfo map;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  fail_unless ((guintptr) map.data % (GST_CLINFER_CL_ALIGN + 1) == 0);
  gst_buffer_extract (src, 0, map.data, info->size);
  gst_buffer_unmap (buf, &map);
  gst_buffer_unref (src);
  return buf;
}

/* The model input of @model (identity) for @in through a clinfer element
 * on @device; (transfer full) a copy of its data, *@copied the element's
 * bytes-copied after the frame. */
static GBytes *
run_identity (const gchar * model, const gchar * device,
    const GstVideoInfo * info, GstBuffer * in, guint64 * copied)
{
  GstElement *e = test_make_clinfer (model, NULL);
  const GstClinferTensor *t;
  GstHarness *h;
  GstBuffer *out;
  gconstpointer data;
  gsize size;
  GBytes *bytes;

  g_object_set (e, "device", device, NULL);
  h = test_harness_for (gst_object_ref (e));
  test_set_video_caps (h, info);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  out = gst_harness_pull (h);
  t = test_get_tensor (out, "out");
  fail_unless (t != NULL);
  data = gst_clinfer_tensor_get_data (t, &size);
  bytes = g_bytes_new (data, size);
  if (copied != NULL)
    g_object_get (e, "bytes-copied", copied, NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_object_unref (e);
  return bytes;
}

/* f32 values of @a and @b agree within @tol. */
static void
check_same_floats (GBytes * a, GBytes * b, gdouble tol)
{
  gsize na, nb, i;
  const gfloat *fa = g_bytes_get_data (a, &na);
  const gfloat *fb = g_bytes_get_data (b, &nb);
  gdouble max_err = 0;

  fail_unless_equals_int (na, nb);
  for (i = 0; i < na / sizeof (gfloat); i++)
    max_err = MAX (max_err, fabs (fa[i] - fb[i]));
  fail_unless (max_err <= tol, "max difference %g", max_err);
}

/* ------------------------------------------------------------------ */

GST_START_TEST (test_gpu_preprocess_every_format)
{
  static const gint sizes[][2] = { {23, 17}, {9, 7}, {64, 20} };
  guint f, m, s;

  for (m = 0; m < test_n_model_cases; m++)
    for (f = 0; f < test_n_frame_cases; f++)
      for (s = 0; s < G_N_ELEMENTS (sizes); s++)
        test_check_preprocess (&test_frame_cases[f], &test_model_cases[m],
            sizes[s][0], sizes[s][1], "GPU");
}

GST_END_TEST;

/* The engine's copy counter: a frame in host memory costs no copy on a
 * device sharing host memory, and the model input equals the CPU path's. */
GST_START_TEST (test_gpu_zero_copy_counter)
{
  ClinferRemoteContext *ctx = gpu_context ();
  gboolean unified = gpu_has_unified_memory (ctx);
  GstVideoInfo info;
  GBytes *gpu, *cpu;
  guint64 copied = G_MAXUINT64;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 1280, 720);
  gpu = run_identity ("identity-nchw-f32.onnx", "GPU", &info,
      aligned_frame (&info, 3), &copied);
  cpu = run_identity ("identity-nchw-f32.onnx", "CPU", &info,
      aligned_frame (&info, 3), NULL);
  check_same_floats (gpu, cpu, 1e-3);
  if (unified) {
    fail_unless_equals_uint64 (copied, 0);
  } else {
    /* A discrete GPU gets the model input the host rows wrote, not the
     * frame. */
    fail_unless (copied >= g_bytes_get_size (gpu) && copied < info.size,
        "%" G_GUINT64_FORMAT, copied);
  }
  g_bytes_unref (gpu);
  g_bytes_unref (cpu);
  clinfer_remote_context_unref (ctx);
}

GST_END_TEST;

/* Upstream asking for memory gets a pool of OpenCL memory; a frame written
 * into it is read by the kernel in place (0 bytes copied) and gives the
 * CPU path's values. Mapping it returns the buffer's own storage. */
GST_START_TEST (test_gpu_buffer_pool)
{
  ClinferRemoteContext *ctx = gpu_context ();
  gboolean unified = gpu_has_unified_memory (ctx);
  GstElement *e = test_make_clinfer ("identity-nchw-f32.onnx", "device=GPU");
  GstHarness *h = test_harness_for (gst_object_ref (e));
  GstVideoInfo info;
  GstCaps *caps;
  GstQuery *query;
  GstBufferPool *pool = NULL;
  GstAllocator *allocator = NULL;
  GstBuffer *buf, *src, *out;
  GstMapInfo map, map2;
  GstMemory *mem;
  GstClinferClMemory *clm;
  const GstClinferTensor *t;
  gconstpointer data;
  gsize size;
  GBytes *got, *cpu;
  guint64 copied = G_MAXUINT64;
  cl_int rc = CL_SUCCESS;
  void *p;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 320, 240);
  test_set_video_caps (h, &info);
  caps = gst_video_info_to_caps (&info);
  query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) >= 1);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  fail_unless (pool != NULL);
  fail_unless (gst_query_get_n_allocation_params (query) >= 1);
  gst_query_parse_nth_allocation_param (query, 0, &allocator, NULL);
  fail_unless (allocator != NULL);
  fail_unless_equals_string (allocator->mem_type, GST_CLINFER_CL_MEMORY_TYPE);
  gst_object_unref (allocator);
  gst_query_unref (query);
  gst_caps_unref (caps);

  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_buffer_n_memory (buf), 1);
  mem = gst_buffer_peek_memory (buf, 0);
  fail_unless (gst_memory_is_type (mem, GST_CLINFER_CL_MEMORY_TYPE));
  clm = (GstClinferClMemory *) mem;

  /* Upstream writes the frame through a map; the driver maps the same
   * storage each time, the one the element's cl_mem holds. */
  src = test_make_frame (&info, 11);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  gst_buffer_extract (src, 0, map.data, info.size);
  gst_buffer_unmap (buf, &map);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  fail_unless (gst_buffer_map (buf, &map2, GST_MAP_READ));
  fail_unless (map.data == map2.data);
  p = clEnqueueMapBuffer (clm->queue, clm->mem, CL_TRUE, CL_MAP_READ, 0,
      mem->maxsize, 0, NULL, NULL, &rc);
  fail_unless_equals_int (rc, CL_SUCCESS);
  if (unified)
    fail_unless ((guint8 *) p + mem->offset == map.data);
  clEnqueueUnmapMemObject (clm->queue, clm->mem, p, 0, NULL, NULL);
  clFinish (clm->queue);
  gst_buffer_unmap (buf, &map2);
  gst_buffer_unmap (buf, &map);

  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  out = gst_harness_pull (h);
  t = test_get_tensor (out, "out");
  fail_unless (t != NULL);
  data = gst_clinfer_tensor_get_data (t, &size);
  got = g_bytes_new (data, size);
  g_object_get (e, "bytes-copied", &copied, NULL);
  fail_unless_equals_uint64 (copied, 0);
  cpu = run_identity ("identity-nchw-f32.onnx", "CPU", &info, src, NULL);
  check_same_floats (got, cpu, 1e-3);

  g_bytes_unref (got);
  g_bytes_unref (cpu);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_object_unref (e);
  clinfer_remote_context_unref (ctx);
}

GST_END_TEST;

/* The device=CPU element proposes no pool: frames stay in system memory. */
GST_START_TEST (test_cpu_proposes_no_pool)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("identity-nchw-f32.onnx",
          "device=CPU"));
  GstVideoInfo info;
  GstCaps *caps;
  GstQuery *query;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 32, 24);
  test_set_video_caps (h, &info);
  caps = gst_video_info_to_caps (&info);
  query = gst_query_new_allocation (caps, TRUE);
  gst_pad_peer_query (h->srcpad, query);
  fail_unless_equals_int (gst_query_get_n_allocation_pools (query), 0);
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* BlazeFace on the photo: the GPU element finds the CPU element's face. */
GST_START_TEST (test_gpu_blazeface_astronaut)
{
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  const gchar *devices[] = { "CPU", "GPU" };
  GstVideoRegionOfInterestMeta *roi[2];
  GstBuffer *out[2];
  GPtrArray *rois;
  GstVideoInfo info;
  guint d;

  for (d = 0; d < 2; d++) {
    g_autofree gchar *args = g_strdup_printf ("decoder=blazeface device=%s",
        devices[d]);
    GstHarness *h = test_harness_for (test_make_clinfer (model, args));
    GstBuffer *in = test_load_astronaut (GST_VIDEO_FORMAT_RGB, &info);

    test_set_video_caps (h, &info);
    fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
    out[d] = gst_harness_pull (h);
    rois = test_get_rois (out[d]);
    fail_unless_equals_int (rois->len, 1);
    roi[d] = g_ptr_array_index (rois, 0);
    g_ptr_array_unref (rois);
    gst_harness_teardown (h);
  }
  fail_unless (abs ((gint) roi[0]->x - (gint) roi[1]->x) <= 1);
  fail_unless (abs ((gint) roi[0]->y - (gint) roi[1]->y) <= 1);
  fail_unless (abs ((gint) roi[0]->w - (gint) roi[1]->w) <= 1);
  fail_unless (abs ((gint) roi[0]->h - (gint) roi[1]->h) <= 1);
  fail_unless (fabs (test_roi_confidence (roi[0])
          - test_roi_confidence (roi[1])) <= 0.002);
  gst_buffer_unref (out[0]);
  gst_buffer_unref (out[1]);
}

GST_END_TEST;

static Suite *
clinfer_gpu_suite (void)
{
  Suite *s = suite_create ("clinfer_gpu");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_preprocess_every_format);
  tcase_add_test (tc, test_gpu_zero_copy_counter);
  tcase_add_test (tc, test_gpu_buffer_pool);
  tcase_add_test (tc, test_cpu_proposes_no_pool);
  tcase_add_test (tc, test_gpu_blazeface_astronaut);
  return s;
}

int
main (int argc, char **argv)
{
  GPtrArray *devices;
  gboolean have_gpu;

  /* Skipped, never passed, without an OpenCL device. */
  devices = clinfer_device_list ();
  have_gpu = devices->len >= 2;
  g_ptr_array_unref (devices);
  if (!have_gpu) {
    g_printerr ("no OpenCL device: the GPU element tests are skipped\n");
    return 77;
  }
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (clinfer_gpu_suite (), "clinfer_gpu",
      __FILE__);
}
