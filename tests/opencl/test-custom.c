/* clinfer OpenCL tests — custom kernels from the config-file XML: the JIT
 * define block against the spec's text, WorkSizes expressions, user
 * defines, every config error case, and custom layers running (user
 * defines, Data buffers, non-BFYX formats). The parsing tests run without
 * an OpenCL device; the others are skipped then. */
#include "opencl-test-util.h"
#include "devices/opencl/ocl-custom.h"
#include "runtime/runtime.h"
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The example of the custom-layer format (docs/custom-kernels.md), with
 * OUTPUT0 spelled out. */
static const char spec_example[] =
    "#define NUM_INPUTS 1\n"
    "#define GLOBAL_WORKSIZE_SIZE 1\n"
    "#define GLOBAL_WORKSIZE_INIT { 150528, }\n"
    "#define GLOBAL_WORKSIZE (ulong []){ 150528, }\n"
    "#define LOCAL_WORKSIZE_SIZE 0\n"
    "#define LOCAL_WORKSIZE_INIT {  }\n"
    "#define LOCAL_WORKSIZE (ulong []){  }\n"
    "#define INPUT0_DIMS_SIZE 4\n"
    "#define INPUT0_DIMS_INIT { 1,3,224,224, }\n"
    "#define INPUT0_DIMS (int []){ 1,3,224,224, }\n"
    "#define INPUT0_TYPE float\n"
    "#define INPUT0_FORMAT_BFYX\n"
    "#define INPUT0_LOWER_PADDING_SIZE 4\n"
    "#define INPUT0_LOWER_PADDING_INIT { 0,0,0,0, }\n"
    "#define INPUT0_LOWER_PADDING (int []){ 0,0,0,0, }\n"
    "#define INPUT0_UPPER_PADDING_SIZE 4\n"
    "#define INPUT0_UPPER_PADDING_INIT { 0,0,0,0, }\n"
    "#define INPUT0_UPPER_PADDING (int []){ 0,0,0,0, }\n"
    "#define INPUT0_PITCHES_SIZE 4\n"
    "#define INPUT0_PITCHES_INIT { 150528,50176,224,1, }\n"
    "#define INPUT0_PITCHES (int []){ 150528,50176,224,1, }\n"
    "#define INPUT0_OFFSET 0\n"
    "#define OUTPUT0_DIMS_SIZE 4\n"
    "#define OUTPUT0_DIMS_INIT { 1,3,224,224, }\n"
    "#define OUTPUT0_DIMS (int []){ 1,3,224,224, }\n"
    "#define OUTPUT0_TYPE float\n"
    "#define OUTPUT0_FORMAT_BFYX\n"
    "#define OUTPUT0_LOWER_PADDING_SIZE 4\n"
    "#define OUTPUT0_LOWER_PADDING_INIT { 0,0,0,0, }\n"
    "#define OUTPUT0_LOWER_PADDING (int []){ 0,0,0,0, }\n"
    "#define OUTPUT0_UPPER_PADDING_SIZE 4\n"
    "#define OUTPUT0_UPPER_PADDING_INIT { 0,0,0,0, }\n"
    "#define OUTPUT0_UPPER_PADDING (int []){ 0,0,0,0, }\n"
    "#define OUTPUT0_PITCHES_SIZE 4\n"
    "#define OUTPUT0_PITCHES_INIT { 150528,50176,224,1, }\n"
    "#define OUTPUT0_PITCHES (int []){ 150528,50176,224,1, }\n"
    "#define OUTPUT0_OFFSET 0\n";

static const int64_t dims_224[] = { 1, 3, 224, 224 };

static void
test_jit_text (void)
{
  OclJitTensor t = { CLINFER_TYPE_F32, clinfer_shape_make (4, dims_224),
    OCL_FMT_BFYX };
  size_t gws = 150528;
  g_autoptr (GError) err = NULL;
  g_autofree char *text = clinfer_ocl_jit_defines ("L", &t, 1, &t, 1, &gws, 1,
      NULL, 0, &err);

  g_assert_no_error (err);
  g_assert_cmpstr (text, ==, spec_example);
}

