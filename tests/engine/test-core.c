/* clinfer — unit tests of the engine core: tensors, shapes, broadcasting,
 * graph order and cycles, constant folding, dead nodes, memory planning
 * and request errors, on graphs built in memory. */
#include "op-test-util.h"
#include "plan/chooser.h"
#include <math.h>
#include <string.h>

/* ---- helpers ---- */

static ClinferNode *
add_op (ClinferGraph *g, const char *op, const char *name, ClinferNode *a,
    ClinferNode *b)
{
  ClinferNode *n = clinfer_graph_add_node (g, op, "", name, b ? 2 : 1, 1);
  n->inputs[0].node = a;
  if (b)
    n->inputs[1].node = b;
  g_free (n->outputs[0].name);
  n->outputs[0].name = g_strdup (name);
  return n;
}

/* Wraps a graph built in memory as a model at opset 13 (the model takes
 * ownership). */
static ClinferModel *
model_from_graph (ClinferGraph *g)
{
  GError *err = NULL;
  ClinferModel *m = op_test_model (g, 13, &err);

  g_assert_no_error (err);
  return m;
}

/* ---- tensors and shapes ---- */

static void
test_tensor_basics (void)
{
  int64_t dims[] = { 2, 3 };
  g_autoptr (ClinferTensor) t = op_test_f32 (2, dims, NULL);
  float data[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  int64_t strides[] = { 16, 4 };   /* rows padded to 4 floats */
  ClinferShape s = clinfer_shape_make (2, dims);
  g_autoptr (ClinferTensor) w = clinfer_tensor_new_wrapped (CLINFER_TYPE_F32,
      &s, strides, data, NULL, NULL, NULL);
  g_autoptr (ClinferTensor) c = NULL;

  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, 6);
  g_assert_cmpuint (clinfer_tensor_get_byte_size (t), ==, 24);
  g_assert_true (clinfer_tensor_is_contiguous (t));
  g_assert_cmpuint ((guintptr) clinfer_tensor_get_data (t) % 64, ==, 0);
  g_assert_cmpfloat (((float *) clinfer_tensor_get_data (t))[5], ==, 0.f);
  g_assert_false (clinfer_tensor_is_contiguous (w));
  g_assert_cmpfloat (clinfer_tensor_get_as_double (w, 3), ==, 4.0);
  c = clinfer_tensor_copy (w, NULL);
  g_assert_true (clinfer_tensor_is_contiguous (c));
  g_assert_cmpfloat (((float *) clinfer_tensor_get_data (c))[4], ==, 5.f);
}

