/* clinfer_model_set_batch (): a model with a batch of 1 made to run N
 * items per request. BlazeFace 128 (its Reshapes' target shapes and the
 * ConstantOfShape zeros it concatenates to pad its channels hold the 1)
 * at batch 3 gives, item by item, what the model at batch 1 gives on
 * each (the CPU device, and with --device GPU the OpenCL one; exit 77
 * without it); a dynamic batch is fixed; small graphs whose Reshape,
 * Resize sizes and concatenated constant hold the 1 likewise. Refused,
 * naming the node and leaving the model as it was: Softmax along axis
 * 0, a Reshape that folds the batch into another dimension, a Transpose
 * or an Unsqueeze that moves it, a reduction over it, a concatenated
 * constant that repeated would pass the memory limit, an input without a
 * batch, other dynamic dims, a batch of 0 or past CLINFER_MAX_BATCH. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

static const char *device = "CPU";

static ClinferModel *
read_source_model (const char *rel)
{
  GError *err = NULL;
  g_autofree char *path = g_build_filename (g_getenv ("CLINFER_SOURCE_ROOT"),
      rel, NULL);
  ClinferModel *m = clinfer_model_read (path, &err);

  g_assert_no_error (err);
  return m;
}

static ClinferCompiled *
compile_on_device (ClinferModel *m)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  GError *err = NULL;
  ClinferCompiled *c;

  clinfer_compile_config_set_device (cfg, device);
  c = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  return c;
}

/* Values in [-1, 1) from @seed into @v. */
static void
fill (float *v, gsize n, guint32 seed)
{
  for (gsize i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float) (seed >> 8) / (float) (1u << 24) * 2.f - 1.f;
  }
}

/* Each item of every output of @batched (@n items, one input) equals
 * @single's output on that item alone. */
static void
assert_items_equal_singles (ClinferCompiled *batched, ClinferCompiled *single,
    int n, const char *what)
{
  g_autoptr (ClinferRequest) rb = NULL;
  g_autoptr (ClinferTensor) in = NULL;
  ClinferPortInfo info;
  GError *err = NULL;
  gsize item;

  g_assert_true (clinfer_compiled_get_input (batched, 0, &info));
  g_assert_cmpint (info.shape.dims[0], ==, n);
  in = clinfer_tensor_new (info.type, &info.shape, &err);
  g_assert_no_error (err);
  item = clinfer_tensor_get_n_elements (in) / n;
  fill (clinfer_tensor_get_data (in), item * n, 11);
  rb = clinfer_compiled_create_request (batched, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (rb, 0, in, &err));
  g_assert_true (clinfer_request_infer (rb, &err));
  g_assert_no_error (err);
  for (int k = 0; k < n; k++) {
    g_autoptr (ClinferRequest) rs = clinfer_compiled_create_request (single,
        &err);
    g_autoptr (ClinferTensor) one = NULL;
    ClinferShape s1 = info.shape;

    s1.dims[0] = 1;
    one = clinfer_tensor_new_wrapped (info.type, &s1, NULL,
        (float *) clinfer_tensor_get_data (in) + k * item, NULL, NULL, &err);
    g_assert_no_error (err);
    g_assert_true (clinfer_request_set_input_by_index (rs, 0, one, &err));
    g_assert_true (clinfer_request_infer (rs, &err));
    g_assert_no_error (err);
    for (guint o = 0; o < clinfer_compiled_get_n_outputs (single); o++) {
      ClinferTensor *want = clinfer_request_get_output (rs, o);
      ClinferTensor *got = clinfer_request_get_output (rb, o);
      const ClinferShape *gs = clinfer_tensor_get_shape (got);
      gsize per = clinfer_tensor_get_n_elements (want);
      const float *w = clinfer_tensor_get_const_data (want);
      const float *g = (const float *) clinfer_tensor_get_const_data (got)
          + k * per;
      float scale = 1.f;

      g_assert_cmpint (gs->dims[0], ==, n);
      g_assert_cmpuint (clinfer_tensor_get_n_elements (got), ==, per * n);
      for (gsize i = 0; i < per; i++)
        scale = fmaxf (scale, fabsf (w[i]));
      for (gsize i = 0; i < per; i++)
        if (fabsf (w[i] - g[i]) > 1e-4f * scale)
          g_error ("%s: item %d, output %u, value %" G_GSIZE_FORMAT
              ": batched %g, alone %g", what, k, o, i, g[i], w[i]);
    }
  }
}