/* Other formats' pitches, 5-D, more than 5-D, and types. */
static void
test_jit_layouts (void)
{
  const int64_t d5[] = { 2, 3, 4, 5, 6 }, d6[] = { 1, 1, 1, 1, 1, 1 };
  OclJitTensor byxf = { CLINFER_TYPE_F16, clinfer_shape_make (4, dims_224),
    OCL_FMT_BYXF };
  OclJitTensor five = { CLINFER_TYPE_I64, clinfer_shape_make (5, d5),
    OCL_FMT_BFYX };
  OclJitTensor six = { CLINFER_TYPE_F32, clinfer_shape_make (6, d6),
    OCL_FMT_BFYX };
  OclJitTensor f64 = { CLINFER_TYPE_F64, clinfer_shape_make (4, dims_224),
    OCL_FMT_BFYX };
  size_t g[3] = { 224, 224, 3 }, l[3] = { 16, 16, 1 };
  g_autoptr (GError) err = NULL;
  g_autofree char *a = clinfer_ocl_jit_defines ("L", &byxf, 1, &five, 1, g, 3,
      l, 3, &err);

  g_assert_no_error (err);
  g_assert_nonnull (strstr (a, "#define GLOBAL_WORKSIZE (ulong []){ 224,224,3, }\n"));
  g_assert_nonnull (strstr (a, "#define LOCAL_WORKSIZE_INIT { 16,16,1, }\n"));
  g_assert_nonnull (strstr (a, "#define INPUT0_TYPE half\n"));
  g_assert_nonnull (strstr (a, "#define INPUT0_FORMAT_BYXF\n"));
  g_assert_nonnull (strstr (a, "#define INPUT0_PITCHES (int []){ 150528,1,672,3, }\n"));
  g_assert_nonnull (strstr (a, "#define OUTPUT0_DIMS (int []){ 2,3,4,5,6, }\n"));
  g_assert_nonnull (strstr (a, "#define OUTPUT0_FORMAT_BFZYX\n"));
  g_assert_nonnull (strstr (a, "#define OUTPUT0_TYPE long\n"));
  g_assert_nonnull (strstr (a, "#define OUTPUT0_PITCHES (int []){ 360,120,30,6,1, }\n"));
  g_assert_null (clinfer_ocl_jit_defines ("Six", &six, 1, &six, 1, g, 1, NULL,
          0, &err));
  g_assert_nonnull (strstr (err->message, "'Six'"));
  g_clear_error (&err);
  g_assert_null (clinfer_ocl_jit_defines ("D", &f64, 1, &f64, 1, g, 1, NULL, 0,
          &err));
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH);
}

static int64_t
eval (const char *text, const int64_t vars[4])
{
  g_autofree char *why = NULL;
  OclWsExpr *e = clinfer_ocl_ws_parse (text, &why);
  int64_t v = -1;

  g_assert_null (why);
  g_assert_true (clinfer_ocl_ws_eval (e, vars, &v, &why));
  clinfer_ocl_ws_free (e);
  return v;
}

static void
test_worksize_expressions (void)
{
  const int64_t v[4] = { 2, 3, 5, 7 };   /* B F Y X */
  const char *bad[] = { "-X", "X**2", "X+", "(X", "Z", "3 4", "X)", "",
    "B*F$", "1.5", "XY" };
  char *why = NULL;
  OclWsExpr *e;
  int64_t out;

  g_assert_cmpint (eval ("2+3*4", v), ==, 14);
  g_assert_cmpint (eval ("(2+3)*4", v), ==, 20);
  g_assert_cmpint (eval ("7/2", v), ==, 3);
  g_assert_cmpint (eval ("7%4", v), ==, 3);
  g_assert_cmpint (eval ("10-4-3", v), ==, 3);
  g_assert_cmpint (eval ("b*f*y*x", v), ==, 210);
  g_assert_cmpint (eval (" ( X + 1 ) / 2 * B ", v), ==, 8);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    e = clinfer_ocl_ws_parse (bad[i], &why);
    if (e != NULL)
      g_error ("rule '%s' parsed", bad[i]);
    g_assert_nonnull (why);
    g_free (why);
    why = NULL;
  }
  e = clinfer_ocl_ws_parse ("X/(Y-Y)", &why);
  g_assert_false (clinfer_ocl_ws_eval (e, v, &out, &why));
  g_assert_nonnull (strstr (why, "division by zero"));
  g_free (why);
  clinfer_ocl_ws_free (e);
}

