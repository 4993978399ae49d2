/* Element tests of clinfer with batch-size: elements sharing a
 * model-instance-id, each on its own streaming thread, feed one batched
 * request, and every frame leaves with the tensors a batch-size=1 run
 * gives it (tests/data/dynamic/conv-batch.onnx, batch dimension dynamic);
 * one element batching its own frames (nireq); a stream that stops
 * sending frames does not stall the other (batch-timeout fires); stopping
 * with frames in a batch that is still filling does not wait for it; the
 * LATENCY query adds batch-timeout; a model whose batch is fixed at 1 is
 * batched (clinfer_model_set_batch ()) with the same tensors, one whose
 * batch cannot be followed refused with an error naming its output; on
 * the GPU device too when there is one. The leaks tracer and ASan check nothing is left. */
#include "test-util.h"

#include <clinfer/clinfer.h>
#include <math.h>
#include <string.h>

#define N_FRAMES 10

static gchar *
conv_batch_model (void)
{
  return test_data_path ("dynamic/conv-batch.onnx");
}

/* Stream @stream's frame @i: its own pseudo-random pixels. */
static GstBuffer *
stream_frame (const GstVideoInfo * info, guint stream, guint i)
{
  GstBuffer *buf = test_make_frame (info, 1000 * (stream + 1) + i);

  GST_BUFFER_PTS (buf) = i * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  return buf;
}

typedef struct
{
  GstHarness *h;
  GstVideoInfo info;
  guint stream;
  guint n_frames;               /* pushed, then EOS when @eos */
  gboolean eos;
  GPtrArray *out;               /* the buffers that left, in order */
} Feeder;

static gpointer
feed (gpointer data)
{
  Feeder *f = data;
  GstBuffer *buf;
  guint i;

  for (i = 0; i < f->n_frames; i++)
    fail_unless_equals_int (gst_harness_push (f->h, stream_frame (&f->info,
                f->stream, i)), GST_FLOW_OK);
  if (f->eos)
    fail_unless (gst_harness_push_event (f->h, gst_event_new_eos ()));
  while ((buf = gst_harness_try_pull (f->h)) != NULL)
    g_ptr_array_add (f->out, buf);
  return NULL;
}

/* @model: a path, NULL for conv-batch.onnx. */
static GstHarness *
make_harness (const gchar * model, const gchar * args,
    const GstVideoInfo * info)
{
  g_autofree gchar *conv = conv_batch_model ();
  GstHarness *h = test_harness_for (test_make_clinfer (model ? model : conv,
          args));

  test_set_video_caps (h, info);
  return h;
}

/* Each stream's frames through its own element with @args, the streams
 * on threads of their own at once; (transfer full) per stream, the
 * buffers out. */
static GPtrArray **
run_streams (const gchar * model, guint n_streams, const gchar * args,
    const guint * n_frames, const GstVideoFormat * formats)
{
  GPtrArray **out = g_new0 (GPtrArray *, n_streams);
  Feeder *f = g_new0 (Feeder, n_streams);
  GThread **threads = g_new0 (GThread *, n_streams);
  guint s;

  for (s = 0; s < n_streams; s++) {
    gst_video_info_set_format (&f[s].info, formats[s], 40 + 8 * s, 30);
    GST_VIDEO_INFO_FPS_N (&f[s].info) = 30;
    f[s].h = make_harness (model, args, &f[s].info);
    f[s].stream = s;
    f[s].n_frames = n_frames[s];
    f[s].eos = TRUE;
    f[s].out = out[s] = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_buffer_unref);
  }
  for (s = 0; s < n_streams; s++)
    threads[s] = g_thread_new ("feeder", feed, &f[s]);
  for (s = 0; s < n_streams; s++)
    g_thread_join (threads[s]);
  for (s = 0; s < n_streams; s++)
    gst_harness_teardown (f[s].h);
  g_free (threads);
  g_free (f);
  return out;
}

