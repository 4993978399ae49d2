/* clinfer — the CPU device's Concat, Slice, Transpose and Resize kernels (engine/plan/
 * copy-cpu.c) against the reference evals, value for value, with the
 * kernel the profile names: Concat along the last dim of one-value rows
 * (4- and 8-byte words), along the channels, along the first dim, of
 * 1-byte values in 3-byte rows; Split (each output checked) into blocks
 * of channels, one-value rows, equal parts, an empty part, 1-byte
 * values, split between the threads; Slice with contiguous runs merged over
 * whole trailing dims, steps of 2 and -1, clamped ends, a middle dim,
 * the opset-9 attribute form, and parameters known only at run time (the
 * reference eval then); Transpose with rows kept whole and with tiles
 * (partial ones too), rows of 2 to 8 bytes as one value, no perm, dims of
 * extent 1, 1- to 8-byte values, rank 5 and split between the threads; Resize, bit for bit: linear
 * (align_corners, asymmetric, half_pixel down, one of H and W unchanged,
 * split by planes and by rows), nearest at scales that are not whole
 * factors and of rank 3; linear of C too and cubic stay on the reference
 * eval. */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

static ClinferTensor *
counting (ClinferElementType type, int rank, const int64_t *dims, int seed)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    clinfer_op_store_double (t, i, (double) ((i * 7 + seed * 13) % 101) - 50.0);
  return t;
}

typedef struct {
  const char *name;
  ClinferElementType type;
  int rank;
  int64_t dims[4];           /* of each input; dims[axis] grows per input */
  int axis;
  guint n_in;
} ConcatCase;

static const ConcatCase concat_cases[] = {
  { "last-dim-words", CLINFER_TYPE_F32, 4, { 1, 17, 31, 1 }, 3, 8 },
  { "last-dim-i64", CLINFER_TYPE_I64, 3, { 2, 9, 1 }, -1, 3 },
  { "channels", CLINFER_TYPE_F32, 4, { 2, 3, 20, 30 }, 1, 3 },
  { "first-dim", CLINFER_TYPE_F32, 2, { 4, 5 }, 0, 2 },
  { "u8-three-byte-rows", CLINFER_TYPE_U8, 3, { 5, 7, 3 }, 2, 2 },
};

static void
test_concat (gconstpointer data)
{
  const ConcatCase *cc = data;
  ClinferGraph *g = op_test_graph (13);
  ClinferTensor *inputs[8];
  ClinferNode *in[8], *n;
  int axis = cc->axis < 0 ? cc->axis + cc->rank : cc->axis;

  for (guint i = 0; i < cc->n_in; i++) {
    int64_t d[4];
    g_autofree char *name = g_strdup_printf ("x%u", i);
    ClinferShape s;
    memcpy (d, cc->dims, sizeof (d));
    d[axis] += i % 2;        /* inputs of different extents */
    s = clinfer_shape_make (cc->rank, d);
    inputs[i] = counting (cc->type, cc->rank, d, (int) i);
    in[i] = clinfer_graph_add_input (g, name, cc->type, &s);
  }
  n = op_test_node (g, "Concat", "", "cat", cc->n_in, in, 1);
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (cc->axis));
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, 13, inputs, cc->n_in, "concat_rows", cc->name);
  for (guint i = 0; i < cc->n_in; i++)
    clinfer_tensor_unref (inputs[i]);
}

typedef struct {
  const char *name;
  ClinferElementType type;
  int rank;
  int64_t dims[4];
  int axis;
  int opset;                 /* 13: a split input; 11: the attribute */
  guint n_out;
  int64_t split[4];          /* n_out parts; [0] = 0: equal parts */
} SplitCase;

