/* The clinfer element's time per frame against the same model's inference
 * alone, in one process, with the frames fed three ways:
 *
 * - camera: a ring of --ring page-aligned frames (default 64: 236 MB at
 *   1280x720 BGRx, far more than any cache) handed over as they are, the
 *   way a capture driver's DMA leaves them: in memory, not in the caches,
 *   and no CPU writes on the inference's core;
 * - drawn: one frame rewritten by the CPU before each push, on the
 *   streaming thread (what videotestsrc does: 3.6 MB through the caches
 *   of the core that then infers);
 * - same: one frame, pushed again and again (warm in the caches; what
 *   imagefreeze gives);
 * - videotestsrc: videotestsrc pattern=ball instead of appsrc (its frames
 *   measure as the camera's: they reach the element mostly outside the
 *   caches).
 *
 * The pipeline is appsrc ! clinfer (threads=1 or --threads, CPU,
 * decoder=blazeface by
 * default) ! fakesink; the element's time is from a buffer reaching its
 * sink pad to it leaving its src pad (pad probes, nanosecond clock),
 * median over the frames after the first 20. Inference alone: a request
 * of the same model compiled with as many threads, random input, median of as
 * many runs. Rounds alternate the modes and the inference; the summary is
 * the median per mode of (element / inference - 1) over the rounds.
 *
 *   element-bench [--model M] [--frames N] [--rounds R] [--ring K]
 *       [--modes camera,drawn,same,videotestsrc] [--width W] [--height H]
 *       [--threads N] [--args "decoder=blazeface"]
 *
 * GST_PLUGIN_PATH must reach the clinfer plugin (meson devenv, or the
 * build's gst/ folder). */
#include <clinfer/clinfer.h>
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum
{ MODE_CAMERA, MODE_DRAWN, MODE_SAME, MODE_VIDEOTESTSRC, N_MODES } Mode;
static const gchar *mode_names[N_MODES] = { "camera", "drawn", "same",
  "videotestsrc"
};

typedef struct
{
  Mode mode;
  guint8 **frames;              /* the ring (camera), or frames[0] */
  guint n_frames_ring;
  gsize frame_size;
  gint width, height;
  guint n_pushed, n_wanted;
  GstClockTime *t_in;           /* per frame: reached the sink pad */
  gdouble *elapsed_us;          /* per frame: time in the element */
  guint n_in, n_out;
} Run;

static gint
compare_double (gconstpointer a, gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return x < y ? -1 : x > y;
}

