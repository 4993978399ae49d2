/* clinfer OpenCL tests — the typed kernels against the CPU device on cases
 * the ONNX backend data does not cover: integer and f64 binaries with
 * broadcasting (Pow of int64, Max of three int32, Sum/Mean of many f64),
 * Mean of four broadcast inputs, Einsum with repeated labels, unary ops,
 * Clip, MaxPool and ArgMax/ArgMin on integers, every pool on f64,
 * BatchNormalization with statistics from the graph and in training mode,
 * seeded training Dropout, MeanVarianceNormalization, LpNormalization and
 * integer/f64 reductions. The GPU compile runs with
 * fallback off, so each case proves the op runs on the device; f64 cases
 * on a device without cl_khr_fp64 must fail naming the extension. Exits
 * 77 (skipped) without an OpenCL device. */
#include "opencl-test-util.h"
#include "runtime/runtime.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  ClinferGraph *g;
  GRand *rand;
  GPtrArray *inputs;         /* ClinferTensor* per graph input */
  gboolean f64;              /* the case needs cl_khr_fp64 */
} Builder;

static void
store (ClinferTensor *t, int64_t i, double v)
{
  gpointer p = clinfer_tensor_get_data (t);

  switch (clinfer_tensor_get_element_type (t)) {
    case CLINFER_TYPE_F32: ((float *) p)[i] = (float) v; break;
    case CLINFER_TYPE_F64: ((double *) p)[i] = v; break;
    case CLINFER_TYPE_I8: ((gint8 *) p)[i] = (gint8) v; break;
    case CLINFER_TYPE_U8: ((guint8 *) p)[i] = (guint8) v; break;
    case CLINFER_TYPE_BOOL: ((guint8 *) p)[i] = v != 0; break;
    case CLINFER_TYPE_I32: ((gint32 *) p)[i] = (gint32) v; break;
    case CLINFER_TYPE_I64: ((gint64 *) p)[i] = (gint64) v; break;
    default: g_assert_not_reached ();
  }
}

/* Uniform values in [lo, hi), whole numbers for integer types. */
static ClinferTensor *
random_tensor (Builder *b, ClinferElementType type, int rank,
    const int64_t *dims, double lo, double hi)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);
  int64_t n = clinfer_tensor_get_n_elements (t);

  for (int64_t i = 0; i < n; i++) {
    double v = g_rand_double_range (b->rand, lo, hi);
    store (t, i, clinfer_element_type_is_float (type) ? v : floor (v));
  }
  return t;
}

static ClinferNode *
input (Builder *b, const char *name, ClinferElementType type, int rank,
    const int64_t *dims, double lo, double hi)
{
  ClinferTensor *t = random_tensor (b, type, rank, dims, lo, hi);
  ClinferNode *n = clinfer_graph_add_input (b->g, name, type,
      clinfer_tensor_get_shape (t));

  g_ptr_array_add (b->inputs, t);
  b->f64 |= type == CLINFER_TYPE_F64;
  return n;
}

/* A graph input holding the one value @v (run-time bounds, flags). */
static ClinferNode *
scalar_input (Builder *b, const char *name, ClinferElementType type, double v)
{
  ClinferShape s = clinfer_shape_make (0, NULL);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);

  store (t, 0, v);
  g_ptr_array_add (b->inputs, t);
  return clinfer_graph_add_input (b->g, name, type, &s);
}

/* A constant holding the one value @v. */
static ClinferNode *
scalar_constant (Builder *b, const char *name, ClinferElementType type,
    double v)
{
  ClinferShape s = clinfer_shape_make (0, NULL);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (type, &s, NULL);

  store (t, 0, v);
  return clinfer_graph_add_constant (b->g, name, t);
}

static ClinferNode *
op (Builder *b, const char *op_type, guint n_in, ClinferNode **ins,
    guint n_out)
{
  ClinferNode *n = clinfer_graph_add_node (b->g, op_type, "", NULL, n_in,
      n_out);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i] = (ClinferPortRef) { ins[i], 0 };
  return n;
}

static void
output (Builder *b, ClinferNode *n, guint port)
{
  g_autofree char *name = g_strdup_printf ("y%u", b->g->outputs->len);

  clinfer_graph_add_output (b->g, (ClinferPortRef) { n, port }, name);
}