static const SplitCase split_cases[] = {
  /* picodet's head: 10 channels into 4 + 6 (blocks of planes) */
  { "channels", CLINFER_TYPE_F32, 4, { 1, 10, 50, 38 }, 1, 13, 2, { 4, 6 } },
  { "last-dim-words", CLINFER_TYPE_F32, 3, { 3, 40, 3 }, -1, 13, 3,
    { 1, 1, 1 } },
  { "equal-parts-attr", CLINFER_TYPE_F32, 3, { 2, 12, 5 }, 1, 11, 3, { 0 } },
  { "first-dim-i64", CLINFER_TYPE_I64, 2, { 7, 3 }, 0, 13, 3, { 2, 0, 5 } },
  { "u8-rows", CLINFER_TYPE_U8, 3, { 4, 6, 9 }, 2, 11, 2, { 4, 5 } },
  { "threads", CLINFER_TYPE_F32, 3, { 64, 96, 20 }, 1, 13, 4,
    { 30, 2, 40, 24 } },
};

/* Each output of Split on its own (the test runner checks output 0):
 * the kernel writes all of them every run. */
static void
test_split (gconstpointer data)
{
  const SplitCase *sc = data;
  g_autoptr (ClinferTensor) x = counting (sc->type, sc->rank, sc->dims, 3);
  ClinferTensor *inputs[1] = { x };

  for (guint k = 0; k < sc->n_out; k++) {
    ClinferGraph *g = op_test_graph (sc->opset);
    ClinferShape xs = clinfer_shape_make (sc->rank, sc->dims);
    int64_t nd[] = { sc->n_out };
    ClinferNode *in[2], *n;
    g_autofree char *what = g_strdup_printf ("%s output %u", sc->name, k);

    in[0] = clinfer_graph_add_input (g, "x", sc->type, &xs);
    if (sc->split[0] == 0) {
      n = op_test_node (g, "Split", "", "split", 1, in, sc->n_out);
    } else if (sc->opset < 13) {
      n = op_test_node (g, "Split", "", "split", 1, in, sc->n_out);
      clinfer_node_set_attr (n, "split",
          clinfer_attr_new_ints (sc->split, sc->n_out));
    } else {
      in[1] = op_test_constant (g, "parts", CLINFER_TYPE_I64, 1, nd,
          sc->split);
      n = op_test_node (g, "Split", "", "split", 2, in, sc->n_out);
    }
    clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (sc->axis));
    clinfer_graph_add_output (g, (ClinferPortRef) { n, k }, "y");
    op_test_check_cpu_kernel (g, NULL, sc->opset, inputs, 1, "split_rows",
        what);
  }
}

typedef struct {
  const char *name;
  int rank;
  int64_t dims[4];
  int n_axes;
  int64_t starts[4], ends[4], axes[4], steps[4];
  int opset;
  gboolean runtime_params;
  const char *kernel;
} SliceCase;

static const SliceCase slice_cases[] = {
  { "merged-runs", 4, { 2, 3, 8, 9 }, 1, { 1 }, { 3 }, { 1 }, { 1 }, 13,
    FALSE, "slice_rows" },
  { "last-dim", 4, { 1, 172, 30, 2 }, 1, { 1 }, { 2 }, { 3 }, { 1 }, 13,
    FALSE, "slice_rows" },
  { "step-two", 3, { 3, 5, 17 }, 2, { 1, 0 }, { 17, 5 }, { 2, 1 },
    { 2, 2 }, 13, FALSE, "slice_rows" },
  { "negative-step", 2, { 6, 9 }, 2, { -1, 7 }, { -100, 1 }, { 0, 1 },
    { -1, -3 }, 13, FALSE, "slice_rows" },
  { "clamped-ends", 3, { 4, 6, 5 }, 2, { -2, 1 }, { 1000, -1 }, { 1, 2 },
    { 1, 1 }, 13, FALSE, "slice_rows" },
  { "opset9-attrs", 3, { 4, 6, 5 }, 2, { 1, 2 }, { 3, 5 }, { 0, 2 },
    { 1, 1 }, 9, FALSE, "slice_rows" },
  { "runtime-params", 2, { 6, 9 }, 1, { 2 }, { 8 }, { 1 }, { 1 }, 13,
    TRUE, "reference" },
};

