/* clinfer — unit tests of the OpenVINO IR reader and writer: the
 * BlazeFace fixtures made by OpenVINO's converter (tests/data/ir), small IR
 * documents built in memory (shapes, names, op translations run on the
 * reference evals), one negative test per error the reader reports, and
 * write -> read round trips through the compile passes (Conv+BatchNorm
 * fusion, graph dumps, the clinfer extension opset, shared constants). */
#include "frontend/ir/ir-reader.h"
#include "op-test-util.h"
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Building IR documents                                             */

static char *
source_path (const char *dir, const char *name)
{
  const char *root = g_getenv ("CLINFER_SOURCE_ROOT");

  if (root && *root)
    return g_build_filename (root, dir, name, NULL);
  return g_test_build_filename (G_TEST_DIST, "..", "..", dir, name, NULL);
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

typedef struct {
  GString *layers, *edges;
  GByteArray *bin;
  int version;
} Doc;

static void
doc_init (Doc *d)
{
  d->layers = g_string_new (NULL);
  d->edges = g_string_new (NULL);
  d->bin = g_byte_array_new ();
  d->version = 11;
}

static void
doc_clear (Doc *d)
{
  g_string_free (d->layers, TRUE);
  g_string_free (d->edges, TRUE);
  g_byte_array_unref (d->bin);
}

static void
doc_take (GString *s, char *text)
{
  g_string_append (s, text);
  g_free (text);
}

static void
doc_edge (Doc *d, int from, int from_port, int to, int to_port)
{
  doc_take (d->edges, g_strdup_printf ("<edge from-layer=\"%d\" from-port="
      "\"%d\" to-layer=\"%d\" to-port=\"%d\"/>\n", from, from_port, to,
      to_port));
}

/* Parameter @name of f32 with the shape attribute @shape; its port gets
 * the dims of @shape when it is a plain list. */
static void
doc_param (Doc *d, int id, const char *name, const char *shape)
{
  g_auto (GStrv) dims = g_strsplit (shape, ",", -1);

  doc_take (d->layers, g_strdup_printf ("<layer id=\"%d\" name=\"%s\" "
      "type=\"Parameter\" version=\"opset1\"><data shape=\"%s\" "
      "element_type=\"f32\"/><output><port id=\"0\" precision=\"FP32\" "
      "names=\"%s\">", id, name, shape, name));
  for (guint i = 0; *shape && dims[i]; i++)
    doc_take (d->layers, g_strdup_printf ("<dim>%s</dim>", dims[i]));
  g_string_append (d->layers, "</port></output></layer>\n");
}

/* Const of @n values appended to the weights (f32 or i64). */
static void
doc_const (Doc *d, int id, const char *type, const char *shape,
    const void *values, gsize n)
{
  gsize esize = strcmp (type, "i64") == 0 ? 8 : 4;
  gsize offset = d->bin->len;

  g_byte_array_append (d->bin, values, (guint) (n * esize));
  doc_take (d->layers, g_strdup_printf ("<layer id=\"%d\" name=\"c%d\" "
      "type=\"Const\" version=\"opset1\"><data element_type=\"%s\" shape=\"%s\""
      " offset=\"%" G_GSIZE_FORMAT "\" size=\"%" G_GSIZE_FORMAT "\"/><output>"
      "<port id=\"0\" precision=\"%s\"/></output></layer>\n", id, id, type,
      shape, offset, n * esize, esize == 8 ? "I64" : "FP32"));
}

/* Layer @id of @type with inputs on ports 0..n_in-1 and @n_out outputs
 * on the next ports; output 0 is named "y". */
static void
doc_op (Doc *d, int id, const char *type, const char *version,
    const char *data, int n_in, int n_out)
{
  doc_take (d->layers, g_strdup_printf ("<layer id=\"%d\" name=\"op%d\" "
      "type=\"%s\" version=\"%s\"><data %s/><input>", id, id, type, version,
      data ? data : ""));
  for (int i = 0; i < n_in; i++)
    doc_take (d->layers, g_strdup_printf ("<port id=\"%d\"/>", i));
  g_string_append (d->layers, "</input><output>");
  for (int i = 0; i < n_out; i++)
    doc_take (d->layers, g_strdup_printf ("<port id=\"%d\" precision=\"FP32\""
        "%s/>", n_in + i, i == 0 && id == 10 ? " names=\"y\"" : ""));
  g_string_append (d->layers, "</output></layer>\n");
}

static void
doc_result (Doc *d, int id, int from, int from_port)
{
  doc_take (d->layers, g_strdup_printf ("<layer id=\"%d\" name=\"r%d\" "
      "type=\"Result\" version=\"opset1\"><input><port id=\"0\"/></input>"
      "</layer>\n", id, id));
  doc_edge (d, from, from_port, id, 0);
}

static char *
doc_xml (Doc *d)
{
  return g_strdup_printf ("<?xml version=\"1.0\"?>\n<net name=\"t\" "
      "version=\"%d\">\n<layers>\n%s</layers>\n<edges>\n%s</edges>\n</net>\n",
      d->version, d->layers->str, d->edges->str);
}

static ClinferGraph *
doc_read (Doc *d, GError **error)
{
  g_autofree char *xml = doc_xml (d);
  g_autoptr (GBytes) w = g_bytes_new (d->bin->data, d->bin->len);

  return clinfer_ir_read_from_data (xml, strlen (xml), w, "test.xml", error);
}

/* ---------------------------------------------------------------- */
/* Running one-op documents                                          */

/* x (param 0, @shape) -> layer 10 (x, consts 1..) -> Result 11. Consts
 * were added by the caller with ids 1.. and are wired in id order. */
static ClinferTensor *
run_one_op (Doc *d, int n_consts, const ClinferTensor *x, int n_out)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;
  ClinferTensor *in[1] = { (ClinferTensor *) x }, *y;
  ClinferPassContext ctx = { NULL, 13, NULL, FALSE };

  doc_edge (d, 0, 0, 10, 0);
  for (int i = 1; i <= n_consts; i++)
    doc_edge (d, i, 0, 10, i);
  doc_result (d, 11, 10, n_consts + 1);
  g = doc_read (d, &err);
  g_assert_no_error (err);
  /* The compile passes fold what depends on static shapes only. */
  g_assert_true (clinfer_graph_resolve_ops (g, &err)
      && clinfer_passes_run (g, &ctx, &err));
  g_assert_no_error (err);
  y = op_test_run_graph (g, in, &err);
  g_assert_no_error (err);
  (void) n_out;
  return y;
}

