/* clinfer — unit tests of the ONNX frontend on the fixtures made by
 * scripts/make-onnx-test-models.py (tests/data/onnx) and the BlazeFace
 * models: structure, constants, attributes, subgraphs and error cases. */
#include "frontend/onnx/onnx-reader.h"
#include <clinfer/clinfer.h>
#include <glib/gstdio.h>
#include <string.h>

/* ---- helpers ---- */

/* $CLINFER_SOURCE_ROOT (set by meson) or relative to G_TEST_SRCDIR
 * (tests/engine). */
static char *
source_path (const char *dir1, const char *dir2, const char *name)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");

  if (root && *root)
    return g_build_filename (root, dir1, dir2, name, NULL);
  return g_test_build_filename (G_TEST_DIST, "..", "..", dir1, dir2, name,
      NULL);
}

static char *
fixture_path (const char *name)
{
  return source_path ("tests", "data/onnx", name);
}

static char *
blazeface_path (const char *name)
{
  return source_path ("models", "blazeface", name);
}

static gboolean
have_file (const char *path)
{
  g_autofree char *msg = NULL;

  if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return TRUE;
  msg = g_strdup_printf ("%s not found (set CLINFER_SOURCE_ROOT)", path);
  g_test_skip (msg);
  return FALSE;
}

static ClinferGraph *
read_fixture (const char *name)
{
  g_autofree char *path = fixture_path (name);
  g_autoptr (GError) err = NULL;
  ClinferGraph *g;

  if (!have_file (path))
    return NULL;
  g = clinfer_onnx_read (path, &err);
  g_assert_no_error (err);
  g_assert_nonnull (g);
  g_assert_cmpstr (g->origin, ==, path);
  return g;
}

/* The node producing tensor @name (any output port). */
static ClinferNode *
producer (const ClinferGraph *g, const char *name, guint *port)
{
  for (guint i = 0; i < g->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (g->nodes, i);
    for (guint j = 0; j < n->n_outputs; j++)
      if (g_strcmp0 (n->outputs[j].name, name) == 0) {
        if (port)
          *port = j;
        return n;
      }
  }
  g_assert_not_reached ();
  return NULL;
}

static guint
count_op (const ClinferGraph *g, const char *op_type)
{
  guint n = 0;

  for (guint i = 0; i < g->nodes->len; i++)
    if (strcmp (((ClinferNode *) g_ptr_array_index (g->nodes, i))->op_type,
            op_type) == 0)
      n++;
  return n;
}

/* Value of the Constant node producing @name, with its "value" attribute
 * checked to be the same tensor. */
static ClinferTensor *
constant (const ClinferGraph *g, const char *name)
{
  ClinferNode *n = producer (g, name, NULL);
  const ClinferAttr *a = clinfer_node_get_attr (n, "value");

  g_assert_cmpstr (n->op_type, ==, "Constant");
  g_assert_nonnull (a);
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_TENSOR);
  g_assert_true (a->t == n->outputs[0].value);
  return a->t;
}

static void
assert_shape (const ClinferShape *s, int rank, const int64_t *dims)
{
  g_assert_cmpint (s->rank, ==, rank);
  for (int i = 0; i < rank; i++)
    g_assert_cmpint (s->dims[i], ==, dims[i]);
}

static void
assert_values (ClinferTensor *t, ClinferElementType type, const double *v,
    int64_t n)
{
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, type);
  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, n);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat (clinfer_tensor_get_as_double (t, i), ==, v[i]);
}

/* ---- basic.onnx ---- */

