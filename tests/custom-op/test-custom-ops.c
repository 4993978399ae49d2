/* Custom CPU ops (engine/ops/custom-ops.c, <clinfer/custom-op.h>): the
 * example library's ops inside models between built-in ops against numpy
 * references (tests/custom-op/make-reference.py), on the CPU or, with
 * --device GPU, on the OpenCL device (exit 77 when there is none); every
 * registration and attribute error; compute errors leaving the request
 * usable; life cycle (a compiled model outliving its config and model).
 *
 * Environment (set by meson): CLINFER_EXAMPLE_OPS (the example library),
 * CLINFER_BAD_OPS_DIR (tests/custom-op's bad libraries), CLINFER_SRCDIR. */
#include <clinfer/clinfer.h>
#include "../error-format.h"
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static const char *device = "CPU";

static char *
src_path (const char *rel)
{
  return g_build_filename (g_getenv ("CLINFER_SRCDIR"), rel, NULL);
}

static ClinferTensor *
load_npy (const char *rel)
{
  g_autofree char *path = src_path (rel);
  g_autoptr (GError) err = NULL;
  ClinferTensor *t = clinfer_npy_read (path, &err);

  g_assert_no_error (err);
  return t;
}

static ClinferCompileConfig *
example_config (void)
{
  ClinferCompileConfig *cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;

  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_threads (cfg, 1);
  clinfer_compile_config_set_allow_fallback (cfg, FALSE);
  g_assert_true (clinfer_compile_config_add_custom_lib (cfg,
          g_getenv ("CLINFER_EXAMPLE_OPS"), &err));
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_compile_config_get_n_custom_ops (cfg), ==, 2);
  return cfg;
}

static void
assert_close (ClinferTensor *got, ClinferTensor *want, double tol)
{
  int64_t n = clinfer_tensor_get_n_elements (want);

  g_assert_nonnull (got);
  g_assert_cmpint (clinfer_tensor_get_element_type (got), ==,
      clinfer_tensor_get_element_type (want));
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (got),
          clinfer_tensor_get_shape (want)));
  for (int64_t i = 0; i < n; i++) {
    double a = clinfer_tensor_get_as_double (got, i);
    double b = clinfer_tensor_get_as_double (want, i);
    if (fabs (a - b) > tol * MAX (1.0, fabs (b)))
      g_error ("element %" G_GINT64_FORMAT ": got %g, want %g", i, a, b);
  }
}

/* Runs @model_rel with the example library and checks both outputs. */
static void
run_example (const char *model_rel, const char *input_name,
    const char *input_rel, const char *out0_rel, const char *out1_rel)
{
  g_autoptr (ClinferCompileConfig) cfg = example_config ();
  g_autofree char *path = src_path (model_rel);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;
  g_autoptr (ClinferRequest) req = NULL;
  g_autoptr (ClinferTensor) x = load_npy (input_rel);
  g_autoptr (ClinferTensor) want0 = load_npy (out0_rel);
  g_autoptr (ClinferTensor) want1 = load_npy (out1_rel);
  guint64 to_dev = 0, to_host = 0;

  model = clinfer_model_read_with_config (path, cfg, &err);
  g_assert_no_error (err);
  compiled = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  req = clinfer_compiled_create_request (compiled, &err);
  g_assert_no_error (err);
  /* Twice: the second run reuses the kernels and the plan. */
  for (int round = 0; round < 2; round++) {
    g_assert_true (clinfer_request_set_input (req, input_name, x, &err));
    g_assert_true (clinfer_request_infer (req, &err));
    g_assert_no_error (err);
    assert_close (clinfer_request_get_output (req, 0), want0, 1e-5);
    assert_close (clinfer_request_get_output (req, 1), want1, 0);
  }
  clinfer_request_get_copy_stats (req, &to_dev, &to_host);
  if (g_ascii_strncasecmp (device, "GPU", 3) == 0) {
    /* The custom ops run on the host: their inputs come down from the
     * device and their outputs go back up, and the copy counter says so. */
    g_assert_cmpuint (to_host, >, 0);
    g_assert_cmpuint (to_dev, >, 0);
  }
}

static void
test_example_model (void)
{
  run_example ("examples/custom-op/example.onnx", "x",
      "tests/custom-op/data/example-x.npy",
      "tests/custom-op/data/example-scores.npy",
      "tests/custom-op/data/example-indices.npy");
}

