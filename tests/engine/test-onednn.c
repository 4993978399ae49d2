/* clinfer — tests of the CPU device's oneDNN fast path (built with
 * -Donednn): every oneDNN kernel compiled through the CPU device against
 * the portable reference evals on odd shapes with a fixed seed, chains
 * that keep blocked layouts between steps, the boundaries where a reorder
 * back to plain is needed, thread counts and the CLINFER_CPU_ONEDNN=0
 * switch. */
#include "op-test-util.h"
#include "plan/chooser.h"
#include "plan/cpu-kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Steps of the last run_cpu() that ran as a post-op of a conv. */
static guint last_n_fused;
/* The last run_cpu()'s kernel names, one per line. */
static GString *last_kernels;
/* Opset run_cpu () gives the model (test_softmax changes it). */
static int model_opset = 13;

static void
set_ints (ClinferNode *n, const char *name, gsize len, const int64_t *v)
{
  clinfer_node_set_attr (n, name, clinfer_attr_new_ints (v, len));
}

/* Compiles @g (taken over) for the CPU with profiling and @threads, runs
 * it on @inputs (graph-input order) and returns a copy of output 0;
 * *n_onednn counts the steps a oneDNN kernel ran and *n_steps all. */
static ClinferTensor *
run_cpu (ClinferGraph *g, ClinferTensor *const *inputs, guint n_inputs,
    int threads, guint *n_onednn, guint *n_steps)
{
  GError *err = NULL;
  g_autoptr (ClinferModel) m = op_test_model (g, model_opset, &err);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  const ClinferProfileEntry *e;
  ClinferTensor *y;
  guint n = 0;

  g_assert_no_error (err);
  clinfer_compile_config_set_profiling (cfg, TRUE);
  clinfer_compile_config_set_threads (cfg, threads);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < n_inputs; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i, inputs[i], &err));
  /* Twice: the second run reuses the bound memory objects. */
  for (int k = 0; k < 2; k++) {
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
  }
  e = clinfer_request_get_profile (r, &n);
  *n_steps = n;
  *n_onednn = 0;
  last_n_fused = 0;
  if (last_kernels == NULL)
    last_kernels = g_string_new (NULL);
  g_string_truncate (last_kernels, 0);
  for (guint i = 0; i < n; i++) {
    g_test_message ("%s: %s", e[i].node_name, e[i].kernel);
    g_string_append_printf (last_kernels, "%s\n", e[i].kernel);
    if (g_str_has_prefix (e[i].kernel, "onednn-fused:"))
      last_n_fused++;
    if (g_str_has_prefix (e[i].kernel, "onednn"))
      (*n_onednn)++;
  }
  y = clinfer_tensor_copy (clinfer_request_get_output (r, 0), &err);
  g_assert_no_error (err);
  return y;
}

/* TRUE when the blocked layouts use 8-channel blocks on a machine with
 * AVX-512 (CLINFER_CPU_BLOCK=8, or the CPU device capped below AVX-512),
 * where some of oneDNN's kernels want 16. */
static gboolean
narrow_block_on_avx512 (void)
{
  return clinfer_cpu_isa_supported (CLINFER_CPU_ISA_AVX512)
      && (clinfer_cpu_isa_detect () < CLINFER_CPU_ISA_AVX512
          || g_strcmp0 (g_getenv ("CLINFER_CPU_BLOCK"), "8") == 0);
}

/* ---------------------------------------------------------------- */
/* Single convolutions                                               */

typedef struct {
  const char *name;
  int64_t n, c, h, w, m, kh, kw;
  int64_t group, sh, sw, dh, dw;
  int64_t pads[4];
  const char *auto_pad;       /* NULL: explicit pads */
  gboolean bias;
  const char *act;            /* NULL: Conv; else FusedConv with it */
  gboolean residual;
} ConvCase;

static const ConvCase conv_cases[] = {
  { "first-5x5-s2", 1, 3, 17, 13, 8, 5, 5, 1, 2, 2, 1, 1, { 1, 1, 2, 2 }, NULL, TRUE, NULL, FALSE },
  { "1x1", 1, 16, 9, 11, 20, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, NULL, FALSE },
  { "1x1-batch2-nobias", 2, 7, 5, 37, 13, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, FALSE, NULL, FALSE },
  { "1x1-wide", 1, 40, 16, 64, 30, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, NULL, FALSE },
  { "depthwise-3x3", 1, 24, 17, 13, 24, 3, 3, 24, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE },
  { "depthwise-3x3-s2-pad-end", 1, 12, 19, 21, 12, 3, 3, 12, 2, 2, 1, 1, { 0, 0, 1, 1 }, NULL, TRUE, NULL, FALSE },
  { "depthwise-5x5-s2", 2, 5, 23, 29, 5, 5, 5, 5, 2, 2, 1, 1, { 2, 2, 2, 2 }, NULL, FALSE, NULL, FALSE },
  { "depthwise-dilated", 1, 8, 15, 40, 8, 3, 3, 8, 1, 1, 2, 2, { 2, 2, 2, 2 }, NULL, TRUE, NULL, FALSE },
  { "depthwise-multiplier", 1, 4, 9, 10, 8, 3, 3, 4, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE },
  { "group-2", 1, 8, 11, 9, 6, 3, 3, 2, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, NULL, FALSE },
  { "dilated-general", 1, 3, 17, 13, 5, 3, 3, 1, 1, 1, 2, 2, { 0 }, NULL, TRUE, NULL, FALSE },
  { "strides-2x3", 1, 4, 17, 13, 7, 3, 3, 1, 2, 3, 1, 1, { 1, 0, 0, 2 }, NULL, TRUE, NULL, FALSE },
  { "same-upper", 1, 3, 17, 13, 4, 4, 4, 1, 2, 2, 1, 1, { 0 }, "SAME_UPPER", TRUE, NULL, FALSE },
  { "same-lower", 1, 3, 17, 13, 4, 4, 4, 1, 2, 2, 1, 1, { 0 }, "SAME_LOWER", TRUE, NULL, FALSE },
  { "valid", 1, 3, 17, 13, 4, 4, 2, 1, 3, 1, 1, 1, { 0 }, "VALID", FALSE, NULL, FALSE },
  { "fused-1x1-residual-relu", 1, 24, 16, 17, 24, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, "Relu", TRUE },
  { "fused-1x1-clip", 1, 9, 7, 33, 14, 1, 1, 1, 1, 1, 1, 1, { 0 }, NULL, TRUE, "Clip", FALSE },
  { "fused-dw-residual-leaky", 1, 10, 13, 35, 10, 3, 3, 10, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, "LeakyRelu", TRUE },
  { "fused-general-clip-residual", 2, 4, 9, 8, 6, 3, 3, 2, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, FALSE, "Clip", TRUE },
};

static void
set_conv_attrs (ClinferNode *n, const ConvCase *c)
{
  op_test_set_conv_attrs (n, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw,
      c->group, c->auto_pad, c->pads, c->act);
}

static void
test_conv (gconstpointer data)
{
  const ConvCase *c = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240601);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { c->n, c->c, c->h, c->w }, wd[] = { c->m, c->c / c->group, c->kh, c->kw };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &c->m);
  g_autoptr (ClinferTensor) z = NULL, ref = NULL, got = NULL;
  ClinferNode *in[4] = { NULL }, *node;
  ClinferTensor *inputs[2] = { x, NULL };
  GError *err = NULL;
  guint n_onednn, n_steps;

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
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    inputs[1] = z;
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { node, 0 }, "y");
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, c->residual ? 2 : 1, 2, &n_onednn, &n_steps);
  g_assert_cmpuint (n_steps, ==, 1);
  /* Grouped convs other than depthwise have only oneDNN's reference
   * implementation in 2.6, which the plan refuses: the C kernels run them. */
  g_assert_cmpuint (n_onednn, ==, c->group > 1 && !(c->group == c->c
          && c->group == c->m) ? 0 : 1);
  op_test_assert_close (got, ref, c->name);
}

/* ---------------------------------------------------------------- */
/* ConvTranspose                                                     */

typedef struct {
  const char *name;
  int64_t n, c, h, w, m, k, stride, group;
  int64_t pads[4], out_pad;
  gboolean bias;
  guint n_onednn;             /* 0: oneDNN cannot express it, C runs it */
} DeconvCase;

static const DeconvCase deconv_cases[] = {
  { "2x2-s2", 1, 24, 9, 7, 24, 2, 2, 1, { 0 }, 0, FALSE, 1 },
  { "2x2-s2-bias-to-1", 2, 13, 5, 7, 1, 2, 2, 1, { 0 }, 0, TRUE, 1 },
  { "3x3-s3-bias-to-10", 1, 9, 4, 6, 10, 3, 3, 1, { 0 }, 0, TRUE, 1 },
  { "3x3-s2-pads-bias", 1, 13, 8, 11, 5, 3, 2, 1, { 1, 1, 1, 1 }, 0, TRUE, 1 },
  /* oneDNN 2.6 has only its reference deconvolution for this group: the
   * C kernel runs it. */
  { "4x4-s2-group-2", 2, 8, 5, 6, 6, 4, 2, 2, { 1, 1, 1, 1 }, 0, TRUE, 0 },
  { "depthwise-3x3", 1, 16, 7, 9, 16, 3, 1, 16, { 1, 1, 1, 1 }, 0, TRUE, 1 },
  { "output-padding-in-pads", 1, 6, 5, 5, 3, 3, 2, 1, { 1, 1, 1, 1 }, 1, TRUE, 1 },
  { "output-padding-past-pads", 1, 6, 5, 5, 3, 3, 2, 1, { 0 }, 1, TRUE, 0 },
};

static void
test_deconv (gconstpointer data)
{
  const DeconvCase *c = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (20240602);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { c->n, c->c, c->h, c->w }, wd[] = { c->c, c->m / c->group, c->k, c->k };
  int64_t kk[] = { c->k, c->k }, s[] = { c->stride, c->stride };
  int64_t op[] = { c->out_pad, c->out_pad };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &c->m);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in[3] = { NULL }, *node;
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  in[2] = c->bias ? clinfer_graph_add_constant (g, "b", b) : NULL;
  node = op_test_node (g, "ConvTranspose", "", c->name, 3, in, 1);
  set_ints (node, "kernel_shape", 2, kk);
  set_ints (node, "strides", 2, s);
  set_ints (node, "pads", 4, c->pads);
  if (c->out_pad)
    set_ints (node, "output_padding", 2, op);
  clinfer_node_set_attr (node, "group", clinfer_attr_new_int (c->group));
  clinfer_graph_add_output (g, (ClinferPortRef) { node, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
  g_assert_cmpuint (n_steps, ==, 1);
  g_assert_cmpuint (n_onednn, ==, c->n_onednn);
  op_test_assert_close (got, ref, c->name);
}

/* ---------------------------------------------------------------- */
/* Chains: blocked layouts between steps, reorders at the boundaries  */

static ClinferNode *
add_conv (ClinferGraph *g, GRand *rand, const char *name, ClinferNode *x,
    int64_t c, int64_t m, int64_t k, int64_t group, int64_t stride,
    ClinferNode *residual, const char *act)
{
  int64_t wd[] = { m, c / group, k, k }, pads[] = { k / 2, k / 2, k / 2, k / 2 };
  int64_t kk[] = { k, k }, s[] = { stride, stride };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &m);
  g_autofree char *wn = g_strdup_printf ("%s/w", name);
  g_autofree char *bn = g_strdup_printf ("%s/b", name);
  ClinferNode *in[4] = { x, clinfer_graph_add_constant (g, wn, w),
    clinfer_graph_add_constant (g, bn, b), residual };
  ClinferNode *n = op_test_node (g, act ? "FusedConv" : "Conv",
      act ? "com.clinfer" : "", name, act ? 4 : 3, in, 1);

  set_ints (n, "kernel_shape", 2, kk);
  set_ints (n, "strides", 2, s);
  set_ints (n, "pads", 4, pads);
  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (group));
  if (act)
    clinfer_node_set_attr (n, "activation", clinfer_attr_new_string (act));
  return n;
}

/* A conv then a ConvTranspose to one channel whose kernel equals its
 * stride (a text detector's final map): clinfer's deconv_to_one kernel
 * reads the conv's blocked output and writes the plain map. 24 channels
 * (3 blocks of 8, 2 of 16 with padding), 2 x 2 with bias, 3 x 3 and 4 x 4
 * (16 taps) without, batch 2, 1 and 2 threads (9600 outputs per image:
 * split); a 2 x 2 stride 1 one and one to 2 channels stay on oneDNN. */
