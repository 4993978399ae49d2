/* Element tests of clinfer with inference-region=roi-list: the model runs
 * on each region-of-interest meta's crop of the frame. Each region's
 * "tensor" structure equals what the element gives on a frame holding
 * only the crop's pixels (identity model: the pre-processed crop itself;
 * BGRx, RGB, NV12 and I420, where chroma subsampling widens a crop to even
 * edges; regions partly outside the frame; a 1x1 region); 300 regions of
 * many sizes in batches of 64 on a model with a dynamic batch equal the
 * crops one by one; object-class keeps the regions of the types listed;
 * the classification decoder puts its "classification" structure on the
 * region, a detector's boxes become new regions inside the region with
 * it as parent; a frame without regions passes untouched; nireq above 1
 * is refused naming it; on the GPU device too when there is one. The
 * leaks tracer and ASan check nothing is left. */
#include "test-util.h"

#include <clinfer/clinfer.h>
#include <math.h>
#include <string.h>

typedef struct
{
  guint x, y, w, h;
} Rect;

/* The crop (@r clipped to the frame, widened to even edges for 4:2:0
 * formats: what the element reads) of @buf as a frame of its own;
 * @crop_info gets its video info, @out its rectangle. */
static GstBuffer *
copy_crop (GstBuffer * buf, const GstVideoInfo * info, const Rect * r,
    GstVideoInfo * crop_info, Rect * out)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint x0 = MIN (r->x, (guint) info->width);
  guint y0 = MIN (r->y, (guint) info->height);
  guint x1 = MIN (r->x + r->w, (guint) info->width);
  guint y1 = MIN (r->y + r->h, (guint) info->height);
  GstVideoFrame src, dst;
  GstBuffer *crop;
  guint p, row;

  if (GST_VIDEO_FORMAT_INFO_IS_YUV (finfo)) {
    x0 &= ~1u;
    y0 &= ~1u;
    x1 = MIN (x1 + (x1 & 1), (guint) info->width);
    y1 = MIN (y1 + (y1 & 1), (guint) info->height);
  }
  out->x = x0;
  out->y = y0;
  out->w = x1 - x0;
  out->h = y1 - y0;
  gst_video_info_set_format (crop_info, GST_VIDEO_INFO_FORMAT (info),
      out->w, out->h);
  crop = gst_buffer_new_allocate (NULL, crop_info->size, NULL);
  fail_unless (gst_video_frame_map (&src, info, buf, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&dst, crop_info, crop, GST_MAP_WRITE));
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    guint c = 0, rows, bytes, sx, sy;

    while (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != p)
      c++;
    rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, c, out->h);
    bytes = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, c, out->w)
        * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
    sx = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, c, x0)
        * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
    sy = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, c, y0);
    for (row = 0; row < rows; row++)
      memcpy ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&dst, p)
          + row * GST_VIDEO_FRAME_PLANE_STRIDE (&dst, p),
          (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&src, p)
          + (sy + row) * GST_VIDEO_FRAME_PLANE_STRIDE (&src, p) + sx, bytes);
  }
  gst_video_frame_unmap (&dst);
  gst_video_frame_unmap (&src);
  return crop;
}

/* The "tensor" structure of @roi named @name (NULL: the first). */
static const GstStructure *
roi_tensor (GstVideoRegionOfInterestMeta * roi)
{
  GList *l;

  for (l = roi->params; l != NULL; l = l->next)
    if (gst_structure_has_name (l->data, "tensor"))
      return l->data;
  return NULL;
}

/* The model's output on @crop run as a whole frame by @single (caps set
 * here). (transfer full) */
static GBytes *
whole_frame_output (GstHarness * single, GstBuffer * crop,
    const GstVideoInfo * crop_info)
{
  GstBuffer *out;
  const GstClinferTensor *t;
  GstClinferTensorMeta *meta;
  GBytes *bytes;

  test_set_video_caps (single, crop_info);
  fail_unless_equals_int (gst_harness_push (single, crop), GST_FLOW_OK);
  out = gst_harness_pull (single);
  meta = gst_buffer_get_clinfer_tensor_meta (out);
  fail_unless (meta != NULL);
  t = gst_clinfer_tensor_meta_get_tensor (meta, 0);
  bytes = g_bytes_ref (t->data);
  gst_buffer_unref (out);
  return bytes;
}