static void
test_basic_structure (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  ClinferNode *add, *mul, *relu, *x;

  if (g == NULL)
    return;
  /* 13 initializers + 3 inputs + 11 nodes */
  g_assert_cmpuint (g->nodes->len, ==, 27);
  g_assert_cmpstr (g->name, ==, "basic");
  g_assert_cmpstr (g_hash_table_lookup (g->metadata, "author"), ==, "clinfer");
  g_assert_cmpstr (g_hash_table_lookup (g->metadata, "purpose"), ==, "tests");
  g_assert_cmpint (clinfer_graph_get_opset (g, ""), ==, 17);
  g_assert_cmpint (clinfer_graph_get_opset (g, "test.domain"), ==, 1);
  g_assert_cmpuint (count_op (g, "Constant"), ==, 20);
  g_assert_cmpuint (count_op (g, "Parameter"), ==, 3);

  /* Add comes before Mul in the file but still reads its output. */
  add = producer (g, "add_out", NULL);
  mul = producer (g, "mul_out", NULL);
  x = producer (g, "x", NULL);
  g_assert_cmpstr (add->op_type, ==, "Add");
  g_assert_cmpstr (add->name, ==, "add");
  g_assert_cmpint (add->opset, ==, 17);
  g_assert_cmpuint (add->n_inputs, ==, 2);
  g_assert_true (add->inputs[0].node == mul);
  g_assert_cmpuint (add->inputs[0].port, ==, 0);
  g_assert_true (add->inputs[1].node == producer (g, "b", NULL));
  g_assert_true (mul->inputs[0].node == x);
  g_assert_true (mul->inputs[1].node == producer (g, "w", NULL));
  relu = producer (g, "relu_out", NULL);
  g_assert_cmpstr (relu->domain, ==, "");      /* from "ai.onnx" */
  g_assert_true (relu->inputs[0].node == add);

  /* Outputs may name initializers and inputs directly. */
  g_assert_cmpuint (g->outputs->len, ==, 4);
  g_assert_cmpstr (g_array_index (g->outputs, ClinferGraphOutput, 0).name, ==,
      "attrs_out");
  g_assert_true (g_array_index (g->outputs, ClinferGraphOutput, 1).ref.node
      == relu);
  g_assert_true (g_array_index (g->outputs, ClinferGraphOutput, 2).ref.node
      == producer (g, "w", NULL));
  g_assert_true (g_array_index (g->outputs, ClinferGraphOutput, 3).ref.node
      == x);
}

static void
test_basic_inputs (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  ClinferNode *x, *y, *z;

  if (g == NULL)
    return;
  g_assert_cmpuint (g->inputs->len, ==, 3);
  x = g_ptr_array_index (g->inputs, 0);
  y = g_ptr_array_index (g->inputs, 1);
  z = g_ptr_array_index (g->inputs, 2);
  g_assert_cmpstr (x->op_type, ==, "Parameter");
  g_assert_cmpstr (x->outputs[0].name, ==, "x");
  g_assert_cmpint (x->outputs[0].type, ==, CLINFER_TYPE_F32);
  assert_shape (&x->outputs[0].shape, 3,
      (int64_t[]) { CLINFER_DIM_DYNAMIC, 3, 4 });
  g_assert_cmpstr (y->outputs[0].name, ==, "y");
  g_assert_cmpint (y->outputs[0].type, ==, CLINFER_TYPE_I64);
  g_assert_cmpint (y->outputs[0].shape.rank, ==, -1);
  g_assert_cmpint (z->outputs[0].type, ==, CLINFER_TYPE_U8);
  assert_shape (&z->outputs[0].shape, 2, (int64_t[]) { 2, CLINFER_DIM_DYNAMIC });
}

static void
test_basic_initializers (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  ClinferTensor *t;
  char **s;

  if (g == NULL)
    return;
  t = constant (g, "w");
  assert_shape (clinfer_tensor_get_shape (t), 2, (int64_t[]) { 3, 4 });
  assert_values (t, CLINFER_TYPE_F32, (double[]) { 0, 1, 2, 3, 4, 5, 6, 7, 8,
      9, 10, 11 }, 12);
  g_assert_cmpint (producer (g, "w", NULL)->outputs[0].type, ==,
      CLINFER_TYPE_F32);
  assert_values (constant (g, "b"), CLINFER_TYPE_F32,
      (double[]) { 0.5, 1.5, 2.5, 3.5 }, 4);
  assert_values (constant (g, "i8"), CLINFER_TYPE_I8,
      (double[]) { -1, 0, 127 }, 3);
  assert_values (constant (g, "u16"), CLINFER_TYPE_U16,
      (double[]) { 7, 65535 }, 2);
  assert_values (constant (g, "h"), CLINFER_TYPE_F16,
      (double[]) { 1.5, -2.0 }, 2);
  assert_values (constant (g, "bf"), CLINFER_TYPE_BF16,
      (double[]) { 1.5, -2.0 }, 2);
  assert_values (constant (g, "bo"), CLINFER_TYPE_BOOL,
      (double[]) { 1, 0, 1 }, 3);
  t = constant (g, "i64");
  assert_shape (clinfer_tensor_get_shape (t), 2, (int64_t[]) { 2, 1 });
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, CLINFER_TYPE_I64);
  g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 0), ==, -5);
  g_assert_cmpint (clinfer_tensor_get_as_int64 (t, 1), ==, G_GINT64_CONSTANT (1) << 40);
  assert_values (constant (g, "u32"), CLINFER_TYPE_U32,
      (double[]) { 1, 4000000000.0 }, 2);
  t = constant (g, "u64");
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, CLINFER_TYPE_U64);
  g_assert_cmpuint (((const guint64 *) clinfer_tensor_get_const_data (t))[0],
      ==, G_GUINT64_CONSTANT (1) << 63);
  assert_values (constant (g, "d"), CLINFER_TYPE_F64,
      (double[]) { 0.25, -1e300 }, 2);
  t = constant (g, "s");
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, CLINFER_TYPE_STRING);
  s = clinfer_tensor_get_data (t);
  g_assert_cmpstr (s[0], ==, "hello");
  g_assert_cmpstr (s[1], ==, "");
  t = constant (g, "empty");
  assert_shape (clinfer_tensor_get_shape (t), 2, (int64_t[]) { 0, 3 });
  g_assert_cmpint (clinfer_tensor_get_n_elements (t), ==, 0);
}