static void
test_deconv_to_one (void)
{
  static const struct { int64_t k, s, m; gboolean bias; int threads; } cases[] = {
    { 2, 2, 1, TRUE, 1 }, { 2, 2, 1, TRUE, 2 }, { 3, 3, 1, FALSE, 2 },
    { 4, 4, 1, FALSE, 1 }, { 2, 1, 1, TRUE, 2 }, { 2, 2, 2, TRUE, 2 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (17);
    ClinferGraph *g = op_test_graph (13);
    int64_t k = cases[c].k, xd[] = { 2, 16, 48 / k * 2, 50 / k * 2 };
    int64_t wd[] = { 24, cases[c].m, k, k }, kk[] = { k, k };
    int64_t st[] = { cases[c].s, cases[c].s };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
    g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &cases[c].m);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in[3], *node;
    ClinferTensor *inputs[1] = { x };
    gboolean ours = cases[c].s == k && cases[c].m == 1;
    GError *err = NULL;
    guint n_onednn, n_steps;

    in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    in[0] = add_conv (g, rand, "c", in[0], 16, 24, 3, 1, 1, NULL, "Relu");
    in[1] = clinfer_graph_add_constant (g, "w", w);
    in[2] = cases[c].bias ? clinfer_graph_add_constant (g, "b", b) : NULL;
    node = op_test_node (g, "ConvTranspose", "", "up", 3, in, 1);
    set_ints (node, "kernel_shape", 2, kk);
    set_ints (node, "strides", 2, st);
    clinfer_graph_add_output (g, (ClinferPortRef) { node, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, cases[c].threads, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 2);
    g_assert_true ((strstr (last_kernels->str, "_to_one_") != NULL) == ours);
    op_test_assert_close (got, ref, "deconv to one");
  }
}

/* Convs to one output channel: clinfer's conv_to_one kernel. Blocked
 * input (a 1x1 conv to @c channels before it: 20 and 33 are partial
 * blocks, 32 whole ones; the small planes keep 16-channel blocks on
 * AVX-512 machines that otherwise choose 8) with asymmetric pads,
 * strides, dilations, a window wider than the pads leave rows for (pure
 * bias rows), activations, batch 2 and both thread counts; plain input
 * (@c 0: the graph input of @pc channels) with kernel rows of whole
 * vectors, with and without pads, and with 5 or 12 channels (reordered
 * to blocked). A 3-wide plain kernel on 2 channels and a conv to 2
 * channels stay on oneDNN. A Sigmoid after the conv is not fused into it
 * and runs on its own. */
typedef struct {
  int64_t c, pc, n, h, w, m, kh, kw, sh, sw, dh, dw;
  int64_t pads[4];
  const char *act;
  gboolean bias, sigmoid, ours;
  int threads;
} ConvOneCase;

static const ConvOneCase conv_one_cases[] = {
  { 20, 8, 1, 23, 37, 1, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, NULL, TRUE, TRUE, TRUE, 2 },
  { 20, 8, 1, 23, 37, 1, 7, 3, 1, 1, 1, 1, { 3, 1, 3, 1 }, "Relu", TRUE, FALSE, TRUE, 1 },
  { 32, 8, 2, 9, 40, 1, 3, 3, 2, 3, 2, 1, { 0, 1, 2, 0 }, NULL, TRUE, FALSE, TRUE, 2 },
  { 33, 8, 1, 11, 19, 1, 1, 1, 1, 1, 1, 1, { 0, 0, 0, 0 }, "LeakyRelu", FALSE, TRUE, TRUE, 1 },
  { 8, 8, 1, 2, 3, 1, 3, 3, 1, 1, 1, 1, { 6, 5, 6, 5 }, "Clip", TRUE, FALSE, TRUE, 2 },
  { 20, 8, 1, 30, 70, 1, 3, 5, 1, 2, 1, 3, { 1, 7, 1, 7 }, NULL, TRUE, FALSE, TRUE, 2 },
  { 0, 1, 1, 1, 300, 1, 1, 32, 1, 2, 1, 1, { 0, 0, 0, 0 }, NULL, TRUE, FALSE, TRUE, 2 },
  { 0, 3, 2, 4, 100, 1, 2, 16, 1, 3, 2, 1, { 1, 5, 0, 7 }, "Relu", TRUE, TRUE, TRUE, 2 },
  { 0, 2, 1, 6, 50, 1, 3, 3, 1, 1, 1, 1, { 1, 1, 1, 1 }, NULL, TRUE, FALSE, FALSE, 2 },
  { 0, 12, 1, 26, 50, 1, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, "Relu", TRUE, TRUE, TRUE, 2 },
  { 0, 5, 2, 9, 21, 1, 3, 2, 2, 1, 1, 2, { 1, 0, 1, 2 }, NULL, FALSE, FALSE, TRUE, 1 },
  { 20, 8, 1, 23, 37, 2, 5, 5, 1, 1, 1, 1, { 2, 2, 2, 2 }, NULL, TRUE, FALSE, FALSE, 2 },
};

static void
test_conv_to_one (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (conv_one_cases); i++) {
    const ConvOneCase *c = &conv_one_cases[i];
    g_autoptr (GRand) rand = g_rand_new_with_seed (23 + i);
    ClinferGraph *g = op_test_graph (13);
    int64_t cin = c->c ? c->c : c->pc;
    int64_t xd[] = { c->n, c->pc, c->h, c->w }, wd[] = { c->m, cin, c->kh, c->kw };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
    g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &c->m);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    g_autofree char *name = g_strdup_printf ("conv to one case %u", i);
    ClinferNode *in[3], *node;
    ClinferTensor *inputs[1] = { x };
    GError *err = NULL;
    guint n_onednn, n_steps;

    in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    if (c->c)
      in[0] = add_conv (g, rand, "c", in[0], c->pc, c->c, 1, 1, 1, NULL, "Relu");
    in[1] = clinfer_graph_add_constant (g, "w", w);
    in[2] = c->bias ? clinfer_graph_add_constant (g, "b", b) : NULL;
    node = op_test_node (g, c->act ? "FusedConv" : "Conv",
        c->act ? "com.clinfer" : "", "one", 3, in, 1);
    op_test_set_conv_attrs (node, c->kh, c->kw, c->sh, c->sw, c->dh, c->dw, 1,
        NULL, c->pads, c->act);
    if (c->sigmoid)
      node = op_test_node (g, "Sigmoid", "", "sig", 1, &node, 1);
    clinfer_graph_add_output (g, (ClinferPortRef) { node, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, c->threads, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, (c->c ? 2 : 1) + (c->sigmoid ? 1 : 0));
    g_assert_cmpuint (last_n_fused, ==, 0);
    g_assert_cmpuint (n_onednn, ==, n_steps);
    g_assert_true ((strstr (last_kernels->str, "_to_one_") != NULL) == c->ours);
    op_test_assert_close (got, ref, name);
  }
}

/* x (1x20x19x23) -> dw 3x3 -> FusedConv 1x1 (+x, Relu) -> MaxPool 2x2
 * -> Concat (zeros: 20 -> 28 channels) -> Conv 3x3 s2 -> output: every
 * step on oneDNN, blocked in between, the input reordered in, the output
 * reordered out. Concat pads 20 -> 28 (a partial block), the second
 * conv's residual comes from the graph input (plain). Returns the
 * prepared graph and its input in *x. */