static void
free_streams (GPtrArray ** out, guint n_streams)
{
  guint s;

  for (s = 0; s < n_streams; s++)
    g_ptr_array_unref (out[s]);
  g_free (out);
}

/* @got's tensors equal @want's (f32, a batched convolution may sum in
 * another order than a single one). */
static void
assert_close_meta (GstBuffer * want, GstBuffer * got, const gchar * what,
    guint stream, guint i)
{
  GstClinferTensorMeta *mw = gst_buffer_get_clinfer_tensor_meta (want);
  GstClinferTensorMeta *mg = gst_buffer_get_clinfer_tensor_meta (got);
  guint t, n_tensors;

  fail_unless (mw != NULL && mg != NULL, "%s stream %u frame %u: no tensor "
      "meta", what, stream, i);
  n_tensors = gst_clinfer_tensor_meta_get_n_tensors (mw);
  fail_unless_equals_int (gst_clinfer_tensor_meta_get_n_tensors (mg),
      n_tensors);
  for (t = 0; t < n_tensors; t++) {
    const GstClinferTensor *tw = gst_clinfer_tensor_meta_get_tensor (mw, t);
    const GstClinferTensor *tg = gst_clinfer_tensor_meta_get_tensor (mg, t);
    const gfloat *a, *b;
    gsize n, k;

    fail_unless_equals_int (tg->n_dims, tw->n_dims);
    fail_unless_equals_int (tg->dims[0], 1);
    fail_unless_equals_int (g_bytes_get_size (tg->data),
        g_bytes_get_size (tw->data));
    a = g_bytes_get_data (tw->data, &n);
    b = g_bytes_get_data (tg->data, NULL);
    for (k = 0; k < n / sizeof (gfloat); k++)
      fail_unless (fabsf (a[k] - b[k]) <= 1e-4f * (1.f + fabsf (a[k])),
          "%s stream %u frame %u tensor %u value %" G_GSIZE_FORMAT ": %g, "
          "batch-size=1 gives %g", what, stream, i, t, k, b[k], a[k]);
  }
  /* a decoder's regions: as many, with the same boxes */
  fail_unless_equals_int (gst_buffer_get_n_meta (got,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE),
      gst_buffer_get_n_meta (want, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE));
}

/* Streams in batches of @batch against each stream alone with
 * batch-size=1 (both with @common): same frames, same order, same
 * tensors. */
static void
check_against_single (const gchar * model, const gchar * device,
    guint n_streams, guint batch, const gchar * extra,
    const guint * n_frames, const gchar * common)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_BGRx,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_I420
  };
  g_autofree gchar *single_args = g_strdup_printf ("device=%s %s", device,
      common);
  g_autofree gchar *args = g_strdup_printf ("device=%s batch-size=%u "
      "model-instance-id=batch-test %s %s", device, batch, extra, common);
  GPtrArray **want = run_streams (model, n_streams, single_args, n_frames,
      formats);
  GPtrArray **got = run_streams (model, n_streams, args, n_frames,
      formats);
  guint s, i;

  for (s = 0; s < n_streams; s++) {
    fail_unless_equals_int (want[s]->len, n_frames[s]);
    fail_unless_equals_int (got[s]->len, n_frames[s]);
    for (i = 0; i < n_frames[s]; i++) {
      GstBuffer *b = g_ptr_array_index (got[s], i);

      GstBuffer *w = g_ptr_array_index (want[s], i);

      fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * GST_SECOND / 30);
      /* inference-interval: frames without inference on both sides. */
      fail_unless ((gst_buffer_get_clinfer_tensor_meta (w) == NULL)
          == (gst_buffer_get_clinfer_tensor_meta (b) == NULL),
          "%s stream %u frame %u: meta on one run only", args, s, i);
      if (gst_buffer_get_clinfer_tensor_meta (w) != NULL)
        assert_close_meta (w, b, args, s, i);
    }
  }
  free_streams (want, n_streams);
  free_streams (got, n_streams);
}

