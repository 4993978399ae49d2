/* clinfer OpenCL tests — every GPU kernel family against the CPU device
 * on small graphs with odd shapes and a fixed seed, in f32 and f16 (f16
 * stored as half on the device): the GPU compile runs with fallback off,
 * so each case also proves the op runs on the device. Exits 77 (skipped)
 * without an OpenCL device. */
#include "opencl-test-util.h"
#include "runtime/runtime.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  ClinferGraph *g;
  GRand *rand;
  ClinferElementType type;
  GPtrArray *inputs;         /* ClinferTensor* per graph input */
  /* A kernel the GPU plan must run, or NULL: @kernel with the CPU kernel
   * shapes (PoCL, Intel's runtime), @gpu_kernel with the GPU ones (GPUs,
   * oclgrind, CLINFER_OPENCL_KERNELS=gpu). */
  const char *kernel;
  const char *gpu_kernel;
} Builder;

/* Which kernel shapes the GPU device uses here (ocl-platform.c's rule:
 * CLINFER_OPENCL_KERNELS, else GPU shapes unless the device is a CPU
 * only; clinfer_device_list () names a device of several types GPU). */
static gboolean
gpu_shaped (void)
{
  const char *force = g_getenv ("CLINFER_OPENCL_KERNELS");
  g_autoptr (GPtrArray) devices = NULL;

  if (g_strcmp0 (force, "gpu") == 0 || g_strcmp0 (force, "cpu") == 0)
    return g_strcmp0 (force, "gpu") == 0;
  devices = clinfer_device_list ();
  for (guint i = 0; i < devices->len; i++) {
    ClinferDeviceInfo *d = g_ptr_array_index (devices, i);
    if (d->index >= 0)
      return g_strcmp0 (d->type, "CPU") != 0;
  }
  return FALSE;
}

static ClinferTensor *
random_tensor (Builder *b, ClinferElementType type, int rank,
    const int64_t *dims, double lo, double hi)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);
  int64_t n = clinfer_tensor_get_n_elements (t);

  for (int64_t i = 0; i < n; i++) {
    double v = g_rand_double_range (b->rand, lo, hi);
    if (type == CLINFER_TYPE_F16)
      ((guint16 *) clinfer_tensor_get_data (t))[i] = clinfer_float_to_half (v);
    else
      ((float *) clinfer_tensor_get_data (t))[i] = (float) v;
  }
  return t;
}

static ClinferNode *
input (Builder *b, const char *name, int rank, const int64_t *dims)
{
  ClinferTensor *t = random_tensor (b, b->type, rank, dims, -1.0, 1.0);
  ClinferNode *n = clinfer_graph_add_input (b->g, name, b->type,
      clinfer_tensor_get_shape (t));

  g_ptr_array_add (b->inputs, t);
  return n;
}

static ClinferNode *
constant (Builder *b, const char *name, int rank, const int64_t *dims,
    double lo, double hi)
{
  g_autoptr (ClinferTensor) t = random_tensor (b, b->type, rank, dims, lo, hi);

  return clinfer_graph_add_constant (b->g, name, t);
}

static ClinferNode *
int_constant (Builder *b, const char *name, guint n, const int64_t *v)
{
  int64_t d = n;
  ClinferShape s = clinfer_shape_make (1, &d);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_I64, &s, NULL);

  memcpy (clinfer_tensor_get_data (t), v, sizeof (int64_t) * n);
  return clinfer_graph_add_constant (b->g, name, t);
}

/* Adds op @op_type reading @ins (NULL = absent), output "y<k>". */
static ClinferNode *
op (Builder *b, const char *op_type, guint n_in, ClinferNode **ins)
{
  ClinferNode *n = clinfer_graph_add_node (b->g, op_type, "", NULL, n_in, 1);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i] = (ClinferPortRef) { ins[i], 0 };
  return n;
}

static void
ints_attr (ClinferNode *n, const char *name, guint k, ...)
{
  int64_t v[8];
  va_list ap;

  va_start (ap, k);
  for (guint i = 0; i < k; i++)
    v[i] = va_arg (ap, int);
  va_end (ap);
  clinfer_node_set_attr (n, name, clinfer_attr_new_ints (v, k));
}

static void
output (Builder *b, ClinferNode *n)
{
  g_autofree char *name = g_strdup_printf ("y%u", b->g->outputs->len);

  clinfer_graph_add_output (b->g, (ClinferPortRef) { n, 0 }, name);
}

typedef void (*CaseFunc) (Builder *b);