static void
assert_close (GBytes * want, GBytes * got, gfloat tol, const gchar * what,
    guint i)
{
  gsize n, k;
  const gfloat *a = g_bytes_get_data (want, &n), *b;

  fail_unless_equals_int (g_bytes_get_size (got), n);
  b = g_bytes_get_data (got, NULL);
  for (k = 0; k < n / sizeof (gfloat); k++)
    fail_unless (fabsf (a[k] - b[k]) <= tol * (1.f + fabsf (a[k])),
        "%s region %u value %" G_GSIZE_FORMAT ": %g, the crop alone gives "
        "%g", what, i, k, b[k], a[k]);
}

/* @rects on a @format frame through @model in roi-list mode (@args
 * more): each region's tensor equals the crop's as a whole frame. */
static void
check_regions (GstVideoFormat format, const gchar * model, const gchar * args,
    const Rect * rects, guint n_rects, gfloat tol)
{
  g_autofree gchar *roi_args = g_strdup_printf ("inference-region=roi-list "
      "%s", args);
  GstHarness *h = test_harness_for (test_make_clinfer (model, roi_args));
  GstHarness *single = test_harness_for (test_make_clinfer (model, args));
  GstVideoInfo info;
  GstBuffer *buf, *out;
  GPtrArray *rois;
  guint i;

  gst_video_info_set_format (&info, format, 96, 72);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 7 + format);
  for (i = 0; i < n_rects; i++)
    gst_buffer_add_video_region_of_interest_meta (buf, "thing", rects[i].x,
        rects[i].y, rects[i].w, rects[i].h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (buf)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  /* Results on the regions, none on the frame. */
  fail_unless (gst_buffer_get_clinfer_tensor_meta (out) == NULL);
  rois = test_list_rois (out);
  fail_unless_equals_int (rois->len, n_rects);
  for (i = 0; i < n_rects; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);
    const GstStructure *s = roi_tensor (roi);
    const GValue *dims;
    GstVideoInfo crop_info;
    GBytes *want, *got = NULL;
    GstBuffer *crop;
    Rect r;

    fail_unless (s != NULL, "%s region %u has no tensor", roi_args, i);
    fail_unless (gst_structure_get (s, "data", G_TYPE_BYTES, &got, NULL));
    fail_unless_equals_string (gst_structure_get_string (s, "type"),
        "f32");
    fail_unless (gst_structure_get_string (s, "name") != NULL);
    dims = gst_structure_get_value (s, "dims");
    fail_unless (dims != NULL && gst_value_array_get_size (dims) == 4);
    fail_unless_equals_int64 (g_value_get_int64 (gst_value_array_get_value
            (dims, 0)), 1);
    crop = copy_crop (buf, &info, &rects[i], &crop_info, &r);
    want = whole_frame_output (single, crop, &crop_info);
    assert_close (want, got, tol, roi_args, i);
    g_bytes_unref (want);
    g_bytes_unref (got);
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  gst_harness_teardown (single);
}

static const Rect some_rects[] = {
  {10, 7, 33, 21}, {0, 0, 96, 72}, {50, 40, 60, 50}, {3, 5, 1, 1},
  {31, 17, 9, 40}, {95, 71, 5, 5},
};

GST_START_TEST (test_crops_cpu)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_BGRx,
    GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420
  };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    check_regions (formats[f], "identity-nchw-f32.onnx", "device=CPU",
        some_rects, G_N_ELEMENTS (some_rects), 0.f);
}

GST_END_TEST;

GST_START_TEST (test_crops_gpu)
{
  static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_BGRx,
    GST_VIDEO_FORMAT_NV12
  };
  guint f;

  if (!test_have_gpu ()) {
    GST_INFO ("no OpenCL device: the GPU case is not run");
    return;
  }
  for (f = 0; f < G_N_ELEMENTS (formats); f++)
    check_regions (formats[f], "identity-nchw-f32.onnx", "device=GPU",
        some_rects, G_N_ELEMENTS (some_rects), 1e-5f);
}

GST_END_TEST;

/* 300 regions of many sizes, a model with a dynamic batch: four batches
 * of 64 and one of 44, each region as its crop alone. */
