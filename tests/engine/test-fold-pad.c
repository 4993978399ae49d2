/* clinfer — Pad: the CPU device's Pad kernel (engine/plan/pad-cpu.c)
 * against the reference eval (ranks 2 to 5, 1/4/8-byte elements, fill 0
 * and other values, unpadded trailing dims merged into rows, pads as an
 * input or an attribute; cropping pads left
 * to the reference eval; reflect and edge modes: along the last dim, on
 * H and W, pads wider than the extent, unpadded trailing dims as one
 * element, 1- and 8-byte values, split between the threads), and the fold-pad pass (engine/passes/fold-pad.c): a Pad
 * of zeros on the spatial dims before a Conv (strided, asymmetric, added
 * to the Conv's own pads; pads as an input or, opset 10, an attribute), an
 * AveragePool (count_include_pad becomes 1) or a MaxPool over a Relu's
 * output (or padded with -inf) becomes that node's padding, with the same
 * result on the reference evals and, compiled, on the CPU device and the
 * GPU device when one opens. Left alone: a value other than 0, padding of
 * the channel dim, a Pad output read elsewhere, reflect mode, an
 * AveragePool with pads of its own and count_include_pad 0, a MaxPool
 * whose input may be negative, a pool with ceil_mode, a Conv with
 * auto_pad. */
#include "op-test-util.h"
#include "passes/passes.h"
#include <math.h>
#include <string.h>

typedef enum {
  FOLD_CONV_STRIDED,         /* Pad 0,1 / 0,1 then Conv 3x3 stride 2 */
  FOLD_CONV_OWN_PADS,        /* Pad 1,2 / 2,1 then Conv with pads 1 */
  FOLD_CONV_OPSET10,         /* pads as an attribute */
  FOLD_AVG,                  /* AveragePool 3x3 stride 2, cip 0 */
  FOLD_MAX_RELU,             /* Relu, Pad, MaxPool */
  FOLD_MAX_NEG_INF,          /* Pad with -inf, MaxPool */
  KEEP_VALUE_ONE,            /* Pad value 1 before a Conv */
  KEEP_CHANNEL,              /* Pad of the channel dim */
  KEEP_SHARED,               /* Pad output also a graph output */
  KEEP_REFLECT,              /* reflect mode */
  KEEP_AVG_OWN_PADS,         /* AveragePool pads 1, cip 0 */
  KEEP_MAX_SIGNED,           /* MaxPool of x, which may be negative */
  KEEP_CEIL_MODE,            /* AveragePool with ceil_mode 1 */
  KEEP_AUTO_PAD,             /* Conv with auto_pad SAME_UPPER */
} Form;

static const char *const form_names[] = { "conv-strided", "conv-own-pads",
  "conv-opset10", "average-pool", "max-pool-after-relu",
  "max-pool-neg-inf", "value-one-kept", "channel-kept", "shared-kept",
  "reflect-kept", "average-own-pads-kept", "max-pool-signed-kept",
  "ceil-mode-kept", "auto-pad-kept" };

static int
form_opset (Form form)
{
  return form == FOLD_CONV_OPSET10 ? 10 : 13;
}

/* Pad of @x: begins/ends per dim of a rank-4 tensor, @value, @mode. */
static ClinferNode *
pad_node (ClinferGraph *g, ClinferNode *x, int opset, const int64_t *pads,
    float value, const char *mode)
{
  int64_t pd[] = { 8 };
  ClinferNode *p;

  if (opset < 11) {
    p = op_test_node (g, "Pad", "", "pad", 1, &x, 1);
    clinfer_node_set_attr (p, "pads", clinfer_attr_new_ints (pads, 8));
    clinfer_node_set_attr (p, "value", clinfer_attr_new_float (value));
  } else {
    ClinferNode *in[3] = { x,
      op_test_constant (g, "pads", CLINFER_TYPE_I64, 1, pd, pads),
      op_test_constant (g, "value", CLINFER_TYPE_F32, 0, NULL, &value) };
    p = op_test_node (g, "Pad", "", "pad", 3, in, 1);
  }
  if (mode)
    clinfer_node_set_attr (p, "mode", clinfer_attr_new_string (mode));
  return p;
}

