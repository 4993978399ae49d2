/* clinfer — tests of the shape ops (Reshape, Transpose, Concat, Slice,
 * Gather, ConstantOfShape, Shape, Size, Unsqueeze, Squeeze, Flatten,
 * Identity, Cast, Expand): shape inference, reference evals, errors naming
 * the node, and constant folding of a Shape -> Gather -> Concat -> Reshape
 * chain. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static ClinferNode *
param (ClinferGraph *g, const char *name, ClinferElementType type, int rank,
    const int64_t *dims)
{
  ClinferShape s = clinfer_shape_make (rank, dims);

  return clinfer_graph_add_input (g, name, type, &s);
}

static ClinferNode *
const_i64 (ClinferGraph *g, const char *name, int64_t n, const int64_t *v)
{
  return op_test_constant (g, name, CLINFER_TYPE_I64, 1, &n, v);
}

static void
prepare_ok (ClinferGraph *g)
{
  GError *err = NULL;

  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
}

static void
assert_shape (const ClinferNode *n, int rank, const int64_t *dims)
{
  ClinferShape want = clinfer_shape_make (rank, dims);

  if (!clinfer_shape_equal (&n->outputs[0].shape, &want)) {
    g_autofree char *got = clinfer_shape_to_string (&n->outputs[0].shape);
    g_autofree char *exp = clinfer_shape_to_string (&want);
    g_test_fail_printf ("%s: shape %s, expected %s", clinfer_node_label (n),
        got, exp);
  }
}

static void
assert_doubles (const ClinferTensor *t, const double *want, int64_t n)
{
  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, n);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat (clinfer_tensor_get_as_double (t, i), ==, want[i]);
}

static ClinferTensor *
iota_f32 (int rank, const int64_t *dims)
{
  ClinferTensor *t = op_test_f32 (rank, dims, NULL);
  float *p = clinfer_tensor_get_data (t);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    p[i] = (float) i;
  return t;
}

/* ---------------------------------------------------------------- */
/* Reshape                                                           */

static void
test_reshape_zero_and_minus_one (void)
{
  int64_t xd[] = { 2, 3, 4 }, spec[] = { 0, -1 }, want[] = { 2, 12 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (3, xd), y = NULL;
  g_autoptr (ClinferTensor) s = op_test_i64 (1, (int64_t[]) { 2 }, spec);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 3, xd),
    const_i64 (g, "shape", 2, spec) };
  ClinferNode *n = op_test_node (g, "Reshape", "", "reshape", 2, in, 1);
  ClinferTensor *inputs[] = { x, s };

  prepare_ok (g);
  assert_shape (n, 2, want);
  g_assert_true (n->def->flags & CLINFER_OP_SHAPE_NEEDS_VALUES);
  y = op_test_eval_output (n, inputs);
  g_assert_cmpfloat (clinfer_tensor_get_as_double (y, 23), ==, 23.0);
}

static void
test_reshape_attribute_form_and_allowzero (void)
{
  int64_t xd[] = { 2, 3, 4 }, spec[] = { 4, -1 }, want[] = { 4, 6 };
  int64_t zd[] = { 0, 3 }, zspec[] = { 3, 0 }, zwant[] = { 3, 0 };
  g_autoptr (ClinferGraph) g = op_test_graph (4);
  g_autoptr (ClinferGraph) g14 = op_test_graph (14);
  ClinferNode *x = param (g, "x", CLINFER_TYPE_F32, 3, xd), *n, *in[2];

  n = op_test_node (g, "Reshape", "", "reshape_v1", 1, &x, 1);
  clinfer_node_set_attr (n, "shape", clinfer_attr_new_ints (spec, 2));
  prepare_ok (g);
  assert_shape (n, 2, want);
  in[0] = param (g14, "x", CLINFER_TYPE_F32, 2, zd);
  in[1] = const_i64 (g14, "shape", 2, zspec);
  n = op_test_node (g14, "Reshape", "", "reshape_zero", 2, in, 1);
  clinfer_node_set_attr (n, "allowzero", clinfer_attr_new_int (1));
  prepare_ok (g14);
  assert_shape (n, 2, zwant);
}