static ClinferTensor *
iota_f32 (int rank, const int64_t *dims)
{
  ClinferTensor *t = op_test_f32 (rank, dims, NULL);
  float *p = clinfer_tensor_get_data (t);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    p[i] = (float) i - 3.f;
  return t;
}

static void
assert_values (const ClinferTensor *t, int rank, const int64_t *dims,
    const float *want)
{
  g_autoptr (ClinferTensor) ref = op_test_f32 (rank, dims, want);
  op_test_assert_close (t, ref, "ir op");
}

/* ---------------------------------------------------------------- */
/* Fixtures                                                          */

static void
test_fixture_structure (void)
{
  g_autofree char *path = source_path ("tests/data/ir",
      "face_detection_front_128x128_barracuda-f32.xml");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;
  ClinferNode *in;
  guint convs = 0, groups = 0;
  static const char *outs[] = { "Identity:0", "Identity_1:0", "Identity_2:0",
    "Identity_3:0" };

  if (!have_file (path))
    return;
  g = clinfer_ir_read (path, NULL, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (g->inputs->len, ==, 1);
  in = g_ptr_array_index (g->inputs, 0);
  g_assert_cmpstr (in->outputs[0].name, ==, "input:0");
  g_assert_cmpint (in->outputs[0].type, ==, CLINFER_TYPE_F32);
  g_assert_cmpint (in->outputs[0].shape.rank, ==, 4);
  g_assert_cmpint (in->outputs[0].shape.dims[3], ==, 3);
  g_assert_cmpuint (g->outputs->len, ==, 4);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpstr (g_array_index (g->outputs, ClinferGraphOutput, i).name,
        ==, outs[i]);
  for (guint i = 0; i < g->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (g->nodes, i);
    int64_t group = 1;
    if (strcmp (n->op_type, "Conv") != 0)
      continue;
    convs++;
    g_assert_true (clinfer_node_attr_int (n, "group", 1, &group, NULL));
    groups += group > 1;
  }
  g_assert_cmpuint (convs, ==, 37);
  g_assert_cmpuint (groups, >, 0);
}

/* The f16 IR reads as f16 Consts followed by Casts to f32. */
static void
test_fixture_f16 (void)
{
  g_autofree char *path = source_path ("tests/data/ir",
      "face_detection_back_256x256_barracuda-f16.xml");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) model = NULL;
  ClinferPortInfo info;

  if (!have_file (path))
    return;
  model = clinfer_model_read (path, &err);
  g_assert_no_error (err);
  g_assert_cmpuint (clinfer_model_get_n_inputs (model), ==, 1);
  g_assert_cmpuint (clinfer_model_get_n_outputs (model), ==, 4);
  g_assert_true (clinfer_model_get_input (model, 0, &info));
  g_assert_cmpint (info.shape.dims[1], ==, 256);
}

/* Aligned constants point into the weights: no copy. */
static void
test_const_in_place (void)
{
  Doc d;
  float w[4] = { 1, 2, 3, 4 };
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;
  g_autofree char *xml = NULL;
  g_autoptr (GBytes) bytes = NULL;
  gboolean found = FALSE;

  doc_init (&d);
  doc_param (&d, 0, "x", "4");
  doc_const (&d, 1, "f32", "4", w, 4);
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_edge (&d, 1, 0, 10, 1);
  doc_result (&d, 11, 10, 2);
  xml = doc_xml (&d);
  bytes = g_bytes_new (d.bin->data, d.bin->len);
  g = clinfer_ir_read_from_data (xml, strlen (xml), bytes, "t.xml", &err);
  g_assert_no_error (err);
  for (guint i = 0; i < g->nodes->len; i++) {
    ClinferNode *n = g_ptr_array_index (g->nodes, i);
    if (strcmp (n->op_type, "Constant") == 0) {
      g_assert_true (clinfer_tensor_get_const_data (n->outputs[0].value)
          == g_bytes_get_data (bytes, NULL));
      found = TRUE;
    }
  }
  g_assert_true (found);
  doc_clear (&d);
}

