/* clinfer — the CPU device's element-wise kernels (engine/plan/
 * eltwise-cpu.c) against the reference evals, value for value, with the
 * kernel the profile names (meson runs this on each ISA tier the machine
 * has): Add/Sub/Mul/Div with every broadcast pattern (same shape, a row,
 * a column, a scalar, both operands broadcast, a constant first operand,
 * rank 5, one large enough to split between the threads by rows and one
 * by chunks of a row); Relu, Neg, Abs, Sqrt, Log over negative, zero,
 * NaN, infinite and subnormal values (Log within 2 ulp of logf, also
 * across the whole range, near 1 and near its sqrt (1/2) split);
 * ReduceMax and ReduceMin over the last, a middle and all axes, with NaN
 * (it wins) and infinities, split between the threads; ReduceSum and
 * ReduceMean over the last (rows of 2 and of 3 too), a middle, the first
 * and all axes, with keepdims 0, axes as an input, dims of extent 1
 * between the reduced ones, and non-adjacent axes (the reference eval
 * then). Inputs are small integers, so sums are exact in f32 too.
 * Also x * Sigmoid (x) as com.clinfer Swish (the unary test "Swish"),
 * and the vector sigmoid, tanh and swish of every ISA table against
 * double precision. Where with a bool condition: a one-element condition
 * over a scalar and a tensor (basic-pitch's div_no_nan), all three
 * broadcast differently, a constant value, ones split between the
 * threads by rows and by chunks of a row, NaN values passed through as
 * chosen. */
#include "op-test-util.h"
#include "plan/cpu-simd.h"
#include <math.h>
#include <string.h>

static ClinferTensor *
counting (int rank, const int64_t *dims, int seed)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    clinfer_op_store_double (t, i, (double) ((i * 7 + seed * 13) % 101) - 50.0);
  return t;
}

/* The kernel name on this run's ISA. */
static char *
kernel_name (const char *kind)
{
  return g_strdup_printf ("%s_%s", kind,
      clinfer_cpu_simd_get (clinfer_cpu_isa_detect ())->isa_name);
}

typedef struct {
  const char *name, *op;
  int ra, rb;
  int64_t a[5], b[5];
  gboolean a_const;          /* the first operand a constant */
} BinaryCase;

static const BinaryCase binary_cases[] = {
  { "same-shape", "Add", 3, 3, { 1, 54, 256 }, { 1, 54, 256 }, FALSE },
  { "row", "Mul", 3, 1, { 2, 54, 37 }, { 37 }, FALSE },
  { "column", "Sub", 3, 3, { 1, 54, 256 }, { 1, 54, 1 }, FALSE },
  { "scalar", "Div", 2, 0, { 9, 13 }, { 0 }, FALSE },
  { "both-broadcast", "Add", 2, 2, { 54, 1 }, { 1, 256 }, FALSE },
  { "first-broadcast", "Sub", 1, 3, { 19 }, { 3, 5, 19 }, FALSE },
  { "const-first", "Div", 1, 2, { 7 }, { 11, 7 }, TRUE },
  { "rank5-middle", "Mul", 5, 5, { 2, 3, 4, 5, 6 }, { 2, 1, 4, 1, 6 }, FALSE },
  { "split-rows", "Add", 3, 3, { 4, 300, 64 }, { 4, 300, 1 }, FALSE },
  { "split-chunks", "Sub", 1, 1, { 70000 }, { 70000 }, FALSE },
  { "split-chunks-scalar", "Div", 1, 0, { 70000 }, { 0 }, FALSE },
  { "split-chunks-scalar-first", "Sub", 0, 2, { 0 }, { 1, 70000 }, FALSE },
};

static void
test_binary (gconstpointer data)
{
  const BinaryCase *c = data;
  ClinferGraph *g = op_test_graph (13);
  ClinferShape as = clinfer_shape_make (c->ra, c->a), bs = clinfer_shape_make (c->rb, c->b);
  g_autoptr (ClinferTensor) a = counting (c->ra, c->a, 1);
  g_autoptr (ClinferTensor) b = counting (c->rb, c->b, 2);
  g_autofree char *kernel = kernel_name ("binary_rows");
  ClinferTensor *inputs[2];
  ClinferNode *in[2], *n;
  float *bv = clinfer_tensor_get_data (b);

  /* No zero divisors but one: x / 0 is inf or NaN alike in both. */
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (b); i++)
    if (bv[i] == 0.f && i > 0)
      bv[i] = 3.f;
  if (c->a_const) {
    in[0] = clinfer_graph_add_constant (g, "a", a);
    in[1] = clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &bs);
    inputs[0] = b;
  } else {
    in[0] = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &as);
    in[1] = clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &bs);
    inputs[0] = a;
    inputs[1] = b;
  }
  n = op_test_node (g, c->op, "", "op", 2, in, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, 13, inputs, c->a_const ? 1 : 2, kernel,
      c->name);
}

