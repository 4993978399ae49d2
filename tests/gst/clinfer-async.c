/* Element tests of clinfer with several requests in flight (nireq > 1):
 * frames leave in their order with the metadata a synchronous run gives
 * them; inference-interval keeps its pattern; EOS waits for the frames in
 * flight; a flush and a state change to NULL drop them (the leaks tracer
 * and ASan check nothing is left); the LATENCY query adds the frames held;
 * an inference failing in flight posts that element's error and leaves
 * another element on the same model running; no more than nireq
 * inferences run; on the GPU device too when there is one. */
#include "test-util.h"

#include <clinfer/clinfer.h>
#include <gmodule.h>
#include <string.h>

#define N_FRAMES 12

static GstBuffer *
make_timed_frame (const GstVideoInfo * info, guint i)
{
  GstBuffer *buf = test_make_frame (info, 100 + i);

  GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

/* Pushes N_FRAMES frames then EOS through clinfer with @args and returns
 * the output buffers in the order they left. */
static GPtrArray *
run_frames (const gchar * args, const GstVideoInfo * info)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("identity-nchw-f32.onnx",
          args));
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  GstBuffer *buf;
  guint i;

  test_set_video_caps (h, info);
  for (i = 0; i < N_FRAMES; i++)
    fail_unless_equals_int (gst_harness_push (h, make_timed_frame (info, i)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  /* Everything left before EOS did. */
  while ((buf = gst_harness_try_pull (h)) != NULL)
    g_ptr_array_add (out, buf);
  gst_harness_teardown (h);
  return out;
}

static void
assert_same_meta (GstBuffer * a, GstBuffer * b, const gchar * what, guint i)
{
  GstClinferTensorMeta *ma = gst_buffer_get_clinfer_tensor_meta (a);
  GstClinferTensorMeta *mb = gst_buffer_get_clinfer_tensor_meta (b);
  guint k;

  fail_unless ((ma == NULL) == (mb == NULL), "%s frame %u: meta on one run "
      "only", what, i);
  if (ma == NULL)
    return;
  fail_unless_equals_int (gst_clinfer_tensor_meta_get_n_tensors (ma),
      gst_clinfer_tensor_meta_get_n_tensors (mb));
  for (k = 0; k < gst_clinfer_tensor_meta_get_n_tensors (ma); k++) {
    const GstClinferTensor *ta = gst_clinfer_tensor_meta_get_tensor (ma, k);
    const GstClinferTensor *tb = gst_clinfer_tensor_meta_get_tensor (mb, k);

    fail_unless (g_bytes_equal (ta->data, tb->data), "%s frame %u: tensor %u "
        "differs from the synchronous run's", what, i, k);
  }
}

/* Every frame, in order, with the synchronous run's tensors. */
static void
check_against_sync (const gchar * device, const gchar * extra)
{
  static const guint nireqs[] = { 2, 4 };
  static const gchar *const hints[] = { "auto", "none", "throughput" };
  GstVideoInfo info;
  g_autofree gchar *sync_args = g_strdup_printf ("device=%s nireq=1 %s",
      device, extra);
  GPtrArray *want;
  guint n, h, i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 64, 48);
  GST_VIDEO_INFO_FPS_N (&info) = 30;
  want = run_frames (sync_args, &info);
  fail_unless_equals_int (want->len, N_FRAMES);
  for (n = 0; n < G_N_ELEMENTS (nireqs); n++) {
    for (h = 0; h < G_N_ELEMENTS (hints); h++) {
      g_autofree gchar *args = g_strdup_printf ("device=%s nireq=%u "
          "performance-hint=%s %s", device, nireqs[n], hints[h], extra);
      GPtrArray *got = run_frames (args, &info);

      fail_unless_equals_int (got->len, N_FRAMES);
      for (i = 0; i < N_FRAMES; i++) {
        GstBuffer *b = g_ptr_array_index (got, i);

        fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * GST_SECOND / 30);
        assert_same_meta (g_ptr_array_index (want, i), b, args, i);
      }
      g_ptr_array_unref (got);
    }
  }
  g_ptr_array_unref (want);
}

GST_START_TEST (test_order_and_meta_cpu)
{
  check_against_sync ("CPU", "");
}

GST_END_TEST;

GST_START_TEST (test_order_and_meta_interval)
{
  /* Frames without inference wait behind those in flight. */
  check_against_sync ("CPU", "inference-interval=3");
}