static ClinferCompiled *
compile_full (ClinferGraph *g, const char *device, gboolean allow_fallback,
    GError **error)
{
  return test_compile_graph (g, "test-ocl-types", device, allow_fallback,
      error);
}

static ClinferCompiled *
compile (ClinferGraph *g, const char *device, GError **error)
{
  return compile_full (g, device, FALSE, error);
}

static GPtrArray *
run (ClinferCompiled *c, GPtrArray *inputs, GError **error)
{
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);

  if (r == NULL)
    return NULL;
  for (guint i = 0; i < inputs->len; i++)
    if (!clinfer_request_set_input_by_index (r, i,
            g_ptr_array_index (inputs, i), error))
      return NULL;
  if (!clinfer_request_infer (r, error))
    return NULL;
  for (guint i = 0; i < clinfer_compiled_get_n_outputs (c); i++)
    g_ptr_array_add (out,
        clinfer_tensor_copy (clinfer_request_get_output (r, i), NULL));
  return g_steal_pointer (&out);
}

/* Same type and shape; integers and bools exactly, floats within @tol
 * relative to max (1, |want|). */
static void
assert_same (const ClinferTensor *got, const ClinferTensor *want, double tol)
{
  ClinferElementType t = clinfer_tensor_get_element_type (want);
  int64_t n = clinfer_tensor_get_n_elements (want);

  g_assert_cmpint (clinfer_tensor_get_element_type (got), ==, t);
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (got),
          clinfer_tensor_get_shape (want)));
  for (int64_t i = 0; i < n; i++) {
    double a = clinfer_tensor_get_as_double (got, i);
    double w = clinfer_tensor_get_as_double (want, i);
    if (clinfer_element_type_is_float (t))
      g_assert_cmpfloat_with_epsilon (a, w, tol * MAX (1.0, fabs (w)));
    else
      g_assert_cmpfloat (a, ==, w);
  }
}

typedef void (*CaseFunc) (Builder *b);

static void
check_case (gconstpointer data)
{
  CaseFunc build = (CaseFunc) data;
  Builder b = { clinfer_graph_new ("case", "test-ocl-types"),
    g_rand_new_with_seed (4321),
    g_ptr_array_new_with_free_func ((GDestroyNotify) clinfer_tensor_unref),
    FALSE };
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) cpu = NULL, gpu = NULL;
  g_autoptr (GPtrArray) want = NULL, got = NULL;

  g_hash_table_insert (b.g->opsets, g_strdup (""), GINT_TO_POINTER (18));
  build (&b);
  cpu = compile (b.g, "CPU", &err);
  g_assert_no_error (err);
  want = run (cpu, b.inputs, &err);
  g_assert_no_error (err);
  gpu = compile (b.g, "GPU", &err);
  if (gpu == NULL && b.f64 && strstr (err->message, "cl_khr_fp64")) {
    /* A device without doubles says so instead of failing a build. */
    g_test_message ("no cl_khr_fp64: %s", err->message);
    goto out;
  }
  g_assert_no_error (err);
  got = run (gpu, b.inputs, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (got->len, ==, want->len);
  for (guint i = 0; i < got->len; i++)
    assert_same (g_ptr_array_index (got, i), g_ptr_array_index (want, i),
        1e-5);
out:
  clinfer_graph_free (b.g);
  g_rand_free (b.rand);
  g_ptr_array_unref (b.inputs);
}

/* ---------------------------------------------------------------- */
/* Cases                                                             */

/* int64 base of mixed signs broadcast against int64 exponents 0..6. */
static void
case_pow_int64_broadcast (Builder *b)
{
  const int64_t ad[] = { 3, 1, 5 }, ed[] = { 4, 1 };
  ClinferNode *ins[2] = {
    input (b, "a", CLINFER_TYPE_I64, 3, ad, -9, 10),
    input (b, "e", CLINFER_TYPE_I64, 2, ed, 0, 7) };

  output (b, op (b, "Pow", 2, ins, 1), 0);
}

