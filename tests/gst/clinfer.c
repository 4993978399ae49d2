/* Element tests of clinfer: properties, pre-processing of every video format
 * against a naive reference, the decoders on synthetic models, BlazeFace on
 * the test photo against ONNX Runtime, tensor meta against clinfer-run,
 * inference-interval, errors, state changes and renegotiation. */
#include "test-util.h"
#include "preprocess-ref.h"

#include <gst/clinfer/clinfer-tensor-meta.h>
#include <clinfer/clinfer.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define FRONT_MODEL "blazeface/face_detection_front_128x128_barracuda.onnx"
#define BACK_MODEL "blazeface/face_detection_back_256x256_barracuda.onnx"

/* ------------------------------------------------------------------ */
/* Properties                                                          */

GST_START_TEST (test_properties_defaults)
{
  GstElement *e = gst_element_factory_make ("clinfer", NULL);
  gchar *model, *config, *device, *mean, *scale, *labels, *input, *id, *msg;
  gchar *libs;
  guint64 copied = G_MAXUINT64;
  guint threads, interval;
  gboolean reverse, silent;
  gint resize, decoder;
  gfloat threshold;

  fail_unless (e != NULL);
  g_object_get (e, "model", &model, "config-file", &config, "device", &device,
      "threads", &threads, "inference-interval", &interval, "mean-values",
      &mean, "scale-values", &scale, "reverse-channels", &reverse,
      "resize-method", &resize, "decoder", &decoder, "threshold", &threshold,
      "labels-file", &labels, "input-name", &input, "model-instance-id", &id,
      "silent", &silent, "last-message", &msg, "custom-lib", &libs,
      "bytes-copied", &copied, NULL);
  fail_unless (model == NULL && config == NULL && mean == NULL
      && scale == NULL && labels == NULL && input == NULL && id == NULL
      && msg == NULL && libs == NULL);
  fail_unless_equals_uint64 (copied, 0);
  fail_unless_equals_string (device, "AUTO");
  fail_unless_equals_int (threads, 0);
  fail_unless_equals_int (interval, 1);
  fail_unless (!reverse);
  fail_unless (silent);
  fail_unless_equals_int (resize, 0);
  fail_unless_equals_int (decoder, 0);
  fail_unless_equals_float (threshold, 0.5f);
  g_free (device);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_properties_round_trip)
{
  GstElement *e = gst_element_factory_make ("clinfer", NULL);
  gchar *model, *config, *device, *mean, *scale, *labels, *input, *id, *libs;
  guint threads, interval;
  gboolean reverse, silent;
  gint resize, decoder;
  gfloat threshold;

  gst_util_set_object_arg (G_OBJECT (e), "resize-method", "letterbox");
  gst_util_set_object_arg (G_OBJECT (e), "decoder", "ssd");
  g_object_set (e, "model", "/m.onnx", "config-file", "/c.xml", "device",
      "GPU.1", "threads", 3, "inference-interval", 4, "mean-values", "1,2,3",
      "scale-values", "4", "reverse-channels", TRUE, "threshold", 0.25f,
      "labels-file", "/l.txt", "input-name", "data", "model-instance-id", "cam",
      "silent", FALSE, "custom-lib", "/a/libx.so;/b/liby.so", NULL);
  g_object_get (e, "custom-lib", &libs, NULL);
  fail_unless_equals_string (libs, "/a/libx.so;/b/liby.so");
  g_free (libs);
  g_object_get (e, "model", &model, "config-file", &config, "device", &device,
      "threads", &threads, "inference-interval", &interval, "mean-values",
      &mean, "scale-values", &scale, "reverse-channels", &reverse,
      "resize-method", &resize, "decoder", &decoder, "threshold", &threshold,
      "labels-file", &labels, "input-name", &input, "model-instance-id", &id,
      "silent", &silent, NULL);
  fail_unless_equals_string (model, "/m.onnx");
  fail_unless_equals_string (config, "/c.xml");
  fail_unless_equals_string (device, "GPU.1");
  fail_unless_equals_int (threads, 3);
  fail_unless_equals_int (interval, 4);
  fail_unless_equals_string (mean, "1,2,3");
  fail_unless_equals_string (scale, "4");
  fail_unless (reverse);
  fail_unless_equals_int (resize, 1);
  fail_unless_equals_int (decoder, 2);
  fail_unless_equals_float (threshold, 0.25f);
  fail_unless_equals_string (labels, "/l.txt");
  fail_unless_equals_string (input, "data");
  fail_unless_equals_string (id, "cam");
  fail_unless (!silent);
  g_free (model);
  g_free (config);
  g_free (device);
  g_free (mean);
  g_free (scale);
  g_free (labels);
  g_free (input);
  g_free (id);

  /* NULL device means the default. */
  g_object_set (e, "device", NULL, NULL);
  g_object_get (e, "device", &device, NULL);
  fail_unless_equals_string (device, "AUTO");
  g_free (device);
  gst_object_unref (e);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Pre-processing against a naive reference                            */

GST_START_TEST (test_preprocess_every_format)
{
  /* 200x90: a downscale like a camera frame's, many 8-column groups of the
   * AVX2 rows (and the dynamic model 25 of them). */
  static const gint sizes[][2] = { {23, 17}, {9, 7}, {64, 20}, {200, 90} };
  guint f, m, s;

  for (m = 0; m < test_n_model_cases; m++)
    for (f = 0; f < test_n_frame_cases; f++)
      for (s = 0; s < G_N_ELEMENTS (sizes); s++)
        test_check_preprocess (&test_frame_cases[f], &test_model_cases[m],
            sizes[s][0], sizes[s][1], NULL);
}

GST_END_TEST;

/* Packed RGB frames into NHWC f32 models, the BlazeFace case, where the
 * CPU path has rows of its own: every packed format, both channel
 * orders, letterbox and crop offsets, pictures whose width is not a
 * multiple of 8 (90x200 letterboxed to 128x128: 58 columns from column
 * 35) and a camera-sized frame. */
GST_START_TEST (test_preprocess_packed_nhwc)
{
  static const gint sizes[][2] = { {90, 200}, {200, 90}, {37, 61},
  {1280, 720}
  };
  guint f, m, s;

  for (m = 0; m < test_n_nhwc_model_cases; m++)
    for (f = 0; f < test_n_frame_cases; f++) {
      GstVideoFormat format = test_frame_cases[f].format;

      if (!GST_VIDEO_FORMAT_INFO_IS_RGB (gst_video_format_get_info (format)))
        continue;
      for (s = 0; s < G_N_ELEMENTS (sizes); s++)
        test_check_preprocess (&test_frame_cases[f],
            &test_nhwc_model_cases[m], sizes[s][0], sizes[s][1], NULL);
    }
}

GST_END_TEST;

/* The element's pre-processing of the photo equals the numpy one of
 * scripts/preprocess-image.py (tests/data/astronaut-128.npy). */
GST_START_TEST (test_preprocess_matches_numpy)
{
  g_autofree gchar *npy = test_data_path ("astronaut-128.npy");
  ClinferTensor *ref;
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *out;
  const GstClinferTensor *t;
  const gfloat *got;
  gint64 i, n;
  gdouble max_err = 0;
  GError *err = NULL;

  ref = clinfer_npy_read (npy, &err);
  fail_unless (ref != NULL, "%s", err ? err->message : "");
  h = test_harness_for (test_make_clinfer ("identity-blazeface-input.onnx",
          "mean-values=127.5 scale-values=127.5"));
  out = test_load_astronaut (GST_VIDEO_FORMAT_RGB, &info);
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, out);
  t = test_get_tensor (out, "out");
  n = clinfer_tensor_get_n_elements (ref);
  fail_unless_equals_int (gst_clinfer_tensor_get_n_elements (t), n);
  got = gst_clinfer_tensor_get_data (t, NULL);
  for (i = 0; i < n; i++)
    max_err = MAX (max_err, fabs (got[i] - clinfer_tensor_get_as_double (ref,
                i)));
  GST_INFO ("max |element - numpy| = %g", max_err);
  fail_unless (max_err <= 1e-5, "max error %g", max_err);
  clinfer_tensor_unref (ref);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Output storage                                                      */

/* Output 0 of @buf's tensor meta: its data pointer, and a copy of it. */
static const guint8 *
output_data (GstBuffer * buf, GBytes ** copy)
{
  GstClinferTensorMeta *meta = gst_buffer_get_clinfer_tensor_meta (buf);
  const GstClinferTensor *t;
  const guint8 *d;
  gsize size;

  fail_unless (meta != NULL);
  t = gst_clinfer_tensor_meta_get_tensor (meta, 0);
  fail_unless (t != NULL);
  d = gst_clinfer_tensor_get_data (t, &size);
  fail_unless (size > 0);
  *copy = g_bytes_new (d, size);
  return d;
}

/* The element's output blocks (bound as the request's outputs, held by
 * the frames' tensor metas): a frame whose buffer is alive keeps its
 * values while the next frames are processed; once downstream drops a
 * frame, its block is used again, and the same frame gives the same
 * values from it; metas outliving the element keep theirs. (That the
 * engine writes the block in place is tests/engine/test-bind.c's.) */
GST_START_TEST (test_tensor_meta_storage_reused)
{
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  GstHarness *h = test_harness_for (test_make_clinfer (model, NULL));
  GBytes *a_values, *b_values, *c_values, *again;
  GstBuffer *a, *b, *c;
  const guint8 *pa, *pb, *pc;
  GstVideoInfo info;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 160, 120);
  test_set_video_caps (h, &info);
  a = gst_harness_push_and_pull (h, test_make_frame (&info, 1));
  pa = output_data (a, &a_values);
  b = gst_harness_push_and_pull (h, test_make_frame (&info, 2));
  pb = output_data (b, &b_values);
  fail_unless (pa != pb, "two live frames share output storage");
  fail_if (g_bytes_equal (a_values, b_values), "two frames, same outputs");
  /* a's meta still holds a's outputs. */
  output_data (a, &again);
  fail_unless (g_bytes_equal (a_values, again));
  g_bytes_unref (again);

  gst_buffer_unref (a);
  c = gst_harness_push_and_pull (h, test_make_frame (&info, 1));
  pc = output_data (c, &c_values);
  fail_unless (pc == pa, "the storage of the dropped frame is not reused");
  fail_unless (g_bytes_equal (c_values, a_values));
  output_data (b, &again);
  fail_unless (g_bytes_equal (b_values, again));
  g_bytes_unref (again);

  /* The element goes first: metas still out keep their storage. */
  gst_harness_teardown (h);
  output_data (c, &again);
  fail_unless (g_bytes_equal (c_values, again));
  g_bytes_unref (again);
  gst_buffer_unref (b);
  gst_buffer_unref (c);
  g_bytes_unref (a_values);
  g_bytes_unref (b_values);
  g_bytes_unref (c_values);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Tensor meta against clinfer-run                                     */

GST_START_TEST (test_tensor_meta_matches_clinfer_run)
{
  const gchar *run = g_getenv ("CLINFER_RUN");
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  g_autofree gchar *npy = test_data_path ("astronaut-128.npy");
  g_autofree gchar *dir = NULL;
  g_autofree gchar *input_arg = NULL;
  GstClinferTensorMeta *meta;
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *out;
  GError *err = NULL;
  gint status;
  guint i;

  if (run == NULL) {
    GST_WARNING ("CLINFER_RUN not set: clinfer-run comparison skipped");
    return;
  }
  dir = g_dir_make_tmp ("clinfer-gst-XXXXXX", &err);
  fail_unless (dir != NULL);
  input_arg = g_strdup_printf ("input:0=%s", npy);
  {
    const gchar *argv[] = { run, model, "--input", input_arg, "--output-dir",
      dir, NULL
    };
    gchar *child_out = NULL, *child_err = NULL;

    fail_unless (g_spawn_sync (NULL, (gchar **) argv, NULL,
            G_SPAWN_DEFAULT, NULL, NULL, &child_out, &child_err, &status,
            &err), "%s", err ? err->message : "");
    fail_unless (g_spawn_check_wait_status (status, NULL), "clinfer-run: %s",
        child_err);
    g_free (child_out);
    g_free (child_err);
  }

  h = test_harness_for (test_make_clinfer (model,
          "mean-values=127.5 scale-values=127.5"));
  out = test_load_astronaut (GST_VIDEO_FORMAT_RGB, &info);
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, out);
  meta = gst_buffer_get_clinfer_tensor_meta (out);
  fail_unless (meta != NULL);
  fail_unless_equals_string (meta->model_name,
      "face_detection_front_128x128_barracuda");
  fail_unless_equals_int (gst_clinfer_tensor_meta_get_n_tensors (meta), 4);
  for (i = 0; i < 4; i++) {
    g_autofree gchar *name = g_strdup_printf ("output_%u.npy", i);
    g_autofree gchar *path = g_build_filename (dir, name, NULL);
    static const gchar *names[] = { "Identity:0", "Identity_1:0",
      "Identity_2:0", "Identity_3:0"
    };
    const GstClinferTensor *t = gst_clinfer_tensor_meta_get_tensor (meta, i);
    ClinferTensor *ref = clinfer_npy_read (path, &err);
    const ClinferShape *shape;
    const gfloat *got;
    gdouble max_ref = 1, max_err = 0;
    gint64 k, n;

    fail_unless (ref != NULL, "%s", err ? err->message : "");
    fail_unless_equals_string (t->name, names[i]);
    fail_unless_equals_int (t->data_type, GST_CLINFER_TENSOR_DATA_TYPE_F32);
    shape = clinfer_tensor_get_shape (ref);
    fail_unless_equals_int (t->n_dims, shape->rank);
    for (k = 0; k < shape->rank; k++)
      fail_unless_equals_int64 (t->dims[k], shape->dims[k]);
    n = clinfer_tensor_get_n_elements (ref);
    got = gst_clinfer_tensor_get_data (t, NULL);
    for (k = 0; k < n; k++) {
      gdouble r = clinfer_tensor_get_as_double (ref, k);

      max_ref = MAX (max_ref, fabs (r));
      max_err = MAX (max_err, fabs (got[k] - r));
    }
    /* Same engine; the inputs differ only by float vs double rounding in
     * pre-processing (test_preprocess_matches_numpy: <= 1e-5). */
    fail_unless (max_err <= 1e-3 * max_ref, "%s: max error %g (max %g)",
        names[i], max_err, max_ref);
    clinfer_tensor_unref (ref);
    g_unlink (path);
  }
  g_rmdir (dir);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* BlazeFace on the photo against ONNX Runtime + reference decoding   */

typedef struct
{
  gdouble score, box[4], kp[12];
} ExpectedFace;

/* Lines of tests/data/gst/@file whose first field is @key. */
static GArray *
read_expected (const gchar * file, const gchar * key)
{
  g_autofree gchar *rel = g_build_filename ("gst", file, NULL);
  g_autofree gchar *path = test_data_path (rel);
  g_autofree gchar *text = NULL;
  GArray *faces = g_array_new (FALSE, TRUE, sizeof (ExpectedFace));
  gchar **lines;
  guint i;

  fail_unless (g_file_get_contents (path, &text, NULL, NULL), "%s", path);
  lines = g_strsplit (text, "\n", -1);
  for (i = 0; lines[i] != NULL; i++) {
    gchar **f = g_strsplit (lines[i], " ", -1);
    ExpectedFace e;
    gint k;

    if (lines[i][0] != '#' && g_strv_length (f) == 18
        && strcmp (f[0], key) == 0) {
      e.score = g_ascii_strtod (f[1], NULL);
      for (k = 0; k < 4; k++)
        e.box[k] = g_ascii_strtod (f[2 + k], NULL);
      for (k = 0; k < 12; k++)
        e.kp[k] = g_ascii_strtod (f[6 + k], NULL);
      g_array_append_val (faces, e);
    }
    g_strfreev (f);
  }
  g_strfreev (lines);
  fail_unless (faces->len > 0, "no expected faces for %s in %s", key, path);
  return faces;
}

/* Checks @roi against @e (in frame pixels); @tol in pixels. */
static void
check_face (GstVideoRegionOfInterestMeta * roi, const ExpectedFace * e,
    gdouble tol, gdouble score_tol)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "detection");
  const GValue *kp;
  gdouble confidence;
  gint label_id;
  guint k;

  fail_unless_equals_string (g_quark_to_string (roi->roi_type), "face");
  fail_unless (s != NULL);
  fail_unless (gst_structure_get_double (s, "confidence", &confidence));
  fail_unless (gst_structure_get_int (s, "label_id", &label_id));
  fail_unless_equals_int (label_id, 0);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), "face");
  fail_unless (fabs (confidence - e->score) <= score_tol, "score %f, "
      "expected %f", confidence, e->score);
  fail_unless (fabs (roi->x - e->box[0]) <= tol + 0.5, "x %u vs %f", roi->x,
      e->box[0]);
  fail_unless (fabs (roi->y - e->box[1]) <= tol + 0.5, "y %u vs %f", roi->y,
      e->box[1]);
  fail_unless (fabs (roi->x + roi->w - e->box[2]) <= tol + 0.5, "x1 %u vs %f",
      roi->x + roi->w, e->box[2]);
  fail_unless (fabs (roi->y + roi->h - e->box[3]) <= tol + 0.5, "y1 %u vs %f",
      roi->y + roi->h, e->box[3]);
  kp = gst_structure_get_value (s, "keypoints");
  fail_unless (kp != NULL && GST_VALUE_HOLDS_ARRAY (kp));
  fail_unless_equals_int (gst_value_array_get_size (kp), 12);
  for (k = 0; k < 12; k++) {
    gdouble v = g_value_get_double (gst_value_array_get_value (kp, k));

    fail_unless (fabs (v - e->kp[k]) <= tol, "key point value %u: %f vs %f",
        k, v, e->kp[k]);
  }
}

