/* Element tests of clinfer on a running stream: inference-interval,
 * last-message, settings changed while playing, model sharing, state
 * changes, renegotiation, metas through other elements, and every error
 * case. */
#include "test-util.h"

#include <gst/clinfer/clinfer-tensor-meta.h>
#include <clinfer/clinfer.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define FRONT_MODEL "blazeface/face_detection_front_128x128_barracuda.onnx"

/* ------------------------------------------------------------------ */
/* Streaming behaviour                                                 */

GST_START_TEST (test_inference_interval)
{
  GstVideoInfo info;
  GstHarness *h;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 32, 24);
  h = test_harness_for (test_make_clinfer ("identity-nchw-f32.onnx",
          "inference-interval=3"));
  test_set_video_caps (h, &info);
  for (i = 0; i < 7; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h, test_make_frame (&info, i));

    fail_unless_equals_int (gst_buffer_get_clinfer_tensor_meta (out) != NULL,
        i % 3 == 0);
    gst_buffer_unref (out);
  }
  /* A flush starts counting again: the next frame is inferred. */
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  {
    GstSegment segment;
    GstBuffer *out;

    gst_segment_init (&segment, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
    out = gst_harness_push_and_pull (h, test_make_frame (&info, 9));
    fail_unless (gst_buffer_get_clinfer_tensor_meta (out) != NULL);
    gst_buffer_unref (out);
  }
  /* A change while playing applies at once. */
  g_object_set (h->element, "inference-interval", 1, NULL);
  for (i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_push_and_pull (h, test_make_frame (&info, i));

    fail_unless (gst_buffer_get_clinfer_tensor_meta (out) != NULL);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_last_message)
{
  GstHarness *h;
  GstBuffer *out;
  gchar *msg;

  h = test_harness_for (test_make_clinfer ("ssd.onnx", "silent=false decoder=ssd"));
  out = test_push_frame (h, 100, 50);
  g_object_get (h->element, "last-message", &msg, NULL);
  fail_unless (msg != NULL);
  fail_unless (strstr (msg, "2 regions: class1 confidence=0.900 x=10 y=10 "
          "w=40 h=20; class0 confidence=0.750") != NULL, "%s", msg);
  g_free (msg);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* model, mean-values and decoder changed in PLAYING apply to the next
 * frame. */
GST_START_TEST (test_change_model_while_playing)
{
  g_autofree gchar *nhwc = test_data_path ("gst/identity-nhwc-f32.onnx");
  g_autofree gchar *ssd = test_data_path ("gst/ssd.onnx");
  GstHarness *h;
  GstBuffer *out;
  const GstClinferTensor *t;

  h = test_harness_for (test_make_clinfer ("identity-nchw-f32.onnx", NULL));
  out = test_push_frame (h, 20, 20);
  t = test_get_tensor (out, "out");
  fail_unless_equals_int (t->dims[1], 3);
  gst_buffer_unref (out);

  g_object_set (h->element, "model", nhwc, "mean-values", "255", NULL);
  out = test_push_frame (h, 20, 20);
  t = test_get_tensor (out, "out");
  fail_unless_equals_int (t->dims[3], 3);
  fail_unless (((const gfloat *) gst_clinfer_tensor_get_data (t, NULL))[0]
      <= 0.f);
  fail_unless_equals_string (gst_buffer_get_clinfer_tensor_meta (out)->
      model_name, "identity-nhwc-f32");
  gst_buffer_unref (out);

  g_object_set (h->element, "model", ssd, NULL);
  gst_util_set_object_arg (G_OBJECT (h->element), "decoder", "ssd");
  out = test_push_frame (h, 20, 20);
  fail_unless (test_get_tensor (out, "detection_out") != NULL);
  {
    GPtrArray *rois = test_get_rois (out);

    fail_unless_equals_int (rois->len, 2);
    g_ptr_array_unref (rois);
  }
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static gint n_compiled, n_shared;

static void
count_model_logs (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  const gchar *text;

  if (strcmp (gst_debug_category_get_name (category), "clinfer") != 0)
    return;
  text = gst_debug_message_get (message);
  if (g_str_has_prefix (text, "compiled "))
    g_atomic_int_inc (&n_compiled);
  else if (g_str_has_prefix (text, "sharing the compiled model"))
    g_atomic_int_inc (&n_shared);
}

GST_START_TEST (test_model_instance_id)
{
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  GstHarness *h1, *h2, *h3;
  GstBuffer *out1, *out2, *out3;
  GstVideoInfo info;
  GstBus *bus;
  GstMessage *msg;
  GPtrArray *rois;

  gst_debug_set_threshold_for_name ("clinfer", GST_LEVEL_INFO);
  gst_debug_add_log_function (count_model_logs, NULL, NULL);
  n_compiled = n_shared = 0;

  h1 = test_harness_for (test_make_clinfer (model,
          "model-instance-id=faces decoder=blazeface"));
  h2 = test_harness_for (test_make_clinfer (model,
          "model-instance-id=faces decoder=blazeface"));
  fail_unless_equals_int (g_atomic_int_get (&n_compiled), 1);
  fail_unless_equals_int (g_atomic_int_get (&n_shared), 1);

  /* Each element has its own request: both give the face. */
  out1 = test_load_astronaut (GST_VIDEO_FORMAT_RGB, &info);
  out2 = gst_buffer_copy_deep (out1);
  test_set_video_caps (h1, &info);
  test_set_video_caps (h2, &info);
  out1 = gst_harness_push_and_pull (h1, out1);
  out2 = gst_harness_push_and_pull (h2, out2);
  rois = test_get_rois (out1);
  fail_unless_equals_int (rois->len, 1);
  g_ptr_array_unref (rois);
  rois = test_get_rois (out2);
  fail_unless_equals_int (rois->len, 1);
  g_ptr_array_unref (rois);

  /* Same id, other model: a warning, and a private model. */
  {
    GstElement *e = test_make_clinfer ("identity-nchw-f32.onnx",
        "model-instance-id=faces");

    bus = gst_bus_new ();
    gst_element_set_bus (e, bus);
    h3 = test_harness_for (e);
  }
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (msg != NULL);
  gst_message_unref (msg);
  fail_unless_equals_int (g_atomic_int_get (&n_compiled), 2);
  out3 = test_push_frame (h3, 16, 16);
  fail_unless (test_get_tensor (out3, "out") != NULL);

  gst_debug_remove_log_function (count_model_logs);
  gst_debug_set_threshold_for_name ("clinfer", GST_LEVEL_NONE);
  gst_buffer_unref (out1);
  gst_buffer_unref (out2);
  gst_buffer_unref (out3);
  gst_harness_teardown (h1);
  gst_harness_teardown (h2);
  gst_harness_teardown (h3);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

GST_END_TEST;

/* Two streaming threads infer at the same time on one shared compiled
 * model, each with its own request. */
GST_START_TEST (test_model_instance_id_parallel)
{
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  g_autofree gchar *branch = g_strdup_printf ("videotestsrc num-buffers=20 "
      "pattern=ball ! video/x-raw,width=96,height=64 ! clinfer "
      "model=\"%s\" model-instance-id=parallel decoder=blazeface ! fakesink",
      model);
  g_autofree gchar *desc = g_strdup_printf ("%s %s %s", branch, branch,
      branch);
  GstMessage *msg = test_run_pipeline (desc, 120);

  fail_unless (msg != NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
}

GST_END_TEST;

GST_START_TEST (test_state_cycling)
{
  GstVideoInfo info;
  GstHarness *h;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, 32, 24);
  h = test_harness_for (test_make_clinfer ("blazeface-synthetic.onnx",
          "decoder=blazeface"));
  for (i = 0; i < 5; i++) {
    GstBuffer *out;
    GPtrArray *rois;

    test_set_video_caps (h, &info);
    out = gst_harness_push_and_pull (h, test_make_frame (&info, i));
    rois = test_get_rois (out);
    fail_unless_equals_int (rois->len, 2);
    g_ptr_array_unref (rois);
    gst_buffer_unref (out);
    fail_unless_equals_int (gst_element_set_state (h->element,
            GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
    fail_unless_equals_int (gst_element_set_state (h->element,
            i % 2 ? GST_STATE_PAUSED : GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    gst_harness_play (h);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Resolution change mid-stream: boxes follow the new size; a model with
 * dynamic height/width gets tensors of the new size. */
GST_START_TEST (test_caps_change)
{
  GstHarness *h;
  GstBuffer *out;
  GPtrArray *rois;
  GstVideoRegionOfInterestMeta *roi;
  guint x_small, x_big;

  h = test_harness_for (test_make_clinfer ("blazeface-synthetic.onnx",
          "decoder=blazeface"));
  out = test_push_frame (h, 64, 64);
  rois = test_get_rois (out);
  roi = g_ptr_array_index (rois, 0);
  x_small = roi->x;
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  out = test_push_frame (h, 256, 128);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, 2);
  roi = g_ptr_array_index (rois, 0);
  x_big = roi->x;
  fail_unless (abs ((gint) x_big - 4 * (gint) x_small) <= 3, "%u vs %u",
      x_big, x_small);
  fail_unless (roi->y + roi->h <= 128);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  h = test_harness_for (test_make_clinfer ("identity-dynamic.onnx", NULL));
  out = test_push_frame (h, 20, 10);
  fail_unless_equals_int (test_get_tensor (out, "out")->dims[3], 20);
  gst_buffer_unref (out);
  out = test_push_frame (h, 12, 30);
  fail_unless_equals_int (test_get_tensor (out, "out")->dims[2], 30);
  fail_unless_equals_int (test_get_tensor (out, "out")->dims[3], 12);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* The metas survive queue, tee, videoconvert and videoscale; videoscale
 * scales the boxes. */
GST_START_TEST (test_meta_survives_pipeline)
{
  g_autofree gchar *model = test_data_path ("gst/blazeface-synthetic.onnx");
  g_autofree gchar *desc = g_strdup_printf ("clinfer model=\"%s\" "
      "decoder=blazeface ! queue ! tee ! videoconvert ! "
      "capsfilter caps=video/x-raw,format=I420 ! videoscale ! "
      "capsfilter caps=video/x-raw,width=64,height=64", model);
  GstHarness *h = gst_harness_new_parse (desc);
  GstVideoInfo info;
  GstBuffer *out;
  GstClinferTensorMeta *meta;
  GPtrArray *rois;
  GstVideoRegionOfInterestMeta *roi;
  GstHarness *ref;
  GstBuffer *ref_out;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 128, 128);
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, test_make_frame (&info, 3));
  meta = gst_buffer_get_clinfer_tensor_meta (out);
  fail_unless (meta != NULL);
  fail_unless_equals_int (meta->n_tensors, 4);
  fail_unless_equals_int (meta->tensors[0].dims[1], 512);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, 2);
  roi = g_ptr_array_index (rois, 0);

  /* Against the same frame without scaling. */
  ref = test_harness_for (test_make_clinfer (model, "decoder=blazeface"));
  test_set_video_caps (ref, &info);
  ref_out = gst_harness_push_and_pull (ref, test_make_frame (&info, 3));
  {
    GPtrArray *ref_rois = test_get_rois (ref_out);
    GstVideoRegionOfInterestMeta *r = g_ptr_array_index (ref_rois, 0);

    fail_unless (abs ((gint) roi->x - (gint) r->x / 2) <= 1);
    fail_unless (abs ((gint) roi->w - (gint) r->w / 2) <= 1);
    g_ptr_array_unref (ref_rois);
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (ref_out);
  gst_buffer_unref (out);
  gst_harness_teardown (ref);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* Runs videotestsrc ! clinfer @props ! fakesink and checks the first
 * error: domain, code, and that its message contains @needle(s). */
static void
expect_error (const gchar * props, GQuark domain, gint code,
    const gchar * needle, const gchar * needle2)
{
  g_autofree gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=32,height=24 ! clinfer name=c %s ! fakesink", props);
  GstMessage *msg = test_run_pipeline (desc, 30);
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "%s: no message", props);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "%s: no error",
      props);
  gst_message_parse_error (msg, &err, &debug);
  fail_unless_equals_string (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), "c");
  fail_unless (err->domain == domain && err->code == code,
      "%s: got %s %d: %s", props, g_quark_to_string (err->domain), err->code,
      err->message);
  fail_unless (strstr (err->message, needle) != NULL, "%s: '%s' not in '%s'",
      props, needle, err->message);
  fail_unless (needle2 == NULL || strstr (err->message, needle2) != NULL,
      "%s: '%s' not in '%s'", props, needle2, err->message);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
}

/* Runs videotestsrc ! clinfer @props ! fakesink: TRUE at EOS. */
static gboolean
run_ok (const gchar * props)
{
  g_autofree gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=32,height=24 ! clinfer %s ! fakesink", props);
  GstMessage *msg = test_run_pipeline (desc, 30);
  gboolean ok = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;

  if (msg)
    gst_message_unref (msg);
  return ok;
}

GST_START_TEST (test_errors)
{
  g_autofree gchar *gst_dir = test_data_path ("gst");
  g_autofree gchar *unknown = test_data_path ("errors/unknown-op.onnx");
  g_autofree gchar *fuzz_crash =
      test_data_path ("fuzz/onnx/input-without-type.onnx");
  g_autofree gchar *tmp_dir = g_dir_make_tmp ("clinfer-gst-XXXXXX", NULL);
  g_autofree gchar *corrupt = g_build_filename (tmp_dir, "corrupt.onnx", NULL);
  g_autofree gchar *config = g_build_filename (tmp_dir, "layers.xml", NULL);
  g_autofree gchar *bad_source = g_build_filename (tmp_dir, "frob.xml",
      NULL);
  g_autofree gchar *bad_layer = g_build_filename (tmp_dir, "bad-layer.xml",
      NULL);
  gchar *p;

#define MODEL(name) g_strdup_printf ("model=\"%s/%s\"", gst_dir, name)
  fail_unless (g_file_set_contents (corrupt, "this is not a model", -1, NULL));
  fail_unless (g_file_set_contents (config, "<CustomLayer/>", -1, NULL));
  /* A layer whose kernel source is missing, and one without a kernel. */
  fail_unless (g_file_set_contents (bad_source,
          "<CustomLayer name=\"Frob\" type=\"SimpleGPU\" version=\"1\">\n"
          "  <Kernel entry=\"frob\">\n"
          "    <Source filename=\"missing-frob.cl\"/>\n"
          "  </Kernel>\n</CustomLayer>\n", -1, NULL));
  fail_unless (g_file_set_contents (bad_layer,
          "<CustomLayer name=\"Twiddle\" type=\"SimpleGPU\" version=\"1\">\n"
          "  <Kernel/>\n</CustomLayer>\n", -1, NULL));

  expect_error ("", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      "property 'model'", NULL);
  expect_error ("model=/nonexistent/face.onnx", GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NOT_FOUND, "/nonexistent/face.onnx", NULL);
  p = g_strdup_printf ("model=\"%s\"", corrupt);
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, corrupt,
      NULL);
  g_free (p);
  p = g_strdup_printf ("model=\"%s\"", unknown);
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "FrobnicateTensor", "mystery");
  g_free (p);
  /* The model the fuzzer made from test_shape_example (an input without
   * element type): an error, not the SIGSEGV it once gave. */
  p = g_strdup_printf ("model=\"%s\"", fuzz_crash);
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "graph input 'x' has no element type", NULL);
  g_free (p);
  /* The memory limit: the model's 1x3x12x16 f32 input alone is 2304
   * bytes. */
  p = g_strdup_printf ("model=\"%s/identity-nchw-f32.onnx\" "
      "memory-limit=2000", gst_dir);
  expect_error (p, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NO_SPACE_LEFT,
      "property 'memory-limit'", "needs 2304 bytes, over the memory limit of 2000 bytes");
  g_free (p);
  p = g_strdup_printf ("model=\"%s/identity-nchw-f32.onnx\" "
      "memory-limit=1000000", gst_dir);
  fail_unless (run_ok (p));
  g_free (p);

  p = MODEL ("ssd.onnx");
  {
    gchar *q = g_strdup_printf ("%s device=GPU.99", p);

    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, "GPU.99",
        NULL);
    g_free (q);
    q = g_strdup_printf ("%s device=TPU", p);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, "TPU",
        NULL);
    g_free (q);
    q = g_strdup_printf ("%s config-file=/nonexistent/layers.xml", p);
    expect_error (q, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "/nonexistent/layers.xml", "config-file");
    g_free (q);
    /* The engine cannot load custom layers yet: the file is named. */
    q = g_strdup_printf ("%s config-file=\"%s\"", p, config);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, config,
        NULL);
    g_free (q);
#ifdef CLINFER_TEST_HAVE_OPENCL
    /* A bad layer: the element passes the loader's error through, which
     * names the file and the layer (not the model). */
    q = g_strdup_printf ("%s config-file=\"%s\"", p, bad_source);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "frob.xml:3: custom layer 'Frob'", "missing-frob.cl");
    g_free (q);
    q = g_strdup_printf ("%s config-file=\"%s\"", p, bad_layer);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "custom layer 'Twiddle'", "config-file");
    g_free (q);