/* A graph node with a few attributes for the user-define tests. */
static ClinferGraph *
node_graph (ClinferNode **out)
{
  ClinferGraph *g = clinfer_graph_new ("g", "test");
  ClinferNode *n = clinfer_graph_add_node (g, "MyOp", "", "n", 0, 1);
  const int64_t ints[] = { 1, -2, 3 };
  const float floats[] = { 0.5f, 2.f };

  clinfer_node_set_attr (n, "k", clinfer_attr_new_int (7));
  clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (0.5f));
  clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (ints, 3));
  clinfer_node_set_attr (n, "scales", clinfer_attr_new_floats (floats, 2));
  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string ("nearest"));
  clinfer_node_set_attr (n, "flag", clinfer_attr_new_string ("true"));
  *out = n;
  return g;
}

static const char *const user_xml =
    "<CustomLayer name=\"MyOp\"><Kernel entry=\"k\">"
    "<Source filename=\"k.cl\"/>"
    "<Define name=\"K\" type=\"int\" param=\"k\" default=\"3\"/>"
    "<Define name=\"ALPHA\" type=\"float\" param=\"alpha\"/>"
    "<Define name=\"PADS\" type=\"int[]\" param=\"pads\"/>"
    "<Define name=\"SCALES\" type=\"float[]\" param=\"scales\"/>"
    "<Define name=\"MODE\" param=\"mode\"/>"
    "<Define name=\"FLAG\" type=\"bool\" param=\"flag\"/>"
    "<Define name=\"MISSING\" type=\"int\" param=\"absent\" default=\"42\"/>"
    "<Define name=\"LIST\" type=\"int[]\" default=\"4,5\"/>"
    "</Kernel><Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\"/>"
    "</Buffers></CustomLayer>";

static char *
temp_dir_with_source (void)
{
  char *dir = g_dir_make_tmp ("clinfer-custom-XXXXXX", NULL);
  g_autofree char *cl = g_build_filename (dir, "k.cl", NULL);

  g_assert_true (g_file_set_contents (cl, "__kernel void k (__global float *x) "
          "{ }\n", -1, NULL));
  return dir;
}

static void
remove_dir (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d && (name = g_dir_read_name (d))) {
    g_autofree char *p = g_build_filename (dir, name, NULL);
    g_remove (p);
  }
  g_rmdir (dir);
}

static void
test_user_defines (void)
{
  g_autofree char *dir = temp_dir_with_source ();
  g_autofree char *xml = g_build_filename (dir, "layers.xml", NULL);
  g_autoptr (GError) err = NULL;
  ClinferNode *node;
  g_autoptr (ClinferGraph) g = node_graph (&node);
  OclCustomLayers *layers = clinfer_ocl_custom_parse (xml, user_xml,
      strlen (user_xml), &err);
  g_autofree char *text = NULL;

  g_assert_nonnull (g);
  g_assert_no_error (err);
  text = clinfer_ocl_jit_user_defines (clinfer_ocl_custom_lookup (layers,
          "MyOp"), node);
  g_assert_cmpstr (text, ==,
      "#define K 7\n"
      "#define ALPHA 0.500000\n"
      "#define PADS (int[]) {1,-2,3}\n"
      "#define SCALES (float[]) {0.500000,2.000000}\n"
      "#define MODE nearest\n"
      "#define FLAG 1\n"
      "#define MISSING 42\n"
      "#define LIST (int[]) {4,5}\n");
  clinfer_ocl_custom_free (layers);
  remove_dir (dir);
}

