/* The engine's frame pre-processing (clinfer/preprocess.h): the geometry
 * of the resize methods, exact values on small frames, every argument
 * check, the AVX2 rows against the portable ones and the packed NHWC rows
 * against the general AVX2 rows (byte for byte) for every format and odd
 * sizes; with --device GPU (exit 77 without one) the OpenCL kernel against
 * the host rows, host planes read in place and frames in remote tensors.
 * The element tests check the values against a naive reference. */
#include <clinfer/clinfer.h>
#include "plan/preprocess-host.h"
#ifdef CLINFER_HAVE_OPENCL
#include "devices/opencl/ocl-preprocess.h"
#endif

#include <math.h>
#include <string.h>

static const char *device = NULL;   /* --device GPU: the OpenCL parts */

static const ClinferPixelFormat all_formats[] = {
  CLINFER_PIXEL_FORMAT_RGB, CLINFER_PIXEL_FORMAT_BGR,
  CLINFER_PIXEL_FORMAT_RGBX, CLINFER_PIXEL_FORMAT_BGRX,
  CLINFER_PIXEL_FORMAT_XRGB, CLINFER_PIXEL_FORMAT_XBGR,
  CLINFER_PIXEL_FORMAT_RGBA, CLINFER_PIXEL_FORMAT_BGRA,
  CLINFER_PIXEL_FORMAT_ARGB, CLINFER_PIXEL_FORMAT_ABGR,
  CLINFER_PIXEL_FORMAT_GRAY8, CLINFER_PIXEL_FORMAT_NV12,
  CLINFER_PIXEL_FORMAT_I420,
};

/* A pseudo-random frame of @info in one allocation, planes one after
 * another, rows padded to @pad bytes past the row; @frame points into
 * the returned memory. */
static guint8 *
make_frame (const ClinferFrameInfo *info, int pad, guint32 seed,
    ClinferFrame *frame, gsize *total)
{
  int n = clinfer_pixel_format_n_planes (info->format), p;
  gsize offset[CLINFER_FRAME_MAX_PLANES], size = 0, i;
  guint8 *data;

  memset (frame, 0, sizeof (*frame));
  for (p = 0; p < n; p++) {
    /* A row's bytes (the size of a plane at stride 0), plus @pad. */
    int stride = (int) clinfer_frame_plane_size (info, p, 0);

    frame->stride[p] = stride + pad;
    offset[p] = size;
    size += clinfer_frame_plane_size (info, p, frame->stride[p]);
  }
  data = g_malloc (size);
  for (i = 0; i < size; i++) {
    seed = seed * 1664525u + 1013904223u;
    data[i] = seed >> 24;
  }
  for (p = 0; p < n; p++)
    frame->data[p] = data + offset[p];
  if (total != NULL)
    *total = size;
  return data;
}

static ClinferPreprocessConfig
make_config (int width, int height, int channels, ClinferLayout layout,
    ClinferElementType type, ClinferResizeMethod resize)
{
  ClinferPreprocessConfig c = { resize, layout, type, width, height, channels,
    {0.f, 0.f, 0.f}, {1.f, 1.f, 1.f}, FALSE, 1
  };

  return c;
}

static gsize
n_values (const ClinferPreprocessConfig *c)
{
  return (gsize) c->width * c->height * c->channels;
}

/* The host tables' output for @frame, as floats. */
static float *
host_values (const ClinferFrameInfo *info, const ClinferPreprocessConfig *c,
    ClinferCpuIsa isa, const ClinferFrame *frame, ClinferPreprocessHost **out)
{
  GError *err = NULL;
  ClinferPreprocessHost *h = clinfer_preprocess_host_new (info, c, isa, &err);
  gsize n = n_values (c), i;
  float *v = g_new (float, n);
  gpointer data;

  g_assert_no_error (err);
  data = g_malloc0 (n * 4);
  clinfer_preprocess_host_run (h, frame, data);
  for (i = 0; i < n; i++) {
    switch (c->type) {
      case CLINFER_TYPE_F16:
        v[i] = clinfer_half_to_float (((guint16 *) data)[i]);
        break;
      case CLINFER_TYPE_U8:
        v[i] = ((guint8 *) data)[i];
        break;
      default:
        v[i] = ((float *) data)[i];
        break;
    }
  }
  g_free (data);
  if (out != NULL)
    *out = h;
  else
    clinfer_preprocess_host_free (h);
  return v;
}

/* ---- geometry ---- */