/* The Slice graph of @sc, its starts a graph input when @runtime. */
static ClinferGraph *
slice_graph (const SliceCase *sc, gboolean runtime)
{
  ClinferGraph *g = op_test_graph (sc->opset);
  ClinferShape xs = clinfer_shape_make (sc->rank, sc->dims);
  int64_t nd[] = { sc->n_axes };
  ClinferNode *in[5], *n;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  if (sc->opset < 10) {
    n = op_test_node (g, "Slice", "", "slice", 1, in, 1);
    clinfer_node_set_attr (n, "starts", clinfer_attr_new_ints (sc->starts, sc->n_axes));
    clinfer_node_set_attr (n, "ends", clinfer_attr_new_ints (sc->ends, sc->n_axes));
    clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (sc->axes, sc->n_axes));
  } else {
    if (runtime) {
      ClinferShape ss = clinfer_shape_make (1, nd);
      in[1] = clinfer_graph_add_input (g, "starts", CLINFER_TYPE_I64, &ss);
    } else {
      in[1] = op_test_constant (g, "starts", CLINFER_TYPE_I64, 1, nd, sc->starts);
    }
    in[2] = op_test_constant (g, "ends", CLINFER_TYPE_I64, 1, nd, sc->ends);
    in[3] = op_test_constant (g, "axes", CLINFER_TYPE_I64, 1, nd, sc->axes);
    in[4] = op_test_constant (g, "steps", CLINFER_TYPE_I64, 1, nd, sc->steps);
    n = op_test_node (g, "Slice", "", "slice", 5, in, 1);
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  return g;
}

static void
test_slice (gconstpointer data)
{
  const SliceCase *sc = data;
  int64_t nd[] = { sc->n_axes };
  g_autoptr (ClinferTensor) x = counting (CLINFER_TYPE_F32, sc->rank,
      sc->dims, 1);
  g_autoptr (ClinferTensor) starts = op_test_i64 (1, nd, sc->starts);
  ClinferTensor *inputs[2] = { x, starts };

  /* The expected values from the constant-parameter graph: the reference
   * runner needs static shapes. */
  op_test_check_cpu_kernel (slice_graph (sc, sc->runtime_params),
      sc->runtime_params ? slice_graph (sc, FALSE) : NULL, sc->opset, inputs,
      sc->runtime_params ? 2 : 1, sc->kernel, sc->name);
}

typedef struct {
  const char *name;
  ClinferElementType type;
  int rank;
  int64_t dims[5];
  int perm[5];               /* perm[0] < 0: no perm attribute (reversed) */
  const char *kernel;
} TransposeCase;

static const TransposeCase transpose_cases[] = {
  { "nchw-to-nhwc", CLINFER_TYPE_F32, 4, { 2, 3, 5, 7 }, { 0, 2, 3, 1 }, "transpose_tiles" },
  { "last-two-partial-tiles", CLINFER_TYPE_F32, 3, { 3, 17, 33 }, { 0, 2, 1 }, "transpose_tiles" },
  { "last-dim-stays", CLINFER_TYPE_F32, 4, { 4, 5, 6, 7 }, { 1, 0, 2, 3 }, "transpose_rows" },
  { "reversed", CLINFER_TYPE_F32, 3, { 3, 4, 5 }, { -1 }, "transpose_tiles" },
  { "ones-dropped", CLINFER_TYPE_F32, 4, { 1, 5, 1, 7 }, { 3, 2, 1, 0 }, "transpose_tiles" },
  { "all-ones", CLINFER_TYPE_F32, 2, { 1, 1 }, { 1, 0 }, "transpose_rows" },
  { "i64", CLINFER_TYPE_I64, 2, { 6, 10 }, { 1, 0 }, "transpose_tiles" },
  { "u8-rotate", CLINFER_TYPE_U8, 3, { 3, 40, 50 }, { 2, 0, 1 }, "transpose_tiles" },
  { "i16-rank5", CLINFER_TYPE_I16, 5, { 2, 3, 4, 5, 6 }, { 4, 1, 0, 3, 2 }, "transpose_tiles" },
  { "threads", CLINFER_TYPE_F32, 3, { 64, 300, 40 }, { 2, 1, 0 }, "transpose_tiles" },
  { "threads-rows", CLINFER_TYPE_F32, 4, { 64, 30, 10, 40 }, { 1, 2, 0, 3 }, "transpose_rows" },
  { "short-rows-as-values", CLINFER_TYPE_F32, 4, { 1, 172, 309, 2 }, { 0, 2, 1, 3 }, "transpose_tiles" },
  { "short-rows-u8", CLINFER_TYPE_U8, 3, { 5, 7, 4 }, { 1, 0, 2 }, "transpose_tiles" },
  { "three-byte-rows", CLINFER_TYPE_U8, 3, { 5, 7, 3 }, { 1, 0, 2 }, "transpose_rows" },
};

