/* clinfer — tests of the CPU device's oneDNN fast path (built with
 * -Donednn): every oneDNN kernel compiled through the CPU device against
 * the portable reference evals on odd shapes with a fixed seed, chains
 * that keep blocked layouts between steps, the boundaries where a reorder
 * back to plain is needed, thread counts and the CLINFER_CPU_ONEDNN=0
 * switch. */
#include "op-test-util.h"
#include <string.h>

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
  g_autoptr (ClinferModel) m = op_test_model (g, 13, &err);
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
  for (guint i = 0; i < n; i++)
    if (g_str_has_prefix (e[i].kernel, "onednn"))
      (*n_onednn)++;
  y = clinfer_tensor_copy (clinfer_request_get_output (r, 0), &err);
  g_assert_no_error (err);
  return y;
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
  int64_t k[] = { c->kh, c->kw }, s[] = { c->sh, c->sw }, d[] = { c->dh, c->dw };

  set_ints (n, "kernel_shape", 2, k);
  set_ints (n, "strides", 2, s);
  set_ints (n, "dilations", 2, d);
  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (c->group));
  if (c->auto_pad)
    clinfer_node_set_attr (n, "auto_pad", clinfer_attr_new_string (c->auto_pad));
  else
    set_ints (n, "pads", 4, c->pads);
  if (c->act == NULL)
    return;
  clinfer_node_set_attr (n, "activation", clinfer_attr_new_string (c->act));
  if (strcmp (c->act, "Clip") == 0) {
    clinfer_node_set_attr (n, "activation_min", clinfer_attr_new_float (-0.25f));
    clinfer_node_set_attr (n, "activation_max", clinfer_attr_new_float (0.5f));
  } else if (strcmp (c->act, "LeakyRelu") == 0) {
    clinfer_node_set_attr (n, "activation_alpha", clinfer_attr_new_float (0.2f));
  }
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
  g_assert_cmpuint (n_onednn, ==, 1);
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

/* x (1x20x19x23) -> dw 3x3 -> FusedConv 1x1 (+x, Relu) -> MaxPool 2x2
 * -> Concat (zeros: 20 -> 28 channels) -> Conv 3x3 s2 -> output: every
 * step on oneDNN, blocked in between, the input reordered in, the output
 * reordered out. Concat pads 20 -> 28 (a partial block), the second
 * conv's residual comes from the graph input (plain). */
static void
test_chain_blocked (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 1, 20, 19, 23 }, zd[] = { 1, 8, 9, 11 }, k2[] = { 2, 2 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *dw, *pw, *pool, *pad, *last, *cat_in[2];
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

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
  ref = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  got = run_cpu (g, inputs, 1, 1, &n_onednn, &n_steps);
  g_assert_cmpuint (n_onednn, ==, n_steps);
  g_assert_cmpuint (n_onednn, ==, 5);
  op_test_assert_close (got, ref, "chain");
}

/* A conv output read by a C kernel (Transpose) and by a oneDNN conv:
 * it must stay plain; and the first output is the transposed one. */
static void
test_chain_boundary (void)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (8);
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[] = { 2, 9, 13, 6 }, perm[] = { 0, 2, 3, 1 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, got = NULL;
  ClinferNode *in, *a, *b, *t, *add_in[2];
  ClinferTensor *inputs[1] = { x };
  GError *err = NULL;
  guint n_onednn, n_steps;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  a = add_conv (g, rand, "a", in, 9, 17, 3, 1, 1, NULL, NULL);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/onednn/conv/%s", conv_cases[i].name);
    g_test_add_data_func (path, &conv_cases[i], test_conv);
  }
  g_test_add_func ("/onednn/chain/blocked", test_chain_blocked);
  g_test_add_func ("/onednn/chain/boundary", test_chain_boundary);
  g_test_add_func ("/onednn/threads-and-switch", test_threads_and_switch);
  return g_test_run ();
}