static ClinferNode *
conv_node (ClinferGraph *g, GRand *rand, ClinferNode *x, int stride,
    const int64_t *pads)
{
  int64_t wd[] = { 5, 3, 3, 3 }, bd[] = { 5 };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, bd);
  ClinferNode *in[3] = { x,
    op_test_constant (g, "w", CLINFER_TYPE_F32, 4, wd,
        clinfer_tensor_get_const_data (w)),
    op_test_constant (g, "b", CLINFER_TYPE_F32, 1, bd,
        clinfer_tensor_get_const_data (b)) };
  ClinferNode *c = op_test_node (g, "Conv", "", "conv", 3, in, 1);
  static const int64_t zero[] = { 0, 0, 0, 0 };

  op_test_set_conv_attrs (c, 3, 3, stride, stride, 1, 1, 1, NULL,
      pads ? pads : zero, NULL);
  return c;
}

static ClinferNode *
pool_node (ClinferGraph *g, ClinferNode *x, const char *op, const int64_t *pads)
{
  int64_t k[] = { 3, 3 }, s[] = { 2, 2 };
  ClinferNode *p = op_test_node (g, op, "", "pool", 1, &x, 1);

  clinfer_node_set_attr (p, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (p, "strides", clinfer_attr_new_ints (s, 2));
  if (pads)
    clinfer_node_set_attr (p, "pads", clinfer_attr_new_ints (pads, 4));
  return p;
}

/* The test graph of @form: x [2, 3, 9, 10] -> ... -> y. */
static ClinferGraph *
build (int form, GRand *rand)
{
  int opset = form_opset (form);
  ClinferGraph *g = op_test_graph (opset);
  int64_t xd[] = { 2, 3, 9, 10 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  static const int64_t same[] = { 0, 0, 0, 0, 0, 0, 1, 1 };
  static const int64_t asym[] = { 0, 0, 1, 2, 0, 0, 2, 1 };
  static const int64_t chan[] = { 0, 1, 1, 1, 0, 0, 1, 1 };
  static const int64_t own[] = { 1, 1, 1, 1 };
  ClinferNode *x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  ClinferNode *p, *y;

  switch (form) {
    case FOLD_CONV_OWN_PADS:
      y = conv_node (g, rand, pad_node (g, x, opset, asym, 0.f, NULL), 1, own);
      break;
    case FOLD_AVG:
      y = pool_node (g, pad_node (g, x, opset, asym, 0.f, NULL),
          "AveragePool", NULL);
      break;
    case KEEP_AVG_OWN_PADS:
      y = pool_node (g, pad_node (g, x, opset, asym, 0.f, NULL),
          "AveragePool", own);
      break;
    case FOLD_MAX_RELU:
      p = op_test_node (g, "Relu", "", "relu", 1, &x, 1);
      y = pool_node (g, pad_node (g, p, opset, asym, 0.f, NULL), "MaxPool",
          NULL);
      break;
    case FOLD_MAX_NEG_INF:
      y = pool_node (g, pad_node (g, x, opset, asym, -INFINITY, NULL),
          "MaxPool", NULL);
      break;
    case KEEP_MAX_SIGNED:
      y = pool_node (g, pad_node (g, x, opset, asym, 0.f, NULL), "MaxPool",
          NULL);
      break;
    case KEEP_CEIL_MODE:
      y = pool_node (g, pad_node (g, x, opset, asym, 0.f, NULL),
          "AveragePool", NULL);
      clinfer_node_set_attr (y, "ceil_mode", clinfer_attr_new_int (1));
      break;
    case KEEP_AUTO_PAD:
      y = conv_node (g, rand, pad_node (g, x, opset, same, 0.f, NULL), 2, NULL);
      g_hash_table_remove (y->attrs, "pads");
      clinfer_node_set_attr (y, "auto_pad", clinfer_attr_new_string ("SAME_UPPER"));
      break;
    case KEEP_VALUE_ONE:
      y = conv_node (g, rand, pad_node (g, x, opset, same, 1.f, NULL), 2, NULL);
      break;
    case KEEP_CHANNEL:
      p = pad_node (g, x, opset, chan, 0.f, NULL);
      {
        int64_t wd[] = { 5, 4, 3, 3 };
        g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
        ClinferNode *in[2] = { p, op_test_constant (g, "w", CLINFER_TYPE_F32,
              4, wd, clinfer_tensor_get_const_data (w)) };
        static const int64_t zero[] = { 0, 0, 0, 0 };
        y = op_test_node (g, "Conv", "", "conv", 2, in, 1);
        op_test_set_conv_attrs (y, 3, 3, 2, 2, 1, 1, 1, NULL, zero, NULL);
      }
      break;
    case KEEP_REFLECT:
      y = conv_node (g, rand, pad_node (g, x, opset, same, 0.f, "reflect"), 2,
          NULL);
      break;
    case KEEP_SHARED:
    case FOLD_CONV_STRIDED:
    case FOLD_CONV_OPSET10:
    default:
      p = pad_node (g, x, opset, same, 0.f, NULL);
      y = conv_node (g, rand, p, 2, NULL);
      if (form == KEEP_SHARED)
        clinfer_graph_add_output (g, (ClinferPortRef) { p, 0 }, "padded");
      break;
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { y, 0 }, "y");
  /* The shared case's second output goes first: keep y as output 0. */
  if (form == KEEP_SHARED) {
    ClinferGraphOutput tmp = g_array_index (g->outputs, ClinferGraphOutput, 0);
    g_array_index (g->outputs, ClinferGraphOutput, 0) =
        g_array_index (g->outputs, ClinferGraphOutput, 1);
    g_array_index (g->outputs, ClinferGraphOutput, 1) = tmp;
  }
  return g;
}

static void
test_fold (gconstpointer data)
{
  Form form = GPOINTER_TO_INT (data);
  gboolean folds = form <= FOLD_MAX_NEG_INF;
  int opset = form_opset (form);
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  g_autoptr (ClinferGraph) g = build (form, rand);
  ClinferPassContext ctx = { NULL, opset };
  int64_t xd[] = { 2, 3, 9, 10 };
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[1] = { x };
  gboolean changed = FALSE;
  GError *err = NULL;

  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fold_pad (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, folds);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, "Pad"), ==, folds ? 0 : 1);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fold-pad");
  /* Compiled (every pass, the devices' kernels for the folded pads). */
  op_test_check_devices (build, form, 11, opset, x, before);
}