static void
check_astronaut (const gchar * model_rel, GstVideoFormat format, gdouble tol,
    gdouble score_tol)
{
  g_autofree gchar *model = test_models_path (model_rel);
  g_autofree gchar *key = g_path_get_basename (model);
  GArray *expected = read_expected ("astronaut-blazeface-expected.txt", key);
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *out;
  GPtrArray *rois;
  guint i;

  h = test_harness_for (test_make_clinfer (model, "decoder=blazeface"));
  out = test_load_astronaut (format, &info);
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, out);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, expected->len);
  for (i = 0; i < rois->len; i++)
    check_face (g_ptr_array_index (rois, i), &g_array_index (expected,
            ExpectedFace, i), tol, score_tol);
  /* The description of the face. */
  {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, 0);

    fail_unless (test_roi_confidence (roi) > 0.85);
    fail_unless (fabs ((roi->x + roi->w / 2.0) / 512 - 0.44) < 0.02);
    fail_unless (fabs ((roi->y + roi->h / 2.0) / 512 - 0.25) < 0.02);
    fail_unless (fabs (roi->w / 512.0 - 0.19) < 0.03);
  }
  g_ptr_array_unref (rois);
  g_array_unref (expected);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_blazeface_astronaut_front)
{
  check_astronaut (FRONT_MODEL, GST_VIDEO_FORMAT_RGB, 0.5, 0.002);
}