static void
test_geometry (void)
{
  ClinferPreprocessGeometry g;
  double fx, fy;

  clinfer_preprocess_geometry_init (&g, 1280, 720, 128, 128,
      CLINFER_RESIZE_LETTERBOX);
  g_assert_cmpint (g.dst_w, ==, 128);
  g_assert_cmpint (g.dst_h, ==, 72);
  g_assert_cmpint (g.dst_x, ==, 0);
  g_assert_cmpint (g.dst_y, ==, 28);
  clinfer_preprocess_geometry_model_to_frame (&g, 64, 28, &fx, &fy);
  g_assert_cmpfloat_with_epsilon (fx, 640, 1e-9);
  g_assert_cmpfloat_with_epsilon (fy, 0, 1e-9);
  clinfer_preprocess_geometry_model_to_frame (&g, 128, 100, &fx, &fy);
  g_assert_cmpfloat_with_epsilon (fx, 1280, 1e-9);
  g_assert_cmpfloat_with_epsilon (fy, 720, 1e-9);

  clinfer_preprocess_geometry_init (&g, 1280, 720, 128, 128,
      CLINFER_RESIZE_CROP);
  g_assert_cmpfloat_with_epsilon (g.src_w, 720, 1e-9);
  g_assert_cmpfloat_with_epsilon (g.src_x, 280, 1e-9);
  g_assert_cmpint (g.dst_w, ==, 128);
  clinfer_preprocess_geometry_model_to_frame (&g, 0, 128, &fx, &fy);
  g_assert_cmpfloat_with_epsilon (fx, 280, 1e-9);
  g_assert_cmpfloat_with_epsilon (fy, 720, 1e-9);

  clinfer_preprocess_geometry_init (&g, 640, 480, 320, 320,
      CLINFER_RESIZE_STRETCH);
  clinfer_preprocess_geometry_model_to_frame (&g, 160, 160, &fx, &fy);
  g_assert_cmpfloat_with_epsilon (fx, 320, 1e-9);
  g_assert_cmpfloat_with_epsilon (fy, 240, 1e-9);

  /* fit-height: ceil (48 x 100 / 21) = 229 wide from the left; exact
   * ratios not rounded up; a line too long squeezed to the width. */
  clinfer_preprocess_geometry_init (&g, 100, 21, 320, 48,
      CLINFER_RESIZE_FIT_HEIGHT);
  g_assert_cmpint (g.dst_x, ==, 0);
  g_assert_cmpint (g.dst_y, ==, 0);
  g_assert_cmpint (g.dst_w, ==, 229);
  g_assert_cmpint (g.dst_h, ==, 48);
  clinfer_preprocess_geometry_init (&g, 100, 20, 320, 48,
      CLINFER_RESIZE_FIT_HEIGHT);
  g_assert_cmpint (g.dst_w, ==, 240);
  clinfer_preprocess_geometry_model_to_frame (&g, 240, 48, &fx, &fy);
  g_assert_cmpfloat_with_epsilon (fx, 100, 1e-9);
  g_assert_cmpfloat_with_epsilon (fy, 20, 1e-9);
  clinfer_preprocess_geometry_init (&g, 1000, 20, 320, 48,
      CLINFER_RESIZE_FIT_HEIGHT);
  g_assert_cmpint (g.dst_w, ==, 320);
}

/* fit-height pads with 0 in the model input (the mean), letterbox with
 * black: a 2x2 gray frame into a 4x2 NCHW f32 input, mean 10, scale 2;
 * then the same frame turned half a turn (rotate_180). */
/* @frame through host rows of @c: exactly @want (8 f32 values). */
static void
expect_gray_values (const ClinferFrameInfo *info,
    const ClinferPreprocessConfig *c, const ClinferFrame *frame,
    const float want[8])
{
  GError *err = NULL;
  ClinferPreprocess *pp = clinfer_preprocess_new (NULL, info, c, &err);
  const float *got;
  int i;

  g_assert_no_error (err);
  g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
  g_assert_true (clinfer_preprocess_run (pp, frame, &err));
  got = clinfer_tensor_get_data (clinfer_preprocess_get_tensor (pp));
  for (i = 0; i < 8; i++)
    g_assert_cmpfloat (got[i], ==, want[i]);
  clinfer_preprocess_free (pp);
}

static void
test_fit_height_padding (void)
{
  static const guint8 gray[4] = { 30, 50, 70, 90 };
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_GRAY8, 2, 2 };
  ClinferPreprocessConfig c = make_config (4, 2, 1, CLINFER_LAYOUT_NCHW,
      CLINFER_TYPE_F32, CLINFER_RESIZE_FIT_HEIGHT);
  ClinferFrame frame = { {gray}, {NULL}, {0}, {2} };
  static const float want[8] = { 10, 20, 0, 0, 30, 40, 0, 0 };
  /* Turned half a turn first: [90 70; 50 30], still from the left. */
  static const float turned[8] = { 40, 30, 0, 0, 20, 10, 0, 0 };

  c.mean[0] = 10;
  c.scale[0] = 2;
  expect_gray_values (&info, &c, &frame, want);
  c.rotate_180 = TRUE;
  expect_gray_values (&info, &c, &frame, turned);
}

/* ---- exact values through the public API ---- */

/* A 2x2 BGRx frame into a 2x2 NCHW f32 input (no resize: every tap hits
 * one pixel), mean/scale per channel, both channel orders; then a gray
 * model (BT.601 luma) in NHWC u8. */