static void
test_basic_constant_nodes (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  ClinferTensor *t;
  ClinferNode *n;

  if (g == NULL)
    return;
  t = constant (g, "c_f");
  g_assert_cmpint (clinfer_tensor_get_shape (t)->rank, ==, 0);
  assert_values (t, CLINFER_TYPE_F32, (double[]) { 2.5 }, 1);
  t = constant (g, "c_fs");
  assert_shape (clinfer_tensor_get_shape (t), 1, (int64_t[]) { 2 });
  assert_values (t, CLINFER_TYPE_F32, (double[]) { 1, 2 }, 2);
  t = constant (g, "c_i");
  g_assert_cmpint (clinfer_tensor_get_shape (t)->rank, ==, 0);
  assert_values (t, CLINFER_TYPE_I64, (double[]) { 7 }, 1);
  assert_values (constant (g, "c_is"), CLINFER_TYPE_I64,
      (double[]) { 1, 2, 3 }, 3);
  t = constant (g, "c_s");
  g_assert_cmpint (clinfer_tensor_get_element_type (t), ==, CLINFER_TYPE_STRING);
  g_assert_cmpint (clinfer_tensor_get_shape (t)->rank, ==, 0);
  g_assert_cmpstr (((char **) clinfer_tensor_get_data (t))[0], ==, "str");
  t = constant (g, "c_ss");
  assert_shape (clinfer_tensor_get_shape (t), 1, (int64_t[]) { 2 });
  g_assert_cmpstr (((char **) clinfer_tensor_get_data (t))[1], ==, "q");
  /* Node name and output tensor name stay apart. */
  n = producer (g, "c_t", NULL);
  g_assert_cmpstr (n->name, ==, "ct");
  g_assert_cmpstr (n->outputs[0].name, ==, "c_t");
  g_assert_cmpint (n->outputs[0].type, ==, CLINFER_TYPE_F32);
  assert_shape (&n->outputs[0].shape, 2, (int64_t[]) { 1, 1 });
  assert_values (constant (g, "c_t"), CLINFER_TYPE_F32, (double[]) { 9 }, 1);
}

static void
check_small_graph (const ClinferGraph *sub, const ClinferGraph *parent)
{
  ClinferNode *id, *outer;

  g_assert_true (sub->parent == parent);
  g_assert_cmpstr (sub->name, ==, "attr_graph");
  g_assert_cmpuint (sub->inputs->len, ==, 0);
  /* 'x' comes from the enclosing graph: a marked Parameter, not an input. */
  id = producer (sub, "gi", NULL);
  outer = id->inputs[0].node;
  g_assert_cmpstr (outer->op_type, ==, "Parameter");
  g_assert_cmpstr (outer->outputs[0].name, ==, "x");
  g_assert_cmpint (clinfer_node_get_attr (outer, "outer_scope")->i, ==, 1);
  g_assert_cmpint (outer->outputs[0].type, ==, CLINFER_TYPE_F32);
  g_assert_cmpint (id->opset, ==, 17);
  g_assert_cmpuint (sub->outputs->len, ==, 1);
}

