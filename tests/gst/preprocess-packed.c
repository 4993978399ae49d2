/* The packed RGB to NHWC f32 rows of the CPU pre-processing
 * (row_packed_nhwc() in gst/gstclinferpreprocessavx2.c) give the same
 * bytes as the general AVX2 rows (row_family()) for every packed format,
 * channel order, resize method and odd frame and model sizes. The values
 * themselves are checked against the reference in clinfer.c
 * (test_preprocess_packed_nhwc). Skips without AVX2 + FMA. */
#include "preprocess-direct.h"

#include <gst/check/gstcheck.h>
#include <string.h>

static const GstVideoFormat packed_formats[] = {
  GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_ARGB,
  GST_VIDEO_FORMAT_ABGR,
};

static GstBuffer *
make_frame (const GstVideoInfo * info, guint32 seed)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (info),
      NULL);
  GstMapInfo map;
  gsize i;

  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (i = 0; i < map.size; i++) {
    seed = seed * 1664525u + 1013904223u;
    map.data[i] = seed >> 24;
  }
  gst_buffer_unmap (buf, &map);
  return buf;
}

/* Runs one frame through both rows of the same pre-processing; returns
 * FALSE when the packed rows are not used for this case. */
static gboolean
check_case (GstVideoFormat format, gint fw, gint fh, gint mw, gint mh,
    GstClinferResizeMethod resize, gboolean reverse)
{
  GstVideoInfo info;
  GstClinferPreprocessCpu *self;
  GstBuffer *buf;
  GError *error = NULL;
  gsize size = (gsize) mw * mh * 3 * sizeof (gfloat);
  gpointer general;
  gboolean packed;

  gst_video_info_set_format (&info, format, fw, fh);
  self = test_preprocess_cpu_new (&info, mw, mh, TRUE, resize, 100.f, 50.f,
      reverse, &error);
  fail_unless (self != NULL, "%s", error ? error->message : "");
  packed = self->packed_nhwc;
  buf = make_frame (&info, fw * 131 + fh * 7 + format);
  if (packed) {
    self->packed_nhwc = FALSE;
    fail_unless (gst_clinfer_preprocess_run (&self->parent, buf, NULL));
    general = g_memdup2 (clinfer_tensor_get_data (self->input), size);
    /* Leftovers of the general rows must not hide a packed row that
     * writes nothing. */
    memset (clinfer_tensor_get_data (self->input), 0xff, size);
    self->packed_nhwc = TRUE;
    fail_unless (gst_clinfer_preprocess_run (&self->parent, buf, NULL));
    fail_unless (memcmp (general, clinfer_tensor_get_data (self->input),
            size) == 0, "%s %dx%d -> %dx%d resize %d reverse %d: packed NHWC "
        "rows differ from the general rows",
        gst_video_format_to_string (format), fw, fh, mw, mh, resize, reverse);
    g_free (general);
  }
  gst_buffer_unref (buf);
  gst_clinfer_preprocess_free (&self->parent);
  return packed;
}

GST_START_TEST (test_packed_nhwc_same_bytes_as_general_rows)
{
  static const gint frames[][2] = {
    {1280, 720}, {200, 90}, {90, 200}, {37, 61}, {23, 17}, {9, 7},
  };
  static const gint models[][2] = { {128, 128}, {14, 10}, {61, 33} };
  static const GstClinferResizeMethod resizes[] = {
    GST_CLINFER_RESIZE_STRETCH, GST_CLINFER_RESIZE_LETTERBOX,
    GST_CLINFER_RESIZE_CROP,
  };
  guint f, s, m, r, rev, n_packed = 0;

  if (!gst_clinfer_preprocess_avx2_available ()) {
    GST_INFO ("no AVX2 + FMA: nothing to compare");
    return;
  }
  for (f = 0; f < G_N_ELEMENTS (packed_formats); f++)
    for (s = 0; s < G_N_ELEMENTS (frames); s++)
      for (m = 0; m < G_N_ELEMENTS (models); m++)
        for (r = 0; r < G_N_ELEMENTS (resizes); r++)
          for (rev = 0; rev < 2; rev++)
            n_packed += check_case (packed_formats[f], frames[s][0],
                frames[s][1], models[m][0], models[m][1], resizes[r], rev);
  /* Only where no 8 columns fit the frame do the packed rows not run. */
  GST_INFO ("%u cases through the packed rows", n_packed);
  fail_unless (n_packed * 2 > G_N_ELEMENTS (packed_formats)
      * G_N_ELEMENTS (frames) * G_N_ELEMENTS (models) * 6,
      "only %u cases used the packed rows", n_packed);
}

GST_END_TEST;

static Suite *
preprocess_packed_suite (void)
{
  Suite *s = suite_create ("preprocess-packed");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_packed_nhwc_same_bytes_as_general_rows);
  return s;
}

GST_CHECK_MAIN (preprocess_packed);