/* ---------------------------------------------------------------- */
/* Shapes and names                                                  */

static void
test_dynamic_shapes (void)
{
  static const struct { const char *text; int rank; int64_t dims[4]; } cases[] = {
    { "?,3,1..10,4..4", 4, { -1, 3, -1, 4 } },
    { "-1,2", 2, { -1, 2 } },
    { "[1, 3]", 2, { 1, 3 } },
    { "...", -1, { 0 } },
    { "", 0, { 0 } },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++) {
    ClinferShape s;
    g_assert_true (clinfer_ir_parse_shape (cases[c].text, &s));
    g_assert_cmpint (s.rank, ==, cases[c].rank);
    for (int i = 0; i < s.rank; i++)
      g_assert_cmpint (s.dims[i], ==, cases[c].dims[i]);
  }
  {
    ClinferShape s;
    g_assert_false (clinfer_ir_parse_shape ("1,x", &s));
    g_assert_false (clinfer_ir_parse_shape ("1,-2", &s));
  }
}

static void
test_names (void)
{
  Doc d;
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;
  ClinferGraphOutput *o;

  doc_init (&d);
  doc_param (&d, 0, "x", "?,2");
  doc_take (d.layers, g_strdup ("<layer id=\"10\" name=\"relu\" type=\"ReLU\" "
      "version=\"opset1\"><input><port id=\"0\"/></input><output><port id=\"1\""
      " precision=\"FP32\" names=\"a\\,b,other\"/></output></layer>\n"));
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 1);
  g = doc_read (&d, &err);
  g_assert_no_error (err);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  g_assert_cmpstr (o->name, ==, "a,b");
  g_assert_cmpstr (o->ref.node->op_type, ==, "Relu");
  g_assert_cmpint (((ClinferNode *) g_ptr_array_index (g->inputs, 0))
      ->outputs[0].shape.dims[0], ==, -1);
  doc_clear (&d);
}

/* ---------------------------------------------------------------- */
/* Op translations                                                   */

static void
test_op_reshape_special_zero (void)
{
  Doc d;
  int64_t dims[] = { 2, 3, 2 }, shape[] = { 0, -1 }, want_dims[] = { 2, 6 };
  g_autoptr (ClinferTensor) x = iota_f32 (3, dims), y = NULL;
  float want[12];

  for (int i = 0; i < 12; i++)
    want[i] = (float) i - 3.f;
  doc_init (&d);
  doc_param (&d, 0, "x", "2,3,2");
  doc_const (&d, 1, "i64", "2", shape, 2);
  doc_op (&d, 10, "Reshape", "opset1", "special_zero=\"true\"", 2, 1);
  y = run_one_op (&d, 1, x, 1);
  assert_values (y, 2, want_dims, want);
  doc_clear (&d);
}

/* x[1, ::2] via masks and shrink_axis_mask. */
static void
test_op_strided_slice (void)
{
  Doc d;
  int64_t dims[] = { 3, 4 }, begin[] = { 1, 5 }, end[] = { 2, 0 },
      strides[] = { 1, 2 }, want_dims[] = { 2 };
  g_autoptr (ClinferTensor) x = iota_f32 (2, dims), y = NULL;
  float want[] = { 4.f - 3.f, 6.f - 3.f };

  doc_init (&d);
  doc_param (&d, 0, "x", "3,4");
  doc_const (&d, 1, "i64", "2", begin, 2);
  doc_const (&d, 2, "i64", "2", end, 2);
  doc_const (&d, 3, "i64", "2", strides, 2);
  doc_op (&d, 10, "StridedSlice", "opset1", "begin_mask=\"0,1\" end_mask=\"0,1\""
      " new_axis_mask=\"\" shrink_axis_mask=\"1,0\" ellipsis_mask=\"\"", 4, 1);
  y = run_one_op (&d, 3, x, 1);
  assert_values (y, 1, want_dims, want);
  doc_clear (&d);
}

static void
test_op_matmul_transpose_b (void)
{
  Doc d;
  int64_t dims[] = { 1, 3 }, want_dims[] = { 1, 2 };
  float w[] = { 1, 0, 0, 0, 1, 1 };     /* [2, 3] */
  g_autoptr (ClinferTensor) x = iota_f32 (2, dims), y = NULL;
  float want[] = { -3.f, -2.f + -1.f };

  doc_init (&d);
  doc_param (&d, 0, "x", "1,3");
  doc_const (&d, 1, "f32", "2,3", w, 6);
  doc_op (&d, 10, "MatMul", "opset1", "transpose_a=\"false\" "
      "transpose_b=\"true\"", 2, 1);
  y = run_one_op (&d, 1, x, 1);
  assert_values (y, 2, want_dims, want);
  doc_clear (&d);
}