static void
test_image_model (void)
{
  run_example ("examples/custom-op/image-example.onnx", "image",
      "tests/custom-op/data/image-input.npy",
      "tests/custom-op/data/image-values.npy",
      "tests/custom-op/data/image-indices.npy");
}

/* An OpenVINO IR whose extension layers name the domain in their version
 * (type="ScaledTanh" version="com.example", attributes as text):
 * tests/custom-op/data/example-foreign.xml, the example model as
 * clinfer-convert writes it with the layers moved out of the clinfer
 * extension opset. */
static void
test_foreign_ir (void)
{
  run_example ("tests/custom-op/data/example-foreign.xml", "x",
      "tests/custom-op/data/example-x.npy",
      "tests/custom-op/data/example-scores.npy",
      "tests/custom-op/data/example-indices.npy");
}

/* Without the library the model's ops are unknown, named in the error. */
static void
test_unknown_without_library (void)
{
  g_autofree char *path = src_path ("examples/custom-op/example.onnx");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = clinfer_model_read (path, &err);

  g_assert_null (model);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
  g_assert_nonnull (strstr (err->message, "com.example.ScaledTanh"));
  g_assert_nonnull (strstr (err->message, "squash"));
  g_assert_nonnull (strstr (err->message, "custom-lib"));
}

/* The config and the model are released before the request runs: the
 * compiled model keeps the library loaded and its ops alive. */
static void
test_compiled_outlives_config (void)
{
  g_autofree char *path = src_path ("examples/custom-op/example.onnx");
  g_autoptr (GError) err = NULL;
  ClinferCompileConfig *cfg = example_config ();
  ClinferModel *model = clinfer_model_read_with_config (path, cfg, &err);
  ClinferCompiled *compiled;
  ClinferRequest *req;
  g_autoptr (ClinferTensor) x = load_npy ("tests/custom-op/data/example-x.npy");
  g_autoptr (ClinferTensor) want = load_npy ("tests/custom-op/data/example-scores.npy");

  g_assert_no_error (err);
  clinfer_compile_config_free (cfg);
  /* A default config: the ops come with the model. */
  compiled = clinfer_compile (model, NULL, &err);
  g_assert_no_error (err);
  clinfer_model_unref (model);
  req = clinfer_compiled_create_request (compiled, &err);
  clinfer_compiled_unref (compiled);     /* the request holds it */
  g_assert_true (clinfer_request_set_input (req, "x", x, &err));
  g_assert_true (clinfer_request_infer (req, &err));
  g_assert_no_error (err);
  assert_close (clinfer_request_get_output (req, 0), want, 1e-5);
  clinfer_request_free (req);
}

/* RowTopK fails on NaN: the error names node and op, and the same request
 * then runs a good input. */
static void
test_compute_error_then_reuse (void)
{
  g_autoptr (ClinferCompileConfig) cfg = example_config ();
  g_autofree char *path = src_path ("examples/custom-op/example.onnx");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = clinfer_model_read_with_config (path, cfg, &err);
  g_autoptr (ClinferCompiled) compiled = clinfer_compile (model, cfg, &err);
  g_autoptr (ClinferRequest) req = clinfer_compiled_create_request (compiled, &err);
  g_autoptr (ClinferTensor) x = load_npy ("tests/custom-op/data/example-x.npy");
  g_autoptr (ClinferTensor) bad = clinfer_tensor_copy (x, NULL);
  g_autoptr (ClinferTensor) want = load_npy ("tests/custom-op/data/example-scores.npy");

  g_assert_no_error (err);
  ((float *) clinfer_tensor_get_data (bad))[5] = NAN;
  g_assert_true (clinfer_request_set_input (req, "x", bad, &err));
  g_assert_false (clinfer_request_infer (req, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "'topk'"));
  g_assert_nonnull (strstr (err->message, "RowTopK"));
  g_assert_nonnull (strstr (err->message, "NaN"));
  g_assert_null (clinfer_request_get_output (req, 0));
  g_clear_error (&err);
  g_assert_true (clinfer_request_set_input (req, "x", x, &err));
  g_assert_true (clinfer_request_infer (req, &err));
  g_assert_no_error (err);
  assert_close (clinfer_request_get_output (req, 0), want, 1e-5);
}

/* ---- library errors ---- */