/* int32 base, f32 exponent: computed in double, truncated to int32. */
static void
case_pow_int32_float (Builder *b)
{
  const int64_t ad[] = { 2, 7 }, ed[] = { 7 };
  ClinferNode *ins[2] = {
    input (b, "a", CLINFER_TYPE_I32, 2, ad, 1, 20),
    input (b, "e", CLINFER_TYPE_F32, 1, ed, 0, 3) };

  b->f64 = TRUE;
  output (b, op (b, "Pow", 2, ins, 1), 0);
}

/* Mean of four f32 inputs that broadcast to [2, 3, 5]. */
static void
case_mean4_broadcast (Builder *b)
{
  const int64_t d0[] = { 2, 3, 5 }, d1[] = { 3, 1 }, d2[] = { 5 };
  const int64_t d3[] = { 2, 1, 1 };
  ClinferNode *ins[4] = {
    input (b, "a", CLINFER_TYPE_F32, 3, d0, -2, 2),
    input (b, "b", CLINFER_TYPE_F32, 2, d1, -2, 2),
    input (b, "c", CLINFER_TYPE_F32, 1, d2, -2, 2),
    input (b, "d", CLINFER_TYPE_F32, 3, d3, -2, 2) };

  output (b, op (b, "Mean", 4, ins, 1), 0);
}

/* Mean and Sum of three f64 inputs, broadcast. */
static void
case_mean_sum_f64 (Builder *b)
{
  const int64_t d0[] = { 4, 6 }, d1[] = { 6 }, d2[] = { 4, 1 };
  ClinferNode *ins[3] = {
    input (b, "a", CLINFER_TYPE_F64, 2, d0, -2, 2),
    input (b, "b", CLINFER_TYPE_F64, 1, d1, -2, 2),
    input (b, "c", CLINFER_TYPE_F64, 2, d2, -2, 2) };

  output (b, op (b, "Mean", 3, ins, 1), 0);
  output (b, op (b, "Sum", 3, ins, 1), 0);
}

/* PRelu of f64 and int32 with a slope broadcast per channel. */
static void
case_prelu_f64_int (Builder *b)
{
  const int64_t xd[] = { 2, 3, 4 }, sd[] = { 3, 1 };
  ClinferNode *fd[2] = { input (b, "x", CLINFER_TYPE_F64, 3, xd, -2, 2),
    input (b, "s", CLINFER_TYPE_F64, 2, sd, 0, 1) };
  ClinferNode *id[2] = { input (b, "xi", CLINFER_TYPE_I32, 3, xd, -20, 20),
    input (b, "si", CLINFER_TYPE_I32, 2, sd, 0, 4) };

  output (b, op (b, "PRelu", 2, fd, 1), 0);
  output (b, op (b, "PRelu", 2, id, 1), 0);
}

/* Max and Min of three int32 inputs, broadcast. */
static void
case_max_min_int32 (Builder *b)
{
  const int64_t d0[] = { 3, 4 }, d1[] = { 1, 4 }, d2[] = { 3, 1 };
  ClinferNode *ins[3] = {
    input (b, "a", CLINFER_TYPE_I32, 2, d0, -50, 50),
    input (b, "b", CLINFER_TYPE_I32, 2, d1, -50, 50),
    input (b, "c", CLINFER_TYPE_I32, 2, d2, -50, 50) };

  output (b, op (b, "Max", 3, ins, 1), 0);
  output (b, op (b, "Min", 3, ins, 1), 0);
}

static ClinferNode *
einsum (Builder *b, const char *eq, guint n_in, ClinferNode **ins)
{
  ClinferNode *n = op (b, "Einsum", n_in, ins, 1);

  clinfer_node_set_attr (n, "equation", clinfer_attr_new_string (eq));
  return n;
}

/* Repeated labels: a batched diagonal, a trace (implicit scalar output),
 * and a label repeated across operands and within one. */
static void
case_einsum_repeated (Builder *b)
{
  const int64_t d0[] = { 3, 4, 4 }, d1[] = { 4, 5 };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_F32, 3, d0, -1, 1);
  ClinferNode *w = input (b, "w", CLINFER_TYPE_F32, 2, d1, -1, 1);
  ClinferNode *xw[2] = { x, w };

  output (b, einsum (b, "bii->bi", 1, &x), 0);
  output (b, einsum (b, "...ii", 1, &x), 0);
  output (b, einsum (b, "bii,ij->bj", 2, xw), 0);
}