static void
test_unary (gconstpointer data)
{
  const char *op = data;
  static const float special[] = { -0.f, 0.f, -1.5f, 2.25f, NAN, -NAN,
    INFINITY, -INFINITY, 1e-40f, -1e-40f };
  int64_t d[] = { 3, 1029 };
  ClinferGraph *g = op_test_graph (13);
  ClinferShape s = clinfer_shape_make (2, d);
  g_autoptr (ClinferTensor) x = counting (2, d, 3);
  g_autofree char *kernel = kernel_name ("unary_rows");
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in[2], *n;
  float *xv = clinfer_tensor_get_data (x);
  gboolean swish = strcmp (op, "Swish") == 0;

  /* Special values in the vector body and in the tail. */
  for (gsize i = 0; i < G_N_ELEMENTS (special); i++) {
    xv[i * 37] = special[i];
    xv[3 * 1029 - 1 - i] = special[i];
  }
  /* Log: values across the whole range too (subnormal to huge, near 1,
   * near the sqrt (1/2) split), in the vector body. */
  if (strcmp (op, "Log") == 0)
    for (int i = 0; i < 2000; i++) {
      int k = 400 + i;
      xv[k] = i < 500 ? ldexpf (1.f + (float) i / 500.f, i / 2 - 149)
          : i < 1000 ? 1.f + (float) (i - 750) * 1e-6f
          : i < 1500 ? 0.70710677f + (float) (i - 1250) * 1e-7f
          : ldexpf (1.f + (float) (i % 97) / 97.f, (i - 1500) / 4 - 60);
    }
  /* Swish: fractions too, and where exp saturates */
  if (swish)
    for (int i = 0; i < 2000; i++)
      xv[400 + i] = i < 1900 ? (float) (i - 950) / 97.f
          : -90.f + (float) (i - 1900) * 0.04f;
  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  if (swish) {
    /* x * Sigmoid (x): the fuse-swish pass makes it one com.clinfer
     * Swish, within 4 ulps of the reference evals' Sigmoid and Mul
     * (-inf at -inf in both) */
    in[1] = op_test_node (g, "Sigmoid", "", "sig", 1, in, 1);
    n = op_test_node (g, "Mul", "", "op", 2, in, 1);
  } else {
    n = op_test_node (g, op, "", "op", 1, in, 1);
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel_ulps (g, NULL, 13, inputs, 1, kernel, op,
      strcmp (op, "Log") == 0 ? 2 : swish ? 4 : 0);
}

typedef struct {
  const char *name, *op;
  int rank;
  int64_t dims[4];
  int n_axes;
  int64_t axes[4];
  int keepdims;
  int opset;                 /* 18: axes as an input */
  gboolean ours;
  gboolean specials;         /* NaN at 7 and n / 3, inf at 2, -inf at 5 */
} ReduceCase;

static const ReduceCase reduce_cases[] = {
  { "mean-last", "ReduceMean", 3, { 1, 54, 256 }, 1, { -1 }, 1, 13, TRUE },
  { "sum-middle", "ReduceSum", 3, { 1, 309, 172 }, 1, { 1 }, 0, 13, TRUE },
  { "mean-first", "ReduceMean", 2, { 7, 33 }, 1, { 0 }, 1, 13, TRUE },
  { "sum-all", "ReduceSum", 3, { 3, 4, 5 }, 0, { 0 }, 0, 13, TRUE },
  { "mean-axes-input", "ReduceMean", 4, { 2, 3, 4, 5 }, 2, { 2, 3 }, 1, 18, TRUE },
  { "sum-ones-between", "ReduceSum", 4, { 2, 3, 1, 5 }, 2, { 1, 3 }, 1, 13, TRUE },
  { "mean-split", "ReduceMean", 2, { 4, 70000 }, 1, { 0 }, 1, 13, TRUE },
  { "sum-apart", "ReduceSum", 3, { 3, 4, 5 }, 2, { 0, 2 }, 1, 13, FALSE },
  /* basic-pitch's: pairs summed (53,148 rows of 2) */
  { "sum-pairs", "ReduceSum", 4, { 1, 309, 172, 2 }, 1, { -1 }, 0, 13, TRUE },
  { "mean-short-rows", "ReduceMean", 3, { 5, 7, 3 }, 1, { 2 }, 1, 13, TRUE },
  { "max-last", "ReduceMax", 3, { 1, 54, 256 }, 1, { -1 }, 1, 13, TRUE },
  { "min-middle", "ReduceMin", 3, { 2, 40, 37 }, 1, { 1 }, 0, 13, TRUE },
  /* basic-pitch's: all of 1 x 172 x 309 to one value */
  { "max-all", "ReduceMax", 3, { 1, 172, 309 }, 0, { 0 }, 0, 13, TRUE },
  { "min-all-specials", "ReduceMin", 2, { 3, 1000 }, 0, { 0 }, 0, 13, TRUE,
    TRUE },
  { "max-last-specials", "ReduceMax", 2, { 30, 100 }, 1, { 1 }, 1, 13, TRUE,
    TRUE },
  { "max-middle-specials", "ReduceMax", 3, { 4, 30, 50 }, 1, { 1 }, 1, 18,
    TRUE, TRUE },
  { "min-split", "ReduceMin", 2, { 4, 70000 }, 1, { 0 }, 1, 13, TRUE },
};

static void
test_reduce (gconstpointer data)
{
  const ReduceCase *c = data;
  ClinferGraph *g = op_test_graph (c->opset);
  ClinferShape s = clinfer_shape_make (c->rank, c->dims);
  g_autoptr (ClinferTensor) x = counting (c->rank, c->dims, 4);
  g_autofree char *kernel = c->ours ? kernel_name ("reduce_rows")
      : g_strdup ("reference");
  ClinferTensor *inputs[1] = { x };
  int64_t na[] = { c->n_axes };
  ClinferNode *in[2], *n;
  /* ReduceSum takes its axes as an input from opset 13. */
  gboolean axes_input = c->opset >= 18 || strcmp (c->op, "ReduceSum") == 0;
  float *xv = clinfer_tensor_get_data (x);

  if (c->specials) {
    int64_t len = clinfer_tensor_get_n_elements (x);
    xv[7] = xv[len / 3] = NAN;
    xv[2] = INFINITY;
    xv[5] = -INFINITY;
  }

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  in[1] = axes_input && c->n_axes
      ? op_test_constant (g, "axes", CLINFER_TYPE_I64, 1, na, c->axes) : NULL;
  n = op_test_node (g, c->op, "", "op", in[1] ? 2 : 1, in, 1);
  if (!axes_input && c->n_axes)
    clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (c->axes, c->n_axes));
  clinfer_node_set_attr (n, "keepdims", clinfer_attr_new_int (c->keepdims));
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, c->opset, inputs, 1, kernel, c->name);
}

