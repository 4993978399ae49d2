/* clinfer — error tests: bad model files and bad inputs give a clear
 * GError (right code, file and node named), never a crash. Run under ASan
 * in CI. Paths come from CLINFER_SOURCE_ROOT (set by meson). */
#include <clinfer/clinfer.h>
#include "../error-format.h"
#include <glib/gstdio.h>
#include <unistd.h>
#include <string.h>

static char *
source_path (const char *rel)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");
  return g_build_filename (root ? root : ".", rel, NULL);
}

static char *
blazeface_path (void)
{
  return source_path ("models/blazeface/face_detection_front_128x128_barracuda.onnx");
}

/* Writes @len bytes of @data to a temp file; returns its path. */
static char *
write_temp (const guint8 *data, gsize len, const char *suffix)
{
  g_autofree char *tmpl = g_strdup_printf ("clinfer-err-XXXXXX%s", suffix);
  char *path = NULL;
  GError *err = NULL;
  int fd = g_file_open_tmp (tmpl, &path, &err);

  g_assert_no_error (err);
  close (fd);
  g_assert_true (g_file_set_contents (path, (const char *) data, (gssize) len, &err));
  return path;
}

static void
assert_read_fails (const char *path, int code, const char *must_contain)
{
  GError *err = NULL;
  ClinferModel *m = clinfer_model_read (path, &err);

  g_assert_null (m);
  g_assert_nonnull (err);
  g_assert_true (err->domain == CLINFER_ERROR);
  if (code >= 0)
    g_assert_cmpint (err->code, ==, code);
  if (must_contain && !strstr (err->message, must_contain))
    g_error ("message '%s' does not mention '%s'", err->message, must_contain);
  g_test_message ("%s", err->message);
  g_clear_error (&err);
}

static void
test_missing_file (void)
{
  assert_read_fails ("/nonexistent/dir/model.onnx", CLINFER_ERROR_IO,
      "/nonexistent/dir/model.onnx");
}

/* Every truncation of a real model fails cleanly (or, for a cut at a
 * message boundary, parses into something that then fails or works —
 * but never crashes). */
static void
test_truncated_model (void)
{
  g_autofree char *src = blazeface_path ();
  g_autofree guint8 *data = NULL;
  gsize len = 0;

  g_assert_true (g_file_get_contents (src, (char **) &data, &len, NULL));
  for (gsize cut = 1; cut < len; cut += len / 23 + 1) {
    g_autofree char *path = write_temp (data, cut, ".onnx");
    GError *err = NULL;
    ClinferModel *m = clinfer_model_read (path, &err);
    if (m)
      clinfer_model_unref (m);
    else
      g_assert_true (err->domain == CLINFER_ERROR && strstr (err->message, path));
    g_clear_error (&err);
    g_unlink (path);
  }
  {
    g_autofree char *half = write_temp (data, len / 2, ".onnx");
    assert_read_fails (half, CLINFER_ERROR_PARSE, half);
    g_unlink (half);
  }
}

static void
test_random_bytes (void)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (1234);

  for (int round = 0; round < 20; round++) {
    gsize len = 1 + g_rand_int_range (rng, 0, 4096);
    g_autofree guint8 *buf = g_malloc (len);
    g_autofree char *path = NULL;
    for (gsize i = 0; i < len; i++)
      buf[i] = (guint8) g_rand_int (rng);
    path = write_temp (buf, len, ".onnx");
    assert_read_fails (path, -1, path);
    g_unlink (path);
  }
  {
    g_autofree char *empty = write_temp ((const guint8 *) "", 0, ".onnx");
    assert_read_fails (empty, -1, empty);
    g_unlink (empty);
  }
}