static gdouble
median (gdouble * v, guint n)
{
  qsort (v, n, sizeof (gdouble), compare_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A frame's content: a gradient with a moving square, written row by row
 * as a drawing source does. */
static void
draw (guint8 * data, gint width, gint height, guint t)
{
  gint x, y, sx = (gint) (t * 7 % (guint) (width - 64));
  gint sy = (gint) (t * 3 % (guint) (height - 64));

  for (y = 0; y < height; y++) {
    guint32 *row = (guint32 *) (data + (gsize) y * width * 4);

    for (x = 0; x < width; x++) {
      gboolean in = x >= sx && x < sx + 64 && y >= sy && y < sy + 64;

      row[x] = in ? 0xffffffu : (guint32) ((x + t) & 0xff)
          | ((guint32) (y & 0xff) << 8) | ((guint32) ((x + y) & 0xff) << 16);
    }
  }
}

static void
need_data (GstAppSrc * src, guint length, gpointer user_data)
{
  Run *run = user_data;
  guint8 *data;
  GstBuffer *buf;

  if (run->n_pushed == run->n_wanted) {
    gst_app_src_end_of_stream (src);
    return;
  }
  switch (run->mode) {
    case MODE_CAMERA:
      data = run->frames[run->n_pushed % run->n_frames_ring];
      break;
    case MODE_DRAWN:
      data = run->frames[0];
      draw (data, run->width, run->height, run->n_pushed);
      break;
    default:
      data = run->frames[0];
      break;
  }
  buf = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data,
      run->frame_size, 0, run->frame_size, NULL, NULL);
  GST_BUFFER_PTS (buf) = run->n_pushed * GST_SECOND / 30;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  run->n_pushed++;
  gst_app_src_push_buffer (src, buf);
}

static GstPadProbeReturn
probe_in (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Run *run = user_data;

  /* Frames leave in the order they came. */
  if (run->n_in < run->n_wanted)
    run->t_in[run->n_in++] = gst_util_get_timestamp ();
  return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn
probe_out (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Run *run = user_data;
  GstClockTime now = gst_util_get_timestamp ();

  if (run->n_out < run->n_in)
    run->elapsed_us[run->n_out] = (now - run->t_in[run->n_out]) / 1e3;
  run->n_out++;
  return GST_PAD_PROBE_OK;
}

/* Median µs per frame in the element (frames after the first 20). */
static gint n_threads = 1;

static gdouble
run_pipeline (Run * run, const gchar * model, const gchar * args)
{
  g_autofree gchar *source = run->mode == MODE_VIDEOTESTSRC
      ? g_strdup_printf ("videotestsrc name=src pattern=ball num-buffers=%u "
      "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1",
      run->n_wanted, run->width, run->height)
      : g_strdup_printf ("appsrc name=src format=time "
      "caps=video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
      "max-buffers=1 block=true", run->width, run->height);
  g_autofree gchar *desc = g_strdup_printf ("%s ! clinfer name=infer "
      "model=\"%s\" threads=%d device=CPU %s ! fakesink sync=false", source,
      model, n_threads, args);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);
  GstElement *src, *infer;
  GstAppSrcCallbacks callbacks = { need_data, NULL, NULL, {NULL} };
  GstPad *pad;
  GstMessage *msg;
  GstBus *bus;
  gdouble m;

  if (pipeline == NULL) {
    g_printerr ("element-bench: %s\n", err->message);
    exit (1);
  }
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  infer = gst_bin_get_by_name (GST_BIN (pipeline), "infer");
  if (run->mode != MODE_VIDEOTESTSRC)
    gst_app_src_set_callbacks (GST_APP_SRC (src), &callbacks, run, NULL);
  pad = gst_element_get_static_pad (infer, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe_in, run, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (infer, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, probe_out, run, NULL);
  gst_object_unref (pad);
  run->n_pushed = run->n_in = run->n_out = 0;
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("element-bench: %s\n", err->message);
    exit (1);
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (infer);
  gst_object_unref (pipeline);
  run->n_out = MIN (run->n_out, run->n_in);
  if (run->n_out <= 20) {
    g_printerr ("element-bench: only %u frames came out\n", run->n_out);
    exit (1);
  }
  m = median (run->elapsed_us + 20, run->n_out - 20);
  return m;
}

/* Median µs of @n inferences of @model, n_threads threads, random
 * input. */
static gdouble
inference_us (const gchar * model_path, guint n)
{
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompileConfig) config = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) compiled = NULL;
  g_autoptr (ClinferTensor) input = NULL;
  ClinferRequest *request;
  ClinferPortInfo info;
  GError *err = NULL;
  gdouble *t = g_new (gdouble, n), m;
  gfloat *data;
  gsize i, count;

  model = clinfer_model_read (model_path, &err);
  clinfer_compile_config_set_device (config, "CPU");
  clinfer_compile_config_set_threads (config, n_threads);
  if (model != NULL)
    compiled = clinfer_compile (model, config, &err);
  if (compiled == NULL) {
    g_printerr ("element-bench: %s\n", err->message);
    exit (1);
  }
  request = clinfer_compiled_create_request (compiled, &err);
  clinfer_compiled_get_input (compiled, 0, &info);
  input = clinfer_tensor_new (info.type, &info.shape, &err);
  if (request == NULL || input == NULL || info.type != CLINFER_TYPE_F32) {
    g_printerr ("element-bench: cannot feed %s\n", model_path);
    exit (1);
  }
  data = clinfer_tensor_get_data (input);
  count = clinfer_tensor_get_byte_size (input) / sizeof (gfloat);
  for (i = 0; i < count; i++)
    data[i] = (gfloat) ((i * 2654435761u) % 2001) / 1000.f - 1.f;
  clinfer_request_set_input_by_index (request, 0, input, NULL);
  for (i = 0; i < n + 20; i++) {
    GstClockTime t0 = gst_util_get_timestamp ();

    if (!clinfer_request_infer (request, &err)) {
      g_printerr ("element-bench: %s\n", err->message);
      exit (1);
    }
    if (i >= 20)
      t[i - 20] = (gst_util_get_timestamp () - t0) / 1e3;
  }
  clinfer_request_free (request);
  m = median (t, n);
  g_free (t);
  return m;
}

