/* clinfer — fuzz target: the clinfer element's property strings, caps and
 * frames. Each input builds one element (the plugin's sources are
 * compiled into this target and registered statically) around one of the
 * small models of tests/data/gst, with the properties, caps and frame
 * layout the input chooses, pushes one frame through a GstHarness and
 * pulls what comes out: pre-processing (every format, any size, any
 * stride), the decoders, the tensor meta; on the CPU device, or on
 * CLINFER_FUZZ_DEVICE (GPU: the OpenCL pre-processing kernel). A refusal
 * (a caps or property error) is fine; a crash, a sanitizer report or a
 * leak is not.
 *
 * Input layout, read front to back (missing bytes read as 0):
 *   u8 model, u8 format, u8 width, u8 height (1..256 each, + u8 scale:
 *   x1..x8 for width), u8 resize-method, u8 decoder, u8 flags
 *   (reverse-channels, mean and scale set, a labels file, GstVideoMeta
 *   strides, nireq=2 with the frame drained at EOS, batch-size=2 with
 *   the frame's batch run at its timeout, inference-region=roi-list),
 *   u8 stride padding, then three strings each of a u8 length and its
 *   bytes: mean-values, scale-values and the labels file's text; with
 *   roi-list, 3 regions of 4 u8 each (x, y, w, h, scaled to the frame,
 *   reaching past it); the rest fills the frame (repeated). */
#include "fuzz-common.h"
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include "gstclinfer.h"

static const char *const model_names[] = {
  "identity-nchw-f32.onnx", "identity-nhwc-u8.onnx", "identity-nchw-f16.onnx",
  "identity-gray.onnx", "identity-nhwc-f32.onnx", "identity-dynamic.onnx",
  "blazeface-synthetic.onnx", "ssd.onnx", "classification-probs.onnx",
  "classification-logits.onnx", "rank2.onnx", "multi-input.onnx",
  /* Batch dimension dynamic: batch-size reaches the batcher. */
  "../dynamic/conv-batch.onnx",
  "yolov5-synthetic.onnx", "yolov8-synthetic.onnx", "ctc-synthetic.onnx",
  "textdet-synthetic.onnx",
};

static const GstVideoFormat formats[] = {
  GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_ARGB,
  GST_VIDEO_FORMAT_ABGR, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
  GST_VIDEO_FORMAT_GRAY8,
  /* not accepted: caps negotiation must refuse them cleanly */
  GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_GRAY16_LE,
};

static char *labels_path;

static void
remove_labels (void)
{
  g_unlink (labels_path);
}

static void
setup (void)
{
  int fd;

  /* Only this plugin, registered statically: no registry at all (the
   * default one in ~/.cache is shared with every other GStreamer process,
   * which may rewrite it while this one reads it: a 16 KB leak in
   * GStreamer's loading of a changed registry showed up twice in parallel
   * ASan runs). */
  g_setenv ("GST_REGISTRY_DISABLE", "yes", TRUE);
  g_setenv ("GST_REGISTRY_FORK", "no", TRUE);
  g_setenv ("GST_PLUGIN_SYSTEM_PATH_1_0", "", TRUE);
  g_setenv ("GST_PLUGIN_PATH_1_0", "", TRUE);
  gst_init (NULL, NULL);
  if (!GST_ELEMENT_REGISTER (clinfer, NULL))
    exit (1);
  fd = g_file_open_tmp ("clinfer-fuzz-labels-XXXXXX", &labels_path, NULL);
  if (fd < 0)
    exit (1);
  close (fd);
  atexit (remove_labels);
}

static char *
take_string (FuzzInput *in)
{
  gsize n;
  const guint8 *p = fuzz_bytes (in, fuzz_u8 (in), &n);

  return g_strndup ((const char *) p, n);
}

/* A frame of @info with the input's remaining bytes (repeated, or zeros),
 * and a GstVideoMeta when @meta (the strides of @info, possibly padded). */
static GstBuffer *
make_frame (const GstVideoInfo *info, gboolean meta, FuzzInput *in)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info),
      NULL);
  GstMapInfo map;

  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = in->size ? in->data[i % in->size] : 0;
  gst_buffer_unmap (buf, &map);
  if (meta)
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
        (gsize *) info->offset, (gint *) info->stride);
  return buf;
}

/* The ERROR message the element posted on @bus into @error, else
 * @fallback. */
static void
take_error (GstBus *bus, const char *fallback, GError **error)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  GError *gerr = NULL;

  if (msg == NULL) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, "%s",
        fallback);
    return;
  }
  gst_message_parse_error (msg, &gerr, NULL);
  g_propagate_error (error, gerr);
  gst_message_unref (msg);
}