static void
test_reshape_unknown_shape_is_dynamic (void)
{
  int64_t xd[] = { 2, 3, 4 }, sd[] = { 3 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 3, xd),
    param (g, "shape", CLINFER_TYPE_I64, 1, sd) };
  ClinferNode *n = op_test_node (g, "Reshape", "", "reshape", 2, in, 1);

  prepare_ok (g);
  g_assert_cmpint (n->outputs[0].shape.rank, ==, 3);
  for (int i = 0; i < 3; i++)
    g_assert_cmpint (n->outputs[0].shape.dims[i], ==, CLINFER_DIM_DYNAMIC);
}

static void
test_reshape_rejects_bad_count (void)
{
  int64_t xd[] = { 2, 3, 4 }, spec[] = { 5, -1 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 3, xd),
    const_i64 (g, "shape", 2, spec) };

  op_test_node (g, "Reshape", "", "bad_reshape", 2, in, 1);
  op_test_assert_node_error (g, "bad_reshape", CLINFER_ERROR_SHAPE_MISMATCH);
}

/* ---------------------------------------------------------------- */
/* Transpose, Concat                                                 */

static void
test_transpose (void)
{
  int64_t xd[] = { 2, 3, 4 }, want[] = { 4, 3, 2 }, perm[] = { 0, 2, 1 };
  int64_t want2[] = { 2, 4, 3 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (3, xd), y = NULL, y2 = NULL;
  ClinferNode *in = param (g, "x", CLINFER_TYPE_F32, 3, xd);
  ClinferNode *rev = op_test_node (g, "Transpose", "", "reverse", 1, &in, 1);
  ClinferNode *p = op_test_node (g, "Transpose", "", "perm", 1, &in, 1);

  clinfer_node_set_attr (p, "perm", clinfer_attr_new_ints (perm, 3));
  prepare_ok (g);
  assert_shape (rev, 3, want);
  assert_shape (p, 3, want2);
  y = op_test_eval_output (rev, &x);
  y2 = op_test_eval_output (p, &x);
  /* y[k][j][i] = x[i][j][k] = i * 12 + j * 4 + k */
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 2; i++) {
        g_assert_cmpfloat (clinfer_tensor_get_as_double (y, (k * 3 + j) * 2 + i),
            ==, i * 12 + j * 4 + k);
        g_assert_cmpfloat (clinfer_tensor_get_as_double (y2, (i * 4 + k) * 3 + j),
            ==, i * 12 + j * 4 + k);
      }
}

static void
test_transpose_rejects_bad_perm (void)
{
  int64_t xd[] = { 2, 3, 4 }, perm[] = { 0, 0, 1 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *in = param (g, "x", CLINFER_TYPE_F32, 3, xd);
  ClinferNode *n = op_test_node (g, "Transpose", "", "bad_perm", 1, &in, 1);

  clinfer_node_set_attr (n, "perm", clinfer_attr_new_ints (perm, 3));
  op_test_assert_node_error (g, "bad_perm", CLINFER_ERROR_INVALID_ARGUMENT);
}

static void
test_concat_negative_axis (void)
{
  int64_t ad[] = { 2, 2 }, bd[] = { 2, 3 }, want[] = { 2, 5 };
  const double values[] = { 0, 1, 0, 1, 2, 2, 3, 3, 4, 5 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) a = iota_f32 (2, ad), b = iota_f32 (2, bd), y = NULL;
  ClinferNode *in[2] = { param (g, "a", CLINFER_TYPE_F32, 2, ad),
    param (g, "b", CLINFER_TYPE_F32, 2, bd) };
  ClinferNode *n = op_test_node (g, "Concat", "", "concat", 2, in, 1);
  ClinferTensor *inputs[] = { a, b };

  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (-1));
  prepare_ok (g);
  assert_shape (n, 2, want);
  y = op_test_eval_output (n, inputs);
  assert_doubles (y, values, 10);
}