static ClinferCompiled *
compile (ClinferGraph *g, const char *device, GError **error)
{
  return test_compile_graph (g, "test-ops-gpu", device, FALSE, error);
}

static GPtrArray *
run (ClinferCompiled *c, GPtrArray *inputs, GError **error)
{
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, error);
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);

  for (guint i = 0; i < inputs->len; i++)
    if (!clinfer_request_set_input_by_index (r, i,
            g_ptr_array_index (inputs, i), error))
      return NULL;
  if (!clinfer_request_infer (r, error))
    return NULL;
  for (guint i = 0; i < clinfer_compiled_get_n_outputs (c); i++)
    g_ptr_array_add (out, clinfer_tensor_copy (clinfer_request_get_output (r, i),
            NULL));
  return g_steal_pointer (&out);
}

/* TRUE when a step of @c's plan runs OpenCL kernel @kernel. */
static gboolean
plan_runs_kernel (ClinferCompiled *c, const char *kernel)
{
  g_autofree char *label = g_strconcat ("ocl:", kernel, NULL);
  ClinferPlan *plan = c->plans->len ? g_ptr_array_index (c->plans, 0) : NULL;

  for (guint i = 0; plan && i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    if (g_strcmp0 (st->device_kernel, label) == 0)
      return TRUE;
  }
  return FALSE;
}

/* Builds the case for @type, runs CPU and GPU, compares. */
static void
check_case (gconstpointer data, ClinferElementType type)
{
  CaseFunc build = (CaseFunc) data;
  Builder b = { clinfer_graph_new ("case", "test-ops-gpu"),
    g_rand_new_with_seed (1234), type,
    g_ptr_array_new_with_free_func ((GDestroyNotify) clinfer_tensor_unref) };
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) cpu = NULL, gpu = NULL;
  g_autoptr (GPtrArray) want = NULL, got = NULL;
  double tol = type == CLINFER_TYPE_F16 ? 4e-3 : 1e-4;

  g_hash_table_insert (b.g->opsets, g_strdup (""), GINT_TO_POINTER (18));
  build (&b);
  cpu = compile (b.g, "CPU", &err);
  if (cpu == NULL || !(want = run (cpu, b.inputs, &err))) {
    /* The CPU reference has no kernel for this type: nothing to compare. */
    g_test_skip (err->message);
    goto out;
  }
  gpu = compile (b.g, "GPU", &err);
  g_assert_no_error (err);
  got = run (gpu, b.inputs, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < got->len; i++)
    test_assert_close (g_ptr_array_index (got, i), g_ptr_array_index (want, i),
        tol);
  {
    const char *want_kernel = gpu_shaped () ? b.gpu_kernel : b.kernel;
    if (want_kernel && !plan_runs_kernel (gpu, want_kernel)) {
      g_test_message ("the GPU plan does not run kernel %s", want_kernel);
      g_test_fail ();
    }
  }
out:
  clinfer_graph_free (b.g);
  g_rand_free (b.rand);
  g_ptr_array_unref (b.inputs);
}

static void
check_f32 (gconstpointer data)
{
  check_case (data, CLINFER_TYPE_F32);
}

static void
check_f16 (gconstpointer data)
{
  check_case (data, CLINFER_TYPE_F16);
}

/* ---------------------------------------------------------------- */
/* Cases                                                             */

static void
conv_case (Builder *b, int64_t c, int64_t h, int64_t w, int64_t cout,
    int64_t group, int64_t k, int stride, int dil, gboolean bias)
{
  const int64_t xd[] = { 2, c, h, w }, wd[] = { cout, c / group, k, k };
  const int64_t bd[] = { cout };
  ClinferNode *ins[3] = { input (b, "x", 4, xd),
    constant (b, "w", 4, wd, -0.5, 0.5), bias ? constant (b, "b", 1, bd, -1, 1)
    : NULL };
  ClinferNode *n = op (b, "Conv", bias ? 3 : 2, ins);

  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (group));
  ints_attr (n, "strides", 2, stride, stride);
  ints_attr (n, "dilations", 2, dil, dil);
  ints_attr (n, "pads", 4, 1, 0, 2, 1);
  output (b, n);
}