static ClinferGraph *
blocked_chain (GRand *rand, ClinferTensor **x)
{
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 1, 20, 19, 23 }, zd[] = { 1, 8, 9, 11 }, k2[] = { 2, 2 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in, *dw, *pw, *pool, *pad, *last, *cat_in[2];
  GError *err = NULL;

  *x = op_test_random (rand, 4, xd);
  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  dw = add_conv (g, rand, "dw", in, 20, 20, 3, 20, 1, NULL, NULL);
  pw = add_conv (g, rand, "pw", dw, 20, 20, 1, 1, 1, in, "Relu");
  pool = op_test_node (g, "MaxPool", "", "pool", 1, &pw, 1);
  set_ints (pool, "kernel_shape", 2, k2);
  set_ints (pool, "strides", 2, k2);
  cat_in[0] = pool;
  cat_in[1] = op_test_constant (g, "zeros", CLINFER_TYPE_F32, 4, zd, NULL);
  pad = op_test_node (g, "Concat", "", "pad", 2, cat_in, 1);
  clinfer_node_set_attr (pad, "axis", clinfer_attr_new_int (1));
  last = add_conv (g, rand, "last", pad, 28, 12, 3, 1, 2, NULL, NULL);
  clinfer_graph_add_output (g, (ClinferPortRef) { last, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

static void
test_chain_blocked (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autoptr (ClinferTensor) x = NULL;
  ClinferGraph *g = blocked_chain (rand, &x);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
  g_assert_cmpuint (n_onednn, ==, n_steps);
  g_assert_cmpuint (n_onednn, ==, 5);
  op_test_assert_close (got, ref, "chain");
}

static ClinferNode *
add_node (ClinferGraph *g, const char *op, const char *name, ClinferNode *a,
    ClinferNode *b)
{
  ClinferNode *in[2] = { a, b };
  return op_test_node (g, op, "", name, b ? 2 : 1, in, 1);
}

/* MaxPool between blocked steps runs clinfer's blocked kernel on the
 * channel-padded view: windows with padding, stride 1, dilation, ceil
 * mode, a 1x1 window of stride 2 (hoist-strides' pick), the large
 * stride-1 windows pooled separably (YOLO's SPP: 5x5, 9x9, 13x13 with
 * pads, 4x4 with ceil mode), on 13 channels (a partial block) after a HardSigmoid that leaves
 * non-zero padding channels, then a conv reads the result. */
static void
test_pool_blocked (void)
{
  static const struct {
    int64_t k, s, p, d, ceil;
  } cases[] = {
    { 2, 2, 0, 1, 0 }, { 3, 2, 1, 1, 0 }, { 3, 1, 1, 1, 0 }, { 2, 2, 0, 1, 1 },
    { 3, 2, 1, 2, 1 }, { 5, 3, 2, 1, 0 }, { 1, 2, 0, 1, 0 }, { 4, 3, 2, 1, 1 },
    { 5, 1, 2, 1, 0 }, { 9, 1, 4, 1, 0 }, { 13, 1, 6, 1, 0 }, { 4, 1, 1, 1, 1 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (20 + c);
    ClinferGraph *g = op_test_graph (13);
    /* 16 input channels: a plain input of 13 would take oneDNN's
     * first-layer path with AVX2 but a C kernel with AVX-512. */
    int64_t xd[] = { 2, 16, 15, 17 };
    int64_t kk[] = { cases[c].k, cases[c].k }, ss[] = { cases[c].s, cases[c].s };
    int64_t pp[] = { cases[c].p, cases[c].p, cases[c].p, cases[c].p };
    int64_t dd[] = { cases[c].d, cases[c].d };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in, *a, *pool;
    ClinferTensor *inputs[1] = { x };
    GError *err = NULL;
    guint n_onednn, n_steps;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    a = add_conv (g, rand, "c", in, 16, 13, 3, 1, 1, NULL, NULL);
    a = add_node (g, "HardSigmoid", "hs", a, NULL);
    pool = op_test_node (g, "MaxPool", "", "pool", 1, &a, 1);
    set_ints (pool, "kernel_shape", 2, kk);
    set_ints (pool, "strides", 2, ss);
    set_ints (pool, "pads", 4, pp);
    set_ints (pool, "dilations", 2, dd);
    clinfer_node_set_attr (pool, "ceil_mode", clinfer_attr_new_int (cases[c].ceil));
    a = add_conv (g, rand, "last", pool, 13, 5, 1, 1, 1, NULL, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
    g_assert_cmpuint (n_onednn, ==, n_steps);
    if (clinfer_cpu_isa_detect () != CLINFER_CPU_ISA_GENERIC)
      g_assert_nonnull (strstr (last_kernels->str, "max_pool_nChw"));
    op_test_assert_close (got, ref, "pool");
  }
}

/* Resize "up" of @x, nearest (asymmetric, floor) by the 4 @scales. */
static ClinferNode *
add_resize_nearest (ClinferGraph *g, ClinferNode *x, const float *scales)
{
  int64_t sd[] = { 4 };
  ClinferNode *in[3] = { x, NULL,
    op_test_constant (g, "scales", CLINFER_TYPE_F32, 1, sd, scales) };
  ClinferNode *n = op_test_node (g, "Resize", "", "up", 3, in, 1);

  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("nearest"));
  clinfer_node_set_attr (n, "coordinate_transformation_mode",
      clinfer_attr_new_string ("asymmetric"));
  clinfer_node_set_attr (n, "nearest_mode", clinfer_attr_new_string ("floor"));
  return n;
}

typedef struct {
  const char *name;
  const char *coord;         /* coordinate_transformation_mode */
  int64_t ih, iw, oh, ow;    /* by sizes */
  const char *kernel;        /* the Resize's kernel (a prefix) */
} LinearCase;

static const LinearCase linear_cases[] = {
  { "pytorch-x2", "pytorch_half_pixel", 10, 12, 20, 24, "onednn:" },
  { "half-pixel-x2.5", "half_pixel", 8, 6, 20, 15, "onednn:" },
  { "half-pixel-down", "half_pixel", 21, 17, 9, 8, "onednn:" },
  /* its N dim (length 1) gets taps of its own: 0.5 and 0.5 of index 0 */
  { "pytorch-to-one", "pytorch_half_pixel", 6, 7, 1, 14,
    "resize_linear_rows" },
  { "align-corners", "align_corners", 8, 8, 16, 16, "resize_linear_rows" },
  { "asymmetric", "asymmetric", 8, 8, 16, 16, "resize_linear_rows" },
};

/* conv -> Resize linear (sizes) -> Relu: oneDNN's linear resampling takes
 * the Resize exactly when its taps are the node's (half-pixel), else
 * clinfer's C kernel (resize_linear_rows) does where it can; the result is
 * the reference eval's either way. */
static void
test_resize_linear (gconstpointer data)
{
  const LinearCase *lc = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (17);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 1, 8, lc->ih, lc->iw }, sd[] = { 4 };
  int64_t sizes[] = { 1, 8, lc->oh, lc->ow };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in, *a, *rin[4];
  guint n_onednn, n_steps;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  a = add_conv (g, rand, "c", in, 8, 8, 3, 1, 1, NULL, NULL);
  rin[0] = a;
  rin[1] = NULL;
  rin[2] = NULL;
  rin[3] = op_test_constant (g, "sizes", CLINFER_TYPE_I64, 1, sd, sizes);
  a = op_test_node (g, "Resize", "", "up", 4, rin, 1);
  clinfer_node_set_attr (a, "mode", clinfer_attr_new_string ("linear"));
  clinfer_node_set_attr (a, "coordinate_transformation_mode",
      clinfer_attr_new_string (lc->coord));
  a = add_node (g, "Relu", "relu", a, NULL);
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
  {
    g_auto (GStrv) lines = g_strsplit (last_kernels->str, "\n", -1);
    g_assert_cmpuint (g_strv_length (lines), >=, 2);
    g_assert_true (g_str_has_prefix (lines[1], lc->kernel));
  }
  op_test_assert_close (got, ref, lc->name);
}

/* A MobileNetV3-like tail on 12 channels (a partial block): conv ->
 * HardSigmoid -> squeeze-excite (GlobalAveragePool, HardSigmoid, Mul by
 * the [1,12,1,1] activation) -> Add per-channel constant -> Div by a
 * per-channel constant -> Div by a scalar -> Clip -> Concat zeros (12 ->
 * 20 channels: the padding the eltwise steps left must read as zeros) ->
 * Resize nearest x2 -> AveragePool 3x3 s2 -> Sub scalar: every step on
 * oneDNN's fast path, blocked. The three per-channel steps run on
 * clinfer's per-channel kernels (mode 1: on a larger image, split between
 * the threads; the Add and Div by constants as one chain) or, with
 * CLINFER_CPU_PER_CHANNEL=0 (mode 0), on oneDNN's binary primitive where
 * it has one (not with 8-channel blocks on AVX-512 machines). */
static void
test_chain_eltwise (void)
{
  for (int mode = 0; mode < 2; mode++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (10);
    ClinferGraph *g = op_test_graph (13);
    /* Mode 1 on 90 x 110 pixels too: the threads split the pixels. */
    int64_t h = mode ? 90 : 9, w = mode ? 110 : 11;
    int64_t xd[] = { 1, 16, h, w }, cd[] = { 12, 1, 1 }, one[] = { 1 };
    int64_t zd[] = { 1, 8, h, w }, k3[] = { 3, 3 }, s2[] = { 2, 2 };
    int64_t p1[] = { 1, 1, 1, 1 };
    float six = 6.f, lo = -0.3f, hi = 0.4f, half = 0.5f;
    float scales[] = { 1.f, 1.f, 2.f, 2.f }, dv[12];
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) cb = op_test_random (rand, 3, cd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in, *a, *se, *clip_in[3], *cat_in[2];
    ClinferTensor *inputs[1] = { x };
    GError *err = NULL;
    guint n_onednn, n_steps;
    const char *k;
    int n_kernel = 0;

    for (int i = 0; i < 12; i++)
      dv[i] = 0.5f + 0.125f * i;
    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    a = add_conv (g, rand, "c", in, 16, 12, 3, 1, 1, NULL, NULL);
    a = add_node (g, "HardSigmoid", "hs", a, NULL);
    se = add_node (g, "GlobalAveragePool", "gap", a, NULL);
    se = add_node (g, "HardSigmoid", "se", se, NULL);
    a = add_node (g, "Mul", "scale", a, se);
    a = add_node (g, "Add", "bias", clinfer_graph_add_constant (g, "cb", cb), a);
    a = add_node (g, "Div", "cdiv", a,
        op_test_constant (g, "dv", CLINFER_TYPE_F32, 3, cd, dv));
    a = add_node (g, "Div", "div", a,
        op_test_constant (g, "six", CLINFER_TYPE_F32, 1, one, &six));
    clip_in[0] = a;
    clip_in[1] = op_test_constant (g, "lo", CLINFER_TYPE_F32, 0, NULL, &lo);
    clip_in[2] = op_test_constant (g, "hi", CLINFER_TYPE_F32, 0, NULL, &hi);
    a = op_test_node (g, "Clip", "", "clip", 3, clip_in, 1);
    cat_in[0] = a;
    cat_in[1] = op_test_constant (g, "zeros", CLINFER_TYPE_F32, 4, zd, NULL);
    a = op_test_node (g, "Concat", "", "pad", 2, cat_in, 1);
    clinfer_node_set_attr (a, "axis", clinfer_attr_new_int (1));
    a = add_resize_nearest (g, a, scales);
    a = add_node (g, "AveragePool", "avg", a, NULL);
    set_ints (a, "kernel_shape", 2, k3);
    set_ints (a, "strides", 2, s2);
    set_ints (a, "pads", 4, p1);
    a = add_node (g, "Sub", "sub", a,
        op_test_constant (g, "half", CLINFER_TYPE_F32, 0, NULL, &half));
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    if (mode == 0)
      g_setenv ("CLINFER_CPU_PER_CHANNEL", "0", TRUE);
    got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
    g_unsetenv ("CLINFER_CPU_PER_CHANNEL");
    g_assert_cmpuint (n_steps, ==, 13);
    g_assert_cmpuint (n_onednn, ==, n_steps);
    for (k = last_kernels->str; (k = strstr (k, "binary_per_channel")); k++)
      n_kernel++;
    /* Mode 1: the gate's Mul, then the Add and Div by constants as one
     * per-channel chain (the Div its fused step). */
    g_assert_cmpint (n_kernel, ==, mode == 1 ? 1
        : narrow_block_on_avx512 () ? 3 : 0);
    g_assert_true ((strstr (last_kernels->str, "per_channel_affine") != NULL)
        == (mode == 1));
    /* hs, the conv's only reader, runs as its post-op. */
    g_assert_cmpuint (last_n_fused, ==, mode == 1 ? 2 : 1);
    op_test_assert_close (got, ref, "eltwise chain");
  }
}

/* Per-channel constant steps in a row after a conv, each the only reader
 * of the one before, run as one step: Mul, Add, Relu (a BatchNorm written
 * out, then its activation) and Sub, Div; with CLINFER_CPU_PER_CHANNEL=0
 * each its own oneDNN step. 20 channels (a partial block), 1 and 2
 * threads. */
static void
test_per_channel_chain (void)
{
  for (int mode = 0; mode < 3; mode++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (21);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, 16, 60, 50 }, cd[] = { 20, 1, 1 };
    float v1[20], v2[20];
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[1] = { x };
    ClinferNode *a, *sg;
    GError *err = NULL;
    guint n_onednn, n_steps;

    for (int i = 0; i < 20; i++) {
      v1[i] = 0.5f + 0.05f * i;
      v2[i] = 0.3f - 0.04f * i;
    }
    a = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    a = add_conv (g, rand, "c", a, 16, 20, 3, 1, 1, NULL, NULL);
    /* A second reader of the conv, so that the first step is not
     * folded into it (a graph output would make the conv's output
     * plain). */
    sg = add_node (g, "Sigmoid", "sig", a, NULL);
    if (mode == 1) {
      a = add_node (g, "Sub", "sub", a, op_test_constant (g, "v1",
              CLINFER_TYPE_F32, 3, cd, v1));
      a = add_node (g, "Div", "div", a, op_test_constant (g, "v2",
              CLINFER_TYPE_F32, 3, cd, v1));
    } else {
      a = add_node (g, "Mul", "mul", op_test_constant (g, "v1",
              CLINFER_TYPE_F32, 3, cd, v1), a);
      a = add_node (g, "Add", "add", a, op_test_constant (g, "v2",
              CLINFER_TYPE_F32, 3, cd, v2));
      a = add_node (g, "Relu", "relu", a, NULL);
    }
    a = add_conv (g, rand, "out", a, 20, 8, 3, 1, 1, NULL, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    clinfer_graph_add_output (g, (ClinferPortRef) { sg, 0 }, "sig");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    if (mode == 2)
      g_setenv ("CLINFER_CPU_PER_CHANNEL", "0", TRUE);
    got = run_cpu (g, inputs, 1, mode == 0 ? 1 : 2, &n_onednn, &n_steps);
    g_unsetenv ("CLINFER_CPU_PER_CHANNEL");
    g_assert_true ((strstr (last_kernels->str, "per_channel_affine") != NULL)
        == (mode != 2));
    if (mode == 0)
      g_assert_nonnull (strstr (last_kernels->str, "per_channel_affine_relu"));
    g_assert_cmpuint (last_n_fused, ==, mode == 0 ? 2 : mode == 1 ? 1 : 0);
    op_test_assert_close (got, ref, "per-channel chain");
  }
}

/* Concat on channels of blocked tensors of whole blocks: three convs (16,
 * 16 and 32 channels; the first also read by an Add after the concat) and
 * an upsampled fourth map concatenated, then a conv: the inputs live in
 * the concat's output, which their producers write directly (every arena
 * starts as NaNs here, so a missed input shows). With 12 channels in one
 * input (a partial block) it runs on the C kernels. 1 and 2 threads. */
static void
test_concat_in_place (void)
{
  for (int mode = 0; mode < 3; mode++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (18);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, 16, 40, 36 }, ld[] = { 1, 16, 20, 18 };
    float scales[] = { 1.f, 1.f, 2.f, 2.f };
    int64_t c2 = mode == 2 ? 12 : 16;
    ClinferShape xs = clinfer_shape_make (4, xd), ls = clinfer_shape_make (4, ld);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) lo = op_test_random (rand, 4, ld);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[2] = { x, lo };
    ClinferNode *in, *lin, *a, *cat_in[4], *cat;
    GError *err = NULL;
    guint n_onednn, n_steps;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    lin = clinfer_graph_add_input (g, "lo", CLINFER_TYPE_F32, &ls);
    cat_in[0] = add_conv (g, rand, "c0", in, 16, 16, 3, 1, 1, NULL, "Relu");
    cat_in[1] = add_conv (g, rand, "c1", in, 16, c2, 1, 1, 1, NULL, NULL);
    cat_in[2] = add_conv (g, rand, "c2", in, 16, 32, 3, 1, 1, NULL, NULL);
    cat_in[3] = add_resize_nearest (g, add_conv (g, rand, "c3", lin, 16, 16, 1,
            1, 1, NULL, NULL), scales);
    cat = op_test_node (g, "Concat", "", "cat", 4, cat_in, 1);
    clinfer_node_set_attr (cat, "axis", clinfer_attr_new_int (1));
    a = add_conv (g, rand, "out", cat, 64 + c2, 16, 3, 1, 1, NULL, NULL);
    /* c0 read again after the concat: still there, in the concat's bytes. */
    a = add_node (g, "Add", "again", a, cat_in[0]);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 2, mode == 1 ? 2 : 1, &n_onednn, &n_steps);
    g_assert_true ((strstr (last_kernels->str, "concat_in_place") != NULL)
        == (mode != 2));
    op_test_assert_close (got, ref, "concat in place");
  }
}