static void
test_exact_values (void)
{
  static const guint8 bgrx[2 * 8] = {
    10, 20, 30, 0, 40, 50, 60, 0,
    70, 80, 90, 0, 200, 210, 220, 0,
  };
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_BGRX, 2, 2 };
  ClinferPreprocessConfig c = make_config (2, 2, 3, CLINFER_LAYOUT_NCHW,
      CLINFER_TYPE_F32, CLINFER_RESIZE_STRETCH);
  ClinferFrame frame = { {bgrx}, {NULL}, {0}, {8} };
  GError *err = NULL;
  ClinferPreprocess *pp;
  const float *v;
  int px, rev;

  c.mean[0] = 1;
  c.mean[1] = 2;
  c.mean[2] = 3;
  c.scale[0] = 2;
  c.scale[1] = 4;
  c.scale[2] = 8;
  for (rev = 0; rev < 2; rev++) {
    c.reverse_channels = rev;
    pp = clinfer_preprocess_new (NULL, &info, &c, &err);
    g_assert_no_error (err);
    g_assert_true (g_str_has_prefix (clinfer_preprocess_get_description (pp),
            "host ("));
    /* Not bound yet. */
    g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
    g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (err->message, "bound"));
    g_clear_error (&err);
    g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
    g_assert_null (clinfer_preprocess_get_remote_tensor (pp));
    g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
    g_assert_no_error (err);
    g_assert_cmpuint (clinfer_preprocess_get_bytes_copied (pp), ==, 0);
    v = clinfer_tensor_get_data (clinfer_preprocess_get_tensor (pp));
    for (px = 0; px < 4; px++) {
      const guint8 *p = bgrx + (px / 2) * 8 + (px % 2) * 4;
      float r = p[2], g = p[1], b = p[0];
      float c0 = rev ? b : r, c2 = rev ? r : b;

      g_assert_cmpfloat_with_epsilon (v[px], (c0 - 1) / 2, 1e-5);
      g_assert_cmpfloat_with_epsilon (v[4 + px], (g - 2) / 4, 1e-5);
      g_assert_cmpfloat_with_epsilon (v[8 + px], (c2 - 3) / 8, 1e-5);
    }
    clinfer_preprocess_done (pp);
    clinfer_preprocess_free (pp);
  }

  c = make_config (2, 2, 1, CLINFER_LAYOUT_NHWC, CLINFER_TYPE_U8,
      CLINFER_RESIZE_STRETCH);
  pp = clinfer_preprocess_new (NULL, &info, &c, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
  g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
  {
    const guint8 *u = clinfer_tensor_get_data (clinfer_preprocess_get_tensor
        (pp));

    for (px = 0; px < 4; px++) {
      const guint8 *p = bgrx + (px / 2) * 8 + (px % 2) * 4;

      g_assert_cmpint (u[px], ==, (int) lrintf (0.299f * p[2] + 0.587f * p[1]
              + 0.114f * p[0]));
    }
  }
  clinfer_preprocess_free (pp);
}

/* ---- argument checks ---- */

static void
expect_new_error (const ClinferFrameInfo *info,
    const ClinferPreprocessConfig *c, const char *what)
{
  GError *err = NULL;

  g_assert_null (clinfer_preprocess_new (NULL, info, c, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, what));
  g_clear_error (&err);
}

static void
test_bad_arguments (void)
{
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_NV12, 64, 48 };
  ClinferPreprocessConfig good = make_config (32, 32, 3, CLINFER_LAYOUT_NCHW,
      CLINFER_TYPE_F32, CLINFER_RESIZE_STRETCH), c;
  ClinferFrameInfo bad_info = info;
  ClinferFrame frame;
  g_autofree guint8 *data = NULL;
  GError *err = NULL;
  ClinferPreprocess *pp;

  c = good;
  c.channels = 2;
  expect_new_error (&info, &c, "channels: expected 1 or 3");
  c = good;
  c.width = 0;
  expect_new_error (&info, &c, "model input size");
  c = good;
  c.type = CLINFER_TYPE_I64;
  expect_new_error (&info, &c, "type: expected f32, f16 or u8");
  c = good;
  c.scale[1] = 0;
  expect_new_error (&info, &c, "scale other than 0");
  c = good;
  c.mean[2] = NAN;
  expect_new_error (&info, &c, "finite");
  c = good;
  c.layout = 7;
  expect_new_error (&info, &c, "layout");
  c = good;
  c.resize = 9;
  expect_new_error (&info, &c, "resize");
  bad_info.format = 99;
  expect_new_error (&bad_info, &good, "frame format");
  bad_info = info;
  bad_info.height = 0;
  expect_new_error (&bad_info, &good, "frame size");
  bad_info.height = 40000;
  expect_new_error (&bad_info, &good, "frame size");

  /* Frames: a plane missing, a stride shorter than a row. */
  pp = clinfer_preprocess_new (NULL, &info, &good, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
  data = make_frame (&info, 0, 1, &frame, NULL);
  g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
  frame.data[1] = NULL;
  g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "plane 1"));
  g_clear_error (&err);
  frame.data[1] = data;
  frame.stride[0] = 63;
  g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_nonnull (strstr (err->message, "plane 0: stride 63"));
  g_clear_error (&err);
  clinfer_preprocess_free (pp);
}

/* ---- batched inputs ---- */

/* Item @item of the batched input (@host, or @remote read back) as
 * floats. */
static float *
batch_item_values (ClinferTensor *host, ClinferRemoteTensor *remote,
    const ClinferPreprocessConfig *c, guint item)
{
  g_autoptr (ClinferTensor) copy = NULL;
  GError *err = NULL;
  gsize n = n_values (c), i, size = clinfer_element_type_size (c->type);
  const guint8 *raw;
  float *v = g_new (float, n);

  if (remote != NULL) {
    copy = clinfer_tensor_new (c->type, clinfer_remote_tensor_get_shape
        (remote), &err);
    g_assert_no_error (err);
    g_assert_true (clinfer_remote_tensor_read (remote, copy, &err));
    g_assert_no_error (err);
    host = copy;
  }
  raw = (const guint8 *) clinfer_tensor_get_const_data (host) + item * n * size;
  for (i = 0; i < n; i++)
    v[i] = c->type == CLINFER_TYPE_F32 ? ((const float *) raw)[i]
        : c->type == CLINFER_TYPE_F16
        ? clinfer_half_to_float (((const guint16 *) raw)[i]) : raw[i];
  return v;
}