static void case_conv_direct (Builder *b) { conv_case (b, 5, 11, 13, 8, 1, 3, 2, 1, TRUE); }
static void case_conv_direct_odd (Builder *b) { conv_case (b, 8, 9, 10, 6, 2, 3, 1, 2, FALSE); }
static void case_conv_1x1 (Builder *b) { conv_case (b, 9, 6, 6, 10, 1, 1, 1, 1, TRUE); }
static void case_conv_depthwise (Builder *b) { conv_case (b, 6, 13, 16, 6, 6, 3, 1, 1, TRUE); }
static void case_conv_depthwise_odd (Builder *b) { conv_case (b, 6, 13, 13, 6, 6, 5, 2, 1, TRUE); }
/* Output widths a multiple of 8 (the 8-wide kernels), strides 1 and 2. */
static void case_conv_direct_x8 (Builder *b) { conv_case (b, 5, 11, 32, 8, 1, 3, 2, 1, TRUE); }
static void case_conv_depthwise_x8 (Builder *b) { conv_case (b, 6, 13, 17, 6, 6, 3, 1, 1, TRUE); }
static void case_conv_depthwise_x8_s2 (Builder *b) { conv_case (b, 4, 9, 33, 4, 4, 3, 2, 1, FALSE); }
/* The CPU-runtime kernels: output widths a multiple of 16 (interior and
 * edge work-items, strides 1 and 2, dilation 2; two rows per work-item
 * for stride 1), 24 (conv_depthwise8), 8 output channels per group
 * (conv_direct8x8, one and two groups). */
static void
case_conv_depthwise_x16 (Builder *b)
{
  b->kernel = "conv_depthwise16x2";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 5, 7, 33, 5, 5, 3, 1, 1, TRUE);
}

/* Work-group sizes that do not divide the output: 18 row pairs of one
 * 16-wide tile, and 18 tiles along a 288-wide row. */
static void
case_conv_depthwise_x16_tall (Builder *b)
{
  b->kernel = "conv_depthwise16x2";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 2, 35, 17, 2, 2, 3, 1, 1, TRUE);
}

static void
case_conv_depthwise_x16_wide (Builder *b)
{
  b->kernel = "conv_depthwise16x2";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 1, 3, 289, 1, 1, 3, 1, 1, TRUE);
}

/* Two rows per work-item over an odd output height (7). */
static void
case_conv_depthwise_x16_odd_rows (Builder *b)
{
  b->kernel = "conv_depthwise16x2";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 3, 8, 35, 3, 3, 5, 1, 1, FALSE);
}

static void
case_conv_depthwise_x16_s2 (Builder *b)
{
  b->kernel = "conv_depthwise16";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 3, 9, 35, 3, 3, 5, 2, 1, FALSE);
}

static void
case_conv_depthwise_x16_dilated (Builder *b)
{
  b->kernel = "conv_depthwise16";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 4, 6, 35, 4, 4, 3, 1, 2, TRUE);
}

static void
case_conv_depthwise_x8_w24 (Builder *b)
{
  b->kernel = "conv_depthwise8";
  b->gpu_kernel = "conv_depthwise";
  conv_case (b, 6, 5, 25, 6, 6, 3, 1, 1, TRUE);
}

static void
case_conv_direct_8x8 (Builder *b)
{
  b->kernel = "conv_direct8x8";
  b->gpu_kernel = "conv_direct4";
  conv_case (b, 3, 11, 35, 16, 1, 5, 2, 1, TRUE);
}

static void
case_conv_direct_8x8_grouped (Builder *b)
{
  b->kernel = "conv_direct8x8";
  b->gpu_kernel = "conv_direct4";
  conv_case (b, 4, 7, 9, 16, 2, 3, 1, 1, FALSE);
}

/* 1x1 without padding (the GEMM kernels). */
static void
case_conv_pointwise (Builder *b)
{
  const int64_t xd[] = { 1, 7, 5, 7 }, wd[] = { 5, 7, 1, 1 };
  ClinferNode *ins[2] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -1, 1) };

  output (b, op (b, "Conv", 2, ins));
}

/* 1x1 over a pixel count that is a multiple of 8 (conv_1x1_vec8). */
static void
case_conv_pointwise_x8 (Builder *b)
{
  const int64_t xd[] = { 2, 7, 4, 6 }, wd[] = { 8, 7, 1, 1 }, bd[] = { 8 };
  ClinferNode *ins[3] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -1, 1),
    constant (b, "b", 1, bd, -1, 1) };

  output (b, op (b, "Conv", 3, ins));
}

/* 1x1 over a pixel count that is a multiple of 16 (conv_1x1_vec16) with
 * an output channel count that is not a multiple of 4. */
static void
case_conv_pointwise_x16 (Builder *b)
{
  const int64_t xd[] = { 2, 9, 4, 8 }, wd[] = { 6, 9, 1, 1 }, bd[] = { 6 };
  ClinferNode *ins[3] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -1, 1),
    constant (b, "b", 1, bd, -1, 1) };

  b->kernel = "conv_1x1_vec16";
  b->gpu_kernel = "conv_1x1_tiled";
  output (b, op (b, "Conv", 3, ins));
}