static void
expect_lib_error (const char *file, const char *needle, int code)
{
  g_autofree char *path = file[0] == '/' ? g_strdup (file)
      : g_build_filename (g_getenv ("CLINFER_BAD_OPS_DIR"), file, NULL);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;

  g_assert_false (clinfer_compile_config_add_custom_lib (cfg, path, &err));
  g_assert_error (err, CLINFER_ERROR, code);
  g_assert_nonnull (strstr (err->message, path));
  if (strstr (err->message, needle) == NULL)
    g_error ("'%s' not in: %s", needle, err->message);
  /* Nothing of the failed library stays registered. */
  g_assert_cmpuint (clinfer_compile_config_get_n_custom_ops (cfg), ==, 0);
}

static void
test_lib_errors (void)
{
  expect_lib_error ("no-such-lib.so", "not found", CLINFER_ERROR_IO);
  expect_lib_error ("libbad-ops-nosym.so", "does not export "
      "clinfer_register_custom_ops", CLINFER_ERROR_INVALID_ARGUMENT);
  expect_lib_error ("libbad-ops-abi.so", "ABI version 99",
      CLINFER_ERROR_INVALID_ARGUMENT);
  expect_lib_error ("libbad-ops-fail.so", "license check failed",
      CLINFER_ERROR_INVALID_ARGUMENT);
  expect_lib_error ("libbad-ops-clash.so", "clashes with the built-in op",
      CLINFER_ERROR_INVALID_ARGUMENT);
  expect_lib_error ("libbad-ops-none.so", "registered no op",
      CLINFER_ERROR_INVALID_ARGUMENT);
}

/* The same library path twice is loaded once; a copy of it under another
 * name registers the same ops again: a clash naming the first. */
static void
test_lib_twice (void)
{
  g_autoptr (ClinferCompileConfig) cfg = example_config ();
  g_autoptr (GError) err = NULL;
  const char *lib = g_getenv ("CLINFER_EXAMPLE_OPS");
  g_autofree char *dir = g_path_get_dirname (lib);
  g_autofree char *base = g_path_get_basename (lib);
  g_autofree char *dotted = g_build_filename (dir, ".", base, NULL);
  g_autofree char *tmp = g_dir_make_tmp ("clinfer-lib-XXXXXX", NULL);
  g_autofree char *copy = g_build_filename (tmp, "libcopy.so", NULL);
  g_autofree gchar *bytes = NULL;
  gsize len = 0;

  g_assert_true (clinfer_compile_config_add_custom_lib (cfg, lib, &err));
  g_assert_true (clinfer_compile_config_add_custom_lib (cfg, dotted, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_compile_config_get_n_custom_ops (cfg), ==, 2);
  g_assert_true (g_file_get_contents (lib, &bytes, &len, NULL));
  g_assert_true (g_file_set_contents (copy, bytes, (gssize) len, NULL));
  g_assert_false (clinfer_compile_config_add_custom_lib (cfg, copy, &err));
  g_assert_nonnull (strstr (err->message, "already registered by"));
  g_assert_nonnull (strstr (err->message, lib));
  g_assert_nonnull (strstr (err->message, copy));
  g_assert_cmpuint (clinfer_compile_config_get_n_custom_ops (cfg), ==, 2);
  g_unlink (copy);
  g_rmdir (tmp);
}

/* Two configs with different libraries: each model sees its own ops. */
static void
test_configs_are_separate (void)
{
  g_autoptr (ClinferCompileConfig) with = example_config ();
  g_autoptr (ClinferCompileConfig) without = clinfer_compile_config_new ();
  g_autoptr (ClinferCompileConfig) copy = clinfer_compile_config_copy (with);
  g_autofree char *path = src_path ("examples/custom-op/example.onnx");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) a = clinfer_model_read_with_config (path, copy, &err);
  ClinferModel *b;

  g_assert_no_error (err);
  g_assert_nonnull (a);
  b = clinfer_model_read_with_config (path, without, &err);
  g_assert_null (b);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
}

/* ---- ops from code: attributes, shapes, errors ---- */

typedef struct {
  int64_t i;
  float f;
  char s[32];
  size_t s_size_query;
  int64_t ints[4];
  size_t n_ints;
  float floats[4];
  size_t n_floats;
  int missing_rc;
  char missing_msg[128];
  int wrong_rc;
  char wrong_msg[128];
  int small_rc;
} Probe;

static Probe probe;
static int creates, destroys;

