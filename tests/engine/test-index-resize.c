/* clinfer — unit tests of the index, resize and layout ops on small graphs
 * built in memory: hand-computed results, run-time shapes, errors. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* Node @op named @name reading @n_in producers (NULL = absent input). */
static ClinferNode *
add_node (ClinferGraph *g, const char *op, const char *name,
    ClinferNode *const *inputs, guint n_in, guint n_out)
{
  ClinferNode *n = clinfer_graph_add_node (g, op, "", name, n_in, n_out);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i].node = inputs[i];
  return n;
}

static void
add_outputs (ClinferGraph *g, ClinferNode *n)
{
  for (guint i = 0; i < n->n_outputs; i++) {
    g_autofree char *name = g_strdup_printf ("%s_%u", n->name, i);
    clinfer_graph_add_output (g, (ClinferPortRef) { n, i }, name);
  }
}

static void
assert_f32 (const ClinferTensor *t, const float *want, gsize n)
{
  const float *p = clinfer_tensor_get_const_data (t);

  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, n);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon (p[i], want[i], 1e-5);
}

static void
assert_i64 (const ClinferTensor *t, const int64_t *want, gsize n)
{
  const int64_t *p = clinfer_tensor_get_const_data (t);

  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, n);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpint (p[i], ==, want[i]);
}

/* ---- Resize ---- */

static void
test_resize_nearest_asymmetric_2x (void)
{
  ClinferGraph *g = clinfer_graph_new ("resize", "<test>");
  int64_t xd[] = { 1, 1, 2, 2 }, sd[] = { 4 }, yd[] = { 1, 1, 4, 4 };
  float xv[] = { 1, 2, 3, 4 }, sv[] = { 1, 1, 2, 2 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in[3] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs), NULL,
    op_test_constant (g, "scales", CLINFER_TYPE_F32, 1, sd, sv),
  };
  ClinferNode *n = add_node (g, "Resize", "up", in, 3, 1);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 4, xd, xv);
  g_autoptr (ClinferRequest) r = NULL;
  const float want[] = { 1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4 };

  clinfer_node_set_attr (n, "coordinate_transformation_mode",
      clinfer_attr_new_string ("asymmetric"));
  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, &x, 1);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 4, yd);
  assert_f32 (clinfer_request_get_output (r, 0), want, 16);
}

/* half_pixel, 2 -> 4 along W: x_in = (x + 0.5) / 2 - 0.5 = -0.25, 0.25,
 * 0.75, 1.25, clamped at the borders: {0, 4} -> {0, 1, 3, 4}. */
static void
test_resize_linear_half_pixel (void)
{
  ClinferGraph *g = clinfer_graph_new ("resize", "<test>");
  int64_t xd[] = { 1, 1, 1, 2 }, sd[] = { 4 }, yd[] = { 1, 1, 1, 4 };
  float xv[] = { 0, 4 };
  int64_t sizes[] = { 1, 1, 1, 4 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *in[4] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs), NULL, NULL,
    op_test_constant (g, "sizes", CLINFER_TYPE_I64, 1, sd, sizes),
  };
  ClinferNode *n = add_node (g, "Resize", "lin", in, 4, 1);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 4, xd, xv);
  g_autoptr (ClinferRequest) r = NULL;
  const float want[] = { 0, 1, 3, 4 };

  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("linear"));
  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, &x, 1);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 4, yd);
  assert_f32 (clinfer_request_get_output (r, 0), want, 4);
}