/* 1x1 + bias + residual + Relu through conv_1x1_vec16 (7 channels). */
static void
case_fused_pointwise_x16 (Builder *b)
{
  const int64_t xd[] = { 1, 5, 4, 12 }, wd[] = { 7, 5, 1, 1 }, bd[] = { 7 };
  const int64_t zd[] = { 1, 7, 4, 12 };
  ClinferNode *ins[3] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -0.5, 0.5),
    constant (b, "b", 1, bd, -1, 1) };
  ClinferNode *conv = op (b, "Conv", 3, ins);
  ClinferNode *add_in[2] = { conv, input (b, "z", 4, zd) };
  ClinferNode *sum = op (b, "Add", 2, add_in);

  b->kernel = "conv_1x1_vec16";
  b->gpu_kernel = "conv_1x1_tiled";
  output (b, op (b, "Relu", 1, &sum));
}

/* Conv + bias + residual + Relu / Clip: fused into FusedConv. */
static void
fused_case (Builder *b, const char *act, int64_t w)
{
  const int64_t xd[] = { 1, 4, 9, w }, wd[] = { 8, 4, 3, 3 }, bd[] = { 8 };
  const int64_t zd[] = { 1, 8, 9, w };
  ClinferNode *ins[3] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -0.5, 0.5),
    constant (b, "b", 1, bd, -1, 1) };
  ClinferNode *conv = op (b, "Conv", 3, ins);
  ClinferNode *add_in[2] = { conv, input (b, "z", 4, zd) };
  ClinferNode *sum, *a;

  ints_attr (conv, "pads", 4, 1, 1, 1, 1);
  sum = op (b, "Add", 2, add_in);
  a = op (b, act, 1, &sum);
  if (strcmp (act, "LeakyRelu") == 0)
    clinfer_node_set_attr (a, "alpha", clinfer_attr_new_float (0.2f));
  output (b, a);
}

static void case_fused_relu (Builder *b) { fused_case (b, "Relu", 12); }
static void case_fused_leaky (Builder *b) { fused_case (b, "LeakyRelu", 12); }
static void case_fused_relu_x8 (Builder *b) { fused_case (b, "Relu", 16); }

static void
case_conv_1d_3d (Builder *b)
{
  const int64_t x1[] = { 2, 3, 17 }, w1[] = { 4, 3, 3 };
  const int64_t x3[] = { 1, 2, 5, 6, 7 }, w3[] = { 4, 2, 3, 2, 3 };
  ClinferNode *a[2] = { input (b, "x1", 3, x1), constant (b, "w1", 3, w1, -1, 1) };
  ClinferNode *c[2] = { input (b, "x3", 5, x3), constant (b, "w3", 5, w3, -1, 1) };
  ClinferNode *n1 = op (b, "Conv", 2, a), *n3 = op (b, "Conv", 2, c);

  ints_attr (n1, "strides", 1, 2);
  ints_attr (n3, "pads", 6, 1, 0, 1, 0, 1, 1);
  output (b, n1);
  output (b, n3);
}

static void
case_conv_transpose (Builder *b)
{
  const int64_t xd[] = { 1, 4, 5, 6 }, wd[] = { 4, 3, 3, 3 }, bd[] = { 3 };
  ClinferNode *ins[3] = { input (b, "x", 4, xd), constant (b, "w", 4, wd, -1, 1),
    constant (b, "b", 1, bd, -1, 1) };
  ClinferNode *n = op (b, "ConvTranspose", 3, ins);

  ints_attr (n, "strides", 2, 2, 3);
  ints_attr (n, "pads", 4, 1, 0, 0, 1);
  output (b, n);
}

