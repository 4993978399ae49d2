/* clinfer — the fold-space-to-depth pass (engine/passes/
 * fold-space-to-depth.c): Slices taking every s-th row and column at each
 * of the s * s offsets, concatenated on the channels before a stride-1
 * Conv (YOLOv5's Focus), become one Conv on the sliced tensor with an
 * s-times larger kernel at stride s. Folded: YOLOv5's form (a row Slice
 * then a column Slice per piece, bias, pads 1, batch 2), one two-axis
 * Slice per piece at s = 3 in a shuffled order with a 2x3 kernel and
 * uneven pads, chains of three Slices (one keeping every channel), and
 * s = 4 as two step-2 Slices per axis (the offsets compose), and pieces
 * of a Slice that all four read (it stays, the new Conv reads it).
 * Each gives the same result on the reference evals and, compiled, on the
 * CPU device and the GPU device when one opens. Left alone: eight of
 * the nine offsets at s = 3, a strided Conv, a piece read elsewhere, rows that stop
 * before the end, an offset taken twice. */
#include "op-test-util.h"
#include "passes/passes.h"
#include <string.h>

typedef enum {
  FOLD_FOCUS,                /* YOLOv5: Slice rows, Slice columns, s = 2 */
  FOLD_TWO_AXIS_S3,          /* one Slice on axes 2 and 3, s = 3 */
  FOLD_THREE_CHAIN,          /* channels kept, rows, columns */
  FOLD_NESTED_S4,            /* rows by 2 twice, columns by 2 twice */
  FOLD_SHARED_ROOT,          /* the pieces slice one Slice of x */
  KEEP_MISSING_OFFSET,       /* s = 3, (1, 1) missing */
  KEEP_STRIDED_CONV,         /* Conv strides 2 */
  KEEP_SHARED_PIECE,         /* a piece is also a graph output */
  KEEP_SHORT_ROWS,           /* rows end 2 before the end */
  KEEP_REPEATED_OFFSET,      /* (0, 0) twice, (1, 1) missing */
} Form;

static const char *const form_names[] = { "focus", "two-axis-s3",
  "three-slice-chain", "nested-s4", "shared-root", "missing-offset-kept",
  "strided-conv-kept", "shared-piece-kept", "short-rows-kept",
  "repeated-offset-kept" };

#define BIG G_MAXINT64

typedef struct {
  int64_t x[4];              /* input dims */
  int64_t s;
  int64_t kh, kw;
  int64_t pads[4];
  gboolean bias;
} Geometry;

static void
geometry (Form form, Geometry *g)
{
  static const Geometry focus = { { 2, 3, 16, 20 }, 2, 3, 3, { 1, 1, 1, 1 },
    TRUE };
  static const Geometry s3 = { { 1, 2, 12, 15 }, 3, 2, 3, { 0, 1, 1, 0 },
    FALSE };
  static const Geometry s4 = { { 1, 2, 8, 12 }, 4, 1, 1, { 0, 0, 0, 0 },
    TRUE };

  *g = form == FOLD_TWO_AXIS_S3 || form == KEEP_MISSING_OFFSET ? s3
      : form == FOLD_NESTED_S4 ? s4 : focus;
}

/* Slice of @in along @n_axes @axes from @starts to @ends by @steps. */
static ClinferNode *
slice (ClinferGraph *g, const char *name, ClinferNode *in, int n_axes,
    const int64_t *axes, const int64_t *starts, const int64_t *ends,
    const int64_t *steps)
{
  int64_t d[] = { n_axes };
  g_autofree char *ns = g_strdup_printf ("%s/starts", name);
  g_autofree char *ne = g_strdup_printf ("%s/ends", name);
  g_autofree char *na = g_strdup_printf ("%s/axes", name);
  g_autofree char *nt = g_strdup_printf ("%s/steps", name);
  ClinferNode *inputs[5] = { in,
    op_test_constant (g, ns, CLINFER_TYPE_I64, 1, d, starts),
    op_test_constant (g, ne, CLINFER_TYPE_I64, 1, d, ends),
    op_test_constant (g, na, CLINFER_TYPE_I64, 1, d, axes),
    op_test_constant (g, nt, CLINFER_TYPE_I64, 1, d, steps) };

  return op_test_node (g, "Slice", "", name, 5, inputs, 1);
}