static void
test_basic_attributes (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  const ClinferAttr *a;
  ClinferNode *n;

  if (g == NULL)
    return;
  n = producer (g, "attrs_out", NULL);
  g_assert_cmpstr (n->op_type, ==, "Attrs");
  g_assert_cmpstr (n->domain, ==, "test.domain");
  g_assert_cmpint (n->opset, ==, 1);
  g_assert_cmpuint (n->n_inputs, ==, 3);
  g_assert_true (n->inputs[0].node == producer (g, "add_out", NULL));
  g_assert_null (n->inputs[1].node);              /* "" = absent */
  g_assert_true (n->inputs[2].node == producer (g, "c_f", NULL));
  /* The unused optional output gets a unique generated name. */
  g_assert_cmpuint (n->n_outputs, ==, 2);
  g_assert_cmpstr (n->outputs[1].name, !=, "");
  g_assert_cmpstr (n->outputs[1].name, !=, n->outputs[0].name);
  g_assert_cmpuint (g_hash_table_size (n->attrs), ==, 10);

  g_assert_cmpfloat (clinfer_node_get_attr (n, "f")->f, ==, 0.5f);
  g_assert_cmpint (clinfer_node_get_attr (n, "i")->i, ==, -3);
  g_assert_cmpstr (clinfer_node_get_attr (n, "s")->s, ==, "text");
  a = clinfer_node_get_attr (n, "t");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_TENSOR);
  assert_values (a->t, CLINFER_TYPE_I32, (double[]) { 1, 2 }, 2);
  a = clinfer_node_get_attr (n, "floats");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_FLOATS);
  g_assert_cmpuint (a->floats.n, ==, 2);
  g_assert_cmpfloat (a->floats.v[1], ==, 2.0f);
  a = clinfer_node_get_attr (n, "ints");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_INTS);
  g_assert_cmpuint (a->ints.n, ==, 3);
  g_assert_cmpint (a->ints.v[2], ==, 6);
  a = clinfer_node_get_attr (n, "strings");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_STRINGS);
  g_assert_cmpuint (a->strings.n, ==, 2);
  g_assert_cmpstr (a->strings.v[1], ==, "bc");
  a = clinfer_node_get_attr (n, "tensors");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_TENSORS);
  g_assert_cmpuint (a->tensors.n, ==, 2);
  assert_values (a->tensors.v[1], CLINFER_TYPE_I32, (double[]) { 1, 2 }, 2);
  a = clinfer_node_get_attr (n, "g");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_GRAPH);
  check_small_graph (a->g, g);
  a = clinfer_node_get_attr (n, "graphs");
  g_assert_cmpint (a->type, ==, CLINFER_ATTR_GRAPHS);
  g_assert_cmpuint (a->graphs.n, ==, 2);
  check_small_graph (a->graphs.v[0], g);
  check_small_graph (a->graphs.v[1], g);
}

/* Copy and topological order work on what the reader makes. */
static void
test_basic_copy_and_order (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("basic.onnx");
  g_autoptr (ClinferGraph) copy = NULL;
  g_autoptr (GPtrArray) order = NULL;
  g_autoptr (GError) err = NULL;
  gint mul_pos = -1, add_pos = -1;

  if (g == NULL)
    return;
  order = clinfer_graph_topological_order (g, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (order->len, ==, g->nodes->len);
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *n = g_ptr_array_index (order, i);
    if (strcmp (n->op_type, "Mul") == 0)
      mul_pos = i;
    if (strcmp (n->op_type, "Add") == 0)
      add_pos = i;
  }
  g_assert_cmpint (mul_pos, >=, 0);
  g_assert_cmpint (mul_pos, <, add_pos);
  copy = clinfer_graph_copy (g);
  g_assert_cmpuint (copy->nodes->len, ==, g->nodes->len);
}

/* ---- subgraphs ---- */

static ClinferNode *
only_node_of (const ClinferGraph *g, const char *op_type)
{
  for (guint i = 0; i < g->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (g->nodes, i);
    if (strcmp (n->op_type, op_type) == 0)
      return n;
  }
  g_assert_not_reached ();
  return NULL;
}

static void
assert_outer_param (const ClinferGraph *g, const char *name)
{
  ClinferNode *p = producer (g, name, NULL);

  g_assert_cmpstr (p->op_type, ==, "Parameter");
  g_assert_cmpint (clinfer_node_get_attr (p, "outer_scope")->i, ==, 1);
  g_assert_false (g_ptr_array_find (g->inputs, p, NULL));
  g_assert_cmpint (p->outputs[0].type, ==, CLINFER_TYPE_F32);
}