/* A feature pyramid's merge: a conv at low resolution, a nearest Resize
 * by whole factors (x2 x2, x1 x3), added to a conv at full resolution (in
 * either order; the full-resolution conv has a second reader), then a conv:
 * the Resize and the Add run as one step,
 * 12 channels (a partial block), at 1 and 2 threads (72 x 90 pixels:
 * split between them). */
static void
test_upsample_add (void)
{
  static const struct { int64_t fh, fw; gboolean swap; int threads; } cases[] = {
    { 2, 2, FALSE, 1 }, { 2, 2, TRUE, 2 }, { 1, 3, FALSE, 2 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (14);
    ClinferGraph *g = op_test_graph (13);
    int64_t h = 72, w = 90;
    int64_t xd[] = { 1, 8, h, w }, ld[] = { 1, 8, h / cases[c].fh, w / cases[c].fw };
    float scales[] = { 1.f, 1.f, (float) cases[c].fh, (float) cases[c].fw };
    ClinferShape xs = clinfer_shape_make (4, xd), ls = clinfer_shape_make (4, ld);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) lo = op_test_random (rand, 4, ld);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in, *lin, *a, *b, *hr;
    ClinferTensor *inputs[2] = { x, lo };
    GError *err = NULL;
    guint n_onednn, n_steps;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    lin = clinfer_graph_add_input (g, "lo", CLINFER_TYPE_F32, &ls);
    a = add_conv (g, rand, "hi", in, 8, 12, 3, 1, 1, NULL, NULL);
    /* A second reader of hi: the Add does not become hi's residual. */
    hr = add_node (g, "Relu", "hi_relu", a, NULL);
    b = add_conv (g, rand, "low", lin, 8, 12, 1, 1, 1, NULL, NULL);
    b = add_resize_nearest (g, b, scales);
    a = cases[c].swap ? add_node (g, "Add", "merge", b, a)
        : add_node (g, "Add", "merge", a, b);
    a = add_conv (g, rand, "out", a, 12, 8, 3, 1, 1, NULL, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    clinfer_graph_add_output (g, (ClinferPortRef) { hr, 0 }, "hi");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 2, cases[c].threads, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 6);
    g_assert_cmpuint (n_onednn, ==, n_steps);
    g_assert_nonnull (strstr (last_kernels->str, "upsample_nearest_add"));
    g_assert_nonnull (strstr (last_kernels->str, "onednn-fused:upsampled by"));
    op_test_assert_close (got, ref, "upsample add");
  }
}

/* conv -> Tanh -> Mul 0.5 -> Add 0.25 -> Sigmoid -> output: the four
 * eltwise steps become post-ops of the conv (the two linears composed
 * into one: oneDNN 2.6 gave the second linear post-op the first one's
 * parameters), which writes the graph output; a second reader of the
 * conv (mode 1) stops the fusion there. The Tanh keeps fuse-conv-scale
 * from folding the Mul and Add into the weights. */
static void
test_post_ops (void)
{
  for (int mode = 0; mode < 2; mode++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (12);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, 16, 13, 9 };
    float half = 0.5f, quarter = 0.25f;
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in, *c, *a;
    ClinferTensor *inputs[1] = { x };
    GError *err = NULL;
    guint n_onednn, n_steps;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    c = add_conv (g, rand, "c", in, 16, 12, 3, 1, 1, NULL, NULL);
    a = add_node (g, "Tanh", "tanh", c, NULL);
    a = add_node (g, "Mul", "mul", a,
        op_test_constant (g, "half", CLINFER_TYPE_F32, 0, NULL, &half));
    a = add_node (g, "Add", "add", a,
        op_test_constant (g, "quarter", CLINFER_TYPE_F32, 0, NULL, &quarter));
    a = add_node (g, "Sigmoid", "sig", a, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    if (mode == 1)
      clinfer_graph_add_output (g, (ClinferPortRef) { c, 0 }, "c");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 5);
    g_assert_cmpuint (last_n_fused, ==, mode == 0 ? 4 : 0);
    op_test_assert_close (got, ref, "post-ops");
  }
}

/* MatMul of a [@ad] input (rank @rank) by constant [@wd] weights, with a
 * constant bias Add after it (first operand when @bias_first) and a Relu
 * when @relu, on the CPU device with @threads: every step on oneDNN's
 * fast path, the Add and the Relu fused, the result the reference's. */
static void
check_matmul (int rank, const int64_t *ad, const int64_t *wd, gboolean bias,
    gboolean bias_first, gboolean relu, int threads)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  ClinferGraph *g = op_test_graph (13);
  ClinferShape as = clinfer_shape_make (rank, ad);
  g_autoptr (ClinferTensor) a = op_test_random (rand, rank, ad);
  g_autoptr (ClinferTensor) w = op_test_random (rand, 2, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &wd[1]);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *m, *bn;
  ClinferTensor *inputs[1] = { a };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &as);
  m = add_node (g, "MatMul", "mm", in, clinfer_graph_add_constant (g, "w", w));
  if (bias) {
    bn = clinfer_graph_add_constant (g, "b", b);
    m = bias_first ? add_node (g, "Add", "bias", bn, m)
        : add_node (g, "Add", "bias", m, bn);
  }
  if (relu)
    m = add_node (g, "Relu", "relu", m, NULL);
  clinfer_graph_add_output (g, (ClinferPortRef) { m, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, threads, &n_onednn, &n_steps);
  g_assert_cmpuint (n_steps, ==, 1 + !!bias + !!relu);
  g_assert_cmpuint (n_onednn, ==, n_steps);
  g_assert_cmpuint (last_n_fused, ==, !!bias + !!relu);
  op_test_assert_close (got, ref, "matmul");
}

/* Ranks 2 and 3, without and with the bias (the first operand for rank
 * 3), on oneDNN's primitive. */
static void
test_matmul (void)
{
  int64_t ad3[] = { 2, 7, 19 }, ad2[] = { 7, 19 }, wd[] = { 19, 45 };

  for (int t = 0; t < 6; t++) {
    int rank = 2 + t % 2;
    check_matmul (rank, rank == 3 ? ad3 : ad2, wd, t >= 2, rank == 3, t >= 4,
        2);
    g_assert_null (strstr (last_kernels->str, "gemm_column_panels"));
  }
}

/* MatMul of two activations (attention: [1, 8, 40, 15] by [1, 8, 15, 40]),
 * ranks 3 and 4, on oneDNN's primitive with B bound every run, at 1 and
 * 2 threads; run twice by run_cpu (), so a second run with the same
 * bindings works too. */
static void
test_matmul_activations (void)
{
  for (int t = 0; t < 3; t++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (15);
    ClinferGraph *g = op_test_graph (13);
    int rank = t == 0 ? 3 : 4;
    int64_t ad4[] = { 1, 8, 40, 15 }, bd4[] = { 1, 8, 15, 40 };
    int64_t ad3[] = { 3, 7, 5 }, bd3[] = { 3, 5, 6 };
    const int64_t *ad = rank == 4 ? ad4 : ad3, *bd = rank == 4 ? bd4 : bd3;
    ClinferShape as = clinfer_shape_make (rank, ad), bs = clinfer_shape_make (rank, bd);
    g_autoptr (ClinferTensor) a = op_test_random (rand, rank, ad);
    g_autoptr (ClinferTensor) b = op_test_random (rand, rank, bd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[2] = { a, b };
    ClinferNode *m;
    GError *err = NULL;
    guint n_onednn, n_steps;

    m = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &as);
    m = add_node (g, "MatMul", "mm", m,
        clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &bs));
    clinfer_graph_add_output (g, (ClinferPortRef) { m, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 2, t == 2 ? 2 : 1, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 1);
    g_assert_cmpuint (n_onednn, ==, 1);
    op_test_assert_close (got, ref, "matmul activations");
  }
}

/* Transpose @x by @perm (rank @r). */
static ClinferNode *
transpose_node (ClinferGraph *g, const char *name, ClinferNode *x,
    const int64_t *perm, int r)
{
  ClinferNode *t = add_node (g, "Transpose", name, x, NULL);

  clinfer_node_set_attr (t, "perm", clinfer_attr_new_ints (perm, r));
  return t;
}

/* @x [1, 5, 6] reshaped to [1, 5, 2, 3] (tokens, heads, dim). */
static ClinferNode *
heads (ClinferGraph *g, const char *name, ClinferNode *x)
{
  static const int64_t hd[] = { 1, 5, 2, 3 }, four[] = { 4 };
  g_autofree char *sn = g_strdup_printf ("%s/shape", name);

  return add_node (g, "Reshape", name, x,
      op_test_constant (g, sn, CLINFER_TYPE_I64, 1, four, hd));
}

/* Attention's head Transposes become strides of the MatMuls of two
 * activations (lore's pattern): q, v to [1, heads, tokens, dim], k to
 * [1, heads, dim, tokens], the result back to [1, tokens, heads, dim].
 * Mode 0: all four fused; 1: q's transposed tensor also read by an Add,
 * so that one stays a step (three fused); 2: rank 3, a Transpose (0, 2,
 * 1) on B only, a Relu after the MatMul. The scores' Div by sqrt (d) is
 * the first MatMul's post-op. The result is the reference's at 1 and 2
 * threads. */