GST_END_TEST;

GST_START_TEST (test_order_and_meta_gpu)
{
  if (!test_have_gpu ()) {
    GST_INFO ("no OpenCL device: the GPU case is not run");
    return;
  }
  check_against_sync ("GPU", "");
}

GST_END_TEST;

/* A flush drops the frames in flight; the stream goes on after it. */
GST_START_TEST (test_flush_drops_in_flight)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("identity-nchw-f32.onnx",
          "device=CPU nireq=4"));
  GstVideoInfo info;
  GstSegment segment;
  GstBuffer *buf;
  guint i, n_before = 0, n_after = 0;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 64, 48);
  test_set_video_caps (h, &info);
  for (i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (h, make_timed_frame (&info, i)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  while ((buf = gst_harness_try_pull (h)) != NULL) {
    n_before++;
    gst_buffer_unref (buf);
  }
  /* nireq=4: three frames never wait for a free request, and the newest
   * is never pushed in its own call. */
  fail_unless (n_before < 3, "%u frames left before the flush", n_before);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  for (i = 10; i < 12; i++)
    fail_unless_equals_int (gst_harness_push (h, make_timed_frame (&info, i)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while ((buf = gst_harness_try_pull (h)) != NULL) {
    fail_unless_equals_uint64 (GST_BUFFER_PTS (buf),
        (10 + n_after) * GST_SECOND / 30);
    fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) != NULL);
    n_after++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (n_after, 2);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Going to NULL with frames in flight leaves no request running and
 * nothing alive (the leaks tracer fails the program otherwise). */
GST_START_TEST (test_stop_with_frames_in_flight)
{
  guint round;

  for (round = 0; round < 3; round++) {
    GstHarness *h = test_harness_for (test_make_clinfer
        ("identity-nchw-f32.onnx", "device=CPU nireq=3 "
            "performance-hint=throughput"));
    GstVideoInfo info;
    guint i;

    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 64, 48);
    test_set_video_caps (h, &info);
    for (i = 0; i < 2 + round; i++)
      fail_unless_equals_int (gst_harness_push (h, make_timed_frame (&info,
                  i)), GST_FLOW_OK);
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* The LATENCY query: nireq - 1 frame durations on top of upstream's. */
GST_START_TEST (test_latency_query)
{
  static const guint nireqs[] = { 1, 3 };
  GstClockTime latency[2];
  guint n;

  for (n = 0; n < G_N_ELEMENTS (nireqs); n++) {
    g_autofree gchar *args = g_strdup_printf ("device=CPU nireq=%u",
        nireqs[n]);
    GstHarness *h = test_harness_for (test_make_clinfer
        ("identity-nchw-f32.onnx", args));
    GstVideoInfo info;

    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 64, 48);
    GST_VIDEO_INFO_FPS_N (&info) = 25;
    GST_VIDEO_INFO_FPS_D (&info) = 1;
    test_set_video_caps (h, &info);
    gst_harness_set_upstream_latency (h, 10 * GST_MSECOND);
    latency[n] = gst_harness_query_latency (h);
    gst_harness_teardown (h);
  }
  fail_unless_equals_uint64 (latency[0], 10 * GST_MSECOND);
  fail_unless_equals_uint64 (latency[1], 10 * GST_MSECOND + 2 * GST_SECOND
      / 25);
}

GST_END_TEST;

/* A frame whose every byte is @value, at frame @i. */
static GstBuffer *
uniform_frame (const GstVideoInfo * info, guint i, guint8 value)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, NULL);

  gst_buffer_memset (buf, 0, value, info->size);
  GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
  return buf;
}

static GstHarness *
fail_ops_harness (GstBus * bus)
{
  const gchar *lib = g_getenv ("CLINFER_FAIL_OPS");
  g_autofree gchar *args = g_strdup_printf ("device=CPU nireq=3 "
      "scale-values=255 model-instance-id=shared-fail custom-lib=%s", lib);
  GstHarness *h = test_harness_for (test_make_clinfer ("fail-if-bright.onnx",
          args));
  GstVideoInfo info;

  gst_element_set_bus (h->element, bus);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 8, 8);
  test_set_video_caps (h, &info);
  return h;
}

