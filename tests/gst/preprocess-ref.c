/* Pre-processing reference shared by the element tests (see
 * preprocess-ref.h). */
#include "preprocess-ref.h"

#include <math.h>
#include <string.h>

const TestFrameCase test_frame_cases[] = {
  {GST_VIDEO_FORMAT_RGB},
  {GST_VIDEO_FORMAT_BGR},
  {GST_VIDEO_FORMAT_RGBx},
  {GST_VIDEO_FORMAT_BGRx},
  {GST_VIDEO_FORMAT_xRGB},
  {GST_VIDEO_FORMAT_xBGR},
  {GST_VIDEO_FORMAT_RGBA},
  {GST_VIDEO_FORMAT_BGRA},
  {GST_VIDEO_FORMAT_ARGB},
  {GST_VIDEO_FORMAT_ABGR},
  {GST_VIDEO_FORMAT_GRAY8},
  {GST_VIDEO_FORMAT_NV12, "bt601", 0.299, 0.114, FALSE},
  {GST_VIDEO_FORMAT_I420, "bt601", 0.299, 0.114, FALSE},
  {GST_VIDEO_FORMAT_NV12, "bt709", 0.2126, 0.0722, FALSE},
  {GST_VIDEO_FORMAT_I420, "1:4:0:0", 0.299, 0.114, TRUE},
};

const TestModelCase test_model_cases[] = {
  {"identity-nchw-f32.onnx", TRUE, 3, 12, 16, CLINFER_TYPE_F32, "stretch",
      "10,20,30", "2,4,8", {10, 20, 30}, {2, 4, 8}, FALSE},
  {"identity-nhwc-f32.onnx", FALSE, 3, 10, 14, CLINFER_TYPE_F32, "letterbox",
      "127.5", "127.5", {127.5, 127.5, 127.5}, {127.5, 127.5, 127.5}, TRUE},
  {"identity-nchw-f16.onnx", TRUE, 3, 8, 10, CLINFER_TYPE_F16, "crop",
      NULL, NULL, {0, 0, 0}, {1, 1, 1}, FALSE},
  {"identity-nhwc-u8.onnx", FALSE, 3, 9, 7, CLINFER_TYPE_U8, "stretch",
      NULL, NULL, {0, 0, 0}, {1, 1, 1}, TRUE},
  {"identity-gray.onnx", TRUE, 1, 8, 8, CLINFER_TYPE_F32, "letterbox",
      "100", "0.5", {100, 100, 100}, {0.5, 0.5, 0.5}, FALSE},
  {"identity-dynamic.onnx", TRUE, 3, 0, 0, CLINFER_TYPE_F32, "crop",
      "1,2,3", "3,2,1", {1, 2, 3}, {3, 2, 1}, FALSE},
};

/* NHWC f32 models, for the packed RGB rows of the CPU path (see
 * test_preprocess_packed_nhwc): both channel orders, every resize method
 * (letterbox and crop offsets), per-channel mean and scale, a model 14
 * wide (8 columns in the AVX2 rows, the rest in the portable loop) and
 * the BlazeFace input. */
const TestModelCase test_nhwc_model_cases[] = {
  {"identity-blazeface-input.onnx", FALSE, 3, 128, 128, CLINFER_TYPE_F32,
      "stretch", "127.5", "127.5", {127.5, 127.5, 127.5}, {127.5, 127.5,
          127.5}, FALSE},
  {"identity-blazeface-input.onnx", FALSE, 3, 128, 128, CLINFER_TYPE_F32,
      "letterbox", "10,20,30", "2,4,8", {10, 20, 30}, {2, 4, 8}, TRUE},
  {"identity-blazeface-input.onnx", FALSE, 3, 128, 128, CLINFER_TYPE_F32,
      "crop", "1,2,3", "3,2,1", {1, 2, 3}, {3, 2, 1}, FALSE},
  {"identity-nhwc-f32.onnx", FALSE, 3, 10, 14, CLINFER_TYPE_F32, "crop",
      "10,20,30", "2,4,8", {10, 20, 30}, {2, 4, 8}, FALSE},
  {"identity-nhwc-f32.onnx", FALSE, 3, 10, 14, CLINFER_TYPE_F32, "stretch",
      "1,2,3", "3,2,1", {1, 2, 3}, {3, 2, 1}, TRUE},
};

const guint test_n_model_cases = G_N_ELEMENTS (test_model_cases);
const guint test_n_nhwc_model_cases = G_N_ELEMENTS (test_nhwc_model_cases);
const guint test_n_frame_cases = G_N_ELEMENTS (test_frame_cases);

