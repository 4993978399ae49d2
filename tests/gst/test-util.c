/* Helpers shared by the element tests. */
#include "test-util.h"

#include <gst/app/gstappsink.h>
#include <gst/clinfer/clinfer-tensor-meta.h>
#include <string.h>
#include <clinfer/clinfer.h>

gchar *
test_data_path (const gchar * rel)
{
  const gchar *root = g_getenv ("CLINFER_GST_TEST_DATA");

  fail_unless (root != NULL, "CLINFER_GST_TEST_DATA is not set (run through "
      "meson test)");
  return g_build_filename (root, rel, NULL);
}

gchar *
test_models_path (const gchar * rel)
{
  const gchar *root = g_getenv ("CLINFER_GST_MODELS");

  fail_unless (root != NULL, "CLINFER_GST_MODELS is not set (run through "
      "meson test)");
  return g_build_filename (root, rel, NULL);
}

GstBuffer *
test_make_frame (const GstVideoInfo * info, guint32 seed)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info),
      NULL);
  GstMapInfo map;
  guint32 x = seed * 2654435761u + 1;
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (i = 0; i < map.size; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    map.data[i] = (guint8) (x >> 24);
  }
  gst_buffer_unmap (buf, &map);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
      (gsize *) info->offset, (gint *) info->stride);
  return buf;
}

GstBuffer *
test_load_astronaut (GstVideoFormat format, GstVideoInfo * info)
{
  g_autofree gchar *png = test_data_path ("astronaut.png");
  g_autofree gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! pngdec "
      "! videoconvert ! video/x-raw,format=%s ! appsink name=sink", png,
      gst_video_format_to_string (format));
  GstElement *pipeline = gst_parse_launch (desc, NULL);
  GstElement *sink;
  GstSample *sample;
  GstBuffer *buf;

  fail_unless (pipeline != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
  fail_unless (sample != NULL);
  fail_unless (gst_video_info_from_caps (info, gst_sample_get_caps (sample)));
  buf = gst_buffer_ref (gst_sample_get_buffer (sample));
  gst_sample_unref (sample);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return buf;
}

GstHarness *
test_harness_for (GstElement * element)
{
  GstHarness *h = gst_harness_new_with_element (element, "sink", "src");

  gst_object_unref (element);
  return h;
}

GstMessage *
test_run_pipeline (const gchar * description, guint timeout_s)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (description, &err);
  GstBus *bus;
  GstMessage *msg;

  fail_unless (pipeline != NULL, "%s: %s", description,
      err ? err->message : "?");
  g_clear_error (&err);
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, timeout_s * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  return msg;
}

gdouble
test_roi_confidence (GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *p;
  gdouble confidence = -1;

  p = gst_video_region_of_interest_meta_get_param (roi, "detection");
  if (p == NULL)
    p = gst_video_region_of_interest_meta_get_param (roi, "classification");
  if (p != NULL)
    fail_unless (gst_structure_get_double (p, "confidence", &confidence));
  return confidence;
}

static gint
compare_confidence (gconstpointer a, gconstpointer b)
{
  gdouble ca = test_roi_confidence (*(GstVideoRegionOfInterestMeta **) a);
  gdouble cb = test_roi_confidence (*(GstVideoRegionOfInterestMeta **) b);

  return ca < cb ? 1 : (ca > cb ? -1 : 0);
}

GPtrArray *
test_get_rois (GstBuffer * buf)
{
  GPtrArray *rois = test_list_rois (buf);

  g_ptr_array_sort (rois, compare_confidence);
  return rois;
}

/* A clinfer element with model tests/data/gst/@model (or @model itself
 * when it is absolute) and the properties in @args ("name=value ...",
 * parsed like gst-launch-1.0 does; may be NULL). */
GstElement *
test_make_clinfer (const gchar * model, const gchar * args)
{
  GstElement *e = gst_element_factory_make ("clinfer", NULL);
  gchar **tokens;
  guint i;

  fail_unless (e != NULL, "the clinfer plugin is not found (GST_PLUGIN_PATH)");
  if (model != NULL) {
    gchar *path;

    if (g_path_is_absolute (model)) {
      path = g_strdup (model);
    } else {
      gchar *rel = g_build_filename ("gst", model, NULL);

      path = test_data_path (rel);
      g_free (rel);
    }
    g_object_set (e, "model", path, NULL);
    g_free (path);
  }
  tokens = g_strsplit (args ? args : "", " ", -1);
  for (i = 0; tokens[i] != NULL; i++) {
    gchar *eq = strchr (tokens[i], '=');

    if (tokens[i][0] == '\0')
      continue;
    fail_unless (eq != NULL, "bad argument %s", tokens[i]);
    *eq = '\0';
    gst_util_set_object_arg (G_OBJECT (e), tokens[i], eq + 1);
  }
  g_strfreev (tokens);
  return e;
}

void
test_set_video_caps (GstHarness * h, const GstVideoInfo * info)
{
  gst_harness_set_src_caps (h, gst_video_info_to_caps (info));
}

const GstClinferTensor *
test_get_tensor (GstBuffer * buf, const gchar * name)
{
  GstClinferTensorMeta *meta = gst_buffer_get_clinfer_tensor_meta (buf);

  fail_unless (meta != NULL, "no tensor meta");
  return gst_clinfer_tensor_meta_get_tensor_by_name (meta, name);
}

GstBuffer *
test_push_frame (GstHarness * h, gint width, gint height)
{
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, width, height);
  test_set_video_caps (h, &info);
  return gst_harness_push_and_pull (h, test_make_frame (&info, 7));
}

gboolean
test_have_gpu (void)
{
  ClinferRemoteContext *ctx = clinfer_remote_context_new ("GPU", NULL);

  if (ctx == NULL)
    return FALSE;
  clinfer_remote_context_unref (ctx);
  return TRUE;
}

gchar *
test_push_expect_error (GstHarness * h, const GstVideoInfo * info)
{
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *message;

  gst_element_set_bus (h->element, bus);
  test_set_video_caps (h, info);
  fail_unless (gst_harness_push (h, test_make_frame (info, 1)) != GST_FLOW_OK);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no ERROR message");
  gst_message_parse_error (msg, &err, NULL);
  message = g_strdup (err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  /* The bus's messages hold the element: drop them. */
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (h->element, NULL);
  gst_object_unref (bus);
  return message;
}

GPtrArray *
test_list_rois (GstBuffer * buf)
{
  GPtrArray *a = g_ptr_array_new ();
  gpointer state = NULL;
  GstMeta *m;

  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL)
    g_ptr_array_add (a, m);
  return a;
}

gchar *
test_start_expect_error (GstElement * e)
{
  GstBus *bus = gst_bus_new ();
  GstMessage *msg;
  GError *err = NULL;
  gchar *message;

  gst_object_ref_sink (e);
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (msg != NULL, "no ERROR message");
  gst_message_parse_error (msg, &err, NULL);
  message = g_strdup (err->message);
  g_clear_error (&err);
  gst_message_unref (msg);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  return message;
}