static void
test_matmul_transposes (void)
{
  static const int64_t p0213[] = { 0, 2, 1, 3 }, p0231[] = { 0, 2, 3, 1 };
  static const int64_t p021[] = { 0, 2, 1 }, back[] = { 1, 5, 6 },
      three[] = { 3 };
  static const float sqrt_d = 1.7320508f;

  for (int t = 0; t < 6; t++) {
    int mode = t % 3, threads = t < 3 ? 1 : 2;
    g_autoptr (GRand) rand = g_rand_new_with_seed (21);
    ClinferGraph *g = op_test_graph (13);
    int64_t td[] = { 1, 5, 6 }, ad[] = { 2, 4, 5 }, bd[] = { 2, 7, 5 };
    ClinferShape ts = clinfer_shape_make (3, td);
    ClinferShape as = clinfer_shape_make (3, ad), bs = clinfer_shape_make (3, bd);
    g_autoptr (ClinferTensor) q = op_test_random (rand, 3, mode == 2 ? ad : td);
    g_autoptr (ClinferTensor) k = op_test_random (rand, 3, mode == 2 ? bd : td);
    g_autoptr (ClinferTensor) v = op_test_random (rand, 3, td);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[3] = { q, k, v };
    ClinferNode *qn, *kn, *vn, *y;
    GError *err = NULL;
    guint n_onednn, n_steps;

    if (mode == 2) {
      qn = clinfer_graph_add_input (g, "q", CLINFER_TYPE_F32, &as);
      kn = add_node (g, "Relu", "kr",
          clinfer_graph_add_input (g, "k", CLINFER_TYPE_F32, &bs), NULL);
      y = add_node (g, "MatMul", "mm", qn, transpose_node (g, "kt", kn, p021,
              3));
      y = add_node (g, "Relu", "out", y, NULL);
    } else {
      qn = transpose_node (g, "qt", heads (g, "qh",
              clinfer_graph_add_input (g, "q", CLINFER_TYPE_F32, &ts)), p0213,
          4);
      kn = transpose_node (g, "kt", heads (g, "kh",
              clinfer_graph_add_input (g, "k", CLINFER_TYPE_F32, &ts)), p0231,
          4);
      vn = transpose_node (g, "vt", heads (g, "vh",
              clinfer_graph_add_input (g, "v", CLINFER_TYPE_F32, &ts)), p0213,
          4);
      y = add_node (g, "MatMul", "scores", qn, kn);
      y = add_node (g, "Div", "scale", y, op_test_constant (g, "sqrt-d",
              CLINFER_TYPE_F32, 0, NULL, &sqrt_d));
      y = add_node (g, "Softmax", "softmax", y, NULL);
      y = add_node (g, "MatMul", "mix", y, vn);
      if (mode == 1)
        y = add_node (g, "Add", "plus-q", y, qn);
      y = transpose_node (g, "yt", y, p0213, 4);
      y = add_node (g, "Reshape", "merge", y,
          op_test_constant (g, "back", CLINFER_TYPE_I64, 1, three, back));
    }
    clinfer_graph_add_output (g, (ClinferPortRef) { y, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, mode == 2 ? 2 : 3, threads, &n_onednn, &n_steps);
    /* mode 1: q's Transpose has two readers; the Add sits between mix
     * and yt, which then no longer follows a MatMul. mode 2: the Relu is
     * fused too. */
    g_assert_cmpuint (last_n_fused, ==, mode == 1 ? 3 : mode == 0 ? 5 : 2);
    if (mode != 2)
      g_assert_nonnull (strstr (last_kernels->str,
              "onednn-fused:post-op of MatMul 'scores'"));
    if (mode == 2)
      g_assert_nonnull (strstr (last_kernels->str, "post-op of MatMul"));
    g_assert_nonnull (strstr (last_kernels->str, "onednn-fused:strides of"));
    op_test_assert_close (got, ref, "matmul transposes");
  }
}

/* A MatMul with few rows and over 1 MB of weights runs on clinfer's GEMM
 * by column panels: 37 rows (panels of 10 rows with 16-float vectors,
 * of 6 or 3 below: the last one partial), 2900 columns (the last panel
 * partial), with and without the fused bias and Relu, at 1 and 2
 * threads; 65 rows stay on oneDNN's primitive. */
static void
test_matmul_gemm (void)
{
  int64_t wd[] = { 96, 2900 };

  for (int t = 0; t < 10; t++) {
    int64_t ad[] = { 1, t < 4 || t >= 6 ? 37 : 65, 96 };
    gboolean relu = t >= 6;
    check_matmul (3, ad, wd, t % 2 == 1, FALSE, relu, t < 2 || t == 6 ? 1 : 2);
    g_assert_true ((strstr (last_kernels->str, "gemm_column_panels") != NULL)
        == (ad[1] == 37));
    g_assert_true ((strstr (last_kernels->str, "gemm_column_panels_relu")
            != NULL) == (ad[1] == 37 && relu));
  }
}

/* A Relu after a MatMul is not fused when the MatMul's output has
 * another reader or is a graph output: three steps, the result the
 * reference's. */
static void
test_matmul_relu_unfused (void)
{
  int64_t ad[] = { 1, 37, 96 }, wd[] = { 96, 2900 };

  for (int t = 0; t < 2; t++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (12);
    ClinferGraph *g = op_test_graph (13);
    ClinferShape as = clinfer_shape_make (3, ad);
    g_autoptr (ClinferTensor) a = op_test_random (rand, 3, ad);
    g_autoptr (ClinferTensor) w = op_test_random (rand, 2, wd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[1] = { a };
    ClinferNode *m, *r;
    GError *err = NULL;
    guint n_onednn, n_steps;

    m = add_node (g, "MatMul", "mm",
        clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &as),
        clinfer_graph_add_constant (g, "w", w));
    r = add_node (g, "Relu", "relu", m, NULL);
    if (t == 0)
      r = add_node (g, "Add", "sum", r, m);
    clinfer_graph_add_output (g, (ClinferPortRef) { r, 0 }, "y");
    if (t == 1)
      clinfer_graph_add_output (g, (ClinferPortRef) { m, 0 }, "m");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 2 + (t == 0));
    g_assert_cmpuint (last_n_fused, ==, 0);
    g_assert_null (strstr (last_kernels->str, "gemm_column_panels_relu"));
    op_test_assert_close (got, ref, "matmul relu unfused");
  }
}

/* Softmax of @x (its first @big values times 80, the rest times 8) at
 * @axis, by the reference evals (*ref) and on the CPU device with
 * @threads (returned); *n_onednn and *n_steps as run_cpu () sets them. */
static ClinferTensor *
run_softmax (int opset, int64_t axis, ClinferTensor *x, int64_t big,
    int threads, ClinferTensor **ref, guint *n_onednn, guint *n_steps)
{
  ClinferGraph *g = op_test_graph (opset);
  ClinferTensor *inputs[1] = { x };
  float *v = clinfer_tensor_get_data (x);
  ClinferNode *in, *sm;
  GError *err = NULL;
  ClinferTensor *got;

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (x); i++)
    v[i] *= i < big ? 80.f : 8.f;
  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32,
      clinfer_tensor_get_shape (x));
  sm = add_node (g, "Softmax", "sm", in, NULL);
  clinfer_node_set_attr (sm, "axis", clinfer_attr_new_int (axis));
  clinfer_graph_add_output (g, (ClinferPortRef) { sm, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  *ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  model_opset = opset;
  got = run_cpu (g, inputs, 1, threads, n_onednn, n_steps);
  model_opset = 13;
  return got;
}

/* Softmax on the plain layout of [2, 7, 19]: opset 11 flattened at axis
 * 1 ([2, 133]) and opset 13 along the last axis run on oneDNN; opset 13
 * along the middle axis ([outer, n, inner] = [2, 7, 19]) has only
 * oneDNN's reference implementation, so the C kernel keeps it. */
static void
test_softmax (void)
{
  static const struct { int opset; int64_t axis; guint n_onednn; } cases[] = {
    { 11, 1, 1 }, { 13, -1, 1 }, { 13, 1, 0 },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (13);
    int64_t xd[] = { 2, 7, 19 };
    g_autoptr (ClinferTensor) x = op_test_random (rand, 3, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    guint n_onednn, n_steps;

    got = run_softmax (cases[c].opset, cases[c].axis, x, 0, 1, &ref,
        &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 1);
    g_assert_cmpuint (n_onednn, ==, cases[c].n_onednn);
    g_assert_null (strstr (last_kernels->str, "softmax_column_split"));
    op_test_assert_close (got, ref, "softmax");
  }
}

/* Softmax over rows of 1024 floats or more runs on clinfer's kernel,
 * which splits each row between the threads: run lengths that are not
 * multiples of the vector or of 16, a row spread over -80..80, opset 11's
 * flattening, at 1 and 2 threads. Shorter rows keep oneDNN's
 * (test_softmax). */
static void
test_softmax_split (void)
{
  static const struct { int opset; int64_t axis; int64_t d[3]; } cases[] = {
    { 13, -1, { 1, 5, 1500 } }, { 13, -1, { 1, 2, 1024 } },
    { 13, -1, { 1, 70, 1027 } }, { 11, 1, { 2, 40, 30 } },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    for (int threads = 1; threads <= 2; threads++) {
      g_autoptr (GRand) rand = g_rand_new_with_seed (14 + c);
      g_autoptr (ClinferTensor) x = op_test_random (rand, 3, cases[c].d);
      g_autoptr (ClinferTensor) ref = NULL, got = NULL;
      int64_t n = clinfer_tensor_get_n_elements (x);
      guint n_onednn, n_steps;

      got = run_softmax (cases[c].opset, cases[c].axis, x, cases[c].d[2],
          threads, &ref, &n_onednn, &n_steps);
      g_assert_cmpuint (n_onednn, ==, 1);
      g_assert_nonnull (strstr (last_kernels->str, "softmax_column_split"));
      op_test_assert_close (got, ref, "softmax");
      /* Relative too: the vector exp's error, not hidden by small values. */
      for (int64_t i = 0; i < n; i++) {
        float r = ((const float *) clinfer_tensor_get_const_data (ref))[i];
        float o = ((const float *) clinfer_tensor_get_const_data (got))[i];
        if (fabsf (o - r) > 1e-5f * fabsf (r) + 1e-30f)
          g_error ("softmax element %" G_GINT64_FORMAT ": %g, expected %g",
              i, o, r);
      }
    }
}

/* A conv output read by a C kernel (a Transpose of H and W) and by a
 * oneDNN conv: it must stay plain; and the first output is the transposed
 * one. */
static void
test_chain_boundary (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (8);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 2, 16, 13, 6 }, perm[] = { 0, 1, 3, 2 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *a, *b, *t, *add_in[2];
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  a = add_conv (g, rand, "a", in, 16, 17, 3, 1, 1, NULL, NULL);
  b = add_conv (g, rand, "b", a, 17, 17, 3, 17, 1, NULL, NULL);
  add_in[0] = a;
  add_in[1] = b;
  /* Add of two conv outputs: the fusion pass makes a the residual of b. */
  t = op_test_node (g, "Add", "", "add", 2, add_in, 1);
  t = op_test_node (g, "Transpose", "", "t", 1, &t, 1);
  set_ints (t, "perm", 4, perm);
  clinfer_graph_add_output (g, (ClinferPortRef) { t, 0 }, "y");
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "a");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 2, &n_onednn, &n_steps);
  g_assert_cmpuint (n_onednn, ==, 2);
  op_test_assert_close (got, ref, "boundary");
}

/* An NHWC input transposed to NCHW for a conv, and the conv's output
 * transposed back to NHWC (BlazeFace's input and outputs): each Transpose
 * is one oneDNN reorder, the second reading the conv's blocked output
 * directly (10 channels: a partial block). 1 and 2 threads. */
static void
test_transpose_nhwc (void)
{
  for (int threads = 1; threads <= 2; threads++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (19);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 2, 21, 17, 3 }, to_nchw[] = { 0, 3, 1, 2 };
    int64_t to_nhwc[] = { 0, 2, 3, 1 };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[1] = { x };
    ClinferNode *t;
    GError *err = NULL;
    guint n_onednn, n_steps;

    t = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    t = op_test_node (g, "Transpose", "", "in", 1, &t, 1);
    set_ints (t, "perm", 4, to_nchw);
    t = add_conv (g, rand, "c", t, 3, 10, 3, 1, 1, NULL, "Relu");
    t = op_test_node (g, "Transpose", "", "out", 1, &t, 1);
    set_ints (t, "perm", 4, to_nhwc);
    clinfer_graph_add_output (g, (ClinferPortRef) { t, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    got = run_cpu (g, inputs, 1, threads, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 3);
    /* Both Transposes too (they ran on the C kernels before). */
    g_assert_cmpuint (n_onednn, ==, 3);
    op_test_assert_close (got, ref, "transpose nhwc");
  }
}

/* 1 and 2 threads give the reference result; with CLINFER_CPU_ONEDNN=0
 * no step runs on oneDNN and the result is the reference's too. */
static void
test_threads_and_switch (void)
{
  for (int mode = 0; mode < 3; mode++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (9);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, 16, 31, 29 };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferNode *in, *a;
    ClinferTensor *inputs[1] = { x };
    GError *err = NULL;
    guint n_onednn, n_steps;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    a = add_conv (g, rand, "a", in, 16, 32, 3, 1, 1, NULL, "Relu");
    a = add_conv (g, rand, "b", a, 32, 32, 3, 32, 2, NULL, "Relu");
    a = add_conv (g, rand, "c", a, 32, 8, 1, 1, 1, NULL, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    if (mode == 2)
      g_setenv ("CLINFER_CPU_ONEDNN", "0", TRUE);
    got = run_cpu (g, inputs, 1, mode == 0 ? 1 : 2, &n_onednn, &n_steps);
    g_unsetenv ("CLINFER_CPU_ONEDNN");
    g_assert_cmpuint (n_steps, ==, 3);
    g_assert_cmpuint (n_onednn, ==, mode == 2 ? 0 : 3);
    op_test_assert_close (got, ref, "threads");
  }
}

/* CLINFER_CPU_ARENA_SHARED=both at 2 threads: the requests run the plan's
 * arena layout and the unshared one in turn (the chooser's trial), each
 * with its own oneDNN memory objects; every output has the same bits and
 * matches the reference (the blocked chain above: dw+pw, blocked max
 * pool, channel pad in the arena). */
static void
test_two_layouts (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  g_autoptr (ClinferTensor) x = NULL;
  ClinferGraph *g = blocked_chain (rand, &x);
  g_autoptr (ClinferTensor) ref = NULL, first = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  ClinferTensor *inputs[1] = { x };
  const void *seen[2] = { NULL, NULL };
  GError *err = NULL;

  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);

  g_setenv ("CLINFER_CPU_ARENA_SHARED", "both", TRUE);
  m = op_test_model (g, model_opset, &err);
  g_assert_no_error (err);
  clinfer_compile_config_set_threads (cfg, 2);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, x, &err));
  for (int k = 0; k < 2 * CLINFER_CHOOSER_RUNS + 2; k++) {
    const ClinferTensor *y;
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
    y = clinfer_request_get_output (r, 0);
    if (first == NULL) {
      first = clinfer_tensor_copy (y, &err);
      op_test_assert_close (first, ref, "two layouts");
    }
    g_assert_cmpmem (clinfer_tensor_get_const_data (y),
        clinfer_tensor_get_byte_size (y), clinfer_tensor_get_const_data (first),
        clinfer_tensor_get_byte_size (first));
    if (seen[0] == NULL)
      seen[0] = clinfer_tensor_get_const_data (y);
    else if (clinfer_tensor_get_const_data (y) != seen[0])
      seen[1] = clinfer_tensor_get_const_data (y);
  }
  g_unsetenv ("CLINFER_CPU_ARENA_SHARED");
  g_assert_nonnull (seen[1]);
}