GST_END_TEST;

GST_START_TEST (test_blazeface_astronaut_back)
{
  check_astronaut (BACK_MODEL, GST_VIDEO_FORMAT_RGB, 0.5, 0.002);
}

GST_END_TEST;

/* Through videoconvert's YUV and packed formats the face is the same
 * within a few pixels (colour conversion rounding). */
GST_START_TEST (test_blazeface_astronaut_formats)
{
  check_astronaut (FRONT_MODEL, GST_VIDEO_FORMAT_BGRx, 0.5, 0.002);
  check_astronaut (FRONT_MODEL, GST_VIDEO_FORMAT_NV12, 3.0, 0.03);
  check_astronaut (FRONT_MODEL, GST_VIDEO_FORMAT_I420, 3.0, 0.03);
}

GST_END_TEST;

/* The demo's pipeline: PNG, imagefreeze, clinfer, clinferoverlay. */
GST_START_TEST (test_pipeline_png_overlay)
{
  g_autofree gchar *png = test_data_path ("astronaut.png");
  g_autofree gchar *model = test_models_path (FRONT_MODEL);
  g_autofree gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! pngdec "
      "! imagefreeze num-buffers=3 ! videoconvert ! clinfer model=\"%s\" "
      "decoder=blazeface silent=false ! queue ! clinferoverlay ! videoconvert "
      "! fakesink", png, model);
  GstMessage *msg = test_run_pipeline (desc, 60);

  fail_unless (msg != NULL);
  fail_unless_equals_int (GST_MESSAGE_TYPE (msg), GST_MESSAGE_EOS);
  gst_message_unref (msg);
}