static void
test_transpose (gconstpointer data)
{
  const TransposeCase *tc = data;
  ClinferGraph *g = op_test_graph (13);
  ClinferShape s = clinfer_shape_make (tc->rank, tc->dims);
  g_autoptr (ClinferTensor) x = counting (tc->type, tc->rank, tc->dims, 5);
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in[1], *n;

  in[0] = clinfer_graph_add_input (g, "x", tc->type, &s);
  n = op_test_node (g, "Transpose", "", "t", 1, in, 1);
  if (tc->perm[0] >= 0) {
    int64_t p[5];
    for (int i = 0; i < tc->rank; i++)
      p[i] = tc->perm[i];
    clinfer_node_set_attr (n, "perm", clinfer_attr_new_ints (p, tc->rank));
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, 13, inputs, 1, tc->kernel, tc->name);
}

typedef struct {
  const char *name, *mode, *coord, *nearest;
  int rank;
  int64_t in[4], out[4];     /* out[0] < 0: by scales (@scales) */
  float scales[4];
  const char *kernel;
  gboolean specials;         /* the input starts with -0, the smallest
                              * subnormal and an infinity */
} ResizeCase;

static const ResizeCase resize_cases[] = {
  { "linear-align-corners", "linear", "align_corners", NULL, 4,
    { 1, 3, 7, 9 }, { 1, 3, 13, 20 }, { 0 }, "resize_linear_rows" },
  { "linear-asymmetric-x2", "linear", "asymmetric", NULL, 4,
    { 2, 2, 5, 6 }, { -1 }, { 1, 1, 2, 2 }, "resize_linear_rows" },
  { "linear-half-pixel-down", "linear", "half_pixel", NULL, 4,
    { 1, 2, 10, 10 }, { -1 }, { 1, 1, 0.6f, 0.7f }, "resize_linear_rows" },
  { "linear-width-only", "linear", "align_corners", NULL, 4,
    { 1, 4, 6, 8 }, { 1, 4, 6, 11 }, { 0 }, "resize_linear_rows" },
  { "linear-height-only", "linear", "asymmetric", NULL, 4,
    { 1, 4, 6, 8 }, { 1, 4, 9, 8 }, { 0 }, "resize_linear_rows" },
  { "linear-threads-planes", "linear", "align_corners", NULL, 4,
    { 1, 8, 64, 64 }, { 1, 8, 100, 100 }, { 0 }, "resize_linear_rows" },
  { "linear-threads-rows", "linear", "asymmetric", NULL, 4,
    { 1, 1, 300, 300 }, { 1, 1, 450, 451 }, { 0 }, "resize_linear_rows" },
  { "nearest-x1.5", "nearest", "asymmetric", "floor", 4,
    { 1, 3, 8, 8 }, { -1 }, { 1, 1, 1.5f, 1.5f }, "resize_nearest_rows" },
  { "nearest-rank3", "nearest", "half_pixel", "round_prefer_ceil", 3,
    { 4, 5, 6 }, { 4, 10, 9 }, { 0 }, "resize_nearest_rows" },
  { "nearest-threads", "nearest", "asymmetric", "floor", 4,
    { 1, 16, 40, 40 }, { -1 }, { 1, 1, 1.7f, 2.3f }, "resize_nearest_rows" },
  /* pytorch_half_pixel gives a dim of length 1 the taps 0.5, 0.5 of
   * index 0: N here, C in the second (its W unchanged) */
  { "linear-pytorch-to-one", "linear", "pytorch_half_pixel", NULL, 4,
    { 1, 3, 6, 7 }, { 1, 3, 1, 14 }, { 0 }, "resize_linear_rows" },
  { "linear-pytorch-channel-one", "linear", "pytorch_half_pixel", NULL, 4,
    { 2, 1, 5, 5 }, { 2, 1, 1, 5 }, { 0 }, "resize_linear_rows" },
  /* only those taps: (0 + 0.5 v) + 0.5 v as the reference, which makes
   * the subnormal 0 */
  { "linear-pytorch-self-only", "linear", "pytorch_half_pixel", NULL, 4,
    { 1, 1, 3, 4 }, { 1, 1, 3, 4 }, { 0 }, "resize_linear_rows", TRUE },
  { "linear-channels-too", "linear", "asymmetric", NULL, 4,
    { 1, 2, 4, 4 }, { 1, 3, 4, 4 }, { 0 }, "reference" },
  { "cubic", "cubic", "half_pixel", NULL, 4,
    { 1, 2, 6, 6 }, { 1, 2, 9, 9 }, { 0 }, "reference" },
};

