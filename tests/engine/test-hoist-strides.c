/* clinfer — the hoist-strides pass (engine/passes/hoist-strides.c): a
 * tensor read only by 1x1 Convs with one stride > 1 is computed at the
 * pixels they read. A ResNet v1 stage start (the 3x3 conv two nodes up
 * takes the stride, the shared residual input gets a 1x1 MaxPool), odd
 * sizes with strides 2 x 3 through a dilated conv with asymmetric pads
 * and strides 1 x 2 of its own (2 x 6 after),
 * a per-channel Mul and a Sigmoid, and a 1x1 conv over a graph input
 * (taking the stride itself) all give the reference's result, on the
 * reference evals after the pass and compiled for the CPU device and the
 * GPU device when one opens. Left alone: a strided reader of a graph
 * input, a tensor also read by a stride-1 conv, also a graph output, or
 * read with two different strides. */
#include "op-test-util.h"
#include "passes/passes.h"
#include <string.h>

typedef enum {
  RESNET_STAGE,              /* the 3x3 conv takes it, MaxPool on the residual */
  ODD_SIZES,                 /* 9 x 11, strides 2 x 3, dilated strided conv */
  POINTWISE_ITSELF,          /* 1x1 conv over x takes it itself */
  KEEP_INPUT,                /* strided readers of the graph input */
  KEEP_MIXED,                /* one reader has stride 1 */
  KEEP_OUTPUT,               /* the tensor is a graph output too */
  KEEP_TWO_STRIDES,          /* readers with strides 2 and 3 */
} Form;

static const char *const form_names[] = { "resnet-stage", "odd-sizes",
  "pointwise-itself", "input-kept", "mixed-readers-kept", "output-kept",
  "two-strides-kept" };

/* Conv @name of @x (@ic channels) to @oc channels, kernel kh x kw with
 * strides, dilations and pads (begins then ends), random weights and
 * bias. */
static ClinferNode *
conv (ClinferGraph *g, GRand *rand, const char *name, ClinferNode *x, int ic,
    int oc, int kh, int kw, int sh, int sw, int dh, int dw,
    const int64_t *pads)
{
  int64_t wd[] = { oc, ic, kh, kw }, bd[] = { oc };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, bd);
  g_autofree char *wn = g_strdup_printf ("%s/w", name);
  g_autofree char *bn = g_strdup_printf ("%s/b", name);
  static const int64_t zero[4] = { 0 };
  ClinferNode *in[3] = { x, clinfer_graph_add_constant (g, wn, w),
    clinfer_graph_add_constant (g, bn, b) };
  ClinferNode *c = op_test_node (g, "Conv", "", name, 3, in, 1);

  op_test_set_conv_attrs (c, kh, kw, sh, sw, dh, dw, 1, NULL,
      pads ? pads : zero, NULL);
  return c;
}

static ClinferNode *
unary (ClinferGraph *g, const char *op, const char *name, ClinferNode *x)
{
  return op_test_node (g, op, "", name, 1, &x, 1);
}

static ClinferNode *
binary (ClinferGraph *g, const char *op, const char *name, ClinferNode *a,
    ClinferNode *b)
{
  ClinferNode *in[2] = { a, b };

  return op_test_node (g, op, "", name, 2, in, 1);
}

static void
input_dims (Form form, int64_t *xd)
{
  xd[0] = 1;
  xd[1] = form == ODD_SIZES ? 4 : 8;
  xd[2] = form == ODD_SIZES ? 9 : 10;
  xd[3] = form == ODD_SIZES ? 11 : 10;
}