/* Depthwise: 5-D group weights [2, 1, 1, 1, 1] scale each channel. */
static void
test_op_group_convolution (void)
{
  Doc d;
  int64_t dims[] = { 1, 2, 1, 2 };
  float w[] = { 2.f, -1.f };
  g_autoptr (ClinferTensor) x = iota_f32 (4, dims), y = NULL;
  float want[] = { -6.f, -4.f, 1.f, 0.f };

  doc_init (&d);
  doc_param (&d, 0, "x", "1,2,1,2");
  doc_const (&d, 1, "f32", "2,1,1,1,1", w, 2);
  doc_op (&d, 10, "GroupConvolution", "opset1", "strides=\"1,1\" "
      "pads_begin=\"0,0\" pads_end=\"0,0\" dilations=\"1,1\" "
      "auto_pad=\"explicit\"", 2, 1);
  y = run_one_op (&d, 1, x, 1);
  assert_values (y, 4, dims, want);
  doc_clear (&d);
}

/* A 1-D PRelu slope applies along the channel axis. */
static void
test_op_prelu_channels (void)
{
  Doc d;
  int64_t dims[] = { 1, 2, 1, 2 };
  float slope[] = { 0.5f, 0.25f };
  g_autoptr (ClinferTensor) x = iota_f32 (4, dims), y = NULL;
  float want[] = { -1.5f, -1.f, -0.25f, 0.f };

  doc_init (&d);
  doc_param (&d, 0, "x", "1,2,1,2");
  doc_const (&d, 1, "f32", "2", slope, 2);
  doc_op (&d, 10, "PReLU", "opset1", NULL, 2, 1);
  y = run_one_op (&d, 1, x, 1);
  assert_values (y, 4, dims, want);
  doc_clear (&d);
}

/* Decomposed activations: HSigmoid, Swish, Gelu (erf), Clamp. */
static void
test_op_activations (void)
{
  static const struct { const char *type, *version, *data; } ops[] = {
    { "HSigmoid", "opset5", NULL }, { "Swish", "opset4", NULL },
    { "Gelu", "opset7", "approximation_mode=\"ERF\"" },
    { "Clamp", "opset1", "min=\"-1\" max=\"2\"" },
    { "HSwish", "opset4", NULL }, { "Mish", "opset4", NULL },
  };
  int64_t dims[] = { 7 };

  for (gsize k = 0; k < G_N_ELEMENTS (ops); k++) {
    Doc d;
    g_autoptr (ClinferTensor) x = iota_f32 (1, dims), y = NULL;
    float want[7];
    for (int i = 0; i < 7; i++) {
      double v = i - 3.0;
      switch (k) {
        case 0: want[i] = (float) CLAMP (v / 6 + 0.5, 0, 1); break;
        case 1: want[i] = (float) (v / (1 + exp (-v))); break;
        case 2: want[i] = (float) (0.5 * v * (1 + erf (v / sqrt (2)))); break;
        case 3: want[i] = (float) CLAMP (v, -1, 2); break;
        case 4: want[i] = (float) (v * CLAMP (v + 3, 0, 6) / 6); break;
        default: want[i] = (float) (v * tanh (log1p (exp (v)))); break;
      }
    }
    doc_init (&d);
    doc_param (&d, 0, "x", "7");
    doc_op (&d, 10, ops[k].type, ops[k].version, ops[k].data, 1, 1);
    y = run_one_op (&d, 0, x, 1);
    assert_values (y, 1, dims, want);
    doc_clear (&d);
  }
}

/* MaxPool-8 has a second (indices) output; Interpolate-11 resizes the
 * axes it is given. */
static void
test_op_pool_and_interpolate (void)
{
  Doc d;
  int64_t dims[] = { 1, 1, 2, 2 }, sizes[] = { 4 }, axes[] = { 3 };
  int64_t pdims[] = { 1, 1, 1, 1 }, idims[] = { 1, 1, 2, 4 };
  g_autoptr (ClinferTensor) x = iota_f32 (4, dims), y = NULL;
  float pwant[] = { 0.f };
  float iwant[] = { -3, -3, -2, -2, -1, -1, 0, 0 };

  doc_init (&d);
  doc_param (&d, 0, "x", "1,1,2,2");
  doc_op (&d, 10, "MaxPool", "opset8", "strides=\"1,1\" pads_begin=\"0,0\" "
      "pads_end=\"0,0\" kernel=\"2,2\" rounding_type=\"floor\" "
      "auto_pad=\"explicit\" dilations=\"1,1\" index_element_type=\"i64\" "
      "axis=\"0\"", 1, 2);
  y = run_one_op (&d, 0, x, 1);
  assert_values (y, 4, pdims, pwant);
  doc_clear (&d);
  g_clear_pointer (&y, clinfer_tensor_unref);

  doc_init (&d);
  doc_param (&d, 0, "x", "1,1,2,2");
  doc_const (&d, 1, "i64", "1", sizes, 1);
  doc_const (&d, 2, "i64", "1", axes, 1);
  doc_op (&d, 10, "Interpolate", "opset11", "mode=\"nearest\" "
      "shape_calculation_mode=\"sizes\" coordinate_transformation_mode="
      "\"asymmetric\" nearest_mode=\"floor\" antialias=\"false\" "
      "pads_begin=\"0,0,0,0\" pads_end=\"0,0,0,0\" cube_coeff=\"-0.75\"", 3, 1);
  y = run_one_op (&d, 2, x, 1);
  assert_values (y, 4, idims, iwant);
  doc_clear (&d);
}