/* Scales only known at run time: the output shape follows each request. */
static void
test_resize_runtime_scales (void)
{
  ClinferGraph *g = clinfer_graph_new ("resize", "<test>");
  int64_t xd[] = { 1, 2 }, sd[] = { 2 }, y1[] = { 1, 6 }, y2[] = { 2, 2 };
  float xv[] = { 5, 7 }, s1[] = { 1, 3 }, s2[] = { 2, 1 };
  ClinferShape xs = clinfer_shape_make (2, xd), ss = clinfer_shape_make (1, sd);
  ClinferNode *in[3] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs), NULL,
    clinfer_graph_add_input (g, "scales", CLINFER_TYPE_F32, &ss),
  };
  ClinferNode *n = add_node (g, "Resize", "rt", in, 3, 1);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, xd, xv);
  g_autoptr (ClinferTensor) t1 = op_test_tensor (CLINFER_TYPE_F32, 1, sd, s1);
  g_autoptr (ClinferTensor) t2 = op_test_tensor (CLINFER_TYPE_F32, 1, sd, s2);
  ClinferTensor *args[2] = { x, t1 };
  g_autoptr (ClinferRequest) r = NULL;
  GError *err = NULL;
  const float w1[] = { 5, 5, 5, 7, 7, 7 }, w2[] = { 5, 7, 5, 7 };

  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, args, 2);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 2, y1);
  assert_f32 (clinfer_request_get_output (r, 0), w1, 6);
  g_assert_true (clinfer_request_set_input (r, "scales", t2, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 2, y2);
  assert_f32 (clinfer_request_get_output (r, 0), w2, 4);
}

/* ---- TopK ---- */

static void
test_topk_ties_lower_index_first (void)
{
  ClinferGraph *g = clinfer_graph_new ("topk", "<test>");
  int64_t xd[] = { 5 }, kd[] = { 1 }, k = 3, yd[] = { 3 };
  float xv[] = { 3, 1, 3, 2, 3 };
  ClinferShape xs = clinfer_shape_make (1, xd);
  ClinferNode *in[2] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    op_test_constant (g, "k", CLINFER_TYPE_I64, 1, kd, &k),
  };
  ClinferNode *big = add_node (g, "TopK", "big", in, 2, 2);
  ClinferNode *small = add_node (g, "TopK", "small", in, 2, 2);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 1, xd, xv);
  g_autoptr (ClinferRequest) r = NULL;
  const float bv[] = { 3, 3, 3 }, sv[] = { 1, 2, 3 };
  const int64_t bi[] = { 0, 2, 4 }, si[] = { 1, 3, 0 };

  clinfer_node_set_attr (small, "largest", clinfer_attr_new_int (0));
  add_outputs (g, big);
  add_outputs (g, small);
  r = op_test_run_compiled (g, 11, &x, 1);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 1, yd);
  assert_f32 (clinfer_request_get_output (r, 0), bv, 3);
  assert_i64 (clinfer_request_get_output (r, 1), bi, 3);
  assert_f32 (clinfer_request_get_output (r, 2), sv, 3);
  assert_i64 (clinfer_request_get_output (r, 3), si, 3);
}

/* ---- NonZero: data-dependent output shape through the executor ---- */

static void
test_nonzero_dynamic_shape (void)
{
  ClinferGraph *g = clinfer_graph_new ("nonzero", "<test>");
  int64_t xd[] = { 2, 3 }, y1[] = { 2, 3 }, y2[] = { 2, 0 };
  ClinferShape xs = clinfer_shape_make (2, xd);
  ClinferNode *in[1] = { clinfer_graph_add_input (g, "x", CLINFER_TYPE_I32, &xs) };
  ClinferNode *n = add_node (g, "NonZero", "nz", in, 1, 1);
  int32_t a[] = { 0, 5, 0, -1, 0, 2 }, b[6] = { 0 };
  g_autoptr (ClinferTensor) ta = op_test_tensor (CLINFER_TYPE_I32, 2, xd, a);
  g_autoptr (ClinferTensor) tb = op_test_tensor (CLINFER_TYPE_I32, 2, xd, b);
  g_autoptr (ClinferRequest) r = NULL;
  GError *err = NULL;
  const int64_t want[] = { 0, 1, 1, 1, 0, 2 };

  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, &ta, 1);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 2, y1);
  assert_i64 (clinfer_request_get_output (r, 0), want, 6);
  g_assert_true (clinfer_request_set_input (r, "x", tb, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 2, y2);
}