/* ---- config errors ---- */

typedef struct {
  const char *what;
  const char *xml;
  const char *needles[3];
} ErrorCase;

#define LAYER_HEAD "<CustomLayer name=\"L\" type=\"SimpleGPU\" version=\"1\">"
#define KERNEL_OK "<Kernel entry=\"k\"><Source filename=\"k.cl\"/></Kernel>"
#define BUFFERS_OK "<Buffers><Tensor arg-index=\"0\" type=\"input\" " \
    "port-index=\"0\"/></Buffers>"

static const ErrorCase error_cases[] = {
  { "missing name", "<CustomLayer>" KERNEL_OK BUFFERS_OK "</CustomLayer>",
    { "without name", ":1" } },
  { "missing entry", LAYER_HEAD "<Kernel><Source filename=\"k.cl\"/></Kernel>"
    BUFFERS_OK "</CustomLayer>", { "'L'", "without entry" } },
  { "unreadable source", LAYER_HEAD "<Kernel entry=\"k\"><Source "
    "filename=\"nope.cl\"/></Kernel>" BUFFERS_OK "</CustomLayer>",
    { "'L'", "nope.cl", "clinfer-custom-" } },
  { "Define without name", LAYER_HEAD "<Kernel entry=\"k\"><Source "
    "filename=\"k.cl\"/><Define type=\"int\" default=\"1\"/></Kernel>"
    BUFFERS_OK "</CustomLayer>", { "'L'", "<Define> without name" } },
  { "bad format", LAYER_HEAD KERNEL_OK "<Buffers><Tensor arg-index=\"0\" "
    "type=\"input\" port-index=\"0\" format=\"NCHW\"/></Buffers></CustomLayer>",
    { "'L'", "format 'NCHW'" } },
  { "bad type", LAYER_HEAD KERNEL_OK "<Buffers><Tensor arg-index=\"0\" "
    "type=\"inout\" port-index=\"0\"/></Buffers></CustomLayer>",
    { "'L'", "type is 'inout'" } },
  { "missing arg-index", LAYER_HEAD KERNEL_OK "<Buffers><Tensor type=\"input\" "
    "port-index=\"0\"/></Buffers></CustomLayer>", { "'L'", "arg-index" } },
  { "missing port-index", LAYER_HEAD KERNEL_OK "<Buffers><Tensor "
    "arg-index=\"0\" type=\"input\"/></Buffers></CustomLayer>",
    { "'L'", "port-index" } },
  { "argument gap", LAYER_HEAD KERNEL_OK "<Buffers><Tensor arg-index=\"0\" "
    "type=\"input\" port-index=\"0\"/><Tensor arg-index=\"2\" type=\"output\" "
    "port-index=\"0\"/></Buffers></CustomLayer>",
    { "'L'", "kernel argument 1 is not bound" } },
  { "argument twice", LAYER_HEAD KERNEL_OK "<Buffers><Tensor arg-index=\"0\" "
    "type=\"input\" port-index=\"0\"/><Data arg-index=\"0\" name=\"w\"/>"
    "</Buffers></CustomLayer>", { "'L'", "bound twice" } },
  { "Data without name", LAYER_HEAD KERNEL_OK "<Buffers><Data "
    "arg-index=\"0\"/></Buffers></CustomLayer>", { "'L'", "<Data> without name" } },
  { "invalid rule", LAYER_HEAD KERNEL_OK BUFFERS_OK "<WorkSizes "
    "global=\"X,-Y\"/></CustomLayer>", { "'L'", "'-Y'", "global" } },
  { "too many rules", LAYER_HEAD KERNEL_OK BUFFERS_OK "<WorkSizes "
    "global=\"1,2,3,4\"/></CustomLayer>", { "'L'", "more than 3" } },
  { "bad dim", LAYER_HEAD KERNEL_OK BUFFERS_OK "<WorkSizes global=\"X\" "
    "dim=\"inputs\"/></CustomLayer>", { "'L'", "dim=\"inputs\"" } },
  { "no kernel", LAYER_HEAD BUFFERS_OK "</CustomLayer>", { "'L'", "no <Kernel>" } },
  { "no buffers", LAYER_HEAD KERNEL_OK "</CustomLayer>", { "'L'", "no <Buffers>" } },
  { "wrong type", "<CustomLayer name=\"L\" type=\"SimpleCPU\">" KERNEL_OK
    BUFFERS_OK "</CustomLayer>", { "'L'", "SimpleCPU" } },
  { "malformed XML", "<CustomLayer name=\"L\">\n  <Kernel entry=\"k\">\n"
    "  </Kernl>\n</CustomLayer>", { "malformed XML", ":3:" } },
  { "no layer", "<Other/>", { "no <CustomLayer>" } },
};