GST_START_TEST (test_many_regions_batched)
{
  g_autofree gchar *model = test_data_path ("dynamic/conv-batch.onnx");
  Rect rects[300];
  guint i;

  for (i = 0; i < G_N_ELEMENTS (rects); i++) {
    rects[i].x = (i * 37) % 90;
    rects[i].y = (i * 23) % 66;
    rects[i].w = 1 + (i * 13) % 60;
    rects[i].h = 1 + (i * 7) % 50;
  }
  check_regions (GST_VIDEO_FORMAT_BGRx, model, "device=CPU", rects,
      G_N_ELEMENTS (rects), 1e-4f);
}

GST_END_TEST;

/* fit-height into a dynamic width (input-shape=?x3x12x?): regions of
 * other shapes run as one batch as wide as the widest at height 12 (here
 * ceil (12 x 60 / 10) = 72); each region's tensor is its crop run alone
 * into that width: its own part from the left, 0 after it. */
GST_START_TEST (test_fit_height_regions)
{
  g_autofree gchar *model = test_data_path ("dynamic/identity-any.onnx");
  static const Rect rects[] = { {4, 4, 60, 10}, {10, 20, 30, 12},
    {40, 30, 9, 30}
  };
  const gchar *common = "device=CPU resize-method=fit-height mean-values=128 "
      "scale-values=64";
  g_autofree gchar *roi_args = g_strdup_printf ("inference-region=roi-list "
      "input-shape=?x3x12x? %s", common);
  g_autofree gchar *single_args = g_strdup_printf ("input-shape=1x3x12x72 "
      "%s", common);
  GstHarness *h = test_harness_for (test_make_clinfer (model, roi_args));
  GstHarness *single = test_harness_for (test_make_clinfer (model,
          single_args));
  GstVideoInfo info;
  GstBuffer *buf, *out;
  GPtrArray *rois;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 96, 72);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 9);
  for (i = 0; i < G_N_ELEMENTS (rects); i++)
    gst_buffer_add_video_region_of_interest_meta (buf, "line", rects[i].x,
        rects[i].y, rects[i].w, rects[i].h);
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (buf)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  rois = test_list_rois (out);
  for (i = 0; i < G_N_ELEMENTS (rects); i++) {
    const GstStructure *s = roi_tensor (g_ptr_array_index (rois, i));
    const GValue *dims = gst_structure_get_value (s, "dims");
    g_autoptr (GBytes) got = NULL;
    GstVideoInfo crop_info;
    GBytes *want;
    GstBuffer *crop;
    const gfloat *v;
    gsize k;
    guint own;
    Rect r;

    fail_unless_equals_int64 (g_value_get_int64 (gst_value_array_get_value
            (dims, 3)), 72);
    fail_unless (gst_structure_get (s, "data", G_TYPE_BYTES, &got, NULL));
    crop = copy_crop (buf, &info, &rects[i], &crop_info, &r);
    want = whole_frame_output (single, crop, &crop_info);
    assert_close (want, got, 0.f, roi_args, i);
    /* The padding is 0, not black ((0 - 128) / 64 = -2). */
    own = (guint) ceil (12.0 * r.w / r.h - 1e-9);
    v = g_bytes_get_data (got, NULL);
    for (k = 0; k < 3 * 12 * 72; k++)
      if (k % 72 >= own)
        fail_unless (v[k] == 0.f, "region %u value %" G_GSIZE_FORMAT ": %g",
            i, k, v[k]);
    g_bytes_unref (want);
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  gst_harness_teardown (single);
}

GST_END_TEST;

/* @buf (BGRx) turned half a turn. */
static GstBuffer *
turn_bgrx (GstBuffer * buf, const GstVideoInfo * info)
{
  GstBuffer *out = gst_buffer_new_allocate (NULL, info->size, NULL);
  GstVideoFrame src, dst;
  gint x, y, w = info->width, h = info->height;

  fail_unless (gst_video_frame_map (&src, info, buf, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&dst, info, out, GST_MAP_WRITE));
  for (y = 0; y < h; y++)
    for (x = 0; x < w; x++)
      memcpy ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&dst, 0)
          + (h - 1 - y) * GST_VIDEO_FRAME_PLANE_STRIDE (&dst, 0)
          + (w - 1 - x) * 4, (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&src, 0)
          + y * GST_VIDEO_FRAME_PLANE_STRIDE (&src, 0) + x * 4, 4);
  gst_video_frame_unmap (&dst);
  gst_video_frame_unmap (&src);
  return out;
}

