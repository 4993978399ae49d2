/* clinfer — unit tests of reductions, softmax, MatMul/Gemm/Einsum, norms and
 * ConvTranspose on in-memory graphs against naive loops; errors name nodes. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

/* ---- helpers ---- */

static const float *
fdata (const ClinferTensor *t)
{
  return clinfer_tensor_get_const_data (t);
}

/* Graph "y = op (inputs...)"; inputs are graph inputs "i0", "i1", ...
 * except those given in @consts (non-NULL entries become constants). */
static ClinferGraph *
op_graph (const char *op, const char *name, guint n, ClinferTensor *const *ins,
    ClinferTensor *const *consts, ClinferNode **node_out)
{
  ClinferGraph *g = clinfer_graph_new ("t", "model.onnx");
  ClinferNode *node = clinfer_graph_add_node (g, op, "", name, n, 1);

  for (guint i = 0; i < n; i++) {
    g_autofree char *iname = g_strdup_printf ("i%u", i);
    if (consts && consts[i])
      node->inputs[i].node = clinfer_graph_add_constant (g, iname, consts[i]);
    else if (ins[i])
      node->inputs[i].node = op_test_input_like (g, iname, ins[i]);
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { node, 0 }, "y");
  *node_out = node;
  return g;
}

/* Runs @g, feeding the inputs that are not constants; returns a copy of
 * output 0. */
static ClinferTensor *
run_graph (ClinferGraph *g, int opset, guint n, ClinferTensor *const *ins,
    ClinferTensor *const *consts)
{
  ClinferTensor *fed[8];
  guint n_fed = 0;

  g_assert_cmpuint (n, <=, G_N_ELEMENTS (fed));
  for (guint i = 0; i < n; i++)
    if (ins[i] && !(consts && consts[i]))
      fed[n_fed++] = ins[i];
  return op_test_run_compiled_output (g, opset, fed, n_fed);
}

static void
assert_close (float got, double want)
{
  if (!(fabs (got - want) <= 1e-4 + 1e-4 * fabs (want)))
    g_error ("got %.9g, expected %.9g", got, want);
}

/* ---- MatMul and Gemm ---- */

/* [2, 1, m, k] x [3, k, n]: batch dims broadcast to [2, 3]. */
static void
check_matmul_batch (GRand *rand, int64_t m, int64_t k, int64_t n)
{
  int64_t da[] = { 2, 1, m, k }, db[] = { 3, k, n }, dy[] = { 2, 3, m, n };
  g_autoptr (ClinferTensor) a = op_test_random (rand, 4, da);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 3, db);
  ClinferTensor *ins[] = { a, b };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("MatMul", "mm", 2, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = run_graph (g, 13, 2, ins, NULL);

  op_test_assert_shape (y, 4, dy);
  for (int64_t p = 0; p < 2; p++)
    for (int64_t q = 0; q < 3; q++)
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double s = 0;
          for (int64_t l = 0; l < k; l++)
            s += (double) fdata (a)[(p * m + i) * k + l]
                * fdata (b)[(q * k + l) * n + j];
          assert_close (fdata (y)[((p * 3 + q) * m + i) * n + j], s);
        }
}

static void
test_matmul_batch_broadcast (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (1);

  check_matmul_batch (rand, 3, 5, 4);     /* small-m path */
  check_matmul_batch (rand, 37, 53, 70);  /* packed path with remainders */
}

/* 1-D operands are promoted and the promoted dims removed again. */
static void
test_matmul_vector_promotion (void)
{
  int64_t da[] = { 4 }, db[] = { 2, 4, 3 }, dy[] = { 2, 3 };
  float av[] = { 1, 2, 3, 4 };
  g_autoptr (GRand) rand = g_rand_new_with_seed (2);
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 1, da, av);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 3, db);
  ClinferTensor *ins[] = { a, b };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("MatMul", "mv", 2, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = run_graph (g, 13, 2, ins, NULL);

  op_test_assert_shape (y, 2, dy);
  for (int q = 0; q < 2; q++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int l = 0; l < 4; l++)
        s += av[l] * fdata (b)[(q * 4 + l) * 3 + j];
      assert_close (fdata (y)[q * 3 + j], s);
    }
}