/* Ellipsis broadcasting and three operands, in f64. */
static void
case_einsum_f64 (Builder *b)
{
  const int64_t d0[] = { 2, 1, 3, 4 }, d1[] = { 5, 4, 2 }, d2[] = { 2 };
  ClinferNode *ins[3] = {
    input (b, "a", CLINFER_TYPE_F64, 4, d0, -1, 1),
    input (b, "b", CLINFER_TYPE_F64, 3, d1, -1, 1),
    input (b, "c", CLINFER_TYPE_F64, 1, d2, -1, 1) };

  output (b, einsum (b, "...ij,...jk,k->...i", 3, ins), 0);
}

/* Clip of int32 with run-time bounds, of int8 with only a max, and of
 * int64 with constant bounds. */
static void
case_clip_int (Builder *b)
{
  const int64_t d[] = { 5, 6 };
  ClinferNode *ins[3] = {
    input (b, "x", CLINFER_TYPE_I32, 2, d, -100, 100),
    scalar_input (b, "lo", CLINFER_TYPE_I32, -20),
    scalar_input (b, "hi", CLINFER_TYPE_I32, 35) };
  ClinferNode *ins8[3] = {
    input (b, "x8", CLINFER_TYPE_I8, 2, d, -100, 100), NULL,
    scalar_input (b, "hi8", CLINFER_TYPE_I8, 10) };
  ClinferNode *ins64[3] = {
    input (b, "x64", CLINFER_TYPE_I64, 2, d, -100, 100),
    scalar_constant (b, "lo64", CLINFER_TYPE_I64, -7),
    scalar_constant (b, "hi64", CLINFER_TYPE_I64, 60) };

  output (b, op (b, "Clip", 3, ins, 1), 0);
  output (b, op (b, "Clip", 3, ins8, 1), 0);
  output (b, op (b, "Clip", 3, ins64, 1), 0);
}

/* MaxPool on int8 with padding (empty taps never win) and Indices. */
static void
case_maxpool_int8 (Builder *b)
{
  const int64_t d[] = { 2, 3, 7, 9 };
  int64_t k[] = { 3, 2 }, s[] = { 2, 2 }, p[] = { 1, 0, 1, 1 };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_I8, 4, d, -128, 128);
  ClinferNode *n = op (b, "MaxPool", 1, &x, 2);

  clinfer_node_set_attr (n, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (n, "strides", clinfer_attr_new_ints (s, 2));
  clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (p, 4));
  output (b, n, 0);
  output (b, n, 1);
}

/* BatchNormalization with scale/B/mean/var from the graph (inference),
 * and in training mode with the running statistics as outputs. */
static void
bn_case (Builder *b, gboolean training)
{
  const int64_t xd[] = { 3, 4, 5, 2 }, cd[] = { 4 };
  ClinferNode *ins[5] = {
    input (b, "x", CLINFER_TYPE_F32, 4, xd, -3, 3),
    input (b, "scale", CLINFER_TYPE_F32, 1, cd, 0.5, 2),
    input (b, "bias", CLINFER_TYPE_F32, 1, cd, -1, 1),
    input (b, "mean", CLINFER_TYPE_F32, 1, cd, -1, 1),
    input (b, "var", CLINFER_TYPE_F32, 1, cd, 0.5, 2) };
  ClinferNode *n = op (b, "BatchNormalization", 5, ins, training ? 3 : 1);

  clinfer_node_set_attr (n, "epsilon", clinfer_attr_new_float (1e-3f));
  if (training) {
    clinfer_node_set_attr (n, "training_mode", clinfer_attr_new_int (1));
    clinfer_node_set_attr (n, "momentum", clinfer_attr_new_float (0.8f));
  }
  for (guint i = 0; i < (training ? 3u : 1u); i++)
    output (b, n, i);
}

/* Training mode with constant running statistics (read on the device
 * all the same). */