static int
probe_create (const ClinferCustomOp *op, ClinferKernelInfo *info, void **kernel)
{
  size_t n = sizeof (probe.s);

  creates++;
  memset (&probe, 0, sizeof (probe));
  if (clinfer_kernel_info_get_int (info, "i", &probe.i) != 0
      || clinfer_kernel_info_get_float (info, "f", &probe.f) != 0
      || clinfer_kernel_info_get_string (info, "s", NULL, &probe.s_size_query) != 0
      || clinfer_kernel_info_get_string (info, "s", probe.s, &n) != 0)
    return -1;
  probe.n_ints = 4;
  probe.n_floats = 4;
  if (clinfer_kernel_info_get_ints (info, "ints", probe.ints, &probe.n_ints) != 0
      || clinfer_kernel_info_get_floats (info, "floats", probe.floats,
          &probe.n_floats) != 0)
    return -1;
  probe.missing_rc = clinfer_kernel_info_get_int (info, "nope", &probe.i);
  /* The error of the failed call is replaced by the next failure; keep
   * what a caller would see by failing create_kernel with a fresh
   * message below instead. */
  probe.wrong_rc = clinfer_kernel_info_get_int (info, "s", &probe.i);
  n = 2;
  probe.small_rc = clinfer_kernel_info_get_string (info, "s", probe.s, &n);
  /* Restore what the failed calls may have changed. */
  clinfer_kernel_info_get_int (info, "i", &probe.i);
  n = sizeof (probe.s);
  clinfer_kernel_info_get_string (info, "s", probe.s, &n);
  *kernel = GINT_TO_POINTER (1);
  if (clinfer_kernel_info_has_attribute (info, "fail")) {
    clinfer_kernel_info_set_error (info, "asked to fail");
    return -1;
  }
  return 0;
}

static void
probe_destroy (void *kernel)
{
  destroys++;
}

/* Default shape inference: output = input 0. Doubles the input. */
static int
double_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  float *y = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, x->dims);
  int64_t n = 1;

  if (y == NULL)
    return -1;
  for (int i = 0; i < x->rank; i++)
    n *= x->dims[i];
  for (int64_t i = 0; i < n; i++)
    y[i] = 2.0f * ((const float *) x->data)[i];
  return 0;
}

/* Allocates the wrong shape: shape inference said input 0's. */
static int
wrong_shape_compute (void *kernel, ClinferKernelContext *ctx)
{
  int64_t one = 1;

  return clinfer_kernel_context_allocate_output (ctx, 0, 1, &one) ? 0 : -1;
}

static int
no_output_compute (void *kernel, ClinferKernelContext *ctx)
{
  return 0;
}

static const ClinferCustomPort f32_in[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
};

#define OP(nm, dom, compute_fn) { .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION, \
  .name = nm, .domain = dom, .n_inputs = 1, .inputs = f32_in, \
  .n_outputs = 1, .outputs = f32_in, .create_kernel = probe_create, \
  .compute = compute_fn, .destroy_kernel = probe_destroy }

static ClinferModel *
read_with_ops (const char *model_rel, const ClinferCustomOp *op,
    ClinferCompileConfig **cfg_out, GError **error)
{
  g_autofree char *path = src_path (model_rel);
  ClinferCompileConfig *cfg = clinfer_compile_config_new ();
  ClinferModel *m;

  g_assert_true (clinfer_compile_config_add_custom_ops (cfg, &op, 1, NULL));
  m = clinfer_model_read_with_config (path, cfg, error);
  *cfg_out = cfg;
  return m;
}

/* tests/custom-op/data/probe.onnx: x [2,3] -> Relu -> com.test.Probe
 * (i=7, f=0.5, s="hello", ints=[1,2,3], floats=[0.25,4]) -> Abs -> y */