static void
check_gemm (GRand *rand, int64_t m, int64_t k, int64_t n, gboolean ta,
    gboolean tb)
{
  int64_t da[] = { ta ? k : m, ta ? m : k }, db[] = { tb ? n : k, tb ? k : n };
  int64_t dc[] = { n }, dy[] = { m, n };
  g_autoptr (ClinferTensor) a = op_test_random (rand, 2, da);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 2, db);
  g_autoptr (ClinferTensor) c = op_test_random (rand, 1, dc);
  ClinferTensor *ins[] = { a, b, c };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("Gemm", "gemm", 3, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = NULL;

  clinfer_node_set_attr (node, "transA", clinfer_attr_new_int (ta));
  clinfer_node_set_attr (node, "transB", clinfer_attr_new_int (tb));
  clinfer_node_set_attr (node, "alpha", clinfer_attr_new_float (0.5f));
  clinfer_node_set_attr (node, "beta", clinfer_attr_new_float (2.f));
  y = run_graph (g, 13, 3, ins, NULL);
  op_test_assert_shape (y, 2, dy);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t l = 0; l < k; l++)
        s += (double) fdata (a)[ta ? l * m + i : i * k + l]
            * fdata (b)[tb ? j * k + l : l * n + j];
      assert_close (fdata (y)[i * n + j], 0.5 * s + 2.0 * fdata (c)[j]);
    }
}

static void
test_gemm_transposes (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);

  for (int t = 0; t < 4; t++) {
    check_gemm (rand, 2, 7, 5, t & 1, t >> 1);
    check_gemm (rand, 19, 33, 41, t & 1, t >> 1);
  }
}

static void
test_matmul_rejects_inner_mismatch (void)
{
  int64_t da[] = { 2, 3 }, db[] = { 4, 5 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, da, NULL);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F32, 2, db, NULL);
  ClinferTensor *ins[] = { a, b };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("MatMul", "bad_matmul", 2, ins, NULL, &node);
  GError *err = NULL;

  g_assert_null (op_test_compile (g, 13, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "bad_matmul"));
  g_assert_nonnull (strstr (err->message, "2x3"));
  g_clear_error (&err);
}

static void
test_gemm_rejects_type_mismatch (void)
{
  int64_t d[] = { 2, 2 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, d, NULL);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F64, 2, d, NULL);
  ClinferTensor *ins[] = { a, b };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("Gemm", "mixed_gemm", 2, ins, NULL, &node);
  GError *err = NULL;

  g_assert_null (op_test_compile (g, 13, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "mixed_gemm"));
  g_clear_error (&err);
}

/* ---- Einsum ---- */

static ClinferTensor *
run_einsum (const char *eq, guint n, ClinferTensor *const *ins)
{
  ClinferNode *node;
  ClinferGraph *g = op_graph ("Einsum", "ein", n, ins, NULL, &node);

  clinfer_node_set_attr (node, "equation", clinfer_attr_new_string (eq));
  return run_graph (g, 12, n, ins, NULL);
}

static void
test_einsum_equations (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (4);
  int64_t da[] = { 2, 3, 4 }, db[] = { 2, 4, 5 }, dsq[] = { 3, 3 };
  int64_t dbm[] = { 2, 3, 5 }, dd[] = { 3 }, dt[] = { 2, 4, 3 };
  g_autoptr (ClinferTensor) a = op_test_random (rand, 3, da);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 3, db);
  g_autoptr (ClinferTensor) sq = op_test_random (rand, 2, dsq);
  ClinferTensor *ab[] = { a, b };
  g_autoptr (ClinferTensor) bm = run_einsum ("bij, bjk -> bik", 2, ab);
  g_autoptr (ClinferTensor) diag = run_einsum ("ii->i", 1, &sq);
  g_autoptr (ClinferTensor) tr = run_einsum ("...ij->...ji", 1, &a);
  g_autoptr (ClinferTensor) trace = run_einsum ("ii", 1, &sq);

  op_test_assert_shape (bm, 3, dbm);
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 5; k++) {
        double s = 0;
        for (int j = 0; j < 4; j++)
          s += (double) fdata (a)[(p * 3 + i) * 4 + j] * fdata (b)[(p * 4 + j) * 5 + k];
        assert_close (fdata (bm)[(p * 3 + i) * 5 + k], s);
      }
  op_test_assert_shape (diag, 1, dd);
  for (int i = 0; i < 3; i++)
    assert_close (fdata (diag)[i], fdata (sq)[i * 4]);
  op_test_assert_shape (tr, 3, dt);
  for (int p = 0; p < 2; p++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        assert_close (fdata (tr)[(p * 4 + j) * 3 + i], fdata (a)[(p * 3 + i) * 4 + j]);
  op_test_assert_shape (trace, 0, NULL);
  assert_close (fdata (trace)[0], (double) fdata (sq)[0] + fdata (sq)[4] + fdata (sq)[8]);
}