/* turn-label=180: a region a classifier labelled 180 with confidence 0.95
 * is inferred turned half a turn (its tensor equals the turned crop run
 * alone); one labelled 180 with 0.5, and one labelled 0, are not. */
GST_START_TEST (test_turn_label)
{
  static const Rect rects[] = { {10, 7, 33, 21}, {40, 30, 30, 20},
    {5, 40, 20, 25}
  };
  static const gdouble confidence[] = { 0.95, 0.5, 0.99 };
  static const gchar *const labels[] = { "180", "180", "0" };
  GstHarness *h = test_harness_for (test_make_clinfer
      ("identity-nchw-f32.onnx", "inference-region=roi-list turn-label=180"));
  GstHarness *single = test_harness_for (test_make_clinfer
      ("identity-nchw-f32.onnx", NULL));
  GstVideoInfo info;
  GstBuffer *buf, *out;
  GPtrArray *rois;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 96, 72);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 4);
  for (i = 0; i < G_N_ELEMENTS (rects); i++) {
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta (buf, "line",
        rects[i].x, rects[i].y, rects[i].w, rects[i].h);

    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("classification", "label", G_TYPE_STRING,
            labels[i], "label_id", G_TYPE_INT, i == 2 ? 0 : 1, "confidence",
            G_TYPE_DOUBLE, confidence[i], NULL));
  }
  fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (buf)),
      GST_FLOW_OK);
  out = gst_harness_pull (h);
  rois = test_list_rois (out);
  for (i = 0; i < G_N_ELEMENTS (rects); i++) {
    g_autoptr (GBytes) got = NULL;
    GstVideoInfo crop_info;
    GstBuffer *crop;
    GBytes *want;
    Rect r;

    fail_unless (gst_structure_get (roi_tensor (g_ptr_array_index (rois, i)),
            "data", G_TYPE_BYTES, &got, NULL));
    crop = copy_crop (buf, &info, &rects[i], &crop_info, &r);
    if (i == 0) {
      GstBuffer *turned = turn_bgrx (crop, &crop_info);

      gst_buffer_unref (crop);
      crop = turned;
    }
    want = whole_frame_output (single, crop, &crop_info);
    assert_close (want, got, 0.f, "turn-label=180", i);
    g_bytes_unref (want);
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
  gst_harness_teardown (single);
}

GST_END_TEST;

/* object-class keeps the regions of the types listed; the classification
 * decoder's result goes onto each of them and makes no new region. */
GST_START_TEST (test_classes_and_classification)
{
  g_autofree gchar *labels = test_data_path ("gst/labels.txt");
  g_autofree gchar *args = g_strdup_printf ("inference-region=roi-list "
      "object-class=face,person decoder=classification labels-file=%s",
      labels);
  GstHarness *h = test_harness_for (test_make_clinfer
      ("classification-probs.onnx", args));
  static const gchar *const types[] = { "face", "car", "person", "face" };
  GstVideoInfo info;
  GstBuffer *buf;
  GPtrArray *rois;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 64, 48);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 3);
  for (i = 0; i < G_N_ELEMENTS (types); i++)
    gst_buffer_add_video_region_of_interest_meta (buf, types[i], 4 * i,
        3 * i, 20, 16);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  buf = gst_harness_pull (h);
  rois = test_list_rois (buf);
  fail_unless_equals_int (rois->len, G_N_ELEMENTS (types));
  for (i = 0; i < rois->len; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);
    GstStructure *c = gst_video_region_of_interest_meta_get_param (roi,
        "classification");
    gboolean wanted = strcmp (types[i], "car") != 0;

    fail_unless_equals_string (g_quark_to_string (roi->roi_type), types[i]);
    fail_unless ((c != NULL) == wanted, "region %u (%s)", i, types[i]);
    fail_unless ((roi_tensor (roi) != NULL) == wanted);
    if (c != NULL) {
      gint id = -1;

      fail_unless (gst_structure_get_int (c, "label_id", &id));
      /* classification-probs.onnx: [0.1, 0.6, 0.2, 0.1] (plus 0 times
       * the input's mean); labels.txt line 1: person. */
      fail_unless_equals_int (id, 1);
      fail_unless_equals_string (gst_structure_get_string (c, "label"),
          "person");
    }
  }
  g_ptr_array_unref (rois);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* A detector on regions: its boxes become regions inside the region they
 * were found in, with it as parent, where a whole-frame run on the crop
 * puts them plus the crop's origin. */
