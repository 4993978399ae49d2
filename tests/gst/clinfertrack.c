/* Element tests of clinfertrack: objects moving frame to frame keep their
 * object_id (in a "tracking" structure, and in "detection" when the region
 * has one); one hidden for max-age frames comes back with its id, one
 * hidden longer comes back with a new one; two objects crossing keep
 * theirs (best overlaps initial); regions of another type never take an
 * object's id; object-class leaves other types unnumbered; a flush
 * forgets every object; clinferoverlay writes "#<id>" before the label. */
#include "test-util.h"

#include <string.h>

typedef struct
{
  const gchar *type;
  gint x, y, w, h;              /* w 0: the region is not in this frame */
} Box;

static GstHarness *
track_harness (const gchar * args)
{
  GstElement *e = gst_element_factory_make ("clinfertrack", NULL);
  GstVideoInfo info;
  gchar **tokens;
  guint i;
  GstHarness *h;

  fail_unless (e != NULL, "clinfertrack is not found (GST_PLUGIN_PATH)");
  tokens = g_strsplit (args ? args : "", " ", -1);
  for (i = 0; tokens[i] != NULL; i++) {
    gchar *eq = strchr (tokens[i], '=');

    if (eq == NULL)
      continue;
    *eq = '\0';
    gst_util_set_object_arg (G_OBJECT (e), tokens[i], eq + 1);
  }
  g_strfreev (tokens);
  h = test_harness_for (e);
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 320, 240);
  test_set_video_caps (h, &info);
  return h;
}

/* Pushes a frame with the regions of @boxes (w 0 skipped; those with
 * @with_detection get a "detection" structure) and returns each box's
 * object_id (-1: none; 0 for boxes not in the frame). */
static void
push_boxes (GstHarness * h, const Box * boxes, guint n, gint * ids,
    gboolean with_detection)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 320 * 240, NULL);
  GstVideoRegionOfInterestMeta **metas = g_newa (GstVideoRegionOfInterestMeta
      *, n);
  guint i;

  gst_buffer_memset (buf, 0, 0, 320 * 240);
  for (i = 0; i < n; i++) {
    metas[i] = NULL;
    if (boxes[i].w == 0)
      continue;
    metas[i] = gst_buffer_add_video_region_of_interest_meta (buf,
        boxes[i].type, boxes[i].x, boxes[i].y, boxes[i].w, boxes[i].h);
    if (with_detection)
      gst_video_region_of_interest_meta_add_param (metas[i],
          gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, 0.9,
              NULL));
  }
  buf = gst_harness_push_and_pull (h, buf);
  fail_unless (buf != NULL);
  {
    GPtrArray *rois = test_list_rois (buf);
    guint k = 0;

    for (i = 0; i < n; i++) {
      GstVideoRegionOfInterestMeta *roi;
      GstStructure *s;

      ids[i] = 0;
      if (boxes[i].w == 0)
        continue;
      roi = g_ptr_array_index (rois, k++);
      s = gst_video_region_of_interest_meta_get_param (roi, "tracking");
      ids[i] = -1;
      if (s != NULL)
        fail_unless (gst_structure_get_int (s, "object_id", &ids[i]));
      s = gst_video_region_of_interest_meta_get_param (roi, "detection");
      if (s != NULL && ids[i] > 0) {
        gint det_id = -1;

        fail_unless (gst_structure_get_int (s, "object_id", &det_id));
        fail_unless_equals_int (det_id, ids[i]);
      }
    }
    fail_unless_equals_int (k, rois->len);
    g_ptr_array_unref (rois);
  }
  gst_buffer_unref (buf);
}

/* A walks right 6 px a frame, B stands still, C (another type) sits on
 * A's path: A and B keep their ids, C has its own. */
