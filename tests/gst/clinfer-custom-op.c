/* Element test of the custom-lib property with a real library: the
 * example ops of examples/custom-op (libexample-ops.so, path in
 * CLINFER_EXAMPLE_OPS, set by tests/gst/meson.build) running
 * examples/custom-op/image-example.onnx, and the error without them. */
#include "test-util.h"

#include <math.h>
#include <string.h>

#define SIDE 32                 /* the model's input: [1, 3, 32, 32] f32 */
#define BLOCK 4                 /* AveragePool 4x4, stride 4 */
#define BLOCKS (SIDE / BLOCK)   /* pooled rows and columns: 8 */
#define TOP_K 2

static gchar *
example_model (void)
{
  const gchar *root = g_getenv ("CLINFER_SOURCE_ROOT");

  fail_unless (root != NULL, "CLINFER_SOURCE_ROOT is not set");
  return g_build_filename (root, "examples", "custom-op",
      "image-example.onnx", NULL);
}

/* How many of the 16 pixels of block (@bx, @by) of channel @c are 1 (the
 * rest are 0): an even count from 0 to 14, different for each block of a
 * pooled row, so the row's top 2 have no ties. Small values keep
 * tanh (2 * mean) well below 1, where the values still differ. */
static gint
ones_in_block (gint c, gint by, gint bx)
{
  return ((bx * 3 + by + c) % BLOCKS) * 2;
}

/* A 32x32 RGB frame of 0/1 bytes: the first ones_in_block() pixels of
 * each block (row-major inside it) are 1. The frame has the model's size,
 * so the pre-processing passes each byte through unchanged (half-pixel
 * taps at the pixel centres, default mean 0 and scale 1). */
static GstBuffer *
make_block_frame (const GstVideoInfo * info)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, info->size, NULL);
  GstVideoFrame frame;
  gint x, y, c;

  fail_unless (gst_video_frame_map (&frame, info, buf, GST_MAP_WRITE));
  for (y = 0; y < SIDE; y++) {
    guint8 *row = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0)
        + y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);

    for (x = 0; x < SIDE; x++) {
      gint in_block = (y % BLOCK) * BLOCK + x % BLOCK;

      for (c = 0; c < 3; c++)
        row[x * 3 + c] = in_block < ones_in_block (c, y / BLOCK, x / BLOCK);
    }
  }
  gst_video_frame_unmap (&frame);
  return buf;
}

/* The model's outputs written from its definition: AveragePool gives
 * ones / 16, ScaledTanh (alpha 1, beta 2) tanh (2 * mean), RowTopK (k 2)
 * the two largest of each pooled row, descending, and their columns; Relu
 * changes nothing (all values are >= 0). */
static void
expected_outputs (gfloat values[3][BLOCKS][TOP_K],
    gint64 indices[3][BLOCKS][TOP_K])
{
  gint c, by, bx, k;

  for (c = 0; c < 3; c++)
    for (by = 0; by < BLOCKS; by++)
      for (k = 0; k < TOP_K; k++) {
        gint best = -1;

        for (bx = 0; bx < BLOCKS; bx++) {
          if (k > 0 && bx == indices[c][by][0])
            continue;
          if (best < 0 || ones_in_block (c, by, bx) > ones_in_block (c, by,
                  best))
            best = bx;
        }
        indices[c][by][k] = best;
        values[c][by][k] = tanhf (2.0f * ones_in_block (c, by, best)
            / (gfloat) (BLOCK * BLOCK));
      }
}

static void
check_dims (const GstClinferTensor * t, GstClinferTensorDataType type)
{
  static const gint64 dims[] = { 1, 3, BLOCKS, TOP_K };
  guint i;

  fail_unless (t != NULL);
  fail_unless_equals_int (t->data_type, type);
  fail_unless_equals_int (t->n_dims, G_N_ELEMENTS (dims));
  for (i = 0; i < G_N_ELEMENTS (dims); i++)
    fail_unless_equals_int64 (t->dims[i], dims[i]);
}