static void
test_tensor_rejects_dynamic_shape (void)
{
  int64_t dims[] = { 1, -1 };
  ClinferShape s = clinfer_shape_make (2, dims);
  GError *err = NULL;

  g_assert_null (clinfer_tensor_new (CLINFER_TYPE_F32, &s, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_null (clinfer_tensor_new (CLINFER_TYPE_UNDEFINED, &s, &err));
  g_clear_error (&err);
}

static void
test_half_conversion (void)
{
  float values[] = { 0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f,
    0.333251953125f };
  for (gsize i = 0; i < G_N_ELEMENTS (values); i++)
    g_assert_cmpfloat (clinfer_half_to_float (clinfer_float_to_half (values[i])),
        ==, values[i]);
  g_assert_cmphex (clinfer_float_to_half (1.f), ==, 0x3c00);
  g_assert_cmphex (clinfer_float_to_half (INFINITY), ==, 0x7c00);
  g_assert_cmphex (clinfer_float_to_half (1e6f), ==, 0x7c00);
  g_assert_true (isnan (clinfer_half_to_float (clinfer_float_to_half (NAN))));
  g_assert_cmpfloat (clinfer_bfloat16_to_float (clinfer_float_to_bfloat16 (1.5f)),
      ==, 1.5f);
}

static void
test_shape_parse_and_print (void)
{
  ClinferShape s;
  GError *err = NULL;
  g_autofree char *txt = NULL;

  g_assert_true (clinfer_shape_parse ("1x3x?x224", &s, &err));
  g_assert_cmpint (s.rank, ==, 4);
  g_assert_cmpint (s.dims[2], ==, CLINFER_DIM_DYNAMIC);
  g_assert_false (clinfer_shape_is_static (&s));
  txt = clinfer_shape_to_string (&s);
  g_assert_cmpstr (txt, ==, "1x3x?x224");
  g_assert_true (clinfer_shape_parse ("scalar", &s, NULL));
  g_assert_cmpint (s.rank, ==, 0);
  g_assert_cmpint (clinfer_shape_n_elements (&s), ==, 1);
  g_assert_false (clinfer_shape_parse ("1xfoo", &s, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "foo"));
  g_clear_error (&err);
  g_assert_false (clinfer_shape_parse ("1x1x1x1x1x1x1x1x1", &s, &err));
  g_clear_error (&err);
}

static void
test_shape_broadcast (void)
{
  int64_t a[] = { 2, 1, 5 }, b[] = { 3, 1 }, c[] = { 4, 5 };
  ClinferShape sa = clinfer_shape_make (3, a), sb = clinfer_shape_make (2, b);
  ClinferShape sc = clinfer_shape_make (2, c), out;
  GError *err = NULL;

  g_assert_true (clinfer_shape_broadcast (&sa, &sb, &out, &err));
  g_assert_cmpint (out.rank, ==, 3);
  g_assert_cmpint (out.dims[0], ==, 2);
  g_assert_cmpint (out.dims[1], ==, 3);
  g_assert_cmpint (out.dims[2], ==, 5);
  g_assert_false (clinfer_shape_broadcast (&sb, &sc, &out, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "3x1"));
  g_clear_error (&err);
}

/* ---- graph ---- */

static void
test_graph_topological_order (void)
{
  g_autoptr (ClinferGraph) g = clinfer_graph_new ("g", "<test>");
  int64_t d[] = { 2 };
  ClinferShape s = clinfer_shape_make (1, d);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  /* Insert consumers before producers: order must still be valid. */
  ClinferNode *c = clinfer_graph_add_node (g, "Relu", "", "c", 1, 1);
  ClinferNode *b = add_op (g, "Relu", "b", x, NULL);
  g_autoptr (GPtrArray) order = NULL;
  int pos_b = -1, pos_c = -1, pos_x = -1;

  c->inputs[0].node = b;
  order = clinfer_graph_topological_order (g, NULL);
  g_assert_nonnull (order);
  g_assert_cmpuint (order->len, ==, 3);
  for (guint i = 0; i < order->len; i++) {
    if (g_ptr_array_index (order, i) == x) pos_x = (int) i;
    if (g_ptr_array_index (order, i) == b) pos_b = (int) i;
    if (g_ptr_array_index (order, i) == c) pos_c = (int) i;
  }
  g_assert_cmpint (pos_x, <, pos_b);
  g_assert_cmpint (pos_b, <, pos_c);
}

static void
test_graph_cycle_names_a_node (void)
{
  g_autoptr (ClinferGraph) g = clinfer_graph_new ("g", "model.onnx");
  ClinferNode *a = clinfer_graph_add_node (g, "Relu", "", "loop_a", 1, 1);
  ClinferNode *b = clinfer_graph_add_node (g, "Relu", "", "loop_b", 1, 1);
  GError *err = NULL;

  a->inputs[0].node = b;
  b->inputs[0].node = a;
  g_assert_null (clinfer_graph_topological_order (g, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_PARSE);
  g_assert_nonnull (strstr (err->message, "cycle"));
  g_assert_nonnull (strstr (err->message, "model.onnx"));
  g_assert_true (strstr (err->message, "loop_a") || strstr (err->message, "loop_b"));
  g_clear_error (&err);
}

/* x[2] + (c1 + c2) -> relu: the constant Add folds, the rest runs. */
static ClinferModel *
build_fold_model (void)
{
  ClinferGraph *g = clinfer_graph_new ("fold", "<test>");
  int64_t d[] = { 2 };
  ClinferShape s = clinfer_shape_make (1, d);
  float v1[] = { 1, 2 }, v2[] = { 10, 20 };
  g_autoptr (ClinferTensor) t1 = op_test_f32 (1, d, v1);
  g_autoptr (ClinferTensor) t2 = op_test_f32 (1, d, v2);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  ClinferNode *c1 = clinfer_graph_add_constant (g, "c1", t1);
  ClinferNode *c2 = clinfer_graph_add_constant (g, "c2", t2);
  ClinferNode *sum = add_op (g, "Add", "csum", c1, c2);
  ClinferNode *y = add_op (g, "Add", "y", x, sum);
  ClinferNode *dead = add_op (g, "Relu", "unused", x, NULL);
  ClinferPortRef out = { add_op (g, "Neg", "z", y, NULL), 0 };

  (void) dead;
  clinfer_graph_add_output (g, out, "z");
  return model_from_graph (g);
}

static void
run_fold_model (ClinferCompileConfig *cfg, guint expect_steps)
{
  g_autoptr (ClinferModel) m = build_fold_model ();
  GError *err = NULL;
  g_autoptr (ClinferCompiled) c = clinfer_compile (m, cfg, &err);
  g_autoptr (ClinferRequest) r = NULL;
  int64_t d[] = { 2 };
  float xv[] = { 100, 200 };
  g_autoptr (ClinferTensor) x = op_test_f32 (1, d, xv);
  const float *z;

  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_compiled_get_n_steps (c), ==, expect_steps);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  z = clinfer_tensor_get_const_data (clinfer_request_get_output (r, 0));
  g_assert_cmpfloat (z[0], ==, -111.f);
  g_assert_cmpfloat (z[1], ==, -222.f);
}

static void
test_constant_folding (void)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();

  /* Folding leaves Add(x, const) and Neg; the dead Relu is gone. */
  run_fold_model (cfg, 2);
}

static void
test_disabled_passes_same_result (void)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  GError *err = NULL;

  g_assert_true (clinfer_compile_config_disable_pass (cfg, "fold-constants", &err));
  g_assert_true (clinfer_compile_config_disable_pass (cfg, "remove-dead-nodes", &err));
  run_fold_model (cfg, 4);
  g_assert_false (clinfer_compile_config_disable_pass (cfg, "no-such-pass", &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "fold-constants"));
  g_clear_error (&err);
  g_assert_false (clinfer_compile_config_disable_pass (cfg, "infer-shapes", &err));
  g_clear_error (&err);
}

