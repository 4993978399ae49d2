/* clinfer — tests of the fuse-hardswish pass: each written-out HardSwish
 * form becomes one HardSwish node with the same result, in either operand
 * order; a pattern whose inner value is used elsewhere, or with other
 * constants, is left alone. */
#include "op-test-util.h"
#include "passes/passes.h"
#include <string.h>

typedef enum {
  FORM_DIV_AFTER_MUL,        /* Div (Mul (x, Clip (Add (x, 3), 0, 6)), 6) */
  FORM_DIV_INSIDE,           /* Mul (x, Div (Clip (Add (3, x), 0, 6), 6)) */
  FORM_MUL_SIXTH,            /* Mul (1/6, Mul (Clip (Add (x, 3), 0, 6), x)) */
  FORM_HARD_SIGMOID,         /* Mul (HardSigmoid (x, 1/6, 0.5), x) */
  FORM_SHARED_CLIP,          /* the Clip also a graph output: no fusion */
  FORM_CLIP_TO_FIVE,         /* Clip (.., 0, 5): not HardSwish */
} Form;

static guint
count_ops (const ClinferGraph *g, const char *op_type)
{
  guint n = 0;
  for (guint i = 0; i < g->nodes->len; i++) {
    const ClinferNode *node = g_ptr_array_index (g->nodes, i);
    n += strcmp (node->op_type, op_type) == 0;
  }
  return n;
}

static ClinferNode *
scalar (ClinferGraph *g, const char *name, float v)
{
  return op_test_constant (g, name, CLINFER_TYPE_F32, 0, NULL, &v);
}

static ClinferNode *
binary (ClinferGraph *g, const char *op, const char *name, ClinferNode *a,
    ClinferNode *b)
{
  ClinferNode *in[2] = { a, b };
  return op_test_node (g, op, "", name, 2, in, 1);
}

/* Relu6 (x + 3), Add's operands in the order @swap says. */
static ClinferNode *
relu6_plus_three (ClinferGraph *g, ClinferNode *x, gboolean swap, float hi,
    ClinferNode **clip_out)
{
  ClinferNode *three = scalar (g, "three", 3.f);
  ClinferNode *add = swap ? binary (g, "Add", "add", three, x)
      : binary (g, "Add", "add", x, three);
  ClinferNode *in[3] = { add, scalar (g, "zero", 0.f), scalar (g, "hi", hi) };
  *clip_out = op_test_node (g, "Clip", "", "clip", 3, in, 1);
  return *clip_out;
}

static ClinferNode *
build (ClinferGraph *g, ClinferNode *x, Form form, ClinferNode **clip)
{
  ClinferNode *r, *hs;

  *clip = NULL;
  switch (form) {
    case FORM_DIV_INSIDE:
      r = relu6_plus_three (g, x, TRUE, 6.f, clip);
      r = binary (g, "Div", "div", r, scalar (g, "six", 6.f));
      return binary (g, "Mul", "tail", x, r);
    case FORM_MUL_SIXTH:
      r = relu6_plus_three (g, x, FALSE, 6.f, clip);
      r = binary (g, "Mul", "mul", r, x);
      return binary (g, "Mul", "tail", scalar (g, "sixth", 1.f / 6.f), r);
    case FORM_HARD_SIGMOID:
      hs = op_test_node (g, "HardSigmoid", "", "hsig", 1, &x, 1);
      clinfer_node_set_attr (hs, "alpha", clinfer_attr_new_float (1.f / 6.f));
      clinfer_node_set_attr (hs, "beta", clinfer_attr_new_float (0.5f));
      return binary (g, "Mul", "tail", hs, x);
    case FORM_CLIP_TO_FIVE:
      r = relu6_plus_three (g, x, FALSE, 5.f, clip);
      r = binary (g, "Mul", "mul", x, r);
      return binary (g, "Div", "tail", r, scalar (g, "six", 6.f));
    case FORM_DIV_AFTER_MUL:
    case FORM_SHARED_CLIP:
    default:
      r = relu6_plus_three (g, x, FALSE, 6.f, clip);
      r = binary (g, "Mul", "mul", x, r);
      return binary (g, "Div", "tail", r, scalar (g, "six", 6.f));
  }
}

static void
test_form (gconstpointer data)
{
  Form form = GPOINTER_TO_INT (data);
  gboolean fuses = form != FORM_SHARED_CLIP && form != FORM_CLIP_TO_FIVE;
  g_autoptr (GRand) rand = g_rand_new_with_seed (31);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autofree char *out_name = NULL;
  ClinferPassContext ctx = { NULL, 13 };
  int64_t xd[] = { 2, 3, 5, 7 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in, *tail, *clip;
  ClinferGraphOutput *o;
  gboolean changed = FALSE;
  GError *err = NULL;
  float *v = clinfer_tensor_get_data (x);

  /* Spread the values over the kinks at -3 and 3. */
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (x); i++)
    v[i] *= 5.f;
  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  tail = build (g, in, form, &clip);
  out_name = g_strdup (tail->outputs[0].name);
  clinfer_graph_add_output (g, (ClinferPortRef) { tail, 0 }, "y");
  if (form == FORM_SHARED_CLIP)
    clinfer_graph_add_output (g, (ClinferPortRef) { clip, 0 }, "clip");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fuse_hardswish (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, fuses);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (count_ops (g, "HardSwish"), ==, fuses ? 1 : 0);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  if (fuses) {
    g_assert_cmpstr (o->ref.node->op_type, ==, "HardSwish");
    g_assert_true (o->ref.node->inputs[0].node == in);
    g_assert_cmpuint (count_ops (g, "Mul") + count_ops (g, "Div")
        + count_ops (g, "Clip") + count_ops (g, "Add")
        + count_ops (g, "HardSigmoid"), ==, 0);
  }
  /* Consumers still find the tensor by its name. */
  g_assert_cmpstr (o->ref.node->outputs[o->ref.port].name, ==, out_name);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fuse-hardswish");
}

/* The pass is registered under its name (--list-passes, --disable-pass). */
static void
test_registered (void)
{
  const ClinferPass *p = clinfer_pass_lookup ("fuse-hardswish");
  g_assert_nonnull (p);
  g_assert_false (p->required);
  g_assert_true (p->device_only);
}

int
main (int argc, char **argv)
{
  static const char *const names[] = { "div-after-mul", "div-inside",
    "mul-by-sixth", "hard-sigmoid", "shared-clip-not-fused",
    "clip-to-five-not-fused" };

  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-hardswish/%s", names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_form);
  }
  g_test_add_func ("/passes/fuse-hardswish/registered", test_registered);
  return g_test_run ();
}