static void
test_attributes_and_default_shapes (void)
{
  static const ClinferCustomOp op = OP ("Probe", "com.test", double_compute);
  ClinferCompileConfig *cfg = NULL;
  g_autoptr (GError) err = NULL;
  ClinferModel *m;
  ClinferCompiled *c;
  ClinferRequest *r;
  ClinferPortInfo info;
  static const int64_t dims[] = { 2, 3 };
  ClinferShape shape = clinfer_shape_make (2, dims);
  g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, NULL);
  float *xs = clinfer_tensor_get_data (x);
  ClinferTensor *y;

  creates = destroys = 0;
  m = read_with_ops ("tests/custom-op/data/probe.onnx", &op, &cfg, &err);
  g_assert_no_error (err);
  g_assert_cmpint (probe.i, ==, 7);
  g_assert_cmpfloat (probe.f, ==, 0.5f);
  g_assert_cmpstr (probe.s, ==, "hello");
  g_assert_cmpuint (probe.s_size_query, ==, 6);
  g_assert_cmpuint (probe.n_ints, ==, 3);
  g_assert_cmpint (probe.ints[2], ==, 3);
  g_assert_cmpuint (probe.n_floats, ==, 2);
  g_assert_cmpfloat (probe.floats[1], ==, 4.0f);
  g_assert_cmpint (probe.missing_rc, ==, -1);
  g_assert_cmpint (probe.wrong_rc, ==, -1);
  g_assert_cmpint (probe.small_rc, ==, -1);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_compiled_get_output (c, 0, &info));
  g_assert_cmpint (info.shape.rank, ==, 2);   /* like input 0 */
  g_assert_cmpint (info.shape.dims[1], ==, 3);
  r = clinfer_compiled_create_request (c, &err);
  for (int i = 0; i < 6; i++)
    xs[i] = (float) i - 3.0f;
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  y = clinfer_request_get_output (r, 0);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (((float *) clinfer_tensor_get_data (y))[i], ==,
        2.0f * MAX ((float) i - 3.0f, 0.0f));
  clinfer_request_free (r);
  clinfer_compiled_unref (c);
  clinfer_model_unref (m);
  clinfer_compile_config_free (cfg);
  /* Every kernel created was destroyed. */
  g_assert_cmpint (creates, >=, 2);
  g_assert_cmpint (destroys, ==, creates);
}

static void
expect_run_error (const ClinferCustomOp *op, const char *needle)
{
  ClinferCompileConfig *cfg = NULL;
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) m = read_with_ops ("tests/custom-op/data/probe.onnx",
      op, &cfg, &err);
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  static const int64_t dims[] = { 2, 3 };
  ClinferShape shape = clinfer_shape_make (2, dims);
  g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, NULL);

  g_assert_no_error (err);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_false (clinfer_request_infer (r, &err));
  if (strstr (err->message, needle) == NULL || !strstr (err->message, "Probe"))
    g_error ("'%s' not in: %s", needle, err->message);
  clinfer_compile_config_free (cfg);
}

static void
test_compute_errors (void)
{
  static const ClinferCustomOp wrong = OP ("Probe", "com.test", wrong_shape_compute);
  static const ClinferCustomOp none = OP ("Probe", "com.test", no_output_compute);

  expect_run_error (&wrong, "output 0 allocated as 1, but shape inference gave 2x3");
  expect_run_error (&none, "compute did not allocate output 0");
}

static void
test_create_kernel_error (void)
{
  static const ClinferCustomOp op = OP ("Probe", "com.test", double_compute);
  ClinferCompileConfig *cfg = NULL;
  g_autoptr (GError) err = NULL;
  ClinferModel *m = read_with_ops ("tests/custom-op/data/probe-fail.onnx", &op,
      &cfg, &err);

  g_assert_null (m);
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "create_kernel failed: asked to fail"));
  g_assert_nonnull (strstr (err->message, "'probe'"));
  clinfer_compile_config_free (cfg);
}