static void
test_config_errors (void)
{
  g_autofree char *dir = temp_dir_with_source ();
  g_autofree char *xml = g_build_filename (dir, "layers.xml", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (error_cases); i++) {
    const ErrorCase *c = &error_cases[i];
    g_autoptr (GError) err = NULL;
    OclCustomLayers *l = clinfer_ocl_custom_parse (xml, c->xml,
        strlen (c->xml), &err);
    if (l != NULL)
      g_error ("%s: parsed", c->what);
    g_assert_true (err->domain == CLINFER_ERROR);
    g_assert_nonnull (strstr (err->message, "layers.xml"));
    for (guint k = 0; k < G_N_ELEMENTS (c->needles) && c->needles[k]; k++)
      if (strstr (err->message, c->needles[k]) == NULL)
        g_error ("%s: '%s' does not mention '%s'", c->what, err->message,
            c->needles[k]);
    g_test_message ("%s: %s", c->what, err->message);
  }
  remove_dir (dir);
}

/* Several top-level layers, or one wrapping root; later names win. */
static void
test_config_forms (void)
{
  g_autofree char *dir = temp_dir_with_source ();
  g_autofree char *xml = g_build_filename (dir, "layers.xml", NULL);
  const char *forms[] = {
    "<?xml version=\"1.0\"?>\n" LAYER_HEAD KERNEL_OK BUFFERS_OK "</CustomLayer>"
        "<CustomLayer name=\"L\"><Kernel entry=\"k2\"><Source filename=\"k.cl\"/>"
        "</Kernel>" BUFFERS_OK "</CustomLayer>",
    "<CustomLayers>" LAYER_HEAD KERNEL_OK BUFFERS_OK "</CustomLayer>"
        "<CustomLayer name=\"L\"><Kernel entry=\"k2\"><Source filename=\"k.cl\"/>"
        "</Kernel>" BUFFERS_OK "</CustomLayer></CustomLayers>",
  };

  for (guint i = 0; i < G_N_ELEMENTS (forms); i++) {
    g_autoptr (GError) err = NULL;
    OclCustomLayers *l = clinfer_ocl_custom_parse (xml, forms[i],
        strlen (forms[i]), &err);
    g_assert_no_error (err);
    g_assert_cmpstr (clinfer_ocl_custom_lookup (l, "L")->entry, ==, "k2");
    clinfer_ocl_custom_free (l);
  }
  remove_dir (dir);
}

/* ---- custom layers running on the device ---- */

static ClinferCompiled *
compile_custom (const char *model, const char *xml, const char *device,
    GError **error)
{
  g_autoptr (ClinferModel) m = clinfer_model_read (model, error);
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();

  if (m == NULL)
    return NULL;
  clinfer_compile_config_set_device (cfg, device);
  clinfer_compile_config_set_allow_fallback (cfg, FALSE);
  clinfer_compile_config_set_config_file (cfg, xml);
  return clinfer_compile (m, cfg, error);
}