static void
case_pools (Builder *b)
{
  const int64_t xd[] = { 2, 3, 11, 10 };
  ClinferNode *x = input (b, "x", 4, xd);
  ClinferNode *mp = op (b, "MaxPool", 1, &x), *ap = op (b, "AveragePool", 1, &x);
  ClinferNode *ai = op (b, "AveragePool", 1, &x), *mi;

  ints_attr (mp, "kernel_shape", 2, 3, 3);
  ints_attr (mp, "strides", 2, 2, 2);
  ints_attr (mp, "pads", 4, 1, 0, 1, 1);
  clinfer_node_set_attr (mp, "ceil_mode", clinfer_attr_new_int (1));
  ints_attr (ap, "kernel_shape", 2, 3, 2);
  ints_attr (ap, "pads", 4, 1, 1, 1, 1);
  ints_attr (ai, "kernel_shape", 2, 3, 3);
  ints_attr (ai, "strides", 2, 2, 2);
  ints_attr (ai, "pads", 4, 1, 1, 1, 1);
  clinfer_node_set_attr (ai, "count_include_pad", clinfer_attr_new_int (1));
  output (b, mp);
  output (b, ap);
  output (b, ai);
  output (b, op (b, "GlobalAveragePool", 1, &x));
  output (b, op (b, "GlobalMaxPool", 1, &x));
  /* MaxPool with its Indices output, column-major. */
  mi = clinfer_graph_add_node (b->g, "MaxPool", "", "with_indices", 1, 2);
  mi->inputs[0] = (ClinferPortRef) { x, 0 };
  ints_attr (mi, "kernel_shape", 2, 2, 3);
  ints_attr (mi, "pads", 4, 0, 1, 1, 0);
  clinfer_node_set_attr (mi, "storage_order", clinfer_attr_new_int (1));
  output (b, mi);
  clinfer_graph_add_output (b->g, (ClinferPortRef) { mi, 1 }, "indices");
}

/* MaxPools whose windows stay inside the rows, output width 8 and 16
 * (pool_max8): 2x2 stride 2, and 3x3 stride 1 padded along H only. */
static void
case_pools_x8 (Builder *b)
{
  const int64_t xd[] = { 2, 3, 11, 18 };
  ClinferNode *x = input (b, "x", 4, xd);
  ClinferNode *m2 = op (b, "MaxPool", 1, &x), *m3 = op (b, "MaxPool", 1, &x);

  ints_attr (m2, "kernel_shape", 2, 2, 2);
  ints_attr (m2, "strides", 2, 2, 2);
  ints_attr (m3, "kernel_shape", 2, 3, 3);
  ints_attr (m3, "pads", 4, 1, 0, 1, 0);
  output (b, m2);
  output (b, m3);
}

static void
case_binary (Builder *b)
{
  const int64_t ad[] = { 2, 3, 1, 5 }, bd[] = { 3, 4, 1 }, sd[] = { 3, 1, 1 };
  ClinferNode *x = input (b, "a", 4, ad), *y = input (b, "b", 3, bd);
  ClinferNode *s = constant (b, "slope", 3, sd, 0.1, 0.5);
  ClinferNode *xy[2] = { x, y }, *yx[2] = { y, x }, *ps[2] = { x, s };
  const char *ops[] = { "Add", "Sub", "Mul", "Div", "Max", "Min" };

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    output (b, op (b, ops[i], 2, i % 2 ? yx : xy));
  output (b, op (b, "PRelu", 2, ps));
}

static void
case_unary (Builder *b)
{
  const int64_t d[] = { 3, 7, 5 };
  ClinferNode *x = input (b, "x", 3, d);
  const char *ops[] = { "Relu", "Sigmoid", "Tanh", "Elu", "HardSwish",
    "HardSigmoid", "Softplus", "Abs", "Neg", "Exp", "Erf", "Floor" };
  ClinferNode *clip_in[3] = { x, NULL, NULL };
  ClinferNode *clip;

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    output (b, op (b, ops[i], 1, &x));
  clip_in[1] = constant (b, "lo", 0, NULL, -0.3, -0.3);
  clip_in[2] = constant (b, "hi", 0, NULL, 0.4, 0.4);
  clip = op (b, "Clip", 3, clip_in);
  output (b, clip);
}

static void
case_softmax (Builder *b)
{
  const int64_t d[] = { 2, 5, 3, 4 };
  ClinferNode *x = input (b, "x", 4, d);
  ClinferNode *s = op (b, "Softmax", 1, &x), *l = op (b, "LogSoftmax", 1, &x);

  clinfer_node_set_attr (s, "axis", clinfer_attr_new_int (1));
  clinfer_node_set_attr (l, "axis", clinfer_attr_new_int (-2));
  output (b, s);
  output (b, l);
}

static void
case_matmul (Builder *b)
{
  const int64_t ad[] = { 2, 1, 3, 4 }, bd[] = { 5, 4, 6 };
  const int64_t ga[] = { 7, 5 }, gb[] = { 6, 5 }, gc[] = { 6 };
  ClinferNode *mm[2] = { input (b, "a", 4, ad), input (b, "b", 3, bd) };
  ClinferNode *gm[3] = { input (b, "ga", 2, ga), constant (b, "gb", 2, gb, -1, 1),
    constant (b, "gc", 1, gc, -1, 1) };
  ClinferNode *gemm;

  output (b, op (b, "MatMul", 2, mm));
  gemm = op (b, "Gemm", 3, gm);
  clinfer_node_set_attr (gemm, "transB", clinfer_attr_new_int (1));
  clinfer_node_set_attr (gemm, "alpha", clinfer_attr_new_float (0.5f));
  clinfer_node_set_attr (gemm, "beta", clinfer_attr_new_float (2.f));
  output (b, gemm);
}