/* Piece @i of @form at offset (@dy, @dx). */
static ClinferNode *
piece (ClinferGraph *g, Form form, const Geometry *geo, ClinferNode *x,
    int i, int64_t dy, int64_t dx)
{
  g_autofree char *n1 = g_strdup_printf ("slice%d_a", i);
  g_autofree char *n2 = g_strdup_printf ("slice%d_b", i);
  g_autofree char *n3 = g_strdup_printf ("slice%d_c", i);
  g_autofree char *n4 = g_strdup_printf ("slice%d_d", i);
  int64_t s = geo->s, big = BIG, zero = 0, one = 1, ch = 1, h = 2, w = 3;
  int64_t rows_end = form == KEEP_SHORT_ROWS ? geo->x[2] - 2 : BIG;
  int64_t hw[] = { 2, 3 }, st[] = { dy, dx }, en[] = { BIG, BIG },
      sp[] = { s, s }, two = 2, y0 = dy % 2, y1 = dy / 2, x0 = dx % 2,
      x1 = dx / 2;

  if (form == FOLD_TWO_AXIS_S3 || form == KEEP_MISSING_OFFSET)
    return slice (g, n1, x, 2, hw, st, en, sp);
  if (form == FOLD_NESTED_S4) {
    /* Offset dy = y0 + 2 * y1: even or odd rows, then every other. */
    x = slice (g, n1, x, 1, &h, &y0, &big, &two);
    x = slice (g, n2, x, 1, &h, &y1, &big, &two);
    x = slice (g, n3, x, 1, &w, &x0, &big, &two);
    return slice (g, n4, x, 1, &w, &x1, &big, &two);
  }
  if (form == FOLD_THREE_CHAIN)
    x = slice (g, n3, x, 1, &ch, &zero, &big, &one);
  x = slice (g, n1, x, 1, &h, &dy, &rows_end, &s);
  return slice (g, n2, x, 1, &w, &dx, &big, &s);
}

/* The test graph of @form: x -> pieces -> Concat -> Conv -> y. */
static ClinferGraph *
build (int form, GRand *rand)
{
  ClinferGraph *g = op_test_graph (13);
  Geometry geo;
  ClinferShape xs;
  ClinferNode *x, *cat, *conv, *pieces[16], *in[3];
  /* YOLOv5's order: (0,0) (1,0) (0,1) (1,1); s = 3 shuffled. */
  static const int64_t off2[][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };
  static const int64_t off3[][2] = { { 2, 1 }, { 0, 0 }, { 1, 2 }, { 0, 2 },
    { 2, 2 }, { 1, 0 }, { 0, 1 }, { 2, 0 }, { 1, 1 } };
  int n;
  int64_t axis = 1, m = 5;

  geometry (form, &geo);
  xs = clinfer_shape_make (4, geo.x);
  x = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  if (form == FOLD_SHARED_ROOT) {
    int64_t ch = 1, zero = 0, big = BIG, one = 1;
    x = slice (g, "root", x, 1, &ch, &zero, &big, &one);
  }
  n = form == FOLD_TWO_AXIS_S3 ? 9 : form == KEEP_MISSING_OFFSET ? 8
      : form == FOLD_NESTED_S4 ? 16 : 4;
  for (int i = 0; i < n; i++) {
    int64_t o4[2] = { i / 4, (i * 3) % 4 };   /* (i, 3i mod 4) */
    const int64_t *o = geo.s == 4 ? o4 : geo.s == 3 ? off3[i] : off2[i];
    if (form == KEEP_REPEATED_OFFSET && i == 3)
      o = off2[0];
    pieces[i] = piece (g, form, &geo, x, i, o[0], o[1]);
  }
  cat = op_test_node (g, "Concat", "", "cat", n, pieces, 1);
  clinfer_node_set_attr (cat, "axis", clinfer_attr_new_int (axis));
  {
    int64_t wd[] = { m, n * geo.x[1], geo.kh, geo.kw }, bd[] = { m };
    g_autoptr (ClinferTensor) wt = op_test_random (rand, 4, wd);
    g_autoptr (ClinferTensor) bt = op_test_random (rand, 1, bd);
    int stride = form == KEEP_STRIDED_CONV ? 2 : 1;

    in[0] = cat;
    in[1] = op_test_constant (g, "w", CLINFER_TYPE_F32, 4, wd,
        clinfer_tensor_get_const_data (wt));
    in[2] = op_test_constant (g, "b", CLINFER_TYPE_F32, 1, bd,
        clinfer_tensor_get_const_data (bt));
    conv = op_test_node (g, "Conv", "", "conv", geo.bias ? 3 : 2, in, 1);
    op_test_set_conv_attrs (conv, geo.kh, geo.kw, stride, stride, 1, 1, 1,
        NULL, geo.pads, NULL);
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { conv, 0 }, "y");
  if (form == KEEP_SHARED_PIECE)
    clinfer_graph_add_output (g, (ClinferPortRef) { pieces[1], 0 }, "piece");
  return g;
}