static void
expect_add_error (const ClinferCustomOp *op, const char *needle)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;

  g_assert_false (clinfer_compile_config_add_custom_ops (cfg, &op, 1, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  if (strstr (err->message, needle) == NULL)
    g_error ("'%s' not in: %s", needle, err->message);
}

static void
test_registration_errors (void)
{
  static const ClinferCustomPort two_variadic[] = {
    { CLINFER_TYPE_F32, CLINFER_PORT_VARIADIC },
    { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
  };
  ClinferCustomOp op = OP ("Probe", "com.test", double_compute);

  op.abi_version = 2;
  expect_add_error (&op, "ABI version 2");
  op = (ClinferCustomOp) OP ("Relu", "", double_compute);
  expect_add_error (&op, "clashes with the built-in op");
  op = (ClinferCustomOp) OP ("Probe", "com.test", NULL);
  expect_add_error (&op, "no compute callback");
  op = (ClinferCustomOp) OP ("", "com.test", double_compute);
  expect_add_error (&op, "has no name");
  op = (ClinferCustomOp) OP ("Probe", "com.test", double_compute);
  op.n_inputs = 2;
  op.inputs = two_variadic;
  expect_add_error (&op, "only the last input may be");
  expect_add_error (NULL, "the op is NULL");
}

/* A custom Relu in the default domain replaces the built-in one only when
 * the op asks for it. */
static void
test_override_builtin (void)
{
  ClinferCustomOp op = OP ("Relu", "", double_compute);
  ClinferCompileConfig *cfg = NULL;
  g_autoptr (GError) err = NULL;
  ClinferModel *m;
  ClinferCompiled *c;
  ClinferRequest *r;
  static const int64_t dims[] = { 2, 3 };
  ClinferShape shape = clinfer_shape_make (2, dims);
  g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, NULL);
  const ClinferCustomOp *p = &op;

  op.flags = CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN;
  op.create_kernel = NULL;
  op.destroy_kernel = NULL;
  ((float *) clinfer_tensor_get_data (x))[0] = -1.5f;
  cfg = clinfer_compile_config_new ();
  g_assert_true (clinfer_compile_config_add_custom_ops (cfg, &p, 1, &err));
  {
    g_autofree char *path = src_path ("tests/custom-op/data/relu.onnx");
    m = clinfer_model_read_with_config (path, cfg, &err);
  }
  g_assert_no_error (err);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  /* Built-in Relu would give 0; the override doubles. */
  g_assert_cmpfloat (((float *) clinfer_tensor_get_data (
              clinfer_request_get_output (r, 0)))[0], ==, -3.0f);
  clinfer_request_free (r);
  clinfer_compiled_unref (c);
  clinfer_model_unref (m);
  clinfer_compile_config_free (cfg);
}

static int
failing_compute (void *kernel, ClinferKernelContext *ctx)
{
  clinfer_kernel_context_set_error (ctx, "element 3 is out of range");
  return -1;
}

#define PROBE_LABEL "com.test.Probe 'probe' (custom op com.test.Probe from " \
  "clinfer_compile_config_add_custom_ops())"

/* Reads @model_rel with @op and, when @run, compiles it on the device
 * under test and runs it on zeros; returns the first error. */
static GError *
custom_error (const char *model_rel, const ClinferCustomOp *op, gboolean run)
{
  ClinferCompileConfig *cfg = NULL;
  GError *err = NULL;
  g_autoptr (ClinferModel) m = read_with_ops (model_rel, op, &cfg, &err);
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  static const int64_t dims[] = { 2, 3 };
  ClinferShape shape = clinfer_shape_make (2, dims);
  g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &shape, NULL);

  if (m && run) {
    clinfer_compile_config_set_device (cfg, device);
    c = clinfer_compile (m, cfg, &err);
    r = c ? clinfer_compiled_create_request (c, &err) : NULL;
    if (r && clinfer_request_set_input (r, "x", x, &err))
      g_assert_false (clinfer_request_infer (r, &err));
  }
  clinfer_compile_config_free (cfg);
  g_assert_nonnull (err);
  return err;
}

/* Custom-op errors of each path (read, ports, types, compute on the
 * device under test) have the engine's one format, with the custom op and
 * where it came from in the label. */