static ClinferGraph *
build (int form, GRand *rand)
{
  static const int64_t p1[] = { 1, 1, 1, 1 }, pa[] = { 2, 1, 1, 0 };
  ClinferGraph *g = op_test_graph (13);
  int64_t xd[4];
  ClinferShape xs;
  ClinferNode *x, *r0, *t, *a, *b;

  input_dims (form, xd);
  xs = clinfer_shape_make (4, xd);
  x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  switch (form) {
    case RESNET_STAGE:
    case KEEP_MIXED:
    case KEEP_OUTPUT:
    case KEEP_TWO_STRIDES:
      r0 = unary (g, "Relu", "r0", conv (g, rand, "c0", x, 8, 8, 3, 3, 1, 1,
              1, 1, p1));
      t = unary (g, "Relu", "r1", conv (g, rand, "c1", r0, 8, 8, 3, 3, 1, 1,
              1, 1, p1));
      t = conv (g, rand, "c2", t, 8, 8, 1, 1, 1, 1, 1, 1, NULL);
      t = unary (g, "Relu", "r2", binary (g, "Add", "add", t, r0));
      break;
    case ODD_SIZES: {
      int64_t sd[] = { 8, 1, 1 };
      g_autoptr (ClinferTensor) sv = op_test_random (rand, 3, sd);
      t = conv (g, rand, "c1", x, 4, 8, 3, 3, 1, 2, 2, 1, pa);
      t = binary (g, "Mul", "scale", t, clinfer_graph_add_constant (g, "s",
              sv));
      t = unary (g, "Sigmoid", "sig", t);
      break;
    }
    case POINTWISE_ITSELF:
      t = unary (g, "Relu", "r", conv (g, rand, "c1", x, 8, 8, 1, 1, 1, 1, 1,
              1, NULL));
      break;
    case KEEP_INPUT:
    default:
      t = x;
      break;
  }
  /* Every t has 8 channels. */
  a = conv (g, rand, "a", t, 8, 12, 1, 1, 2, form == ODD_SIZES ? 3 : 2, 1, 1,
      NULL);
  if (form == KEEP_MIXED)
    b = conv (g, rand, "b", t, 8, 12, 1, 1, 1, 1, 1, 1, NULL);
  else
    b = conv (g, rand, "b", t, 8, 12, 1, 1, 2,
        form == ODD_SIZES || form == KEEP_TWO_STRIDES ? 3 : 2, 1, 1, NULL);
  if (form == KEEP_MIXED) {
    /* b's full-size output, subsampled to a's by a strided 1x1 MaxPool
     * written by hand. */
    static const int64_t k[] = { 1, 1 }, s[] = { 2, 2 };
    b = unary (g, "MaxPool", "pick", b);
    clinfer_node_set_attr (b, "kernel_shape", clinfer_attr_new_ints (k, 2));
    clinfer_node_set_attr (b, "strides", clinfer_attr_new_ints (s, 2));
  }
  if (form == KEEP_TWO_STRIDES)
    clinfer_graph_add_output (g, (ClinferPortRef) { b, 0 }, "b");
  else
    a = binary (g, "Add", "y", a, b);
  clinfer_graph_add_output (g, (ClinferPortRef) { a, 0 }, "y");
  if (form == KEEP_TWO_STRIDES) {
    /* y first */
    ClinferGraphOutput tmp = g_array_index (g->outputs, ClinferGraphOutput, 0);
    g_array_index (g->outputs, ClinferGraphOutput, 0) =
        g_array_index (g->outputs, ClinferGraphOutput, 1);
    g_array_index (g->outputs, ClinferGraphOutput, 1) = tmp;
  }
  if (form == KEEP_OUTPUT)
    clinfer_graph_add_output (g, (ClinferPortRef) { t, 0 }, "t");
  return g;
}

/* Convs of @g whose strides attribute is (sh, sw). */
static guint
count_strided (const ClinferGraph *g, int64_t sh, int64_t sw)
{
  guint n = 0;

  for (guint i = 0; i < g->nodes->len; i++) {
    ClinferNode *node = g_ptr_array_index (g->nodes, i);
    const ClinferAttr *a = clinfer_node_get_attr (node, "strides");
    if (clinfer_pass_is_op (node, "Conv") && a && a->type == CLINFER_ATTR_INTS
        && a->ints.n == 2 && a->ints.v[0] == sh && a->ints.v[1] == sw)
      n++;
  }
  return n;
}

static void
test_hoist (gconstpointer data)
{
  Form form = GPOINTER_TO_INT (data);
  gboolean hoists = form <= POINTWISE_ITSELF;
  int64_t sh = 2, sw = form == ODD_SIZES ? 3 : 2, xd[4];
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autoptr (ClinferGraph) g = build (form, rand);
  ClinferPassContext ctx = { NULL, 13 };
  g_autoptr (ClinferTensor) x = NULL, before = NULL, after = NULL;
  ClinferTensor *inputs[1];
  guint strided_before, pools_before;
  gboolean changed = FALSE;
  GError *err = NULL;

  input_dims (form, xd);
  x = op_test_random (rand, 4, xd);
  inputs[0] = x;
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  strided_before = count_strided (g, sh, sw);
  pools_before = op_test_count_ops (g, "MaxPool");
  g_assert_true (clinfer_pass_hoist_strides (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, hoists);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "hoist-strides");
  if (hoists) {
    /* The two readers lose their stride; one conv up the graph takes it
     * (2 x 3 on top of the dilated conv's 1 x 2: 2 x 6). */
    g_assert_cmpuint (strided_before, ==, 2);
    g_assert_cmpuint (count_strided (g, sh, sw), ==, form == ODD_SIZES ? 0 : 1);
    if (form == ODD_SIZES)
      g_assert_cmpuint (count_strided (g, 2, 6), ==, 1);
    g_assert_cmpuint (op_test_count_ops (g, "MaxPool"), ==,
        pools_before + (form == RESNET_STAGE ? 1 : 0));
    if (form == RESNET_STAGE) {
      /* c1 (3x3) took it, c2 (1x1) passed it on. */
      for (guint i = 0; i < g->nodes->len; i++) {
        ClinferNode *n = g_ptr_array_index (g->nodes, i);
        const ClinferAttr *s = clinfer_node_get_attr (n, "strides");
        if (clinfer_pass_is_op (n, "Conv") && s && s->ints.v[0] == 2)
          g_assert_cmpstr (n->name, ==, "c1/strided");
      }
    }
  } else {
    g_assert_cmpuint (count_strided (g, sh, sw), ==, strided_before);
    g_assert_cmpuint (op_test_count_ops (g, "MaxPool"), ==, pools_before);
  }
  /* Compiled: every pass, each device's kernels. */
  op_test_check_devices (build, form, 5, 13, x, before);
}

/* Compile only: clinfer-convert writes the model's own strides. */
static void
test_registered (void)
{
  op_test_assert_pass_registered ("hoist-strides", TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (form_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/hoist-strides/%s",
        form_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_hoist);
  }
  g_test_add_func ("/passes/hoist-strides/registered", test_registered);
  return g_test_run ();
}