GST_END_TEST;

/* ------------------------------------------------------------------ */
/* Decoders on synthetic models                                        */

static void
check_synthetic_faces (const gchar * resize, gdouble threshold, gint width,
    gint height)
{
  GstHarness *h;
  GstBuffer *out;
  GPtrArray *rois;
  GArray *expected;
  g_autofree gchar *key = g_strdup_printf ("%.2f", threshold);
  g_autofree gchar *args = NULL;
  gdouble sx0 = 0, sy0 = 0, sw = width, sh = height, dx0 = 0, dy0 = 0;
  gdouble dw = 128, dh = 128;
  guint i, k;

  /* Model pixels (128x128) to frame pixels, written out per method. */
  if (strcmp (resize, "letterbox") == 0) {
    gdouble s = MIN (128.0 / width, 128.0 / height);

    dw = lround (width * s);
    dh = lround (height * s);
    dx0 = (gint) (128 - dw) / 2;
    dy0 = (gint) (128 - dh) / 2;
  } else if (strcmp (resize, "crop") == 0) {
    gdouble s = MAX (128.0 / width, 128.0 / height);

    sw = 128 / s;
    sh = 128 / s;
    sx0 = (width - sw) / 2;
    sy0 = (height - sh) / 2;
  }
  expected = read_expected ("blazeface-synthetic-expected.txt", key);
  for (i = 0; i < expected->len; i++) {
    ExpectedFace *e = &g_array_index (expected, ExpectedFace, i);

    /* Boxes are clipped to the frame, key points are not. */
    for (k = 0; k < 4; k++) {
      e->box[k] = k % 2 == 0 ? sx0 + (e->box[k] * 128 - dx0) * sw / dw
          : sy0 + (e->box[k] * 128 - dy0) * sh / dh;
      e->box[k] = CLAMP (e->box[k], 0, k % 2 == 0 ? width : height);
    }
    for (k = 0; k < 12; k++) {
      e->kp[k] = k % 2 == 0 ? sx0 + (e->kp[k] * 128 - dx0) * sw / dw
          : sy0 + (e->kp[k] * 128 - dy0) * sh / dh;
    }
  }

  args = g_strdup_printf ("decoder=blazeface resize-method=%s threshold=%s",
      resize, key);
  h = test_harness_for (test_make_clinfer ("blazeface-synthetic.onnx", args));
  out = test_push_frame (h, width, height);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, expected->len);
  for (i = 0; i < rois->len; i++)
    check_face (g_ptr_array_index (rois, i), &g_array_index (expected,
            ExpectedFace, i), 1e-3, 1e-4);
  g_ptr_array_unref (rois);
  g_array_unref (expected);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_decoder_blazeface_synthetic)
{
  check_synthetic_faces ("stretch", 0.5, 128, 128);
  check_synthetic_faces ("stretch", 0.3, 128, 128);
  check_synthetic_faces ("stretch", 0.5, 256, 128);
  check_synthetic_faces ("letterbox", 0.5, 640, 480);
  check_synthetic_faces ("crop", 0.5, 640, 480);
  check_synthetic_faces ("letterbox", 0.3, 480, 640);
}