/* Range of constants folds at compile time: no step remains. */
static void
test_range_constant_folds (void)
{
  ClinferGraph *g = clinfer_graph_new ("range", "<test>");
  int32_t s = 10, l = 1, d = -4;
  ClinferNode *in[3] = {
    op_test_constant (g, "start", CLINFER_TYPE_I32, 0, NULL, &s),
    op_test_constant (g, "limit", CLINFER_TYPE_I32, 0, NULL, &l),
    op_test_constant (g, "delta", CLINFER_TYPE_I32, 0, NULL, &d),
  };
  ClinferNode *n = add_node (g, "Range", "rg", in, 3, 1);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  const int32_t *y;

  add_outputs (g, n);
  m = op_test_model (g, 11, &err);
  c = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_compiled_get_n_steps (c), ==, 0);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_cmpint (clinfer_tensor_get_n_elements (clinfer_request_get_output (r, 0)),
      ==, 3);
  y = clinfer_tensor_get_const_data (clinfer_request_get_output (r, 0));
  g_assert_cmpint (y[0], ==, 10);
  g_assert_cmpint (y[1], ==, 6);
  g_assert_cmpint (y[2], ==, 2);
}

/* ---- layout ---- */

static void
test_pad_reflect (void)
{
  ClinferGraph *g = clinfer_graph_new ("pad", "<test>");
  int64_t xd[] = { 2, 3 }, pd[] = { 4 }, yd[] = { 2, 7 };
  int64_t pads[] = { 0, 2, 0, 2 };
  float xv[] = { 1, 2, 3, 4, 5, 6 };
  ClinferShape xs = clinfer_shape_make (2, xd);
  ClinferNode *in[2] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    op_test_constant (g, "pads", CLINFER_TYPE_I64, 1, pd, pads),
  };
  ClinferNode *n = add_node (g, "Pad", "pad", in, 2, 1);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 2, xd, xv);
  g_autoptr (ClinferRequest) r = NULL;
  const float want[] = { 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4 };

  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("reflect"));
  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, &x, 1);
  op_test_assert_shape (clinfer_request_get_output (r, 0), 2, yd);
  assert_f32 (clinfer_request_get_output (r, 0), want, 14);
}

/* Split sizes from a graph input: output extents known at run time only. */
static void
test_split_runtime_sizes (void)
{
  ClinferGraph *g = clinfer_graph_new ("split", "<test>");
  int64_t xd[] = { 5 }, sd[] = { 2 }, sv[] = { 3, 2 };
  int16_t xv[] = { 1, 2, 3, 4, 5 };
  ClinferShape xs = clinfer_shape_make (1, xd), ss = clinfer_shape_make (1, sd);
  ClinferNode *in[2] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_I16, &xs),
    clinfer_graph_add_input (g, "split", CLINFER_TYPE_I64, &ss),
  };
  ClinferNode *n = add_node (g, "Split", "sp", in, 2, 2);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_I16, 1, xd, xv);
  g_autoptr (ClinferTensor) s = op_test_tensor (CLINFER_TYPE_I64, 1, sd, sv);
  ClinferTensor *args[2] = { x, s };
  g_autoptr (ClinferRequest) r = NULL;
  const int16_t *b;

  add_outputs (g, n);
  r = op_test_run_compiled (g, 13, args, 2);
  g_assert_cmpint (clinfer_tensor_get_n_elements (clinfer_request_get_output (r, 0)),
      ==, 3);
  b = clinfer_tensor_get_const_data (clinfer_request_get_output (r, 1));
  g_assert_cmpint (clinfer_tensor_get_n_elements (clinfer_request_get_output (r, 1)),
      ==, 2);
  g_assert_cmpint (b[0], ==, 4);
  g_assert_cmpint (b[1], ==, 5);
}

/* ---- errors ---- */

static void
test_gather_elements_rejects_out_of_range (void)
{
  ClinferGraph *g = clinfer_graph_new ("ge", "<test>");
  int64_t xd[] = { 3 }, id[] = { 2 }, iv[] = { 1, 3 };
  ClinferShape xs = clinfer_shape_make (1, xd), is = clinfer_shape_make (1, id);
  ClinferNode *in[2] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    clinfer_graph_add_input (g, "idx", CLINFER_TYPE_I64, &is),
  };
  ClinferNode *n = add_node (g, "GatherElements", "pick", in, 2, 1);
  g_autoptr (ClinferTensor) x = op_test_tensor (CLINFER_TYPE_F32, 1, xd, NULL);
  g_autoptr (ClinferTensor) i = op_test_tensor (CLINFER_TYPE_I64, 1, id, iv);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;

  add_outputs (g, n);
  m = op_test_model (g, 13, &err);
  c = clinfer_compile (m, NULL, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_set_input (r, "idx", i, &err));
  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "'pick'"));
  g_assert_nonnull (strstr (err->message, "index 3"));
  g_clear_error (&err);
}

