/* clinfer — the CPU device's RNN, GRU and LSTM kernel (engine/plan/
 * recurrent-cpu.c) against the reference evals (ops/recurrent.c), every
 * output, on each ISA tier the machine runs (the kernel called
 * directly) and through a compiled model at 1 and 2 threads (the
 * profile names the kernel): forward, reverse and bidirectional; layout
 * 0 and 1; batches of 1 to 3; hidden sizes that leave partial column
 * panels and ones of several four-panel groups; LSTM peepholes, initial
 * states and input_forget; GRU with and without linear_before_reset;
 * clip (the gates' inputs clipped, not the cell state's); every
 * activation function of the spec, with alpha and beta; sequence_lens,
 * constant or a graph input, equal to the steps, shorter or 0 (with the
 * reverse direction). Weights that are not constant stay on the
 * reference eval, and a sequence_lens past the steps is an error naming
 * the node. (test-eltwise-kernels checks the vector sigmoid and tanh the
 * gates use.) */
#include "op-test-util.h"
#include "plan/cpu-simd.h"
#include <string.h>

enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P, N_IN };

typedef struct {
  const char *name, *op;
  const char *direction;
  int layout;
  int seq, batch, input, hidden;
  gboolean bias, peepholes, initial, lbr;
  int lens;                  /* 0: none; else entry 0 the steps, the others
                              * this (-1: the steps too, -2: 0) */
  float clip;
  const char *acts;          /* activations, comma-separated, or NULL */
  float alpha[2], beta;      /* activation_alpha (0s end it) and _beta */
  gboolean input_forget;
  gboolean lens_input;       /* sequence_lens a graph input */
  gboolean w_input;          /* W a graph input */
  gboolean fast;             /* the fast kernel takes it */
} RecCase;