/* A chain of 6 Relus over 1 MiB tensors needs only two live buffers. */
/* A chain of six [@rows, 1024] steps compiled for the CPU with @threads;
 * checks that the output is right, returns the compiled model. */
static ClinferCompiled *
compile_chain (int threads, int64_t rows)
{
  ClinferGraph *g = clinfer_graph_new ("chain", "<test>");
  int64_t d[] = { rows, 1024 };
  ClinferShape s = clinfer_shape_make (2, d);
  ClinferNode *prev = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferRequest) r = NULL;
  g_autoptr (ClinferTensor) x = NULL;
  ClinferCompiled *c;
  GError *err = NULL;
  float *xp;
  const float *y;

  for (int i = 0; i < 6; i++) {
    g_autofree char *name = g_strdup_printf ("n%d", i);
    prev = add_op (g, i == 0 ? "Relu" : "Neg", name, prev, NULL);
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { prev, 0 }, "y");
  m = model_from_graph (g);
  clinfer_compile_config_set_threads (cfg, threads);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  x = op_test_f32 (2, d, NULL);
  xp = clinfer_tensor_get_data (x);
  for (int64_t i = 0; i < rows * 1024; i++)
    xp[i] = (float) (i % 7) - 3.f;
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  y = clinfer_tensor_get_const_data (clinfer_request_get_output (r, 0));
  for (int64_t i = 0; i < rows * 1024; i += 997)
    g_assert_cmpfloat (y[i], ==, -MAX (xp[i], 0.f));
  return c;
}

/* One thread: the six tensors share two buffers, and the result is still
 * right. */
static void
test_memory_planning_reuses_buffers (void)
{
  g_autoptr (ClinferCompiled) c = compile_chain (1, 256);
  gsize one = 256 * 1024 * 4;

  g_assert_cmpuint (clinfer_compiled_get_unplanned_size (c), ==, 6 * one);
  g_assert_cmpuint (clinfer_compiled_get_arena_size (c), ==, 2 * one);
}

/* Two threads and an arena under 8 MB: each tensor keeps bytes of its
 * own (cpu-device.c arena_unshared ()), unless CLINFER_CPU_ARENA_SHARED=1;
 * =0 unshares it with one thread too. Over 8 MB, the largest tensors up to
 * half the shared arena (unshare_largest ()). */
static void
test_memory_planning_unshared (void)
{
  gsize one = 256 * 1024 * 4;

  {
    g_autoptr (ClinferCompiled) c = compile_chain (2, 256);
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c), ==, 6 * one);
  }
  g_setenv ("CLINFER_CPU_ARENA_SHARED", "1", TRUE);
  {
    g_autoptr (ClinferCompiled) c = compile_chain (2, 256);
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c), ==, 2 * one);
  }
  g_setenv ("CLINFER_CPU_ARENA_SHARED", "0", TRUE);
  {
    g_autoptr (ClinferCompiled) c = compile_chain (1, 256);
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c), ==, 6 * one);
  }
  g_unsetenv ("CLINFER_CPU_ARENA_SHARED");
  /* Six 4 MB tensors (24 MB, over 8): shared they need two buffers; half
   * of that, one tensor, gets its own bytes; the others share two. */
  {
    g_autoptr (ClinferCompiled) c1 = compile_chain (1, 1024);
    g_autoptr (ClinferCompiled) c2 = compile_chain (2, 1024);
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c1), ==, 8 * one);
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c2), ==, 12 * one);
  }
}

/* Feeds @n requests to @c: way 0 takes @t0, way 1 @t1, except that the
 * first request of every run of one way takes 10x (cold memory, which the
 * chooser must not count). Returns how many ran way 1. */
static guint
chooser_feed (ClinferChooser *c, guint n, gint64 t0, gint64 t1)
{
  guint ones = 0, last = G_MAXUINT;

  for (guint i = 0; i < n; i++) {
    guint way = clinfer_chooser_next (c);
    gint64 t = way ? t1 : t0;
    ones += way;
    clinfer_chooser_record (c, way, way != last ? 10 * t : t);
    last = way;
  }
  return ones;
}