/* x ([1, @cin, h, w]) -> conv @cin -> @mid -> @op (a, Sigmoid (a)) -> conv
 * @mid -> @cout -> y, 3x3 convs (weights from @rand), prepared; returns
 * y on the reference evals for @x. */
static ClinferTensor *
conv_sigmoid_conv (ClinferGraph *g, GRand *rand, ClinferTensor *x,
    int64_t mid, int64_t cout, const char *op)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (x);
  ClinferTensor *inputs[1] = { x }, *ref;
  ClinferNode *in, *a, *sig;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, xs);
  a = add_conv (g, rand, "c1", in, xs->dims[1], mid, 3, 1, 1, NULL, NULL);
  sig = add_node (g, "Sigmoid", "sig", a, NULL);
  a = add_node (g, op, "gate", a, sig);
  a = add_conv (g, rand, "c2", a, mid, cout, 3, 1, 1, NULL, NULL);
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  return ref;
}

/* A one-channel tensor between fast-path steps is kept plain (conv 8 -> 1,
 * a second reader so the Sigmoid is its own step, Add, conv 1 -> 4): the
 * steps stay on oneDNN's path, the reorders at the one-channel slots give
 * the reference result, at 1 and 2 threads. */
static void
test_one_channel_plain (void)
{
  for (int threads = 1; threads <= 2; threads++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (16);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, 8, 37, 41 };
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[1] = { x };
    guint n_onednn, n_steps;

    ref = conv_sigmoid_conv (g, rand, x, 1, 4, "Add");
    got = run_cpu (g, inputs, 1, threads, &n_onednn, &n_steps);
    /* oneDNN 2.6 has no kernel for the 8 -> 1 conv with 16-channel
     * blocks: it runs on the C kernels then, the rest on oneDNN (before
     * the one-channel slots were plain, the Sigmoid and the last conv
     * fell back too). */
    g_assert_cmpuint (n_steps, ==, 4);
    g_assert_cmpuint (n_onednn, >=, n_steps - 1);
    op_test_assert_close (got, ref, "one channel plain");
  }
}

/* FusedConv (Clip -1..1) -> Mul 0.5 -> Clip 0..0.3: the Mul becomes a
 * post-op, the second Clip (clip_v2 again, other bounds) does not. */
static void
test_post_ops_same_alg (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (13);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 1, 16, 11, 7 };
  float lo1 = -1.f, hi1 = 1.f, half = 0.5f, lo2 = 0.f, hi2 = 0.3f;
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *a, *clip_in[3];
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  clip_in[0] = add_conv (g, rand, "c", in, 16, 8, 3, 1, 1, NULL, NULL);
  clip_in[1] = op_test_constant (g, "lo1", CLINFER_TYPE_F32, 0, NULL, &lo1);
  clip_in[2] = op_test_constant (g, "hi1", CLINFER_TYPE_F32, 0, NULL, &hi1);
  a = op_test_node (g, "Clip", "", "clip1", 3, clip_in, 1);
  a = add_node (g, "Mul", "mul", a,
      op_test_constant (g, "half", CLINFER_TYPE_F32, 0, NULL, &half));
  clip_in[0] = a;
  clip_in[1] = op_test_constant (g, "lo2", CLINFER_TYPE_F32, 0, NULL, &lo2);
  clip_in[2] = op_test_constant (g, "hi2", CLINFER_TYPE_F32, 0, NULL, &hi2);
  a = op_test_node (g, "Clip", "", "clip2", 3, clip_in, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
  /* FusedConv (with clip1), mul, clip2 */
  g_assert_cmpuint (n_steps, ==, 3);
  g_assert_cmpuint (n_onednn, ==, 3);
  g_assert_cmpuint (last_n_fused, ==, 1);
  op_test_assert_close (got, ref, "post-ops, same algorithm");
}

/* conv -> x * Clip (x + 3, 0, 6) / 6 (written out, opset 13): the
 * fuse-hardswish pass makes it one HardSwish, which runs as the conv's
 * post-op. */
static void
test_post_op_hardswish (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (14);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 1, 16, 9, 13 };
  float three = 3.f, zero = 0.f, six = 6.f;
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *c, *a, *clip_in[3];
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  c = add_conv (g, rand, "c", in, 16, 16, 3, 1, 1, NULL, NULL);
  clip_in[0] = add_node (g, "Add", "plus3", c,
      op_test_constant (g, "three", CLINFER_TYPE_F32, 0, NULL, &three));
  clip_in[1] = op_test_constant (g, "zero", CLINFER_TYPE_F32, 0, NULL, &zero);
  clip_in[2] = op_test_constant (g, "six", CLINFER_TYPE_F32, 0, NULL, &six);
  a = op_test_node (g, "Clip", "", "relu6", 3, clip_in, 1);
  a = add_node (g, "Mul", "gate", c, a);
  a = add_node (g, "Div", "div6", a,
      op_test_constant (g, "six2", CLINFER_TYPE_F32, 0, NULL, &six));
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
  g_assert_cmpuint (n_steps, ==, 2);
  g_assert_cmpuint (n_onednn, ==, 2);
  g_assert_cmpuint (last_n_fused, ==, 1);
  op_test_assert_close (got, ref, "hardswish post-op");
}

/* conv (20 channels: padding lanes in 8- and 16-channel blocks) -> x * Sigmoid
 * (x) -> conv: the fuse-swish pass makes the pair one com.clinfer Swish,
 * which runs as clinfer's step on the blocked buffer (padding lanes
 * included), not as the conv's post-op; at 1 and 2 threads (the buffer
 * splits in two). */
static void
test_swish_blocked (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (15);
  int64_t xd[] = { 1, 3, 64, 64 };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  ClinferTensor *inputs[1] = { x };

  for (int threads = 1; threads <= 2; threads++) {
    ClinferGraph *g = op_test_graph (13);
    g_autoptr (GRand) wr = g_rand_new_with_seed (16);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    guint n_onednn, n_steps;

    ref = conv_sigmoid_conv (g, wr, x, 20, 8, "Mul");
    got = run_cpu (g, inputs, 1, threads, &n_onednn, &n_steps);
    g_assert_cmpuint (n_steps, ==, 3);
    g_assert_cmpuint (n_onednn, ==, 3);
    g_assert_cmpuint (last_n_fused, ==, 0);
    g_assert_nonnull (strstr (last_kernels->str, "onednn-layout:swish_rows_"));
    op_test_assert_close (got, ref, "swish between convs");
  }
}

/* ---------------------------------------------------------------- */
/* Depthwise + 1x1 fusion (onednn-dwpw.c)                            */

typedef struct {
  const char *name;
  int64_t n, c, h, w, m, k, stride;
  int64_t pads[4];
  gboolean dw_bias, pw_bias, residual;
  const char *dw_act, *pw_act;
  const char *after;          /* an op reading the 1x1's output, or NULL */
  gboolean two_readers;       /* the depthwise output is also an output */
  gboolean fused;             /* expected to run as one step */
  /* x is a conv's output (in the arena) and z = Sigmoid (x), run before
   * the depthwise, and y is in the arena too (read by @after): x must
   * live until the fused step reads it, or y would be planned over it. */
  gboolean x_in_arena;
} DwPwCase;

static const DwPwCase dwpw_cases[] = {
  /* BlazeFace's block: dw 3x3 (no bias), 1x1 + x, Relu. */
  { "blazeface-block", 1, 24, 21, 19, 24, 3, 1, { 1, 1, 1, 1 }, FALSE, TRUE, TRUE, NULL, "Relu", NULL, FALSE, TRUE },
  { "partial-blocks-s2-pad-end", 1, 20, 19, 23, 28, 3, 2, { 0, 0, 1, 1 }, TRUE, TRUE, FALSE, "Relu", "Clip", NULL, FALSE, TRUE },
  { "5x5-leaky", 1, 13, 11, 17, 5, 5, 1, { 2, 2, 2, 2 }, TRUE, FALSE, FALSE, NULL, "LeakyRelu", NULL, FALSE, TRUE },
  { "wide-row", 1, 40, 5, 131, 16, 3, 1, { 1, 1, 1, 1 }, FALSE, TRUE, TRUE, "Clip", NULL, NULL, FALSE, TRUE },
  { "many-channels", 1, 200, 6, 9, 36, 3, 1, { 1, 1, 1, 1 }, TRUE, TRUE, TRUE, NULL, "Relu", NULL, FALSE, TRUE },
  { "tiny-plane", 1, 8, 2, 3, 8, 3, 1, { 1, 1, 1, 1 }, FALSE, TRUE, TRUE, NULL, "Relu", NULL, FALSE, TRUE },
  { "x-in-arena-read-before", 1, 24, 12, 14, 24, 3, 1, { 1, 1, 1, 1 }, FALSE, TRUE, TRUE, NULL, "Relu", "GlobalAveragePool", FALSE, TRUE, TRUE },
  /* Not fused: batch 2, a second reader of the depthwise output, an
   * eltwise step fused into the 1x1. */
  { "batch-2", 2, 16, 9, 10, 16, 3, 1, { 1, 1, 1, 1 }, TRUE, TRUE, TRUE, NULL, "Relu", NULL, FALSE, FALSE },
  { "dw-output-read-twice", 1, 16, 9, 10, 16, 3, 1, { 1, 1, 1, 1 }, TRUE, TRUE, FALSE, NULL, NULL, NULL, TRUE, FALSE },
  { "1x1-with-post-op", 1, 16, 9, 10, 16, 3, 1, { 1, 1, 1, 1 }, TRUE, TRUE, FALSE, NULL, NULL, "Sigmoid", FALSE, FALSE },
};

static ClinferNode *
dwpw_conv (ClinferGraph *g, GRand *rand, const char *name, ClinferNode *x,
    int64_t c, int64_t m, int64_t k, int64_t group, int64_t stride,
    const int64_t *pads, gboolean bias, ClinferNode *residual,
    const char *act)
{
  int64_t wd[] = { m, c / group, k, k }, kk[] = { k, k }, s[] = { stride, stride };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, &m);
  g_autofree char *wn = g_strdup_printf ("%s/w", name);
  g_autofree char *bn = g_strdup_printf ("%s/b", name);
  ClinferNode *in[4] = { x, clinfer_graph_add_constant (g, wn, w),
    bias ? clinfer_graph_add_constant (g, bn, b) : NULL, residual };
  gboolean fused = act != NULL || residual != NULL;
  ClinferNode *n = op_test_node (g, fused ? "FusedConv" : "Conv",
      fused ? "com.clinfer" : "", name, fused ? 4 : (bias ? 3 : 2), in, 1);

  set_ints (n, "kernel_shape", 2, kk);
  set_ints (n, "strides", 2, s);
  set_ints (n, "pads", 4, pads);
  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (group));
  if (fused)
    clinfer_node_set_attr (n, "activation",
        clinfer_attr_new_string (act ? act : ""));
  if (act && strcmp (act, "Clip") == 0) {
    clinfer_node_set_attr (n, "activation_min", clinfer_attr_new_float (-0.5f));
    clinfer_node_set_attr (n, "activation_max", clinfer_attr_new_float (0.75f));
  } else if (act && strcmp (act, "LeakyRelu") == 0)
    clinfer_node_set_attr (n, "activation_alpha", clinfer_attr_new_float (0.1f));
  return n;
}