static void
test_fold (gconstpointer data)
{
  Form form = GPOINTER_TO_INT (data);
  gboolean folds = form <= FOLD_SHARED_ROOT;
  guint kept = form == FOLD_SHARED_ROOT ? 1 : 0;
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autoptr (ClinferGraph) g = build (form, rand);
  ClinferPassContext ctx = { NULL, 13 };
  Geometry geo;
  g_autoptr (ClinferTensor) x = NULL, before = NULL, after = NULL;
  ClinferTensor *inputs[1];
  gboolean changed = FALSE;
  GError *err = NULL;
  guint n_slices;

  geometry (form, &geo);
  x = op_test_random (rand, 4, geo.x);
  inputs[0] = x;
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  n_slices = op_test_count_ops (g, "Slice");
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fold_space_to_depth (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, folds);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, "Slice"), ==, folds ? kept
      : n_slices);
  g_assert_cmpuint (op_test_count_ops (g, "Concat"), ==, folds ? 0 : 1);
  g_assert_cmpuint (op_test_count_ops (g, "Conv"), ==, 1);
  if (folds) {
    /* One Conv on x itself: kernel s times larger, stride s. */
    ClinferGraphOutput *o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
    ClinferNode *conv = o->ref.node;
    const int64_t *v;
    gsize nv;

    g_assert_true (clinfer_pass_is_op (conv, "Conv"));
    g_assert_cmpstr (conv->inputs[0].node->name, ==, kept ? "root" : "x");
    g_assert_true (clinfer_node_attr_ints (conv, "strides", &v, &nv, NULL));
    g_assert_cmpuint (nv, ==, 2);
    g_assert_cmpint (v[0], ==, geo.s);
    g_assert_cmpint (v[1], ==, geo.s);
    g_assert_true (clinfer_node_attr_ints (conv, "kernel_shape", &v, &nv,
            NULL));
    g_assert_cmpint (v[0], ==, geo.s * geo.kh);
    g_assert_cmpint (v[1], ==, geo.s * geo.kw);
  }
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fold-space-to-depth");
  /* Compiled: every pass, then the devices' convolution kernels. */
  op_test_check_devices (build, form, 5, 13, x, before);
}

/* Compile only: clinfer-convert writes the Slices and the Concat as the
 * model has them. */
static void
test_registered (void)
{
  op_test_assert_pass_registered ("fold-space-to-depth", TRUE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (form_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fold-space-to-depth/%s",
        form_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_fold);
  }
  g_test_add_func ("/passes/fold-space-to-depth/registered", test_registered);
  return g_test_run ();
}