static void
test_concat_rejects_axis_out_of_range (void)
{
  int64_t ad[] = { 2, 2 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *in[2] = { param (g, "a", CLINFER_TYPE_F32, 2, ad),
    param (g, "b", CLINFER_TYPE_F32, 2, ad) };
  ClinferNode *n = op_test_node (g, "Concat", "", "bad_concat", 2, in, 1);

  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (2));
  op_test_assert_node_error (g, "bad_concat", CLINFER_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- */
/* Slice, Gather                                                     */

/* Slice of @xd-shaped iota data with constant parameters (NULL = absent). */
static ClinferTensor *
slice (int rank, const int64_t *xd, gsize n, const int64_t *starts,
    const int64_t *ends, const int64_t *axes, const int64_t *steps,
    ClinferShape *shape)
{
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (rank, xd);
  ClinferNode *in[5] = { param (g, "x", CLINFER_TYPE_F32, rank, xd),
    const_i64 (g, "starts", n, starts), const_i64 (g, "ends", n, ends),
    axes ? const_i64 (g, "axes", n, axes) : NULL,
    steps ? const_i64 (g, "steps", n, steps) : NULL };
  ClinferNode *s = op_test_node (g, "Slice", "", "slice", 5, in, 1);
  ClinferTensor *inputs[5] = { x };

  for (int i = 1; i < 5; i++)
    inputs[i] = in[i] ? in[i]->outputs[0].value : NULL;
  prepare_ok (g);
  *shape = s->outputs[0].shape;
  return op_test_eval_output (s, inputs);
}

static void
test_slice_clamping_and_steps (void)
{
  int64_t xd[] = { 10 }, md[] = { 3, 4 };
  int64_t s1[] = { -100 }, e1[] = { 100 }, st1[] = { 3 };
  int64_t s2[] = { -1 }, e2[] = { -100 }, st2[] = { -4 };
  int64_t s3[] = { 1 }, e3[] = { 1000 }, ax3[] = { -1 };
  const double v1[] = { 0, 3, 6, 9 }, v2[] = { 9, 5, 1 };
  const double v3[] = { 1, 2, 3, 5, 6, 7, 9, 10, 11 };
  ClinferShape s;
  g_autoptr (ClinferTensor) y1 = slice (1, xd, 1, s1, e1, NULL, st1, &s);
  g_autoptr (ClinferTensor) y2 = NULL, y3 = NULL;

  assert_doubles (y1, v1, 4);
  y2 = slice (1, xd, 1, s2, e2, NULL, st2, &s);
  assert_doubles (y2, v2, 3);
  y3 = slice (2, md, 1, s3, e3, ax3, NULL, &s);
  g_assert_cmpint (s.dims[0], ==, 3);
  g_assert_cmpint (s.dims[1], ==, 3);
  assert_doubles (y3, v3, 9);
}

static void
test_slice_attribute_form_and_dynamic (void)
{
  int64_t xd[] = { 4, 6 }, starts[] = { 1, -3 }, ends[] = { 3, G_MAXINT64 };
  int64_t want[] = { 2, 3 }, pd[] = { 2 };
  g_autoptr (ClinferGraph) g = op_test_graph (9);
  g_autoptr (ClinferGraph) g13 = op_test_graph (13);
  ClinferNode *x = param (g, "x", CLINFER_TYPE_F32, 2, xd), *n, *in[3];

  n = op_test_node (g, "Slice", "", "slice_v1", 1, &x, 1);
  clinfer_node_set_attr (n, "starts", clinfer_attr_new_ints (starts, 2));
  clinfer_node_set_attr (n, "ends", clinfer_attr_new_ints (ends, 2));
  prepare_ok (g);
  assert_shape (n, 2, want);
  /* Parameters known only at run time: rank kept, extents dynamic. */
  in[0] = param (g13, "x", CLINFER_TYPE_F32, 2, xd);
  in[1] = param (g13, "starts", CLINFER_TYPE_I64, 1, pd);
  in[2] = const_i64 (g13, "ends", 2, ends);
  n = op_test_node (g13, "Slice", "", "slice_dyn", 3, in, 1);
  prepare_ok (g13);
  g_assert_cmpint (n->outputs[0].shape.rank, ==, 2);
  g_assert_cmpint (n->outputs[0].shape.dims[1], ==, CLINFER_DIM_DYNAMIC);
  g_assert_true (n->def->flags & CLINFER_OP_SHAPE_NEEDS_VALUES);
}

static void
test_gather_negative_index (void)
{
  int64_t xd[] = { 3, 2 }, idx[] = { -1, 0 }, want[] = { 2, 2 }, n2 = 2;
  const double values[] = { 4, 5, 0, 1 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (2, xd), y = NULL, ys = NULL;
  g_autoptr (ClinferTensor) it = op_test_i64 (1, &n2, idx);
  g_autoptr (ClinferTensor) scalar = op_test_i64 (0, NULL, (int64_t[]) { -1 });
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 2, xd),
    const_i64 (g, "idx", 2, idx) };
  ClinferNode *n = op_test_node (g, "Gather", "", "gather", 2, in, 1), *ns;
  ClinferTensor *inputs[] = { x, it }, *inputs_s[] = { x, scalar };
  const double col[] = { 1, 3, 5 };

  in[1] = clinfer_graph_add_constant (g, "scalar", scalar);
  ns = op_test_node (g, "Gather", "", "gather_scalar", 2, in, 1);
  clinfer_node_set_attr (ns, "axis", clinfer_attr_new_int (-1));
  prepare_ok (g);
  assert_shape (n, 2, want);
  assert_shape (ns, 1, (int64_t[]) { 3 });
  y = op_test_eval_output (n, inputs);
  assert_doubles (y, values, 4);
  ys = op_test_eval_output (ns, inputs_s);
  assert_doubles (ys, col, 3);
}

static void
test_gather_rejects_index_out_of_range (void)
{
  int64_t xd[] = { 3, 2 }, idx[] = { 3 }, one = 1;
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (2, xd);
  g_autoptr (ClinferTensor) it = op_test_i64 (1, &one, idx);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 2, xd),
    param (g, "idx", CLINFER_TYPE_I64, 1, &one) };
  ClinferNode *n = op_test_node (g, "Gather", "", "bad_gather", 2, in, 1);
  ClinferTensor *inputs[] = { x, it };
  GError *err = NULL;

  prepare_ok (g);
  g_assert_null (op_test_eval (n, inputs, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "bad_gather"));
  g_error_free (err);
}

