/* clinfer — unit tests of the element-wise, activation and logic ops on
 * small graphs built in memory: legacy broadcasting, integer Mod, Pow with
 * mixed types, Where, Clip on integers, Round, large broadcast tiles and
 * attribute/type errors naming the node. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* Adds node @op named @name reading @ins (NULL entries = absent) and
 * makes its output the graph output "y". */
static ClinferNode *
add_op (ClinferGraph *g, const char *op, const char *name, guint n_in,
    ClinferNode *const *ins)
{
  ClinferNode *n = clinfer_graph_add_node (g, op, "", name, n_in, 1);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i].node = ins[i];
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  return n;
}

/* Builds "y = op (a[, b[, c]])" on graph inputs and runs it. */
static ClinferTensor *
run_op (const char *op, int opset, guint n, ClinferTensor *const *inputs,
    const char *attr, ClinferAttr *value)
{
  static const char *names[] = { "a", "b", "c" };
  ClinferGraph *g = clinfer_graph_new ("t", "<test>");
  ClinferNode *ins[3] = { NULL };
  ClinferNode *node;

  for (guint i = 0; i < n; i++)
    ins[i] = op_test_input_like (g, names[i], inputs[i]);
  node = add_op (g, op, "op", n, ins);
  if (attr)
    clinfer_node_set_attr (node, attr, value);
  return op_test_run_compiled_output (g, opset, inputs, n);
}

/* ---- tests ---- */

/* Opset 6 Add with broadcast=1, axis=0: B [2] aligns with A's dim 0. */
static void
test_legacy_broadcast_axis (void)
{
  int64_t da[] = { 2, 3 }, db[] = { 2 };
  float av[] = { 1, 2, 3, 4, 5, 6 }, bv[] = { 10, 20 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, da, av);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F32, 1, db, bv);
  ClinferTensor *ins[] = { a, b };
  ClinferGraph *g = clinfer_graph_new ("t", "<test>");
  ClinferNode *nodes[] = { op_test_input_like (g, "a", a),
    op_test_input_like (g, "b", b) };
  ClinferNode *add = add_op (g, "Add", "legacy_add", 2, nodes);
  g_autoptr (ClinferTensor) y = NULL;
  const float *o;

  clinfer_node_set_attr (add, "broadcast", clinfer_attr_new_int (1));
  clinfer_node_set_attr (add, "axis", clinfer_attr_new_int (0));
  y = op_test_run_compiled_output (g, 6, ins, 2);
  g_assert_cmpint (clinfer_tensor_get_shape (y)->rank, ==, 2);
  o = clinfer_tensor_get_const_data (y);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (o[i], ==, av[i] + bv[i / 3]);
}

/* Integer Mod: fmod=0 takes the divisor's sign (Python), fmod=1 the
 * dividend's (C); x % 0 gives 0 instead of trapping. */
static void
test_mod_integer_sign_rules (void)
{
  int64_t d[] = { 5 };
  int32_t av[] = { -4, 7, 5, -3, 9 }, bv[] = { 3, -3, -2, 2, 0 };
  int32_t py[] = { 2, -2, -1, 1, 0 }, c[] = { -1, 1, 1, -1, 0 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_I32, 1, d, av);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_I32, 1, d, bv);
  ClinferTensor *ins[] = { a, b };
  g_autoptr (ClinferTensor) y0 = run_op ("Mod", 13, 2, ins, NULL, NULL);
  g_autoptr (ClinferTensor) y1 = run_op ("Mod", 13, 2, ins, "fmod",
      clinfer_attr_new_int (1));

  for (int i = 0; i < 5; i++) {
    g_assert_cmpint (((const int32_t *) clinfer_tensor_get_const_data (y0))[i], ==, py[i]);
    g_assert_cmpint (((const int32_t *) clinfer_tensor_get_const_data (y1))[i], ==, c[i]);
  }
}

/* Pow with a float base and an int64 exponent keeps the base's type. */
static void
test_pow_mixed_types (void)
{
  int64_t d[] = { 3 };
  float av[] = { 2, -3, 0.5f };
  int64_t bv[] = { 3, 2, -1 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 1, d, av);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_I64, 1, d, bv);
  ClinferTensor *ins[] = { a, b };
  g_autoptr (ClinferTensor) y = run_op ("Pow", 15, 2, ins, NULL, NULL);
  const float *o = clinfer_tensor_get_const_data (y);

  g_assert_cmpint (clinfer_tensor_get_element_type (y), ==, CLINFER_TYPE_F32);
  g_assert_cmpfloat (o[0], ==, 8.f);
  g_assert_cmpfloat (o[1], ==, 9.f);
  g_assert_cmpfloat (o[2], ==, 2.f);
}