static void
test_subgraph (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("subgraph.onnx");
  ClinferNode *top_if, *abs, *else_if;
  const ClinferGraph *then_g, *else_g, *inner;

  if (g == NULL)
    return;
  g_assert_cmpuint (g->nodes->len, ==, 4);     /* 3 inputs + If */
  top_if = only_node_of (g, "If");
  g_assert_true (top_if->inputs[0].node == producer (g, "cond", NULL));
  then_g = clinfer_node_get_attr (top_if, "then_branch")->g;
  else_g = clinfer_node_get_attr (top_if, "else_branch")->g;
  g_assert_true (then_g->parent == g);
  g_assert_true (else_g->parent == g);

  /* then: Abs(x) with x from the top graph */
  g_assert_cmpuint (then_g->nodes->len, ==, 2);
  abs = only_node_of (then_g, "Abs");
  g_assert_true (abs->inputs[0].node == producer (then_g, "x", NULL));
  assert_outer_param (then_g, "x");
  assert_shape (&producer (then_g, "x", NULL)->outputs[0].shape, 1,
      (int64_t[]) { 2 });

  /* else: If(cond) whose branches read y two levels up; the middle graph
   * gets outer Parameters for both so each level binds from its parent. */
  else_if = only_node_of (else_g, "If");
  assert_outer_param (else_g, "y");
  g_assert_cmpstr (producer (else_g, "cond", NULL)->op_type, ==, "Parameter");
  g_assert_true (else_if->inputs[0].node == producer (else_g, "cond", NULL));
  inner = clinfer_node_get_attr (else_if, "then_branch")->g;
  g_assert_true (inner->parent == else_g);
  assert_outer_param (inner, "y");
  g_assert_true (only_node_of (inner, "Neg")->inputs[0].node
      == producer (inner, "y", NULL));
  g_assert_cmpint (only_node_of (inner, "Neg")->opset, ==, 17);
}

/* ---- external data and tensor files ---- */

static void
test_external_data (void)
{
  g_autoptr (ClinferGraph) g = read_fixture ("ext.onnx");
  g_autofree char *path = fixture_path ("ext.onnx");
  g_autofree char *data = NULL;
  g_autoptr (GError) err = NULL;
  ClinferGraph *g2;
  gsize size;

  if (g == NULL)
    return;
  assert_values (constant (g, "ext_w"), CLINFER_TYPE_F32,
      (double[]) { 1, 2, 3 }, 3);
  /* From memory without a directory, external data cannot be found. */
  g_assert_true (g_file_get_contents (path, &data, &size, NULL));
  g2 = clinfer_onnx_read_from_data ((const guint8 *) data, size, "mem.onnx",
      NULL, &err);
  g_assert_null (g2);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_IO);
  g_assert_nonnull (strstr (err->message, "mem.onnx"));
  g_assert_nonnull (strstr (err->message, "ext.bin"));
}

static void
test_tensor_file (void)
{
  g_autofree char *path = fixture_path ("tensor.pb");
  g_autofree char *bad = fixture_path ("no-such-tensor.pb");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferTensor) t = NULL;
  g_autofree char *name = NULL;

  if (!have_file (path))
    return;
  t = clinfer_onnx_read_tensor_file (path, &name, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (name, ==, "t0");
  assert_shape (clinfer_tensor_get_shape (t), 2, (int64_t[]) { 1, 3 });
  assert_values (t, CLINFER_TYPE_I64, (double[]) { 1, -2, 3 }, 3);
  g_assert_null (clinfer_onnx_read_tensor_file (bad, NULL, &err) );
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_IO);
  g_assert_nonnull (strstr (err->message, bad));
}

/* ---- errors ---- */

static void
expect_error (const char *path, int code, const char *substring)
{
  g_autoptr (GError) err = NULL;
  ClinferGraph *g = clinfer_onnx_read (path, &err);

  g_assert_null (g);
  g_assert_nonnull (err);
  g_test_message ("%s", err->message);
  g_assert_error (err, CLINFER_ERROR, code);
  g_assert_nonnull (strstr (err->message, path));
  if (substring && strstr (err->message, substring) == NULL)
    g_error ("'%s' not in error message '%s'", substring, err->message);
}