static void
test_pad_rejects_unknown_mode (void)
{
  ClinferGraph *g = clinfer_graph_new ("pad", "<test>");
  int64_t xd[] = { 2 };
  ClinferShape xs = clinfer_shape_make (1, xd);
  ClinferNode *in[1] = { clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs) };
  ClinferNode *n = add_node (g, "Pad", "badpad", in, 1, 1);
  GError *err = NULL;

  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("wrap"));
  add_outputs (g, n);
  g_assert_null (op_test_model (g, 13, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "'badpad'"));
  g_assert_nonnull (strstr (err->message, "wrap"));
  g_clear_error (&err);
}

static void
test_topk_rejects_k_beyond_axis (void)
{
  ClinferGraph *g = clinfer_graph_new ("topk", "<test>");
  int64_t xd[] = { 2 }, kd[] = { 1 }, k = 3;
  ClinferShape xs = clinfer_shape_make (1, xd);
  ClinferNode *in[2] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    op_test_constant (g, "k", CLINFER_TYPE_I64, 1, kd, &k),
  };
  ClinferNode *n = add_node (g, "TopK", "top", in, 2, 2);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;

  add_outputs (g, n);
  m = op_test_model (g, 11, &err);
  g_assert_no_error (err);
  c = clinfer_compile (m, NULL, &err);
  g_assert_null (c);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "'top'"));
  g_clear_error (&err);
}

/* Updates of the wrong shape are refused when the model compiles, not
 * only when the CPU kernel runs. */
static void
test_scatter_nd_rejects_updates_shape (void)
{
  ClinferGraph *g = clinfer_graph_new ("snd", "<test>");
  int64_t xd[] = { 4, 3 }, id[] = { 2, 1 }, ud[] = { 2, 2 };
  ClinferShape xs = clinfer_shape_make (2, xd), is = clinfer_shape_make (2, id);
  ClinferShape us = clinfer_shape_make (2, ud);
  ClinferNode *in[3] = {
    clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs),
    clinfer_graph_add_input (g, "idx", CLINFER_TYPE_I64, &is),
    clinfer_graph_add_input (g, "upd", CLINFER_TYPE_F32, &us),
  };
  ClinferNode *n = add_node (g, "ScatterND", "scat", in, 3, 1);
  GError *err = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;

  add_outputs (g, n);
  m = op_test_model (g, 13, &err);
  g_assert_no_error (err);
  c = clinfer_compile (m, NULL, &err);
  g_assert_null (c);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (err->message, "'scat'"));
  g_assert_nonnull (strstr (err->message, "updates must have shape 2x3, not 2x2"));
  g_clear_error (&err);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/index-resize/resize/nearest-asymmetric-2x",
      test_resize_nearest_asymmetric_2x);
  g_test_add_func ("/index-resize/resize/linear-half-pixel",
      test_resize_linear_half_pixel);
  g_test_add_func ("/index-resize/resize/runtime-scales",
      test_resize_runtime_scales);
  g_test_add_func ("/index-resize/topk/ties-lower-index-first",
      test_topk_ties_lower_index_first);
  g_test_add_func ("/index-resize/nonzero/dynamic-shape",
      test_nonzero_dynamic_shape);
  g_test_add_func ("/index-resize/range/constant-folds", test_range_constant_folds);
  g_test_add_func ("/index-resize/pad/reflect", test_pad_reflect);
  g_test_add_func ("/index-resize/split/runtime-sizes", test_split_runtime_sizes);
  g_test_add_func ("/index-resize/gather-elements/rejects-out-of-range",
      test_gather_elements_rejects_out_of_range);
  g_test_add_func ("/index-resize/pad/rejects-unknown-mode",
      test_pad_rejects_unknown_mode);
  g_test_add_func ("/index-resize/scatter-nd/rejects-updates-shape",
      test_scatter_nd_rejects_updates_shape);
  g_test_add_func ("/index-resize/topk/rejects-k-beyond-axis",
      test_topk_rejects_k_beyond_axis);
  return g_test_run ();
}