static void
case_batchnorm_training_constants (Builder *b)
{
  const int64_t xd[] = { 2, 3, 7 };
  float one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
  int64_t cd = 3;
  ClinferShape cs = clinfer_shape_make (1, &cd);
  ClinferNode *ins[5] = { input (b, "x", CLINFER_TYPE_F32, 3, xd, -3, 3) };
  ClinferNode *n;

  for (guint i = 1; i < 5; i++) {
    g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_F32, &cs,
        NULL);
    g_autofree char *name = g_strdup_printf ("p%u", i);
    memcpy (clinfer_tensor_get_data (t), i == 1 || i == 4 ? one : zero,
        sizeof (one));
    ins[i] = clinfer_graph_add_constant (b->g, name, t);
  }
  n = op (b, "BatchNormalization", 5, ins, 3);
  clinfer_node_set_attr (n, "training_mode", clinfer_attr_new_int (1));
  for (guint i = 0; i < 3; i++)
    output (b, n, i);
}

static void case_batchnorm_inputs (Builder *b) { bn_case (b, FALSE); }
static void case_batchnorm_training (Builder *b) { bn_case (b, TRUE); }

/* Training Dropout with a seed and a run-time ratio: the same mask and
 * scale as the CPU device. */
static void
case_dropout_training (Builder *b)
{
  const int64_t d[] = { 7, 33 };
  ClinferNode *ins[3] = {
    input (b, "x", CLINFER_TYPE_F32, 2, d, -1, 1),
    scalar_input (b, "ratio", CLINFER_TYPE_F32, 0.3),
    scalar_input (b, "training", CLINFER_TYPE_BOOL, 1) };
  ClinferNode *n = op (b, "Dropout", 3, ins, 2);

  clinfer_node_set_attr (n, "seed", clinfer_attr_new_int (7));
  output (b, n, 0);
  output (b, n, 1);
}

static void
case_mvn_lp_norm (Builder *b)
{
  const int64_t d[] = { 2, 3, 4, 5 };
  int64_t axes[] = { 1, 3 };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_F32, 4, d, -2, 2);
  ClinferNode *mvn = op (b, "MeanVarianceNormalization", 1, &x, 1);
  ClinferNode *l1 = op (b, "LpNormalization", 1, &x, 1);
  ClinferNode *l2 = op (b, "LpNormalization", 1, &x, 1);

  clinfer_node_set_attr (mvn, "axes", clinfer_attr_new_ints (axes, 2));
  clinfer_node_set_attr (l1, "p", clinfer_attr_new_int (1));
  clinfer_node_set_attr (l1, "axis", clinfer_attr_new_int (1));
  output (b, mvn, 0);
  output (b, l1, 0);
  output (b, l2, 0);
}

/* ReduceSum / ReduceMax of int32 and ReduceLogSumExp of f64 over axes
 * given as attributes (opset 11 semantics through the opset map). */
static void
case_reduce_int_f64 (Builder *b)
{
  const int64_t d[] = { 3, 4, 5 };
  int64_t axes[] = { 0, 2 };
  ClinferNode *xi = input (b, "xi", CLINFER_TYPE_I32, 3, d, -1000, 1000);
  ClinferNode *xd = input (b, "xd", CLINFER_TYPE_F64, 3, d, -5, 5);
  const char *names[] = { "ReduceSum", "ReduceMax", "ReduceLogSumExp" };

  g_hash_table_insert (b->g->opsets, g_strdup (""), GINT_TO_POINTER (11));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    ClinferNode *n = op (b, names[i], 1, i < 2 ? &xi : &xd, 1);
    clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (axes, 2));
    output (b, n, 0);
  }
}

/* int64 reductions: sums, means and extremes of values near 2^50 exact
 * in 64-bit integers (a double or float accumulator would round them);
 * L2 in double as the CPU device. */
static void
case_reduce_int64 (Builder *b)
{
  const int64_t d[] = { 3, 7, 4 };
  int64_t axes[] = { 1 };
  const char *names[] = { "ReduceSum", "ReduceMean", "ReduceMax",
    "ReduceMin", "ReduceL1" };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_I64, 3, d, -1.2e15, 1.2e15);
  ClinferNode *xs = input (b, "xs", CLINFER_TYPE_I64, 3, d, -9, 9);
  ClinferNode *n;

  g_hash_table_insert (b->g->opsets, g_strdup (""), GINT_TO_POINTER (11));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    n = op (b, names[i], 1, &x, 1);
    clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (axes, 1));
    output (b, n, 0);
  }
  n = op (b, "ReduceProd", 1, &xs, 1);
  clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (axes, 1));
  output (b, n, 0);
  n = op (b, "ReduceL2", 1, &xs, 1);
  output (b, n, 0);
}