/* ---------------------------------------------------------------- */
/* ConstantOfShape, Shape, Size                                      */

static void
test_constant_of_shape (void)
{
  int64_t dims[] = { 2, 3 }, seven = 7, one = 1, two = 2;
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) v = op_test_i64 (1, &one, &seven);
  g_autoptr (ClinferTensor) st = op_test_i64 (1, &two, dims), y = NULL, yz = NULL;
  ClinferNode *s = const_i64 (g, "shape", 2, dims);
  ClinferNode *n = op_test_node (g, "ConstantOfShape", "", "fill", 1, &s, 1);
  ClinferNode *z = op_test_node (g, "ConstantOfShape", "", "zeros", 1, &s, 1);
  ClinferNode *p = param (g, "dyn", CLINFER_TYPE_I64, 1, &two);
  ClinferNode *d = op_test_node (g, "ConstantOfShape", "", "dyn_fill", 1, &p, 1);

  clinfer_node_set_attr (n, "value", clinfer_attr_new_tensor (v));
  prepare_ok (g);
  assert_shape (n, 2, dims);
  g_assert_cmpint (n->outputs[0].type, ==, CLINFER_TYPE_I64);
  g_assert_cmpint (z->outputs[0].type, ==, CLINFER_TYPE_F32);
  g_assert_cmpint (d->outputs[0].shape.rank, ==, 2);
  g_assert_cmpint (d->outputs[0].shape.dims[0], ==, CLINFER_DIM_DYNAMIC);
  y = op_test_eval_output (n, &st);
  yz = op_test_eval_output (z, &st);
  for (int i = 0; i < 6; i++) {
    g_assert_cmpint (clinfer_tensor_get_as_int64 (y, i), ==, 7);
    g_assert_cmpfloat (clinfer_tensor_get_as_double (yz, i), ==, 0.0);
  }
}

