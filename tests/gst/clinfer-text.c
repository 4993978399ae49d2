/* Element tests of decoder=ctc on tests/data/gst/ctc-synthetic.onnx, a
 * recogniser's constant [1, 6, 5] softmax output (blank, a, b, c, space;
 * steps a, a, blank, b, space, c): the text "ab c" with confidence 0.7875
 * (the mean best score of the characters kept) in a "text" structure, on
 * a whole-frame region or, with inference-region=roi-list, on each
 * region; threshold above the confidence drops it; without labels-file an
 * error names it. */
#include "test-util.h"

#include <math.h>
#include <string.h>

static gchar *
ctc_args (const gchar * more)
{
  g_autofree gchar *labels = test_data_path ("gst/ctc-labels.txt");

  return g_strdup_printf ("decoder=ctc labels-file=%s %s", labels, more);
}

static void
check_text (GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi, "text");
  gdouble confidence = 0;

  fail_unless (s != NULL, "no text on region %s",
      g_quark_to_string (roi->roi_type));
  fail_unless_equals_string (gst_structure_get_string (s, "text"), "ab c");
  fail_unless (gst_structure_get_double (s, "confidence", &confidence));
  fail_unless (fabs (confidence - 0.7875) < 1e-5, "%g", confidence);
}

GST_START_TEST (test_whole_frame)
{
  g_autofree gchar *args = ctc_args ("");
  GstHarness *h = test_harness_for (test_make_clinfer ("ctc-synthetic.onnx",
          args));
  GstBuffer *out = test_push_frame (h, 64, 16);
  GPtrArray *rois = test_list_rois (out);
  GstVideoRegionOfInterestMeta *roi;

  fail_unless_equals_int (rois->len, 1);
  roi = g_ptr_array_index (rois, 0);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "text");
  fail_unless_equals_int (roi->w, 64);
  fail_unless_equals_int (roi->h, 16);
  check_text (roi);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_on_regions)
{
  g_autofree gchar *args = ctc_args ("inference-region=roi-list "
      "object-class=line");
  GstHarness *h = test_harness_for (test_make_clinfer ("ctc-synthetic.onnx",
          args));
  GstVideoInfo info;
  GstBuffer *buf;
  GPtrArray *rois;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 96, 64);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 2);
  gst_buffer_add_video_region_of_interest_meta (buf, "line", 4, 4, 80, 12);
  gst_buffer_add_video_region_of_interest_meta (buf, "logo", 4, 20, 20, 20);
  gst_buffer_add_video_region_of_interest_meta (buf, "line", 10, 40, 60, 14);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  buf = gst_harness_pull (h);
  rois = test_list_rois (buf);
  /* No new region: the text goes onto the lines, not the logo. */
  fail_unless_equals_int (rois->len, 3);
  for (i = 0; i < rois->len; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);

    if (i == 1)
      fail_unless (gst_video_region_of_interest_meta_get_param (roi,
              "text") == NULL);
    else
      check_text (roi);
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_threshold)
{
  g_autofree gchar *args = ctc_args ("threshold=0.8");
  GstHarness *h = test_harness_for (test_make_clinfer ("ctc-synthetic.onnx",
          args));
  GstBuffer *out = test_push_frame (h, 64, 16);
  GPtrArray *rois = test_list_rois (out);

  fail_unless_equals_int (rois->len, 0);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

GST_START_TEST (test_labels_needed)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("ctc-synthetic.onnx",
          "decoder=ctc"));
  g_autofree gchar *message = NULL;
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 64, 16);
  message = test_push_expect_error (h, &info);
  fail_unless (strstr (message, "labels-file") != NULL, "%s", message);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* decoder=text-detection on textdet-synthetic.onnx (64x32 input, a
 * 128x64 frame): the line at x 8-31, y 4-11 of the map, dilated to 8-32,
 * 4-12, scores (24 x 8 x 0.9) / (25 x 9) = 0.768 and grows by 24 x 8 x
 * 1.6 / 64 = 4.8 a side: (3.2, -0.8)-(36.8, 16.8), twice that in the
 * frame, clipped: x 6, y 0, w 68, h 34, its four corners in "points";
 * the faint line and the speck give nothing; threshold 0.8 drops it. */
GST_START_TEST (test_text_detection)
{
  GstHarness *h = test_harness_for (test_make_clinfer
      ("textdet-synthetic.onnx", "decoder=text-detection"));
  GstBuffer *out = test_push_frame (h, 128, 64);
  GPtrArray *rois = test_list_rois (out);
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *s;
  const GValue *points;
  gdouble confidence = 0;
  static const gdouble corners[8] = { 6, 0, 74, 0, 74, 34, 6, 34 };
  guint k;

  fail_unless_equals_int (rois->len, 1);
  roi = g_ptr_array_index (rois, 0);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "text");
  fail_unless_equals_int (roi->x, 6);
  fail_unless_equals_int (roi->y, 0);
  fail_unless_equals_int (roi->w, 68);
  fail_unless_equals_int (roi->h, 34);
  s = gst_video_region_of_interest_meta_get_param (roi, "detection");
  fail_unless (gst_structure_get_double (s, "confidence", &confidence));
  fail_unless (fabs (confidence - 0.768) < 1e-4, "%g", confidence);
  points = gst_structure_get_value (s, "points");
  fail_unless_equals_int (gst_value_array_get_size (points), 8);
  for (k = 0; k < 8; k++)
    fail_unless (g_value_get_double (gst_value_array_get_value (points, k))
        == corners[k], "corner value %u", k);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  h = test_harness_for (test_make_clinfer ("textdet-synthetic.onnx",
          "decoder=text-detection threshold=0.8"));
  out = test_push_frame (h, 128, 64);
  rois = test_list_rois (out);
  fail_unless_equals_int (rois->len, 0);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
clinfer_text_suite (void)
{
  Suite *s = suite_create ("clinfer_text");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_whole_frame);
  tcase_add_test (tc, test_on_regions);
  tcase_add_test (tc, test_threshold);
  tcase_add_test (tc, test_labels_needed);
  tcase_add_test (tc, test_text_detection);
  return s;
}

GST_CHECK_MAIN (clinfer_text);