GST_START_TEST (test_custom_lib_outputs)
{
  const gchar *lib = g_getenv ("CLINFER_EXAMPLE_OPS");
  g_autofree gchar *model = example_model ();
  g_autofree gchar *args = NULL;
  const GstClinferTensor *tv, *ti;
  gfloat want_values[3][BLOCKS][TOP_K];
  gint64 want_indices[3][BLOCKS][TOP_K];
  const gfloat *values;
  const gint64 *indices;
  GstVideoInfo info;
  GstHarness *h;
  GstBuffer *out;
  gsize size;
  gint c, by, k;

  fail_unless (lib != NULL, "CLINFER_EXAMPLE_OPS is not set");
  fail_unless (g_file_test (lib, G_FILE_TEST_EXISTS), "%s is missing", lib);
  args = g_strdup_printf ("custom-lib=%s threads=1", lib);
  h = test_harness_for (test_make_clinfer (model, args));
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, SIDE, SIDE);
  test_set_video_caps (h, &info);
  out = gst_harness_push_and_pull (h, make_block_frame (&info));
  fail_unless (out != NULL);

  tv = test_get_tensor (out, "values");
  ti = test_get_tensor (out, "indices");
  check_dims (tv, GST_CLINFER_TENSOR_DATA_TYPE_F32);
  check_dims (ti, GST_CLINFER_TENSOR_DATA_TYPE_I64);
  values = gst_clinfer_tensor_get_data (tv, &size);
  fail_unless_equals_uint64 (size, 3 * BLOCKS * TOP_K * sizeof (gfloat));
  indices = gst_clinfer_tensor_get_data (ti, &size);
  fail_unless_equals_uint64 (size, 3 * BLOCKS * TOP_K * sizeof (gint64));

  expected_outputs (want_values, want_indices);
  for (c = 0; c < 3; c++)
    for (by = 0; by < BLOCKS; by++)
      for (k = 0; k < TOP_K; k++) {
        gsize i = (c * BLOCKS + by) * TOP_K + k;

        fail_unless (indices[i] >= 0 && indices[i] < BLOCKS,
            "index %" G_GINT64_FORMAT " out of 0..7", indices[i]);
        fail_unless (values[i] >= 0.f && values[i] <= 1.f,
            "value %g out of [0, 1]", values[i]);
        fail_unless_equals_int64 (indices[i], want_indices[c][by][k]);
        fail_unless (fabsf (values[i] - want_values[c][by][k]) <= 1e-6f,
            "channel %d row %d top %d: %.7f, expected %.7f", c, by, k,
            values[i], want_values[c][by][k]);
      }
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}

GST_END_TEST;

/* Without the library the model's custom ops are unknown: the element
 * posts an error naming the first one. */
GST_START_TEST (test_custom_lib_missing_unknown_op)
{
  g_autofree gchar *model = example_model ();
  g_autofree gchar *desc = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=32,height=32 ! clinfer name=c model=\"%s\" ! "
      "fakesink", model);
  GstMessage *msg = test_run_pipeline (desc, 30);
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "no message");
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "no error");
  gst_message_parse_error (msg, &err, &debug);
  fail_unless_equals_string (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), "c");
  fail_unless (err->domain == GST_LIBRARY_ERROR
      && err->code == GST_LIBRARY_ERROR_SETTINGS, "got %s %d: %s",
      g_quark_to_string (err->domain), err->code, err->message);
  fail_unless (strstr (err->message, "com.example.ScaledTanh") != NULL,
      "the unknown op is not named: %s", err->message);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
}

GST_END_TEST;

static Suite *
clinfer_custom_op_suite (void)
{
  Suite *s = suite_create ("clinfer-custom-op");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_custom_lib_outputs);
  tcase_add_test (tc, test_custom_lib_missing_unknown_op);
  return s;
}

GST_CHECK_MAIN (clinfer_custom_op);