/* @pp refuses to write an item of a batch input made for @other,
 * naming @what. */
static void
expect_item_refused (ClinferCompiled *compiled, const ClinferFrameInfo *info,
    const ClinferPreprocessConfig *other, ClinferPreprocess *pp,
    const ClinferFrame *frame, const char *what)
{
  ClinferPreprocess *pp_other = clinfer_preprocess_new (compiled, info, other,
      NULL);
  ClinferTensor *wrong = NULL;
  ClinferRemoteTensor *remote_wrong = NULL;
  GError *err = NULL;

  g_assert_nonnull (pp_other);
  g_assert_true (clinfer_preprocess_new_batch_input (pp_other, 3, &wrong,
          &remote_wrong, &err));
  g_assert_false (clinfer_preprocess_run_item (pp, frame, wrong,
          remote_wrong, 0, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  if (strstr (err->message, what) == NULL)
    g_error ("expected \"%s\" in: %s", what, err->message);
  g_clear_error (&err);
  clinfer_preprocess_free (pp_other);
  g_clear_pointer (&wrong, clinfer_tensor_unref);
  g_clear_pointer (&remote_wrong, clinfer_remote_tensor_unref);
}

/* Two pre-processings of different frames (formats, sizes) fill items of
 * one batched input, each item equal to the host rows' run on its frame;
 * on @compiled's device (NULL: the host rows). Then the errors: an item
 * past the batch, an input of another shape or type. */
static void
check_batch_items (ClinferCompiled *compiled, ClinferElementType type)
{
  ClinferFrameInfo infos[2] = {
    {CLINFER_PIXEL_FORMAT_BGRX, 45, 31, CLINFER_COLOR_MATRIX_BT601, FALSE},
    {CLINFER_PIXEL_FORMAT_NV12, 64, 48, CLINFER_COLOR_MATRIX_BT709, TRUE},
  };
  static const guint items[2] = { 2, 0 };
  ClinferPreprocessConfig c = make_config (20, 14, 3, CLINFER_LAYOUT_NCHW,
      type, CLINFER_RESIZE_LETTERBOX);
  ClinferPreprocessConfig other = c;
  ClinferPreprocess *pps[2];
  g_autoptr (ClinferTensor) input = NULL, wrong = NULL;
  ClinferRemoteTensor *remote = NULL, *remote_wrong = NULL;
  float tol = type == CLINFER_TYPE_U8 ? 1.f
      : type == CLINFER_TYPE_F16 ? 0.25f : 2e-3f;
  GError *err = NULL;
  ClinferFrame frames[2];
  guint8 *data[2];
  guint k;
  gsize i;

  for (k = 0; k < 2; k++) {
    pps[k] = clinfer_preprocess_new (compiled, &infos[k], &c, &err);
    g_assert_no_error (err);
    data[k] = make_frame (&infos[k], 5, 11 + k, &frames[k], NULL);
  }
  g_assert_true (clinfer_preprocess_new_batch_input (pps[0], 3, &input,
          &remote, &err));
  g_assert_no_error (err);
  g_assert_true ((input == NULL) == (compiled != NULL));
  {
    const ClinferShape *shape = input != NULL
        ? clinfer_tensor_get_shape (input)
        : clinfer_remote_tensor_get_shape (remote);
    g_assert_cmpint (shape->rank, ==, 4);
    g_assert_cmpint (shape->dims[0], ==, 3);
    g_assert_cmpint (shape->dims[1], ==, 3);
    g_assert_cmpint (shape->dims[2], ==, 14);
    g_assert_cmpint (shape->dims[3], ==, 20);
  }
  for (k = 0; k < 2; k++) {
    g_assert_true (clinfer_preprocess_run_item (pps[k], &frames[k], input,
            remote, items[k], &err));
    g_assert_no_error (err);
  }
  for (k = 0; k < 2; k++) {
    g_autofree float *want = NULL, *got = NULL;

    clinfer_preprocess_done (pps[k]);
    want = host_values (&infos[k], &c, CLINFER_CPU_ISA_GENERIC, &frames[k],
        NULL);
    got = batch_item_values (input, remote, &c, items[k]);
    for (i = 0; i < n_values (&c); i++)
      if (fabsf (want[i] - got[i]) > tol)
        g_error ("frame %u in item %u: value %" G_GSIZE_FORMAT ": %g, "
            "expected %g", k, items[k], i, got[i], want[i]);
  }

  /* An item past the batch. */
  g_assert_false (clinfer_preprocess_run_item (pps[0], &frames[0], input,
          remote, 3, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "item 3"));
  g_clear_error (&err);
  /* Another item shape (height 16), then another type. */
  other.height = 16;
  expect_item_refused (compiled, &infos[0], &other, pps[0], &frames[0],
      "shape ?x3x14x20");
  other = c;
  other.type = type == CLINFER_TYPE_F32 ? CLINFER_TYPE_U8 : CLINFER_TYPE_F32;
  expect_item_refused (compiled, &infos[0], &other, pps[0], &frames[0],
      clinfer_element_type_name (type));

  if (compiled != NULL) {
    /* The device's pre-processing also fills a host batch (host rows). */
    g_autoptr (ClinferTensor) host = clinfer_tensor_new (type,
        clinfer_remote_tensor_get_shape (remote), &err);
    g_autofree float *want = NULL, *got = NULL;

    g_assert_no_error (err);
    g_assert_true (clinfer_preprocess_run_item (pps[1], &frames[1], host,
            NULL, 1, &err));
    g_assert_no_error (err);
    want = host_values (&infos[1], &c, CLINFER_CPU_ISA_GENERIC, &frames[1],
        NULL);
    got = batch_item_values (host, NULL, &c, 1);
    for (i = 0; i < n_values (&c); i++)
      g_assert_cmpfloat_with_epsilon (want[i], got[i], tol);
  } else {
    /* Host rows refuse a remote input: none to make without a device;
     * the batch size is checked. */
    g_assert_false (clinfer_preprocess_new_batch_input (pps[0], 0, &wrong,
            &remote_wrong, &err));
    g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
    g_clear_error (&err);
  }
  for (k = 0; k < 2; k++) {
    clinfer_preprocess_free (pps[k]);
    g_free (data[k]);
  }
  g_clear_pointer (&remote, clinfer_remote_tensor_unref);
}

static void
test_batch_items (void)
{
  check_batch_items (NULL, CLINFER_TYPE_F32);
  check_batch_items (NULL, CLINFER_TYPE_U8);
}

/* ---- the AVX2 rows ---- */

static gboolean
have_avx2_rows (void)
{
  return clinfer_preprocess_host_has_avx2 ();
}

/* The AVX2 rows give the portable rows' values (up to FMA rounding) for
 * every format, layout, type and resize method, odd sizes included. */
static void
test_avx2_rows_match_portable (void)
{
  static const int frames[][2] = { {1280, 720}, {37, 61}, {23, 17}, {9, 7} };
  static const int models[][2] = { {128, 128}, {14, 10}, {61, 33} };
  static const ClinferElementType types[] = { CLINFER_TYPE_F32,
    CLINFER_TYPE_F16, CLINFER_TYPE_U8
  };
  guint f, s, m, t, r, l, n_simd = 0, n_cases = 0;

  if (!have_avx2_rows ()) {
    g_test_skip ("no AVX2 + FMA (or CLINFER_CPU_ISA=generic)");
    return;
  }
  for (f = 0; f < G_N_ELEMENTS (all_formats); f++)
    for (s = 0; s < G_N_ELEMENTS (frames); s++)
      for (m = 0; m < G_N_ELEMENTS (models); m++)
        for (t = 0; t < G_N_ELEMENTS (types); t++)
          for (r = 0; r <= CLINFER_RESIZE_FIT_HEIGHT; r++)
            for (l = 0; l < 2; l++) {
              ClinferFrameInfo info = { all_formats[f], frames[s][0],
                frames[s][1], CLINFER_COLOR_MATRIX_BT709, r == 1
              };
              ClinferPreprocessConfig c = make_config (models[m][0],
                  models[m][1], 3, l, types[t], r);
              ClinferPreprocessHost *h;
              ClinferFrame frame;
              g_autofree guint8 *data = NULL;
              g_autofree float *portable = NULL, *simd = NULL;
              gsize i, n = n_values (&c);
              float tol = types[t] == CLINFER_TYPE_U8 ? 1.f
                  : types[t] == CLINFER_TYPE_F16 ? 0.25f : 2e-3f;

              c.mean[0] = 100;
              c.scale[0] = 0.5f;
              data = make_frame (&info, 5, f * 31 + s * 7 + m, &frame, NULL);
              portable = host_values (&info, &c, CLINFER_CPU_ISA_GENERIC,
                  &frame, NULL);
              simd = host_values (&info, &c, CLINFER_CPU_ISA_AVX2, &frame,
                  &h);
              n_simd += h->use_simd;
              n_cases++;
              clinfer_preprocess_host_free (h);
              for (i = 0; i < n; i++)
                if (fabsf (portable[i] - simd[i]) > tol)
                  g_error ("format %d %dx%d -> %dx%d type %d resize %u "
                      "layout %u: value %" G_GSIZE_FORMAT ": portable %g, "
                      "avx2 %g", all_formats[f], frames[s][0], frames[s][1],
                      models[m][0], models[m][1], types[t], r, l, i,
                      portable[i], simd[i]);
            }
  /* Only where no 8 columns fit the frame do the AVX2 rows not run. */
  g_assert_cmpuint (n_simd * 4, >, n_cases * 3);
}

/* The packed RGB to NHWC f32 rows give the same bytes as the general AVX2
 * rows for every packed format, channel order, resize method and odd
 * frame and model sizes. */
static void
test_packed_nhwc_same_bytes (void)
{
  static const int frames[][2] = {
    {1280, 720}, {200, 90}, {90, 200}, {37, 61}, {23, 17}, {9, 7},
  };
  static const int models[][2] = { {128, 128}, {14, 10}, {61, 33} };
  guint f, s, m, r, rev, n_packed = 0, n_cases = 0;

  if (!have_avx2_rows ()) {
    g_test_skip ("no AVX2 + FMA (or CLINFER_CPU_ISA=generic)");
    return;
  }
  for (f = 0; f < 10; f++)      /* the packed RGB formats */
    for (s = 0; s < G_N_ELEMENTS (frames); s++)
      for (m = 0; m < G_N_ELEMENTS (models); m++)
        for (r = 0; r <= CLINFER_RESIZE_FIT_HEIGHT; r++)
          for (rev = 0; rev < 2; rev++) {
            ClinferFrameInfo info = { all_formats[f], frames[s][0],
              frames[s][1]
            };
            ClinferPreprocessConfig c = make_config (models[m][0],
                models[m][1], 3, CLINFER_LAYOUT_NHWC, CLINFER_TYPE_F32, r);
            ClinferPreprocessHost *h;
            ClinferFrame frame;
            GError *err = NULL;
            g_autofree guint8 *data = NULL;
            gsize size = n_values (&c) * sizeof (float);
            g_autofree guint8 *general = g_malloc (size);
            g_autofree guint8 *packed = g_malloc (size);
            guint k;

            for (k = 0; k < 3; k++) {
              c.mean[k] = 100.f;
              c.scale[k] = 50.f;
            }
            c.reverse_channels = rev;
            h = clinfer_preprocess_host_new (&info, &c, CLINFER_CPU_ISA_AVX2,
                &err);
            g_assert_no_error (err);
            data = make_frame (&info, 0, frames[s][0] * 131 + frames[s][1] * 7
                + f, &frame, NULL);
            n_cases++;
            if (h->packed_nhwc) {
              n_packed++;
              h->packed_nhwc = FALSE;
              clinfer_preprocess_host_run (h, &frame, general);
              /* Leftovers of the general rows must not hide a packed row
               * that writes nothing. */
              memset (packed, 0xff, size);
              h->packed_nhwc = TRUE;
              clinfer_preprocess_host_run (h, &frame, packed);
              if (memcmp (general, packed, size) != 0)
                g_error ("format %d %dx%d -> %dx%d resize %u reverse %u: "
                    "packed NHWC rows differ from the general rows",
                    all_formats[f], frames[s][0], frames[s][1], models[m][0],
                    models[m][1], r, rev);
            }
            clinfer_preprocess_host_free (h);
          }
  g_assert_cmpuint (n_packed * 2, >, n_cases);
}

/* ---- OpenCL ---- */

static ClinferCompiled *
compile_on (const char *dev)
{
  GError *err = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("CLINFER_SOURCE_ROOT"),
      "tests", "data", "gst", "identity-nchw-f32.onnx", NULL);
  g_autoptr (ClinferModel) model = clinfer_model_read (path, &err);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  ClinferCompiled *compiled;

  g_assert_no_error (err);
  clinfer_compile_config_set_device (cfg, dev);
  compiled = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  return compiled;
}

static float *
remote_values (ClinferRemoteTensor *t, const ClinferPreprocessConfig *c)
{
  return batch_item_values (NULL, t, c, 0);
}

/* The kernel gives the host rows' values for every format, layout, type
 * and resize method; the frame in host memory or in a remote tensor. */
static void
test_gpu_matches_host (void)
{
  g_autoptr (ClinferCompiled) compiled = compile_on (device);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (compiled);
  static const ClinferElementType types[] = { CLINFER_TYPE_F32,
    CLINFER_TYPE_F16, CLINFER_TYPE_U8
  };
  guint f, t, r, l, in_remote;

  for (f = 0; f < G_N_ELEMENTS (all_formats); f++)
    for (t = 0; t < G_N_ELEMENTS (types); t++)
      for (r = 0; r <= CLINFER_RESIZE_FIT_HEIGHT; r++)
        for (l = 0; l < 2; l++)
          for (in_remote = 0; in_remote < 2; in_remote++) {
            ClinferFrameInfo info = { all_formats[f], 45, 31,
              CLINFER_COLOR_MATRIX_BT601, FALSE
            };
            ClinferPreprocessConfig c = make_config (20, 14, f == 10 ? 1 : 3,
                l, types[t], r);
            ClinferFrame frame;
            GError *err = NULL;
            gsize total, i, n = n_values (&c);
            g_autofree guint8 *data = make_frame (&info, 3, f * 7 + t, &frame,
                &total);
            g_autofree float *want = NULL, *got = NULL;
            ClinferRemoteTensor *remote = NULL;
            ClinferPreprocess *pp;
            float tol = types[t] == CLINFER_TYPE_U8 ? 1.f
                : types[t] == CLINFER_TYPE_F16 ? 0.25f : 2e-3f;
            int p;

            /* Half the cases turned half a turn (every format, method
             * and layout gets both). */
            c.rotate_180 = (f + r + l + in_remote) % 2;
            want = host_values (&info, &c, CLINFER_CPU_ISA_GENERIC, &frame,
                NULL);
            pp = clinfer_preprocess_new (compiled, &info, &c, &err);
            g_assert_no_error (err);
            g_assert_true (g_str_has_prefix
                (clinfer_preprocess_get_description (pp), "GPU kernel on "));
            g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
            g_assert_null (clinfer_preprocess_get_tensor (pp));
            if (in_remote) {
              ClinferShape shape = { 1, {(int64_t) total} };

              remote = clinfer_remote_context_create_tensor (ctx,
                  CLINFER_TYPE_U8, &shape, &err);
              g_assert_no_error (err);
              {
                g_autoptr (ClinferTensor) bytes = clinfer_tensor_new_wrapped
                    (CLINFER_TYPE_U8, &shape, NULL, data, NULL, NULL, &err);

                g_assert_no_error (err);
                g_assert_true (clinfer_remote_tensor_write (remote, bytes,
                        &err));
              }
              for (p = 0; p < CLINFER_FRAME_MAX_PLANES; p++) {
                if (frame.data[p] == NULL)
                  continue;
                frame.offset[p] = frame.data[p] - data;
                frame.data[p] = NULL;
                frame.remote[p] = remote;
              }
            }
            g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
            g_assert_no_error (err);
            clinfer_preprocess_done (pp);
            got = remote_values (clinfer_preprocess_get_remote_tensor (pp),
                &c);
            for (i = 0; i < n; i++)
              if (fabsf (want[i] - got[i]) > tol)
                g_error ("format %d type %d resize %u layout %u remote %u: "
                    "value %" G_GSIZE_FORMAT ": host %g, GPU %g",
                    all_formats[f], types[t], r, l, in_remote, i, want[i],
                    got[i]);
            clinfer_preprocess_free (pp);
            if (remote != NULL)
              clinfer_remote_tensor_unref (remote);
          }
}

#ifdef CLINFER_HAVE_OPENCL
/* What crosses to the device per frame (bytes-copied): nothing where the
 * device shares host memory (the planes are read in place); elsewhere the
 * model input the host rows wrote, not the frame (run with
 * CLINFER_OPENCL_DISCRETE=1 on PoCL: test preprocess-gpu-discrete); never
 * anything for a frame already in a remote tensor. */
static void
test_gpu_bytes_copied (void)
{
  g_autoptr (ClinferCompiled) compiled = compile_on (device);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (compiled);
  OclCore *core = ((OclDevice *) ctx->device)->core;
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_BGRX, 640, 360,
    CLINFER_COLOR_MATRIX_BT601, FALSE
  };
  ClinferPreprocessConfig c = make_config (32, 24, 3, CLINFER_LAYOUT_NCHW,
      CLINFER_TYPE_F32, CLINFER_RESIZE_STRETCH);
  guint64 item_bytes = 32 * 24 * 3 * sizeof (float);
  ClinferFrame frame;
  GError *err = NULL;
  gsize total, i, n = n_values (&c);
  g_autofree guint8 *data = make_frame (&info, 0, 11, &frame, &total);
  g_autofree float *want = host_values (&info, &c, CLINFER_CPU_ISA_GENERIC,
      &frame, NULL);
  g_autofree float *got = NULL;
  ClinferShape shape = { 1, {(int64_t) total} };
  g_autoptr (ClinferRemoteTensor) remote = NULL;
  ClinferPreprocess *pp = clinfer_preprocess_new (compiled, &info, &c, &err);

  g_assert_no_error (err);
  g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
  /* Twice: the second frame reuses what the first queued. */
  for (i = 0; i < 2; i++) {
    g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
    g_assert_no_error (err);
    g_assert_cmpuint (clinfer_preprocess_get_bytes_copied (pp), ==,
        core->unified_memory ? 0 : item_bytes);
  }
  clinfer_preprocess_done (pp);
  got = remote_values (clinfer_preprocess_get_remote_tensor (pp), &c);
  for (i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (got[i], want[i], 2e-3);

  remote = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_U8,
      &shape, &err);
  g_assert_no_error (err);
  {
    g_autoptr (ClinferTensor) bytes = clinfer_tensor_new_wrapped
        (CLINFER_TYPE_U8, &shape, NULL, data, NULL, NULL, &err);

    g_assert_no_error (err);
    g_assert_true (clinfer_remote_tensor_write (remote, bytes, &err));
  }
  frame.offset[0] = frame.data[0] - data;
  frame.data[0] = NULL;
  frame.remote[0] = remote;
  g_assert_true (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_preprocess_get_bytes_copied (pp), ==, 0);
  clinfer_preprocess_done (pp);
  g_free (got);
  got = remote_values (clinfer_preprocess_get_remote_tensor (pp), &c);
  for (i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (got[i], want[i], 2e-3);
  clinfer_preprocess_free (pp);
}
#endif

/* Batched inputs in remote tensors: the kernel writes the item asked. */
static void
test_gpu_batch_items (void)
{
  g_autoptr (ClinferCompiled) compiled = compile_on (device);

  check_batch_items (compiled, CLINFER_TYPE_F32);
  check_batch_items (compiled, CLINFER_TYPE_F16);
  check_batch_items (compiled, CLINFER_TYPE_U8);
}

/* Frames the kernel cannot read: a remote tensor too small for the
 * planes, one of another type, one of another device's context. */
static void
test_gpu_bad_frames (void)
{
  g_autoptr (ClinferCompiled) compiled = compile_on (device);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (compiled);
  g_autoptr (ClinferRemoteContext) cpu = clinfer_remote_context_new ("CPU",
      NULL);
  ClinferFrameInfo info = { CLINFER_PIXEL_FORMAT_RGB, 16, 8 };
  ClinferPreprocessConfig c = make_config (8, 8, 3, CLINFER_LAYOUT_NCHW,
      CLINFER_TYPE_F32, CLINFER_RESIZE_STRETCH);
  ClinferShape small = { 1, {100} }, floats = { 1, {16 * 8 * 3} };
  g_autoptr (ClinferRemoteTensor) t_small = NULL, t_f32 = NULL, t_cpu = NULL;
  ClinferFrame frame = { {NULL}, {NULL}, {0}, {48} };
  GError *err = NULL;
  ClinferPreprocess *pp = clinfer_preprocess_new (compiled, &info, &c, &err);

  g_assert_no_error (err);
  g_assert_true (clinfer_preprocess_bind (pp, NULL, 0, &err));
  t_small = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_U8,
      &small, &err);
  t_f32 = clinfer_remote_context_create_tensor (ctx, CLINFER_TYPE_F32,
      &floats, &err);
  t_cpu = clinfer_remote_context_create_tensor (cpu, CLINFER_TYPE_U8, &floats,
      &err);
  g_assert_no_error (err);
  frame.remote[0] = t_small;
  g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_nonnull (strstr (err->message, "at least 384 bytes"));
  g_clear_error (&err);
  frame.remote[0] = t_f32;
  g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_nonnull (strstr (err->message, "got f32"));
  g_clear_error (&err);
  frame.remote[0] = t_cpu;
  g_assert_false (clinfer_preprocess_run (pp, &frame, &err));
  g_assert_nonnull (strstr (err->message, "not in the OpenCL context"));
  g_clear_error (&err);
  clinfer_preprocess_free (pp);
}

