/* clinfer OpenCL tests — index and data-dependent ops on the GPU device
 * against the CPU device, on cases the ONNX conformance data does not
 * cover: TopK with ties and K = the axis extent, scatters with duplicate
 * indices under reductions, NonZero with no hit, Compress and CumSum with
 * run-time parameters, Range / ConstantOfShape / OneHot built from graph
 * inputs. The GPU compiles with fallback off, so each case also proves the
 * op runs on the device. Exits 77 (skipped) without an OpenCL device. */
#include "opencl-test-util.h"
#include "runtime/runtime.h"
#include <stdio.h>
#include <string.h>

typedef struct {
  ClinferGraph *g;
  GPtrArray *inputs;         /* ClinferTensor* per graph input */
} Case;

static ClinferTensor *
tensor_of (ClinferElementType type, int rank, const int64_t *dims,
    const void *data)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);

  memcpy (clinfer_tensor_get_data (t), data, clinfer_tensor_get_byte_size (t));
  return t;
}

static ClinferNode *
input (Case *c, const char *name, ClinferElementType type, int rank,
    const int64_t *dims, const void *data)
{
  ClinferTensor *t = tensor_of (type, rank, dims, data);

  g_ptr_array_add (c->inputs, t);
  return clinfer_graph_add_input (c->g, name, type, clinfer_tensor_get_shape (t));
}

static ClinferNode *
constant (Case *c, const char *name, ClinferElementType type, int rank,
    const int64_t *dims, const void *data)
{
  g_autoptr (ClinferTensor) t = tensor_of (type, rank, dims, data);

  return clinfer_graph_add_constant (c->g, name, t);
}

static ClinferNode *
op (Case *c, const char *op_type, guint n_in, ClinferNode **ins, guint n_out)
{
  ClinferNode *n = clinfer_graph_add_node (c->g, op_type, "", NULL, n_in, n_out);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i] = (ClinferPortRef) { ins[i], 0 };
  for (guint i = 0; i < n_out; i++) {
    g_autofree char *name = g_strdup_printf ("y%u", c->g->outputs->len);
    clinfer_graph_add_output (c->g, (ClinferPortRef) { n, i }, name);
  }
  return n;
}

static ClinferCompiled *
compile (ClinferGraph *g, const char *device, GError **error)
{
  return test_compile_graph (g, "test-ocl-index-more", device, FALSE, error);
}

/* Runs @c twice (the second run reuses the steps built at run time) and
 * returns copies of the outputs of the second; *to_host: bytes read back. */
static GPtrArray *
run (ClinferCompiled *c, GPtrArray *inputs, guint64 *to_host)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  GPtrArray *out = g_ptr_array_new_with_free_func (
      (GDestroyNotify) clinfer_tensor_unref);

  g_assert_no_error (err);
  for (guint i = 0; i < inputs->len; i++) {
    clinfer_request_set_input_by_index (r, i, g_ptr_array_index (inputs, i),
        &err);
    g_assert_no_error (err);
  }
  for (int k = 0; k < 2; k++) {
    clinfer_request_infer (r, &err);
    g_assert_no_error (err);
  }
  for (guint i = 0; i < clinfer_compiled_get_n_outputs (c); i++)
    g_ptr_array_add (out, clinfer_tensor_copy (clinfer_request_get_output (r, i),
            NULL));
  clinfer_request_get_copy_stats (r, NULL, to_host);
  return out;
}

static void
case_free (Case *c)
{
  clinfer_graph_free (c->g);
  g_ptr_array_unref (c->inputs);
}