static const RecCase cases[] = {
  { "lstm-forward", "LSTM", "forward", 0, 7, 1, 13, 37, TRUE, FALSE, FALSE,
    FALSE, 0, 0.f, .fast = TRUE },
  { "lstm-bidir-peepholes-initial", "LSTM", "bidirectional", 0, 5, 3, 20,
    40, TRUE, TRUE, TRUE, FALSE, 0, 0.f, .fast = TRUE },
  { "lstm-reverse-layout1", "LSTM", "reverse", 1, 6, 2, 9, 24, TRUE, FALSE,
    TRUE, FALSE, 0, 0.f, .fast = TRUE },
  { "lstm-bidir-wide", "LSTM", "bidirectional", 0, 9, 1, 64, 160, TRUE,
    FALSE, FALSE, FALSE, 0, 0.f, .fast = TRUE },
  { "lstm-no-bias-lens", "LSTM", "forward", 0, 4, 2, 8, 16, FALSE, FALSE,
    FALSE, FALSE, -1, 0.f, .fast = TRUE },
  { "gru-bidir", "GRU", "bidirectional", 0, 6, 2, 11, 33, TRUE, FALSE, TRUE,
    FALSE, 0, 0.f, .fast = TRUE },
  { "gru-lbr-reverse", "GRU", "reverse", 0, 5, 3, 7, 70, TRUE, FALSE, TRUE,
    TRUE, 0, 0.f, .fast = TRUE },
  { "gru-lbr-layout1-wide", "GRU", "bidirectional", 1, 4, 2, 30, 136, TRUE,
    FALSE, FALSE, TRUE, 0, 0.f, .fast = TRUE },
  { "rnn-bidir", "RNN", "bidirectional", 0, 8, 2, 5, 21, TRUE, FALSE, TRUE,
    FALSE, 0, 0.f, .fast = TRUE },
  { "lstm-clip-peepholes", "LSTM", "bidirectional", 0, 5, 2, 6, 20, TRUE,
    TRUE, TRUE, FALSE, 0, 0.5f, .fast = TRUE },
  { "gru-lbr-clip", "GRU", "forward", 0, 5, 2, 6, 20, TRUE, FALSE, TRUE,
    TRUE, 0, 0.3f, .fast = TRUE },
  { "gru-clip", "GRU", "reverse", 0, 5, 1, 6, 20, TRUE, FALSE, FALSE,
    FALSE, 0, 0.3f, .fast = TRUE },
  { "rnn-clip", "RNN", "forward", 1, 5, 2, 6, 20, TRUE, FALSE, TRUE,
    FALSE, 0, 0.4f, .fast = TRUE },
  /* the other activations, with alpha and beta */
  { "lstm-acts", "LSTM", "forward", 0, 4, 1, 6, 8, TRUE, FALSE, FALSE,
    FALSE, 0, 0.f, "HardSigmoid,Elu,Softplus", { 0.25f, 0.9f }, 0.45f,
    .fast = TRUE },
  { "lstm-acts-bidir", "LSTM", "bidirectional", 1, 5, 2, 6, 20, TRUE, TRUE,
    TRUE, FALSE, 0, 0.f, "Tanh,Sigmoid,Tanh,Sigmoid,Relu,Affine",
    { 0.7f }, 0.1f, .fast = TRUE },
  { "gru-acts-bidir", "GRU", "bidirectional", 0, 5, 2, 6, 20, TRUE, FALSE,
    TRUE, FALSE, 0, 0.f, "Sigmoid,Relu,LeakyRelu,ScaledTanh",
    { 0.1f, 0.8f }, 1.2f, .fast = TRUE },
  { "rnn-acts-bidir", "RNN", "bidirectional", 0, 5, 2, 6, 20, TRUE, FALSE,
    TRUE, FALSE, 0, 0.f, "Softsign,ThresholdedRelu", { 0.2f }, 0.f,
    .fast = TRUE },
  /* input_forget, with and without peepholes */
  { "lstm-input-forget", "LSTM", "bidirectional", 0, 5, 2, 6, 20, TRUE,
    FALSE, TRUE, FALSE, 0, 0.f, .input_forget = TRUE, .fast = TRUE },
  { "lstm-input-forget-peepholes-clip", "LSTM", "reverse", 0, 5, 2, 6, 20,
    TRUE, TRUE, TRUE, FALSE, 0, 0.6f, .input_forget = TRUE, .fast = TRUE },
  /* sequence_lens shorter than the steps, 0, and not constant */
  { "lstm-shorter-lens", "LSTM", "forward", 0, 4, 2, 6, 8, TRUE, FALSE,
    FALSE, FALSE, 3, 0.f, .fast = TRUE },
  { "gru-bidir-lens-layout1", "GRU", "bidirectional", 1, 6, 3, 6, 20, TRUE,
    FALSE, TRUE, FALSE, 2, 0.f, .fast = TRUE },
  { "rnn-reverse-lens-zero", "RNN", "reverse", 0, 5, 2, 6, 20, TRUE, FALSE,
    TRUE, FALSE, -2, 0.f, .fast = TRUE },
  { "lstm-bidir-lens-input", "LSTM", "bidirectional", 0, 6, 3, 6, 20, TRUE,
    TRUE, TRUE, FALSE, 4, 0.f, .lens_input = TRUE, .fast = TRUE },
  /* left to the reference eval */
  { "lstm-weights-input", "LSTM", "forward", 0, 4, 1, 6, 8, TRUE, FALSE,
    FALSE, FALSE, 0, 0.f, .w_input = TRUE, .fast = FALSE },
};

/* The case's node, its inputs' tensors (in node-input order, NULL when
 * absent) and, in @graph_inputs, those that are graph inputs (X, then W,
 * sequence_lens, initial_h and initial_c where the case has them). */
typedef struct {
  ClinferGraph *g;
  ClinferNode *node;
  ClinferTensor *in[N_IN];
  ClinferTensor *graph_inputs[5];
  guint n_graph_inputs;
} RecGraph;