/* Byte offsets of R, G, B and the pixel size, written out per format. */
static void
packed_layout (GstVideoFormat f, gint off[3], gint * pstride)
{
  static const struct
  {
    GstVideoFormat f;
    gint r, g, b, ps;
  } table[] = {
    {GST_VIDEO_FORMAT_RGB, 0, 1, 2, 3}, {GST_VIDEO_FORMAT_BGR, 2, 1, 0, 3},
    {GST_VIDEO_FORMAT_RGBx, 0, 1, 2, 4}, {GST_VIDEO_FORMAT_BGRx, 2, 1, 0, 4},
    {GST_VIDEO_FORMAT_xRGB, 1, 2, 3, 4}, {GST_VIDEO_FORMAT_xBGR, 3, 2, 1, 4},
    {GST_VIDEO_FORMAT_RGBA, 0, 1, 2, 4}, {GST_VIDEO_FORMAT_BGRA, 2, 1, 0, 4},
    {GST_VIDEO_FORMAT_ARGB, 1, 2, 3, 4}, {GST_VIDEO_FORMAT_ABGR, 3, 2, 1, 4},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (table); i++) {
    if (table[i].f == f) {
      off[0] = table[i].r;
      off[1] = table[i].g;
      off[2] = table[i].b;
      *pstride = table[i].ps;
      return;
    }
  }
  fail ("no packed layout for %s", gst_video_format_to_string (f));
}

static guint8
px (const GstVideoFrame * f, gint plane, gint x, gint y)
{
  const guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (f, plane);

  return d[y * GST_VIDEO_FRAME_PLANE_STRIDE (f, plane) + x];
}

/* The samples of frame pixel (x, y): R, G, B and BT.601 luma for RGB
 * frames, the value (4 times) for GRAY8, raw Y, U, V (and Y) for YUV. */
static void
ref_samples (const GstVideoFrame * f, gint x, gint y, gdouble s[4])
{
  GstVideoFormat fmt = GST_VIDEO_FRAME_FORMAT (f);
  gint off[3], ps, i;

  if (fmt == GST_VIDEO_FORMAT_GRAY8) {
    s[0] = s[1] = s[2] = s[3] = px (f, 0, x, y);
  } else if (fmt == GST_VIDEO_FORMAT_NV12) {
    s[0] = s[3] = px (f, 0, x, y);
    s[1] = px (f, 1, (x / 2) * 2, y / 2);
    s[2] = px (f, 1, (x / 2) * 2 + 1, y / 2);
  } else if (fmt == GST_VIDEO_FORMAT_I420) {
    s[0] = s[3] = px (f, 0, x, y);
    s[1] = px (f, 1, x / 2, y / 2);
    s[2] = px (f, 2, x / 2, y / 2);
  } else {
    packed_layout (fmt, off, &ps);
    for (i = 0; i < 3; i++) {
      const guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (f, 0);

      s[i] = d[y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0) + x * ps + off[i]];
    }
    s[3] = 0.299 * s[0] + 0.587 * s[1] + 0.114 * s[2];
  }
}

/* Interpolated YUV samples to R, G, B and gray, from the definitions
 * (YUV is converted after interpolation, clamped once). */
static void
ref_yuv_finish (const TestFrameCase * fc, gdouble s[4])
{
  gdouble Y = s[0], U = s[1], V = s[2];
  gint i;

  if (!fc->full_range) {
    Y = (Y - 16) * 255.0 / 219.0;
    U = (U - 128) * 255.0 / 224.0;
    V = (V - 128) * 255.0 / 224.0;
  } else {
    U -= 128;
    V -= 128;
  }
  s[0] = Y + 2 * (1 - fc->kr) * V;
  s[2] = Y + 2 * (1 - fc->kb) * U;
  s[1] = (Y - fc->kr * s[0] - fc->kb * s[2]) / (1 - fc->kr - fc->kb);
  s[3] = Y;
  for (i = 0; i < 4; i++)
    s[i] = CLAMP (s[i], 0, 255);
}

/* Expected model input value at channel @c, row @v, column @u. */
static gdouble
ref_value (const GstVideoFrame * f, const TestFrameCase * fc, const TestModelCase * mc,
    gint mw, gint mh, gint c, gint v, gint u)
{
  gint W = GST_VIDEO_FRAME_WIDTH (f), H = GST_VIDEO_FRAME_HEIGHT (f);
  gdouble sx0 = 0, sy0 = 0, sw = W, sh = H;
  gint dx0 = 0, dy0 = 0, dw = mw, dh = mh;
  gdouble pix = 0;

  if (strcmp (mc->resize, "letterbox") == 0) {
    gdouble s = MIN ((gdouble) mw / W, (gdouble) mh / H);

    dw = CLAMP ((gint) lround (W * s), 1, mw);
    dh = CLAMP ((gint) lround (H * s), 1, mh);
    dx0 = (mw - dw) / 2;
    dy0 = (mh - dh) / 2;
  } else if (strcmp (mc->resize, "crop") == 0) {
    gdouble s = MAX ((gdouble) mw / W, (gdouble) mh / H);

    sw = MIN (mw / s, (gdouble) W);
    sh = MIN (mh / s, (gdouble) H);
    sx0 = (W - sw) / 2;
    sy0 = (H - sh) / 2;
  }

  if (u >= dx0 && u < dx0 + dw && v >= dy0 && v < dy0 + dh) {
    gdouble x = sx0 + (u + 0.5 - dx0) * sw / dw - 0.5;
    gdouble y = sy0 + (v + 0.5 - dy0) * sh / dh - 0.5;
    gint x0, y0, x1, y1, i, k = mc->reverse ? 2 - c : c;
    gdouble fx, fy, a[4], b[4], d[4], e[4], s[4];
    GstVideoFormat fmt = GST_VIDEO_FRAME_FORMAT (f);

    x = CLAMP (x, 0, W - 1);
    y = CLAMP (y, 0, H - 1);
    x0 = (gint) floor (x);
    y0 = (gint) floor (y);
    x1 = MIN (x0 + 1, W - 1);
    y1 = MIN (y0 + 1, H - 1);
    fx = x - x0;
    fy = y - y0;
    ref_samples (f, x0, y0, a);
    ref_samples (f, x1, y0, b);
    ref_samples (f, x0, y1, d);
    ref_samples (f, x1, y1, e);
    for (i = 0; i < 4; i++)
      s[i] = (1 - fy) * ((1 - fx) * a[i] + fx * b[i])
          + fy * ((1 - fx) * d[i] + fx * e[i]);
    if (fmt == GST_VIDEO_FORMAT_NV12 || fmt == GST_VIDEO_FORMAT_I420)
      ref_yuv_finish (fc, s);
    pix = mc->channels == 1 ? s[3] : s[k];
  }
  return (pix - mc->mean_v[c]) / mc->scale_v[c];
}