static void
test_shape_start_end_and_size (void)
{
  int64_t xd[] = { 2, 3, 4, 5 };
  const double want[] = { 3, 4 }, all[] = { 2, 3, 4, 5 }, count[] = { 120 };
  g_autoptr (ClinferGraph) g = op_test_graph (15);
  g_autoptr (ClinferTensor) x = iota_f32 (4, xd), y = NULL, ya = NULL, ys = NULL;
  ClinferNode *in = param (g, "x", CLINFER_TYPE_F32, 4, xd);
  ClinferNode *s = op_test_node (g, "Shape", "", "shape", 1, &in, 1);
  ClinferNode *a = op_test_node (g, "Shape", "", "shape_all", 1, &in, 1);
  ClinferNode *z = op_test_node (g, "Size", "", "size", 1, &in, 1);

  clinfer_node_set_attr (s, "start", clinfer_attr_new_int (1));
  clinfer_node_set_attr (s, "end", clinfer_attr_new_int (-1));
  prepare_ok (g);
  assert_shape (s, 1, (int64_t[]) { 2 });
  assert_shape (z, 0, NULL);
  y = op_test_eval_output (s, &x);
  ya = op_test_eval_output (a, &x);
  ys = op_test_eval_output (z, &x);
  assert_doubles (y, want, 2);
  assert_doubles (ya, all, 4);
  assert_doubles (ys, count, 1);
}

/* ---------------------------------------------------------------- */
/* Unsqueeze, Squeeze, Flatten, Identity, Expand                     */

static void
test_unsqueeze_squeeze (void)
{
  int64_t xd[] = { 3 }, axes[] = { 0, -1 }, want[] = { 1, 3, 1 }, last[] = { -1 };
  int64_t sd[] = { 1, 3, 1 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferGraph) g11 = op_test_graph (11);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 1, xd),
    const_i64 (g, "axes", 2, axes) };
  ClinferNode *u = op_test_node (g, "Unsqueeze", "", "unsqueeze", 2, in, 1);
  ClinferNode *sq_all, *sq_last, *u11, *x11;

  in[0] = param (g, "y", CLINFER_TYPE_F32, 3, sd);
  sq_all = op_test_node (g, "Squeeze", "", "squeeze_all", 1, in, 1);
  in[1] = const_i64 (g, "last", 1, last);
  sq_last = op_test_node (g, "Squeeze", "", "squeeze_last", 2, in, 1);
  x11 = param (g11, "x", CLINFER_TYPE_F32, 1, xd);
  u11 = op_test_node (g11, "Unsqueeze", "", "unsqueeze_v11", 1, &x11, 1);
  clinfer_node_set_attr (u11, "axes", clinfer_attr_new_ints (axes, 2));
  prepare_ok (g);
  prepare_ok (g11);
  assert_shape (u, 3, want);
  assert_shape (u11, 3, want);
  assert_shape (sq_all, 1, xd);
  assert_shape (sq_last, 2, (int64_t[]) { 1, 3 });
}

static void
test_squeeze_rejects_non_unit_axis (void)
{
  int64_t xd[] = { 1, 3, 1 }, axes[] = { 1 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 3, xd),
    const_i64 (g, "axes", 1, axes) };

  op_test_node (g, "Squeeze", "", "bad_squeeze", 2, in, 1);
  op_test_assert_node_error (g, "bad_squeeze", CLINFER_ERROR_SHAPE_MISMATCH);
}