static Case
case_new (int opset)
{
  Case c = { clinfer_graph_new ("case", "test-ocl-index-more"),
    g_ptr_array_new_with_free_func ((GDestroyNotify) clinfer_tensor_unref) };

  g_hash_table_insert (c.g->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  return c;
}

/* Compiles @c for CPU and GPU (fallback off), runs both, asserts equal
 * outputs (exactly: these ops move data or add in the CPU's order).
 * Returns the bytes the GPU run read back beyond its outputs. */
static guint64
check (Case *c)
{
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) cpu = compile (c->g, "CPU", &err);
  g_autoptr (ClinferCompiled) gpu = NULL;
  g_autoptr (GPtrArray) want = NULL, got = NULL;
  guint64 to_host = 0, cpu_host = 0;

  g_assert_no_error (err);
  gpu = compile (c->g, "GPU", &err);
  g_assert_no_error (err);
  want = run (cpu, c->inputs, &cpu_host);
  got = run (gpu, c->inputs, &to_host);
  g_assert_cmpuint (got->len, ==, want->len);
  for (guint i = 0; i < got->len; i++) {
    test_assert_close (g_ptr_array_index (got, i), g_ptr_array_index (want, i),
        0.0);
    g_assert_cmpuint (to_host, >=,
        clinfer_tensor_get_byte_size (g_ptr_array_index (got, i)));
    to_host -= clinfer_tensor_get_byte_size (g_ptr_array_index (got, i));
  }
  return to_host;
}

/* ---------------------------------------------------------------- */

/* Values from a small set (many ties), K = the axis extent, largest and
 * smallest, on a middle axis; K from a graph input (built at run time). */
static void
test_topk_ties (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 3, 7, 4 }, kd[] = { 1 }, k_all[] = { 7 },
      k_some[] = { 3 };
  float x[84];
  ClinferNode *xn, *ins[2], *n;

  for (int i = 0; i < 84; i++)
    x[i] = (float) ((i * 7) % 5) - 2.f;
  x[5] = -0.f;               /* ties with +0 */
  xn = input (&c, "x", CLINFER_TYPE_F32, 3, xd, x);
  ins[0] = xn;
  ins[1] = constant (&c, "k_all", CLINFER_TYPE_I64, 1, kd, k_all);
  n = op (&c, "TopK", 2, ins, 2);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
  n = op (&c, "TopK", 2, ins, 2);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (-2));
  clinfer_node_set_attr (n, "largest", clinfer_attr_new_int (0));
  ins[1] = input (&c, "k", CLINFER_TYPE_I64, 1, kd, k_some);
  n = op (&c, "TopK", 2, ins, 2);
  clinfer_node_set_attr (n, "sorted", clinfer_attr_new_int (1));
  check (&c);
  case_free (&c);
}

static void
test_topk_int (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 2, 9 }, kd[] = { 1 }, k[] = { 4 };
  int32_t x[18] = { 5, -3, 5, 0, 7, 7, -3, 1, 5, 2, 2, 2, -8, 9, 9, 0, 1, 2 };
  ClinferNode *ins[2];

  ins[0] = input (&c, "x", CLINFER_TYPE_I32, 2, xd, x);
  ins[1] = constant (&c, "k", CLINFER_TYPE_I64, 1, kd, k);
  op (&c, "TopK", 2, ins, 2);
  check (&c);
  case_free (&c);
}

/* Duplicate tuples combine in order under add and mul; data rows of 3. */
static void
test_scatter_nd_duplicates (void)
{
  static const char *const reductions[] = { "add", "mul", "max", "min" };

  for (guint r = 0; r < G_N_ELEMENTS (reductions); r++) {
    Case c = case_new (18);
    const int64_t dd[] = { 6, 3 }, id[] = { 5, 1 }, ud[] = { 5, 3 };
    const int64_t idx[] = { 1, 3, 1, -1, 1 };
    float data[18], upd[15];
    ClinferNode *ins[3], *n;

    for (int i = 0; i < 18; i++)
      data[i] = 0.5f + (float) i * 0.25f;
    for (int i = 0; i < 15; i++)
      upd[i] = 1.1f - (float) i * 0.3f;
    ins[0] = input (&c, "data", CLINFER_TYPE_F32, 2, dd, data);
    ins[1] = input (&c, "idx", CLINFER_TYPE_I64, 2, id, idx);
    ins[2] = input (&c, "upd", CLINFER_TYPE_F32, 2, ud, upd);
    n = op (&c, "ScatterND", 3, ins, 1);
    clinfer_node_set_attr (n, "reduction", clinfer_attr_new_string (reductions[r]));
    check (&c);
    case_free (&c);
  }
}

/* f16 data (arithmetic in float, as the CPU device): ScatterND add with
 * duplicates, TopK smallest with ties. */