#ifdef CLINFER_HAVE_OPENCL
/* Host planes are wrapped (CL_MEM_USE_HOST_PTR), not copied: mapping each
 * plane's buffer returns the plane's own address on a device sharing host
 * memory. */
static void
test_gpu_host_planes_in_place (void)
{
  static const ClinferPixelFormat formats[] = { CLINFER_PIXEL_FORMAT_BGRX,
    CLINFER_PIXEL_FORMAT_NV12, CLINFER_PIXEL_FORMAT_I420
  };
  g_autoptr (ClinferCompiled) compiled = compile_on (device);
  ClinferRemoteContext *ctx = clinfer_compiled_get_remote_context (compiled);
  OclCore *core = ((OclDevice *) ctx->device)->core;
  guint i;
  int p;

  if (!core->unified_memory) {
    g_test_skip ("the device does not share host memory: the driver copies");
    return;
  }
  for (i = 0; i < G_N_ELEMENTS (formats); i++) {
    ClinferFrameInfo info = { formats[i], 64, 48 };
    ClinferFrame frame;
    OclPreprocessFrame f;
    guint64 copied = 0;
    GError *err = NULL;
    gsize total;
    guint8 *data;

    /* Page-aligned, as the element asks upstream for. */
    data = make_frame (&info, 0, 7 + i, &frame, &total);
    {
      guint8 *aligned = NULL;

      g_assert_cmpint (posix_memalign ((void **) &aligned, 4096, total), ==,
          0);
      memcpy (aligned, data, total);
      for (p = 0; p < CLINFER_FRAME_MAX_PLANES; p++)
        if (frame.data[p] != NULL)
          frame.data[p] = aligned + (frame.data[p] - data);
      g_free (data);
      data = aligned;
    }
    g_assert_true (clinfer_ocl_preprocess_frame_import (&f, core, &info,
            &frame, &copied, &err));
    g_assert_no_error (err);
    g_assert_cmpuint (copied, ==, 0);
    g_assert_cmpint (f.n_planes, ==, clinfer_pixel_format_n_planes
        (formats[i]));
    for (p = 0; p < f.n_planes; p++) {
      gsize size = clinfer_frame_plane_size (&info, p, frame.stride[p]);
      cl_int rc = CL_SUCCESS;
      void *got = clEnqueueMapBuffer (core->queue, f.mem[p], CL_TRUE,
          CL_MAP_READ, f.offset[p], size, 0, NULL, NULL, &rc);

      g_assert_cmpint (rc, ==, CL_SUCCESS);
      g_assert_true (f.wrapped[p]);
      if (got != (void *) frame.data[p])
        g_error ("format %d plane %d: the driver mapped %p, the frame is at "
            "%p (a copy)", formats[i], p, got, frame.data[p]);
      clEnqueueUnmapMemObject (core->queue, f.mem[p], got, 0, NULL, NULL);
    }
    clFinish (core->queue);
    clinfer_ocl_preprocess_frame_release (&f);
    free (data);
  }
}
#endif