GST_START_TEST (test_detector_on_regions)
{
  const gchar *args = "decoder=blazeface threshold=0.5";
  GstHarness *h = test_harness_for (test_make_clinfer
      ("blazeface-synthetic.onnx", "inference-region=roi-list "
          "decoder=blazeface threshold=0.5"));
  GstHarness *single = test_harness_for (test_make_clinfer
      ("blazeface-synthetic.onnx", args));
  static const Rect area = { 20, 12, 64, 48 };
  GstVideoInfo info, crop_info;
  GstBuffer *buf, *crop, *out, *alone;
  GPtrArray *rois, *want;
  GstVideoRegionOfInterestMeta *parent;
  Rect r;
  guint i;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 128, 96);
  test_set_video_caps (h, &info);
  buf = test_make_frame (&info, 5);
  parent = gst_buffer_add_video_region_of_interest_meta (buf, "area", area.x,
      area.y, area.w, area.h);
  parent->id = 42;
  crop = copy_crop (buf, &info, &area, &crop_info, &r);
  test_set_video_caps (single, &crop_info);
  fail_unless_equals_int (gst_harness_push (single, crop), GST_FLOW_OK);
  alone = gst_harness_pull (single);
  want = test_list_rois (alone);
  fail_unless (want->len > 0, "the synthetic model finds no face");

  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  out = gst_harness_pull (h);
  rois = test_list_rois (out);
  fail_unless_equals_int (rois->len, 1 + want->len);
  for (i = 0; i < want->len; i++) {
    GstVideoRegionOfInterestMeta *a = g_ptr_array_index (want, i);
    GstVideoRegionOfInterestMeta *b = g_ptr_array_index (rois, i + 1);

    fail_unless_equals_int (b->parent_id, 42);
    fail_unless_equals_int (b->x, a->x + area.x);
    fail_unless_equals_int (b->y, a->y + area.y);
    fail_unless_equals_int (b->w, a->w);
    fail_unless_equals_int (b->h, a->h);
  }
  g_ptr_array_unref (rois);
  g_ptr_array_unref (want);
  gst_buffer_unref (out);
  gst_buffer_unref (alone);
  gst_harness_teardown (h);
  gst_harness_teardown (single);
}

GST_END_TEST;

/* No region: the frame passes untouched, nothing attached. */
GST_START_TEST (test_no_regions)
{
  GstHarness *h = test_harness_for (test_make_clinfer
      ("identity-nchw-f32.onnx", "inference-region=roi-list"));
  GstVideoInfo info;
  GstBuffer *buf;
  GPtrArray *rois;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRx, 32, 24);
  test_set_video_caps (h, &info);
  fail_unless_equals_int (gst_harness_push (h, test_make_frame (&info, 1)),
      GST_FLOW_OK);
  buf = gst_harness_pull (h);
  fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) == NULL);
  rois = test_list_rois (buf);
  fail_unless_equals_int (rois->len, 0);
  g_ptr_array_unref (rois);
  gst_buffer_unref (buf);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* nireq above 1 with regions: an error naming nireq. */
GST_START_TEST (test_nireq_refused)
{
  g_autofree gchar *message = test_start_expect_error (test_make_clinfer
      ("identity-nchw-f32.onnx", "inference-region=roi-list nireq=2"));

  fail_unless (strstr (message, "nireq (2)") != NULL, "%s", message);
}

GST_END_TEST;

static Suite *
clinfer_roi_suite (void)
{
  Suite *s = suite_create ("clinfer_roi");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_crops_cpu);
  tcase_add_test (tc, test_crops_gpu);
  tcase_add_test (tc, test_many_regions_batched);
  tcase_add_test (tc, test_fit_height_regions);
  tcase_add_test (tc, test_turn_label);
  tcase_add_test (tc, test_classes_and_classification);
  tcase_add_test (tc, test_detector_on_regions);
  tcase_add_test (tc, test_no_regions);
  tcase_add_test (tc, test_nireq_refused);
  return s;
}

GST_CHECK_MAIN (clinfer_roi);