/* The case's graph, prepared; the same weights on every call. */
static ClinferGraph *
dwpw_graph (const DwPwCase *c)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (31);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { c->n, c->c, c->h, c->w }, zero[4] = { 0 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in, *dw, *pw, *z = NULL;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  if (c->x_in_arena) {
    in = dwpw_conv (g, rand, "x", in, c->c, c->c, 1, 1, 1, zero, TRUE, NULL,
        NULL);
    z = op_test_node (g, "Sigmoid", "", "z", 1, &in, 1);
  }
  dw = dwpw_conv (g, rand, "dw", in, c->c, c->c, c->k, c->c, c->stride,
      c->pads, c->dw_bias, NULL, c->dw_act);
  if (c->residual && z == NULL) {
    /* x when the shapes match, else a conv of x with y's shape. */
    z = c->stride == 1 && c->m == c->c ? in
        : dwpw_conv (g, rand, "zconv", in, c->c, c->m, c->k, 1, c->stride,
            c->pads, TRUE, NULL, NULL);
  }
  pw = dwpw_conv (g, rand, "pw", dw, c->c, c->m, 1, 1, 1, zero, c->pw_bias,
      z, c->pw_act);
  if (c->after)
    pw = op_test_node (g, c->after, "", "after", 1, &pw, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { pw, 0 }, "y");
  if (c->two_readers)
    clinfer_graph_add_output (g, (ClinferPortRef) { dw, 0 }, "dw");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

/* Each case against the reference evals, with the fusion forced on (the
 * default is on with AVX2 only) at 1 and 2 threads, and switched off: the
 * depthwise step runs inside the 1x1 where the pair qualifies, and never
 * where it does not. */
static void
test_dw_pw (gconstpointer data)
{
  const DwPwCase *c = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (32);
  int64_t xd[] = { c->n, c->c, c->h, c->w };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL;
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  {
    ClinferGraph *g = dwpw_graph (c);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    clinfer_graph_free (g);
  }
  for (int mode = 0; mode < 3; mode++) {
    g_autoptr (ClinferTensor) got = NULL;
    gboolean on = mode < 2;

    g_setenv ("CLINFER_CPU_DWPW", on ? "1" : "0", TRUE);
    got = run_cpu (dwpw_graph (c), inputs, 1, mode == 1 ? 2 : 1, &n_onednn,
        &n_steps);
    g_unsetenv ("CLINFER_CPU_DWPW");
    g_assert_cmpint (strstr (last_kernels->str, "+1x1_nChw") != NULL, ==,
        on && c->fused);
    g_assert_cmpint (strstr (last_kernels->str, "depthwise run by") != NULL,
        ==, on && c->fused);
    op_test_assert_close (got, ref, c->name);
  }
}

/* The fusion's default (CLINFER_CPU_DWPW unset) on BlazeFace's block at
 * 21x19, whose depthwise output fits any L2 cache: with one thread the
 * pair stays two oneDNN primitives; with two it is fused wherever
 * clinfer has a blocked kernel (AVX2 and up), because the fused step
 * splits its rows once for both convs. The results match the reference
 * either way. */
static void
test_dw_pw_default (void)
{
  const DwPwCase *c = &dwpw_cases[0];
  g_autoptr (GRand) rand = g_rand_new_with_seed (33);
  int64_t xd[] = { c->n, c->c, c->h, c->w };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL;
  ClinferTensor *inputs[1] = { x };
  gboolean kernel = clinfer_cpu_isa_detect () >= CLINFER_CPU_ISA_AVX2;
  GError *err = NULL;
  guint n_onednn, n_steps;

  g_assert_null (g_getenv ("CLINFER_CPU_DWPW"));
  {
    ClinferGraph *g = dwpw_graph (c);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    clinfer_graph_free (g);
  }
  for (int threads = 1; threads <= 2; threads++) {
    g_autoptr (ClinferTensor) got = run_cpu (dwpw_graph (c), inputs, 1,
        threads, &n_onednn, &n_steps);
    g_assert_cmpint (strstr (last_kernels->str, "depthwise run by") != NULL,
        ==, threads == 2 && kernel);
    op_test_assert_close (got, ref, c->name);
  }
}

/* The channel block: x (1xCx{H}x{H}) -> 1x1 conv C -> C -> MaxPool 2x2
 * -> conv C -> 5 (1x1, or 3x3 to @small_out channels); the blocked max
 * pool's kernel name tells the block. With AVX2 it is 8; with AVX-512
 * 16, except where AVX-512 runs at half rate (Zen 4), the large convs
 * (4096 output pixels or more) would pad more than a fifth of their
 * channels (24 -> 32, not 32, and not 24 at 32x32) and that padding is
 * more than 0.16 of the small convs' work (not with a 3x3 conv of 24 to
 * 256 channels on the 32x32 after the pool: 0.03);
 * CLINFER_CPU_BLOCK=8/16 overrides. Every choice matches the reference
 * evals. */
static void
test_block_choice (void)
{
  static const struct {
    int64_t c, hw;
    const char *env;
    gboolean wants_8;           /* the rule's answer on Zen 4 */
    int64_t small_out;          /* the last conv: 3x3 to this many, or 0 */
  } cases[] = {
    { 24, 64, NULL, TRUE }, { 32, 64, NULL, FALSE }, { 24, 32, NULL, FALSE },
    { 24, 64, "16", FALSE }, { 32, 64, "8", FALSE },
    { 24, 64, NULL, FALSE, 256 },
  };
  ClinferCpuIsa isa = clinfer_cpu_isa_detect ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (40 + i);
    ClinferGraph *g = op_test_graph (13);
    int64_t xd[] = { 1, cases[i].c, cases[i].hw, cases[i].hw };
    int64_t kk[] = { 2, 2 };
    ClinferShape xs = clinfer_shape_make (4, xd);
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL, got = NULL;
    ClinferTensor *inputs[1] = { x };
    ClinferNode *in, *a;
    GError *err = NULL;
    guint n_onednn, n_steps;
    int want;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    a = add_conv (g, rand, "c", in, cases[i].c, cases[i].c, 1, 1, 1, NULL, NULL);
    a = op_test_node (g, "MaxPool", "", "pool", 1, &a, 1);
    set_ints (a, "kernel_shape", 2, kk);
    set_ints (a, "strides", 2, kk);
    if (cases[i].small_out)
      a = add_conv (g, rand, "last", a, cases[i].c, cases[i].small_out, 3, 1,
          1, NULL, NULL);
    else
      a = add_conv (g, rand, "last", a, cases[i].c, 5, 1, 1, 1, NULL, NULL);
    clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    if (cases[i].env)
      g_setenv ("CLINFER_CPU_BLOCK", cases[i].env, TRUE);
    got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
    g_unsetenv ("CLINFER_CPU_BLOCK");
    op_test_assert_close (got, ref, "block");
    if (isa == CLINFER_CPU_ISA_GENERIC)
      continue;                 /* no blocked max pool kernel to name it */
    if (isa < CLINFER_CPU_ISA_AVX512)
      want = 8;
    else if (cases[i].env)
      want = atoi (cases[i].env);
    else
      want = clinfer_cpu_avx512_half_rate () && cases[i].wants_8 ? 8 : 16;
    g_test_message ("case %u: block %d expected", i, want);
    g_assert_nonnull (strstr (last_kernels->str,
            want == 8 ? "max_pool_nChw8c_avx2" : "max_pool_nChw16c_avx512"));
  }
}

/* Spatial convs with large weights on small planes run on oneDNN's
 * brgemm conv (NHWC only in 2.6), the blocked slots reordered around it
 * (onednn-ops.c conv_wants_nhwc ()): x -> 1x1 conv A -> 3x3 conv B (with
 * A as its residual and a Relu) -> 1x1 conv C. 256 channels on 7x7 (2.4
 * MB of weights) and 128 strided from 14x14 to 7x7 (590 KB) take it where
 * the blocks are 16 (AVX-512); 64 channels (147 KB) stay on the blocked
 * jit conv. Every case matches the reference evals, 1 and 2 threads. */
typedef struct { int64_t c, hw, stride; gboolean brg; } ConvNhwcCase;