#else
    /* Built without OpenCL the engine reads no custom layer at all: the
     * error names the file and says why. */
    q = g_strdup_printf ("%s config-file=\"%s\"", p, bad_source);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        bad_source, "without OpenCL");
    g_free (q);
#endif
    /* A custom op library that cannot be loaded: LIBRARY INIT naming it. */
    q = g_strdup_printf ("%s custom-lib=\"/nonexistent/libops.so\"", p);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_INIT,
        "/nonexistent/libops.so", "custom-lib");
    g_free (q);
    q = g_strdup_printf ("%s labels-file=/nonexistent/labels.txt", p);
    expect_error (q, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "/nonexistent/labels.txt", NULL);
    g_free (q);
    q = g_strdup_printf ("%s mean-values=abc", p);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "mean-values", "abc");
    g_free (q);
    q = g_strdup_printf ("%s mean-values=1,2", p);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "mean-values", "1 or 3");
    g_free (q);
    q = g_strdup_printf ("%s scale-values=0", p);
    expect_error (q, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "scale-values", NULL);
    g_free (q);
  }
  g_free (p);

  p = MODEL ("rank2.onnx");
  expect_error (p, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
      "cannot be fed from video", "1x10");
  g_free (p);
  p = MODEL ("multi-input.onnx\" input-name=\"nope");
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, "nope",
      "input-name");
  g_free (p);
  p = MODEL ("multi-input.onnx\" input-name=\"aux");
  expect_error (p, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION, "aux", NULL);
  g_free (p);
  p = MODEL ("identity-nchw-f32.onnx\" decoder=\"ssd");
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, "ssd",
      "1x3x12x16");
  g_free (p);
  p = MODEL ("identity-nchw-f32.onnx\" decoder=\"blazeface");
  expect_error (p, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS, "blazeface",
      NULL);
  g_free (p);