/* The two-way chooser: a trial of both, the faster kept, a probe every
 * period that switches only past the margin. */
static void
test_chooser (void)
{
  ClinferChooser c;
  const guint runs = CLINFER_CHOOSER_RUNS, period = CLINFER_CHOOSER_PERIOD;

  /* One way: always 0. */
  clinfer_chooser_init (&c, 1);
  g_assert_cmpuint (chooser_feed (&c, 1000, 100, 50), ==, 0);

  /* The trial runs way 0, then way 1; 1 is faster and kept. */
  clinfer_chooser_init (&c, 2);
  g_assert_cmpuint (chooser_feed (&c, runs, 100, 80), ==, 0);
  g_assert_cmpuint (chooser_feed (&c, runs, 100, 80), ==, runs);
  g_assert_true (c.kept == 1 && !c.trial);
  /* Steady on way 1 until the period ends, then a probe of way 0 that
   * does not switch (way 0 still slower). */
  g_assert_cmpuint (chooser_feed (&c, period, 100, 80), ==, period);
  g_assert_cmpuint (chooser_feed (&c, runs, 100, 80), ==, 0);
  g_assert_cmpuint (c.kept, ==, 1);
  g_assert_cmpuint (c.switches, ==, 0);
  /* Way 1 gets slower (the placement changed): the next probe finds way 0
   * faster and keeps it. */
  g_assert_cmpuint (chooser_feed (&c, period, 100, 150), ==, period);
  g_assert_cmpuint (chooser_feed (&c, runs, 100, 150), ==, 0);
  g_assert_cmpuint (c.kept, ==, 0);
  g_assert_cmpuint (c.switches, ==, 1);
  g_assert_cmpuint (chooser_feed (&c, period, 100, 150), ==, 0);
  /* Within the margin (2% faster) the probe does not switch. */
  g_assert_cmpuint (chooser_feed (&c, runs, 100, 98), ==, runs);
  g_assert_cmpuint (c.kept, ==, 0);
  g_assert_cmpuint (c.switches, ==, 1);

  /* A trial tie keeps way 0 (the plan's own layout). */
  clinfer_chooser_init (&c, 2);
  chooser_feed (&c, 2 * runs, 100, 100);
  g_assert_cmpuint (c.kept, ==, 0);
}

/* CLINFER_CPU_ARENA_SHARED=both: the plan gets the unshared layout as a
 * second one, the requests run both (the chooser's trial), and the
 * outputs are the same bits either way. */
static void
test_memory_planning_two_layouts (void)
{
  gsize one = 256 * 1024 * 4;
  int64_t d[] = { 256, 1024 };

  g_setenv ("CLINFER_CPU_ARENA_SHARED", "both", TRUE);
  for (int threads = 1; threads <= 2; threads++) {
    g_autoptr (ClinferCompiled) c = compile_chain (threads, 256);
    g_autoptr (ClinferRequest) r = NULL;
    g_autoptr (ClinferTensor) x = op_test_f32 (2, d, NULL);
    g_autoptr (ClinferTensor) first = NULL;
    const void *seen[2] = { NULL, NULL };
    GError *err = NULL;
    float *xp = clinfer_tensor_get_data (x);

    /* The plan's own layout is the shared one at 1 thread; at 2 the one
     * of larger arenas, where the largest tensor gets bytes of its own. */
    g_assert_cmpuint (clinfer_compiled_get_arena_size (c), ==,
        threads == 1 ? 2 * one : 3 * one);
    for (int64_t i = 0; i < 256 * 1024; i++)
      xp[i] = (float) (i % 11) - 5.f;
    r = clinfer_compiled_create_request (c, &err);
    g_assert_true (clinfer_request_set_input (r, "x", x, &err));
    for (int k = 0; k < 2 * CLINFER_CHOOSER_RUNS + 2; k++) {
      const ClinferTensor *y;
      g_assert_true (clinfer_request_infer (r, &err));
      g_assert_no_error (err);
      y = clinfer_request_get_output (r, 0);
      if (first == NULL)
        first = clinfer_tensor_copy (y, &err);
      g_assert_cmpmem (clinfer_tensor_get_const_data (y),
          clinfer_tensor_get_byte_size (y),
          clinfer_tensor_get_const_data (first),
          clinfer_tensor_get_byte_size (first));
      if (seen[0] == NULL)
        seen[0] = clinfer_tensor_get_const_data (y);
      else if (clinfer_tensor_get_const_data (y) != seen[0])
        seen[1] = clinfer_tensor_get_const_data (y);
    }
    /* Both layouts ran: the output came from two different arenas. */
    g_assert_nonnull (seen[1]);
  }
  g_unsetenv ("CLINFER_CPU_ARENA_SHARED");
}