int
main (int argc, char **argv)
{
  int i;

  for (i = 1; i < argc; i++)
    if (strcmp (argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
  g_test_init (&argc, &argv, NULL);
  if (device != NULL) {
    g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new (device,
        NULL);

    if (ctx == NULL || clinfer_remote_context_get_property (ctx,
            CLINFER_REMOTE_PROP_OCL_CONTEXT) == NULL) {
      g_printerr ("no OpenCL %s device: skipped\n", device);
      return 77;
    }
    g_test_add_func ("/preprocess/gpu/matches-host", test_gpu_matches_host);
    g_test_add_func ("/preprocess/gpu/bad-frames", test_gpu_bad_frames);
    g_test_add_func ("/preprocess/gpu/batch-items", test_gpu_batch_items);
#ifdef CLINFER_HAVE_OPENCL
    g_test_add_func ("/preprocess/gpu/bytes-copied", test_gpu_bytes_copied);
    g_test_add_func ("/preprocess/gpu/host-planes-in-place",
        test_gpu_host_planes_in_place);
#endif
    return g_test_run ();
  }
  g_test_add_func ("/preprocess/geometry", test_geometry);
  g_test_add_func ("/preprocess/exact-values", test_exact_values);
  g_test_add_func ("/preprocess/fit-height-padding", test_fit_height_padding);
  g_test_add_func ("/preprocess/bad-arguments", test_bad_arguments);
  g_test_add_func ("/preprocess/batch-items", test_batch_items);
  g_test_add_func ("/preprocess/avx2-rows-match-portable",
      test_avx2_rows_match_portable);
  g_test_add_func ("/preprocess/packed-nhwc-same-bytes",
      test_packed_nhwc_same_bytes);
  return g_test_run ();
}
