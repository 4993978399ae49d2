/* read-meta: runs a clinfer pipeline on a PNG and prints the metadata the
 * element attaches to each frame: the output tensors (GstClinferTensorMeta)
 * and the decoded regions of interest (GstVideoRegionOfInterestMeta with a
 * "detection" or "classification" parameter).
 *
 * Build (installed clinfer):
 *   cc read-meta.c -o read-meta $(pkg-config --cflags --libs \
 *       gstreamer-clinfer-1.0 gstreamer-video-1.0)
 * Run:
 *   ./read-meta models/blazeface/face_detection_front_128x128_barracuda.onnx \
 *       tests/data/astronaut.png [decoder]
 * (GST_PLUGIN_PATH=build/gst when the plugin is not installed.)
 */
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/clinfer/clinfer-tensor-meta.h>

static void
print_tensors (GstBuffer * buf)
{
  GstClinferTensorMeta *meta = gst_buffer_get_clinfer_tensor_meta (buf);
  guint i, d;

  if (meta == NULL) {
    g_print ("  no tensor meta (frame skipped by inference-interval?)\n");
    return;
  }
  g_print ("  model %s, %u output tensors\n", meta->model_name,
      gst_clinfer_tensor_meta_get_n_tensors (meta));
  for (i = 0; i < gst_clinfer_tensor_meta_get_n_tensors (meta); i++) {
    const GstClinferTensor *t = gst_clinfer_tensor_meta_get_tensor (meta, i);
    gsize size;
    gconstpointer data = gst_clinfer_tensor_get_data (t, &size);

    g_print ("    %s %s [", t->name,
        gst_clinfer_tensor_data_type_get_name (t->data_type));
    for (d = 0; d < t->n_dims; d++)
      g_print ("%s%" G_GINT64_FORMAT, d ? ", " : "", t->dims[d]);
    g_print ("] %" G_GSIZE_FORMAT " bytes", size);
    if (t->data_type == GST_CLINFER_TENSOR_DATA_TYPE_F32 && size >= 4)
      g_print (", first value %g", ((const gfloat *) data)[0]);
    g_print ("\n");
  }
}

static void
print_regions (GstBuffer * buf)
{
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) meta;
    GstStructure *s;
    const GValue *kp;
    gdouble confidence = 0;
    guint i;

    s = gst_video_region_of_interest_meta_get_param (roi, "detection");
    if (s == NULL)
      s = gst_video_region_of_interest_meta_get_param (roi, "classification");
    if (s != NULL)
      gst_structure_get_double (s, "confidence", &confidence);
    g_print ("  %s confidence %.3f box x=%u y=%u w=%u h=%u\n",
        g_quark_to_string (roi->roi_type), confidence, roi->x, roi->y, roi->w,
        roi->h);
    kp = s != NULL ? gst_structure_get_value (s, "keypoints") : NULL;
    if (kp != NULL && GST_VALUE_HOLDS_ARRAY (kp)) {
      g_print ("    key points:");
      for (i = 0; i + 1 < gst_value_array_get_size (kp); i += 2)
        g_print (" (%.1f, %.1f)",
            g_value_get_double (gst_value_array_get_value (kp, i)),
            g_value_get_double (gst_value_array_get_value (kp, i + 1)));
      g_print ("\n");
    }
  }
}

static GstPadProbeReturn
on_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);

  g_print ("frame pts %" GST_TIME_FORMAT "\n",
      GST_TIME_ARGS (GST_BUFFER_PTS (buf)));
  print_tensors (buf);
  print_regions (buf);
  return GST_PAD_PROBE_OK;
}

int
main (int argc, char **argv)
{
  GstElement *pipeline, *sink;
  GstPad *pad;
  GstBus *bus;
  GstMessage *msg;
  GError *err = NULL;
  gchar *desc;
  int status = 0;

  gst_init (&argc, &argv);
  if (argc < 3) {
    g_printerr ("usage: %s MODEL.onnx IMAGE.png [blazeface|ssd|classification|none]\n",
        argv[0]);
    return 2;
  }
  desc = g_strdup_printf ("filesrc location=\"%s\" ! pngdec ! imagefreeze "
      "num-buffers=2 ! videoconvert ! clinfer model=\"%s\" decoder=%s "
      "! fakesink name=sink", argv[2], argv[1], argc > 3 ? argv[3] : "blazeface");
  pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  if (pipeline == NULL) {
    g_printerr ("%s\n", err->message);
    g_clear_error (&err);
    return 1;
  }

  /* The metas are read where the buffers arrive; any pad downstream of
   * clinfer works (a queue, tee or videoconvert in between keeps them). */
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, NULL, NULL);
  gst_object_unref (pad);
  gst_object_unref (sink);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  bus = gst_element_get_bus (pipeline);
  msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gst_message_parse_error (msg, &err, NULL);
    g_printerr ("error from %s: %s\n", GST_OBJECT_NAME (msg->src),
        err->message);
    g_clear_error (&err);
    status = 1;
  }
  gst_message_unref (msg);
  gst_object_unref (bus);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  return status;
}