static void
test_blazeface (void)
{
  const char *rel = "models/blazeface/face_detection_front_128x128_barracuda.onnx";
  g_autoptr (ClinferModel) m = read_source_model (rel);
  g_autoptr (ClinferModel) m1 = read_source_model (rel);
  g_autoptr (ClinferCompiled) cb = NULL, c1 = NULL;
  ClinferPortInfo info;
  GError *err = NULL;

  g_assert_true (clinfer_model_set_batch (m, 3, &err));
  g_assert_no_error (err);
  g_assert_true (clinfer_model_get_input (m, 0, &info));
  g_assert_cmpint (info.shape.dims[0], ==, 3);
  cb = compile_on_device (m);
  c1 = compile_on_device (m1);
  assert_items_equal_singles (cb, c1, 3, "BlazeFace");
}

static void
test_dynamic (void)
{
  g_autoptr (ClinferModel) m = read_source_model ("tests/data/dynamic/conv-batch.onnx");
  g_autoptr (ClinferModel) m1 = read_source_model ("tests/data/dynamic/conv-batch.onnx");
  g_autoptr (ClinferCompiled) cb = NULL, c1 = NULL;
  ClinferShape one = { 4, { 1, 3, 16, 16 } };
  ClinferPortInfo info;
  GError *err = NULL;

  g_assert_true (clinfer_model_set_batch (m, 4, &err));
  g_assert_no_error (err);

  g_assert_true (clinfer_model_get_input (m1, 0, &info));
  g_assert_cmpint (info.shape.dims[0], ==, CLINFER_DIM_DYNAMIC);
  g_assert_true (clinfer_model_reshape (m1, info.name, &one, &err));
  g_assert_no_error (err);
  cb = compile_on_device (m);
  c1 = compile_on_device (m1);
  assert_items_equal_singles (cb, c1, 4, "conv-batch");
}

/* ---------------------------------------------------------------- */
/* Small graphs                                                      */

typedef enum {
  G_RESHAPE_CONCAT,          /* x [1,2,3,4] -> Reshape [1,6,4] -> Concat
                              * (axis 1) with a constant [1,2,4] ->
                              * Softmax (last axis) */
  G_CONSTANT_OF_SHAPE,       /* x [1,2,3,3] ++ ConstantOfShape [1,1,3,3]
                              * (axis 1) -> Resize to sizes [1,3,6,6] */
  G_SOFTMAX_AXIS0,           /* refused: Softmax over axis 0 */
  G_RESHAPE_FOLDS,           /* refused: Reshape [-1, 4] of [1,2,4] */
  G_TRANSPOSE_MOVES,         /* refused: Transpose [1,0,2] of [1,2,4] */
  G_REDUCE_BATCH,            /* refused: ReduceSum over axis 0 */
  G_UNSQUEEZE_FRONT,         /* refused: Unsqueeze at axis 0 (the batch
                              * becomes dim 1, which only the shapes at
                              * batch 3 show) */
  G_CONSTANT_TOO_BIG,        /* refused: a concatenated constant [1,1000,4]
                              * repeated 3 times is over the memory limit
                              * (40 KB) */
  G_NO_BATCH,                /* refused: x [2,4] */
  G_DYNAMIC,                 /* refused: x [1,?,4] */
} GraphCase;

static const char *const case_names[] = { "reshape-concat",
  "constant-of-shape", "softmax-axis0", "reshape-folds", "transpose-moves",
  "reduce-batch", "unsqueeze-front", "constant-too-big", "no-batch",
  "dynamic" };

/* What the refusals' messages name. */
static const char *const refusal_names[] = { NULL, NULL, "sm", "rs", "tr",
  "red", "unsq", "big", "x", "x" };