static void
test_einsum_rejects_bad_equation (void)
{
  int64_t d[] = { 2, 2 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, d, NULL);
  ClinferNode *node;
  ClinferGraph *g = op_graph ("Einsum", "bad_einsum", 1, &a, NULL, &node);
  GError *err = NULL;

  clinfer_node_set_attr (node, "equation", clinfer_attr_new_string ("ij,jk->ik"));
  g_assert_null (op_test_compile (g, 12, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "bad_einsum"));
  g_clear_error (&err);
}

/* ---- Softmax ---- */

/* Opset 11 coerces to 2-D at axis 1 ([2, 12]); opset 13 normalises
 * along dim 1 only. */
static void
test_softmax_axis_semantics (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  int64_t d[] = { 2, 3, 4 };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 3, d);
  ClinferNode *node;
  ClinferGraph *g11 = op_graph ("Softmax", "sm", 1, &x, NULL, &node);
  g_autoptr (ClinferTensor) y11 = NULL;
  g_autoptr (ClinferTensor) y13 = NULL;
  ClinferGraph *g13;

  clinfer_node_set_attr (node, "axis", clinfer_attr_new_int (1));
  y11 = run_graph (g11, 11, 1, &x, NULL);
  g13 = op_graph ("Softmax", "sm", 1, &x, NULL, &node);
  clinfer_node_set_attr (node, "axis", clinfer_attr_new_int (1));
  y13 = run_graph (g13, 13, 1, &x, NULL);
  for (int n = 0; n < 2; n++) {
    double s11 = 0, mx = -INFINITY, z = 0;
    for (int i = 0; i < 12; i++) {
      s11 += fdata (y11)[n * 12 + i];
      mx = MAX (mx, fdata (x)[n * 12 + i]);
    }
    assert_close ((float) s11, 1.0);
    for (int i = 0; i < 12; i++)
      z += exp (fdata (x)[n * 12 + i] - mx);
    assert_close (fdata (y11)[n * 12 + 5], exp (fdata (x)[n * 12 + 5] - mx) / z);
    for (int k = 0; k < 4; k++) {
      double s13 = 0;
      for (int c = 0; c < 3; c++)
        s13 += fdata (y13)[(n * 3 + c) * 4 + k];
      assert_close ((float) s13, 1.0);
    }
  }
}

/* Large inputs do not overflow: the max is subtracted first. */
static void
test_logsoftmax_large_values (void)
{
  int64_t d[] = { 1, 3 };
  float v[] = { 1000.f, 1001.f, 1002.f };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, d, v);
  ClinferNode *node;
  ClinferGraph *g = op_graph ("LogSoftmax", "ls", 1, &x, NULL, &node);
  g_autoptr (ClinferTensor) y = run_graph (g, 13, 1, &x, NULL);
  double lse = 1002.0 + log (exp (-2.0) + exp (-1.0) + 1.0);

  for (int i = 0; i < 3; i++)
    assert_close (fdata (y)[i], v[i] - lse);
}

/* ---- Reductions ---- */

static void
test_reduce_mean_negative_axes (void)
{
  int64_t d[] = { 2, 3, 4 }, axes[] = { -1, -3 }, dy[] = { 3 };
  g_autoptr (GRand) rand = g_rand_new_with_seed (6);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 3, d);
  ClinferNode *node;
  ClinferGraph *g = op_graph ("ReduceMean", "rm", 1, &x, NULL, &node);
  g_autoptr (ClinferTensor) y = NULL;

  clinfer_node_set_attr (node, "axes", clinfer_attr_new_ints (axes, 2));
  clinfer_node_set_attr (node, "keepdims", clinfer_attr_new_int (0));
  y = run_graph (g, 13, 1, &x, NULL);
  op_test_assert_shape (y, 1, dy);
  for (int j = 0; j < 3; j++) {
    double s = 0;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++)
        s += fdata (x)[(i * 3 + j) * 4 + k];
    assert_close (fdata (y)[j], s / 8);
  }
}