static void
rec_graph_build (const RecCase *c, RecGraph *rg)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (7 + c->hidden);
  int gates = strcmp (c->op, "LSTM") == 0 ? 4 : strcmp (c->op, "GRU") == 0
      ? 3 : 1;
  int dirs = strcmp (c->direction, "bidirectional") == 0 ? 2 : 1;
  gboolean lstm = gates == 4;
  int64_t xd[] = { c->seq, c->batch, c->input };
  int64_t wd[] = { dirs, gates * c->hidden, c->input };
  int64_t rd[] = { dirs, gates * c->hidden, c->hidden };
  int64_t bd[] = { dirs, 2 * gates * c->hidden };
  int64_t ld[] = { c->batch };
  int64_t hd[] = { dirs, c->batch, c->hidden };
  int64_t pd[] = { dirs, 3 * c->hidden };
  ClinferNode *in[N_IN] = { NULL };
  guint n_in = IN_R + 1;

  memset (rg, 0, sizeof (*rg));
  if (c->layout) {
    xd[0] = c->batch;
    xd[1] = c->seq;
    hd[0] = c->batch;
    hd[1] = dirs;
  }
  rg->g = op_test_graph (14);
  rg->in[IN_X] = op_test_random (rand, 3, xd);
  in[IN_X] = op_test_input_like (rg->g, "x", rg->in[IN_X]);
  rg->graph_inputs[rg->n_graph_inputs++] = rg->in[IN_X];
  rg->in[IN_W] = op_test_random (rand, 3, wd);
  rg->in[IN_R] = op_test_random (rand, 3, rd);
  if (c->w_input) {
    in[IN_W] = op_test_input_like (rg->g, "w", rg->in[IN_W]);
    rg->graph_inputs[rg->n_graph_inputs++] = rg->in[IN_W];
  } else {
    in[IN_W] = clinfer_graph_add_constant (rg->g, "w", rg->in[IN_W]);
  }
  in[IN_R] = clinfer_graph_add_constant (rg->g, "r", rg->in[IN_R]);
  if (c->bias) {
    rg->in[IN_B] = op_test_random (rand, 2, bd);
    in[IN_B] = clinfer_graph_add_constant (rg->g, "b", rg->in[IN_B]);
    n_in = IN_B + 1;
  }
  if (c->lens) {
    int32_t lens[3];
    for (int b = 0; b < c->batch; b++)
      lens[b] = b == 0 || c->lens == -1 ? c->seq : MAX (c->lens, 0);
    rg->in[IN_LENS] = op_test_tensor (CLINFER_TYPE_I32, 1, ld, lens);
    if (c->lens_input) {
      in[IN_LENS] = op_test_input_like (rg->g, "lens", rg->in[IN_LENS]);
      rg->graph_inputs[rg->n_graph_inputs++] = rg->in[IN_LENS];
    } else {
      in[IN_LENS] = clinfer_graph_add_constant (rg->g, "lens",
          rg->in[IN_LENS]);
    }
    n_in = IN_LENS + 1;
  }
  if (c->initial) {
    rg->in[IN_H0] = op_test_random (rand, 3, hd);
    in[IN_H0] = op_test_input_like (rg->g, "h0", rg->in[IN_H0]);
    rg->graph_inputs[rg->n_graph_inputs++] = rg->in[IN_H0];
    n_in = IN_H0 + 1;
    if (lstm) {
      rg->in[IN_C0] = op_test_random (rand, 3, hd);
      in[IN_C0] = op_test_input_like (rg->g, "c0", rg->in[IN_C0]);
      rg->graph_inputs[rg->n_graph_inputs++] = rg->in[IN_C0];
      n_in = IN_C0 + 1;
    }
  }
  if (c->peepholes) {
    rg->in[IN_P] = op_test_random (rand, 2, pd);
    in[IN_P] = clinfer_graph_add_constant (rg->g, "p", rg->in[IN_P]);
    n_in = IN_P + 1;
  }
  rg->node = op_test_node (rg->g, c->op, "", "op", n_in, in, lstm ? 3 : 2);
  clinfer_node_set_attr (rg->node, "hidden_size",
      clinfer_attr_new_int (c->hidden));
  clinfer_node_set_attr (rg->node, "direction",
      clinfer_attr_new_string (c->direction));
  if (c->layout)
    clinfer_node_set_attr (rg->node, "layout", clinfer_attr_new_int (1));
  if (c->lbr)
    clinfer_node_set_attr (rg->node, "linear_before_reset",
        clinfer_attr_new_int (1));
  if (c->clip > 0.f)
    clinfer_node_set_attr (rg->node, "clip", clinfer_attr_new_float (c->clip));
  if (c->input_forget)
    clinfer_node_set_attr (rg->node, "input_forget", clinfer_attr_new_int (1));
  if (c->acts) {
    g_auto (GStrv) acts = g_strsplit (c->acts, ",", -1);
    ClinferAttr *a = g_new0 (ClinferAttr, 1);
    a->type = CLINFER_ATTR_STRINGS;
    a->strings.n = g_strv_length (acts);
    a->strings.v = g_steal_pointer (&acts);
    clinfer_node_set_attr (rg->node, "activations", a);
    clinfer_node_set_attr (rg->node, "activation_alpha",
        clinfer_attr_new_floats (c->alpha, c->alpha[1] != 0.f ? 2 : 1));
    clinfer_node_set_attr (rg->node, "activation_beta",
        clinfer_attr_new_floats (&c->beta, 1));
  }
  for (guint i = 0; i < rg->node->n_outputs; i++) {
    g_autofree char *name = g_strdup_printf ("y%u", i);
    clinfer_graph_add_output (rg->g, (ClinferPortRef) { rg->node, i }, name);
  }
}