static ClinferModel *
case_model (GraphCase c)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  ClinferGraph *g = op_test_graph (13);
  int64_t x4[] = { 1, 2, 3, 4 }, x3[] = { 1, 2, 4 }, x2[] = { 2, 4 };
  int64_t xs[] = { 1, 2, 3, 3 }, xd[] = { 1, -1, 4 };
  ClinferNode *x, *n = NULL, *in[4];
  GError *err = NULL;
  ClinferModel *m;

  switch (c) {
    case G_RESHAPE_CONCAT: {
      int64_t sd[] = { 3 }, shape[] = { 1, 6, 4 }, kd[] = { 1, 2, 4 };
      g_autoptr (ClinferTensor) t = op_test_random (rand, 4, x4);
      g_autoptr (ClinferTensor) k = op_test_random (rand, 3, kd);
      x = op_test_input_like (g, "x", t);
      in[0] = x;
      in[1] = op_test_constant (g, "shape", CLINFER_TYPE_I64, 1, sd, shape);
      n = op_test_node (g, "Reshape", "", "rs", 2, in, 1);
      in[0] = n;
      in[1] = clinfer_graph_add_constant (g, "k", k);
      n = op_test_node (g, "Concat", "", "cat", 2, in, 1);
      clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
      in[0] = n;
      n = op_test_node (g, "Softmax", "", "sm", 1, in, 1);
      break;
    }
    case G_CONSTANT_OF_SHAPE: {
      int64_t sd[] = { 4 }, shape[] = { 1, 1, 3, 3 }, sizes[] = { 1, 3, 6, 6 };
      float half = 0.5f;
      int64_t one[] = { 1 };
      g_autoptr (ClinferTensor) t = op_test_random (rand, 4, xs);
      g_autoptr (ClinferTensor) value = op_test_f32 (1, one, &half);
      x = op_test_input_like (g, "x", t);
      in[0] = op_test_constant (g, "zshape", CLINFER_TYPE_I64, 1, sd, shape);
      n = op_test_node (g, "ConstantOfShape", "", "cos", 1, in, 1);
      clinfer_node_set_attr (n, "value", clinfer_attr_new_tensor (value));
      in[0] = x;
      in[1] = n;
      n = op_test_node (g, "Concat", "", "cat", 2, in, 1);
      clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
      in[0] = n;
      in[1] = NULL;
      in[2] = NULL;
      in[3] = op_test_constant (g, "sizes", CLINFER_TYPE_I64, 1, sd, sizes);
      n = op_test_node (g, "Resize", "", "rsz", 4, in, 1);
      clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("linear"));
      break;
    }
    case G_SOFTMAX_AXIS0:
    case G_TRANSPOSE_MOVES:
    case G_REDUCE_BATCH:
    case G_UNSQUEEZE_FRONT: {
      g_autoptr (ClinferTensor) t = op_test_random (rand, 3, x3);
      x = op_test_input_like (g, "x", t);
      in[0] = x;
      if (c == G_SOFTMAX_AXIS0) {
        n = op_test_node (g, "Softmax", "", "sm", 1, in, 1);
        clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (0));
      } else if (c == G_TRANSPOSE_MOVES) {
        int64_t perm[] = { 1, 0, 2 };
        n = op_test_node (g, "Transpose", "", "tr", 1, in, 1);
        clinfer_node_set_attr (n, "perm", clinfer_attr_new_ints (perm, 3));
      } else if (c == G_UNSQUEEZE_FRONT) {
        int64_t axes[] = { 0 }, ad[] = { 1 };
        in[1] = op_test_constant (g, "axes", CLINFER_TYPE_I64, 1, ad, axes);
        n = op_test_node (g, "Unsqueeze", "", "unsq", 2, in, 1);
        in[0] = n;
        n = op_test_node (g, "Relu", "", "relu", 1, in, 1);
      } else {
        int64_t axes[] = { 0 }, ad[] = { 1 };
        in[1] = op_test_constant (g, "axes", CLINFER_TYPE_I64, 1, ad, axes);
        n = op_test_node (g, "ReduceSum", "", "red", 2, in, 1);
        clinfer_node_set_attr (n, "keepdims", clinfer_attr_new_int (0));
      }
      break;
    }
    case G_RESHAPE_FOLDS: {
      int64_t sd[] = { 2 }, shape[] = { -1, 4 };
      g_autoptr (ClinferTensor) t = op_test_random (rand, 3, x3);
      x = op_test_input_like (g, "x", t);
      in[0] = x;
      in[1] = op_test_constant (g, "shape", CLINFER_TYPE_I64, 1, sd, shape);
      n = op_test_node (g, "Reshape", "", "rs", 2, in, 1);
      break;
    }
    case G_CONSTANT_TOO_BIG: {
      int64_t kd[] = { 1, 1000, 4 };
      g_autoptr (ClinferTensor) t = op_test_random (rand, 3, x3);
      g_autoptr (ClinferTensor) k = op_test_random (rand, 3, kd);
      x = op_test_input_like (g, "x", t);
      in[0] = x;
      in[1] = clinfer_graph_add_constant (g, "big", k);
      n = op_test_node (g, "Concat", "", "cat", 2, in, 1);
      clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
      g->memory_limit = 40000;
      break;
    }
    case G_NO_BATCH:
    case G_DYNAMIC: {
      g_autoptr (ClinferTensor) t = op_test_random (rand, c == G_NO_BATCH
          ? 2 : 3, c == G_NO_BATCH ? x2 : x3);
      x = op_test_input_like (g, "x", t);
      if (c == G_DYNAMIC)
        x->outputs[0].shape = clinfer_shape_make (3, xd);
      in[0] = x;
      n = op_test_node (g, "Relu", "", "relu", 1, in, 1);
      break;
    }
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  m = op_test_model (g, 13, &err);
  g_assert_no_error (err);
  return m;
}