/* The third frame of element A is bright: its inference fails on a
 * stream worker. A posts an error naming the engine's message and stops
 * with a flow error, after pushing the frames before it; B, on the same
 * compiled model, goes on and pushes all its frames. */
GST_START_TEST (test_error_in_flight)
{
  GstBus *bus_a = gst_bus_new (), *bus_b = gst_bus_new ();
  GstHarness *a, *b;
  GstVideoInfo info;
  GstFlowReturn ret = GST_FLOW_OK;
  GstMessage *msg;
  GError *err = NULL;
  GstBuffer *buf;
  guint i, n_a = 0, n_b = 0;

  fail_unless (g_getenv ("CLINFER_FAIL_OPS") != NULL);
  a = fail_ops_harness (bus_a);
  b = fail_ops_harness (bus_b);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 8, 8);
  for (i = 0; i < 8; i++) {
    /* A stops at its flow error, as a source would. */
    if (ret == GST_FLOW_OK)
      ret = gst_harness_push (a, uniform_frame (&info, i, i == 2 ? 255 : 0));
    fail_unless_equals_int (gst_harness_push (b, uniform_frame (&info, i, 0)),
        GST_FLOW_OK);
  }
  if (ret == GST_FLOW_OK)       /* not reached yet: EOS drains A */
    gst_harness_push_event (a, gst_event_new_eos ());
  else
    fail_unless_equals_int (ret, GST_FLOW_ERROR);
  msg = gst_bus_pop_filtered (bus_a, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no error from element A");
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (a->element));
  gst_message_parse_error (msg, &err, NULL);
  fail_unless (strstr (err->message, "too bright") != NULL, "%s",
      err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  /* A pushed the two frames before the failing one, with their meta. */
  while ((buf = gst_harness_try_pull (a)) != NULL) {
    fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) != NULL);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (buf), n_a * GST_SECOND / 30);
    n_a++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (n_a, 2);

  fail_unless (gst_harness_push_event (b, gst_event_new_eos ()));
  while ((buf = gst_harness_try_pull (b)) != NULL) {
    fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) != NULL);
    n_b++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (n_b, 8);
  fail_unless (gst_bus_pop_filtered (bus_b, GST_MESSAGE_ERROR) == NULL);

  /* The buses' messages hold the elements: drop them first. */
  gst_bus_set_flushing (bus_a, TRUE);
  gst_bus_set_flushing (bus_b, TRUE);
  gst_harness_teardown (a);
  gst_harness_teardown (b);
  gst_object_unref (bus_a);
  gst_object_unref (bus_b);
}

GST_END_TEST;

static void
buffer_freed (gpointer data, GstMiniObject * obj)
{
  g_atomic_int_set ((gint *) data, 1);
}

typedef struct
{
  GstHarness *h;
  GstBuffer *buf;
  GstFlowReturn ret;
  gint returned;                /* atomic */
} PushJob;

static gpointer
push_job (gpointer data)
{
  PushJob *job = data;

  job->ret = gst_harness_push (job->h, job->buf);
  g_atomic_int_set (&job->returned, 1);
  return NULL;
}

/* clinfer at nireq=2 on gate.onnx, its first two frames held in the
 * closed Gate op, a third pushed by a thread of its own. */
typedef struct
{
  GModule *module;
  void (*set_closed) (int);
  GstHarness *h;
  GstVideoInfo info;
  PushJob job;
  GThread *thread;
} GateRun;

static void
gate_run_start (GateRun * g, gint * freed)
{
  const gchar *lib = g_getenv ("CLINFER_FAIL_OPS");
  g_autofree gchar *args = NULL;
  guint i;

  fail_unless (lib != NULL);
  g->module = g_module_open (lib, G_MODULE_BIND_LOCAL);
  fail_unless (g->module != NULL, "%s", g_module_error ());
  fail_unless (g_module_symbol (g->module, "clinfer_test_gate_set_closed",
          (gpointer *) & g->set_closed));
  args = g_strdup_printf ("device=CPU nireq=2 scale-values=255 "
      "custom-lib=%s", lib);
  g->h = test_harness_for (test_make_clinfer ("gate.onnx", args));
  gst_video_info_set_format (&g->info, GST_VIDEO_FORMAT_BGRx, 8, 8);
  test_set_video_caps (g->h, &g->info);

  g->set_closed (1);
  for (i = 0; i < 2; i++)
    fail_unless_equals_int (gst_harness_push (g->h, make_timed_frame
            (&g->info, i)), GST_FLOW_OK);
  g->job.h = g->h;
  g->job.buf = make_timed_frame (&g->info, 2);
  if (freed != NULL)
    gst_mini_object_weak_ref (GST_MINI_OBJECT (g->job.buf), buffer_freed,
        freed);
  g->thread = g_thread_new ("push", push_job, &g->job);
}