/* Unary math on f64 (computed in double), IsInf/IsNaN of f64. */
static void
case_unary_f64 (Builder *b)
{
  const int64_t d[] = { 3, 11 };
  const char *names[] = { "Sigmoid", "Erf", "Softplus", "Asinh", "HardSwish",
    "Selu", "Round", "Sign", "IsNaN", "IsInf" };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_F64, 2, d, -4, 4);

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    output (b, op (b, names[i], 1, &x, 1), 0);
}

static ClinferNode *
shrink_attrs (ClinferNode *n, float lambd, float bias)
{
  if (strcmp (n->op_type, "Shrink") == 0) {
    clinfer_node_set_attr (n, "lambd", clinfer_attr_new_float (lambd));
    clinfer_node_set_attr (n, "bias", clinfer_attr_new_float (bias));
  }
  return n;
}

/* Relu, Abs, Neg, Sign and Shrink on int8 and int32 (with the lowest
 * value, whose negation wraps), and the unsigned ones on uint8. */
static void
case_unary_int (Builder *b)
{
  const int64_t d[] = { 4, 9 };
  const char *names[] = { "Relu", "Abs", "Neg", "Sign", "Shrink" };
  const char *unsigned_names[] = { "Abs", "Sign", "Shrink" };
  ClinferNode *x8 = input (b, "x8", CLINFER_TYPE_I8, 2, d, -128, 128);
  ClinferNode *xi = input (b, "xi", CLINFER_TYPE_I32, 2, d, -50, 50);
  ClinferNode *xu = input (b, "xu", CLINFER_TYPE_U8, 2, d, 0, 256);

  store (g_ptr_array_index (b->inputs, 0), 0, -128);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
    output (b, shrink_attrs (op (b, names[i], 1, &x8, 1), 3, 2), 0);
    output (b, shrink_attrs (op (b, names[i], 1, &xi, 1), 3, 2), 0);
  }
  for (guint i = 0; i < G_N_ELEMENTS (unsigned_names); i++)
    output (b, shrink_attrs (op (b, unsigned_names[i], 1, &xu, 1), 100, 7), 0);
}

/* ArgMax / ArgMin of int64 (ties: first and last index) and f64. */
static void
case_arg_int_f64 (Builder *b)
{
  const int64_t d[] = { 3, 8, 5 };
  ClinferNode *xi = input (b, "xi", CLINFER_TYPE_I64, 3, d, -4, 4);
  ClinferNode *xd = input (b, "xd", CLINFER_TYPE_F64, 3, d, -4, 4);
  const char *names[] = { "ArgMax", "ArgMin" };

  for (guint i = 0; i < 2; i++)
    for (int last = 0; last < 2; last++) {
      ClinferNode *ni = op (b, names[i], 1, &xi, 1);
      ClinferNode *nd = op (b, names[i], 1, &xd, 1);
      clinfer_node_set_attr (ni, "axis", clinfer_attr_new_int (1));
      clinfer_node_set_attr (ni, "select_last_index",
          clinfer_attr_new_int (last));
      clinfer_node_set_attr (nd, "axis", clinfer_attr_new_int (-1));
      output (b, ni, 0);
      output (b, nd, 0);
    }
}

/* Every pool on f64: averages with and without the padding, ceil_mode,
 * MaxPool with Indices, the global pools. */