static gdouble
tensor_value (const GstClinferTensor * t, gsize i)
{
  gconstpointer d = gst_clinfer_tensor_get_data (t, NULL);

  switch (t->data_type) {
    case GST_CLINFER_TENSOR_DATA_TYPE_F32:
      return ((const gfloat *) d)[i];
    case GST_CLINFER_TENSOR_DATA_TYPE_F16:
      return clinfer_half_to_float (((const guint16 *) d)[i]);
    case GST_CLINFER_TENSOR_DATA_TYPE_U8:
      return ((const guint8 *) d)[i];
    default:
      fail ("unexpected tensor type %d", t->data_type);
      return 0;
  }
}

void
test_check_preprocess (const TestFrameCase * fc, const TestModelCase * mc,
    gint width, gint height, const gchar * device)
{
  GstVideoInfo info;
  GstVideoFrame frame;
  GstHarness *h;
  GstElement *e;
  GstBuffer *in, *out;
  const GstClinferTensor *t;
  gint mh, mw, c, v, u, n_bad = 0;
  gdouble max_err = 0, tol;

  gst_video_info_set_format (&info, fc->format, width, height);
  if (fc->colorimetry != NULL)
    fail_unless (gst_video_colorimetry_from_string (&info.colorimetry,
            fc->colorimetry));
  e = test_make_clinfer (mc->model, NULL);
  if (device != NULL)
    g_object_set (e, "device", device, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "resize-method", mc->resize);
  g_object_set (e, "reverse-channels", mc->reverse, "mean-values", mc->mean,
      "scale-values", mc->scale, NULL);
  h = test_harness_for (e);
  test_set_video_caps (h, &info);
  in = test_make_frame (&info, width * 31 + fc->format);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  fail_unless (out != NULL);

  t = test_get_tensor (out, "out");
  fail_unless (t != NULL);
  mh = mc->height ? mc->height : height;
  mw = mc->width ? mc->width : width;
  fail_unless_equals_int (t->n_dims, 4);
  fail_unless_equals_int (t->dims[0], 1);
  fail_unless_equals_int (t->dims[mc->nchw ? 1 : 3], mc->channels);
  fail_unless_equals_int (t->dims[mc->nchw ? 2 : 1], mh);
  fail_unless_equals_int (t->dims[mc->nchw ? 3 : 2], mw);

  fail_unless (gst_video_frame_map (&frame, &info, in, GST_MAP_READ));
  for (c = 0; c < mc->channels; c++) {
    for (v = 0; v < mh; v++) {
      for (u = 0; u < mw; u++) {
        gsize idx = mc->nchw ? ((gsize) c * mh + v) * mw + u
            : ((gsize) v * mw + u) * mc->channels + c;
        gdouble want = ref_value (&frame, fc, mc, mw, mh, c, v, u);
        gdouble got = tensor_value (t, idx);
        gdouble err = fabs (got - want);

        if (mc->type == CLINFER_TYPE_U8) {
          want = CLAMP (round (want), 0, 255);
          err = fabs (got - want);
          tol = 1.0;
        } else if (mc->type == CLINFER_TYPE_F16) {
          tol = 2e-3 * MAX (1.0, fabs (want));
        } else {
          tol = 1e-3 / mc->scale_v[c] + 1e-5 * fabs (want);
        }
        max_err = MAX (max_err, err);
        if (err > tol && n_bad++ < 5)
          GST_ERROR ("%s %s %dx%d: c=%d v=%d u=%d got %f want %f",
              mc->model, gst_video_format_to_string (fc->format), width,
              height, c, v, u, got, want);
      }
    }
  }
  gst_video_frame_unmap (&frame);
  fail_unless (n_bad == 0, "%s on %s %s %dx%d: %d values off (max error %g)",
      mc->model, gst_video_format_to_string (fc->format),
      GST_STR_NULL (fc->colorimetry), width, height, n_bad, max_err);

  gst_buffer_unref (in);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