static void
test_request_rejects_bad_inputs (void)
{
  g_autoptr (ClinferModel) m = build_fold_model ();
  GError *err = NULL;
  g_autoptr (ClinferCompiled) c = clinfer_compile (m, NULL, &err);
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  int64_t d3[] = { 3 }, d2[] = { 2 };
  g_autoptr (ClinferTensor) wrong_shape = op_test_f32 (1, d3, NULL);
  ClinferShape s2 = clinfer_shape_make (1, d2);
  g_autoptr (ClinferTensor) wrong_type = clinfer_tensor_new (CLINFER_TYPE_I64,
      &s2, NULL);

  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "'x'"));
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_input (r, "x", wrong_shape, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_input (r, "x", wrong_type, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "i64"));
  g_clear_error (&err);
  g_assert_false (clinfer_request_set_input (r, "nope", wrong_type, &err));
  g_assert_nonnull (strstr (err->message, "'x'"));
  g_clear_error (&err);
}

static void
test_unknown_device (void)
{
  g_autoptr (ClinferModel) m = build_fold_model ();
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  GError *err = NULL;

  clinfer_compile_config_set_device (cfg, "TPU");
  g_assert_null (clinfer_compile (m, cfg, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_DEVICE);
  g_assert_nonnull (strstr (err->message, "TPU"));
  g_clear_error (&err);
}

/* Broadcasting in the Add kernel: [2,1,3] + [4,1] -> [2,4,3]. */
static void
test_broadcast_add (void)
{
  ClinferGraph *g = clinfer_graph_new ("bc", "<test>");
  int64_t da[] = { 2, 1, 3 }, db[] = { 4, 1 };
  ClinferShape sa = clinfer_shape_make (3, da), sb = clinfer_shape_make (2, db);
  ClinferNode *a = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &sa);
  ClinferNode *b = clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &sb);
  float av[6] = { 1, 2, 3, 4, 5, 6 }, bv[4] = { 10, 20, 30, 40 };
  g_autoptr (ClinferTensor) ta = op_test_f32 (3, da, av);
  g_autoptr (ClinferTensor) tb = op_test_f32 (2, db, bv);
  ClinferTensor *ins[] = { ta, tb };
  g_autoptr (ClinferRequest) r = NULL;
  ClinferTensor *out;
  const float *o;

  clinfer_graph_add_output (g, (ClinferPortRef) { add_op (g, "Add", "y", a, b), 0 }, "y");
  r = op_test_run_compiled (g, 13, ins, 2);
  out = clinfer_request_get_output (r, 0);
  g_assert_cmpint (clinfer_tensor_get_shape (out)->dims[1], ==, 4);
  o = clinfer_tensor_get_const_data (out);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 3; k++)
        g_assert_cmpfloat (o[(i * 4 + j) * 3 + k], ==, av[i * 3 + k] + bv[j]);
}

static void
test_broadcast_mismatch_names_node (void)
{
  ClinferGraph *g = clinfer_graph_new ("bc", "bad.onnx");
  int64_t da[] = { 2, 3 }, db[] = { 4 };
  ClinferShape sa = clinfer_shape_make (2, da), sb = clinfer_shape_make (1, db);
  ClinferNode *a = clinfer_graph_add_input (g, "a", CLINFER_TYPE_F32, &sa);
  ClinferNode *b = clinfer_graph_add_input (g, "b", CLINFER_TYPE_F32, &sb);
  g_autoptr (ClinferModel) m = NULL;
  GError *err = NULL;

  clinfer_graph_add_output (g, (ClinferPortRef) { add_op (g, "Add", "bad_add", a, b), 0 }, "y");
  m = model_from_graph (g);
  g_assert_null (clinfer_compile (m, NULL, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "bad_add"));
  g_assert_nonnull (strstr (err->message, "bad.onnx"));
  g_clear_error (&err);
}

/* Dynamic input dims: one compiled model serves several shapes. */
static void
test_dynamic_input_shapes (void)
{
  ClinferGraph *g = clinfer_graph_new ("dyn", "<test>");
  int64_t d[] = { -1, 3 };
  ClinferShape s = clinfer_shape_make (2, d);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  GError *err = NULL;

  clinfer_graph_add_output (g, (ClinferPortRef) { add_op (g, "Relu", "y", x, NULL), 0 }, "y");
  m = model_from_graph (g);
  c = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  for (int64_t rows = 1; rows <= 4; rows++) {
    int64_t dd[] = { rows, 3 };
    g_autoptr (ClinferTensor) t = op_test_f32 (2, dd, NULL);
    ((float *) clinfer_tensor_get_data (t))[rows * 3 - 1] = -1.f - rows;
    ((float *) clinfer_tensor_get_data (t))[0] = (float) rows;
    g_assert_true (clinfer_request_set_input (r, "x", t, &err));
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
    g_assert_cmpint (clinfer_tensor_get_shape (clinfer_request_get_output (r, 0))->dims[0], ==, rows);
    g_assert_cmpfloat (((const float *) clinfer_tensor_get_const_data (
                clinfer_request_get_output (r, 0)))[0], ==, (float) rows);
  }
}

