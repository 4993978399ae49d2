/* Element tests of decoder=yolo on tests/data/gst/yolov5-synthetic.onnx
 * ([1, 10, 8]: objectness x class score) and yolov8-synthetic.onnx ([1, 7,
 * 12], columns, no objectness), constant outputs: the boxes, classes and
 * scores of yolo-synthetic-expected.txt (a reference decoder in
 * scripts/gst-expected.py) at thresholds 0.5 and 0.3, with per-class NMS
 * (a box of another class at the same place stays), a box past the
 * input's edge clipped, stretch and letterbox undone; labels from
 * labels-file or class<N>; iou-threshold 0.99 keeps the overlapping box
 * NMS removes at 0.45; a model whose output fits neither layout is
 * refused naming the shapes expected. */
#include "test-util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  gdouble score;
  gint class_id;
  gdouble box[4];               /* model pixels */
} ExpectedBox;

/* The expected boxes of @model at @threshold. */
static GArray *
read_expected (const gchar * model, gdouble threshold)
{
  g_autofree gchar *path = test_data_path ("gst/yolo-synthetic-expected.txt");
  g_autofree gchar *text = NULL;
  g_autofree gchar *key = g_strdup_printf ("%s %.2f:", model, threshold);
  GArray *boxes = g_array_new (FALSE, TRUE, sizeof (ExpectedBox));
  g_auto (GStrv) lines = NULL;
  guint i;

  fail_unless (g_file_get_contents (path, &text, NULL, NULL), "%s", path);
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++) {
    g_auto (GStrv) f = NULL;
    ExpectedBox e;
    guint k;

    if (!g_str_has_prefix (lines[i], key))
      continue;
    /* score class_id x0 y0 x1 y1 */
    f = g_strsplit (g_strstrip (lines[i] + strlen (key)), " ", -1);
    fail_unless (g_strv_length (f) == 6, "%s", lines[i]);
    e.score = g_ascii_strtod (f[0], NULL);
    e.class_id = atoi (f[1]);
    for (k = 0; k < 4; k++)
      e.box[k] = g_ascii_strtod (f[2 + k], NULL);
    g_array_append_val (boxes, e);
  }
  fail_unless (boxes->len > 0, "no expected boxes for %s", key);
  return boxes;
}

/* @model's detections on a @width x @height frame with @resize against
 * the expected ones, mapped to frame pixels (written out per method). */