/* The vector sigmoid, tanh and swish (unary_row () ops 5, 6 and 7; the
 * recurrent kernel's gates and com.clinfer Swish) of every ISA table
 * the machine runs against double-precision ones: within 4 ulps (below
 * 1e-30 only the absolute error counts), NaN for NaN. */
static void
test_vector_functions (void)
{
  /* dense over [-20, 20], small values near 0 (tanh's polynomial),
   * around tanh's switch at 0.625, and where exp saturates */
  enum { N = 8192 };
  g_autofree float *x = g_new (float, N);
  g_autofree float *y = g_new (float, N);
  static const float special[] = { 0.f, -0.f, INFINITY, -INFINITY, NAN,
    100.f, -100.f, 1e-30f };

  for (int i = 0; i < N; i++)
    x[i] = i < 4096 ? -20.f + 40.f * (float) i / 4096.f
        : i < 6144 ? ldexpf ((i & 1) ? -1.f : 1.f, -(i - 4096) / 64)
            * (1.f + (float) (i % 64) / 64.f)
        : 0.625f + (float) (i - 7168) * 1e-6f;
  for (gsize i = 0; i < G_N_ELEMENTS (special); i++)
    x[N - 1 - i] = x[100 + i] = special[i];
  for (int isa = CLINFER_CPU_ISA_GENERIC; isa <= CLINFER_CPU_ISA_AVX512;
       isa++) {
    const ClinferCpuSimd *k;
    if (!clinfer_cpu_isa_supported ((ClinferCpuIsa) isa))
      continue;
    k = clinfer_cpu_simd_get ((ClinferCpuIsa) isa);
    for (int op = 5; op <= 7; op++) {
      int64_t worst = 0;
      k->unary_row (op, x, y, N);
      for (int i = 0; i < N; i++) {
        double xd = x[i];
        /* swish (-inf): -inf, as the reference evals' Sigmoid (clamping
         * exp's argument) and Mul give */
        float want = op == 5 ? (float) (1.0 / (1.0 + exp (-xd)))
            : op == 6 ? (float) tanh (xd)
            : isinf (xd) && xd < 0 ? -INFINITY
            : (float) (xd / (1.0 + exp (-xd)));
        if (isnan (want)) {
          if (!isnan (y[i]))
            g_error ("%s op %d: f (%g) = %g, want NaN", k->isa_name, op,
                x[i], y[i]);
          continue;
        }
        /* below 1e-30 only the absolute error matters (sigmoid of large
         * negatives) */
        if (fabsf (want) < 1e-30f && fabsf (y[i]) < 1e-30f)
          continue;
        worst = MAX (worst, op_test_ulps_apart (y[i], want));
        if (op_test_ulps_apart (y[i], want) > 4)
          g_error ("%s op %d: f (%.9g) = %.9g, want %.9g", k->isa_name, op,
              x[i], y[i], want);
      }
      g_test_message ("%s op %d: %" G_GINT64_FORMAT " ulps at most",
          k->isa_name, op, worst);
    }
  }
}