static void
case_pool_f64 (Builder *b)
{
  const int64_t d[] = { 2, 3, 7, 8 };
  int64_t k[] = { 3, 3 }, s[] = { 2, 2 }, p[] = { 1, 1, 1, 0 };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_F64, 4, d, -3, 3);
  ClinferNode *avg[2], *mx;

  for (guint i = 0; i < 2; i++) {
    avg[i] = op (b, "AveragePool", 1, &x, 1);
    clinfer_node_set_attr (avg[i], "kernel_shape",
        clinfer_attr_new_ints (k, 2));
    clinfer_node_set_attr (avg[i], "strides", clinfer_attr_new_ints (s, 2));
    clinfer_node_set_attr (avg[i], "pads", clinfer_attr_new_ints (p, 4));
    clinfer_node_set_attr (avg[i], "count_include_pad",
        clinfer_attr_new_int (i));
    clinfer_node_set_attr (avg[i], "ceil_mode", clinfer_attr_new_int (1));
    output (b, avg[i], 0);
  }
  mx = op (b, "MaxPool", 1, &x, 2);
  clinfer_node_set_attr (mx, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (mx, "pads", clinfer_attr_new_ints (p, 4));
  output (b, mx, 0);
  output (b, mx, 1);
  output (b, op (b, "GlobalAveragePool", 1, &x, 1), 0);
  output (b, op (b, "GlobalMaxPool", 1, &x, 1), 0);
}

/* The kernels/norm.cl families on f64 (in double): LayerNormalization,
 * InstanceNormalization, LRN, MeanVarianceNormalization, LpNormalization
 * and BatchNormalization with constant statistics. */
static void
case_norm_f64 (Builder *b)
{
  const int64_t xd[] = { 2, 3, 4, 5 }, ld[] = { 4, 5 }, cd[] = { 3 };
  ClinferNode *x = input (b, "x", CLINFER_TYPE_F64, 4, xd, -2, 2);
  ClinferNode *ln_in[3] = { x, input (b, "ls", CLINFER_TYPE_F64, 2, ld, 0.5, 2),
    input (b, "lb", CLINFER_TYPE_F64, 2, ld, -1, 1) };
  ClinferNode *in_in[3] = { x, input (b, "is", CLINFER_TYPE_F64, 1, cd, 0.5, 2),
    input (b, "ib", CLINFER_TYPE_F64, 1, cd, -1, 1) };
  ClinferNode *bn_in[5] = { x };
  ClinferNode *n;

  for (guint i = 1; i < 5; i++) {
    g_autoptr (ClinferTensor) t = random_tensor (b, CLINFER_TYPE_F64, 1, cd,
        0.5, 2);
    g_autofree char *name = g_strdup_printf ("bn%u", i);
    bn_in[i] = clinfer_graph_add_constant (b->g, name, t);
  }
  n = op (b, "LayerNormalization", 3, ln_in, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (2));
  output (b, n, 0);
  output (b, op (b, "InstanceNormalization", 3, in_in, 1), 0);
  n = op (b, "LRN", 1, &x, 1);
  clinfer_node_set_attr (n, "size", clinfer_attr_new_int (3));
  output (b, n, 0);
  output (b, op (b, "MeanVarianceNormalization", 1, &x, 1), 0);
  output (b, op (b, "LpNormalization", 1, &x, 1), 0);
  output (b, op (b, "BatchNormalization", 5, bn_in, 1), 0);
}

#define N_F64_FAMILIES 8

/* One f64 node of each typed family (@which), or all of them (-1). */
static void
f64_families (Builder *b, int which)
{
  const int64_t d[] = { 2, 3, 4, 5 };
  int64_t k[] = { 2, 2 };
  ClinferNode *ab[2] = { input (b, "a", CLINFER_TYPE_F64, 4, d, -2, 2),
    input (b, "b", CLINFER_TYPE_F64, 4, d, -2, 2) };
  const char *unary[] = { "Exp", "ReduceLogSumExp", "ArgMax",
    "MeanVarianceNormalization" };
  ClinferNode *n;

  for (int f = 0; f < N_F64_FAMILIES; f++) {
    if (which >= 0 && f != which)
      continue;
    if (f < 2) {
      n = op (b, f == 0 ? "Add" : "Sum", 2, ab, 1);
    } else if (f < 6) {
      n = op (b, unary[f - 2], 1, ab, 1);
    } else if (f == 6) {
      n = op (b, "MaxPool", 1, ab, 1);
      clinfer_node_set_attr (n, "kernel_shape", clinfer_attr_new_ints (k, 2));
    } else {
      n = einsum (b, "abcd->dcba", 1, ab);
    }
    output (b, n, 0);
  }
  /* Graph inputs must all be read. */
  if (which >= 2)
    output (b, op (b, "Identity", 1, &ab[1], 1), 0);
}