/* ---- memory planner: aliases ---- */

static ClinferSlot
arena_slot (gsize bytes, int first, int last)
{
  ClinferSlot s = { 0 };
  s.kind = CLINFER_SLOT_ARENA;
  s.type = CLINFER_TYPE_F32;
  s.bytes = bytes;
  s.first_step = first;
  s.last_step = last;
  return s;
}

/* The slot whose region holds @i (@i when it is not an alias). */
static guint
group_root (GArray *slots, guint i)
{
  const ClinferSlot *s = &g_array_index (slots, ClinferSlot, i);
  while (s->aliased && g_array_index (slots, ClinferSlot, s->alias_of).kind
      == CLINFER_SLOT_ARENA) {
    i = s->alias_of;
    s = &g_array_index (slots, ClinferSlot, i);
  }
  return i;
}

/* Every alias sits at its target's offset plus its own; slots of two
 * groups whose lifetimes (the union over each group) overlap never share
 * a byte; everything fits the arena. */
static void
check_plan (ClinferPlan *plan)
{
  guint n = plan->slots->len;
  g_autofree int *lo = g_new (int, n), *hi = g_new (int, n);
  g_autofree guint *root = g_new (guint, n);

  for (guint i = 0; i < n; i++) {
    lo[i] = G_MAXINT;
    hi[i] = G_MININT;
  }
  for (guint i = 0; i < n; i++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind != CLINFER_SLOT_ARENA)
      continue;
    root[i] = group_root (plan->slots, i);
    lo[root[i]] = MIN (lo[root[i]], s->first_step);
    hi[root[i]] = MAX (hi[root[i]], s->last_step);
    g_assert_cmpuint (s->offset + s->bytes, <=, plan->arena_size);
  }
  for (guint i = 0; i < n; i++) {
    const ClinferSlot *a = &g_array_index (plan->slots, ClinferSlot, i);
    if (a->kind != CLINFER_SLOT_ARENA)
      continue;
    if (root[i] != i && a->aliased) {
      const ClinferSlot *t = &g_array_index (plan->slots, ClinferSlot,
          a->alias_of);
      g_assert_cmpuint (a->offset, ==, t->offset + a->alias_offset);
    }
    for (guint j = 0; j < n; j++) {
      const ClinferSlot *b = &g_array_index (plan->slots, ClinferSlot, j);
      guint ra = root[i], rb = root[j];
      if (b->kind != CLINFER_SLOT_ARENA || ra == rb
          || lo[ra] > hi[rb] || lo[rb] > hi[ra])
        continue;
      if (a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes)
        g_error ("slots %u and %u share bytes while both groups live", i, j);
    }
  }
}

static ClinferPlan *
plan_new (void)
{
  ClinferPlan *plan = g_new0 (ClinferPlan, 1);
  plan->slots = g_array_new (FALSE, TRUE, sizeof (ClinferSlot));
  return plan;
}

static void
plan_free (ClinferPlan *plan)
{
  g_array_unref (plan->slots);
  g_free (plan);
}

/* A channel pad's shape: x (steps 0..4) inside y (steps 2..6) at offset
 * 0, z (steps 1..1) alive only before y starts, w (steps 5..6) after x:
 * the group is one region over steps 0..6, so neither z nor w may be
 * placed over y; an alias of an input slot is ignored. Then random plans
 * with alias chains. */
