/* GstClinferTensorMeta: adding, reading, copying and the checks of
 * gst_clinfer_tensor_meta_add_tensor(). */
#include <gst/check/gstcheck.h>
#include <gst/clinfer/clinfer-tensor-meta.h>

static GBytes *
floats (guint n)
{
  gfloat *d = g_new (gfloat, n);
  guint i;

  for (i = 0; i < n; i++)
    d[i] = i * 0.5f;
  return g_bytes_new_take (d, n * sizeof (gfloat));
}

GST_START_TEST (test_add_and_read)
{
  GstBuffer *buf = gst_buffer_new ();
  GstClinferTensorMeta *meta;
  const GstClinferTensor *t;
  gint64 dims[] = { 1, 2, 3 };
  GBytes *data = floats (6);
  const gfloat *d;
  gsize size;

  fail_unless (gst_buffer_get_clinfer_tensor_meta (buf) == NULL);
  meta = gst_buffer_add_clinfer_tensor_meta (buf, "net");
  fail_unless (meta != NULL);
  fail_unless (gst_clinfer_tensor_meta_add_tensor (meta, "scores",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 3, dims, data));
  fail_unless (gst_clinfer_tensor_meta_add_tensor (meta, "scalar",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 0, NULL, floats (1)) == TRUE);

  meta = gst_buffer_get_clinfer_tensor_meta (buf);
  fail_unless_equals_string (meta->model_name, "net");
  fail_unless_equals_int (gst_clinfer_tensor_meta_get_n_tensors (meta), 2);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "scores");
  fail_unless (t == gst_clinfer_tensor_meta_get_tensor (meta, 0));
  fail_unless (gst_clinfer_tensor_meta_get_tensor (meta, 2) == NULL);
  fail_unless (gst_clinfer_tensor_meta_get_tensor_by_name (meta, "x") == NULL);
  fail_unless_equals_int (gst_clinfer_tensor_get_n_elements (t), 6);
  d = gst_clinfer_tensor_get_data (t, &size);
  fail_unless_equals_int (size, 24);
  fail_unless_equals_float (d[5], 2.5f);
  t = gst_clinfer_tensor_meta_get_tensor (meta, 1);
  fail_unless_equals_int (t->n_dims, 0);
  fail_unless_equals_int (gst_clinfer_tensor_get_n_elements (t), 1);
  gst_buffer_unref (buf);
  g_bytes_unref (data);
}

GST_END_TEST;

GST_START_TEST (test_add_rejects_bad_tensors)
{
  GstBuffer *buf = gst_buffer_new ();
  GstClinferTensorMeta *meta = gst_buffer_add_clinfer_tensor_meta (buf, NULL);
  gint64 dims[9] = { 1, 2, 3, 1, 1, 1, 1, 1, 1 };
  gint64 negative[] = { -1 };
  GBytes *data = floats (6);

  /* size mismatch, too many dims, unknown type, negative dim */
  fail_if (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 2, dims, data));
  fail_if (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 9, dims, data));
  fail_if (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          (GstClinferTensorDataType) 99, 3, dims, data));
  fail_if (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 1, negative, data));
  fail_unless (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          GST_CLINFER_TENSOR_DATA_TYPE_U8, 3, dims, data) == FALSE);
  fail_unless (gst_clinfer_tensor_meta_add_tensor (meta, "a",
          GST_CLINFER_TENSOR_DATA_TYPE_I16, 2, (gint64[]) {
          3, 4}, data));
  fail_unless_equals_int (meta->n_tensors, 1);
  fail_unless_equals_string (gst_clinfer_tensor_data_type_get_name
      (meta->tensors[0].data_type), "i16");
  fail_unless_equals_string (gst_clinfer_tensor_data_type_get_name (99),
      "undefined");
  fail_unless_equals_int (gst_clinfer_tensor_data_type_get_size
      (GST_CLINFER_TENSOR_DATA_TYPE_F16), 2);
  gst_buffer_unref (buf);
  g_bytes_unref (data);
}

GST_END_TEST;

/* Copies of the buffer (as queue/tee/videoconvert make) share the
 * tensor bytes and keep names, types and dims. */
GST_START_TEST (test_copy)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16, NULL);
  GstBuffer *copy, *region;
  GstClinferTensorMeta *meta, *cmeta;
  gint64 dims[] = { 2, 3 };
  GBytes *data = floats (6);

  meta = gst_buffer_add_clinfer_tensor_meta (buf, "net");
  fail_unless (gst_clinfer_tensor_meta_add_tensor (meta, "out",
          GST_CLINFER_TENSOR_DATA_TYPE_F32, 2, dims, data));
  copy = gst_buffer_copy (buf);
  cmeta = gst_buffer_get_clinfer_tensor_meta (copy);
  fail_unless (cmeta != NULL && cmeta != meta);
  fail_unless_equals_string (cmeta->model_name, "net");
  fail_unless_equals_int (cmeta->n_tensors, 1);
  fail_unless_equals_string (cmeta->tensors[0].name, "out");
  fail_unless_equals_int64 (cmeta->tensors[0].dims[1], 3);
  fail_unless (cmeta->tensors[0].data == data);

  /* A partial copy is a transform too; the tensors stay whole. */
  region = gst_buffer_copy_region (buf, GST_BUFFER_COPY_METADATA, 0, 8);
  fail_unless (gst_buffer_get_clinfer_tensor_meta (region) != NULL);

  gst_buffer_unref (region);
  gst_buffer_unref (copy);
  gst_buffer_unref (buf);
  g_bytes_unref (data);
}

GST_END_TEST;

static Suite *
tensormeta_suite (void)
{
  Suite *s = suite_create ("tensormeta");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_add_and_read);
  tcase_add_test (tc, test_add_rejects_bad_tensors);
  tcase_add_test (tc, test_copy);
  return s;
}

GST_CHECK_MAIN (tensormeta);