int
main (int argc, char **argv)
{
  gchar *model = NULL, *modes_arg = NULL, *args = NULL;
  gint frames = 1000, rounds = 5, ring = 64, width = 1280, height = 720;
  GOptionEntry entries[] = {
    {"model", 0, 0, G_OPTION_ARG_FILENAME, &model, "Model (default: BlazeFace "
          "128 from models/)", "M"},
    {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "Frames per run (1000)", "N"},
    {"rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "Rounds (5)", "R"},
    {"ring", 0, 0, G_OPTION_ARG_INT, &ring, "Frames in the camera ring (64)",
        "K"},
    {"modes", 0, 0, G_OPTION_ARG_STRING, &modes_arg, "Modes "
          "(camera,drawn,same,videotestsrc)", "LIST"},
    {"threads", 0, 0, G_OPTION_ARG_INT, &n_threads, "Inference threads, "
          "element and alone (1)", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width, "Frame width (1280)", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height, "Frame height (720)", "H"},
    {"args", 0, 0, G_OPTION_ARG_STRING, &args, "More clinfer properties "
          "(default: decoder=blazeface)", "PROPS"},
    {NULL}
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the clinfer "
      "element's overhead over inference");
  GError *err = NULL;
  gboolean use[N_MODES] = { FALSE, };
  gdouble *overhead[N_MODES], *elem[N_MODES], *inf;
  g_auto (GStrv) names = NULL;
  Run run;
  gint r, i, m;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("element-bench: %s\n", err->message);
    return 2;
  }
  gst_init (&argc, &argv);
  if (model == NULL)
    model = g_strdup ("models/blazeface/face_detection_front_128x128_barracuda.onnx");
  if (args == NULL)
    args = g_strdup ("decoder=blazeface");
  names = g_strsplit (modes_arg ? modes_arg : "camera,drawn,same,videotestsrc",
      ",", -1);
  for (i = 0; names[i] != NULL; i++) {
    for (m = 0; m < N_MODES; m++)
      if (g_strcmp0 (g_strstrip (names[i]), mode_names[m]) == 0)
        use[m] = TRUE;
  }
  if (frames <= 40 || rounds < 1 || ring < 2 || width < 128 || height < 128) {
    g_printerr ("element-bench: expected --frames above 40, --rounds 1 or "
        "more, --ring 2 or more, a frame of 128x128 or more\n");
    return 2;
  }

  memset (&run, 0, sizeof (run));
  run.width = width;
  run.height = height;
  run.frame_size = (gsize) width * height * 4;
  run.n_frames_ring = ring;
  run.frames = g_new0 (guint8 *, ring);
  for (i = 0; i < ring; i++) {
    if (posix_memalign ((void **) &run.frames[i], 4096, run.frame_size) != 0) {
      g_printerr ("element-bench: out of memory for %d frames\n", ring);
      return 1;
    }
    draw (run.frames[i], width, height, i);
  }
  run.n_wanted = frames;
  run.t_in = g_new0 (GstClockTime, frames);
  run.elapsed_us = g_new0 (gdouble, frames);
  for (m = 0; m < N_MODES; m++) {
    overhead[m] = g_new0 (gdouble, rounds);
    elem[m] = g_new0 (gdouble, rounds);
  }
  inf = g_new0 (gdouble, rounds);

  printf ("%dx%d BGRx, %s, %s, threads=%d, %d frames x %d rounds, camera "
      "ring of %d frames (%.0f MB)\n", width, height, model, args, n_threads,
      frames,
      rounds, ring, ring * run.frame_size / 1e6);
  for (r = 0; r < rounds; r++) {
    inf[r] = inference_us (model, frames);
    printf ("round %d: inference %.1f us", r + 1, inf[r]);
    for (m = 0; m < N_MODES; m++) {
      if (!use[m])
        continue;
      run.mode = m;
      elem[m][r] = run_pipeline (&run, model, args);
      overhead[m][r] = (elem[m][r] / inf[r] - 1) * 100;
      printf (", %s %.1f us (%+.1f%%)", mode_names[m], elem[m][r],
          overhead[m][r]);
    }
    printf ("\n");
    fflush (stdout);
  }
  printf ("median over rounds: inference %.1f us", median (inf, rounds));
  for (m = 0; m < N_MODES; m++) {
    gdouble e, o;

    if (!use[m])
      continue;
    /* median() sorts: the first and last are then the extremes. */
    e = median (elem[m], rounds);
    o = median (overhead[m], rounds);
    printf (", %s %.1f us, overhead %.1f%% (%.1f to %.1f)", mode_names[m], e,
        o, overhead[m][0], overhead[m][rounds - 1]);
  }
  printf ("\n");
  return 0;
}