/* Sizes that are no multiple of the 16x16 tiles of the GPU shapes: a
 * batched MatMul (37x23 by 23x50) and a 1x1 conv with bias, residual and
 * Clip (20 -> 35 channels over 9x7 pixels). */
static void
case_tiled (Builder *b)
{
  const int64_t ad[] = { 2, 37, 23 }, bd[] = { 23, 50 };
  const int64_t xd[] = { 2, 20, 9, 7 }, wd[] = { 35, 20, 1, 1 }, cd[] = { 35 };
  const int64_t zd[] = { 2, 35, 9, 7 };
  ClinferNode *mm[2] = { input (b, "a", 3, ad), constant (b, "b", 2, bd, -1, 1) };
  ClinferNode *cv[3] = { input (b, "x", 4, xd),
    constant (b, "w", 4, wd, -0.5, 0.5), constant (b, "c", 1, cd, -1, 1) };
  ClinferNode *conv, *sum, *clip;

  b->gpu_kernel = "matmul_tiled";
  output (b, op (b, "MatMul", 2, mm));
  conv = op (b, "Conv", 3, cv);
  sum = op (b, "Add", 2, (ClinferNode *[]) { conv, input (b, "z", 4, zd) });
  clip = op (b, "Clip", 3, (ClinferNode *[]) { sum,
        constant (b, "lo", 0, NULL, 0.0, 0.0),
        constant (b, "hi", 0, NULL, 0.5, 0.5) });
  output (b, clip);
}

/* Element-wise nodes in a row: one EltwiseChain (pass fuse-eltwise-chain,
 * GPU device only) run by ew_chain, against the CPU device's nodes one by
 * one: a tensor operand (t) twice, a scalar first (0.25 - v), the chain's
 * input as a reversed operand, Clip with constant bounds, Sigmoid, a
 * division, HardSwish. */
static void
case_eltwise_chain (Builder *b)
{
  const int64_t d[] = { 2, 3, 7, 11 };
  ClinferNode *x = input (b, "x", 4, d), *t = input (b, "t", 4, d), *v;

  b->kernel = b->gpu_kernel = "ew_chain";
  v = op (b, "Add", 2, (ClinferNode *[]) { x, t });
  v = op (b, "Clip", 3, (ClinferNode *[]) { v,
        constant (b, "lo", 0, NULL, -0.5, -0.5),
        constant (b, "hi", 0, NULL, 0.75, 0.75) });
  v = op (b, "Sub", 2, (ClinferNode *[]) {
        constant (b, "quarter", 0, NULL, 0.25, 0.25), v });
  v = op (b, "Mul", 2, (ClinferNode *[]) { v, t });
  /* The chain's own input as a reversed operand (x - v): a third input
   * bound to x's buffer again. */
  v = op (b, "Sub", 2, (ClinferNode *[]) { x, v });
  v = op (b, "Sigmoid", 1, &v);
  v = op (b, "Div", 2, (ClinferNode *[]) { v,
        constant (b, "three", 0, NULL, 3.0, 3.0) });
  output (b, op (b, "HardSwish", 1, &v));
}

/* The 1x1 of case_tiled alone, for the tiled kernel's name. */
static void
case_tiled_pointwise (Builder *b)
{
  const int64_t xd[] = { 1, 20, 9, 7 }, wd[] = { 35, 20, 1, 1 };
  ClinferNode *ins[2] = { input (b, "x", 4, xd),
    constant (b, "w", 4, wd, -0.5, 0.5) };

  b->gpu_kernel = "conv_1x1_tiled";
  output (b, op (b, "Conv", 2, ins));
}

static void
case_reduce (Builder *b)
{
  const int64_t d[] = { 3, 4, 5, 2 };
  const int64_t axes[] = { 1, 3 };
  ClinferNode *x = input (b, "x", 4, d);
  ClinferNode *in[2] = { x, int_constant (b, "axes", 2, axes) };
  ClinferNode *mean = op (b, "ReduceMean", 2, in), *max = op (b, "ReduceMax", 1, &x);
  ClinferNode *sum = op (b, "ReduceSum", 2, in), *am = op (b, "ArgMax", 1, &x);

  clinfer_node_set_attr (mean, "keepdims", clinfer_attr_new_int (0));
  clinfer_node_set_attr (am, "axis", clinfer_attr_new_int (2));
  output (b, mean);
  output (b, max);
  output (b, sum);
  output (b, am);
}

