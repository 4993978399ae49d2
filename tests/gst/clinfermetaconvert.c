/* Element tests of clinfermetaconvert: a frame with regions (a detection
 * with key points and a tracked object id, a classification, text, a
 * region's tensor) and a tensor meta becomes one JSON object with each of
 * them, on the bus (element message clinfer-json) and as one line per
 * frame of the location file, the same text; without include-tensors no
 * tensors; frame numbers count up; a location that cannot be opened fails
 * the start naming the property. tests/gst/test-json-schema.py checks
 * real pipelines' output against docs/clinfer-json.schema.json. */
#include "test-util.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

static GstBuffer *
make_annotated_frame (guint64 pts)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 64 * 48, NULL);
  GstVideoRegionOfInterestMeta *face, *plate;
  GstClinferTensorMeta *tm;
  GValue kp = G_VALUE_INIT, v = G_VALUE_INIT, dims = G_VALUE_INIT;
  static const gfloat values[] = { 0.25f, -1.5f, 3.0f };
  static const gint64 tdims[] = { 1, 3 };
  g_autoptr (GBytes) bytes = g_bytes_new (values, sizeof (values));
  GstStructure *s;
  guint i;

  gst_buffer_memset (buf, 0, 0, 64 * 48);
  GST_BUFFER_PTS (buf) = pts;
  face = gst_buffer_add_video_region_of_interest_meta (buf, "face", 4, 5, 20,
      22);
  gst_value_array_init (&kp, 4);
  g_value_init (&v, G_TYPE_DOUBLE);
  for (i = 0; i < 4; i++) {
    g_value_set_double (&v, 10.5 + i);
    gst_value_array_append_value (&kp, &v);
  }
  g_value_unset (&v);
  s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, 0.875,
      "label_id", G_TYPE_INT, 0, "label", G_TYPE_STRING, "face \"front\"",
      NULL);
  gst_structure_take_value (s, "keypoints", &kp);
  gst_video_region_of_interest_meta_add_param (face, s);
  gst_video_region_of_interest_meta_add_param (face,
      gst_structure_new ("tracking", "object_id", G_TYPE_INT, 7, NULL));
  gst_video_region_of_interest_meta_add_param (face,
      gst_structure_new ("classification", "label", G_TYPE_STRING, "smile",
          "label_id", G_TYPE_INT, 2, "confidence", G_TYPE_DOUBLE, 0.5, NULL));

  plate = gst_buffer_add_video_region_of_interest_meta (buf, "plate", 30, 30,
      20, 8);
  plate->parent_id = face->id;
  gst_video_region_of_interest_meta_add_param (plate,
      gst_structure_new ("text", "text", G_TYPE_STRING, "AB 123",
          "confidence", G_TYPE_DOUBLE, 0.9, NULL));
  gst_value_array_init (&dims, 2);
  g_value_init (&v, G_TYPE_INT64);
  for (i = 0; i < 2; i++) {
    g_value_set_int64 (&v, tdims[i]);
    gst_value_array_append_value (&dims, &v);
  }
  g_value_unset (&v);
  s = gst_structure_new ("tensor", "name", G_TYPE_STRING, "logits", "model",
      G_TYPE_STRING, "ocr", "type", G_TYPE_STRING, "f32", "data",
      G_TYPE_BYTES, bytes, NULL);
  gst_structure_take_value (s, "dims", &dims);
  gst_video_region_of_interest_meta_add_param (plate, s);

  tm = gst_buffer_add_clinfer_tensor_meta (buf, "detector");
  gst_clinfer_tensor_meta_add_tensor (tm, "scores",
      GST_CLINFER_TENSOR_DATA_TYPE_F32, 2, tdims, bytes);
  return buf;
}

static GstHarness *
convert_harness (const gchar * location, gboolean tensors)
{
  GstElement *e = gst_element_factory_make ("clinfermetaconvert", NULL);
  GstVideoInfo info;
  GstHarness *h;

  fail_unless (e != NULL, "clinfermetaconvert is not found");
  g_object_set (e, "location", location, "include-tensors", tensors, NULL);
  h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 64, 48);
  test_set_video_caps (h, &info);
  return h;
}

/* The JSON of the next clinfer-json message on @bus (transfer full). */
static gchar *
pop_json (GstBus * bus)
{
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
  const GstStructure *s;
  gchar *json;

  fail_unless (msg != NULL, "no element message");
  s = gst_message_get_structure (msg);
  fail_unless (gst_structure_has_name (s, "clinfer-json"));
  json = g_strdup (gst_structure_get_string (s, "json"));
  gst_message_unref (msg);
  return json;
}

static JsonObject *
parse (const gchar * json, JsonParser * parser)
{
  GError *err = NULL;

  fail_unless (json_parser_load_from_data (parser, json, -1, &err), "%s: %s",
      err ? err->message : "", json);
  return json_node_get_object (json_parser_get_root (parser));
}