static void
test_flatten_and_identity (void)
{
  int64_t xd[] = { 2, 3, 4, 5 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (4, xd), y = NULL;
  ClinferNode *in = param (g, "x", CLINFER_TYPE_F32, 4, xd);
  ClinferNode *f2 = op_test_node (g, "Flatten", "", "flatten2", 1, &in, 1);
  ClinferNode *f0 = op_test_node (g, "Flatten", "", "flatten0", 1, &in, 1);
  ClinferNode *fn = op_test_node (g, "Flatten", "", "flatten_neg", 1, &in, 1);
  ClinferNode *id = op_test_node (g, "Identity", "", "identity", 1, &in, 1);

  clinfer_node_set_attr (f2, "axis", clinfer_attr_new_int (2));
  clinfer_node_set_attr (f0, "axis", clinfer_attr_new_int (0));
  clinfer_node_set_attr (fn, "axis", clinfer_attr_new_int (-1));
  prepare_ok (g);
  assert_shape (f2, 2, (int64_t[]) { 6, 20 });
  assert_shape (f0, 2, (int64_t[]) { 1, 120 });
  assert_shape (fn, 2, (int64_t[]) { 24, 5 });
  assert_shape (id, 4, xd);
  y = op_test_eval_output (id, &x);
  g_assert_cmpint (memcmp (clinfer_tensor_get_const_data (y),
          clinfer_tensor_get_const_data (x), 120 * sizeof (float)), ==, 0);
}

static void
test_expand (void)
{
  int64_t xd[] = { 3, 1 }, target[] = { 2, 1, 4 }, want[] = { 2, 3, 4 }, n3 = 3;
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) x = iota_f32 (2, xd), y = NULL;
  g_autoptr (ClinferTensor) t = op_test_i64 (1, &n3, target);
  ClinferNode *in[2] = { param (g, "x", CLINFER_TYPE_F32, 2, xd),
    const_i64 (g, "target", 3, target) };
  ClinferNode *n = op_test_node (g, "Expand", "", "expand", 2, in, 1);
  ClinferTensor *inputs[] = { x, t };

  prepare_ok (g);
  assert_shape (n, 3, want);
  y = op_test_eval_output (n, inputs);
  for (int i = 0; i < 24; i++)
    g_assert_cmpfloat (clinfer_tensor_get_as_double (y, i), ==, (i / 4) % 3);
}

/* ---------------------------------------------------------------- */
/* Cast                                                              */

static ClinferTensor *
cast_to (const ClinferTensor *x, ClinferElementType to)
{
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  const ClinferShape *s = clinfer_tensor_get_shape (x);
  ClinferNode *in = clinfer_graph_add_input (g, "x",
      clinfer_tensor_get_element_type (x), s);
  ClinferNode *n = op_test_node (g, "Cast", "", "cast", 1, &in, 1);
  ClinferTensor *xin = (ClinferTensor *) x;

  clinfer_node_set_attr (n, "to", clinfer_attr_new_int (to));
  prepare_ok (g);
  g_assert_cmpint (n->outputs[0].type, ==, to);
  return op_test_eval_output (n, &xin);
}

static void
test_cast (void)
{
  const float xv[] = { 1.5f, -2.7f, 300.f, NAN };
  const double to_i32[] = { 1, -2, 300, 0 }, to_u8[] = { 1, 254, 44, 0 };
  const double to_bool[] = { 1, 1, 1, 1 }, back[] = { 1.5, -2.69921875, 300, 0 };
  int64_t n4 = 4;
  g_autoptr (ClinferTensor) x = op_test_f32 (1, &n4, xv);
  g_autoptr (ClinferTensor) i32 = cast_to (x, CLINFER_TYPE_I32);
  g_autoptr (ClinferTensor) u8 = cast_to (x, CLINFER_TYPE_U8);
  g_autoptr (ClinferTensor) half = cast_to (x, CLINFER_TYPE_F16);
  g_autoptr (ClinferTensor) i64 = cast_to (i32, CLINFER_TYPE_I64);
  g_autoptr (ClinferTensor) f = cast_to (i64, CLINFER_TYPE_F32);
  g_autoptr (ClinferTensor) b = cast_to (x, CLINFER_TYPE_BOOL);
  g_autoptr (ClinferTensor) hf = cast_to (half, CLINFER_TYPE_F64);

  assert_doubles (i32, to_i32, 4);
  assert_doubles (u8, to_u8, 4);
  assert_doubles (i64, to_i32, 4);
  assert_doubles (f, to_i32, 4);
  assert_doubles (b, to_bool, 4);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat (clinfer_tensor_get_as_double (hf, i), ==, back[i]);
  g_assert_true (isnan (clinfer_tensor_get_as_double (hf, 3)));
}

/* ---------------------------------------------------------------- */
/* Constant folding of a shape chain                                 */