static void
test_resize (gconstpointer data)
{
  const ResizeCase *rc = data;
  ClinferGraph *g = op_test_graph (13);
  ClinferShape s = clinfer_shape_make (rc->rank, rc->in);
  g_autoptr (ClinferTensor) x = counting (CLINFER_TYPE_F32, rc->rank, rc->in, 6);
  ClinferTensor *inputs[1] = { x };
  int64_t nd[] = { rc->rank };

  if (rc->specials) {
    float *v = clinfer_tensor_get_data (x);
    v[0] = -0.f;
    v[1] = 1.4e-45f;
    v[2] = INFINITY;
  }
  ClinferNode *in[4] = { NULL }, *n;

  in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &s);
  if (rc->out[0] < 0)
    in[2] = op_test_constant (g, "scales", CLINFER_TYPE_F32, 1, nd, rc->scales);
  else
    in[3] = op_test_constant (g, "sizes", CLINFER_TYPE_I64, 1, nd, rc->out);
  n = op_test_node (g, "Resize", "", "resize", 4, in, 1);
  clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (rc->mode));
  clinfer_node_set_attr (n, "coordinate_transformation_mode",
      clinfer_attr_new_string (rc->coord));
  if (rc->nearest)
    clinfer_node_set_attr (n, "nearest_mode", clinfer_attr_new_string (rc->nearest));
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  op_test_check_cpu_kernel (g, NULL, 13, inputs, 1, rc->kernel, rc->name);
}

/* View steps (Reshape, Unsqueeze) on the CPU device alias their input's
 * bytes: x -> Abs -> Reshape -> Unsqueeze -> Neg -> y runs both views as
 * "alias" (no copy), with shared, unshared and both arena layouts; a
 * Reshape whose input is also a graph output, or whose output is one,
 * copies (the caller's tensor may stand in for that output). Outputs equal
 * the reference evals'. */