GST_END_TEST;

static void
check_detection (GstVideoRegionOfInterestMeta * roi, const gchar * type,
    gdouble confidence, gint label_id, guint x, guint y, guint w, guint hh)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "detection");
  gdouble c;
  gint id;

  fail_unless (s != NULL);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), type);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), type);
  fail_unless (gst_structure_get_double (s, "confidence", &c));
  fail_unless (fabs (c - confidence) < 1e-6);
  fail_unless (gst_structure_get_int (s, "label_id", &id));
  fail_unless_equals_int (id, label_id);
  fail_unless_equals_int (roi->x, x);
  fail_unless_equals_int (roi->y, y);
  fail_unless_equals_int (roi->w, w);
  fail_unless_equals_int (roi->h, hh);
}

GST_START_TEST (test_decoder_ssd)
{
  g_autofree gchar *labels = test_data_path ("gst/labels.txt");
  GstHarness *h;
  GstElement *e;
  GstBuffer *out;
  GPtrArray *rois;

  /* Rows: (1, 0.9, box .1 .2 .5 .6), (2, 0.3), (0, 0.75, box .5 .5 .9 1),
   * end marker, (1, 0.99) after the end. Frame 100x50, stretch. */
  e = test_make_clinfer ("ssd.onnx", "decoder=ssd");
  g_object_set (e, "labels-file", labels, NULL);
  h = test_harness_for (e);
  out = test_push_frame (h, 100, 50);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, 2);
  check_detection (g_ptr_array_index (rois, 0), "person", 0.9, 1, 10, 10, 40,
      20);
  check_detection (g_ptr_array_index (rois, 1), "background", 0.75, 0, 50, 25,
      40, 25);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  /* Lower threshold, no labels file. */
  h = test_harness_for (test_make_clinfer ("ssd.onnx", "decoder=ssd threshold=0.2"));
  out = test_push_frame (h, 100, 50);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, 3);
  check_detection (g_ptr_array_index (rois, 0), "class1", 0.9, 1, 10, 10, 40,
      20);
  check_detection (g_ptr_array_index (rois, 2), "class2", 0.3, 2, 0, 0, 100,
      50);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static void