gboolean
fuzz_one (const guint8 *data, gsize size, GError **error)
{
  FuzzInput in = { data, size };
  g_autofree char *model = NULL, *mean = NULL, *scale = NULL, *labels = NULL;
  g_autoptr (GstCaps) caps = NULL;
  GstVideoInfo info;
  GstElement *element;
  GstHarness *h;
  GstBuffer *out;
  GstBus *bus;
  GstFlowReturn flow;
  guint8 model_i, format_i, flags, pad;
  guint8 rois[3][4] = { {0} };
  gint width, height;
  const char *resize[] = { "stretch", "letterbox", "crop", "fit-height" };
  const char *decoder[] = { "none", "blazeface", "ssd", "classification",
    "yolo", "ctc", "text-detection"
  };

  if (labels_path == NULL)
    setup ();
  model_i = fuzz_u8 (&in) % G_N_ELEMENTS (model_names);
  format_i = fuzz_u8 (&in) % G_N_ELEMENTS (formats);
  width = fuzz_u8 (&in) + 1;
  height = fuzz_u8 (&in) + 1;
  width *= fuzz_u8 (&in) % 8 + 1;
  const char *resize_method = resize[fuzz_u8 (&in) % G_N_ELEMENTS (resize)];
  const char *decoder_name = decoder[fuzz_u8 (&in) % G_N_ELEMENTS (decoder)];
  flags = fuzz_u8 (&in);
  pad = fuzz_u8 (&in);
  mean = take_string (&in);
  scale = take_string (&in);
  labels = take_string (&in);

  model = g_build_filename (FUZZ_GST_DATA, model_names[model_i], NULL);
  element = gst_element_factory_make ("clinfer", NULL);
  g_object_set (element, "model", model, "threads", 1, "silent", TRUE,
      "device", g_getenv ("CLINFER_FUZZ_DEVICE") ? g_getenv ("CLINFER_FUZZ_DEVICE")
      : "CPU",
      "memory-limit", (guint64) FUZZ_MEMORY_LIMIT,
      "reverse-channels", (flags & 1) != 0,
      /* Two requests in flight: the frame waits for EOS (drain); not
       * with regions, which refuse it at start (the harness needs a
       * start that succeeds). */
      "nireq", (flags & (32 | 64)) && !(flags & 128) ? 2 : 1, NULL);
  if ((flags & 64) && !(flags & 128))
    g_object_set (element, "batch-size", 2, "batch-timeout", (guint64) 1000,
        NULL);
  if (flags & 128) {
    gst_util_set_object_arg (G_OBJECT (element), "inference-region",
        "roi-list");
    for (guint r = 0; r < 3; r++)
      for (guint k = 0; k < 4; k++)
        rois[r][k] = fuzz_u8 (&in);
  }
  gst_util_set_object_arg (G_OBJECT (element), "resize-method", resize_method);
  gst_util_set_object_arg (G_OBJECT (element), "decoder", decoder_name);
  if (*mean || (flags & 2))
    g_object_set (element, "mean-values", mean, NULL);
  if (*scale || (flags & 4))
    g_object_set (element, "scale-values", scale, NULL);
  if (flags & 8) {
    if (!g_file_set_contents (labels_path, labels, -1, NULL))
      abort ();
    g_object_set (element, "labels-file", labels_path, NULL);
  }

  gst_video_info_set_format (&info, formats[format_i], (guint) width,
      (guint) height);
  if (flags & 16) {
    /* Padded rows, as a decoder or camera with aligned strides gives. */
    gsize offset = 0;
    for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
      info.stride[p] += pad;
      info.offset[p] = offset;
      offset += (gsize) info.stride[p]
          * GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (info.finfo, p, height);
    }
    info.size = offset;
  }
  caps = gst_video_info_to_caps (&info);

  /* The element's own bus: its error message is what fuzz_one reports. */
  bus = gst_bus_new ();
  gst_element_set_bus (element, bus);
  /* Settings the element refuses when it starts (batch-size on a model
   * whose batch cannot be followed) fail its state change, which the
   * harness would assert on: started alone first. */
  if (gst_element_set_state (element, GST_STATE_PAUSED)
      == GST_STATE_CHANGE_FAILURE) {
    take_error (bus, "the element did not start", error);
    gst_element_set_state (element, GST_STATE_NULL);
    gst_element_set_bus (element, NULL);
    gst_object_unref (gst_object_ref_sink (element));
    gst_bus_set_flushing (bus, TRUE);
    gst_object_unref (bus);
    return FALSE;
  }
  gst_element_set_state (element, GST_STATE_NULL);
  h = gst_harness_new_with_element (element, "sink", "src");
  gst_object_unref (element);
  gst_harness_set_src_caps (h, g_steal_pointer (&caps));
  {
    GstBuffer *frame = make_frame (&info, (flags & 16) != 0, &in);

    for (guint r = 0; (flags & 128) && r < 3; r++)
      gst_buffer_add_video_region_of_interest_meta (frame, r ? "a" : "b",
          rois[r][0] * (guint) width / 200, rois[r][1] * (guint) height / 200,
          rois[r][2] * (guint) width / 128 + 1,
          rois[r][3] * (guint) height / 128 + 1);
    flow = gst_harness_push (h, frame);
  }
  if (flow == GST_FLOW_OK && (flags & (32 | 64))) {
    /* The frame in flight ends at EOS; an error there is the frame's. */
    gst_harness_push_event (h, gst_event_new_eos ());
    if (gst_bus_have_pending (bus))
      flow = GST_FLOW_ERROR;
  }
  if (flow == GST_FLOW_OK) {
    out = gst_harness_try_pull (h);
    if (out)
      gst_buffer_unref (out);
  } else {
    g_autofree char *what = g_strdup_printf ("pushing the frame gave %s",
        gst_flow_get_name (flow));
    take_error (bus, what, error);
  }
  gst_harness_teardown (h);
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  return flow == GST_FLOW_OK;
}