static ClinferTensor *
random_tensor (const ClinferShape *shape, guint32 seed)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  ClinferTensor *t = clinfer_tensor_new (CLINFER_TYPE_F32, shape, NULL);
  float *p = clinfer_tensor_get_data (t);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    p[i] = (float) g_rand_double_range (rand, -2.0, 2.0);
  return t;
}

static ClinferTensor *
run_one (ClinferCompiled *c, ClinferTensor *input)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  ClinferTensor *out;

  g_assert_true (clinfer_request_set_input_by_index (r, 0, input, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  out = clinfer_tensor_copy (clinfer_request_get_output (r, 0), &err);
  g_assert_no_error (err);
  return out;
}

/* The documented example: Relu replaced by max (x, 0) * 2. */
static void
test_run_scaled_relu (void)
{
  g_autofree char *model = test_onnx_node_model ("test_relu");
  g_autofree char *xml = test_source_path ("tests/opencl/data/scaled-relu.xml");
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferTensor) x = NULL, y = NULL;
  ClinferPortInfo info;
  guint n_prof = 0;

  if (model == NULL) {
    g_test_skip ("ONNX backend test data not installed");
    return;
  }
  c = compile_custom (model, xml, "GPU", &err);
  g_assert_no_error (err);
  clinfer_compiled_get_input (c, 0, &info);
  x = random_tensor (&info.shape, 7);
  y = run_one (c, x);
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (x); i++) {
    float v = ((float *) clinfer_tensor_get_data (x))[i];
    g_assert_cmpfloat (((float *) clinfer_tensor_get_data (y))[i], ==,
        v > 0 ? v * 2.f : 0.f);
  }
  (void) n_prof;
}

/* BYXF on both sides: the kernel walks the output in BYXF order through
 * the pitch defines and writes x + 1000 f; reorders bring it back. */
static const char *const byxf_cl =
    "__kernel void pos (__global const INPUT0_TYPE *x, __global OUTPUT0_TYPE *y)\n"
    "{\n"
    "  uint g = get_global_id (0);\n"
    "  uint ox = (g / OUTPUT0_PITCHES[3]) % OUTPUT0_DIMS[3];\n"
    "  uint oy = (g / OUTPUT0_PITCHES[2]) % OUTPUT0_DIMS[2];\n"
    "  uint of = (g / OUTPUT0_PITCHES[1]) % OUTPUT0_DIMS[1];\n"
    "  uint ob = (g / OUTPUT0_PITCHES[0]) % OUTPUT0_DIMS[0];\n"
    "  uint i = ob * INPUT0_PITCHES[0] + of * INPUT0_PITCHES[1]\n"
    "      + oy * INPUT0_PITCHES[2] + ox * INPUT0_PITCHES[3];\n"
    "  y[g] = x[i] + 1000.0f * of + OFFSET;\n"
    "}\n";

static const char *const byxf_xml =
    "<CustomLayer name=\"MaxPool\" type=\"SimpleGPU\" version=\"1\">\n"
    "  <Kernel entry=\"pos\"><Source filename=\"pos.cl\"/>\n"
    "    <Define name=\"OFFSET\" type=\"float\" param=\"nothing\" default=\"0.25f\"/>\n"
    "  </Kernel>\n"
    "  <Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\" format=\"byxf\"/>\n"
    "    <Tensor arg-index=\"1\" type=\"output\" port-index=\"0\" format=\"BYXF\"/></Buffers>\n"
    "  <WorkSizes global=\"B*F*Y*X\" local=\"1\"/>\n"
    "</CustomLayer>\n";

static char *
write_layer (const char *dir, const char *xml, const char *cl_name,
    const char *cl)
{
  char *path = g_build_filename (dir, "layer.xml", NULL);
  g_autofree char *cl_path = g_build_filename (dir, cl_name, NULL);

  g_assert_true (g_file_set_contents (path, xml, -1, NULL));
  g_assert_true (g_file_set_contents (cl_path, cl, -1, NULL));
  return path;
}