static void
test_graph_case (gconstpointer data)
{
  GraphCase c = GPOINTER_TO_INT (data);
  g_autoptr (ClinferModel) m = case_model (c);
  ClinferPortInfo before, after;
  GError *err = NULL;

  g_assert_true (clinfer_model_get_input (m, 0, &before));
  if (refusal_names[c] == NULL) {
    g_autoptr (ClinferModel) m1 = case_model (c);
    g_autoptr (ClinferCompiled) cb = NULL, c1 = NULL;
    g_assert_true (clinfer_model_set_batch (m, 3, &err));
    g_assert_no_error (err);
    cb = compile_on_device (m);
    c1 = compile_on_device (m1);
    assert_items_equal_singles (cb, c1, 3, case_names[c]);
    return;
  }
  g_assert_false (clinfer_model_set_batch (m, 3, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  if (strstr (err->message, refusal_names[c]) == NULL)
    g_error ("%s: the message does not name %s: %s", case_names[c],
        refusal_names[c], err->message);
  g_test_message ("%s", err->message);
  g_clear_error (&err);
  /* the model as it was */
  g_assert_true (clinfer_model_get_input (m, 0, &after));
  g_assert_true (clinfer_shape_equal (&before.shape, &after.shape));
  g_assert_cmpint (clinfer_model_get_n_outputs (m), ==, 1);
}

static void
test_batch_range (void)
{
  g_autoptr (ClinferModel) m = case_model (G_RESHAPE_CONCAT);
  GError *err = NULL;

  g_assert_false (clinfer_model_set_batch (m, 0, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
  g_assert_false (clinfer_model_set_batch (m, CLINFER_MAX_BATCH + 1, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_clear_error (&err);
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--device") == 0 && i + 1 < argc)
      device = argv[++i];
  g_test_init (&argc, &argv, NULL);
  if (strcmp (device, "CPU") != 0) {
    g_autoptr (ClinferRemoteContext) ctx = clinfer_remote_context_new (device,
        NULL);

    if (ctx == NULL) {
      g_printerr ("no %s device: skipped\n", device);
      return 77;
    }
  }
  g_test_add_func ("/batch/blazeface", test_blazeface);
  g_test_add_func ("/batch/dynamic", test_dynamic);
  g_test_add_func ("/batch/range", test_batch_range);
  for (gsize i = 0; i < G_N_ELEMENTS (case_names); i++) {
    g_autofree char *path = g_strdup_printf ("/batch/graph/%s", case_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_graph_case);
  }
  return g_test_run ();
}