GST_START_TEST (test_regions_and_tensors)
{
  g_autofree gchar *dir = g_dir_make_tmp ("clinfer-json-XXXXXX", NULL);
  g_autofree gchar *path = g_build_filename (dir, "out.jsonl", NULL);
  GstHarness *h = convert_harness (path, TRUE);
  GstBus *bus = gst_bus_new ();
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree gchar *json0 = NULL, *json1 = NULL, *file = NULL;
  g_auto (GStrv) lines = NULL;
  JsonObject *frame, *face, *plate, *t;
  JsonArray *regions, *a;

  gst_element_set_bus (h->element, bus);
  gst_buffer_unref (gst_harness_push_and_pull (h, make_annotated_frame (1000)));
  gst_buffer_unref (gst_harness_push_and_pull (h, make_annotated_frame
          (GST_CLOCK_TIME_NONE)));
  json0 = pop_json (bus);
  json1 = pop_json (bus);

  frame = parse (json0, parser);
  fail_unless_equals_int (json_object_get_int_member (frame, "frame"), 0);
  fail_unless_equals_int (json_object_get_int_member (frame, "pts"), 1000);
  fail_unless_equals_int (json_object_get_int_member (frame, "width"), 64);
  regions = json_object_get_array_member (frame, "regions");
  fail_unless_equals_int (json_array_get_length (regions), 2);
  face = json_array_get_object_element (regions, 0);
  fail_unless_equals_string (json_object_get_string_member (face, "type"),
      "face");
  fail_unless_equals_string (json_object_get_string_member (face, "label"),
      "face \"front\"");
  fail_unless (json_object_get_double_member (face, "confidence") == 0.875);
  fail_unless_equals_int (json_object_get_int_member (face, "object_id"), 7);
  fail_unless_equals_int (json_object_get_int_member (face, "x"), 4);
  fail_unless_equals_int (json_object_get_int_member (face, "h"), 22);
  a = json_object_get_array_member (face, "keypoints");
  fail_unless_equals_int (json_array_get_length (a), 4);
  fail_unless (json_array_get_double_element (a, 3) == 13.5);
  a = json_object_get_array_member (face, "classifications");
  fail_unless_equals_int (json_array_get_length (a), 1);
  fail_unless_equals_string (json_object_get_string_member
      (json_array_get_object_element (a, 0), "label"), "smile");
  plate = json_array_get_object_element (regions, 1);
  fail_unless_equals_int (json_object_get_int_member (plate, "parent_id"),
      json_object_get_int_member (face, "id"));
  fail_unless_equals_string (json_object_get_string_member (plate, "text"),
      "AB 123");
  fail_unless (json_object_get_double_member (plate, "text_confidence")
      == 0.9);
  /* A region without a detection takes its classification's label: the
   * plate has none, so no label. */
  fail_unless (!json_object_has_member (plate, "label"));
  t = json_array_get_object_element (json_object_get_array_member (plate,
          "tensors"), 0);
  fail_unless_equals_string (json_object_get_string_member (t, "name"),
      "logits");
  a = json_object_get_array_member (t, "data");
  fail_unless_equals_int (json_array_get_length (a), 3);
  fail_unless (json_array_get_double_element (a, 1) == -1.5);
  t = json_array_get_object_element (json_object_get_array_member (frame,
          "tensors"), 0);
  fail_unless_equals_string (json_object_get_string_member (t, "model"),
      "detector");
  fail_unless_equals_string (json_object_get_string_member (t, "type"),
      "f32");

  frame = parse (json1, parser);
  fail_unless_equals_int (json_object_get_int_member (frame, "frame"), 1);
  fail_unless (json_object_get_null_member (frame, "pts"));

  /* The file: the same two objects, a line each. */
  gst_harness_teardown (h);
  fail_unless (g_file_get_contents (path, &file, NULL, NULL));
  lines = g_strsplit (file, "\n", -1);
  fail_unless_equals_int (g_strv_length (lines), 3);
  fail_unless_equals_string (lines[0], json0);
  fail_unless_equals_string (lines[1], json1);
  fail_unless_equals_string (lines[2], "");
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
  g_unlink (path);
  g_rmdir (dir);
}

GST_END_TEST;

/* Without include-tensors: no tensors anywhere. */
GST_START_TEST (test_no_tensors)
{
  GstHarness *h = convert_harness (NULL, FALSE);
  GstBus *bus = gst_bus_new ();
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree gchar *json = NULL;
  JsonObject *frame;
  JsonArray *regions;

  gst_element_set_bus (h->element, bus);
  gst_buffer_unref (gst_harness_push_and_pull (h, make_annotated_frame (0)));
  json = pop_json (bus);
  frame = parse (json, parser);
  fail_unless (!json_object_has_member (frame, "tensors"));
  regions = json_object_get_array_member (frame, "regions");
  fail_unless (!json_object_has_member (json_array_get_object_element
          (regions, 1), "tensors"));
  gst_bus_set_flushing (bus, TRUE);
  gst_harness_teardown (h);
  gst_object_unref (bus);
}

GST_END_TEST;

/* A location in a folder that does not exist: the start fails, naming
 * the property. */
GST_START_TEST (test_bad_location)
{
  GstElement *e = gst_element_factory_make ("clinfermetaconvert", NULL);
  g_autofree gchar *message = NULL;

  g_object_set (e, "location", "/nonexistent-folder/out.jsonl", NULL);
  message = test_start_expect_error (e);
  fail_unless (strstr (message, "'location'") != NULL
      && strstr (message, "/nonexistent-folder/out.jsonl") != NULL, "%s",
      message);
}

GST_END_TEST;

static Suite *
clinfermetaconvert_suite (void)
{
  Suite *s = suite_create ("clinfermetaconvert");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_regions_and_tensors);
  tcase_add_test (tc, test_no_tensors);
  tcase_add_test (tc, test_bad_location);
  return s;
}

GST_CHECK_MAIN (clinfermetaconvert);