/* ---------------------------------------------------------------- */
/* Errors                                                            */

/* Reads @d and checks the error code and that the message holds each of
 * the NULL-terminated fragments. */
static void
expect_error (Doc *d, int code, ...)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = doc_read (d, &err);
  va_list ap;

  g_assert_null (g);
  g_assert_error (err, CLINFER_ERROR, code);
  g_test_message ("%s", err->message);
  va_start (ap, code);
  for (const char *s = va_arg (ap, const char *); s; s = va_arg (ap, const char *))
    if (strstr (err->message, s) == NULL)
      g_error ("'%s' not in error message '%s'", s, err->message);
  va_end (ap);
  g_assert_true (g_str_has_prefix (err->message, "test.xml"));
}

/* x -> Add (x, x) -> Result, the base every error test breaks. */
static void
doc_add (Doc *d)
{
  doc_init (d);
  doc_param (d, 0, "x", "2");
  doc_op (d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (d, 0, 0, 10, 0);
  doc_edge (d, 0, 0, 10, 1);
}

static void
test_error_malformed_xml (void)
{
  const char *xml = "<?xml version=\"1.0\"?>\n<net version=\"11\">\n<layers>\n"
      "<layer id=\"0\" name=\"x\" type=\"Parameter\"\n</layers></net>\n";
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = clinfer_ir_read_from_data (xml, strlen (xml),
      NULL, "bad.xml", &err);

  g_assert_null (g);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_PARSE);
  g_assert_nonnull (strstr (err->message, "bad.xml:5:"));
  g_assert_nonnull (strstr (err->message, "malformed XML"));
}

static void
test_error_not_ir (void)
{
  Doc d;

  doc_add (&d);
  doc_result (&d, 11, 10, 2);
  d.version = 7;
  expect_error (&d, CLINFER_ERROR_UNSUPPORTED_VERSION, "IR version 7", NULL);
  d.version = 11;
  doc_take (d.layers, g_strdup ("<layer id=\"10\" name=\"dup\" type=\"Relu\" "
      "version=\"opset1\"/>"));
  expect_error (&d, CLINFER_ERROR_PARSE, "used by more than one layer", NULL);
  doc_clear (&d);
}

static void
test_error_missing_bin (void)
{
  Doc d;
  float w[2] = { 1, 2 };
  g_autofree char *dir = g_dir_make_tmp ("clinfer-ir-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "model.xml", NULL);
  g_autofree char *xml = NULL;
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferGraph) g = NULL;

  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_const (&d, 1, "f32", "2", w, 2);
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_edge (&d, 1, 0, 10, 1);
  doc_result (&d, 11, 10, 2);
  xml = doc_xml (&d);
  g_assert_true (g_file_set_contents (path, xml, -1, NULL));
  g = clinfer_ir_read (path, NULL, &err);
  g_assert_null (g);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_IO);
  g_assert_nonnull (strstr (err->message, "model.bin"));
  g_assert_nonnull (strstr (err->message, "layer 1 'c1'"));
  g_clear_error (&err);
  g = clinfer_ir_read (path, "/nonexistent/weights.bin", &err);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_IO);
  g_assert_nonnull (strstr (err->message, "weights.bin"));
  g_unlink (path);
  g_rmdir (dir);
  doc_clear (&d);
}

static void
test_error_const_bounds (void)
{
  Doc d;
  float w[2] = { 1, 2 };

  doc_init (&d);
  doc_param (&d, 0, "x", "4");
  g_byte_array_append (d.bin, (const guint8 *) w, sizeof (w));
  doc_take (d.layers, g_strdup ("<layer id=\"1\" name=\"w\" type=\"Const\" "
      "version=\"opset1\"><data element_type=\"f32\" shape=\"4\" offset=\"0\" "
      "size=\"16\"/><output><port id=\"0\" precision=\"FP32\"/></output>"
      "</layer>\n"));
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_edge (&d, 1, 0, 10, 1);
  doc_result (&d, 11, 10, 2);
  expect_error (&d, CLINFER_ERROR_PARSE, "layer 1 'w' (Const, opset1)",
      "past the end", NULL);
  doc_clear (&d);

  doc_init (&d);
  doc_param (&d, 0, "x", "4");
  doc_const (&d, 1, "f32", "4", w, 2);      /* size 8 for 4 elements */
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_edge (&d, 1, 0, 10, 1);
  doc_result (&d, 11, 10, 2);
  expect_error (&d, CLINFER_ERROR_PARSE, "size 8 does not match shape 4",
      "expected 16 bytes", NULL);
  doc_clear (&d);
}

