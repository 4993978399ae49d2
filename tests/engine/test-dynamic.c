/* clinfer — dynamic shapes: a model whose Reshape target is computed from
 * the input's shape (Shape -> Slice -> Concat -> Reshape) runs for several
 * input sizes with one compiled model and one request, without reloading. */
#include <clinfer/clinfer.h>
#include <math.h>
#include <string.h>

static void
test_shape_chain_several_sizes (void)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");
  g_autofree char *path = g_build_filename (root ? root : ".", "tests", "data",
      "dynamic", "shape-chain.onnx", NULL);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = clinfer_model_read (path, &err);
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  const int64_t sizes[][4] = { { 1, 3, 4, 5 }, { 2, 3, 7, 3 }, { 1, 3, 1, 1 },
    { 1, 3, 4, 5 }, { 3, 3, 16, 9 } };

  g_assert_no_error (err);
  c = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  for (gsize k = 0; k < G_N_ELEMENTS (sizes); k++) {
    ClinferShape s = clinfer_shape_make (4, sizes[k]);
    g_autoptr (ClinferTensor) x = clinfer_tensor_new (CLINFER_TYPE_F32, &s, &err);
    float *xp = clinfer_tensor_get_data (x);
    int64_t n = clinfer_tensor_get_n_elements (x), hw = sizes[k][2] * sizes[k][3];
    ClinferTensor *y, *sum;
    const float *yp, *sp;

    for (int64_t i = 0; i < n; i++)
      xp[i] = (float) ((i * 7) % 11) - 5.f;
    g_assert_true (clinfer_request_set_input (r, "x", x, &err));
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
    y = clinfer_request_get_output (r, 0);
    sum = clinfer_request_get_output (r, 1);
    g_assert_cmpint (clinfer_tensor_get_shape (y)->rank, ==, 3);
    g_assert_cmpint (clinfer_tensor_get_shape (y)->dims[0], ==, sizes[k][0]);
    g_assert_cmpint (clinfer_tensor_get_shape (y)->dims[2], ==, hw);
    g_assert_cmpint (clinfer_tensor_get_shape (sum)->dims[1], ==, 3);
    yp = clinfer_tensor_get_const_data (y);
    sp = clinfer_tensor_get_const_data (sum);
    for (int64_t row = 0; row < sizes[k][0] * 3; row++) {
      double acc = 0;
      for (int64_t i = 0; i < hw; i++) {
        float want = MAX (xp[row * hw + i], 0.f);
        g_assert_cmpfloat (yp[row * hw + i], ==, want);
        acc += want;
      }
      g_assert_cmpfloat (fabs (sp[row] - acc), <, 1e-4);
    }
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dynamic/shape-chain-several-sizes", test_shape_chain_several_sizes);
  return g_test_run ();
}