check_classification (const gchar * model, const gchar * labels,
    const gchar * label, gint label_id, gdouble confidence)
{
  GstHarness *h;
  GstElement *e;
  GstBuffer *out;
  GPtrArray *rois;
  GstVideoRegionOfInterestMeta *roi;
  GstStructure *s;
  gdouble c;
  gint id;

  e = test_make_clinfer (model, "decoder=classification");
  g_object_set (e, "labels-file", labels, NULL);
  h = test_harness_for (e);
  out = test_push_frame (h, 40, 30);
  rois = test_get_rois (out);
  fail_unless_equals_int (rois->len, 1);
  roi = g_ptr_array_index (rois, 0);
  fail_unless_equals_string (g_quark_to_string (roi->roi_type), label);
  fail_unless (roi->x == 0 && roi->y == 0 && roi->w == 40 && roi->h == 30);
  s = gst_video_region_of_interest_meta_get_param (roi, "classification");
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_string (s, "label"), label);
  fail_unless (gst_structure_get_int (s, "label_id", &id));
  fail_unless_equals_int (id, label_id);
  fail_unless (gst_structure_get_double (s, "confidence", &c));
  fail_unless (fabs (c - confidence) < 1e-6, "%f vs %f", c, confidence);
  g_ptr_array_unref (rois);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_START_TEST (test_decoder_classification)
{
  g_autofree gchar *labels = test_data_path ("gst/labels.txt");
  gdouble logits[] = { 0.5, 2.0, -1.0, 3.0, 1.0 }, denom = 0;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (logits); i++)
    denom += exp (logits[i] - 3.0);
  /* Logits: softmax applied; 3 labels only, so class 3 has no label. */
  check_classification ("classification-logits.onnx", labels, "class3", 3,
      1.0 / denom);
  /* Already a distribution: taken as it is. */
  check_classification ("classification-probs.onnx", labels, "person", 1,
      (gfloat) 0.6);
  check_classification ("classification-probs.onnx", NULL, "class1", 1,
      (gfloat) 0.6);
}

