/* GstClinferTensorMeta: adding, reading, copying and the checks of
 * gst_clinfer_tensor_meta_add_tensor(). */
#include <gst/check/gstcheck.h>
#include <gst/clinfer/clinfer-tensor-meta.h>
#include <math.h>

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

/* Adds a 1-D tensor of @n elements over a copy of @data. */
static gboolean
add_1d (GstClinferTensorMeta * meta, const gchar * name,
    GstClinferTensorDataType type, gint64 n, gconstpointer data, gsize size)
{
  GBytes *bytes = g_bytes_new (data, size);
  gboolean ok = gst_clinfer_tensor_meta_add_tensor (meta, name, type, 1, &n,
      bytes);

  g_bytes_unref (bytes);
  return ok;
}

/* gst_clinfer_tensor_get_value() of every kind of data type the decoders
 * may see: floats, halves (normal, subnormal, inf), integers, bool. */
GST_START_TEST (test_get_value)
{
  GstBuffer *buf = gst_buffer_new ();
  GstClinferTensorMeta *meta = gst_buffer_add_clinfer_tensor_meta (buf, "net");
  /* f16: 1.5, -2, 2^-24 (smallest subnormal), +inf; bf16: 1.5, -3 */
  const guint16 f16[] = { 0x3e00, 0xc000, 0x0001, 0x7c00 };
  const guint16 bf16[] = { 0x3fc0, 0xc040 };
  const gint64 i64[] = { -5, G_GINT64_CONSTANT (1) << 40 };
  const guint8 u8[] = { 0, 255 };
  const gint8 i8[] = { -128, 7 };
  const gdouble f64[] = { 0.125 };
  const GstClinferTensor *t;

  fail_unless (add_1d (meta, "f16", GST_CLINFER_TENSOR_DATA_TYPE_F16, 4, f16,
          sizeof f16));
  fail_unless (add_1d (meta, "bf16", GST_CLINFER_TENSOR_DATA_TYPE_BF16, 2, bf16,
          sizeof bf16));
  fail_unless (add_1d (meta, "i64", GST_CLINFER_TENSOR_DATA_TYPE_I64, 2, i64,
          sizeof i64));
  fail_unless (add_1d (meta, "u8", GST_CLINFER_TENSOR_DATA_TYPE_U8, 2, u8,
          sizeof u8));
  fail_unless (add_1d (meta, "i8", GST_CLINFER_TENSOR_DATA_TYPE_I8, 2, i8,
          sizeof i8));
  fail_unless (add_1d (meta, "f64", GST_CLINFER_TENSOR_DATA_TYPE_F64, 1, f64,
          sizeof f64));

  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "f16");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 0), 1.5);
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 1), -2.0);
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 2),
      1.0 / 16777216.0);
  fail_unless (isinf (gst_clinfer_tensor_get_value (t, 3)));
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 4), 0.0);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "bf16");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 0), 1.5);
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 1), -3.0);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "i64");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 0), -5.0);
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 1), 1099511627776.0);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "u8");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 1), 255.0);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "i8");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 0), -128.0);
  t = gst_clinfer_tensor_meta_get_tensor_by_name (meta, "f64");
  fail_unless_equals_float (gst_clinfer_tensor_get_value (t, 0), 0.125);
  gst_buffer_unref (buf);
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
  tcase_add_test (tc, test_get_value);
  tcase_add_test (tc, test_copy);
  return s;
}

GST_CHECK_MAIN (tensormeta);