static void
check_yolo (const gchar * model, gdouble threshold, const gchar * resize,
    gint width, gint height, gboolean labels)
{
  g_autofree gchar *labels_path = test_data_path ("gst/labels.txt");
  g_autofree gchar *args = g_strdup_printf ("decoder=yolo threshold=%.2f "
      "resize-method=%s%s%s", threshold, resize,
      labels ? " labels-file=" : "", labels ? labels_path : "");
  GstHarness *h = test_harness_for (test_make_clinfer (model, args));
  GArray *expected = read_expected (model, threshold);
  gdouble dx0 = 0, dy0 = 0, dw = 64, dh = 64;
  static const gchar *const names[] = { "background", "person", "car" };
  GPtrArray *rois;
  GstBuffer *out;
  guint i, k;

  if (strcmp (resize, "letterbox") == 0) {
    gdouble s = MIN (64.0 / width, 64.0 / height);

    dw = lround (width * s);
    dh = lround (height * s);
    dx0 = (gint) (64 - dw) / 2;
    dy0 = (gint) (64 - dh) / 2;
  }
  /* To frame pixels, clipped; a box left empty (in the letterbox's
   * padding) is not expected. */
  for (i = expected->len; i-- > 0;) {
    ExpectedBox *e = &g_array_index (expected, ExpectedBox, i);

    for (k = 0; k < 4; k++) {
      e->box[k] = k % 2 == 0 ? (e->box[k] - dx0) * width / dw
          : (e->box[k] - dy0) * height / dh;
      e->box[k] = CLAMP (e->box[k], 0, k % 2 == 0 ? width : height);
    }
    if (lround (e->box[2]) <= lround (e->box[0])
        || lround (e->box[3]) <= lround (e->box[1]))
      g_array_remove_index (expected, i);
  }
  out = test_push_frame (h, width, height);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, expected->len);
  for (i = 0; i < rois->len; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);
    ExpectedBox *e = &g_array_index (expected, ExpectedBox, i);
    GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
        "detection");
    g_autofree gchar *fallback = g_strdup_printf ("class%d", e->class_id);
    const gchar *label = labels ? names[e->class_id] : fallback;
    const gdouble *b = e->box;
    gdouble confidence = 0;
    gint label_id = -1;

    fail_unless (s != NULL);
    fail_unless (gst_structure_get_double (s, "confidence", &confidence));
    fail_unless (gst_structure_get_int (s, "label_id", &label_id));
    fail_unless (fabs (confidence - e->score) < 1e-4, "%s box %u: score "
        "%g, expected %g", args, i, confidence, e->score);
    fail_unless_equals_int (label_id, e->class_id);
    fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
    fail_unless_equals_string (g_quark_to_string (roi->roi_type), label);
    fail_unless (fabs (roi->x - b[0]) <= 1 && fabs (roi->y - b[1]) <= 1
        && fabs (roi->x + roi->w - b[2]) <= 1
        && fabs (roi->y + roi->h - b[3]) <= 1, "%s box %u: %u,%u %ux%u, "
        "expected %.1f,%.1f-%.1f,%.1f", args, i, roi->x, roi->y, roi->w,
        roi->h, b[0], b[1], b[2], b[3]);
  }
  g_ptr_array_unref (rois);
  g_array_unref (expected);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_yolov5_layout)
{
  check_yolo ("yolov5-synthetic.onnx", 0.5, "stretch", 64, 64, TRUE);
  check_yolo ("yolov5-synthetic.onnx", 0.3, "stretch", 128, 96, FALSE);
  /* The box of class 2 lies in the padding above the picture: none. */
  check_yolo ("yolov5-synthetic.onnx", 0.5, "letterbox", 160, 80, TRUE);
  check_yolo ("yolov5-synthetic.onnx", 0.3, "letterbox", 60, 120, FALSE);
}

GST_END_TEST;

GST_START_TEST (test_yolov8_layout)
{
  check_yolo ("yolov8-synthetic.onnx", 0.5, "stretch", 64, 64, TRUE);
  check_yolo ("yolov8-synthetic.onnx", 0.3, "stretch", 128, 96, FALSE);
  check_yolo ("yolov8-synthetic.onnx", 0.5, "letterbox", 160, 80, TRUE);
  check_yolo ("yolov8-synthetic.onnx", 0.3, "letterbox", 60, 120, FALSE);
}

GST_END_TEST;

/* iou-threshold 0.99: the box of class 1 NMS removed at 0.45 (IoU 0.69
 * with the better one) stays. */
GST_START_TEST (test_iou_threshold)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("yolov5-synthetic.onnx",
          "decoder=yolo threshold=0.5 iou-threshold=0.99"));
  GstBuffer *out = test_push_frame (h, 64, 64);
  GPtrArray *rois = test_get_rois (out);
  guint i, n_class1 = 0;

  fail_unless_equals_int (rois->len, 4);
  for (i = 0; i < rois->len; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);

    if (strcmp (g_quark_to_string (roi->roi_type), "class1") == 0)
      n_class1++;
  }
  fail_unless_equals_int (n_class1, 2);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* An output of neither layout: refused at caps, naming both. */
GST_START_TEST (test_wrong_output_refused)
{
  GstHarness *h = test_harness_for (test_make_clinfer ("ssd.onnx",
          "decoder=yolo"));
  g_autofree gchar *message = NULL;
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 32, 32);
  message = test_push_expect_error (h, &info);
  fail_unless (strstr (message, "[1, N, 5 + classes]") != NULL
      && strstr (message, "[1, 4 + classes, N]") != NULL, "%s", message);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
clinfer_yolo_suite (void)
{
  Suite *s = suite_create ("clinfer_yolo");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_yolov5_layout);
  tcase_add_test (tc, test_yolov8_layout);
  tcase_add_test (tc, test_iou_threshold);
  tcase_add_test (tc, test_wrong_output_refused);
  return s;
}

GST_CHECK_MAIN (clinfer_yolo);