static void
test_f16 (void)
{
  Case c = case_new (18);
  const int64_t dd[] = { 4, 5 }, id[] = { 3, 1 }, ud[] = { 3, 5 }, kd[] = { 1 };
  const int64_t idx[] = { 2, 0, 2 }, k[] = { 5 };
  guint16 data[20], upd[15];
  ClinferNode *ins[3], *n;

  for (int i = 0; i < 20; i++)
    data[i] = clinfer_float_to_half ((float) (i % 4) * 0.75f - 1.f);
  for (int i = 0; i < 15; i++)
    upd[i] = clinfer_float_to_half (0.1f * (float) i + 0.3f);
  ins[0] = input (&c, "data", CLINFER_TYPE_F16, 2, dd, data);
  ins[1] = input (&c, "idx", CLINFER_TYPE_I64, 2, id, idx);
  ins[2] = input (&c, "upd", CLINFER_TYPE_F16, 2, ud, upd);
  n = op (&c, "ScatterND", 3, ins, 1);
  clinfer_node_set_attr (n, "reduction", clinfer_attr_new_string ("add"));
  ins[1] = constant (&c, "k", CLINFER_TYPE_I64, 1, kd, k);
  n = op (&c, "TopK", 2, ins, 2);
  clinfer_node_set_attr (n, "largest", clinfer_attr_new_int (0));
  check (&c);
  case_free (&c);
}

/* ScatterElements with duplicates along axis 1 (add) and negative
 * indices; integers (add) and without reduction on int64. */
static void
test_scatter_elements_duplicates (void)
{
  Case c = case_new (18);
  const int64_t dd[] = { 3, 5 }, id[] = { 3, 4 };
  const int64_t idx[] = { 0, 0, -1, 4, 2, 2, 2, 1, -5, 3, 0, 3 };
  int32_t data[15], upd[12];
  ClinferNode *ins[3], *n;

  for (int i = 0; i < 15; i++)
    data[i] = i * 3 - 7;
  for (int i = 0; i < 12; i++)
    upd[i] = 11 - i * 2;
  ins[0] = input (&c, "data", CLINFER_TYPE_I32, 2, dd, data);
  ins[1] = input (&c, "idx", CLINFER_TYPE_I64, 2, id, idx);
  ins[2] = input (&c, "upd", CLINFER_TYPE_I32, 2, id, upd);
  n = op (&c, "ScatterElements", 3, ins, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
  clinfer_node_set_attr (n, "reduction", clinfer_attr_new_string ("add"));
  n = op (&c, "ScatterElements", 3, ins, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (-1));
  clinfer_node_set_attr (n, "reduction", clinfer_attr_new_string ("min"));
  check (&c);
  case_free (&c);
}

/* GatherND with batch_dims 1 and partial tuples (slices of 2). */
static void
test_gather_nd_batch (void)
{
  Case c = case_new (18);
  const int64_t dd[] = { 2, 3, 4, 2 }, id[] = { 2, 3, 2 };
  const int32_t idx[] = { 0, 1, 2, 3, -1, -4, 1, 0, 0, 2, 2, 1 };
  float data[48];
  ClinferNode *ins[2], *n;

  for (int i = 0; i < 48; i++)
    data[i] = (float) i * 0.5f - 3.f;
  ins[0] = input (&c, "data", CLINFER_TYPE_F32, 4, dd, data);
  ins[1] = input (&c, "idx", CLINFER_TYPE_I32, 3, id, idx);
  n = op (&c, "GatherND", 2, ins, 1);
  clinfer_node_set_attr (n, "batch_dims", clinfer_attr_new_int (1));
  check (&c);
  case_free (&c);
}

/* No hit at all: a [rank, 0] output; the count read back is 4 bytes. */
static void
test_nonzero_no_hit (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 3, 5 };
  float x[15] = { 0 };
  ClinferNode *xn;

  x[7] = -0.f;               /* -0.0 is zero */
  xn = input (&c, "x", CLINFER_TYPE_F32, 2, xd, x);
  op (&c, "NonZero", 1, &xn, 1);
  /* Besides the (empty) output, only the 4-byte extent comes back. */
  g_assert_cmpuint (check (&c), ==, 4);
  case_free (&c);
}