static const guint same_counts[] = { N_FRAMES, N_FRAMES, N_FRAMES, N_FRAMES };

GST_START_TEST (test_streams_share_batches_cpu)
{
  /* Two streams in batches of 2; four in batches of 4 with two frames of
   * each in flight; three in batches of 2 (batches mix the streams). */
  check_against_single (NULL, "CPU", 2, 2, "", same_counts, "");
  check_against_single (NULL, "CPU", 4, 4, "nireq=2", same_counts, "");
  check_against_single (NULL, "CPU", 3, 2, "nireq=3 batch-timeout=1000",
      same_counts, "");
  /* Every other frame inferred: the rest pass in their place. */
  check_against_single (NULL, "CPU", 2, 2, "nireq=2", same_counts,
      "inference-interval=2");
  check_against_single (NULL, "CPU", 2, 2, "", same_counts,
      "inference-interval=3");
}

GST_END_TEST;

GST_START_TEST (test_streams_share_batches_gpu)
{
  if (!test_have_gpu ()) {
    GST_INFO ("no OpenCL device: the GPU case is not run");
    return;
  }
  check_against_single (NULL, "GPU", 2, 2, "", same_counts, "");
  check_against_single (NULL, "GPU", 3, 4, "nireq=2", same_counts, "");
  check_against_single (NULL, "GPU", 2, 2, "", same_counts,
      "inference-interval=3");
}

GST_END_TEST;

/* One element fills batches from its own frames in flight. */
GST_START_TEST (test_one_element_batches_itself)
{
  static const GstVideoFormat format[] = { GST_VIDEO_FORMAT_BGRx };
  static const guint n[] = { N_FRAMES + 1 };
  GPtrArray **want = run_streams (NULL, 1, "device=CPU", n, format);
  GPtrArray **got = run_streams (NULL, 1, "device=CPU batch-size=4 nireq=4",
      n, format);
  guint i;

  fail_unless_equals_int (got[0]->len, n[0]);
  for (i = 0; i < n[0]; i++)
    assert_close_meta (g_ptr_array_index (want[0], i),
        g_ptr_array_index (got[0], i), "nireq=4 batch-size=4", 0, i);
  free_streams (want, 1);
  free_streams (got, 1);
}

GST_END_TEST;

/* Stream 1 sends two frames and then nothing more (a camera that
 * stopped); stream 0 still gets all its frames, each later batch run by
 * batch-timeout without a frame of stream 1. Were the timeout not to fire,
 * stream 0 would wait forever (the test's timeout fails it). */
GST_START_TEST (test_timeout_when_a_stream_stops)
{
  static const guint counts[] = { N_FRAMES, 2 };

  check_against_single (NULL, "CPU", 2, 2, "batch-timeout=20000", counts, "");
}

GST_END_TEST;

/* Going to NULL with a frame waiting in a batch that waits for a frame
 * that never comes (batch-timeout 60 s) returns at once, leaves nothing
 * behind; the other element then goes on alone. */
GST_START_TEST (test_stop_while_batch_fills)
{
  const gchar *args = "device=CPU batch-size=2 nireq=2 "
      "model-instance-id=stop-test batch-timeout=60000000";
  GstVideoInfo info;
  GstHarness *a, *b;
  GstBuffer *buf;
  gint64 start;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 40, 30);
  a = make_harness (NULL, args, &info);
  b = make_harness (NULL, args, &info);
  fail_unless_equals_int (gst_harness_push (a, stream_frame (&info, 0, 0)),
      GST_FLOW_OK);
  /* The frame is held: its batch waits for a second one. */
  fail_unless (gst_harness_try_pull (a) == NULL);
  start = g_get_monotonic_time ();
  gst_harness_teardown (a);
  /* Not the 60 s of batch-timeout (a generous bound against a hang, not
   * a speed check). */
  fail_unless (g_get_monotonic_time () - start < 30 * G_USEC_PER_SEC);
  /* b's first frame completes the batch a's frame was in (a's place
   * stays taken, its data unread), the next two fill one of their own:
   * no batch waits for the timeout. */
  for (i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (b, stream_frame (&info, 1, i)),
        GST_FLOW_OK);
  fail_unless (gst_harness_push_event (b, gst_event_new_eos ()));
  for (i = 0; i < 3; i++) {
    buf = gst_harness_pull (b);
    fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) != NULL);
    gst_buffer_unref (buf);
  }
  gst_harness_teardown (b);
  fail_unless (g_get_monotonic_time () - start < 30 * G_USEC_PER_SEC);
}