static void
rec_graph_clear (RecGraph *rg)
{
  for (int i = 0; i < N_IN; i++)
    g_clear_pointer (&rg->in[i], clinfer_tensor_unref);
  if (rg->g)
    clinfer_graph_free (rg->g);
}

/* The case's graph in @rg, prepared, and its node's outputs on the
 * reference eval. */
static ClinferTensor **
rec_graph_reference (const RecCase *c, RecGraph *rg)
{
  ClinferTensor **want;
  GError *err = NULL;

  rec_graph_build (c, rg);
  g_assert_true (op_test_prepare (rg->g, &err));
  g_assert_no_error (err);
  want = op_test_eval (rg->node, rg->in, &err);
  g_assert_no_error (err);
  return want;
}

/* Every output of @got within op_test_assert_close ()'s bound of @want. */
static void
assert_outputs_close (ClinferTensor *const *got, ClinferTensor *const *want,
    guint n, const char *what)
{
  for (guint i = 0; i < n; i++) {
    g_autofree char *w = g_strdup_printf ("%s, output %u", what, i);
    op_test_assert_close (got[i], want[i], w);
  }
}

/* The kernel called directly on each ISA the machine runs. */
static void
test_kernel_isas (gconstpointer data)
{
  const RecCase *c = data;
  RecGraph rg;
  ClinferTensor **want;
  GError *err = NULL;

  want = rec_graph_reference (c, &rg);
  for (int isa = CLINFER_CPU_ISA_GENERIC; isa <= CLINFER_CPU_ISA_AVX512;
       isa++) {
    ClinferCpuKernel k = { 0 };
    ClinferTensor *got[3] = { NULL };
    g_autofree char *what = NULL;
    g_autofree char *name = NULL, *lower = NULL;

    if (!clinfer_cpu_isa_supported ((ClinferCpuIsa) isa))
      continue;
    what = g_strdup_printf ("%s on %s", c->name,
        clinfer_cpu_isa_name ((ClinferCpuIsa) isa));
    g_assert_true (clinfer_cpu_kernel_lookup (rg.node) != NULL);
    if (!clinfer_cpu_kernel_lookup (rg.node) (rg.node, (ClinferCpuIsa) isa,
            &k, &err)) {
      g_assert_no_error (err);
      g_assert_false (c->fast);
      continue;
    }
    g_assert_true (c->fast);
    name = g_strdup_printf ("%s_gemv_%s", c->op,
        clinfer_cpu_simd_get ((ClinferCpuIsa) isa)->isa_name);
    lower = g_ascii_strdown (name, -1);
    g_assert_cmpstr (k.name, ==, lower);
    for (guint i = 0; i < rg.node->n_outputs; i++)
      got[i] = clinfer_tensor_new (CLINFER_TYPE_F32,
          &rg.node->outputs[i].shape, NULL);
    /* twice: the second run starts from the first one's scratch */
    for (int run = 0; run < 2; run++) {
      g_assert_true (k.run (&k, rg.node, rg.in, got, &err));
      g_assert_no_error (err);
      assert_outputs_close (got, want, rg.node->n_outputs, what);
    }
    for (guint i = 0; i < rg.node->n_outputs; i++)
      clinfer_tensor_unref (got[i]);
    k.free_state (k.state);
    g_free (k.name);
  }
  op_test_free_outputs (rg.node, want);
  rec_graph_clear (&rg);
}