static void
test_error_fixtures (void)
{
  static const struct {
    const char *file;
    int code;
    const char *substring;
  } cases[] = {
    { "ir-too-new.onnx", CLINFER_ERROR_UNSUPPORTED_VERSION, "IR version 10" },
    { "opset-too-new.onnx", CLINFER_ERROR_UNSUPPORTED_VERSION, "opset 99" },
    { "missing-ref.onnx", CLINFER_ERROR_PARSE, "'nope' of node Add 'adder'" },
    { "init-size-mismatch.onnx", CLINFER_ERROR_PARSE, "initializer 'short_w'" },
    { "unknown-dtype.onnx", CLINFER_ERROR_PARSE, "unknown data type 99" },
    { "duplicate-output.onnx", CLINFER_ERROR_PARSE, "'out'" },
    { "no-graph.onnx", CLINFER_ERROR_PARSE, "no graph" },
    { "ext-escape.onnx", CLINFER_ERROR_PARSE, "../onnx/ext.bin" },
    { "ext-short.onnx", CLINFER_ERROR_IO, "too short" },
    { "no-such-file.onnx", CLINFER_ERROR_IO, NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *path = fixture_path (cases[i].file);
    if (i == 0 && !have_file (path))
      return;
    expect_error (path, cases[i].code, cases[i].substring);
  }
}

/* Writes @size bytes to a temporary file and expects a parse error. */
static void
expect_parse_error_on (const guint8 *data, gsize size, const char *substring)
{
  g_autoptr (GError) err = NULL;
  g_autofree char *dir = g_dir_make_tmp ("clinfer-onnx-XXXXXX", &err);
  g_autofree char *path = NULL;

  g_assert_no_error (err);
  path = g_build_filename (dir, "bad.onnx", NULL);
  g_assert_true (g_file_set_contents (path, (const char *) data, size, &err));
  expect_error (path, CLINFER_ERROR_PARSE, substring);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_error_bad_files (void)
{
  g_autofree char *model = blazeface_path (
      "face_detection_front_128x128_barracuda.onnx");
  g_autofree char *data = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (42);
  guint8 noise[4096];
  gsize size;

  expect_parse_error_on ((const guint8 *) "", 0, "empty");
  for (gsize i = 0; i < sizeof noise; i++)
    noise[i] = (guint8) g_rand_int_range (rand, 0, 256);
  expect_parse_error_on (noise, sizeof noise, NULL);
  if (!have_file (model))
    return;
  g_assert_true (g_file_get_contents (model, &data, &size, NULL));
  expect_parse_error_on ((const guint8 *) data, size / 2, "truncated");
}

/* Every prefix and many corruptions of @name: errors naming the origin,
 * never a crash (run under ASan/UBSan for the full value). */
static void
mutate_fixture (const char *name, guint32 seed)
{
  g_autofree char *path = fixture_path (name);
  g_autofree guint8 *data = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  gsize size;

  if (!have_file (path))
    return;
  g_assert_true (g_file_get_contents (path, (char **) &data, &size, NULL));
  for (gsize cut = 0; cut < size; cut++) {
    g_autoptr (GError) err = NULL;
    ClinferGraph *g = clinfer_onnx_read_from_data (data, cut, "cut", NULL, &err);
    g_assert_true ((g == NULL) != (err == NULL));
    g_clear_pointer (&g, clinfer_graph_free);
  }
  for (guint round = 0; round < 2000; round++) {
    g_autofree guint8 *copy = g_memdup2 (data, size);
    g_autoptr (GError) err = NULL;
    ClinferGraph *g;
    for (guint k = 0; k < 1 + round % 4; k++)
      copy[g_rand_int_range (rand, 0, (gint32) size)] =
          (guint8) g_rand_int_range (rand, 0, 256);
    g = clinfer_onnx_read_from_data (copy, size, "mutated", NULL, &err);
    g_assert_true ((g == NULL) != (err == NULL));
    if (err)
      g_assert_nonnull (strstr (err->message, "mutated"));
    g_clear_pointer (&g, clinfer_graph_free);
  }
}

static void
test_error_mutations (void)
{
  mutate_fixture ("basic.onnx", 7);
  mutate_fixture ("subgraph.onnx", 8);
}

/* ---- real models ---- */

static void
check_blazeface (const char *file, guint n_nodes, guint n_conv, guint n_relu,
    guint n_add, guint n_constant_of_shape, guint n_concat, int64_t size)
{
  g_autofree char *path = blazeface_path (file);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;
  ClinferNode *in;

  if (!have_file (path))
    return;
  g = clinfer_onnx_read (path, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (g->nodes->len, ==, n_nodes);
  g_assert_cmpint (clinfer_graph_get_opset (g, ""), ==, 12);
  g_assert_cmpuint (count_op (g, "Conv"), ==, n_conv);
  g_assert_cmpuint (count_op (g, "Relu"), ==, n_relu);
  g_assert_cmpuint (count_op (g, "Add"), ==, n_add);
  g_assert_cmpuint (count_op (g, "ConstantOfShape"), ==, n_constant_of_shape);
  g_assert_cmpuint (count_op (g, "Concat"), ==, n_concat);
  g_assert_cmpuint (count_op (g, "Transpose"), ==, 5);
  g_assert_cmpuint (count_op (g, "Reshape"), ==, 4);
  g_assert_cmpuint (count_op (g, "MaxPool"), ==, 3);
  g_assert_cmpuint (count_op (g, "Parameter"), ==, 1);
  g_assert_cmpuint (g->inputs->len, ==, 1);
  in = g_ptr_array_index (g->inputs, 0);
  g_assert_cmpstr (in->outputs[0].name, ==, "input:0");
  g_assert_cmpint (in->outputs[0].type, ==, CLINFER_TYPE_F32);
  assert_shape (&in->outputs[0].shape, 4, (int64_t[]) { 1, size, size, 3 });
  g_assert_cmpuint (g->outputs->len, ==, 4);
  g_assert_cmpstr (g_array_index (g->outputs, ClinferGraphOutput, 3).name, ==,
      "Identity_3:0");
  for (guint i = 0; i < g->outputs->len; i++)
    g_assert_nonnull (g_array_index (g->outputs, ClinferGraphOutput, i).ref.node);
}

static void
test_blazeface (void)
{
  /* nodes = initializers + inputs + ONNX nodes (71+1+104, 114+1+149) */
  check_blazeface ("face_detection_front_128x128_barracuda.onnx", 176, 37, 17,
      16, 11, 11, 128);
  check_blazeface ("face_detection_back_256x256_barracuda.onnx", 264, 69, 33,
      31, 2, 2, 256);
}

/* Every model of the ONNX backend test data ($CLINFER_ONNX_TEST_DATA, by
 * default Debian's libonnx-testdata) loads, or fails only as
 * NOT_IMPLEMENTED (sequence / optional types); its tensor files read or
 * fail cleanly. */
static void
read_test_case (const char *case_dir, guint *loaded, guint *unsupported)
{
  g_autofree char *path = g_build_filename (case_dir, "model.onnx", NULL);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;

  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return;
  g = clinfer_onnx_read (path, &err);
  if (g == NULL) {
    g_test_message ("%s", err->message);
    g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED);
    (*unsupported)++;
    return;
  }
  (*loaded)++;
  for (guint i = 0; i < 2 * g->inputs->len + 2 * g->outputs->len; i++) {
    g_autofree char *pb = g_strdup_printf ("%s/test_data_set_0/%s_%u.pb",
        case_dir, i % 2 ? "output" : "input", i / 2);
    g_autoptr (GError) terr = NULL;
    g_autoptr (ClinferTensor) t = NULL;
    if (!g_file_test (pb, G_FILE_TEST_IS_REGULAR))
      continue;
    t = clinfer_onnx_read_tensor_file (pb, NULL, &terr);
    g_assert_true ((t == NULL) != (terr == NULL));
  }
}

static void
test_conformance_data (void)
{
  const char *root = g_getenv ("CLINFER_ONNX_TEST_DATA");
  static const char *groups[] = { "node", "pytorch-converted",
    "pytorch-operator", "real", "simple" };
  guint loaded = 0, unsupported = 0;

  if (root == NULL || *root == '\0')
    root = "/usr/share/libonnx-testdata/data";
  if (!g_file_test (root, G_FILE_TEST_IS_DIR)) {
    g_test_skip ("no ONNX backend test data (Debian: libonnx-testdata)");
    return;
  }
  for (gsize k = 0; k < G_N_ELEMENTS (groups); k++) {
    g_autofree char *dir_path = g_build_filename (root, groups[k], NULL);
    g_autoptr (GDir) dir = g_dir_open (dir_path, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name (dir))) {
      g_autofree char *case_dir = g_build_filename (dir_path, name, NULL);
      read_test_case (case_dir, &loaded, &unsupported);
    }
  }
  g_test_message ("%u models loaded, %u unsupported", loaded, unsupported);
  g_assert_cmpuint (loaded, >, 0);
  g_assert_cmpuint (unsupported, <, loaded / 10);
}

/* clinfer_model_read_from_data(): the same model from memory as from its
 * file, ONNX and IR; the name stands for the file in errors. */
static void
test_read_from_data (void)
{
  g_autofree char *onnx = blazeface_path ("face_detection_front_128x128_barracuda.onnx");
  g_autofree char *xml = source_path ("tests", "data/ir",
      "face_detection_front_128x128_barracuda-f32.xml");
  g_autofree char *bin = source_path ("tests", "data/ir",
      "face_detection_front_128x128_barracuda-f32.bin");
  g_autofree char *data = NULL, *xml_text = NULL, *weights = NULL;
  gsize size, xml_size, weights_size;
  g_autoptr (ClinferModel) from_file = NULL, from_data = NULL, from_ir = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  ClinferPortInfo a, b;
  GError *err = NULL;

  if (!have_file (onnx) || !have_file (xml) || !have_file (bin))
    return;
  g_assert_true (g_file_get_contents (onnx, &data, &size, NULL));
  from_file = clinfer_model_read (onnx, &err);
  g_assert_no_error (err);
  from_data = clinfer_model_read_from_data ((const guint8 *) data, size, NULL,
      0, "camera-model", NULL, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (clinfer_model_get_path (from_data), ==, "camera-model");
  g_assert_cmpuint (clinfer_model_get_n_outputs (from_data), ==,
      clinfer_model_get_n_outputs (from_file));
  g_assert_true (clinfer_model_get_input (from_data, 0, &a));
  g_assert_true (clinfer_model_get_input (from_file, 0, &b));
  g_assert_true (clinfer_shape_equal (&a.shape, &b.shape));
  c = clinfer_compile (from_data, NULL, &err);
  g_assert_no_error (err);
  g_clear_pointer (&c, clinfer_compiled_unref);

  /* IR: the XML text and the .bin's bytes. */
  g_assert_true (g_file_get_contents (xml, &xml_text, &xml_size, NULL));
  g_assert_true (g_file_get_contents (bin, &weights, &weights_size, NULL));
  from_ir = clinfer_model_read_from_data ((const guint8 *) xml_text, xml_size,
      (const guint8 *) weights, weights_size, NULL, NULL, &err);
  g_assert_no_error (err);
  g_assert_cmpstr (clinfer_model_get_path (from_ir), ==, "model");
  c = clinfer_compile (from_ir, NULL, &err);
  g_assert_no_error (err);

  /* Truncated bytes: an error naming the given name. */
  g_assert_null (clinfer_model_read_from_data ((const guint8 *) data, size / 2,
          NULL, 0, "camera-model", NULL, &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_PARSE);
  g_assert_nonnull (strstr (err->message, "camera-model"));
  g_clear_error (&err);
  /* IR without its weights: the Const layers point past the end. */
  g_assert_null (clinfer_model_read_from_data ((const guint8 *) xml_text,
          xml_size, NULL, 0, "cam.xml", NULL, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "cam.xml"));
  g_clear_error (&err);
}


int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/onnx/basic/structure", test_basic_structure);
  g_test_add_func ("/onnx/read-from-data", test_read_from_data);
  g_test_add_func ("/onnx/basic/inputs", test_basic_inputs);
  g_test_add_func ("/onnx/basic/initializers", test_basic_initializers);
  g_test_add_func ("/onnx/basic/constant-nodes", test_basic_constant_nodes);
  g_test_add_func ("/onnx/basic/attributes", test_basic_attributes);
  g_test_add_func ("/onnx/basic/copy-and-order", test_basic_copy_and_order);
  g_test_add_func ("/onnx/subgraph", test_subgraph);
  g_test_add_func ("/onnx/external-data", test_external_data);
  g_test_add_func ("/onnx/tensor-file", test_tensor_file);
  g_test_add_func ("/onnx/errors/fixtures", test_error_fixtures);
  g_test_add_func ("/onnx/errors/bad-files", test_error_bad_files);
  g_test_add_func ("/onnx/errors/mutations", test_error_mutations);
  g_test_add_func ("/onnx/blazeface", test_blazeface);
  g_test_add_func ("/onnx/conformance-data", test_conformance_data);
  return g_test_run ();
}