GST_END_TEST;

/* Normalisation from the model metadata unless the properties say
 * otherwise. */
GST_START_TEST (test_metadata_mean_scale)
{
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *in, *out;
  const GstClinferTensor *t;
  const gfloat *d;

  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, 6, 6);
  in = gst_buffer_new_allocate (NULL, info.size, NULL);
  gst_buffer_memset (in, 0, 100, info.size);

  h = test_harness_for (test_make_clinfer ("identity-metadata.onnx", NULL));
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  t = test_get_tensor (out, "out");
  d = gst_clinfer_tensor_get_data (t, NULL);
  /* mean_values 10,20,30, scale_values 2 (NCHW). */
  fail_unless_equals_float (d[0], 45.f);
  fail_unless_equals_float (d[36], 40.f);
  fail_unless_equals_float (d[72], 35.f);
  gst_buffer_unref (out);
  gst_harness_teardown (h);

  /* An explicit mean wins; the scale still comes from the metadata. */
  h = test_harness_for (test_make_clinfer ("identity-metadata.onnx", "mean-values=0"));
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, gst_buffer_ref (in));
  t = test_get_tensor (out, "out");
  d = gst_clinfer_tensor_get_data (t, NULL);
  fail_unless_equals_float (d[0], 50.f);
  fail_unless_equals_float (d[107], 50.f);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_buffer_unref (in);
}