#undef MODEL

  g_unlink (corrupt);
  g_unlink (config);
  g_unlink (bad_source);
  g_unlink (bad_layer);
  g_rmdir (tmp_dir);
}

GST_END_TEST;

/* A model changed in PLAYING to one that cannot be read: an error at the
 * next frame, not a crash; the element recovers with a good model. */
GST_START_TEST (test_error_model_change_while_playing)
{
  g_autofree gchar *good = test_data_path ("gst/identity-nchw-f32.onnx");
  GstHarness *h;
  GstBuffer *out;
  GstVideoInfo info;
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GstElement *e = test_make_clinfer ("identity-nchw-f32.onnx", NULL);

  gst_element_set_bus (e, bus);
  h = test_harness_for (e);
  out = test_push_frame (h, 16, 16);
  gst_buffer_unref (out);

  g_object_set (h->element, "model", "/nonexistent/model.onnx", NULL);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 16, 16);
  fail_unless_equals_int (gst_harness_push (h, test_make_frame (&info, 1)),
      GST_FLOW_ERROR);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL);
  gst_message_unref (msg);

  g_object_set (h->element, "model", good, NULL);
  out = gst_harness_push_and_pull (h, test_make_frame (&info, 2));
  fail_unless (test_get_tensor (out, "out") != NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

GST_END_TEST;

static Suite *
clinfer_stream_suite (void)
{
  Suite *s = suite_create ("clinfer-stream");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 240);
  tcase_add_test (tc, test_inference_interval);
  tcase_add_test (tc, test_last_message);
  tcase_add_test (tc, test_change_model_while_playing);
  tcase_add_test (tc, test_model_instance_id);
  tcase_add_test (tc, test_model_instance_id_parallel);
  tcase_add_test (tc, test_state_cycling);
  tcase_add_test (tc, test_caps_change);
  tcase_add_test (tc, test_meta_survives_pipeline);
  tcase_add_test (tc, test_errors);
  tcase_add_test (tc, test_error_model_change_while_playing);
  return s;
}

GST_CHECK_MAIN (clinfer_stream);