/* Pow by a scalar 2 (LayerNorm's variance) takes a shortcut for powf:
 * the same values, signs, infinities and NaN, also where the exponent
 * has more dims than the base (y grows to [2, 3]: the general loop). */
static void
test_pow_square (void)
{
  int64_t d[] = { 6 }, d1[] = { 1 }, d3[] = { 3 }, d21[] = { 2, 1 };
  float av[] = { 2.5f, -3.f, 0.f, -INFINITY, NAN, 1e-30f }, two[] = { 2, 2 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 1, d, av);
  g_autoptr (ClinferTensor) a3 = op_test_tensor (CLINFER_TYPE_F32, 1, d3, av);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F32, 1, d1, two);
  g_autoptr (ClinferTensor) b21 = op_test_tensor (CLINFER_TYPE_F32, 2, d21, two);
  ClinferTensor *ins[] = { a, b }, *ins2[] = { a3, b21 };
  g_autoptr (ClinferTensor) y = run_op ("Pow", 15, 2, ins, NULL, NULL);
  g_autoptr (ClinferTensor) y2 = run_op ("Pow", 15, 2, ins2, NULL, NULL);
  const float *o = clinfer_tensor_get_const_data (y);
  const float *o2 = clinfer_tensor_get_const_data (y2);

  for (int i = 0; i < 6; i++) {
    float want = powf (av[i], 2.f);
    if (isnan (want))
      g_assert_true (isnan (o[i]));
    else
      g_assert_cmpfloat (o[i], ==, want);
  }
  g_assert_cmpint (clinfer_tensor_get_n_elements (y2), ==, 6);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (o2[i], ==, powf (av[i % 3], 2.f));
}

/* Where broadcasts all three inputs: cond [2,1], x [3], y scalar. */
static void
test_where_broadcast (void)
{
  int64_t dc[] = { 2, 1 }, dx[] = { 3 };
  uint8_t cv[] = { 1, 0 };
  int64_t xv[] = { 1, 2, 3 }, yv[] = { -7 };
  g_autoptr (ClinferTensor) c = op_test_tensor (CLINFER_TYPE_BOOL, 2, dc, cv);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_I64, 1, dx, xv);
  g_autoptr (ClinferTensor) s = op_test_tensor (CLINFER_TYPE_I64, 0, NULL, yv);
  ClinferTensor *ins[] = { c, x, s };
  g_autoptr (ClinferTensor) y = run_op ("Where", 16, 3, ins, NULL, NULL);
  const int64_t *o = clinfer_tensor_get_const_data (y);
  int64_t expect[] = { 1, 2, 3, -7, -7, -7 };

  g_assert_cmpint (clinfer_tensor_get_shape (y)->dims[0], ==, 2);
  g_assert_cmpint (clinfer_tensor_get_shape (y)->dims[1], ==, 3);
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (o[i], ==, expect[i]);
}

/* Clip-13 on int8 with only the min input. */
static void
test_clip_int8 (void)
{
  int64_t d[] = { 4 };
  int8_t xv[] = { -128, -5, 0, 127 }, lo[] = { -4 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_I8, 1, d, xv);
  g_autoptr (ClinferTensor) m = op_test_tensor (CLINFER_TYPE_I8, 0, NULL, lo);
  ClinferTensor *ins[] = { x, m };
  g_autoptr (ClinferTensor) y = run_op ("Clip", 13, 2, ins, NULL, NULL);
  const int8_t *o = clinfer_tensor_get_const_data (y);
  int8_t expect[] = { -4, -4, 0, 127 };

  for (int i = 0; i < 4; i++)
    g_assert_cmpint (o[i], ==, expect[i]);
}

/* Round goes half to even. */
static void
test_round_half_to_even (void)
{
  int64_t d[] = { 7 };
  float xv[] = { 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f };
  float expect[] = { 0, 2, 2, -0.f, -2, 2, -3 };
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 1, d, xv);
  ClinferTensor *ins[] = { x };
  g_autoptr (ClinferTensor) y = run_op ("Round", 11, 1, ins, NULL, NULL);
  const float *o = clinfer_tensor_get_const_data (y);

  for (int i = 0; i < 7; i++)
    g_assert_cmpfloat (o[i], ==, expect[i]);
}

/* A broadcast large enough for several tiles and threads:
 * [3, 40000] * [40000], then Sigmoid through the same path. */
static void
test_large_broadcast_mul (void)
{
  int64_t da[] = { 3, 40000 }, db[] = { 40000 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, da, NULL);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F32, 1, db, NULL);
  ClinferTensor *ins[] = { a, b };
  float *pa = clinfer_tensor_get_data (a), *pb = clinfer_tensor_get_data (b);
  g_autoptr (ClinferTensor) y = NULL;
  const float *o;

  for (int i = 0; i < 120000; i++)
    pa[i] = (float) (i % 97) - 48.f;
  for (int i = 0; i < 40000; i++)
    pb[i] = (float) (i % 13) * 0.25f;
  y = run_op ("Mul", 14, 2, ins, NULL, NULL);
  o = clinfer_tensor_get_const_data (y);
  for (int i = 0; i < 120000; i++)
    g_assert_cmpfloat (o[i], ==, pa[i] * pb[i % 40000]);
}