static void
test_memory_planning_aliases (void)
{
  ClinferPlan *plan = plan_new ();
  ClinferSlot s;
  g_autoptr (GRand) rand = g_rand_new_with_seed (77);

  s = arena_slot (4096, 0, 4);            /* 0: x */
  s.aliased = TRUE;
  s.alias_of = 1;
  g_array_append_val (plan->slots, s);
  s = arena_slot (8192, 2, 6);            /* 1: y */
  g_array_append_val (plan->slots, s);
  s = arena_slot (8192, 1, 1);            /* 2: z */
  g_array_append_val (plan->slots, s);
  s = arena_slot (8192, 5, 6);            /* 3: w */
  g_array_append_val (plan->slots, s);
  s = arena_slot (0, -1, -1);             /* 4: an input */
  s.kind = CLINFER_SLOT_INPUT;
  g_array_append_val (plan->slots, s);
  s = arena_slot (100, 0, 6);             /* 5: alias of an input: alone */
  s.aliased = TRUE;
  s.alias_of = 4;
  g_array_append_val (plan->slots, s);
  clinfer_plan_assign_memory (plan);
  check_plan (plan);
  g_assert_cmpuint (g_array_index (plan->slots, ClinferSlot, 0).offset, ==,
      g_array_index (plan->slots, ClinferSlot, 1).offset);
  /* Regions: y (x inside), z, w, the 100-byte slot. */
  g_assert_cmpuint (plan->unplanned_size, ==, 8192 * 3 + 128);
  g_assert_cmpuint (plan->arena_size, ==, 8192 * 2 + 128);
  plan_free (plan);

  for (int round = 0; round < 300; round++) {
    guint n = g_rand_int_range (rand, 2, 16);
    plan = plan_new ();
    for (guint i = 0; i < n; i++) {
      int first = g_rand_int_range (rand, -1, 20);
      s = arena_slot (g_rand_int_range (rand, 0, 5000), first,
          first + g_rand_int_range (rand, 0, 8));
      /* Aliases point forward (as a pad's input to its output), so
       * chains end; offsets anywhere inside or past the target. */
      if (i + 1 < n && g_rand_int_range (rand, 0, 3) == 0) {
        s.aliased = TRUE;
        s.alias_of = g_rand_int_range (rand, i + 1, n);
        s.alias_offset = 4 * g_rand_int_range (rand, 0, 1000);
      }
      if (g_rand_int_range (rand, 0, 10) == 0)
        s.kind = CLINFER_SLOT_DYNAMIC;
      g_array_append_val (plan->slots, s);
    }
    clinfer_plan_assign_memory (plan);
    check_plan (plan);
    plan_free (plan);
  }
}

/* ---- checked sizes and the memory limit (issue: fuzzing) ---- */

static void
test_checked_sizes (void)
{
  guint64 r = 7;
  int64_t big[] = { G_GINT64_CONSTANT (1) << 40, G_GINT64_CONSTANT (1) << 40 };
  int64_t empty_huge[] = { 0, G_GINT64_CONSTANT (1) << 30,
    G_GINT64_CONSTANT (1) << 30 };
  int64_t ok[] = { 0, 5, 7 }, fine[] = { 2, 3, 4 };
  ClinferShape s;

  s = clinfer_shape_make (3, fine);
  g_assert_true (clinfer_shape_get_byte_size (&s, CLINFER_TYPE_F32, &r));
  g_assert_cmpuint (r, ==, 96);
  /* 2^80 bytes: overflows. */
  s = clinfer_shape_make (2, big);
  g_assert_false (clinfer_shape_get_byte_size (&s, CLINFER_TYPE_U8, &r));
  /* No elements, but strides of 2^60 bytes: refused too (the stride
   * arithmetic of tensor.c:59 overflowed on such shapes). */
  s = clinfer_shape_make (3, empty_huge);
  g_assert_false (clinfer_shape_get_byte_size (&s, CLINFER_TYPE_F32, &r));
  g_assert_null (clinfer_tensor_new (CLINFER_TYPE_F32, &s, NULL));
  s = clinfer_shape_make (3, ok);
  g_assert_true (clinfer_shape_get_byte_size (&s, CLINFER_TYPE_F32, &r));
  g_assert_cmpuint (r, ==, 0);
  g_assert_false (clinfer_shape_get_byte_size (&s, CLINFER_TYPE_UNDEFINED, &r));
}

/* x[1x4096] f32 -> Relu -> Neg: 16 KiB per tensor. */
static ClinferModel *
build_relu_model (void)
{
  ClinferGraph *g = clinfer_graph_new ("limit", "limit.onnx");
  int64_t d[] = { 1, 4096 };
  ClinferShape s = clinfer_shape_make (2, d);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  ClinferNode *r = add_op (g, "Relu", "r", x, NULL);
  ClinferPortRef out = { add_op (g, "Neg", "z", r, NULL), 0 };

  clinfer_graph_add_output (g, out, "z");
  return model_from_graph (g);
}

static void
test_memory_limit (void)
{
  g_autoptr (ClinferModel) m = build_relu_model ();
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferCompiled) c = NULL;
  GError *err = NULL;

  /* Default: the machine's memory. */
  g_assert_cmpuint (clinfer_compile_config_get_memory_limit (cfg), >,
      G_GUINT64_CONSTANT (1) << 24);
  /* Relu's and Neg's outputs live at once: 32 KiB of arena. */
  clinfer_compile_config_set_memory_limit (cfg, 32768);
  g_assert_cmpuint (clinfer_compile_config_get_memory_limit (cfg), ==, 32768);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  g_clear_pointer (&c, clinfer_compiled_unref);
  clinfer_compile_config_set_memory_limit (cfg, 32767);
  c = clinfer_compile (m, cfg, &err);
  g_assert_null (c);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (err->message, "intermediate tensors need 32768 bytes"));
  g_clear_error (&err);
  /* One tensor over the limit: refused, naming the node and the size. */
  clinfer_compile_config_set_memory_limit (cfg, 16383);
  c = clinfer_compile (m, cfg, &err);
  g_assert_null (c);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (err->message, "limit.onnx"));
  g_assert_nonnull (strstr (err->message, "'x'"));
  g_assert_nonnull (strstr (err->message, "needs 16384 bytes"));
  g_assert_nonnull (strstr (err->message, "16383"));
  g_clear_error (&err);
}