static void
test_error_format (void)
{
  static const ClinferCustomPort i32_in[] = {
    { CLINFER_TYPE_I32, CLINFER_PORT_REQUIRED },
  };
  static const ClinferCustomPort two_out[] = {
    { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
    { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
  };
  static const ClinferCustomPort opt_req[] = {
    { CLINFER_TYPE_F32, CLINFER_PORT_OPTIONAL },
    { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
  };
  g_autofree char *probe_path = src_path ("tests/custom-op/data/probe.onnx");
  g_autofree char *fail_path = src_path ("tests/custom-op/data/probe-fail.onnx");
  g_autofree char *left_path = src_path ("tests/custom-op/data/left-out.onnx");
  g_autofree char *dev = NULL;
  ClinferCustomOp op = OP ("Probe", "com.test", double_compute);
  ClinferCustomOp pair = OP ("Pair", "com.test", double_compute);
  const char *pair_label = "com.test.Pair 'pair' (custom op com.test.Pair "
      "from clinfer_compile_config_add_custom_ops())";
  GError *err;

  {
    /* The device's name as the engine prints it (GPU.0...). */
    g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
    g_autofree char *relu = src_path ("tests/custom-op/data/relu.onnx");
    g_autoptr (ClinferModel) rm = clinfer_model_read (relu, NULL);
    g_autoptr (ClinferCompiled) c = NULL;
    clinfer_compile_config_set_device (cfg, device);
    c = clinfer_compile (rm, cfg, NULL);
    g_assert_nonnull (c);
    dev = g_strdup (clinfer_compiled_get_device_name (c));
  }

  /* create_kernel fails while the model is read. */
  err = custom_error ("tests/custom-op/data/probe-fail.onnx", &op, FALSE);
  assert_node_error (err->message, fail_path, PROBE_LABEL, NULL);
  g_assert_nonnull (strstr (err->message, "create_kernel failed: asked to fail"));
  g_clear_error (&err);

  /* The model gives the op an input type it does not take. */
  op.inputs = i32_in;
  err = custom_error ("tests/custom-op/data/probe.onnx", &op, TRUE);
  assert_node_error (err->message, probe_path, PROBE_LABEL, NULL);
  g_assert_nonnull (strstr (err->message, "input 0 is f32, the op takes i32"));
  g_clear_error (&err);
  op.inputs = f32_in;

  /* The op has two outputs, the node one. */
  op.n_outputs = 2;
  op.outputs = two_out;
  err = custom_error ("tests/custom-op/data/probe.onnx", &op, FALSE);
  assert_node_error (err->message, probe_path, PROBE_LABEL, NULL);
  g_assert_nonnull (strstr (err->message, ": 1 output, the op has 2"));
  g_clear_error (&err);
  op.n_outputs = 1;
  op.outputs = f32_in;

  /* Ports left out with an empty name, where the op requires them. */
  pair.n_inputs = 2;
  pair.inputs = two_out;
  pair.n_outputs = 2;
  pair.outputs = two_out;
  pair.create_kernel = NULL;
  pair.destroy_kernel = NULL;
  err = custom_error ("tests/custom-op/data/left-out.onnx", &pair, FALSE);
  assert_node_error (err->message, left_path, pair_label, NULL);
  g_assert_nonnull (strstr (err->message,
          "input 0 is left out (empty name), but the op requires it"));
  g_clear_error (&err);
  pair.inputs = opt_req;
  err = custom_error ("tests/custom-op/data/left-out.onnx", &pair, FALSE);
  assert_node_error (err->message, left_path, pair_label, NULL);
  g_assert_nonnull (strstr (err->message,
          "output 1 is left out (empty name), but the op requires it"));
  g_clear_error (&err);

  /* compute fails, or returns without allocating, on the device. */
  op.compute = failing_compute;
  err = custom_error ("tests/custom-op/data/probe.onnx", &op, TRUE);
  assert_node_error (err->message, probe_path, PROBE_LABEL, dev);
  g_assert_nonnull (strstr (err->message,
          "compute failed: element 3 is out of range"));
  g_clear_error (&err);
  op.compute = no_output_compute;
  err = custom_error ("tests/custom-op/data/probe.onnx", &op, TRUE);
  assert_node_error (err->message, probe_path, PROBE_LABEL, dev);
  g_assert_nonnull (strstr (err->message, "compute did not allocate output 0"));
  g_clear_error (&err);
}

/* A library overriding Relu, Tanh, Abs and Add (tests/custom-op/
 * override-ops.c) wins on a 4-D model wherever those ops sit: alone, in
 * an element-wise chain, after a conv (fused activation, batch norm,
 * residual and bias adds), on the oneDNN path and on clinfer's own
 * kernels, on the CPU and GPU devices. The expected outputs
 * (make-reference.py) are values no built-in op gives. */
static void
run_override (gboolean onednn)
{
  static const char *const outputs[] = { "relu", "tanh", "abs", "chain",
    "mixed", "conv_relu", "conv_bn_relu", "conv_residual", "conv_bias",
    "conv_tanh" };
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autofree char *path = src_path ("tests/custom-op/data/override.onnx");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = NULL;
  g_autoptr (ClinferCompiled) compiled = NULL;
  g_autoptr (ClinferRequest) req = NULL;
  g_autoptr (ClinferTensor) x =
      load_npy ("tests/custom-op/data/override-x.npy");

  if (onednn)
    g_unsetenv ("CLINFER_CPU_ONEDNN");
  else
    g_setenv ("CLINFER_CPU_ONEDNN", "0", TRUE);
  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_threads (cfg, 2);
  g_assert_true (clinfer_compile_config_add_custom_lib (cfg,
          g_getenv ("CLINFER_OVERRIDE_OPS"), &err));
  g_assert_no_error (err);
  model = clinfer_model_read_with_config (path, cfg, &err);
  g_assert_no_error (err);
  compiled = clinfer_compile (model, cfg, &err);
  g_assert_no_error (err);
  g_unsetenv ("CLINFER_CPU_ONEDNN");
  req = clinfer_compiled_create_request (compiled, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input (req, "x", x, &err));
  g_assert_true (clinfer_request_infer (req, &err));
  g_assert_no_error (err);
  for (guint i = 0; i < G_N_ELEMENTS (outputs); i++) {
    g_autofree char *rel = g_strdup_printf (
        "tests/custom-op/data/override-%u-%s.npy", i, outputs[i]);
    g_autoptr (ClinferTensor) want = load_npy (rel);
    ClinferTensor *got = clinfer_request_get_output (req, i);
    int64_t n = clinfer_tensor_get_n_elements (want);

    g_assert_nonnull (got);
    g_assert_cmpint (clinfer_tensor_get_n_elements (got), ==, n);
    for (int64_t k = 0; k < n; k++) {
      double a = clinfer_tensor_get_as_double (got, k);
      double b = clinfer_tensor_get_as_double (want, k);
      if (fabs (a - b) > 1e-4 * MAX (1.0, fabs (b)))
        g_error ("%s%s: output %s element %" G_GINT64_FORMAT ": got %g, "
            "want %g (the override's result)", device,
            onednn ? "" : " without oneDNN", outputs[i], k, a, b);
    }
  }
}

static void
test_override_everywhere (void)
{
  run_override (TRUE);
  if (g_ascii_strcasecmp (device, "CPU") == 0)
    run_override (FALSE);
}

/* Ops the model readers never turn into steps cannot be overridden. */
static void
test_override_source_refused (void)
{
  ClinferCustomOp op = OP ("Constant", "", double_compute);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (GError) err = NULL;
  const ClinferCustomOp *p = &op;

  op.flags = CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN;
  g_assert_false (clinfer_compile_config_add_custom_ops (cfg, &p, 1, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message,
          "op 'Constant' cannot be overridden"));
  g_assert_cmpuint (clinfer_compile_config_get_n_custom_ops (cfg), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
  if (g_ascii_strncasecmp (device, "GPU", 3) == 0) {
    /* Exit 77 (skipped) without an OpenCL device. */
    g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
    g_autofree char *path = src_path ("tests/custom-op/data/relu.onnx");
    g_autoptr (ClinferModel) m = clinfer_model_read (path, NULL);
    g_autoptr (GError) err = NULL;
    g_autoptr (ClinferCompiled) c = NULL;
    clinfer_compile_config_set_device (cfg, device);
    c = m ? clinfer_compile (m, cfg, &err) : NULL;
    if (c == NULL) {
      g_printerr ("no OpenCL device: %s\n", err ? err->message : "?");
      return 77;
    }
    g_test_add_func ("/custom-op/gpu/example-model", test_example_model);
    g_test_add_func ("/custom-op/gpu/image-model", test_image_model);
    g_test_add_func ("/custom-op/gpu/foreign-ir", test_foreign_ir);
    g_test_add_func ("/custom-op/gpu/override-everywhere",
        test_override_everywhere);
    g_test_add_func ("/custom-op/gpu/error-format", test_error_format);
    return g_test_run ();
  }
  g_test_add_func ("/custom-op/example-model", test_example_model);
  g_test_add_func ("/custom-op/image-model", test_image_model);
  g_test_add_func ("/custom-op/foreign-ir", test_foreign_ir);
  g_test_add_func ("/custom-op/unknown-without-library", test_unknown_without_library);
  g_test_add_func ("/custom-op/compiled-outlives-config", test_compiled_outlives_config);
  g_test_add_func ("/custom-op/compute-error-then-reuse", test_compute_error_then_reuse);
  g_test_add_func ("/custom-op/library-errors", test_lib_errors);
  g_test_add_func ("/custom-op/library-twice", test_lib_twice);
  g_test_add_func ("/custom-op/configs-are-separate", test_configs_are_separate);
  g_test_add_func ("/custom-op/attributes-and-default-shapes",
      test_attributes_and_default_shapes);
  g_test_add_func ("/custom-op/compute-errors", test_compute_errors);
  g_test_add_func ("/custom-op/create-kernel-error", test_create_kernel_error);
  g_test_add_func ("/custom-op/registration-errors", test_registration_errors);
  g_test_add_func ("/custom-op/override-builtin", test_override_builtin);
  g_test_add_func ("/custom-op/override-everywhere", test_override_everywhere);
  g_test_add_func ("/custom-op/error-format", test_error_format);
  g_test_add_func ("/custom-op/override-source-refused",
      test_override_source_refused);
  return g_test_run ();
}