static void
test_run_formats (void)
{
  g_autofree char *model = test_onnx_node_model ("test_maxpool_2d_default");
  g_autofree char *dir = g_dir_make_tmp ("clinfer-custom-XXXXXX", NULL);
  g_autofree char *xml = write_layer (dir, byxf_xml, "pos.cl", byxf_cl);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferTensor) x = NULL, y = NULL;
  const ClinferShape *ys;
  ClinferPortInfo info;

  if (model == NULL) {
    g_test_skip ("ONNX backend test data not installed");
    remove_dir (dir);
    return;
  }
  c = compile_custom (model, xml, "GPU", &err);
  g_assert_no_error (err);
  clinfer_compiled_get_input (c, 0, &info);
  x = random_tensor (&info.shape, 11);
  y = run_one (c, x);
  ys = clinfer_tensor_get_shape (y);
  for (int64_t b = 0; b < ys->dims[0]; b++)
    for (int64_t f = 0; f < ys->dims[1]; f++)
      for (int64_t h = 0; h < ys->dims[2]; h++)
        for (int64_t w = 0; w < ys->dims[3]; w++) {
          int64_t oi = ((b * ys->dims[1] + f) * ys->dims[2] + h) * ys->dims[3] + w;
          int64_t ii = ((b * info.shape.dims[1] + f) * info.shape.dims[2] + h)
              * info.shape.dims[3] + w;
          float want = ((float *) clinfer_tensor_get_data (x))[ii]
              + 1000.f * (float) f + 0.25f;
          g_assert_cmpfloat (fabsf (((float *) clinfer_tensor_get_data (y))[oi]
                  - want), <, 1e-3f);
        }
  remove_dir (dir);
}

/* A Data buffer bound to the Conv weights (a constant input by name). */
static void
test_run_data (void)
{
  const char *root = g_getenv ("CLINFER_CONFORMANCE_DATA");
  g_autofree char *model = g_build_filename (root ? root
      : CLINFER_TEST_CONFORMANCE_DATA, "pytorch-converted", "test_Conv2d",
      "model.onnx", NULL);
  g_autofree char *dir = g_dir_make_tmp ("clinfer-custom-XXXXXX", NULL);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferTensor) x = NULL, y = NULL;
  g_autofree char *layer = NULL, *xml = NULL;
  ClinferNode *conv = NULL;
  ClinferPortDesc *w;
  ClinferPortInfo info;

  if (!g_file_test (model, G_FILE_TEST_IS_REGULAR)) {
    g_test_skip ("ONNX backend test data not installed");
    remove_dir (dir);
    return;
  }
  m = clinfer_model_read (model, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < m->graph->nodes->len; i++)
    if (g_strcmp0 (((ClinferNode *) g_ptr_array_index (m->graph->nodes, i))->op_type,
            "Conv") == 0)
      conv = g_ptr_array_index (m->graph->nodes, i);
  g_assert_nonnull (conv);
  w = clinfer_node_input_desc (conv, 1);
  layer = g_strdup_printf ("<CustomLayer name=\"Conv\"><Kernel entry=\"first\">"
      "<Source filename=\"first.cl\"/></Kernel><Buffers>"
      "<Tensor arg-index=\"0\" type=\"output\" port-index=\"0\"/>"
      "<Data arg-index=\"1\" name=\"%s\"/></Buffers></CustomLayer>", w->name);
  xml = write_layer (dir, layer, "first.cl", "__kernel void first "
      "(__global float *y, __global const float *w) { y[get_global_id (0)] "
      "= w[0]; }\n");
  c = compile_custom (model, xml, "GPU", &err);
  g_assert_no_error (err);
  clinfer_compiled_get_input (c, 0, &info);
  x = random_tensor (&info.shape, 3);
  y = run_one (c, x);
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (y); i++)
    g_assert_cmpfloat (((float *) clinfer_tensor_get_data (y))[i], ==,
        clinfer_tensor_get_as_double (w->value, 0));
  remove_dir (dir);
}