/* c[1x1] -> Expand to 2048x4096 (32 MiB f32) -> Add x: folding would
 * create 32 MiB from 4 bytes, so the Expand is left to run time. */
static void
test_folding_does_not_blow_up (void)
{
  int64_t cd[] = { 1, 1 }, sd[] = { 2 }, xd[] = { 2048, 4096 };
  int64_t shape_v[] = { 2048, 4096 };
  float cv[1] = { 0 };
  ClinferGraph *g = clinfer_graph_new ("expand", "expand.onnx");
  g_autoptr (ClinferTensor) ct = op_test_f32 (2, cd, cv);
  g_autoptr (ClinferTensor) st = op_test_i64 (1, sd, shape_v);
  ClinferShape xs = clinfer_shape_make (2, xd);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  ClinferNode *c = clinfer_graph_add_constant (g, "c", ct);
  ClinferNode *sh = clinfer_graph_add_constant (g, "s", st);
  ClinferNode *e = add_op (g, "Expand", "e", c, sh);
  ClinferPortRef out = { add_op (g, "Add", "y", x, e), 0 };
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) comp = NULL;
  GError *err = NULL;

  clinfer_graph_add_output (g, out, "y");
  m = model_from_graph (g);
  comp = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  /* Expand and Add both run: nothing of 16 MiB was folded. */
  g_assert_cmpuint (clinfer_compiled_get_n_steps (comp), ==, 2);
}

/* A Shape whose input has no element type (what a one-bit change to
 * test_shape_example gave the fuzzer): the pass leaves it alone instead
 * of replacing it by a constant it could not compute (a NULL dereference
 * in clinfer_graph_add_constant). */
static void
test_folding_skips_untyped_shape (void)
{
  int64_t d[] = { 2, 3 };
  ClinferShape s = clinfer_shape_make (2, d);
  ClinferGraph *g = clinfer_graph_new ("shape", "shape.onnx");
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_UNDEFINED, &s);
  ClinferNode *sh = add_op (g, "Shape", "sh", x, NULL);
  ClinferPortRef out = { add_op (g, "Neg", "y", sh, NULL), 0 };
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  GError *err = NULL;

  clinfer_graph_add_output (g, out, "y");
  m = model_from_graph (g);
  c = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  /* Shape stays a step (it could not be folded), Neg after it. */
  g_assert_cmpuint (clinfer_compiled_get_n_steps (c), ==, 2);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/core/tensor/basics", test_tensor_basics);
  g_test_add_func ("/core/tensor/rejects-dynamic-shape", test_tensor_rejects_dynamic_shape);
  g_test_add_func ("/core/tensor/half-conversion", test_half_conversion);
  g_test_add_func ("/core/shape/parse-and-print", test_shape_parse_and_print);
  g_test_add_func ("/core/shape/broadcast", test_shape_broadcast);
  g_test_add_func ("/core/graph/topological-order", test_graph_topological_order);
  g_test_add_func ("/core/graph/cycle-names-a-node", test_graph_cycle_names_a_node);
  g_test_add_func ("/core/passes/constant-folding", test_constant_folding);
  g_test_add_func ("/core/passes/folding-does-not-blow-up", test_folding_does_not_blow_up);
  g_test_add_func ("/core/passes/folding-skips-untyped-shape", test_folding_skips_untyped_shape);
  g_test_add_func ("/core/sizes/checked", test_checked_sizes);
  g_test_add_func ("/core/compile/memory-limit", test_memory_limit);
  g_test_add_func ("/core/passes/disabled-passes-same-result", test_disabled_passes_same_result);
  g_test_add_func ("/core/memplan/reuses-buffers", test_memory_planning_reuses_buffers);
  g_test_add_func ("/core/memplan/aliases", test_memory_planning_aliases);
  g_test_add_func ("/core/memplan/unshared", test_memory_planning_unshared);
  g_test_add_func ("/core/memplan/two-layouts", test_memory_planning_two_layouts);
  g_test_add_func ("/core/chooser", test_chooser);
  g_test_add_func ("/core/request/rejects-bad-inputs", test_request_rejects_bad_inputs);
  g_test_add_func ("/core/compile/unknown-device", test_unknown_device);
  g_test_add_func ("/core/eltwise/broadcast-add", test_broadcast_add);
  g_test_add_func ("/core/eltwise/broadcast-mismatch-names-node", test_broadcast_mismatch_names_node);
  g_test_add_func ("/core/request/dynamic-input-shapes", test_dynamic_input_shapes);
  return g_test_run ();
}