typedef struct {
  const char *name;
  ClinferElementType type;
  int rank;
  int64_t dims[5];
  int64_t pads[10];
  double value;
  int opset;
  const char *kernel;        /* expected in the profile */
  const char *mode;          /* NULL: constant */
} PadCase;

static const PadCase pad_cases[] = {
  { "f32-4d-zero", CLINFER_TYPE_F32, 4, { 1, 6, 17, 19 },
    { 0, 0, 1, 2, 0, 0, 2, 1 }, 0.0, 13, "pad_rows" },
  { "f32-3d-value", CLINFER_TYPE_F32, 3, { 2, 5, 7 },
    { 1, 0, 3, 0, 2, 1 }, 2.5, 13, "pad_rows" },
  { "u8-2d", CLINFER_TYPE_U8, 2, { 9, 33 }, { 2, 3, 1, 0 }, 7.0, 13,
    "pad_rows" },
  { "i64-5d", CLINFER_TYPE_I64, 5, { 1, 2, 3, 4, 5 },
    { 0, 1, 0, 2, 1, 1, 0, 1, 0, 0 }, -3.0, 13, "pad_rows" },
  { "f32-opset10-attr", CLINFER_TYPE_F32, 4, { 1, 3, 8, 8 },
    { 0, 0, 1, 1, 0, 0, 1, 1 }, 1.0, 10, "pad_rows" },
  /* Unpadded trailing dims merge into longer rows. */
  { "f32-trailing-merged", CLINFER_TYPE_F32, 4, { 1, 17, 30, 1 },
    { 0, 0, 2, 0, 0, 0, 3, 0 }, 0.5, 13, "pad_rows" },
  { "f32-two-trailing-merged", CLINFER_TYPE_F32, 4, { 2, 3, 4, 5 },
    { 0, 1, 0, 0, 1, 2, 0, 0 }, -1.0, 13, "pad_rows" },
  { "f32-unpadded", CLINFER_TYPE_F32, 3, { 2, 3, 4 },
    { 0, 0, 0, 0, 0, 0 }, 0.0, 13, "pad_rows" },
  { "f32-crop-reference", CLINFER_TYPE_F32, 4, { 1, 3, 8, 8 },
    { 0, 0, -1, 1, 0, 0, 1, -2 }, 0.0, 13, "reference" },
  /* basic-pitch's audio frames: reflect along the samples */
  { "reflect-last-dim", CLINFER_TYPE_F32, 3, { 1, 1, 50 },
    { 0, 0, 5, 0, 0, 7 }, 0.0, 13, "pad_reflect_rows", "reflect" },
  { "reflect-h-w", CLINFER_TYPE_F32, 4, { 1, 3, 6, 7 },
    { 0, 0, 2, 1, 0, 0, 3, 2 }, 0.0, 13, "pad_reflect_rows", "reflect" },
  /* pads beyond the extent wrap as the reference eval has them */
  { "reflect-wide", CLINFER_TYPE_F32, 3, { 2, 4, 3 },
    { 0, 0, 4, 0, 0, 5 }, 0.0, 13, "pad_reflect_rows", "reflect" },
  { "reflect-trailing-merged", CLINFER_TYPE_F32, 4, { 1, 4, 5, 3 },
    { 0, 1, 0, 0, 0, 2, 0, 0 }, 0.0, 13, "pad_reflect_rows", "reflect" },
  { "edge-u8-trailing", CLINFER_TYPE_U8, 4, { 2, 3, 5, 1 },
    { 0, 0, 3, 0, 0, 0, 2, 0 }, 0.0, 13, "pad_edge_rows", "edge" },
  { "edge-i64-opset10", CLINFER_TYPE_I64, 2, { 3, 4 }, { 2, 1, 1, 3 }, 0.0,
    10, "pad_edge_rows", "edge" },
  { "edge-threads", CLINFER_TYPE_F32, 3, { 8, 120, 100 },
    { 0, 2, 3, 0, 1, 4 }, 0.0, 13, "pad_edge_rows", "edge" },
};

