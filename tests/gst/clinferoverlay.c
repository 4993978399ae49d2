/* Element tests of clinferoverlay: properties, and boxes, labels and key
 * points drawn into every supported format. */
#include "test-util.h"

#include <math.h>
#include <string.h>

GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("clinferoverlay", NULL);
  guint lw, color;
  gboolean labels, kps;
  gdouble font;

  fail_unless (e != NULL);
  g_object_get (e, "line-width", &lw, "box-color", &color, "draw-labels",
      &labels, "draw-keypoints", &kps, "font-size", &font, NULL);
  fail_unless_equals_int (lw, 2);
  fail_unless_equals_int (color, 0xff00ff00);
  fail_unless (labels && kps);
  fail_unless_equals_float (font, 14.0);
  g_object_set (e, "line-width", 5, "box-color", 0xffff0000, "draw-labels",
      FALSE, "draw-keypoints", FALSE, "font-size", 20.0, NULL);
  g_object_get (e, "line-width", &lw, "box-color", &color, "draw-labels",
      &labels, "draw-keypoints", &kps, "font-size", &font, NULL);
  fail_unless_equals_int (lw, 5);
  fail_unless_equals_int (color, 0xffff0000);
  fail_unless (!labels && !kps);
  fail_unless_equals_float (font, 20.0);
  gst_object_unref (e);
}

GST_END_TEST;

/* Luma of pixel (x, y), or green channel for RGB formats. */
static gint
probe (GstVideoFrame * f, gint x, gint y)
{
  const GstVideoFormatInfo *fi = f->info.finfo;
  const guint8 *d;

  if (GST_VIDEO_FORMAT_INFO_IS_RGB (fi)) {
    d = GST_VIDEO_FRAME_PLANE_DATA (f, 0);
    return d[y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0)
        + x * GST_VIDEO_FRAME_COMP_PSTRIDE (f, 1)
        + GST_VIDEO_FRAME_COMP_POFFSET (f, 1)];
  }
  d = GST_VIDEO_FRAME_PLANE_DATA (f, 0);
  return d[y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0) + x];
}

static void
check_format (GstVideoFormat format, gboolean draw_labels)
{
  GstElement *e = gst_element_factory_make ("clinferoverlay", NULL);
  GstHarness *h;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstBuffer *buf, *out;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *s;
  GValue array = G_VALUE_INIT, v = G_VALUE_INIT;
  gint base, i;

  g_object_set (e, "draw-labels", draw_labels, NULL);
  h = test_harness_for (e);
  gst_video_info_set_format (&info, format, 96, 64);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));

  /* A black frame (video black for YUV) with one face. */
  buf = gst_buffer_new_allocate (NULL, info.size, NULL);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (i = 0; i < (gint) GST_VIDEO_FRAME_N_PLANES (&frame); i++) {
    guint8 value = GST_VIDEO_INFO_IS_YUV (&info) ? (i == 0 ? 16 : 128) : 0;

    memset (GST_VIDEO_FRAME_PLANE_DATA (&frame, i), value,
        GST_VIDEO_FRAME_PLANE_STRIDE (&frame, i)
        * GST_VIDEO_FRAME_COMP_HEIGHT (&frame, i == 0 ? 0 : 1));
  }
  gst_video_frame_unmap (&frame);
  roi = gst_buffer_add_video_region_of_interest_meta (buf, "face", 20, 30, 40,
      24);
  g_value_init (&array, GST_TYPE_ARRAY);
  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, 40.0);
  gst_value_array_append_value (&array, &v);
  g_value_set_double (&v, 42.0);
  gst_value_array_append_value (&array, &v);
  g_value_unset (&v);
  s = gst_structure_new ("detection", "confidence", G_TYPE_DOUBLE, 0.9,
      "label_id", G_TYPE_INT, 0, "label", G_TYPE_STRING, "face", NULL);
  gst_structure_take_value (s, "keypoints", &array);
  gst_video_region_of_interest_meta_add_param (roi, s);

  out = gst_harness_push_and_pull (h, buf);
  fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READ));
  base = probe (&frame, 0, 63);
  /* Box outline (2 px) drawn, inside and outside untouched. */
  fail_unless (probe (&frame, 20, 30) > base + 60, "%s: box corner",
      gst_video_format_to_string (format));
  fail_unless (probe (&frame, 59, 53) > base + 60, "%s: box corner",
      gst_video_format_to_string (format));
  fail_unless (probe (&frame, 30, 36) == base, "%s: inside",
      gst_video_format_to_string (format));
  fail_unless (probe (&frame, 62, 50) == base, "%s: outside",
      gst_video_format_to_string (format));
  /* Key point at (40, 42). */
  fail_unless (probe (&frame, 40, 42) > base + 60, "%s: key point",
      gst_video_format_to_string (format));
  /* Label above the box, on the box colour. */
  fail_unless ((probe (&frame, 22, 28) > base + 60) == draw_labels,
      "%s: label", gst_video_format_to_string (format));
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_draw_every_format)
{
  static const GstVideoFormat formats[] = {
    GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
    GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_ARGB,
    GST_VIDEO_FORMAT_ABGR, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420,
    GST_VIDEO_FORMAT_GRAY8,
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    check_format (formats[i], TRUE);
    check_format (formats[i], FALSE);
  }
}

GST_END_TEST;

/* Boxes partly or wholly outside the frame are clipped, not a crash. */
GST_START_TEST (test_clipping)
{
  GstHarness *h = test_harness_for (gst_element_factory_make ("clinferoverlay",
          NULL));
  GstVideoInfo info;
  GstBuffer *buf;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, 33, 17);
  gst_harness_set_src_caps (h, gst_video_info_to_caps (&info));
  buf = gst_buffer_new_allocate (NULL, info.size, NULL);
  gst_buffer_memset (buf, 0, 0, info.size);
  gst_buffer_add_video_region_of_interest_meta (buf, "thing", 30, 10, 100,
      100);
  gst_buffer_add_video_region_of_interest_meta (buf, "far", 5000, 5000, 10,
      10);
  gst_buffer_add_video_region_of_interest_meta (buf, "huge", 0, 0, G_MAXUINT,
      G_MAXUINT);
  buf = gst_harness_push_and_pull (h, buf);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
clinferoverlay_suite (void)
{
  Suite *s = suite_create ("clinferoverlay");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_draw_every_format);
  tcase_add_test (tc, test_clipping);
  return s;
}

GST_CHECK_MAIN (clinferoverlay);