static void
case_layout (Builder *b)
{
  const int64_t d[] = { 2, 3, 4, 5 }, d2[] = { 2, 2, 4, 5 };
  const int64_t starts[] = { 3, 0 }, ends[] = { 0, 5 }, axes[] = { 2, 3 };
  const int64_t steps[] = { -2, 2 }, pads[] = { 0, 1, 2, 0, 0, 0, 1, 3 };
  ClinferNode *x = input (b, "x", 4, d), *x2 = input (b, "x2", 4, d2);
  ClinferNode *cat_in[3] = { x, x2, x };
  ClinferNode *sl_in[5] = { x, int_constant (b, "s", 2, starts),
    int_constant (b, "e", 2, ends), int_constant (b, "ax", 2, axes),
    int_constant (b, "st", 2, steps) };
  ClinferNode *pad_in[2] = { x, int_constant (b, "p", 8, pads) };
  ClinferNode *t = op (b, "Transpose", 1, &x), *c = op (b, "Concat", 3, cat_in);
  ClinferNode *p = op (b, "Pad", 2, pad_in);

  ints_attr (t, "perm", 4, 0, 2, 3, 1);
  clinfer_node_set_attr (c, "axis", clinfer_attr_new_int (1));
  clinfer_node_set_attr (p, "mode", clinfer_attr_new_string ("reflect"));
  output (b, t);
  output (b, c);
  output (b, op (b, "Slice", 5, sl_in));
  output (b, p);
}

static void
case_norms (Builder *b)
{
  const int64_t d[] = { 2, 3, 4, 5 }, cd[] = { 3 }, ld[] = { 4, 5 };
  ClinferNode *x = input (b, "x", 4, d);
  ClinferNode *bn_in[5] = { x, constant (b, "sc", 1, cd, 0.5, 1.5),
    constant (b, "bi", 1, cd, -1, 1), constant (b, "mu", 1, cd, -1, 1),
    constant (b, "var", 1, cd, 0.5, 2) };
  ClinferNode *in_in[3] = { x, bn_in[1], bn_in[2] };
  ClinferNode *ln_in[3] = { x, constant (b, "lsc", 2, ld, 0.5, 1.5),
    constant (b, "lbi", 2, ld, -1, 1) };
  ClinferNode *ln;

  output (b, op (b, "BatchNormalization", 5, bn_in));
  output (b, op (b, "InstanceNormalization", 3, in_in));
  ln = op (b, "LayerNormalization", 3, ln_in);
  clinfer_node_set_attr (ln, "axis", clinfer_attr_new_int (2));
  output (b, ln);
  /* com.clinfer LayerNormStd (f32 only): the last axis, eps added to the
   * unbiased std, as fuse-layernorm makes it for lore */
  if (b->type == CLINFER_TYPE_F32) {
    const int64_t wd[] = { 5 };
    ClinferNode *std_in[3] = { x, constant (b, "ssc", 1, wd, 0.5, 1.5),
      constant (b, "sbi", 1, wd, -1, 1) };
    ClinferNode *n = clinfer_graph_add_node (b->g, "LayerNormStd",
        "com.clinfer", NULL, 3, 1);
    for (guint i = 0; i < 3; i++)
      n->inputs[i] = (ClinferPortRef) { std_in[i], 0 };
    n->opset = 1;
    clinfer_node_set_attr (n, "epsilon", clinfer_attr_new_float (1e-3f));
    clinfer_node_set_attr (n, "var_scale", clinfer_attr_new_float (1.25f));
    output (b, n);
  }
}

static ClinferNode *
float_constant (Builder *b, const char *name, guint n, const float *v)
{
  int64_t d = n;
  ClinferShape s = clinfer_shape_make (1, &d);
  g_autoptr (ClinferTensor) t = clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL);

  memcpy (clinfer_tensor_get_data (t), v, sizeof (float) * n);
  return clinfer_graph_add_constant (b->g, name, t);
}