static void
test_error_unknown_op (void)
{
  Doc d;

  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_op (&d, 10, "FancyOp", "opset3", NULL, 1, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 1);
  expect_error (&d, CLINFER_ERROR_UNSUPPORTED_OP,
      "layer 10 'op10' (FancyOp, opset3)", "'FancyOp'", NULL);
  doc_clear (&d);

  doc_add (&d);
  doc_result (&d, 11, 10, 2);
  g_string_replace (d.layers, "\"Add\" version=\"opset1\"",
      "\"Add\" version=\"opset99\"", 1);
  expect_error (&d, CLINFER_ERROR_UNSUPPORTED_VERSION, "(Add, opset99)",
      "not supported at version opset99", NULL);
  /* A version that is not "opsetN" names an extension (custom ops,
   * docs/custom-ops.md): the layer reads as a node of that domain, and
   * resolving it without such a custom op names the layer and domain. */
  g_string_replace (d.layers, "opset99", "experimental", 1);
  {
    g_autoptr (GError) err = NULL;
    g_autoptr (ClinferGraph) g = doc_read (&d, &err);
    g_assert_no_error (err);
    g_assert_false (clinfer_graph_resolve_ops (g, &err));
    g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP);
    g_assert_nonnull (strstr (err->message, "'experimental.Add'"));
    g_assert_nonnull (strstr (err->message, "'op10'"));
  }
  doc_clear (&d);
}

static void
test_error_edges (void)
{
  Doc d;

  doc_add (&d);
  doc_result (&d, 11, 10, 2);
  doc_edge (&d, 0, 0, 77, 0);
  expect_error (&d, CLINFER_ERROR_PARSE, "layer 77 which does not exist", NULL);
  doc_clear (&d);

  doc_add (&d);
  doc_result (&d, 11, 10, 2);
  doc_edge (&d, 0, 3, 11, 0);
  expect_error (&d, CLINFER_ERROR_PARSE, "has no output port 3", NULL);
  doc_clear (&d);

  doc_add (&d);
  doc_result (&d, 11, 10, 2);
  doc_edge (&d, 0, 0, 10, 9);
  expect_error (&d, CLINFER_ERROR_PARSE, "layer 10 'op10' (Add, opset1) has "
      "no input port 9", NULL);
  doc_clear (&d);

  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 2);
  expect_error (&d, CLINFER_ERROR_PARSE, "input port 1 has no incoming edge",
      NULL);
  doc_clear (&d);

  /* The same for an extension layer (version = a custom op's domain). */
  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_op (&d, 10, "MyOp", "com.example", NULL, 2, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 2);
  expect_error (&d, CLINFER_ERROR_PARSE, "input port 1 has no incoming edge",
      NULL);
  doc_clear (&d);
}

static void
test_error_port_count (void)
{
  Doc d;

  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_op (&d, 10, "Add", "opset1", NULL, 1, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 1);
  expect_error (&d, CLINFER_ERROR_PARSE, "(Add, opset1)",
      "has 1 input and 1 output ports", "expected 2 input", NULL);
  doc_clear (&d);
}