/* Compiled for the CPU device at @threads: the outputs, and the kernel
 * the profile names. */
static void
check_compiled (const RecCase *c, int threads)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) cc = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  g_autofree char *what = g_strdup_printf ("%s at %d threads", c->name,
      threads);
  g_autofree char *kernel = NULL;
  const ClinferProfileEntry *e;
  ClinferTensor **want, *got[3];
  RecGraph rg;
  guint n = 0, n_out;
  GError *err = NULL;

  want = rec_graph_reference (c, &rg);
  n_out = rg.node->n_outputs;
  m = op_test_model (rg.g, 14, &err);
  rg.g = NULL;
  g_assert_no_error (err);
  clinfer_compile_config_set_profiling (cfg, TRUE);
  clinfer_compile_config_set_threads (cfg, threads);
  cc = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (cc, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < rg.n_graph_inputs; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i,
            rg.graph_inputs[i], &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  for (guint i = 0; i < n_out; i++)
    got[i] = clinfer_request_get_output (r, i);
  assert_outputs_close (got, want, n_out, what);
  e = clinfer_request_get_profile (r, &n);
  g_assert_cmpuint (n, >=, 1);
  if (c->fast) {
    g_autofree char *k = g_strdup_printf ("%s_gemv_%s", c->op,
        clinfer_cpu_simd_get (clinfer_cpu_isa_detect ())->isa_name);
    kernel = g_ascii_strdown (k, -1);
  } else {
    kernel = g_strdup ("reference");
  }
  g_assert_cmpstr (e[n - 1].kernel, ==, kernel);
  op_test_free_outputs (rg.node, want);
  rec_graph_clear (&rg);
}

static void
test_compiled (gconstpointer data)
{
  check_compiled (data, 1);
  check_compiled (data, 2);
}

/* A sequence_lens input past the steps: the kernel's error names the
 * node and the entry, and the request can run again with good lengths. */
static void
test_lens_error (void)
{
  const RecCase *c = NULL;
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) cc = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) bad = NULL;
  int64_t ld[1];
  int32_t lens[3];
  RecGraph rg;
  GError *err = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    if (cases[i].lens_input)
      c = &cases[i];
  g_assert_nonnull (c);
  rec_graph_build (c, &rg);
  m = op_test_model (rg.g, 14, &err);
  rg.g = NULL;
  g_assert_no_error (err);
  clinfer_compile_config_set_profiling (cfg, TRUE);
  clinfer_compile_config_set_threads (cfg, 1);
  cc = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (cc, &err);
  g_assert_no_error (err);
  ld[0] = c->batch;
  for (int b = 0; b < c->batch; b++)
    lens[b] = b == 1 ? c->seq + 1 : c->seq;
  bad = op_test_tensor (CLINFER_TYPE_I32, 1, ld, lens);
  for (guint i = 0; i < rg.n_graph_inputs; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i,
            rg.graph_inputs[i] == rg.in[IN_LENS] ? bad : rg.graph_inputs[i],
            &err));
  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "op"));
  g_assert_nonnull (strstr (err->message, "sequence_lens[1]"));
  g_clear_error (&err);
  for (guint i = 0; i < rg.n_graph_inputs; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i,
            rg.graph_inputs[i], &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  rec_graph_clear (&rg);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *p1 = g_strdup_printf ("/recurrent-kernels/isas/%s",
        cases[i].name);
    g_autofree char *p2 = g_strdup_printf ("/recurrent-kernels/compiled/%s",
        cases[i].name);
    g_test_add_data_func (p1, &cases[i], test_kernel_isas);
    g_test_add_data_func (p2, &cases[i], test_compiled);
  }
  g_test_add_func ("/recurrent-kernels/lens-past-the-steps", test_lens_error);
  return g_test_run ();
}