/* Resize of x by constant scales (or sizes when @sizes) in @mode. */
static void
resize_case (Builder *b, const char *mode, const char *ct, const char *nearest,
    const float *scales, const int64_t *sizes)
{
  const int64_t xd[] = { 2, 3, 5, 7 };
  ClinferNode *ins[4] = { input (b, "x", 4, xd), NULL, NULL, NULL };
  ClinferNode *n;

  if (sizes)
    ins[3] = int_constant (b, "sizes", 4, sizes);
  else
    ins[2] = float_constant (b, "scales", 4, scales);
  n = op (b, "Resize", 4, ins);
  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (mode));
  clinfer_node_set_attr (n, "coordinate_transformation_mode",
      clinfer_attr_new_string (ct));
  if (nearest)
    clinfer_node_set_attr (n, "nearest_mode", clinfer_attr_new_string (nearest));
  output (b, n);
}

static const float up[] = { 1, 1, 2.5f, 1.5f }, down[] = { 1, 1, 0.6f, 0.5f };
static const int64_t sizes[] = { 2, 3, 9, 4 };

static void
case_resize_nearest (Builder *b)
{
  resize_case (b, "nearest", "asymmetric", "floor", up, NULL);
  resize_case (b, "nearest", "half_pixel", "round_prefer_ceil", down, NULL);
  resize_case (b, "nearest", "align_corners", "round_prefer_floor", NULL, sizes);
}

static void
case_resize_linear_cubic (Builder *b)
{
  resize_case (b, "linear", "half_pixel", NULL, up, NULL);
  resize_case (b, "linear", "align_corners", NULL, down, NULL);
  resize_case (b, "cubic", "pytorch_half_pixel", NULL, NULL, sizes);
  resize_case (b, "cubic", "asymmetric", NULL, up, NULL);
}

static const struct {
  const char *name;
  CaseFunc func;
} cases[] = {
  { "conv-direct", case_conv_direct },
  { "conv-direct-grouped-dilated", case_conv_direct_odd },
  { "conv-1x1-padded", case_conv_1x1 },
  { "conv-pointwise", case_conv_pointwise },
  { "conv-depthwise", case_conv_depthwise },
  { "conv-depthwise-odd", case_conv_depthwise_odd },
  { "conv-direct-x8", case_conv_direct_x8 },
  { "conv-depthwise-x8", case_conv_depthwise_x8 },
  { "conv-depthwise-x8-stride2", case_conv_depthwise_x8_s2 },
  { "conv-pointwise-x8", case_conv_pointwise_x8 },
  { "fused-conv-relu-x8", case_fused_relu_x8 },
  { "conv-depthwise-x16", case_conv_depthwise_x16 },
  { "conv-depthwise-x16-odd-rows", case_conv_depthwise_x16_odd_rows },
  { "conv-depthwise-x16-tall", case_conv_depthwise_x16_tall },
  { "conv-depthwise-x16-wide", case_conv_depthwise_x16_wide },
  { "conv-depthwise-x16-stride2", case_conv_depthwise_x16_s2 },
  { "conv-depthwise-x16-dilated", case_conv_depthwise_x16_dilated },
  { "conv-depthwise-x8-width24", case_conv_depthwise_x8_w24 },
  { "conv-direct-8x8", case_conv_direct_8x8 },
  { "conv-direct-8x8-grouped", case_conv_direct_8x8_grouped },
  { "conv-pointwise-x16", case_conv_pointwise_x16 },
  { "fused-conv-pointwise-relu-x16", case_fused_pointwise_x16 },
  { "pools-x8", case_pools_x8 },
  { "resize-nearest", case_resize_nearest },
  { "resize-linear-cubic", case_resize_linear_cubic },
  { "conv-1d-3d", case_conv_1d_3d },
  { "fused-conv-relu", case_fused_relu },
  { "fused-conv-leaky-relu", case_fused_leaky },
  { "conv-transpose", case_conv_transpose },
  { "pools", case_pools },
  { "binary-broadcast", case_binary },
  { "unary", case_unary },
  { "softmax", case_softmax },
  { "matmul-gemm", case_matmul },
  { "tiled-matmul-conv-clip", case_tiled },
  { "tiled-pointwise", case_tiled_pointwise },
  { "eltwise-chain", case_eltwise_chain },
  { "reduce", case_reduce },
  { "layout", case_layout },
  { "norms", case_norms },
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
    g_autofree char *f32 = g_strdup_printf ("/ops-gpu/f32/%s", cases[i].name);
    g_autofree char *f16 = g_strdup_printf ("/ops-gpu/f16/%s", cases[i].name);
    g_test_add_data_func (f32, (gconstpointer) cases[i].func, check_f32);
    g_test_add_data_func (f16, (gconstpointer) cases[i].func, check_f16);
  }
  return g_test_run ();
}