static void
test_view_alias (void)
{
  static const char *const layouts[] = { "1", "0", "both" };
  int64_t xd[] = { 2, 3, 4 }, rd[] = { 6, 4 }, n2[] = { 2 }, ud[] = { 0 };

  for (gsize l = 0; l < G_N_ELEMENTS (layouts); l++)
    for (int variant = 0; variant < 3; variant++) {
      ClinferGraph *g = op_test_graph (13);
      ClinferShape xs = clinfer_shape_make (3, xd);
      g_autoptr (ClinferTensor) x = counting (CLINFER_TYPE_F32, 3, xd, 7);
      g_autoptr (ClinferTensor) want = NULL;
      g_autoptr (ClinferModel) m = NULL;
      g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
      g_autoptr (ClinferCompiled) c = NULL;
      g_autoptr (ClinferRequest) r = NULL;
      ClinferTensor *inputs[1] = { x };
      ClinferNode *in[2], *a, *v;
      const ClinferProfileEntry *e;
      guint n = 0, n_alias = 0;
      GError *err = NULL;

      in[0] = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
      a = op_test_node (g, "Abs", "", "abs", 1, in, 1);
      in[0] = a;
      in[1] = op_test_constant (g, "shape", CLINFER_TYPE_I64, 1, n2, rd);
      v = op_test_node (g, "Reshape", "", "reshape", 2, in, 1);
      in[0] = v;
      in[1] = op_test_constant (g, "axes", CLINFER_TYPE_I64, 1, (int64_t[]) { 1 }, ud);
      v = op_test_node (g, "Unsqueeze", "", "unsqueeze", 2, in, 1);
      if (variant == 2) {
        clinfer_graph_add_output (g, (ClinferPortRef) { v, 0 }, "y");
      } else {
        in[0] = v;
        v = op_test_node (g, "Neg", "", "neg", 1, in, 1);
        clinfer_graph_add_output (g, (ClinferPortRef) { v, 0 }, "y");
      }
      if (variant == 1)
        clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "abs");
      g_assert_true (op_test_prepare (g, &err));
      g_assert_no_error (err);
      want = op_test_run_graph (g, inputs, &err);
      g_assert_no_error (err);
      m = op_test_model (g, 13, &err);
      g_assert_no_error (err);
      clinfer_compile_config_set_profiling (cfg, TRUE);
      clinfer_compile_config_set_threads (cfg, 2);
      g_setenv ("CLINFER_CPU_ARENA_SHARED", layouts[l], TRUE);
      c = clinfer_compile (m, cfg, &err);
      g_unsetenv ("CLINFER_CPU_ARENA_SHARED");
      g_assert_no_error (err);
      r = clinfer_compiled_create_request (c, &err);
      g_assert_no_error (err);
      g_assert_true (clinfer_request_set_input_by_index (r, 0, x, &err));
      /* Several runs: with two layouts the chooser tries both. */
      for (int k = 0; k < 12; k++) {
        ClinferTensor *got;
        g_assert_true (clinfer_request_infer (r, &err));
        g_assert_no_error (err);
        got = clinfer_request_get_output (r, 0);
        for (int64_t i = 0; i < clinfer_tensor_get_n_elements (want); i++)
          g_assert_cmpfloat (((const float *) clinfer_tensor_get_const_data (got))[i], ==,
              ((const float *) clinfer_tensor_get_const_data (want))[i]);
      }
      e = clinfer_request_get_profile (r, &n);
      for (guint i = 0; i < n; i++)
        if (g_strcmp0 (e[i].kernel, "alias") == 0)
          n_alias++;
      /* Variant 1: the Reshape reads a graph output; variant 2: the
       * Unsqueeze writes one. The other view aliases in both. */
      g_assert_cmpuint (n_alias, ==, variant == 0 ? 2 : 1);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (split_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/split/%s",
        split_cases[i].name);
    g_test_add_data_func (path, &split_cases[i], test_split);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (concat_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/concat/%s",
        concat_cases[i].name);
    g_test_add_data_func (path, &concat_cases[i], test_concat);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (slice_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/slice/%s",
        slice_cases[i].name);
    g_test_add_data_func (path, &slice_cases[i], test_slice);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (transpose_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/transpose/%s",
        transpose_cases[i].name);
    g_test_add_data_func (path, &transpose_cases[i], test_transpose);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (resize_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/resize/%s",
        resize_cases[i].name);
    g_test_add_data_func (path, &resize_cases[i], test_resize);
  }
  g_test_add_func ("/cpu/view-alias", test_view_alias);
  return g_test_run ();
}