GST_END_TEST;

GST_START_TEST (test_multi_input)
{
  GstHarness *h;
  GstBuffer *out;
  const GstClinferTensor *img, *aux;
  const gfloat *d;
  guint i;

  h = test_harness_for (test_make_clinfer ("multi-input.onnx",
          "input-name=image mean-values=0 scale-values=1"));
  out = test_push_frame (h, 8, 8);
  img = test_get_tensor (out, "image_out");
  aux = test_get_tensor (out, "aux_out");
  fail_unless (img != NULL && aux != NULL);
  fail_unless_equals_int (img->dims[1], 3);
  d = gst_clinfer_tensor_get_data (aux, NULL);
  for (i = 0; i < 4; i++)
    fail_unless_equals_float (d[i], 0.f);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

static Suite *
clinfer_suite (void)
{
  Suite *s = suite_create ("clinfer");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 240);
  tcase_add_test (tc, test_properties_defaults);
  tcase_add_test (tc, test_properties_round_trip);
  tcase_add_test (tc, test_preprocess_every_format);
  tcase_add_test (tc, test_preprocess_packed_nhwc);
  tcase_add_test (tc, test_preprocess_matches_numpy);
  tcase_add_test (tc, test_tensor_meta_matches_clinfer_run);
  tcase_add_test (tc, test_tensor_meta_storage_reused);
  tcase_add_test (tc, test_blazeface_astronaut_front);
  tcase_add_test (tc, test_blazeface_astronaut_back);
  tcase_add_test (tc, test_blazeface_astronaut_formats);
  tcase_add_test (tc, test_pipeline_png_overlay);
  tcase_add_test (tc, test_decoder_blazeface_synthetic);
  tcase_add_test (tc, test_decoder_ssd);
  tcase_add_test (tc, test_decoder_classification);
  tcase_add_test (tc, test_metadata_mean_scale);
  tcase_add_test (tc, test_multi_input);
  return s;
}

GST_CHECK_MAIN (clinfer);