static ClinferGraph *
conv_nhwc_graph (const ConvNhwcCase *cc, guint32 seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  ClinferGraph *g = op_test_graph (13);
  int64_t c = cc->c, xd[] = { 1, c, cc->hw, cc->hw };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *a, *b;
  GError *err = NULL;

  a = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  a = add_conv (g, rand, "a", a, c, c, 1, 1, cc->stride, NULL, NULL);
  b = add_conv (g, rand, "b", a, c, c, 3, 1, 1, a, "Relu");
  b = add_conv (g, rand, "c", b, c, 8, 1, 1, 1, NULL, NULL);
  clinfer_graph_add_output (g, (ClinferPortRef) { b, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

static void
test_conv_nhwc (void)
{
  static const ConvNhwcCase cases[] = {
    { 256, 7, 1, TRUE }, { 128, 14, 2, TRUE }, { 64, 10, 1, FALSE },
  };
  gboolean avx512 = clinfer_cpu_isa_detect () >= CLINFER_CPU_ISA_AVX512;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (60 + i);
    int64_t xd[] = { 1, cases[i].c, cases[i].hw, cases[i].hw };
    g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
    g_autoptr (ClinferTensor) ref = NULL;
    ClinferTensor *inputs[1] = { x };
    ClinferGraph *g = conv_nhwc_graph (&cases[i], 70 + i);
    GError *err = NULL;
    guint n_onednn, n_steps;

    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    clinfer_graph_free (g);
    for (int threads = 1; threads <= 2; threads++) {
      g_autoptr (ClinferTensor) got = run_cpu (conv_nhwc_graph (&cases[i],
              70 + i), inputs, 1, threads, &n_onednn, &n_steps);

      g_assert_cmpuint (n_steps, ==, 3);
      g_assert_cmpint (strstr (last_kernels->str, "brgconv") != NULL, ==,
          cases[i].brg && avx512);
      op_test_assert_close (got, ref, "conv-nhwc");
    }
  }
}

/* ---------------------------------------------------------------- */
/* Channel pads in place (onednn-plan.c pad_in_place)                */

typedef struct {
  const char *name;
  int64_t n, c, h, w;         /* x, the first pad's input */
  int64_t pad_to[2];          /* channels after each pad (0: one pad) */
  /* How x is made when the case has no other source for it (NULL: a
   * conv). The others leave non-zero padding lanes in x's last block,
   * which the pad must zero where they become channels: "sigmoid" (its
   * own step: f (0) = 0.5 on the channel-padded view), "residual-sigmoid"
   * (a conv + such a residual, Relu), "pool-sigmoid" (MaxPool of one),
   * "post-op-sigmoid" (a conv's post-op), "clip-act" (FusedConv with
   * Clip (0.25, 6)); "post-op-tanh" keeps them zero. */
  const char *producer;
  gboolean read_after;        /* a conv reading x runs after the pad */
  gboolean blazeface;         /* dw (x) -> 1x1 + pad (x), Relu */
  gboolean x_from_dwpw;       /* x is a depthwise + 1x1 pair's output */
  gboolean x_output;          /* x is a graph output too (plain) */
  gboolean from_input;        /* x is the graph input (plain) */
  guint in_place;             /* pads expected to run in place */
} PadCase;

static const PadCase pad_cases[] = {
  { "24-to-28", 1, 24, 13, 11, { 28, 0 }, NULL, FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "16-to-48", 1, 16, 9, 10, { 48, 0 }, NULL, FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "20-to-36-sigmoid", 1, 20, 11, 9, { 36, 0 }, "sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "13-to-28-sigmoid", 1, 13, 7, 12, { 28, 0 }, "sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "residual-sigmoid", 1, 20, 9, 11, { 28, 0 }, "residual-sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "pool-sigmoid", 1, 20, 9, 11, { 28, 0 }, "pool-sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "post-op-sigmoid", 1, 20, 9, 11, { 28, 0 }, "post-op-sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "clip-act", 1, 20, 9, 11, { 28, 0 }, "clip-act", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "post-op-tanh", 1, 20, 9, 11, { 28, 0 }, "post-op-tanh", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "read-after", 1, 20, 10, 9, { 28, 0 }, "sigmoid", TRUE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "blazeface-block", 1, 24, 16, 15, { 28, 0 }, NULL, FALSE, TRUE, FALSE, FALSE, FALSE, 1 },
  { "after-dw-pw", 1, 24, 16, 15, { 32, 0 }, NULL, TRUE, FALSE, TRUE, FALSE, FALSE, 1 },
  { "two-pads", 1, 20, 8, 9, { 26, 40 }, "sigmoid", TRUE, FALSE, FALSE, FALSE, FALSE, 2 },
  { "x-graph-output", 1, 24, 8, 9, { 28, 0 }, NULL, FALSE, FALSE, FALSE, TRUE, FALSE, 0 },
  { "x-graph-input", 1, 24, 8, 9, { 28, 0 }, NULL, FALSE, FALSE, FALSE, FALSE, TRUE, 0 },
  { "batch-2", 2, 20, 8, 9, { 28, 0 }, "sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 0 },
  /* 64 KB and more: with two threads each zeroes (or copies) its own
   * pixels of every block, and the max pool splits rows. */
  { "large-24-to-28", 1, 24, 63, 41, { 28, 0 }, NULL, FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "large-pool-sigmoid", 1, 20, 66, 34, { 28, 0 }, "pool-sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 1 },
  { "large-x-graph-input", 1, 24, 63, 41, { 28, 0 }, NULL, FALSE, FALSE, FALSE, FALSE, TRUE, 0 },
  { "large-batch-2", 2, 20, 40, 41, { 28, 0 }, "sigmoid", FALSE, FALSE, FALSE, FALSE, FALSE, 0 },
};

/* x for @c->producer from the 3-channel input; *t: a second output that
 * keeps a Sigmoid from becoming a conv's post-op, or NULL. */
static ClinferNode *
pad_producer (ClinferGraph *g, GRand *rand, const PadCase *c, ClinferNode *in,
    ClinferNode **t)
{
  const char *kind = c->producer ? c->producer : "conv";
  int64_t k2[] = { 2, 2 }, s1[] = { 1, 1 }, p01[] = { 0, 0, 1, 1 };
  ClinferNode *a, *x;

  *t = NULL;
  if (strcmp (kind, "clip-act") == 0) {
    x = add_conv (g, rand, "a", in, 3, c->c, 3, 1, 1, NULL, "Clip");
    clinfer_node_set_attr (x, "activation_min", clinfer_attr_new_float (0.25f));
    clinfer_node_set_attr (x, "activation_max", clinfer_attr_new_float (6.f));
    return x;
  }
  a = add_conv (g, rand, "a", in, 3, c->c, 3, 1, 1, NULL, NULL);
  if (strcmp (kind, "conv") == 0)
    return a;
  if (strcmp (kind, "post-op-sigmoid") == 0)
    return op_test_node (g, "Sigmoid", "", "x", 1, &a, 1);
  if (strcmp (kind, "post-op-tanh") == 0)
    return op_test_node (g, "Tanh", "", "x", 1, &a, 1);
  /* a has a second reader, so the Sigmoid is no post-op of its conv. */
  *t = op_test_node (g, "Tanh", "", "t", 1, &a, 1);
  x = op_test_node (g, "Sigmoid", "", "x", 1, &a, 1);
  if (strcmp (kind, "residual-sigmoid") == 0)
    x = add_conv (g, rand, "r", in, 3, c->c, 3, 1, 1, x, "Relu");
  else if (strcmp (kind, "pool-sigmoid") == 0) {
    /* 2x2, stride 1, padded at the end: the same H x W. */
    x = op_test_node (g, "MaxPool", "", "pool", 1, &x, 1);
    set_ints (x, "kernel_shape", 2, k2);
    set_ints (x, "strides", 2, s1);
    set_ints (x, "pads", 4, p01);
  }
  return x;
}

/* The case's graph, prepared; the same weights on every call. */
static ClinferGraph *
pad_graph (const PadCase *c)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (41);
  ClinferGraph *g = op_test_graph (13);
  /* Three input channels: a first layer, reading the plain input. */
  int64_t c0 = c->from_input ? c->c : 3, cur = c->c, zero[4] = { 0 };
  int64_t xd[] = { c->n, c0, c->h, c->w }, one[4] = { 1, 1, 1, 1 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in, *x, *p, *y, *t = NULL;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "in", CLINFER_TYPE_F32, &xs);
  if (c->from_input)
    x = in;
  else if (c->x_from_dwpw) {
    x = add_conv (g, rand, "a", in, c0, 16, 3, 1, 1, NULL, NULL);
    x = dwpw_conv (g, rand, "xdw", x, 16, 16, 3, 16, 1, one, TRUE, NULL, NULL);
    x = dwpw_conv (g, rand, "xpw", x, 16, c->c, 1, 1, 1, zero, TRUE, NULL,
        "Relu");
  } else
    x = pad_producer (g, rand, c, in, &t);
  p = x;
  for (int i = 0; i < 2 && c->pad_to[i] > 0; i++) {
    int64_t zd[] = { c->n, c->pad_to[i] - cur, c->h, c->w };
    g_autofree char *zn = g_strdup_printf ("zeros%d", i);
    g_autofree char *pn = g_strdup_printf ("pad%d", i);
    ClinferNode *cat[2] = { p, op_test_constant (g, zn, CLINFER_TYPE_F32, 4, zd,
          NULL) };
    p = op_test_node (g, "Concat", "", pn, 2, cat, 1);
    clinfer_node_set_attr (p, "axis", clinfer_attr_new_int (1));
    cur = c->pad_to[i];
  }
  if (c->blazeface) {
    y = dwpw_conv (g, rand, "dw", x, c->c, c->c, 3, c->c, 1, one, FALSE, NULL,
        NULL);
    y = dwpw_conv (g, rand, "pw", y, c->c, cur, 1, 1, 1, zero, TRUE, p, "Relu");
  } else
    y = add_conv (g, rand, "b", p, cur, 7, 3, 1, 1, NULL, NULL);
  /* Runs after the pad (it needs y) and reads x; "mid" is written after
   * y's last reader and before x's: not over x. */
  if (c->read_after) {
    int64_t m = c->blazeface ? cur : 7;
    y = add_conv (g, rand, "mid", y, m, m, 1, 1, 1, NULL, NULL);
    y = add_conv (g, rand, "late", x, c->c, m, 1, 1, 1, y, "Relu");
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { y, 0 }, "y");
  if (t)
    clinfer_graph_add_output (g, (ClinferPortRef) { t, 0 }, "t");
  if (c->x_output)
    clinfer_graph_add_output (g, (ClinferPortRef) { x, 0 }, "x");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

static guint
count_lines (const char *text, const char *needle)
{
  guint n = 0;
  for (const char *q = strstr (text, needle); q; q = strstr (q + 1, needle))
    n++;
  return n;
}

/* Each case against the reference evals at 1 and 2 threads, with the
 * depthwise + 1x1 fusion on and off: the pads that may run in place do,
 * the others copy, and every result is the reference's. */
static void
test_pad_in_place (gconstpointer data)
{
  const PadCase *c = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  int64_t xd[] = { c->n, c->from_input ? c->c : 3, c->h, c->w };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL;
  ClinferTensor *inputs[1] = { x };
  guint n_pads = c->pad_to[1] > 0 ? 2 : 1;
  GError *err = NULL;
  guint n_onednn, n_steps;

  {
    ClinferGraph *g = pad_graph (c);
    ref = op_test_run_graph (g, inputs, &err);
    g_assert_no_error (err);
    clinfer_graph_free (g);
  }
  for (int mode = 0; mode < 4; mode++) {
    g_autoptr (ClinferTensor) got = NULL;

    g_setenv ("CLINFER_CPU_DWPW", mode < 2 ? "1" : "0", TRUE);
    got = run_cpu (pad_graph (c), inputs, 1, 1 + mode % 2, &n_onednn,
        &n_steps);
    g_unsetenv ("CLINFER_CPU_DWPW");
    g_assert_cmpuint (count_lines (last_kernels->str,
            "onednn-layout:pad_channels"), ==, n_pads);
    g_assert_cmpuint (count_lines (last_kernels->str, "pad_channels_in_place"),
        ==, c->in_place);
    if (mode < 2 && (c->blazeface || c->x_from_dwpw))
      g_assert_nonnull (strstr (last_kernels->str, "depthwise run by"));
    op_test_assert_close (got, ref, c->name);
  }
}

/* The cases again with nChw8c where the machine has AVX-512 (16c by
 * default): the ISA is read once per process, so in a subprocess. */
static void
test_pad_in_place_avx2 (void)
{
  if (g_test_subprocess ()) {
    for (gsize i = 0; i < G_N_ELEMENTS (pad_cases); i++)
      test_pad_in_place (&pad_cases[i]);
    return;
  }
  if (!clinfer_cpu_isa_supported (CLINFER_CPU_ISA_AVX2)) {
    g_test_skip ("no AVX2");
    return;
  }
  g_setenv ("CLINFER_CPU_ISA", "avx2", TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_unsetenv ("CLINFER_CPU_ISA");
  g_test_trap_assert_passed ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Every arena starts as NaNs: a step reading memory no step wrote (a
   * pad's new channels, a block's padding lanes) fails its case. */
  g_setenv ("CLINFER_CPU_ARENA_NAN", "1", TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/conv/%s", conv_cases[i].name);
    g_test_add_data_func (path, &conv_cases[i], test_conv);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (deconv_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/deconv/%s", deconv_cases[i].name);
    g_test_add_data_func (path, &deconv_cases[i], test_deconv);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (dwpw_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/dw-pw/%s", dwpw_cases[i].name);
    g_test_add_data_func (path, &dwpw_cases[i], test_dw_pw);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (pad_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/pad-in-place/%s", pad_cases[i].name);
    g_test_add_data_func (path, &pad_cases[i], test_pad_in_place);
  }
  g_test_add_func ("/onednn/pad-in-place/avx2", test_pad_in_place_avx2);
  for (gsize i = 0; i < G_N_ELEMENTS (linear_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/resize-linear/%s",
        linear_cases[i].name);
    g_test_add_data_func (path, &linear_cases[i], test_resize_linear);
  }
  g_test_add_func ("/onednn/chain/blocked", test_chain_blocked);
  g_test_add_func ("/onednn/chain/eltwise", test_chain_eltwise);
  g_test_add_func ("/onednn/pool-blocked", test_pool_blocked);
  g_test_add_func ("/onednn/dw-pw-default", test_dw_pw_default);
  g_test_add_func ("/onednn/block-choice", test_block_choice);
  g_test_add_func ("/onednn/conv-nhwc", test_conv_nhwc);
  g_test_add_func ("/onednn/matmul", test_matmul);
  g_test_add_func ("/onednn/matmul-gemm", test_matmul_gemm);
  g_test_add_func ("/onednn/matmul-relu-unfused", test_matmul_relu_unfused);
  g_test_add_func ("/onednn/matmul-transposes", test_matmul_transposes);
  g_test_add_func ("/onednn/matmul-activations", test_matmul_activations);
  g_test_add_func ("/onednn/softmax", test_softmax);
  g_test_add_func ("/onednn/softmax-split", test_softmax_split);
  g_test_add_func ("/onednn/post-ops", test_post_ops);
  g_test_add_func ("/onednn/post-ops-same-alg", test_post_ops_same_alg);
  g_test_add_func ("/onednn/post-op-hardswish", test_post_op_hardswish);
  g_test_add_func ("/onednn/swish-blocked", test_swish_blocked);
  g_test_add_func ("/onednn/chain/boundary", test_chain_boundary);
  g_test_add_func ("/onednn/threads-and-switch", test_threads_and_switch);
  g_test_add_func ("/onednn/two-layouts", test_two_layouts);
  g_test_add_func ("/onednn/upsample-add", test_upsample_add);
  g_test_add_func ("/onednn/one-channel-plain", test_one_channel_plain);
  g_test_add_func ("/onednn/deconv-to-one", test_deconv_to_one);
  g_test_add_func ("/onednn/conv-to-one", test_conv_to_one);
  g_test_add_func ("/onednn/concat-in-place", test_concat_in_place);
  g_test_add_func ("/onednn/transpose-nhwc", test_transpose_nhwc);
  g_test_add_func ("/onednn/per-channel-chain", test_per_channel_chain);
  return g_test_run ();
}