static void
test_error_cycle (void)
{
  Doc d;

  doc_init (&d);
  doc_param (&d, 0, "x", "2");
  doc_op (&d, 10, "Add", "opset1", NULL, 2, 1);
  doc_op (&d, 12, "Relu", "opset1", NULL, 1, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_edge (&d, 12, 1, 10, 1);
  doc_edge (&d, 10, 2, 12, 0);
  doc_result (&d, 11, 10, 2);
  expect_error (&d, CLINFER_ERROR_PARSE, "cycle", "op1", NULL);
  doc_clear (&d);
}

static void
test_error_bad_attributes (void)
{
  Doc d;

  doc_init (&d);
  doc_param (&d, 0, "x", "1,1,2,2");
  doc_op (&d, 10, "MaxPool", "opset1", "strides=\"1,x\" kernel=\"2,2\"", 1, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 1);
  expect_error (&d, CLINFER_ERROR_PARSE, "(MaxPool, opset1)", "strides='1,x'",
      NULL);
  doc_clear (&d);

  doc_init (&d);
  doc_param (&d, 0, "x", "1,1,2,2");
  doc_op (&d, 10, "MaxPool", "opset1", "strides=\"1,1\"", 1, 1);
  doc_edge (&d, 0, 0, 10, 0);
  doc_result (&d, 11, 10, 1);
  expect_error (&d, CLINFER_ERROR_PARSE, "attribute 'kernel'", NULL);
  doc_clear (&d);

  doc_init (&d);
  doc_take (d.layers, g_strdup ("<layer id=\"0\" name=\"x\" type=\"Parameter\" "
      "version=\"opset1\"><data shape=\"2\" element_type=\"f32\"/><output>"
      "<port id=\"0\" precision=\"FP32\"><dim>two</dim></port></output>"
      "</layer>\n"));
  doc_result (&d, 11, 0, 0);
  expect_error (&d, CLINFER_ERROR_PARSE, "<dim> 'two'", NULL);
  doc_clear (&d);
}

/* ---------------------------------------------------------------- */
/* Writer round trips                                                */

static ClinferNode *
add_const_f32 (ClinferGraph *g, const char *name, int rank, const int64_t *dims,
    GRand *rand)
{
  g_autoptr (ClinferTensor) t = op_test_random (rand, rank, dims);
  return clinfer_graph_add_constant (g, name, t);
}

/* x -> Conv (w, b) -> BatchNormalization -> Celu -> y */
static ClinferGraph *
conv_bn_graph (void)
{
  ClinferGraph *g = op_test_graph (13);
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  int64_t xd[] = { 1, 2, 5, 4 }, wd[] = { 3, 2, 3, 3 }, cd[] = { 3 };
  int64_t pads[] = { 1, 1, 1, 1 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  ClinferNode *in[5], *conv, *bn, *celu;
  float *var;

  in[0] = x;
  in[1] = add_const_f32 (g, "w", 4, wd, rand);
  in[2] = add_const_f32 (g, "b", 1, cd, rand);
  conv = op_test_node (g, "Conv", "", "conv", 3, in, 1);
  clinfer_node_set_attr (conv, "pads", clinfer_attr_new_ints (pads, 4));
  in[0] = conv;
  for (guint i = 1; i < 5; i++) {
    g_autofree char *name = g_strdup_printf ("bn%u", i);
    in[i] = add_const_f32 (g, name, 1, cd, rand);
  }
  /* Variances must be positive. */
  var = clinfer_tensor_get_data (in[4]->outputs[0].value);
  for (int i = 0; i < 3; i++)
    var[i] = var[i] * var[i] + 0.1f;
  bn = op_test_node (g, "BatchNormalization", "", "bn", 5, in, 1);
  celu = op_test_node (g, "Celu", "", "celu", 1, &bn, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { celu, 0 }, "y");
  return g;
}

/* Resolves, runs the passes (as clinfer-convert: export mode) and the
 * graph on @x. */
static ClinferTensor *
passes_and_run (ClinferGraph *g, ClinferTensor *x, const char *dump_dir)
{
  ClinferPassContext ctx = { NULL, 13, dump_dir, TRUE };
  g_autoptr (GError) err = NULL;
  ClinferTensor *y;

  g_assert_true (clinfer_graph_resolve_ops (g, &err)
      && clinfer_passes_run (g, &ctx, &err));
  g_assert_no_error (err);
  y = op_test_run_graph (g, &x, &err);
  g_assert_no_error (err);
  return y;
}

static void
assert_close_tol (const ClinferTensor *got, const ClinferTensor *ref, double tol)
{
  double max_ref = 0, diff = 0;

  g_assert_cmpint (clinfer_tensor_get_n_elements (got), ==,
      clinfer_tensor_get_n_elements (ref));
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (ref); i++) {
    double r = clinfer_tensor_get_as_double (ref, i);
    max_ref = MAX (max_ref, fabs (r));
    diff = MAX (diff, fabs (clinfer_tensor_get_as_double (got, i) - r));
  }
  g_assert_cmpfloat (diff, <=, tol * MAX (1.0, max_ref));
}

static void
test_writer_round_trip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("clinfer-irw-XXXXXX", NULL);
  g_autofree char *xml = g_build_filename (dir, "m.xml", NULL);
  g_autofree char *bin = g_build_filename (dir, "m.bin", NULL);
  g_autofree char *dot = g_build_filename (dir, "05-fuse-conv-batchnorm.dot", NULL);
  g_autofree char *text = NULL;
  g_autoptr (ClinferGraph) ref_g = conv_bn_graph (), g = conv_bn_graph ();
  g_autoptr (ClinferGraph) back = NULL;
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  int64_t xd[] = { 1, 2, 5, 4 };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) ref = NULL, fused = NULL, y = NULL;
  g_autoptr (GError) err = NULL;
  ClinferIrWriteOptions wo = { FALSE, 0, NULL };

  g_assert_true (op_test_prepare (ref_g, &err));
  ref = op_test_run_graph (ref_g, &x, &err);
  g_assert_no_error (err);
  /* Conv + BatchNorm fold into one Conv; the dumps show each step. */
  fused = passes_and_run (g, x, dir);
  g_assert_cmpuint (op_test_count_ops (g, "BatchNormalization"), ==, 0);
  g_assert_cmpuint (op_test_count_ops (g, "Conv"), ==, 1);
  op_test_assert_close (fused, ref, "conv+bn fused");
  g_assert_true (g_file_test (dot, G_FILE_TEST_EXISTS));
  /* Celu has no OpenVINO op: the clinfer extension opset. */
  g_assert_true (clinfer_ir_write (g, xml, &wo, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (wo.n_extension_layers, ==, 1);
  g_assert_cmpstr (wo.extension_ops, ==, "Celu");
  g_free (wo.extension_ops);
  g_assert_true (g_file_get_contents (xml, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "type=\"Celu\" version=\"clinfer\""));
  g_assert_nonnull (strstr (text, "type=\"Convolution\" version=\"opset1\""));
  g_assert_nonnull (strstr (text, "names=\"celu:0,y\""));
  back = clinfer_ir_read (xml, NULL, &err);
  g_assert_no_error (err);
  y = passes_and_run (back, x, NULL);
  op_test_assert_close (y, ref, "written and read back");
  g_clear_pointer (&back, clinfer_graph_free);
  g_clear_pointer (&y, clinfer_tensor_unref);
  g_clear_pointer (&text, g_free);
  /* f16 weights read back within 1e-3 (weights are f16-rounded). */
  wo.compress_to_fp16 = TRUE;
  g_assert_true (clinfer_ir_write (g, xml, &wo, &err));
  g_free (wo.extension_ops);
  g_assert_true (g_file_get_contents (xml, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, "element_type=\"f16\""));
  back = clinfer_ir_read (xml, NULL, &err);
  g_assert_no_error (err);
  y = passes_and_run (back, x, NULL);
  assert_close_tol (y, ref, 1e-2);
  for (guint i = 0; i < 8; i++) {
    static const char *const files[] = { "m.xml", "m.bin", "00-input.dot",
      "01-infer-shapes.dot", "02-fold-constants.dot", "03-remove-dead-nodes.dot",
      "04-fold-pad.dot", "05-fuse-conv-batchnorm.dot", "06-fuse-conv-scale.dot" };
    g_autofree char *f = g_build_filename (dir, files[i], NULL);
    g_unlink (f);
  }
  g_rmdir (dir);
  (void) bin;
}

/* Identical constants are stored once in the .bin. */
static void
test_writer_shared_constants (void)
{
  g_autofree char *dir = g_dir_make_tmp ("clinfer-irw-XXXXXX", NULL);
  g_autofree char *xml = g_build_filename (dir, "m.xml", NULL);
  g_autofree char *bin = g_build_filename (dir, "m.bin", NULL);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autoptr (GError) err = NULL;
  float v[16];
  int64_t d = 16;
  ClinferShape s = clinfer_shape_make (1, &d);
  ClinferNode *in[2], *a, *b;
  g_autoptr (ClinferTensor) t1 = NULL, t2 = NULL;
  GStatBuf st;

  for (int i = 0; i < 16; i++)
    v[i] = (float) i;
  t1 = op_test_f32 (1, &d, v);
  t2 = op_test_f32 (1, &d, v);
  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  in[1] = clinfer_graph_add_constant (g, "c1", t1);
  a = op_test_node (g, "Add", "", "a", 2, in, 1);
  in[0] = a;
  in[1] = clinfer_graph_add_constant (g, "c2", t2);
  b = op_test_node (g, "Mul", "", "b", 2, in, 1);
  clinfer_graph_add_output (g, (ClinferPortRef) { b, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_true (clinfer_ir_write (g, xml, NULL, &err));
  g_assert_no_error (err);
  g_assert_cmpint (g_stat (bin, &st), ==, 0);
  g_assert_cmpint (st.st_size, ==, sizeof (v));
  g_unlink (xml);
  g_unlink (bin);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ir/fixture/structure", test_fixture_structure);
  g_test_add_func ("/ir/fixture/f16", test_fixture_f16);
  g_test_add_func ("/ir/const-in-place", test_const_in_place);
  g_test_add_func ("/ir/dynamic-shapes", test_dynamic_shapes);
  g_test_add_func ("/ir/names", test_names);
  g_test_add_func ("/ir/op/reshape-special-zero", test_op_reshape_special_zero);
  g_test_add_func ("/ir/op/strided-slice", test_op_strided_slice);
  g_test_add_func ("/ir/op/matmul-transpose-b", test_op_matmul_transpose_b);
  g_test_add_func ("/ir/op/group-convolution", test_op_group_convolution);
  g_test_add_func ("/ir/op/prelu-channels", test_op_prelu_channels);
  g_test_add_func ("/ir/op/activations", test_op_activations);
  g_test_add_func ("/ir/op/pool-and-interpolate", test_op_pool_and_interpolate);
  g_test_add_func ("/ir/error/malformed-xml", test_error_malformed_xml);
  g_test_add_func ("/ir/error/not-ir", test_error_not_ir);
  g_test_add_func ("/ir/error/missing-bin", test_error_missing_bin);
  g_test_add_func ("/ir/error/const-bounds", test_error_const_bounds);
  g_test_add_func ("/ir/error/unknown-op", test_error_unknown_op);
  g_test_add_func ("/ir/error/edges", test_error_edges);
  g_test_add_func ("/ir/error/port-count", test_error_port_count);
  g_test_add_func ("/ir/error/cycle", test_error_cycle);
  g_test_add_func ("/ir/error/bad-attributes", test_error_bad_attributes);
  g_test_add_func ("/ir/writer/round-trip", test_writer_round_trip);
  g_test_add_func ("/ir/writer/shared-constants", test_writer_shared_constants);
  return g_test_run ();
}