/* Errors found when the layer meets a node or the OpenCL compiler. */
static void
test_compile_errors (void)
{
  g_autofree char *model = test_onnx_node_model ("test_relu");
  g_autofree char *dir = g_dir_make_tmp ("clinfer-custom-XXXXXX", NULL);
  g_autofree char *good = test_source_path ("tests/opencl/data/scaled-relu.xml");
  const struct {
    const char *xml, *cl, *needles[3];
  } cases[] = {
    { "<CustomLayer name=\"Relu\"><Kernel entry=\"k\"><Source filename=\"k.cl\"/>"
      "</Kernel><Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"3\"/>"
      "</Buffers></CustomLayer>", "__kernel void k (__global float *x) { }\n",
      { "'Relu'", "port-index 3", "beyond" } },
    { "<CustomLayer name=\"Relu\"><Kernel entry=\"k\"><Source filename=\"k.cl\"/>"
      "</Kernel><Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\"/>"
      "</Buffers></CustomLayer>", "__kernel void k (__global float *x) { oops; }\n",
      { "'Relu'", "build failed", "oops" } },
    { "<CustomLayer name=\"Relu\"><Kernel entry=\"k\"><Source filename=\"k.cl\"/>"
      "</Kernel><Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\"/>"
      "</Buffers><WorkSizes global=\"X/(Y-Y)\"/></CustomLayer>",
      "__kernel void k (__global float *x) { }\n",
      { "'Relu'", "division by zero", "X/(Y-Y)" } },
    { "<CustomLayer name=\"Relu\"><Kernel entry=\"k\"><Source filename=\"k.cl\"/>"
      "</Kernel><Buffers><Tensor arg-index=\"0\" type=\"input\" port-index=\"0\"/>"
      "</Buffers><WorkSizes global=\"X-1\"/></CustomLayer>",
      "__kernel void k (__global float *x) { }\n",
      { "'Relu'", "'X-1' gives 0", "positive" } },
  };
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) cpu = NULL;

  if (model == NULL) {
    g_test_skip ("ONNX backend test data not installed");
    remove_dir (dir);
    return;
  }
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    g_autofree char *xml = write_layer (dir, cases[i].xml, "k.cl", cases[i].cl);
    g_autoptr (ClinferCompiled) c = compile_custom (model, xml, "GPU", &err);
    g_assert_null (c);
    for (guint k = 0; k < G_N_ELEMENTS (cases[i].needles); k++)
      if (strstr (err->message, cases[i].needles[k]) == NULL)
        g_error ("case %u: '%s' does not mention '%s'", i, err->message,
            cases[i].needles[k]);
    g_test_message ("%s", err->message);
    g_clear_error (&err);
  }
  /* The native CPU device cannot run OpenCL custom layers. */
  cpu = compile_custom (model, good, "CPU", &err);
  g_assert_null (cpu);
  g_assert_error (err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (err->message, "OpenCL device"));
  remove_dir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/custom/jit-text", test_jit_text);
  g_test_add_func ("/custom/jit-layouts", test_jit_layouts);
  g_test_add_func ("/custom/worksize-expressions", test_worksize_expressions);
  g_test_add_func ("/custom/user-defines", test_user_defines);
  g_test_add_func ("/custom/config-errors", test_config_errors);
  g_test_add_func ("/custom/config-forms", test_config_forms);
  if (test_have_opencl ()) {
    g_test_add_func ("/custom/run-scaled-relu", test_run_scaled_relu);
    g_test_add_func ("/custom/run-formats", test_run_formats);
    g_test_add_func ("/custom/run-data", test_run_data);
    g_test_add_func ("/custom/compile-errors", test_compile_errors);
  }
  return g_test_run ();
}