/* Opens the gate and waits for the third push; then EOS: the frames that
 * leave have the timestamps of frames @from, @from + 1, ... (@n of
 * them) and meta. */
static void
gate_run_finish (GateRun * g, GstFlowReturn want, guint from, guint n)
{
  GstBuffer *buf;
  guint k = 0;

  g->set_closed (0);
  g_thread_join (g->thread);
  fail_unless_equals_int (g->job.ret, want);
  fail_unless (gst_harness_push_event (g->h, gst_event_new_eos ()));
  while ((buf = gst_harness_try_pull (g->h)) != NULL) {
    fail_unless_equals_uint64 (GST_BUFFER_PTS (buf),
        (from + k) * GST_SECOND / 30);
    fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) != NULL);
    k++;
    gst_buffer_unref (buf);
  }
  fail_unless_equals_int (k, n);
  gst_harness_teardown (g->h);
  g_module_close (g->module);
}

/* nireq=2 runs at most two inferences: with two held in the Gate op, a
 * third frame stays in the element's chain function (pre-processed into
 * the element's spare slot) until the oldest ends, then all three leave in
 * order with their meta. */
GST_START_TEST (test_in_flight_limit)
{
  GateRun g = { 0 };

  gate_run_start (&g, NULL);
  /* Not a timing threshold: with the gate closed the push cannot return,
   * however long the wait; 200 ms gives a wrong element time to. */
  g_usleep (200 * 1000);
  fail_if (g_atomic_int_get (&g.job.returned), "a third frame was taken "
      "with two inferences in flight and nireq=2");
  gate_run_finish (&g, GST_FLOW_OK, 0, 3);
}

GST_END_TEST;

/* A flush while a frame waits in the chain function for a free inference:
 * the frame is given up (FLUSHING) and let go at once, not held by the
 * slot it was pre-processed into; after the flush the element runs nireq
 * inferences again. */
GST_START_TEST (test_flush_while_waiting)
{
  GateRun g = { 0 };
  GstSegment segment;
  GstBuffer *buf;
  gint freed = 0;
  guint i;

  gate_run_start (&g, &freed);
  g_usleep (100 * 1000);
  fail_unless (gst_harness_push_event (g.h, gst_event_new_flush_start ()));
  g.set_closed (0);
  g_thread_join (g.thread);
  g.thread = NULL;
  fail_unless_equals_int (g.job.ret, GST_FLOW_FLUSHING);
  fail_unless (g_atomic_int_get (&freed), "the element still holds the "
      "frame it gave up");
  fail_unless (gst_harness_push_event (g.h, gst_event_new_flush_stop (TRUE)));
  while ((buf = gst_harness_try_pull (g.h)) != NULL)
    gst_buffer_unref (buf);

  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (g.h, gst_event_new_segment (&segment)));
  g.set_closed (1);
  for (i = 10; i < 12; i++)
    fail_unless_equals_int (gst_harness_push (g.h, make_timed_frame (&g.info,
                i)), GST_FLOW_OK);
  g.job = (PushJob) { g.h, make_timed_frame (&g.info, 12), GST_FLOW_OK, 0 };
  g.thread = g_thread_new ("push", push_job, &g.job);
  gate_run_finish (&g, GST_FLOW_OK, 10, 3);
}

GST_END_TEST;

static Suite *
clinfer_async_suite (void)
{
  Suite *s = suite_create ("clinfer_async");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_order_and_meta_cpu);
  tcase_add_test (tc, test_order_and_meta_interval);
  tcase_add_test (tc, test_order_and_meta_gpu);
  tcase_add_test (tc, test_flush_drops_in_flight);
  tcase_add_test (tc, test_stop_with_frames_in_flight);
  tcase_add_test (tc, test_latency_query);
  tcase_add_test (tc, test_error_in_flight);
  tcase_add_test (tc, test_in_flight_limit);
  tcase_add_test (tc, test_flush_while_waiting);
  return s;
}

GST_CHECK_MAIN (clinfer_async);
