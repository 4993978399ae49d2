/* clinfer — tests of Conv, FusedConv and the pools: reference evals on
 * hand-computed cases, shape inference, errors naming the node, the CPU
 * device's fast kernels against the reference for every ISA this machine
 * runs (odd shapes, fixed seed), and the conv fusion pass. */
#include "op-test-util.h"
#include "plan/cpu-kernels.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static void
set_ints (ClinferNode *n, const char *name, gsize len, const int64_t *v)
{
  clinfer_node_set_attr (n, name, clinfer_attr_new_ints (v, len));
}

static void
assert_values (const ClinferTensor *t, const float *want, gsize n)
{
  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, n);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (clinfer_tensor_get_as_double (t, i),
        want[i], 1e-5);
}

/* Runs every fast kernel of @node for each ISA the machine has on
 * @inputs and compares with @ref. @expect: prefix the kernel name must
 * have (NULL: the node may fall back to the reference). */
static void
check_fast_kernels (ClinferNode *node, ClinferTensor *const *inputs,
    const ClinferTensor *ref, const char *expect)
{
  ClinferCpuKernelFactory factory = clinfer_cpu_kernel_lookup (node);

  g_assert_nonnull (factory);
  for (int isa = CLINFER_CPU_ISA_GENERIC; isa <= CLINFER_CPU_ISA_AVX512; isa++) {
    ClinferCpuKernel k = { 0 };
    g_autoptr (ClinferTensor) out = NULL;
    g_autofree char *what = NULL;
    GError *err = NULL;
    gboolean ok;

    if (!clinfer_cpu_isa_supported (isa))
      continue;
    ok = factory (node, isa, &k, &err);
    g_assert_no_error (err);
    if (expect == NULL && !ok)
      continue;
    g_assert_true (ok);
    g_assert_true (g_str_has_prefix (k.name, expect ? expect : ""));
    g_assert_nonnull (strstr (k.name, clinfer_cpu_isa_name (isa)));
    out = clinfer_tensor_new (CLINFER_TYPE_F32, clinfer_tensor_get_shape (ref), NULL);
    g_assert_true (k.run (&k, node, inputs, &out, &err));
    g_assert_no_error (err);
    what = g_strdup_printf ("%s (%s)", clinfer_node_label (node), k.name);
    op_test_assert_close (out, ref, what);
    k.free_state (k.state);
    g_free (k.name);
  }
}

/* ---------------------------------------------------------------- */
/* Conv: fast kernels against the reference                          */

typedef struct {
  const char *name;
  int64_t n, c, h, w, m, kh, kw;
  int64_t group, sh, sw, dh, dw;
  int64_t pads[4];
  const char *auto_pad;       /* NULL: explicit pads */
  gboolean bias;
  const char *act;            /* NULL: Conv; else FusedConv with it */
  gboolean residual;
  const char *expect;         /* fast kernel name prefix */
} ConvCase;