typedef struct {
  const char *name;
  int rc, ra, rb;
  int64_t c[4], a[4], b[4];
  gboolean b_const;          /* the third operand a constant */
  const char *kernel;        /* the kernel's kind */
} WhereCase;

static const WhereCase where_cases[] = {
  { "div-no-nan", 3, 0, 3, { 1, 1, 1 }, { 0 }, { 1, 172, 309 }, FALSE,
    "where_rows" },
  { "all-broadcast", 3, 2, 1, { 2, 3, 4 }, { 3, 1 }, { 4 }, FALSE,
    "where_rows" },
  { "condition-column", 2, 2, 2, { 5, 1 }, { 5, 7 }, { 1, 7 }, TRUE,
    "where_rows" },
  { "split-rows", 3, 3, 3, { 1, 64, 1 }, { 1, 64, 1024 }, { 1, 1, 1024 },
    FALSE, "where_rows" },
  { "split-chunks", 1, 1, 0, { 70000 }, { 70000 }, { 0 }, FALSE,
    "where_rows" },
};

static void
test_where (gconstpointer data)
{
  const WhereCase *c = data;
  ClinferGraph *g = op_test_graph (13);
  ClinferShape cs = clinfer_shape_make (c->rc, c->c);
  ClinferShape as = clinfer_shape_make (c->ra, c->a);
  ClinferShape bs = clinfer_shape_make (c->rb, c->b);
  g_autoptr (ClinferTensor) cond = clinfer_tensor_new (CLINFER_TYPE_BOOL,
      &cs, NULL);
  g_autoptr (ClinferTensor) a = counting (c->ra, c->a, 1);
  g_autoptr (ClinferTensor) b = counting (c->rb, c->b, 2);
  g_autofree char *kernel = kernel_name (c->kernel);
  ClinferTensor *inputs[3] = { cond, a, b };
  ClinferNode *in[3], *n;
  guint8 *cv = clinfer_tensor_get_data (cond);
  float *av = clinfer_tensor_get_data (a);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (cond); i++)
    cv[i] = (i * 5 + 1) % 3 != 0;
  av[0] = NAN;
  in[0] = clinfer_graph_add_input (g, "c", CLINFER_TYPE_BOOL, &cs);
  in[1] = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &as);
  in[2] = c->b_const ? clinfer_graph_add_constant (g, "b", b)
      : clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &bs);
  n = op_test_node (g, "Where", "", "op", 3, in, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, 13, inputs, c->b_const ? 2 : 3, kernel,
      c->name);
}

int
main (int argc, char **argv)
{
  static const char *const unary[] = { "Relu", "Neg", "Abs", "Sqrt", "Log",
    "Swish" };

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/eltwise-kernels/vector-functions", test_vector_functions);
  for (gsize i = 0; i < G_N_ELEMENTS (binary_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/eltwise-kernels/binary/%s",
        binary_cases[i].name);
    g_test_add_data_func (path, &binary_cases[i], test_binary);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (unary); i++) {
    g_autofree char *path = g_strdup_printf ("/eltwise-kernels/unary/%s",
        unary[i]);
    g_test_add_data_func (path, unary[i], test_unary);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (where_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/eltwise-kernels/where/%s",
        where_cases[i].name);
    g_test_add_data_func (path, &where_cases[i], test_where);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (reduce_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/eltwise-kernels/reduce/%s",
        reduce_cases[i].name);
    g_test_add_data_func (path, &reduce_cases[i], test_reduce);
  }
  return g_test_run ();
}