/* ReduceSum-13 reads axes from an input; an empty one with
 * noop_with_empty_axes passes the data through. */
static void
test_reduce_sum_axes_input (void)
{
  int64_t d[] = { 2, 3 }, da[] = { 1 }, d0[] = { 0 }, dy[] = { 2, 1 };
  int64_t axis[] = { 1 };
  float v[] = { 1, 2, 3, 4, 5, 6 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, d, v);
  g_autoptr (ClinferTensor) ax = op_test_tensor (CLINFER_TYPE_I64, 1, da, axis);
  g_autoptr (ClinferTensor) empty = op_test_tensor (CLINFER_TYPE_I64, 1, d0,
      NULL);
  ClinferTensor *ins[] = { x, ax }, *ins2[] = { x, empty };
  ClinferTensor *consts2[] = { NULL, empty };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("ReduceSum", "rs", 2, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = run_graph (g, 13, 2, ins, NULL);
  g_autoptr (ClinferTensor) y2 = NULL;

  op_test_assert_shape (y, 2, dy);
  assert_close (fdata (y)[0], 6);
  assert_close (fdata (y)[1], 15);
  g = op_graph ("ReduceSum", "rs", 2, ins2, consts2, &node);  /* constant axes */
  clinfer_node_set_attr (node, "noop_with_empty_axes", clinfer_attr_new_int (1));
  y2 = run_graph (g, 13, 2, ins2, consts2);
  op_test_assert_shape (y2, 2, d);
  for (int i = 0; i < 6; i++)
    assert_close (fdata (y2)[i], v[i]);
}

static void
test_reduce_max_int_and_argmax (void)
{
  int64_t d[] = { 2, 4 }, axes[] = { 1 }, dy[] = { 2, 1 };
  int32_t v[] = { 3, -7, 9, 9, -1, -5, -1, -2 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_I32, 2, d, v);
  ClinferNode *node;
  ClinferGraph *g = op_graph ("ReduceMax", "rmax", 1, &x, NULL, &node);
  g_autoptr (ClinferTensor) y = NULL;
  g_autoptr (ClinferTensor) am = NULL;
  const int32_t *yd;
  const int64_t *ad;

  clinfer_node_set_attr (node, "axes", clinfer_attr_new_ints (axes, 1));
  y = run_graph (g, 13, 1, &x, NULL);
  op_test_assert_shape (y, 2, dy);
  yd = clinfer_tensor_get_const_data (y);
  g_assert_cmpint (yd[0], ==, 9);
  g_assert_cmpint (yd[1], ==, -1);
  g = op_graph ("ArgMax", "am", 1, &x, NULL, &node);
  clinfer_node_set_attr (node, "axis", clinfer_attr_new_int (-1));
  clinfer_node_set_attr (node, "keepdims", clinfer_attr_new_int (0));
  clinfer_node_set_attr (node, "select_last_index", clinfer_attr_new_int (1));
  am = run_graph (g, 13, 1, &x, NULL);
  g_assert_cmpint (clinfer_tensor_get_element_type (am), ==, CLINFER_TYPE_I64);
  ad = clinfer_tensor_get_const_data (am);
  g_assert_cmpint (ad[0], ==, 3);
  g_assert_cmpint (ad[1], ==, 2);
}

static void
test_reduce_rejects_duplicate_axes (void)
{
  int64_t d[] = { 2, 3 }, axes[] = { 1, -1 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, d, NULL);
  ClinferNode *node;
  ClinferGraph *g = op_graph ("ReduceL2", "dup_axes", 1, &x, NULL, &node);
  GError *err = NULL;

  clinfer_node_set_attr (node, "axes", clinfer_attr_new_ints (axes, 2));
  g_assert_null (op_test_compile (g, 13, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "dup_axes"));
  g_clear_error (&err);
}

/* ---- f16 (computed in f32) ---- */

static ClinferTensor *
to_f16 (const ClinferTensor *t)
{
  ClinferTensor *h = op_test_tensor (CLINFER_TYPE_F16,
      clinfer_tensor_get_shape (t)->rank, clinfer_tensor_get_shape (t)->dims, NULL);
  uint16_t *p = clinfer_tensor_get_data (h);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    p[i] = clinfer_float_to_half (fdata (t)[i]);
  return h;
}

/* Runs @op on the f16 copies of @ins and compares with the f32 run. */
static void
check_f16 (const char *op, guint n, ClinferTensor *const *ins, const char *attr,
    int64_t value)
{
  ClinferTensor *h[2] = { NULL, NULL }, *r[2] = { NULL, NULL };
  ClinferNode *node;
  ClinferGraph *g;
  g_autoptr (ClinferTensor) yh = NULL;
  g_autoptr (ClinferTensor) yf = NULL;

  for (guint i = 0; i < n; i++) {
    h[i] = to_f16 (ins[i]);
    /* the f32 reference sees the same rounded inputs */
    r[i] = op_test_tensor (CLINFER_TYPE_F32,
        clinfer_tensor_get_shape (ins[i])->rank,
        clinfer_tensor_get_shape (ins[i])->dims, NULL);
    for (int64_t j = 0; j < clinfer_tensor_get_n_elements (ins[i]); j++)
      ((float *) clinfer_tensor_get_data (r[i]))[j] =
          (float) clinfer_tensor_get_as_double (h[i], j);
  }
  g = op_graph (op, "half", n, h, NULL, &node);
  if (attr)
    clinfer_node_set_attr (node, attr, clinfer_attr_new_int (value));
  yh = run_graph (g, 13, n, h, NULL);
  g = op_graph (op, "full", n, r, NULL, &node);
  if (attr)
    clinfer_node_set_attr (node, attr, clinfer_attr_new_int (value));
  yf = run_graph (g, 13, n, r, NULL);
  g_assert_cmpint (clinfer_tensor_get_element_type (yh), ==,
      clinfer_tensor_get_element_type (yf) == CLINFER_TYPE_F32
      ? CLINFER_TYPE_F16 : clinfer_tensor_get_element_type (yf));
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (yh),
          clinfer_tensor_get_shape (yf)));
  for (int64_t j = 0; j < clinfer_tensor_get_n_elements (yf); j++) {
    double want = clinfer_tensor_get_as_double (yf, j);
    g_assert_cmpfloat (fabs (clinfer_tensor_get_as_double (yh, j) - want), <=,
        2e-3 * (1 + fabs (want)));
  }
  for (guint i = 0; i < n; i++) {
    clinfer_tensor_unref (h[i]);
    clinfer_tensor_unref (r[i]);
  }
}