static const ConvCase conv_cases[] = {
  { "first-5x5-s2", 1, 3, 17, 13, 8, 5, 5, 1, 2, 2, 1, 1, { 1, 1, 2, 2 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "1x1", 1, 16, 9, 11, 20, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, NULL, FALSE, "conv1x1_gemm" },
  { "1x1-batch2-nobias", 2, 7, 5, 37, 13, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, FALSE, NULL, FALSE, "conv1x1_gemm" },
  { "1x1-wide", 1, 40, 16, 64, 30, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, NULL, FALSE, "conv1x1_gemm" },
  { "depthwise-3x3", 1, 24, 17, 13, 24, 3, 3, 24, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE, "conv_depthwise" },
  { "depthwise-3x3-s2-pad-end", 1, 12, 19, 21, 12, 3, 3, 12, 2, 2, 1, 1, { 0, 0, 1, 1 }, NULL, TRUE, NULL, FALSE, "conv_depthwise" },
  { "depthwise-5x5-s2", 2, 5, 23, 29, 5, 5, 5, 5, 2, 2, 1, 1, { 2, 2, 2, 2 }, NULL, FALSE, NULL, FALSE, "conv_depthwise" },
  { "depthwise-dilated", 1, 8, 15, 40, 8, 3, 3, 8, 1, 1, 2, 2, { 2, 2, 2, 2 }, NULL, TRUE, NULL, FALSE, "conv_depthwise" },
  { "depthwise-wide-s3", 1, 3, 7, 150, 3, 3, 4, 3, 1, 3, 1, 1, { 1, 0, 1, 2 }, NULL, TRUE, NULL, FALSE, "conv_depthwise" },
  { "depthwise-multiplier", 1, 4, 9, 10, 8, 3, 3, 4, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "group-2", 1, 8, 11, 9, 6, 3, 3, 2, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "dilated-general", 1, 3, 17, 13, 5, 3, 3, 1, 1, 1, 2, 2, { 0 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "strides-2x3", 1, 4, 17, 13, 7, 3, 3, 1, 2, 3, 1, 1, { 1, 0, 0, 2 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "same-upper", 1, 3, 17, 13, 4, 4, 4, 1, 2, 2, 1, 1, { 0 }, "SAME_UPPER", TRUE, NULL, FALSE, "conv_" },
  { "same-lower", 1, 3, 17, 13, 4, 4, 4, 1, 2, 2, 1, 1, { 0 }, "SAME_LOWER", TRUE, NULL, FALSE, "conv_" },
  { "valid", 1, 3, 17, 13, 4, 4, 2, 1, 3, 1, 1, 1, { 0 }, "VALID", FALSE, NULL, FALSE, "conv_" },
  { "1x1-strided", 1, 6, 9, 9, 5, 1, 1, 1, 2, 2, 1, 1, { 0 }, NULL, TRUE, NULL, FALSE, "conv_" },
  { "fused-1x1-residual-relu", 1, 24, 16, 17, 24, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, "Relu", TRUE, "conv1x1_gemm" },
  { "fused-1x1-clip", 1, 9, 7, 33, 14, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, "Clip", FALSE, "conv1x1_gemm" },
  { "fused-dw-residual-leaky", 1, 10, 13, 35, 10, 3, 3, 10, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, "LeakyRelu", TRUE, "conv_depthwise" },
  { "fused-dw-s2-relu", 1, 6, 16, 16, 6, 3, 3, 6, 2, 2, 1, 1, { 0, 0, 1, 1 }, NULL, TRUE, "Relu", FALSE, "conv_depthwise" },
  { "fused-general-residual", 1, 3, 18, 19, 7, 5, 5, 1, 2, 2, 1, 1, { 1, 1, 2, 2 }, NULL, TRUE, "", TRUE, "conv_" },
  { "fused-general-clip-residual", 2, 4, 9, 8, 6, 3, 3, 2, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, FALSE, "Clip", TRUE, "conv_" },
};

static void
set_conv_attrs (ClinferNode *n, const ConvCase *c)
{
  op_test_set_conv_attrs (n, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw,
      c->group, c->auto_pad, c->pads, c->act);
}

static void
test_conv_fast_kernel (gconstpointer data)
{
  const ConvCase *c = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240601);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  int64_t xd[] = { c->n, c->c, c->h, c->w }, wd[] = { c->m, c->c / c->group, c->kh, c->kw };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &c->m);
  g_autoptr (ClinferTensor) z = NULL;
  ClinferNode *in[4] = { NULL }, *node;
  ClinferTensor *inputs[4] = { x, w, c->bias ? b : NULL, NULL }, **ref;
  GError *err = NULL;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  in[2] = c->bias ? clinfer_graph_add_constant (g, "b", b) : NULL;
  node = op_test_node (g, c->act ? "FusedConv" : "Conv",
      c->act ? "com.clinfer" : "", c->name, c->act ? 4 : 3, in, 1);
  set_conv_attrs (node, c);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  if (c->residual) {
    const ClinferShape *ys = &node->outputs[0].shape;
    z = op_test_random (rand, ys->rank, ys->dims);
    node->inputs[3].node = clinfer_graph_add_input (g, "z", CLINFER_TYPE_F32, ys);
    g_assert_true (clinfer_node_infer (node, &err));
    inputs[3] = z;
  }
  ref = op_test_eval (node, inputs, &err);
  g_assert_no_error (err);
  check_fast_kernels (node, inputs, ref[0], c->expect);
  op_test_free_outputs (node, ref);
}

/* Several requests may run one compiled model at once: each thread runs
 * the same kernel and must get the reference result. */
typedef struct {
  ClinferCpuKernel *kernel;
  ClinferNode *node;
  ClinferTensor *const *inputs;
  const ClinferTensor *ref;
  gboolean ok;
} ConcurrentRun;

static gpointer
concurrent_run (gpointer data)
{
  ConcurrentRun *r = data;
  g_autoptr (ClinferTensor) out = clinfer_tensor_new (CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (r->ref), NULL);

  r->ok = TRUE;
  for (int i = 0; i < 20 && r->ok; i++) {
    r->ok = r->kernel->run (r->kernel, r->node, r->inputs, &out, NULL);
    r->ok = r->ok && memcmp (clinfer_tensor_get_const_data (out),
        clinfer_tensor_get_const_data (r->ref),
        clinfer_tensor_get_byte_size (out)) == 0;
  }
  return NULL;
}

static void
test_conv_concurrent_runs (void)
{
  const ConvCase c = { "concurrent", 1, 16, 33, 35, 16, 3, 3, 16, 1, 1, 1, 1,
    { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE, "conv_depthwise" };
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  int64_t xd[] = { 1, 16, 33, 35 }, wd[] = { 16, 1, 3, 3 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) ref = NULL;
  ClinferTensor *inputs[3] = { x, w, NULL };
  ClinferNode *in[3] = { NULL }, *node;
  ClinferCpuKernel k = { 0 };
  ConcurrentRun runs[4];
  GThread *threads[4];
  GError *err = NULL;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  node = op_test_node (g, "Conv", "", "concurrent", 3, in, 1);
  set_conv_attrs (node, &c);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_true (clinfer_cpu_kernel_lookup (node) (node,
          clinfer_cpu_isa_detect (), &k, &err));
  ref = clinfer_tensor_new (CLINFER_TYPE_F32, &node->outputs[0].shape, NULL);
  g_assert_true (k.run (&k, node, inputs, &ref, &err));
  for (int i = 0; i < 4; i++) {
    runs[i] = (ConcurrentRun) { &k, node, inputs, ref, FALSE };
    threads[i] = g_thread_new ("run", concurrent_run, &runs[i]);
  }
  for (int i = 0; i < 4; i++) {
    g_thread_join (threads[i]);
    g_assert_true (runs[i].ok);
  }
  k.free_state (k.state);
  g_free (k.name);
}

/* ---------------------------------------------------------------- */
/* Conv: reference and shape inference                               */

/* Builds X -> Conv(W [, B]) with the given attributes and infers it. */
static ClinferNode *
conv_node (ClinferGraph *g, const char *name, int xr, const int64_t *xd,
    ClinferTensor *w, ClinferTensor *b)
{
  ClinferShape xs = clinfer_shape_make (xr, xd);
  ClinferNode *in[3];

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  in[2] = b ? clinfer_graph_add_constant (g, "b", b) : NULL;
  return op_test_node (g, "Conv", "", name, 3, in, 1);
}

static void
test_conv_reference_hand_computed (void)
{
  const float xv[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, wv[] = { 1, 2, 3, 4 };
  const float bv[] = { 0.5f };
  const float plain[] = { 37.5f, 47.5f, 67.5f, 77.5f };
  const float strided[] = { 4.5f, 18.5f, 36.5f, 77.5f };
  int64_t xd[] = { 1, 1, 3, 3 }, wd[] = { 1, 1, 2, 2 }, one = 1;
  int64_t pads[] = { 1, 1, 1, 1 }, strides[] = { 2, 2 };
  g_autoptr (ClinferTensor) x = op_test_f32 (4, xd, xv);
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, wv);
  g_autoptr (ClinferTensor) b = op_test_f32 (1, &one, bv);
  ClinferTensor *inputs[] = { x, w, b };
  GError *err = NULL;

  for (int pass = 0; pass < 2; pass++) {
    g_autoptr (ClinferGraph) g = op_test_graph (13);
    ClinferNode *n = conv_node (g, "hand", 4, xd, w, b);
    g_autoptr (ClinferTensor) y = NULL;
    if (pass == 1) {
      set_ints (n, "pads", 4, pads);
      set_ints (n, "strides", 2, strides);
    }
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    y = op_test_eval_output (n, inputs);
    assert_values (y, pass ? strided : plain, 4);
  }
}

static void
test_conv_1d_and_3d (void)
{
  const float xv[] = { 1, 2, 3, 4, 5 }, wv[] = { 1, 0, -1 };
  const float want[] = { -2, -2, -2, -2, 4 };
  int64_t xd[] = { 1, 1, 5 }, wd[] = { 1, 1, 3 }, pads[] = { 1, 1 };
  int64_t x3[] = { 1, 2, 5, 6, 7 }, w3[] = { 4, 2, 3, 3, 3 }, pads3[] = { 1, 1, 1, 0, 0, 0 };
  g_autoptr (ClinferTensor) x = op_test_f32 (3, xd, xv);
  g_autoptr (ClinferTensor) w = op_test_f32 (3, wd, wv);
  g_autoptr (ClinferTensor) w3t = op_test_f32 (5, w3, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferGraph) g3 = op_test_graph (13);
  g_autoptr (ClinferTensor) y = NULL;
  ClinferTensor *inputs[] = { x, w, NULL };
  ClinferNode *n = conv_node (g, "conv1d", 3, xd, w, NULL), *n3;
  GError *err = NULL;

  set_ints (n, "pads", 2, pads);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  y = op_test_eval_output (n, inputs);
  assert_values (y, want, 5);
  n3 = conv_node (g3, "conv3d", 5, x3, w3t, NULL);
  set_ints (n3, "pads", 6, pads3);
  g_assert_true (op_test_prepare (g3, &err));
  g_assert_no_error (err);
  g_assert_cmpint (n3->outputs[0].shape.rank, ==, 5);
  g_assert_cmpint (n3->outputs[0].shape.dims[1], ==, 4);
  g_assert_cmpint (n3->outputs[0].shape.dims[2], ==, 4);
  g_assert_cmpint (n3->outputs[0].shape.dims[3], ==, 5);
  g_assert_cmpint (n3->outputs[0].shape.dims[4], ==, 6);
}

static void
test_conv_shape_inference_dynamic (void)
{
  int64_t xd[] = { CLINFER_DIM_DYNAMIC, 3, 17, CLINFER_DIM_DYNAMIC };
  int64_t wd[] = { 8, 3, 3, 3 }, strides[] = { 2, 2 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *n = conv_node (g, "dyn", 4, xd, w, NULL);
  GError *err = NULL;

  set_ints (n, "strides", 2, strides);
  clinfer_node_set_attr (n, "auto_pad", clinfer_attr_new_string ("SAME_UPPER"));
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpint (n->outputs[0].shape.dims[0], ==, CLINFER_DIM_DYNAMIC);
  g_assert_cmpint (n->outputs[0].shape.dims[1], ==, 8);
  g_assert_cmpint (n->outputs[0].shape.dims[2], ==, 9);
  g_assert_cmpint (n->outputs[0].shape.dims[3], ==, CLINFER_DIM_DYNAMIC);
}

static void
test_conv_rejects_bad_group (void)
{
  int64_t xd[] = { 1, 6, 5, 5 }, wd[] = { 4, 3, 3, 3 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *n = conv_node (g, "bad_group", 4, xd, w, NULL);

  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (4));
  op_test_assert_node_error (g, "bad_group", CLINFER_ERROR_INVALID_ARGUMENT);
}

static void
test_conv_rejects_wrong_weight_rank (void)
{
  int64_t xd[] = { 1, 6, 5, 5 }, wd[] = { 4, 6, 3 };
  g_autoptr (ClinferTensor) w = op_test_f32 (3, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);

  conv_node (g, "rank_conv", 4, xd, w, NULL);
  op_test_assert_node_error (g, "rank_conv", CLINFER_ERROR_INVALID_ARGUMENT);
}

static void
test_conv_rejects_negative_pads (void)
{
  int64_t xd[] = { 1, 2, 5, 5 }, wd[] = { 4, 2, 3, 3 }, pads[] = { -1, 0, 0, 0 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *n = conv_node (g, "neg_pads", 4, xd, w, NULL);

  set_ints (n, "pads", 4, pads);
  op_test_assert_node_error (g, "neg_pads", CLINFER_ERROR_INVALID_ARGUMENT);
}

static void
test_conv_rejects_channel_mismatch (void)
{
  int64_t xd[] = { 1, 6, 5, 5 }, wd[] = { 4, 5, 3, 3 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);

  conv_node (g, "chan_conv", 4, xd, w, NULL);
  op_test_assert_node_error (g, "chan_conv", CLINFER_ERROR_SHAPE_MISMATCH);
}

static void
test_conv_rejects_kernel_larger_than_input (void)
{
  int64_t xd[] = { 1, 1, 2, 2 }, wd[] = { 1, 1, 3, 3 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);

  conv_node (g, "big_kernel", 4, xd, w, NULL);
  op_test_assert_node_error (g, "big_kernel", CLINFER_ERROR_SHAPE_MISMATCH);
}

static void
test_fused_conv_rejects_unknown_activation (void)
{
  int64_t xd[] = { 1, 2, 5, 5 }, wd[] = { 4, 2, 3, 3 };
  g_autoptr (ClinferTensor) w = op_test_f32 (4, wd, NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in[2], *n;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  n = op_test_node (g, "FusedConv", "com.clinfer", "bad_act", 2, in, 1);
  clinfer_node_set_attr (n, "activation", clinfer_attr_new_string ("Swish"));
  op_test_assert_node_error (g, "bad_act", CLINFER_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- */
/* Pools                                                             */

static ClinferNode *
pool_node (ClinferGraph *g, const char *op, const char *name, int64_t n,
    int64_t c, int64_t h, int64_t w, guint n_out)
{
  int64_t xd[] = { n, c, h, w };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);

  return op_test_node (g, op, "", name, 1, &in, n_out);
}

static void
test_max_pool_fast_kernel (void)
{
  static const int64_t shapes[][4] = { { 1, 5, 17, 34 }, { 2, 3, 8, 9 },
    { 1, 4, 64, 64 }, { 1, 2, 3, 70 } };
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  int64_t k[] = { 2, 2 };

  for (gsize i = 0; i < G_N_ELEMENTS (shapes); i++) {
    g_autoptr (ClinferGraph) g = op_test_graph (12);
    ClinferNode *n = pool_node (g, "MaxPool", "pool2x2", shapes[i][0],
        shapes[i][1], shapes[i][2], shapes[i][3], 1);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, shapes[i]);
    g_autoptr (ClinferTensor) y = NULL;
    GError *err = NULL;

    set_ints (n, "kernel_shape", 2, k);
    set_ints (n, "strides", 2, k);
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    y = op_test_eval_output (n, &x);
    check_fast_kernels (n, &x, y, "max_pool_2x2");
  }
}

static void
test_max_pool_hand_computed (void)
{
  const float xv[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, want[] = { 5, 6, 8, 9 };
  int64_t xd[] = { 1, 1, 3, 3 }, k[] = { 2, 2 };
  const int64_t row_major[] = { 4, 5, 7, 8 }, col_major[] = { 4, 7, 5, 8 };
  g_autoptr (ClinferTensor) x = op_test_f32 (4, xd, xv);

  for (int order = 0; order < 2; order++) {
    g_autoptr (ClinferGraph) g = op_test_graph (12);
    ClinferNode *n = pool_node (g, "MaxPool", "pool_ceil", 1, 1, 3, 3, 2);
    ClinferTensor **out;
    GError *err = NULL;

    set_ints (n, "kernel_shape", 2, k);
    set_ints (n, "strides", 2, k);
    clinfer_node_set_attr (n, "ceil_mode", clinfer_attr_new_int (1));
    clinfer_node_set_attr (n, "storage_order", clinfer_attr_new_int (order));
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    g_assert_cmpint (n->outputs[1].type, ==, CLINFER_TYPE_I64);
    out = op_test_eval (n, &x, &err);
    g_assert_no_error (err);
    assert_values (out[0], want, 4);
    for (int i = 0; i < 4; i++)
      g_assert_cmpint (clinfer_tensor_get_as_int64 (out[1], i), ==,
          order ? col_major[i] : row_major[i]);
    op_test_free_outputs (n, out);
  }
}

static void
test_average_pool_count_include_pad (void)
{
  const float xv[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
  const float incl[] = { 0.25f, 1.25f, 2.75f, 7 }, excl[] = { 1, 2.5f, 5.5f, 7 };
  int64_t xd[] = { 1, 1, 3, 3 }, k[] = { 2, 2 }, pads[] = { 1, 1, 1, 1 };
  g_autoptr (ClinferTensor) x = op_test_f32 (4, xd, xv);

  for (int cip = 0; cip < 2; cip++) {
    g_autoptr (ClinferGraph) g = op_test_graph (12);
    ClinferNode *n = pool_node (g, "AveragePool", "avg", 1, 1, 3, 3, 1);
    g_autoptr (ClinferTensor) y = NULL;
    GError *err = NULL;

    set_ints (n, "kernel_shape", 2, k);
    set_ints (n, "strides", 2, k);
    set_ints (n, "pads", 4, pads);
    clinfer_node_set_attr (n, "count_include_pad", clinfer_attr_new_int (cip));
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    y = op_test_eval_output (n, &x);
    assert_values (y, cip ? incl : excl, 4);
  }
}

static void
test_global_pools (void)
{
  const float xv[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, avg[] = { 2.5f, 6.5f };
  const float max[] = { 4, 8 };
  int64_t xd[] = { 1, 2, 2, 2 };
  g_autoptr (ClinferTensor) x = op_test_f32 (4, xd, xv);

  for (int is_max = 0; is_max < 2; is_max++) {
    g_autoptr (ClinferGraph) g = op_test_graph (12);
    ClinferNode *n = pool_node (g, is_max ? "GlobalMaxPool" : "GlobalAveragePool",
        "global", 1, 2, 2, 2, 1);
    g_autoptr (ClinferTensor) y = NULL;
    GError *err = NULL;

    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    g_assert_cmpint (n->outputs[0].shape.dims[2], ==, 1);
    y = op_test_eval_output (n, &x);
    assert_values (y, is_max ? max : avg, 2);
  }
}

static void
test_pool_shape_inference (void)
{
  int64_t k3[] = { 3, 3 }, s2[] = { 2, 2 }, pads[] = { 1, 1, 1, 1 };
  int64_t k4[] = { 4, 4 }, s3[] = { 3, 3 };
  g_autoptr (ClinferGraph) g = op_test_graph (12);
  ClinferNode *a = pool_node (g, "MaxPool", "ceil_pool", 1, 3, 17, 13, 1);
  ClinferNode *b = pool_node (g, "AveragePool", "same_pool", 1, 3, 17, 13, 1);
  GError *err = NULL;

  set_ints (a, "kernel_shape", 2, k3);
  set_ints (a, "strides", 2, s2);
  set_ints (a, "pads", 4, pads);
  clinfer_node_set_attr (a, "ceil_mode", clinfer_attr_new_int (1));
  set_ints (b, "kernel_shape", 2, k4);
  set_ints (b, "strides", 2, s3);
  clinfer_node_set_attr (b, "auto_pad", clinfer_attr_new_string ("SAME_UPPER"));
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpint (a->outputs[0].shape.dims[2], ==, 9);
  g_assert_cmpint (a->outputs[0].shape.dims[3], ==, 7);
  g_assert_cmpint (b->outputs[0].shape.dims[2], ==, 6);
  g_assert_cmpint (b->outputs[0].shape.dims[3], ==, 5);
}

static void
test_max_pool_rejects_missing_kernel_shape (void)
{
  g_autoptr (ClinferGraph) g = op_test_graph (12);

  pool_node (g, "MaxPool", "no_kernel", 1, 1, 4, 4, 1);
  op_test_assert_node_error (g, "no_kernel", CLINFER_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- */
/* Fusion pass                                                       */

/* x -> Conv -> Add (@other) -> @act -> output, evaluated before and after
 * the pass; @fused: whether a FusedConv must replace the chain. */
static void
check_fusion (ClinferGraph *g, ClinferNode *last, ClinferTensor *const *inputs,
    gboolean fused)
{
  ClinferPassContext ctx = { NULL, 13 };
  ClinferPortRef out = { last, 0 };
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  g_autofree char *out_name = g_strdup (last->outputs[0].name);
  gboolean changed = FALSE;
  GError *err = NULL;

  clinfer_graph_add_output (g, out, out_name);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fuse_conv_activation (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, fused);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  if (fused) {
    ClinferGraphOutput *o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
    g_assert_cmpuint (op_test_count_ops (g, "FusedConv"), ==, 1);
    g_assert_cmpuint (op_test_count_ops (g, "Conv") + op_test_count_ops (g, "Add")
        + op_test_count_ops (g, "Relu") + op_test_count_ops (g, "Clip"), ==, 0);
    g_assert_cmpstr (o->ref.node->op_type, ==, "FusedConv");
    g_assert_cmpstr (o->ref.node->name, ==, "conv");
    g_assert_cmpstr (o->ref.node->outputs[0].name, ==, out_name);
  }
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fused graph");
}

static ClinferNode *
fusion_conv (ClinferGraph *g, GRand *rand, ClinferTensor **w, ClinferTensor **b)
{
  int64_t xd[] = { 1, 8, 9, 7 }, wd[] = { 8, 8, 3, 3 }, m = 8, pads[] = { 1, 1, 1, 1 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in[3], *conv;

  *w = op_test_random (rand, 4, wd);
  *b = op_test_random (rand, 1, &m);
  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", *w);
  in[2] = clinfer_graph_add_constant (g, "b", *b);
  conv = op_test_node (g, "Conv", "", "conv", 3, in, 1);
  set_ints (conv, "pads", 4, pads);
  return conv;
}

static void
test_fuse_conv_residual_relu (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) w = NULL, b = NULL, x = NULL, r = NULL;
  int64_t xd[] = { 1, 8, 9, 7 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *conv = fusion_conv (g, rand, &w, &b), *in[2], *add, *relu;
  ClinferTensor *inputs[2];

  in[0] = clinfer_graph_add_input (g, "residual", CLINFER_TYPE_F32, &xs);
  in[1] = conv;              /* residual first: operand order must not matter */
  add = op_test_node (g, "Add", "", "add", 2, in, 1);
  relu = op_test_node (g, "Relu", "", "relu", 1, &add, 1);
  x = op_test_random (rand, 4, xd);
  r = op_test_random (rand, 4, xd);
  inputs[0] = x;
  inputs[1] = r;
  check_fusion (g, relu, inputs, TRUE);
}

static void
test_fuse_conv_channel_bias_clip (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (4);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) w = NULL, b = NULL, x = NULL, c = NULL;
  g_autoptr (ClinferTensor) lo = NULL, hi = NULL;
  int64_t xd[] = { 1, 8, 9, 7 }, cd[] = { 1, 8, 1, 1 };
  ClinferNode *conv = fusion_conv (g, rand, &w, &b), *in[3], *add, *clip;
  const float lov = -0.1f, hiv = 0.3f;

  c = op_test_random (rand, 4, cd);
  lo = op_test_f32 (0, NULL, &lov);
  hi = op_test_f32 (0, NULL, &hiv);
  in[0] = conv;
  in[1] = clinfer_graph_add_constant (g, "channel_bias", c);
  add = op_test_node (g, "Add", "", "add", 2, in, 1);
  in[0] = add;
  in[1] = clinfer_graph_add_constant (g, "lo", lo);
  in[2] = clinfer_graph_add_constant (g, "hi", hi);
  clip = op_test_node (g, "Clip", "", "clip", 3, in, 1);
  x = op_test_random (rand, 4, xd);
  check_fusion (g, clip, &x, TRUE);
}

static void
test_fuse_conv_skips_shared_output (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) w = NULL, b = NULL, x = NULL;
  int64_t xd[] = { 1, 8, 9, 7 };
  ClinferNode *conv = fusion_conv (g, rand, &w, &b), *relu;
  ClinferPortRef conv_out = { conv, 0 };

  relu = op_test_node (g, "Relu", "", "relu", 1, &conv, 1);
  /* The conv output is a graph output too: Relu must stay separate. */
  clinfer_graph_add_output (g, conv_out, "conv_out");
  x = op_test_random (rand, 4, xd);
  check_fusion (g, relu, &x, FALSE);
}

/* ---------------------------------------------------------------- */

/* ---------------------------------------------------------------- */
/* RNN / GRU / LSTM: what a model file can get wrong (the numbers are
 * checked against ONNX Runtime by the golden-op-recurrent-* tests and the
 * conformance suite's RNN, GRU and LSTM cases) */

/* An LSTM (x [5, 3, 4], hidden 6) named @name whose W has @w_rows rows,
 * with sequence_lens @lens (NULL: none). */
static ClinferNode *
lstm_node (ClinferGraph *g, const char *name, int64_t w_rows,
    ClinferNode *lens)
{
  int64_t xd[] = { 5, 3, 4 }, wd[] = { 1, w_rows, 4 }, rd[] = { 1, 24, 6 };
  ClinferShape xs = clinfer_shape_make (3, xd);
  ClinferNode *in[5] = { clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    op_test_constant (g, "w", CLINFER_TYPE_F32, 3, wd, NULL),
    op_test_constant (g, "r", CLINFER_TYPE_F32, 3, rd, NULL), NULL, lens };
  ClinferNode *n = op_test_node (g, "LSTM", "", name, lens ? 5 : 3, in, 2);

  clinfer_node_set_attr (n, "hidden_size", clinfer_attr_new_int (6));
  return n;
}

static void
test_recurrent_errors (void)
{
  {
    g_autoptr (ClinferGraph) g = op_test_graph (14);
    ClinferNode *n = lstm_node (g, "sideways", 24, NULL);
    clinfer_node_set_attr (n, "direction", clinfer_attr_new_string ("sideways"));
    op_test_assert_node_error (g, "sideways", CLINFER_ERROR_INVALID_ARGUMENT);
  }
  {
    g_autoptr (ClinferGraph) g = op_test_graph (14);
    lstm_node (g, "w_rows", 20, NULL);       /* 4 gates x 6 = 24 expected */
    op_test_assert_node_error (g, "w_rows", CLINFER_ERROR_INVALID_ARGUMENT);
  }
  {
    g_autoptr (ClinferGraph) g = op_test_graph (14);
    ClinferNode *n = lstm_node (g, "layout", 24, NULL);
    clinfer_node_set_attr (n, "layout", clinfer_attr_new_int (2));
    op_test_assert_node_error (g, "layout", CLINFER_ERROR_INVALID_ARGUMENT);
  }
  {
    /* three activations per direction, one of them unknown */
    g_autoptr (ClinferGraph) g = op_test_graph (14);
    ClinferNode *n = lstm_node (g, "acts", 24, NULL);
    ClinferAttr *a = g_new0 (ClinferAttr, 1);
    a->type = CLINFER_ATTR_STRINGS;
    a->strings.n = 3;
    a->strings.v = g_new0 (char *, 4);
    a->strings.v[0] = g_strdup ("Sigmoid");
    a->strings.v[1] = g_strdup ("Swish");
    a->strings.v[2] = g_strdup ("Tanh");
    clinfer_node_set_attr (n, "activations", a);
    op_test_assert_node_error (g, "acts", CLINFER_ERROR_INVALID_ARGUMENT);
  }
  {
    /* a sequence length past X's steps: an error at run time */
    ClinferGraph *g = op_test_graph (14);
    int64_t xd[] = { 5, 3, 4 }, ld[] = { 3 };
    int32_t lens[] = { 5, 9, 1 };
    ClinferNode *n = lstm_node (g, "lens", 24, op_test_constant (g, "l",
            CLINFER_TYPE_I32, 1, ld, lens));
    g_autoptr (ClinferTensor) x = op_test_f32 (3, xd, NULL);
    g_autoptr (ClinferCompiled) c = NULL;
    g_autoptr (ClinferRequest) r = NULL;
    GError *err = NULL;

    clinfer_graph_add_output (g, (ClinferPortRef) { n, 1 }, "y_h");
    c = op_test_compile (g, 14, &err);
    g_assert_no_error (err);
    r = clinfer_compiled_create_request (c, &err);
    g_assert_no_error (err);
    g_assert_true (clinfer_request_set_input_by_index (r, 0, x, &err));
    g_assert_false (clinfer_request_infer (r, &err));
    g_assert_nonnull (err);
    g_test_message ("%s", err->message);
    g_assert_nonnull (strstr (err->message, "'lens'"));
    g_assert_nonnull (strstr (err->message, "sequence_lens[1] is 9"));
    g_clear_error (&err);
  }
}

/* No steps (X [0, 3, 4]): Y is empty and Y_h is the initial state. */
static void
test_recurrent_empty_sequence (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autoptr (ClinferGraph) g = op_test_graph (14);
  int64_t xd[] = { 0, 3, 4 }, wd[] = { 1, 24, 4 }, rd[] = { 1, 24, 6 };
  int64_t hd[] = { 1, 3, 6 }, yd[] = { 0, 1, 3, 6 };
  g_autoptr (ClinferTensor) x = op_test_f32 (3, xd, NULL);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 3, wd);
  g_autoptr (ClinferTensor) r = op_test_random (rand, 3, rd);
  g_autoptr (ClinferTensor) h0 = op_test_random (rand, 3, hd);
  ClinferNode *in[6] = { op_test_input_like (g, "x", x),
    clinfer_graph_add_constant (g, "w", w),
    clinfer_graph_add_constant (g, "r", r), NULL, NULL,
    op_test_input_like (g, "h0", h0) };
  ClinferNode *n = op_test_node (g, "LSTM", "", "empty", 6, in, 2);
  ClinferTensor *inputs[6] = { x, w, r, NULL, NULL, h0 };
  ClinferTensor **outs;
  GError *err = NULL;

  clinfer_node_set_attr (n, "hidden_size", clinfer_attr_new_int (6));
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  outs = op_test_eval (n, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_shape (outs[0], 4, yd);
  op_test_assert_close (outs[1], h0, "Y_h of no steps");
  op_test_free_outputs (n, outs);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/ops/conv/fast-kernel/%s",
        conv_cases[i].name);
    g_test_add_data_func (path, &conv_cases[i], test_conv_fast_kernel);
  }
  g_test_add_func ("/ops/conv/concurrent-runs", test_conv_concurrent_runs);
  g_test_add_func ("/ops/conv/reference-hand-computed", test_conv_reference_hand_computed);
  g_test_add_func ("/ops/conv/1d-and-3d", test_conv_1d_and_3d);
  g_test_add_func ("/ops/conv/shape-inference-dynamic", test_conv_shape_inference_dynamic);
  g_test_add_func ("/ops/conv/test_conv_rejects_bad_group", test_conv_rejects_bad_group);
  g_test_add_func ("/ops/conv/test_conv_rejects_wrong_weight_rank", test_conv_rejects_wrong_weight_rank);
  g_test_add_func ("/ops/conv/test_conv_rejects_negative_pads", test_conv_rejects_negative_pads);
  g_test_add_func ("/ops/conv/test_conv_rejects_channel_mismatch", test_conv_rejects_channel_mismatch);
  g_test_add_func ("/ops/conv/test_conv_rejects_kernel_larger_than_input", test_conv_rejects_kernel_larger_than_input);
  g_test_add_func ("/ops/conv/test_fused_conv_rejects_unknown_activation", test_fused_conv_rejects_unknown_activation);
  g_test_add_func ("/ops/pool/max-pool-fast-kernel", test_max_pool_fast_kernel);
  g_test_add_func ("/ops/pool/max-pool-hand-computed", test_max_pool_hand_computed);
  g_test_add_func ("/ops/pool/average-pool-count-include-pad", test_average_pool_count_include_pad);
  g_test_add_func ("/ops/pool/global-pools", test_global_pools);
  g_test_add_func ("/ops/pool/shape-inference", test_pool_shape_inference);
  g_test_add_func ("/ops/pool/test_max_pool_rejects_missing_kernel_shape", test_max_pool_rejects_missing_kernel_shape);
  g_test_add_func ("/ops/fusion/conv-residual-relu", test_fuse_conv_residual_relu);
  g_test_add_func ("/ops/fusion/conv-channel-bias-clip", test_fuse_conv_channel_bias_clip);
  g_test_add_func ("/ops/fusion/skips-shared-output", test_fuse_conv_skips_shared_output);
  g_test_add_func ("/ops/recurrent/errors", test_recurrent_errors);
  g_test_add_func ("/ops/recurrent/empty-sequence", test_recurrent_empty_sequence);
  return g_test_run ();
}