static void
builder_init (Builder *b)
{
  b->g = clinfer_graph_new ("case", "test-ocl-types");
  b->rand = g_rand_new_with_seed (99);
  b->inputs = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);
  b->f64 = FALSE;
  g_hash_table_insert (b->g->opsets, g_strdup (""), GINT_TO_POINTER (18));
}

static void
builder_clear (Builder *b)
{
  clinfer_graph_free (b->g);
  g_rand_free (b->rand);
  g_ptr_array_unref (b->inputs);
}

/* A device without cl_khr_fp64 (hidden by CLINFER_OPENCL_DISABLE_FP64):
 * with fallback off, compiling any typed family's f64 node fails with a
 * reason naming the extension (never a kernel build error at run time);
 * with fallback on, the f64 nodes run on the CPU and the results are the
 * CPU device's. */
static void
test_f64_without_fp64_falls_back (void)
{
  Builder b;
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) cpu = NULL, fallback = NULL;
  g_autoptr (GPtrArray) want = NULL, got = NULL;

  g_setenv ("CLINFER_OPENCL_DISABLE_FP64", "1", TRUE);
  for (int f = 0; f < N_F64_FAMILIES; f++) {
    g_autoptr (ClinferCompiled) strict = NULL;
    builder_init (&b);
    f64_families (&b, f);
    strict = compile (b.g, "GPU", &err);
    g_assert_null (strict);
    g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
    g_test_message ("family %d: %s", f, err->message);
    g_assert_nonnull (strstr (err->message, "cl_khr_fp64"));
    g_clear_error (&err);
    builder_clear (&b);
  }
  builder_init (&b);
  f64_families (&b, -1);
  fallback = compile_full (b.g, "GPU", TRUE, &err);
  g_unsetenv ("CLINFER_OPENCL_DISABLE_FP64");
  g_assert_no_error (err);
  got = run (fallback, b.inputs, &err);
  g_assert_no_error (err);
  cpu = compile (b.g, "CPU", &err);
  g_assert_no_error (err);
  want = run (cpu, b.inputs, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (got->len, ==, want->len);
  for (guint i = 0; i < got->len; i++)
    assert_same (g_ptr_array_index (got, i), g_ptr_array_index (want, i),
        1e-12);
  builder_clear (&b);
}

static const struct {
  const char *name;
  CaseFunc func;
} cases[] = {
  { "pow-int64-broadcast", case_pow_int64_broadcast },
  { "pow-int32-float", case_pow_int32_float },
  { "mean4-broadcast", case_mean4_broadcast },
  { "mean-sum-f64", case_mean_sum_f64 },
  { "max-min-int32", case_max_min_int32 },
  { "prelu-f64-int", case_prelu_f64_int },
  { "unary-f64", case_unary_f64 },
  { "unary-int", case_unary_int },
  { "einsum-repeated", case_einsum_repeated },
  { "einsum-f64", case_einsum_f64 },
  { "clip-int", case_clip_int },
  { "maxpool-int8", case_maxpool_int8 },
  { "pool-f64", case_pool_f64 },
  { "arg-int-f64", case_arg_int_f64 },
  { "batchnorm-inputs", case_batchnorm_inputs },
  { "batchnorm-training", case_batchnorm_training },
  { "batchnorm-training-constants", case_batchnorm_training_constants },
  { "dropout-training", case_dropout_training },
  { "mvn-lp-norm", case_mvn_lp_norm },
  { "norm-f64", case_norm_f64 },
  { "reduce-int-f64", case_reduce_int_f64 },
  { "reduce-int64", case_reduce_int64 },
};

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!test_have_opencl ()) {
    printf ("no OpenCL device: skipped\n");
    return TEST_SKIP_STATUS;
  }
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = g_strdup_printf ("/ocl-types/%s", cases[i].name);
    g_test_add_data_func (path, (gconstpointer) cases[i].func, check_case);
  }
  g_test_add_func ("/ocl-types/f64-without-fp64-falls-back",
      test_f64_without_fp64_falls_back);
  return g_test_run ();
}