static ClinferTensor *
random_of (GRand *rand, ClinferElementType type, int rank, const int64_t *dims)
{
  g_autoptr (ClinferTensor) f = op_test_random (rand, rank, dims);
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    clinfer_op_store_double (t, i,
        floor (100.0 * clinfer_tensor_get_as_double (f, i)));
  return t;
}

static ClinferGraph *
pad_graph (const PadCase *pc)
{
  ClinferGraph *g = op_test_graph (pc->opset);
  ClinferShape xs = clinfer_shape_make (pc->rank, pc->dims);
  ClinferNode *x = clinfer_graph_add_input (g, "x", pc->type, &xs), *p;
  int64_t pd[] = { 2 * pc->rank };

  if (pc->opset < 11) {
    p = op_test_node (g, "Pad", "", "pad", 1, &x, 1);
    clinfer_node_set_attr (p, "pads", clinfer_attr_new_ints (pc->pads,
            2 * pc->rank));
    clinfer_node_set_attr (p, "value", clinfer_attr_new_float (pc->value));
  } else {
    ClinferShape one = clinfer_shape_make (0, NULL);
    g_autoptr (ClinferTensor) v = clinfer_tensor_new (pc->type, &one, NULL);
    ClinferNode *in[3];
    clinfer_op_store_double (v, 0, pc->value);
    in[0] = x;
    in[1] = op_test_constant (g, "pads", CLINFER_TYPE_I64, 1, pd, pc->pads);
    in[2] = op_test_constant (g, "value", pc->type, 0, NULL,
        clinfer_tensor_get_const_data (v));
    p = op_test_node (g, "Pad", "", "pad", 3, in, 1);
  }
  if (pc->mode)
    clinfer_node_set_attr (p, "mode", clinfer_attr_new_string (pc->mode));
  clinfer_graph_add_output (g, (ClinferPortRef) { p, 0 }, "y");
  return g;
}

/* The CPU device's Pad equals the reference eval, element for element. */
static void
test_pad_kernel (gconstpointer data)
{
  const PadCase *pc = data;
  g_autoptr (GRand) rand = g_rand_new_with_seed (3);
  g_autoptr (ClinferTensor) x = random_of (rand, pc->type, pc->rank, pc->dims);
  ClinferTensor *inputs[1] = { x };

  op_test_check_cpu_kernel (pad_graph (pc), NULL, pc->opset, inputs, 1,
      pc->kernel, pc->name);
}

/* The pass is in the pass list and not compile-only: clinfer-convert
 * writes the folded padding to IR too. */
static void
test_registered (void)
{
  op_test_assert_pass_registered ("fold-pad", FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (form_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fold-pad/%s",
        form_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_fold);
  }
  g_test_add_func ("/passes/fold-pad/registered", test_registered);
  for (gsize i = 0; i < G_N_ELEMENTS (pad_cases); i++) {
    g_autofree char *path = g_strdup_printf ("/cpu/pad/%s", pad_cases[i].name);
    g_test_add_data_func (path, &pad_cases[i], test_pad_kernel);
  }
  return g_test_run ();
}