static void
test_fold_shape_chain (void)
{
  int64_t xd[] = { 2, 3, 4 }, zero[] = { 0 }, minus_one[] = { -1 }, want[] = { 2, 12 };
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (ClinferTensor) zi = op_test_i64 (0, NULL, zero);
  ClinferPassContext ctx = { NULL, 13 };
  ClinferNode *x = param (g, "x", CLINFER_TYPE_F32, 3, xd), *in[2];
  ClinferNode *shape, *gather, *unsq, *concat, *reshape, *cos;
  ClinferPortDesc *spec;
  gboolean changed = FALSE;
  GError *err = NULL;

  shape = op_test_node (g, "Shape", "", "shape", 1, &x, 1);
  in[0] = shape;
  in[1] = clinfer_graph_add_constant (g, "zero", zi);
  gather = op_test_node (g, "Gather", "", "gather", 2, in, 1);
  in[0] = gather;
  in[1] = const_i64 (g, "axes", 1, zero);
  unsq = op_test_node (g, "Unsqueeze", "", "unsqueeze", 2, in, 1);
  in[0] = unsq;
  in[1] = const_i64 (g, "minus_one", 1, minus_one);
  concat = op_test_node (g, "Concat", "", "concat", 2, in, 1);
  clinfer_node_set_attr (concat, "axis", clinfer_attr_new_int (0));
  in[0] = x;
  in[1] = concat;
  reshape = op_test_node (g, "Reshape", "", "reshape", 2, in, 1);
  cos = op_test_node (g, "ConstantOfShape", "", "cos", 1, &shape, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { reshape, 0 }, "y");
  clinfer_graph_add_output (g, (ClinferPortRef) { cos, 0 }, "zeros");
  prepare_ok (g);
  g_assert_true (clinfer_pass_fold_constants (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_true (changed);
  prepare_ok (g);
  spec = clinfer_node_input_desc (reshape, 1);
  g_assert_nonnull (spec->value);
  g_assert_cmpint (clinfer_tensor_get_as_int64 (spec->value, 0), ==, 2);
  assert_shape (reshape, 2, want);
  g_assert_nonnull (g_array_index (g->outputs, ClinferGraphOutput, 1).ref.node
      ->outputs[0].value);
}

/* ---------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shape-ops/reshape/zero-and-minus-one", test_reshape_zero_and_minus_one);
  g_test_add_func ("/shape-ops/reshape/attribute-form-and-allowzero", test_reshape_attribute_form_and_allowzero);
  g_test_add_func ("/shape-ops/reshape/unknown-shape-is-dynamic", test_reshape_unknown_shape_is_dynamic);
  g_test_add_func ("/shape-ops/reshape/test_reshape_rejects_bad_count", test_reshape_rejects_bad_count);
  g_test_add_func ("/shape-ops/transpose/perms", test_transpose);
  g_test_add_func ("/shape-ops/transpose/test_transpose_rejects_bad_perm", test_transpose_rejects_bad_perm);
  g_test_add_func ("/shape-ops/concat/negative-axis", test_concat_negative_axis);
  g_test_add_func ("/shape-ops/concat/test_concat_rejects_axis_out_of_range", test_concat_rejects_axis_out_of_range);
  g_test_add_func ("/shape-ops/slice/clamping-and-steps", test_slice_clamping_and_steps);
  g_test_add_func ("/shape-ops/slice/attribute-form-and-dynamic", test_slice_attribute_form_and_dynamic);
  g_test_add_func ("/shape-ops/gather/negative-index", test_gather_negative_index);
  g_test_add_func ("/shape-ops/gather/test_gather_rejects_index_out_of_range", test_gather_rejects_index_out_of_range);
  g_test_add_func ("/shape-ops/constant-of-shape", test_constant_of_shape);
  g_test_add_func ("/shape-ops/shape-start-end-and-size", test_shape_start_end_and_size);
  g_test_add_func ("/shape-ops/unsqueeze-squeeze", test_unsqueeze_squeeze);
  g_test_add_func ("/shape-ops/squeeze/test_squeeze_rejects_non_unit_axis", test_squeeze_rejects_non_unit_axis);
  g_test_add_func ("/shape-ops/flatten-and-identity", test_flatten_and_identity);
  g_test_add_func ("/shape-ops/expand", test_expand);
  g_test_add_func ("/shape-ops/cast", test_cast);
  g_test_add_func ("/shape-ops/fold-shape-chain", test_fold_shape_chain);
  return g_test_run ();
}