static void
test_nonzero_hits (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 2, 3, 300 };
  uint8_t x[1800];
  ClinferNode *xn;

  /* Over several 256-element chunks, some of them empty. */
  for (int i = 0; i < 1800; i++)
    x[i] = (i % 7 == 0 && (i < 500 || i > 1400)) ? (uint8_t) i : 0;
  xn = input (&c, "x", CLINFER_TYPE_U8, 3, xd, x);
  op (&c, "NonZero", 1, &xn, 1);
  /* Besides the output, only the 4-byte extent comes back. */
  g_assert_cmpuint (check (&c), ==, 4);
  case_free (&c);
}

/* A run-time condition longer than 64 elements (stays on the device) and
 * one shorter than the axis. */
static void
test_compress_runtime (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 3, 100 }, cd[] = { 100 }, sd[] = { 2 };
  float x[300];
  uint8_t cond[100], cshort[2] = { 0, 1 };
  ClinferNode *ins[2], *n;

  for (int i = 0; i < 300; i++)
    x[i] = (float) i;
  for (int i = 0; i < 100; i++)
    cond[i] = i % 3 == 1;
  ins[0] = input (&c, "x", CLINFER_TYPE_F32, 2, xd, x);
  ins[1] = input (&c, "cond", CLINFER_TYPE_BOOL, 1, cd, cond);
  n = op (&c, "Compress", 2, ins, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
  op (&c, "Compress", 2, ins, 1);
  ins[1] = input (&c, "cshort", CLINFER_TYPE_BOOL, 1, sd, cshort);
  n = op (&c, "Compress", 2, ins, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (0));
  check (&c);
  case_free (&c);
}

/* Range, ConstantOfShape and OneHot whose parameters are graph inputs. */
static void
test_generate_runtime (void)
{
  Case c = case_new (18);
  const int64_t sd[] = { 3 }, id[] = { 2, 3 }, vd[] = { 2 };
  const int64_t start = 10, limit = -3, delta = -3, shape[] = { 2, 0, 3 };
  const int64_t shape2[] = { 2, 1, 3 }, depth = 5;
  const float fs = 0.5f, fl = 3.25f, fd = 0.375f, vals[] = { -1.f, 2.5f };
  const int32_t idx[] = { 0, -1, 4, 7, -6, 2 };
  g_autoptr (ClinferTensor) fill = NULL;
  ClinferNode *ins[3], *n;
  int32_t seven = 7;

  ins[0] = input (&c, "start", CLINFER_TYPE_I64, 0, NULL, &start);
  ins[1] = input (&c, "limit", CLINFER_TYPE_I64, 0, NULL, &limit);
  ins[2] = input (&c, "delta", CLINFER_TYPE_I64, 0, NULL, &delta);
  op (&c, "Range", 3, ins, 1);
  ins[0] = input (&c, "fs", CLINFER_TYPE_F32, 0, NULL, &fs);
  ins[1] = input (&c, "fl", CLINFER_TYPE_F32, 0, NULL, &fl);
  ins[2] = input (&c, "fd", CLINFER_TYPE_F32, 0, NULL, &fd);
  op (&c, "Range", 3, ins, 1);
  ins[0] = input (&c, "shape", CLINFER_TYPE_I64, 1, sd, shape);
  op (&c, "ConstantOfShape", 1, ins, 1);
  ins[0] = input (&c, "shape2", CLINFER_TYPE_I64, 1, sd, shape2);
  fill = tensor_of (CLINFER_TYPE_I32, 1, (const int64_t[]) { 1 }, &seven);
  n = op (&c, "ConstantOfShape", 1, ins, 1);
  clinfer_node_set_attr (n, "value", clinfer_attr_new_tensor (fill));
  ins[0] = input (&c, "idx", CLINFER_TYPE_I32, 2, id, idx);
  ins[1] = input (&c, "depth", CLINFER_TYPE_I64, 0, NULL, &depth);
  ins[2] = input (&c, "vals", CLINFER_TYPE_F32, 1, vd, vals);
  n = op (&c, "OneHot", 3, ins, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (1));
  check (&c);
  case_free (&c);
}