/* A Max over three inputs of different ranks. */
static void
test_variadic_max_broadcast (void)
{
  int64_t d0[] = { 2, 2 }, d1[] = { 2 }, d2[] = { 2, 1 };
  float v0[] = { 1, 5, 3, 0 }, v1[] = { 2, 2 }, v2[] = { 4, -1 };
  g_autoptr (ClinferTensor) a = op_test_tensor (CLINFER_TYPE_F32, 2, d0, v0);
  g_autoptr (ClinferTensor) b = op_test_tensor (CLINFER_TYPE_F32, 1, d1, v1);
  g_autoptr (ClinferTensor) c = op_test_tensor (CLINFER_TYPE_F32, 2, d2, v2);
  ClinferTensor *ins[] = { a, b, c };
  g_autoptr (ClinferTensor) y = run_op ("Max", 13, 3, ins, NULL, NULL);
  const float *o = clinfer_tensor_get_const_data (y);
  float expect[] = { 4, 5, 3, 2 };

  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (o[i], ==, expect[i]);
}

static void
test_bitshift_rejects_bad_direction (void)
{
  ClinferGraph *g = clinfer_graph_new ("t", "bad.onnx");
  int64_t d[] = { 2 };
  ClinferShape s = clinfer_shape_make (1, d);
  ClinferNode *ins[] = { clinfer_graph_add_input (g, "a", CLINFER_TYPE_U8, &s),
    clinfer_graph_add_input (g, "b", CLINFER_TYPE_U8, &s) };
  ClinferNode *n = add_op (g, "BitShift", "shift_up", 2, ins);
  GError *err = NULL;

  clinfer_node_set_attr (n, "direction", clinfer_attr_new_string ("UP"));
  g_assert_null (op_test_model (g, 11, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "shift_up"));
  g_assert_nonnull (strstr (err->message, "direction"));
  g_clear_error (&err);
}

static void
test_add_rejects_mixed_types (void)
{
  ClinferGraph *g = clinfer_graph_new ("t", "bad.onnx");
  int64_t d[] = { 2 };
  ClinferShape s = clinfer_shape_make (1, d);
  ClinferNode *ins[] = { clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &s),
    clinfer_graph_add_input (g, "b", CLINFER_TYPE_I32, &s) };
  g_autoptr (ClinferModel) m = NULL;
  GError *err = NULL;

  add_op (g, "Add", "mixed_add", 2, ins);
  m = op_test_model (g, 14, &err);
  g_assert_no_error (err);
  g_assert_null (clinfer_compile (m, NULL, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "mixed_add"));
  g_clear_error (&err);
}

static void
test_sigmoid_rejects_integers (void)
{
  ClinferGraph *g = clinfer_graph_new ("t", "bad.onnx");
  int64_t d[] = { 2 };
  ClinferShape s = clinfer_shape_make (1, d);
  ClinferNode *ins[] = { clinfer_graph_add_input (g, "a", CLINFER_TYPE_I32, &s) };
  g_autoptr (ClinferModel) m = NULL;
  GError *err = NULL;

  add_op (g, "Sigmoid", "int_sigmoid", 1, ins);
  m = op_test_model (g, 13, &err);
  g_assert_no_error (err);
  g_assert_null (clinfer_compile (m, NULL, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "int_sigmoid"));
  g_clear_error (&err);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/eltwise/legacy-broadcast-axis", test_legacy_broadcast_axis);
  g_test_add_func ("/eltwise/mod-integer-sign-rules", test_mod_integer_sign_rules);
  g_test_add_func ("/eltwise/pow-mixed-types", test_pow_mixed_types);
  g_test_add_func ("/eltwise/pow-square", test_pow_square);
  g_test_add_func ("/eltwise/variadic-max-broadcast", test_variadic_max_broadcast);
  g_test_add_func ("/eltwise/large-broadcast-mul", test_large_broadcast_mul);
  g_test_add_func ("/logic/where-broadcast", test_where_broadcast);
  g_test_add_func ("/activation/clip-int8", test_clip_int8);
  g_test_add_func ("/activation/round-half-to-even", test_round_half_to_even);
  g_test_add_func ("/eltwise/bitshift-rejects-bad-direction",
      test_bitshift_rejects_bad_direction);
  g_test_add_func ("/eltwise/add-rejects-mixed-types", test_add_rejects_mixed_types);
  g_test_add_func ("/activation/sigmoid-rejects-integers",
      test_sigmoid_rejects_integers);
  return g_test_run ();
}