static void
test_unknown_op (void)
{
  g_autofree char *path = source_path ("tests/data/errors/unknown-op.onnx");
  GError *err = NULL;

  g_assert_null (clinfer_model_read (path, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (err->message, "FrobnicateTensor"));
  g_assert_nonnull (strstr (err->message, "mystery"));
  g_assert_nonnull (strstr (err->message, "unknown-op.onnx"));
  g_clear_error (&err);
}

static void
assert_compile_fails (const char *rel, int code, const char *node)
{
  g_autofree char *path = source_path (rel);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = clinfer_model_read (path, &err);
  ClinferCompiled *c = NULL;

  if (m)
    c = clinfer_compile (m, NULL, &err);
  g_assert_null (c);
  g_assert_nonnull (err);
  g_assert_true (err->domain == CLINFER_ERROR);
  if (code >= 0)
    g_assert_cmpint (err->code, ==, code);
  if (!strstr (err->message, node))
    g_error ("message '%s' does not name node '%s'", err->message, node);
  g_clear_error (&err);
}

static void
test_bad_conv_group (void)
{
  assert_compile_fails ("tests/data/errors/bad-conv-group.onnx", -1,
      "bad_group_conv");
}

static void
test_broadcast_mismatch (void)
{
  assert_compile_fails ("tests/data/errors/broadcast-mismatch.onnx",
      CLINFER_ERROR_SHAPE_MISMATCH, "mismatched_add");
}

static void
test_cycle (void)
{
  assert_compile_fails ("tests/data/errors/cycle.onnx", CLINFER_ERROR_PARSE,
      "cycle_");
}

/* Wrong input shape and type on the real model are refused at set_input,
 * and the request still works with a correct input afterwards. */
static void
test_wrong_input_shape_and_type (void)
{
  g_autofree char *path = blazeface_path ();
  GError *err = NULL;
  g_autoptr (ClinferModel) m = clinfer_model_read (path, &err);
  g_autoptr (ClinferCompiled) c = m ? clinfer_compile (m, NULL, &err) : NULL;
  g_autoptr (ClinferRequest) r = NULL;
  int64_t bad_dims[] = { 1, 3, 128, 128 }, good_dims[] = { 1, 128, 128, 3 };
  ClinferShape bad = clinfer_shape_make (4, bad_dims);
  ClinferShape good = clinfer_shape_make (4, good_dims);
  g_autoptr (ClinferTensor) t_shape = clinfer_tensor_new (CLINFER_TYPE_F32, &bad, NULL);
  g_autoptr (ClinferTensor) t_type = clinfer_tensor_new (CLINFER_TYPE_U8, &good, NULL);
  g_autoptr (ClinferTensor) t_good = clinfer_tensor_new (CLINFER_TYPE_F32, &good, NULL);

  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_false (clinfer_request_set_input (r, "input:0", t_shape, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "1x128x128x3"));
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_input (r, "input:0", t_type, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_nonnull (strstr (err->message, "input:0"));
  g_clear_error (&err);
  g_assert_true (clinfer_request_set_input (r, "input:0", t_good, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_compiled_get_n_outputs (c), ==, 4);
}

/* Read, shape inference and run time on each device, for built-in ops:
 * every message is "<model>: node <label>[ on <device>]: <what>". */
static void
test_node_error_format (void)
{
  g_autofree char *unknown = source_path ("tests/data/errors/unknown-op.onnx");
  g_autofree char *group = source_path ("tests/data/errors/bad-conv-group.onnx");
  g_autofree char *bcast = source_path ("tests/data/errors/broadcast-mismatch.onnx");
  g_autofree char *reshape = source_path ("tests/data/errors/runtime-reshape.onnx");
  static const char *const devices[] = { "CPU", "GPU" };
  GError *err = NULL;
  ClinferModel *m;

  g_assert_null (clinfer_model_read (unknown, &err));
  assert_node_error (err->message, unknown, "FrobnicateTensor 'mystery'", NULL);
  g_clear_error (&err);
  m = clinfer_model_read (group, &err);
  g_assert_null (m ? clinfer_compile (m, NULL, &err) : NULL);
  assert_node_error (err->message, group, "Conv 'bad_group_conv'", NULL);
  g_clear_error (&err);
  g_clear_pointer (&m, clinfer_model_unref);
  m = clinfer_model_read (bcast, &err);
  g_assert_null (m ? clinfer_compile (m, NULL, &err) : NULL);
  assert_node_error (err->message, bcast, "Add 'mismatched_add'", NULL);
  g_clear_error (&err);
  g_clear_pointer (&m, clinfer_model_unref);

  /* Run time: s = [4, 4] for x's 6 values, on the CPU and (when an OpenCL
   * device opens) the GPU. */
  m = clinfer_model_read (reshape, &err);
  g_assert_no_error (err);
  for (guint d = 0; d < G_N_ELEMENTS (devices); d++) {
    g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
    g_autoptr (ClinferCompiled) c = NULL;
    g_autoptr (ClinferRequest) r = NULL;
    int64_t xd[] = { 6 }, sd[] = { 2 };
    ClinferShape xs = clinfer_shape_make (1, xd), ss = clinfer_shape_make (1, sd);
    g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &xs, NULL);
    g_autoptr (ClinferTensor) s = clinfer_tensor_new (CLINFER_TYPE_I64, &ss, NULL);
    g_autofree char *dev_name = NULL;

    ((int64_t *) clinfer_tensor_get_data (s))[0] = 4;
    ((int64_t *) clinfer_tensor_get_data (s))[1] = 4;
    clinfer_compile_config_set_device (cfg, devices[d]);
    c = clinfer_compile (m, cfg, &err);
    if (c == NULL && d > 0) {
      g_test_message ("no OpenCL device (%s): GPU run not checked", err->message);
      g_clear_error (&err);
      continue;
    }
    g_assert_no_error (err);
    r = clinfer_compiled_create_request (c, &err);
    g_assert_true (clinfer_request_set_input (r, "x", x, &err));
    g_assert_true (clinfer_request_set_input (r, "s", s, &err));
    g_assert_false (clinfer_request_infer (r, &err));
    dev_name = g_strdup (clinfer_compiled_get_device_name (c));
    assert_node_error (err->message, reshape, "Reshape 'runtime_reshape'",
        dev_name);
    g_clear_error (&err);
  }
  clinfer_model_unref (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/errors/missing-file", test_missing_file);
  g_test_add_func ("/errors/truncated-model", test_truncated_model);
  g_test_add_func ("/errors/random-bytes", test_random_bytes);
  g_test_add_func ("/errors/unknown-op", test_unknown_op);
  g_test_add_func ("/errors/bad-conv-group", test_bad_conv_group);
  g_test_add_func ("/errors/broadcast-mismatch", test_broadcast_mismatch);
  g_test_add_func ("/errors/cycle", test_cycle);
  g_test_add_func ("/errors/node-error-format", test_node_error_format);
  g_test_add_func ("/errors/wrong-input-shape-and-type", test_wrong_input_shape_and_type);
  return g_test_run ();
}