/* CumSum whose axis is a graph input (read on the device). */
static void
test_cumsum_runtime_axis (void)
{
  Case c = case_new (18);
  const int64_t xd[] = { 3, 4, 5 };
  const int32_t axis = -2;
  float x[60];
  ClinferNode *ins[2], *n;

  for (int i = 0; i < 60; i++)
    x[i] = (float) ((i * 5) % 11) - 4.f;
  ins[0] = input (&c, "x", CLINFER_TYPE_F32, 3, xd, x);
  ins[1] = input (&c, "axis", CLINFER_TYPE_I32, 0, NULL, &axis);
  op (&c, "CumSum", 2, ins, 1);
  n = op (&c, "CumSum", 2, ins, 1);
  clinfer_node_set_attr (n, "exclusive", clinfer_attr_new_int (1));
  clinfer_node_set_attr (n, "reverse", clinfer_attr_new_int (1));
  check (&c);
  case_free (&c);
}

/* The kernels index with 32-bit ints: a tensor over 2^30 elements is
 * refused when the model is compiled (static shapes, fallback off) or
 * when a step built at run time would make one, before anything that
 * size is allocated. */
static void
test_too_large_for_32_bit (void)
{
  Case c = case_new (18);
  const int64_t big[] = { ((int64_t) 1 << 30) + 1 };
  const int32_t start = 0, limit = (1 << 30) + 1, delta = 1;
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferCompiled) gpu = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  ClinferShape s = clinfer_shape_make (1, big);
  ClinferNode *ins[3];

  ins[0] = clinfer_graph_add_input (c.g, "b", CLINFER_TYPE_BOOL, &s);
  op (&c, "Not", 1, ins, 1);
  gpu = compile (c.g, "GPU", &err);
  g_assert_null (gpu);
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "too large for 32-bit indexing"));
  g_clear_error (&err);
  case_free (&c);

  c = case_new (18);
  ins[0] = input (&c, "start", CLINFER_TYPE_I32, 0, NULL, &start);
  ins[1] = input (&c, "limit", CLINFER_TYPE_I32, 0, NULL, &limit);
  ins[2] = input (&c, "delta", CLINFER_TYPE_I32, 0, NULL, &delta);
  op (&c, "Range", 3, ins, 1);
  gpu = compile (c.g, "GPU", &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (gpu, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < c.inputs->len; i++) {
    clinfer_request_set_input_by_index (r, i, g_ptr_array_index (c.inputs, i),
        &err);
    g_assert_no_error (err);
  }
  g_assert_false (clinfer_request_infer (r, &err));
  g_assert_nonnull (err);
  g_assert_nonnull (strstr (err->message, "too large at run time"));
  case_free (&c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!test_have_opencl ()) {
    printf ("no OpenCL device: skipped\n");
    return TEST_SKIP_STATUS;
  }
  g_test_add_func ("/ocl-index-more/topk-ties", test_topk_ties);
  g_test_add_func ("/ocl-index-more/topk-int", test_topk_int);
  g_test_add_func ("/ocl-index-more/scatter-nd-duplicates",
      test_scatter_nd_duplicates);
  g_test_add_func ("/ocl-index-more/scatter-elements-duplicates",
      test_scatter_elements_duplicates);
  g_test_add_func ("/ocl-index-more/f16", test_f16);
  g_test_add_func ("/ocl-index-more/gather-nd-batch", test_gather_nd_batch);
  g_test_add_func ("/ocl-index-more/nonzero-no-hit", test_nonzero_no_hit);
  g_test_add_func ("/ocl-index-more/nonzero-hits", test_nonzero_hits);
  g_test_add_func ("/ocl-index-more/compress-runtime", test_compress_runtime);
  g_test_add_func ("/ocl-index-more/generate-runtime", test_generate_runtime);
  g_test_add_func ("/ocl-index-more/cumsum-runtime-axis",
      test_cumsum_runtime_axis);
  g_test_add_func ("/ocl-index-more/too-large-for-32-bit",
      test_too_large_for_32_bit);
  return g_test_run ();
}