GST_START_TEST (test_moving_objects_keep_ids)
{
  GstHarness *h = track_harness (NULL);
  gint ids[3], initial[3];
  guint f;

  for (f = 0; f < 20; f++) {
    Box boxes[3] = {
      {"person", 10 + 6 * f, 50, 40, 80},
      {"person", 200, 100, 50, 60},
      {"car", 70, 50, 40, 80},
    };

    push_boxes (h, boxes, 3, ids, f % 2 == 0);
    if (f == 0) {
      memcpy (initial, ids, sizeof (ids));
      fail_unless (ids[0] > 0 && ids[1] > 0 && ids[2] > 0);
      fail_unless (ids[0] != ids[1] && ids[1] != ids[2]
          && ids[0] != ids[2]);
    }
    fail_unless_equals_int (ids[0], initial[0]);
    fail_unless_equals_int (ids[1], initial[1]);
    fail_unless_equals_int (ids[2], initial[2]);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Hidden for max-age frames: the same id after; longer: a new one. */
GST_START_TEST (test_occlusion)
{
  GstHarness *h = track_harness ("max-age=3");
  Box seen = { "face", 100, 100, 40, 40 }, hidden = { "face", 0, 0, 0, 0 };
  gint id, initial, later;
  guint f;

  push_boxes (h, &seen, 1, &initial, TRUE);
  fail_unless (initial > 0);
  for (f = 0; f < 3; f++)
    push_boxes (h, &hidden, 1, &id, TRUE);
  seen.x += 4;
  push_boxes (h, &seen, 1, &id, TRUE);
  fail_unless_equals_int (id, initial);
  for (f = 0; f < 4; f++)
    push_boxes (h, &hidden, 1, &id, TRUE);
  push_boxes (h, &seen, 1, &later, TRUE);
  fail_unless (later > 0 && later != initial, "%d after 4 frames away", later);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Two objects passing each other, 4 px a frame towards each other: each
 * matches where it was (its best overlap), not the other. */
GST_START_TEST (test_crossing_objects)
{
  GstHarness *h = track_harness (NULL);
  gint ids[2], initial[2];
  guint f;

  for (f = 0; f < 30; f++) {
    Box boxes[2] = {
      {"person", 40 + 4 * f, 60, 40, 100},
      {"person", 200 - 4 * f, 80, 40, 100},
    };

    push_boxes (h, boxes, 2, ids, TRUE);
    if (f == 0)
      memcpy (initial, ids, sizeof (ids));
    fail_unless_equals_int (ids[0], initial[0]);
    fail_unless_equals_int (ids[1], initial[1]);
  }
  gst_harness_teardown (h);
}

GST_END_TEST;

/* object-class=face: cars get no id. A flush forgets the faces. */
GST_START_TEST (test_object_class_and_flush)
{
  GstHarness *h = track_harness ("object-class=face");
  Box boxes[2] = { {"face", 10, 10, 30, 30}, {"car", 100, 100, 60, 40} };
  GstSegment segment;
  gint ids[2], initial;

  push_boxes (h, boxes, 2, ids, FALSE);
  fail_unless (ids[0] > 0);
  fail_unless_equals_int (ids[1], -1);
  initial = ids[0];
  push_boxes (h, boxes, 2, ids, FALSE);
  fail_unless_equals_int (ids[0], initial);
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  boxes[0].x = 200;
  push_boxes (h, boxes, 2, ids, FALSE);
  /* Ids start again from 1 after a flush. */
  fail_unless_equals_int (ids[0], 1);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Where the label over a face region drawn by @pipeline ends (the last
 * lit column of the band above the box). */
static guint
label_end (const gchar * pipeline)
{
  GstHarness *h = gst_harness_new_parse (pipeline);
  GstVideoInfo info;
  GstBuffer *buf, *out;
  GstMapInfo map;
  guint x, y, end = 0;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, 320, 240);
  test_set_video_caps (h, &info);
  buf = gst_buffer_new_allocate (NULL, 320 * 240, NULL);
  gst_buffer_memset (buf, 0, 0, 320 * 240);
  gst_buffer_add_video_region_of_interest_meta (buf, "face", 20, 100, 60, 60);
  out = gst_harness_push_and_pull (h, buf);
  fail_unless (out != NULL);
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (x = 0; x < 320; x++)
    for (y = 60; y < 98; y++)
      if (map.data[y * 320 + x] != 0)
        end = x;
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return end;
}

/* clinferoverlay writes the id before the label: "#1 face" ends well
 * right of "face". */
GST_START_TEST (test_overlay_draws_id)
{
  guint plain = label_end ("clinferoverlay font-size=20");
  guint tracked = label_end ("clinfertrack ! clinferoverlay font-size=20");

  fail_unless (plain > 20, "no label drawn");
  fail_unless (tracked >= plain + 15, "label ends at %u with an id, %u "
      "without", tracked, plain);
}

GST_END_TEST;

static Suite *
clinfertrack_suite (void)
{
  Suite *s = suite_create ("clinfertrack");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_moving_objects_keep_ids);
  tcase_add_test (tc, test_occlusion);
  tcase_add_test (tc, test_crossing_objects);
  tcase_add_test (tc, test_object_class_and_flush);
  tcase_add_test (tc, test_overlay_draws_id);
  return s;
}

GST_CHECK_MAIN (clinfertrack);