GST_END_TEST;

/* LATENCY: batch-timeout on top of upstream's (and nireq's frames). */
GST_START_TEST (test_latency_query)
{
  GstVideoInfo info;
  GstHarness *h;
  GstClockTime latency;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 40, 30);
  GST_VIDEO_INFO_FPS_N (&info) = 25;
  GST_VIDEO_INFO_FPS_D (&info) = 1;
  h = make_harness (NULL, "device=CPU batch-size=2 nireq=2 batch-timeout=15000",
      &info);
  gst_harness_set_upstream_latency (h, 10 * GST_MSECOND);
  latency = gst_harness_query_latency (h);
  fail_unless_equals_uint64 (latency, 10 * GST_MSECOND + GST_SECOND / 25
      + 15 * GST_MSECOND);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A model whose batch dimension is fixed at 1 is made batch-size by
 * clinfer_model_set_batch (): two streams in batches of 2 give what
 * each gives alone (CPU, and the GPU device when there is one), BlazeFace
 * with its decoder too. */
GST_START_TEST (test_fixed_batch_model_batched)
{
  g_autofree gchar *model = test_data_path ("gst/identity-nchw-f32.onnx");

  g_autofree gchar *blazeface = test_models_path
      ("blazeface/face_detection_front_128x128_barracuda.onnx");

  check_against_single (model, "CPU", 2, 2, "", same_counts, "");
  /* BlazeFace (its Reshapes and channel padding hold the batch) with its
   * decoder, which checks each frame's slice of the batch */
  check_against_single (blazeface, "CPU", 2, 2, "", same_counts,
      "decoder=blazeface");
  if (test_have_gpu ())
    check_against_single (model, "GPU", 2, 2, "", same_counts, "");
}

GST_END_TEST;

/* A batch-1 model whose batch cannot be followed (ctc-synthetic.onnx
 * reduces its frame to a scalar): an error at start naming the node and
 * the batch. */
GST_START_TEST (test_unbatchable_model_refused)
{
  GstElement *e = test_make_clinfer ("ctc-synthetic.onnx",
      "device=CPU batch-size=2");
  g_autofree gchar *message = test_start_expect_error (e);

  fail_unless (strstr (message, "batch-size 2") != NULL, "%s", message);
  fail_unless (strstr (message, "cannot run batches of 2") != NULL, "%s",
      message);
  fail_unless (strstr (message, "'mean'") != NULL, "%s", message);
}

GST_END_TEST;

static Suite *
clinfer_batch_suite (void)
{
  Suite *s = suite_create ("clinfer_batch");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_streams_share_batches_cpu);
  tcase_add_test (tc, test_streams_share_batches_gpu);
  tcase_add_test (tc, test_one_element_batches_itself);
  tcase_add_test (tc, test_timeout_when_a_stream_stops);
  tcase_add_test (tc, test_stop_while_batch_fills);
  tcase_add_test (tc, test_latency_query);
  tcase_add_test (tc, test_fixed_batch_model_batched);
  tcase_add_test (tc, test_unbatchable_model_refused);
  return s;
}

GST_CHECK_MAIN (clinfer_batch);