static void
test_f16_paths (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  int64_t da[] = { 6, 5 }, db[] = { 5, 7 };
  g_autoptr (ClinferTensor) a = op_test_random (rand, 2, da);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 2, db);
  ClinferTensor *ab[] = { a, b };

  check_f16 ("MatMul", 2, ab, NULL, 0);
  check_f16 ("Softmax", 1, ab, "axis", 0);
  check_f16 ("ReduceMean", 1, ab, "keepdims", 0);
  check_f16 ("ArgMin", 1, ab, "axis", 1);
}

/* ---- Normalisations and ConvTranspose ---- */

static void
test_layer_norm_outputs (void)
{
  int64_t d[] = { 2, 3 }, dw[] = { 3 };
  float v[] = { 1, 2, 3, -1, 0, 4 }, w[] = { 1, 2, 3 }, b[] = { 0, 1, 0 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, d, v);
  g_autoptr (ClinferTensor) tw = op_test_tensor (CLINFER_TYPE_F32, 1, dw, w);
  g_autoptr (ClinferTensor) tb = op_test_tensor (CLINFER_TYPE_F32, 1, dw, b);
  ClinferTensor *ins[] = { x, tw, tb };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("LayerNormalization", "ln", 3, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = run_graph (g, 17, 3, ins, NULL);

  for (int r = 0; r < 2; r++) {
    double m = (v[r * 3] + v[r * 3 + 1] + v[r * 3 + 2]) / 3, var = 0;
    for (int j = 0; j < 3; j++)
      var += (v[r * 3 + j] - m) * (v[r * 3 + j] - m) / 3;
    for (int j = 0; j < 3; j++)
      assert_close (fdata (y)[r * 3 + j],
          (v[r * 3 + j] - m) / sqrt (var + 1e-5) * w[j] + b[j]);
  }
}

/* 1-D, stride 2, pads 1: y[o] = sum over i, k with o = 2 i + k - 1. */
static void
test_conv_transpose_1d (void)
{
  int64_t dx[] = { 1, 1, 3 }, dw[] = { 1, 2, 3 }, strides[] = { 2 };
  int64_t pads[] = { 1, 1 }, dy[] = { 1, 2, 3 };
  float xv[] = { 1, 2, 3 }, wv[] = { 1, 1, 1, 1, 2, 3 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 3, dx, xv);
  g_autoptr (ClinferTensor) w = op_test_tensor (CLINFER_TYPE_F32, 3, dw, wv);
  ClinferTensor *ins[] = { x, w };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("ConvTranspose", "ct", 2, ins, NULL, &node);
  g_autoptr (ClinferTensor) y = NULL;

  clinfer_node_set_attr (node, "strides", clinfer_attr_new_ints (strides, 1));
  clinfer_node_set_attr (node, "pads", clinfer_attr_new_ints (pads, 2));
  y = run_graph (g, 11, 2, ins, NULL);
  dy[2] = 2 * (3 - 1) + 3 - 2;
  op_test_assert_shape (y, 3, dy);
  for (int oc = 0; oc < 2; oc++)
    for (int o = 0; o < dy[2]; o++) {
      double s = 0;
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
          if (2 * i + k - 1 == o)
            s += xv[i] * wv[oc * 3 + k];
      assert_close (fdata (y)[oc * dy[2] + o], s);
    }
}

static void
test_batchnorm_rejects_bad_params (void)
{
  int64_t dx[] = { 1, 3, 2 }, dp[] = { 4 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 3, dx, NULL);
  g_autoptr (ClinferTensor) p = op_test_tensor (CLINFER_TYPE_F32, 1, dp, NULL);
  ClinferTensor *ins[] = { x, p, p, p, p }, *consts[] = { NULL, p, p, p, p };
  ClinferNode *node;
  ClinferGraph *g = op_graph ("BatchNormalization", "bn_bad", 5, ins, consts,
      &node);
  GError *err = NULL;

  /* x is a graph input; the parameters are constants of the wrong size. */
  g_assert_null (op_test_compile (g, 15, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "bn_bad"));
  g_clear_error (&err);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ops/matmul/batch-broadcast", test_matmul_batch_broadcast);
  g_test_add_func ("/ops/matmul/vector-promotion", test_matmul_vector_promotion);
  g_test_add_func ("/ops/matmul/rejects-inner-mismatch", test_matmul_rejects_inner_mismatch);
  g_test_add_func ("/ops/gemm/transposes", test_gemm_transposes);
  g_test_add_func ("/ops/gemm/rejects-type-mismatch", test_gemm_rejects_type_mismatch);
  g_test_add_func ("/ops/einsum/equations", test_einsum_equations);
  g_test_add_func ("/ops/einsum/rejects-bad-equation", test_einsum_rejects_bad_equation);
  g_test_add_func ("/ops/softmax/axis-semantics", test_softmax_axis_semantics);
  g_test_add_func ("/ops/softmax/log-large-values", test_logsoftmax_large_values);
  g_test_add_func ("/ops/reduce/mean-negative-axes", test_reduce_mean_negative_axes);
  g_test_add_func ("/ops/reduce/sum-axes-input", test_reduce_sum_axes_input);
  g_test_add_func ("/ops/reduce/max-int-and-argmax", test_reduce_max_int_and_argmax);
  g_test_add_func ("/ops/reduce/rejects-duplicate-axes", test_reduce_rejects_duplicate_axes);
  g_test_add_func ("/ops/f16-paths", test_f16_paths);
  g_test_add_func ("/ops/norm/layer-norm", test_layer_norm_outputs);
  g_test_add_func ("/ops/norm/batchnorm-rejects-bad-params", test_batchnorm_rejects_bad_params);
  g_test_add_func ("/ops/convtranspose/1d", test_conv_transpose_1d);
  return g_test_run ();
}
