/* clinfer — tests of the fuse-hardswish pass: each written-out HardSwish
 * form becomes one HardSwish node with the same result, in either operand
 * order; a pattern whose inner value is used elsewhere, or with other
 * constants, is left alone. And of the fuse-conv-scale pass: Mul / Add /
 * Sub / Div of a Conv by one value or one value per channel fold into the
 * Conv's weights and bias with the same result; other shapes, a Conv
 * output used twice, c - conv, a division by zero and a ConvTranspose are
 * left alone, and fuse-conv-scale folds a BatchNormalization the Add fold
 * made adjacent.
 * And of fuse-residual-gate: x + x * s (s broadcast) becomes x * (s + 1)
 * in either operand order, but not when the product is used elsewhere or
 * s has x's shape.
 * And of batchnorm-to-affine: a BatchNormalization becomes Mul and Add by
 * per-channel constants with the same result, absorbing a per-channel or
 * scalar Add / Sub / Mul before it unless that one has another reader or
 * another broadcast.
 * And of fuse-layernorm: a written-out layer norm over the last axis
 * becomes one LayerNormalization (with scale and bias, scale only, none;
 * Pow or Mul squares; reduction axes as an input from opset 18) with the
 * same result, also run by the CPU device's kernel; a deviation used
 * elsewhere or a mean over another axis is left alone. The form with the
 * standard deviation (eps added to it, the variance scaled by n / (n - 1))
 * becomes one com.clinfer LayerNormStd, likewise.
 * And of fuse-eltwise-chain: runs of element-wise nodes become
 * EltwiseChain nodes (at most 8 links, tensor operands of the chain's
 * shape, either operand order) whose reference eval gives the same
 * result; a value read elsewhere or broadcast ends a chain; without the
 * device's request the pass does nothing.
 * And of gemm-to-matmul: a Gemm with a constant B (either transB, alpha
 * folded in) or an activation B (alpha 1), and a constant C (beta folded
 * in; dropped at beta 0) or an activation C (beta 1), becomes MatMul
 * [+ Add] with the same result, transA and an activation B's transB as
 * Transpose nodes, which the CPU device runs without a reference step;
 * an activation B with alpha != 1, an activation C with beta != 1 and a
 * device that did not ask are left alone.
 * And of fuse-swish: Mul (x, Sigmoid (x)) in either operand order becomes
 * one com.clinfer Swish of x with the same result; a Sigmoid read
 * elsewhere, a Sigmoid of another tensor and a device that did not ask
 * are left alone. */
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
  g_assert_cmpuint (op_test_count_ops (g, "HardSwish"), ==, fuses ? 1 : 0);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  if (fuses) {
    g_assert_cmpstr (o->ref.node->op_type, ==, "HardSwish");
    g_assert_true (o->ref.node->inputs[0].node == in);
    g_assert_cmpuint (op_test_count_ops (g, "Mul") + op_test_count_ops (g, "Div")
        + op_test_count_ops (g, "Clip") + op_test_count_ops (g, "Add")
        + op_test_count_ops (g, "HardSigmoid"), ==, 0);
  }
  /* Consumers still find the tensor by its name. */
  g_assert_cmpstr (o->ref.node->outputs[o->ref.port].name, ==, out_name);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fuse-hardswish");
}

/* The passes are registered under their names (--list-passes,
 * --disable-pass). */
static void
test_registered (void)
{
  const ClinferPass *p = clinfer_pass_lookup ("fuse-hardswish");
  g_assert_nonnull (p);
  g_assert_false (p->required);
  g_assert_true (p->device_only);
  /* An ONNX-to-ONNX rewrite: clinfer-convert runs it too. */
  p = clinfer_pass_lookup ("fuse-conv-scale");
  g_assert_nonnull (p);
  g_assert_false (p->required);
  g_assert_false (p->device_only);
  p = clinfer_pass_lookup ("fuse-residual-gate");
  g_assert_nonnull (p);
  g_assert_true (p->device_only);
}

typedef enum {
  SCALE_MUL_ADD,             /* Add (Mul ([4, 1, 1], conv), 0.5) */
  SCALE_SUB_DIV,             /* Div (Sub (conv, [1, 4, 1, 1]), 2) */
  SCALE_NO_BIAS,             /* Mul (conv without bias, 3) */
  SCALE_SHARED_NOT_FUSED,    /* the Conv output is a graph output too */
  SCALE_WIDTH_NOT_FUSED,     /* Mul by [1, 1, 1, 6]: per column */
  SCALE_SUB_FROM_NOT_FUSED,  /* Sub (0.5, conv) */
  SCALE_DIV_ZERO_NOT_FUSED,  /* Div by [4, 1, 1] holding a zero */
  SCALE_ADD_BN,              /* BatchNormalization (Add (conv, [4, 1, 1])) */
  SCALE_DECONV_NOT_FUSED,    /* Add (deconv, [1, 4, 1, 1]) */
} ScaleForm;

/* ConvTranspose 3 -> 4 channels, 2x2, stride 2, no bias. */
static ClinferNode *
random_deconv (ClinferGraph *g, GRand *rand, ClinferNode *x)
{
  int64_t wd[] = { 3, 4, 2, 2 }, k[] = { 2, 2 };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  ClinferNode *in[2] = { x, op_test_constant (g, "w", CLINFER_TYPE_F32, 4, wd,
        clinfer_tensor_get_const_data (w)) };
  ClinferNode *d = op_test_node (g, "ConvTranspose", "", "deconv", 2, in, 1);

  clinfer_node_set_attr (d, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (d, "strides", clinfer_attr_new_ints (k, 2));
  return d;
}

/* BatchNormalization of 4 channels with fixed statistics. */
static ClinferNode *
batch_norm (ClinferGraph *g, ClinferNode *x)
{
  int64_t cd[] = { 4 };
  float scale[] = { 1.5f, 0.5f, -1.f, 2.f }, bias[] = { 0.1f, -0.2f, 0.3f, 0.f };
  float mean[] = { 0.2f, -0.1f, 0.f, 0.4f }, var[] = { 0.5f, 2.f, 1.f, 0.25f };
  ClinferNode *in[5] = { x,
    op_test_constant (g, "scale", CLINFER_TYPE_F32, 1, cd, scale),
    op_test_constant (g, "bias", CLINFER_TYPE_F32, 1, cd, bias),
    op_test_constant (g, "mean", CLINFER_TYPE_F32, 1, cd, mean),
    op_test_constant (g, "var", CLINFER_TYPE_F32, 1, cd, var) };

  return op_test_node (g, "BatchNormalization", "", "tail", 5, in, 1);
}

/* Conv 3 -> 4 channels, 3x3, pads 1, with random weights (and bias). */
static ClinferNode *
random_conv (ClinferGraph *g, GRand *rand, ClinferNode *x, gboolean bias)
{
  int64_t wd[] = { 4, 3, 3, 3 }, bd[] = { 4 }, pads[] = { 1, 1, 1, 1 };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 4, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, bd);
  ClinferNode *in[3] = { x, op_test_constant (g, "w", CLINFER_TYPE_F32, 4, wd,
        clinfer_tensor_get_const_data (w)),
    bias ? op_test_constant (g, "b", CLINFER_TYPE_F32, 1, bd,
        clinfer_tensor_get_const_data (b)) : NULL };
  ClinferNode *conv = op_test_node (g, "Conv", "", "conv", bias ? 3 : 2, in, 1);

  op_test_set_conv_attrs (conv, 3, 3, 1, 1, 1, 1, 1, NULL, pads, NULL);
  return conv;
}

static ClinferNode *
build_scale (ClinferGraph *g, ClinferNode *conv, ScaleForm form)
{
  int64_t c3[] = { 4, 1, 1 }, c4[] = { 1, 4, 1, 1 }, w4[] = { 1, 1, 1, 6 };
  float per[] = { 0.5f, -2.f, 1.5f, 3.f }, zero[] = { 0.5f, 0.f, 1.f, 2.f };
  float cols[] = { 1.f, 2.f, 3.f, 4.f, 5.f, 6.f };
  ClinferNode *r;

  switch (form) {
    case SCALE_SUB_DIV:
      r = binary (g, "Sub", "sub", conv,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 4, c4, per));
      return binary (g, "Div", "tail", r, scalar (g, "two", 2.f));
    case SCALE_NO_BIAS:
      return binary (g, "Mul", "tail", conv, scalar (g, "three", 3.f));
    case SCALE_WIDTH_NOT_FUSED:
      return binary (g, "Mul", "tail", conv,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 4, w4, cols));
    case SCALE_SUB_FROM_NOT_FUSED:
      return binary (g, "Sub", "tail", scalar (g, "half", 0.5f), conv);
    case SCALE_DIV_ZERO_NOT_FUSED:
      return binary (g, "Div", "tail", conv,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 3, c3, zero));
    case SCALE_DECONV_NOT_FUSED:
      return binary (g, "Add", "tail", conv,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 4, c4, per));
    case SCALE_ADD_BN:
      return batch_norm (g, binary (g, "Add", "add", conv,
              op_test_constant (g, "c", CLINFER_TYPE_F32, 3, c3, per)));
    case SCALE_MUL_ADD:
    case SCALE_SHARED_NOT_FUSED:
    default:
      r = binary (g, "Mul", "mul",
          op_test_constant (g, "c", CLINFER_TYPE_F32, 3, c3, per), conv);
      return binary (g, "Add", "tail", r, scalar (g, "half", 0.5f));
  }
}

static void
test_conv_scale (gconstpointer data)
{
  ScaleForm form = GPOINTER_TO_INT (data);
  guint n_ops = form == SCALE_MUL_ADD || form == SCALE_SUB_DIV
      || form == SCALE_SHARED_NOT_FUSED || form == SCALE_ADD_BN ? 2 : 1;
  gboolean fuses = form <= SCALE_NO_BIAS || form == SCALE_ADD_BN;
  gboolean deconv = form == SCALE_DECONV_NOT_FUSED;
  const char *conv_op = deconv ? "ConvTranspose" : "Conv";
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autofree char *out_name = NULL;
  ClinferPassContext ctx = { NULL, 13 };
  int64_t xd[] = { 2, 3, 5, 6 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in, *conv, *tail;
  ClinferGraphOutput *o;
  gboolean changed = FALSE;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  conv = deconv ? random_deconv (g, rand, in)
      : random_conv (g, rand, in, form != SCALE_NO_BIAS && form != SCALE_ADD_BN);
  tail = build_scale (g, conv, form);
  out_name = g_strdup (tail->outputs[0].name);
  clinfer_graph_add_output (g, (ClinferPortRef) { tail, 0 }, "y");
  if (form == SCALE_SHARED_NOT_FUSED)
    clinfer_graph_add_output (g, (ClinferPortRef) { conv, 0 }, "conv");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fuse_conv_scale (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, fuses);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, conv_op), ==, 1);
  g_assert_cmpuint (op_test_count_ops (g, "Mul") + op_test_count_ops (g, "Add")
      + op_test_count_ops (g, "Sub") + op_test_count_ops (g, "Div")
      + op_test_count_ops (g, "BatchNormalization"), ==, fuses ? 0 : n_ops);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  if (fuses)
    g_assert_cmpstr (o->ref.node->op_type, ==, conv_op);
  g_assert_cmpstr (o->ref.node->outputs[o->ref.port].name, ==, out_name);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fuse-conv-scale");
}

typedef enum {
  GATE_X_FIRST,              /* Add (x, Mul (x, s)) */
  GATE_SWAPPED,              /* Add (Mul (s, x), x) */
  GATE_SHARED_NOT_FUSED,     /* the Mul is a graph output too */
  GATE_FULL_NOT_FUSED,       /* s = Relu (x): no broadcast */
} GateForm;

static void
test_residual_gate (gconstpointer data)
{
  GateForm form = GPOINTER_TO_INT (data);
  gboolean fuses = form == GATE_X_FIRST || form == GATE_SWAPPED;
  g_autoptr (GRand) rand = g_rand_new_with_seed (11);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  g_autofree char *out_name = NULL;
  ClinferPassContext ctx = { NULL, 13 };
  int64_t xd[] = { 2, 4, 5, 6 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in, *gate, *mul, *tail;
  ClinferGraphOutput *o;
  gboolean changed = FALSE;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  gate = op_test_node (g, form == GATE_FULL_NOT_FUSED ? "Relu"
      : "GlobalAveragePool", "", "pool", 1, &in, 1);
  gate = op_test_node (g, "Sigmoid", "", "gate", 1, &gate, 1);
  mul = form == GATE_SWAPPED ? binary (g, "Mul", "mul", gate, in)
      : binary (g, "Mul", "mul", in, gate);
  tail = form == GATE_SWAPPED ? binary (g, "Add", "tail", mul, in)
      : binary (g, "Add", "tail", in, mul);
  out_name = g_strdup (tail->outputs[0].name);
  clinfer_graph_add_output (g, (ClinferPortRef) { tail, 0 }, "y");
  if (form == GATE_SHARED_NOT_FUSED)
    clinfer_graph_add_output (g, (ClinferPortRef) { mul, 0 }, "product");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fuse_residual_gate (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, fuses);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, "Mul"), ==, 1);
  g_assert_cmpuint (op_test_count_ops (g, "Add"), ==, 1);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  g_assert_cmpstr (o->ref.node->op_type, ==, fuses ? "Mul" : "Add");
  if (fuses) {
    /* x * (s + 1): the Add now works on the gate's [2, 4, 1, 1] */
    ClinferNode *plus = o->ref.node->inputs[1].node;
    g_assert_true (o->ref.node->inputs[0].node == in);
    g_assert_cmpstr (plus->op_type, ==, "Add");
    g_assert_cmpint (plus->outputs[0].shape.dims[3], ==, 1);
  }
  g_assert_cmpstr (o->ref.node->outputs[o->ref.port].name, ==, out_name);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fuse-residual-gate");
}

typedef enum {
  AFFINE_BN_ALONE,           /* BatchNormalization (x) */
  AFFINE_ADD_BN,             /* BatchNormalization (Add (x, c[4, 1, 1])) */
  AFFINE_SUB_BN,             /* BatchNormalization (Sub (x, 0.5)) */
  AFFINE_MUL_BN,             /* BatchNormalization (Mul (c[1, 4, 1, 1], x)) */
  AFFINE_SHARED_ADD,         /* the Add is a graph output too: kept */
  AFFINE_WIDTH_ADD,          /* Add by a [6] row: kept, BN still rewritten */
} AffineForm;

static void
test_batchnorm_affine (gconstpointer data)
{
  AffineForm form = GPOINTER_TO_INT (data);
  gboolean folds = form == AFFINE_ADD_BN || form == AFFINE_SUB_BN
      || form == AFFINE_MUL_BN;
  g_autoptr (GRand) rand = g_rand_new_with_seed (13);
  g_autoptr (ClinferGraph) g = op_test_graph (15);
  g_autofree char *out_name = NULL;
  ClinferPassContext ctx = { NULL, 15 };
  int64_t xd[] = { 2, 4, 5, 6 }, c3[] = { 4, 1, 1 }, c4[] = { 1, 4, 1, 1 };
  int64_t w1[] = { 6 };
  float per[] = { 0.5f, -2.f, 1.5f, 3.f }, cols[] = { 1, 2, 3, 4, 5, 6 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferNode *in, *pre = NULL, *tail, *mul, *add;
  ClinferGraphOutput *o;
  gboolean changed = FALSE;
  GError *err = NULL;

  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  switch (form) {
    case AFFINE_ADD_BN:
    case AFFINE_SHARED_ADD:
      pre = binary (g, "Add", "pre", in,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 3, c3, per));
      break;
    case AFFINE_SUB_BN:
      pre = binary (g, "Sub", "pre", in, scalar (g, "half", 0.5f));
      break;
    case AFFINE_MUL_BN:
      pre = binary (g, "Mul", "pre",
          op_test_constant (g, "c", CLINFER_TYPE_F32, 4, c4, per), in);
      break;
    case AFFINE_WIDTH_ADD:
      pre = binary (g, "Add", "pre", in,
          op_test_constant (g, "c", CLINFER_TYPE_F32, 1, w1, cols));
      break;
    case AFFINE_BN_ALONE:
    default:
      break;
  }
  tail = batch_norm (g, pre ? pre : in);
  out_name = g_strdup (tail->outputs[0].name);
  clinfer_graph_add_output (g, (ClinferPortRef) { tail, 0 }, "y");
  if (form == AFFINE_SHARED_ADD)
    clinfer_graph_add_output (g, (ClinferPortRef) { pre, 0 }, "pre");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_batchnorm_to_affine (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_true (changed);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, "BatchNormalization"), ==, 0);
  /* The BatchNormalization's four parameters are gone, and a folded
   * operation's constant too. */
  g_assert_cmpuint (op_test_count_ops (g, "Constant"), ==, pre && !folds ? 3 : 2);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  add = o->ref.node;
  g_assert_cmpstr (add->op_type, ==, "Add");
  mul = add->inputs[0].node;
  g_assert_cmpstr (mul->op_type, ==, "Mul");
  g_assert_true (mul->inputs[0].node == (folds || !pre ? in : pre));
  g_assert_cmpint (add->inputs[1].node->outputs[0].shape.dims[0], ==, 4);
  g_assert_cmpstr (add->outputs[0].name, ==, out_name);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "batchnorm-to-affine");
}

typedef enum {
  LN_FULL,                   /* ... * scale[12] + bias[1, 1, 12], Pow */
  LN_SCALE_MUL_SQUARE,       /* scale * ..., Mul (d, d), no bias */
  LN_BARE,                   /* no scale, no bias: scale of ones */
  LN_AXES_INPUT,             /* opset 18: ReduceMean's axes an input */
  LN_SHARED_NOT_FUSED,       /* the deviation also a graph output */
  LN_AXIS_NOT_FUSED,         /* means over axis 1 */
} LnForm;

/* ReduceMean over @axis of @x, keepdims (axes as an input from opset
 * 18). */
static ClinferNode *
mean_over (ClinferGraph *g, const char *name, ClinferNode *x, int64_t axis,
    int opset)
{
  ClinferNode *in[2] = { x, NULL };
  ClinferNode *n;
  int64_t one = 1;

  if (opset >= 18) {
    g_autofree char *an = g_strdup_printf ("%s/axes", name);
    in[1] = op_test_constant (g, an, CLINFER_TYPE_I64, 1, &one, &axis);
    n = op_test_node (g, "ReduceMean", "", name, 2, in, 1);
  } else {
    n = op_test_node (g, "ReduceMean", "", name, 1, in, 1);
    clinfer_node_set_attr (n, "axes", clinfer_attr_new_ints (&axis, 1));
  }
  return n;
}

typedef enum {
  CHAIN_LONG,                /* 10 links: a chain of 8, then one of 2 */
  CHAIN_SHARED,              /* an inner value is a graph output: 2 chains */
  CHAIN_BROADCAST,           /* a per-channel Mul in the middle: 2 chains */
  CHAIN_NOT_ASKED,           /* the device did not ask: nothing changes */
} ChainForm;

static ClinferNode *
unary (ClinferGraph *g, const char *op, const char *name, ClinferNode *x)
{
  return op_test_node (g, op, "", name, 1, &x, 1);
}

static void
test_eltwise_chain (gconstpointer data)
{
  ChainForm form = GPOINTER_TO_INT (data);
  g_autoptr (GRand) rand = g_rand_new_with_seed (5);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  ClinferPassContext ctx = { NULL, 13 };
  int64_t xd[] = { 2, 3, 4, 5 }, cd[] = { 1, 3, 1, 1 };
  ClinferShape xs = clinfer_shape_make (4, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) t = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) u = op_test_random (rand, 4, xd);
  g_autoptr (ClinferTensor) c = op_test_random (rand, 4, cd);
  g_autoptr (ClinferTensor) before = NULL, after = NULL;
  ClinferTensor *inputs[3] = { x, t, u };
  ClinferNode *in, *tin, *uin, *v, *clip_in[3], *clip;
  gboolean changed = FALSE;
  GError *err = NULL;
  guint want_chains = form == CHAIN_NOT_ASKED ? 0 : 2;

  ctx.fuse_eltwise_chains = form != CHAIN_NOT_ASKED;
  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  tin = clinfer_graph_add_input (g, "t", CLINFER_TYPE_F32, &xs);
  uin = clinfer_graph_add_input (g, "u", CLINFER_TYPE_F32, &xs);
  v = binary (g, "Add", "add", in, tin);
  clip_in[0] = v;
  clip_in[1] = scalar (g, "lo", -0.5f);
  clip_in[2] = scalar (g, "hi", 0.75f);
  clip = op_test_node (g, "Clip", "", "clip", 3, clip_in, 1);
  v = binary (g, "Sub", "sub", scalar (g, "quarter", 0.25f), clip);
  v = form == CHAIN_BROADCAST
      ? binary (g, "Mul", "mul", v, op_test_constant (g, "c", CLINFER_TYPE_F32,
              4, cd, clinfer_tensor_get_data (c)))
      : binary (g, "Sub", "usub", uin, v);
  v = unary (g, "Tanh", "tanh", v);
  v = binary (g, "Div", "div", v, scalar (g, "three", 3.f));
  v = unary (g, "LeakyRelu", "leaky", v);
  clinfer_node_set_attr (v, "alpha", clinfer_attr_new_float (0.1f));
  v = binary (g, "Mul", "tmul", tin, v);
  v = unary (g, "HardSwish", "hswish", v);
  v->opset = 14;
  v = unary (g, "Sigmoid", "sigmoid", v);
  clinfer_graph_add_output (g, (ClinferPortRef) { v, 0 }, "y");
  if (form == CHAIN_SHARED)
    clinfer_graph_add_output (g, (ClinferPortRef) { clip, 0 }, "clip");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (clinfer_pass_fuse_eltwise_chain (g, &ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, want_chains > 0);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (op_test_count_ops (g, "EltwiseChain"), ==, want_chains);
  if (form == CHAIN_LONG) {
    /* Add .. the Mul by t (8 links; t read twice, one input), then
     * HardSwish and Sigmoid. */
    const ClinferNode *y = g_array_index (g->outputs, ClinferGraphOutput,
        0).ref.node;
    g_assert_cmpstr (y->op_type, ==, "EltwiseChain");
    g_assert_cmpuint (y->n_inputs, ==, 1);
    g_assert_cmpstr (y->inputs[0].node->op_type, ==, "EltwiseChain");
    g_assert_cmpuint (y->inputs[0].node->n_inputs, ==, 3);
    g_assert_cmpuint (op_test_count_ops (g, "Tanh") + op_test_count_ops (g, "Clip"), ==, 0);
  }
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, "fuse-eltwise-chain");
}

typedef gboolean (*PassFunc) (ClinferGraph *graph,
    const ClinferPassContext *ctx, gboolean *changed, GError **error);

/* @g (prepared) through @pass: the pass changes it exactly when @fuses,
 * and the reference evals give the same result before and after.
 * Returns the result before (transfer full); @g stays for the caller's
 * node counts. */
static ClinferTensor *
pass_run (ClinferGraph *g, PassFunc pass, const ClinferPassContext *ctx,
    ClinferTensor *const *inputs, gboolean fuses, const char *what)
{
  g_autoptr (ClinferTensor) after = NULL;
  ClinferTensor *before;
  gboolean changed = FALSE;
  GError *err = NULL;

  before = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  g_assert_true (pass (g, ctx, &changed, &err));
  g_assert_no_error (err);
  g_assert_cmpint (changed, ==, fuses);
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  after = op_test_run_graph (g, inputs, &err);
  g_assert_no_error (err);
  op_test_assert_close (after, before, what);
  return before;
}

static void
test_layernorm (gconstpointer data)
{
  LnForm form = GPOINTER_TO_INT (data);
  gboolean fuses = form != LN_SHARED_NOT_FUSED && form != LN_AXIS_NOT_FUSED;
  int opset = form == LN_AXES_INPUT ? 18 : 13;
  g_autoptr (GRand) rand = g_rand_new_with_seed (41);
  int64_t xd[] = { 2, 7, 12 }, sd[] = { 12 }, bd[] = { 1, 1, 12 };
  ClinferShape xs = clinfer_shape_make (3, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 3, xd);
  g_autoptr (ClinferTensor) scale = op_test_random (rand, 1, sd);
  g_autoptr (ClinferTensor) bias = op_test_random (rand, 3, bd);
  g_autoptr (ClinferTensor) before = NULL, compiled = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferPassContext ctx = { NULL, opset };

  for (int run = 0; run < 2; run++) {
    ClinferGraph *g = op_test_graph (opset);
    ClinferNode *in, *m, *d, *sq, *v, *y;
    int64_t axis = form == LN_AXIS_NOT_FUSED ? 1 : -1;
    GError *err = NULL;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    m = mean_over (g, "mean", in, axis, opset);
    d = binary (g, "Sub", "dev", in, m);
    sq = form == LN_SCALE_MUL_SQUARE ? binary (g, "Mul", "sq", d, d)
        : binary (g, "Pow", "sq", d, scalar (g, "two", 2.f));
    v = mean_over (g, "var", sq, axis, opset);
    v = binary (g, "Add", "veps", v, scalar (g, "eps", 1e-5f));
    v = op_test_node (g, "Sqrt", "", "std", 1, &v, 1);
    y = binary (g, "Div", "norm", d, v);
    if (form == LN_FULL)
      y = binary (g, "Mul", "scaled", y, clinfer_graph_add_constant (g, "s",
              scale));
    else if (form == LN_SCALE_MUL_SQUARE)
      y = binary (g, "Mul", "scaled", clinfer_graph_add_constant (g, "s",
              scale), y);
    if (form == LN_FULL)
      y = binary (g, "Add", "biased", y, clinfer_graph_add_constant (g, "b",
              bias));
    clinfer_graph_add_output (g, (ClinferPortRef) { y, 0 }, "y");
    if (form == LN_SHARED_NOT_FUSED)
      clinfer_graph_add_output (g, (ClinferPortRef) { d, 0 }, "dev");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    if (run == 1) {
      /* Compiled for the CPU device: the pass and its kernel. */
      compiled = op_test_run_compiled_output (g, opset, inputs, 1);
      break;
    }
    before = pass_run (g, clinfer_pass_fuse_layernorm, &ctx, inputs, fuses,
        "fuse-layernorm");
    g_assert_cmpuint (op_test_count_ops (g, "LayerNormalization"), ==, fuses ? 1 : 0);
    g_assert_cmpuint (op_test_count_ops (g, "Sqrt") + op_test_count_ops (g, "Div")
        + op_test_count_ops (g, "Sub") + op_test_count_ops (g, "ReduceMean"), ==, fuses ? 0 : 5);
    clinfer_graph_free (g);
  }
  op_test_assert_close (compiled, before, "fuse-layernorm compiled");
}

/* The standard-deviation form (com.clinfer LayerNormStd): LORE's (the
 * mean computed twice, scale before the division, the variance times n
 * and divided by n - 1, then bias), one deviation used by Pow and the
 * Div with nothing else, and a deviation that is also a graph output
 * (left alone); LORE's for a device that did not ask for it (left alone,
 * the compiled run on the CPU device fuses it). */
typedef enum { STD_LORE, STD_BARE, STD_SHARED_NOT_FUSED, STD_NOT_ASKED } LnStdForm;

static void
test_layernorm_std (gconstpointer data)
{
  LnStdForm form = GPOINTER_TO_INT (data);
  gboolean fuses = form != STD_SHARED_NOT_FUSED && form != STD_NOT_ASKED;
  gboolean lore = form == STD_LORE || form == STD_NOT_ASKED;
  g_autoptr (GRand) rand = g_rand_new_with_seed (43);
  int64_t xd[] = { 1, 9, 16 }, sd[] = { 16 };
  ClinferShape xs = clinfer_shape_make (3, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 3, xd);
  g_autoptr (ClinferTensor) scale = op_test_random (rand, 1, sd);
  g_autoptr (ClinferTensor) bias = op_test_random (rand, 1, sd);
  g_autoptr (ClinferTensor) before = NULL, compiled = NULL;
  ClinferTensor *inputs[1] = { x };
  ClinferPassContext ctx = { NULL, 13 };

  ctx.layer_norm_std = form != STD_NOT_ASKED;
  for (int run = 0; run < 2; run++) {
    ClinferGraph *g = op_test_graph (13);
    ClinferNode *in, *d1, *d2, *sq, *v, *y;
    GError *err = NULL;

    in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
    d1 = binary (g, "Sub", "dev", in, mean_over (g, "mean", in, -1, 13));
    d2 = lore
        ? binary (g, "Sub", "dev2", in, mean_over (g, "mean2", in, -1, 13)) : d1;
    sq = lore ? binary (g, "Mul", "sq", d2, d2)
        : binary (g, "Pow", "sq", d2, scalar (g, "two", 2.f));
    v = mean_over (g, "var", sq, -1, 13);
    if (lore) {
      v = binary (g, "Mul", "times-n", v, scalar (g, "n", 16.f));
      v = binary (g, "Div", "by-n-1", v, scalar (g, "n-1", 15.f));
    }
    v = op_test_node (g, "Sqrt", "", "std", 1, &v, 1);
    v = binary (g, "Add", "std-eps", scalar (g, "eps", 1e-6f), v);
    y = lore ? binary (g, "Mul", "scaled", clinfer_graph_add_constant (g,
            "s", scale), d1) : d1;
    y = binary (g, "Div", "norm", y, v);
    if (lore)
      y = binary (g, "Add", "biased", y, clinfer_graph_add_constant (g, "b",
              bias));
    clinfer_graph_add_output (g, (ClinferPortRef) { y, 0 }, "y");
    if (form == STD_SHARED_NOT_FUSED)
      clinfer_graph_add_output (g, (ClinferPortRef) { d1, 0 }, "dev");
    g_assert_true (op_test_prepare (g, &err));
    g_assert_no_error (err);
    if (run == 1) {
      /* Compiled for the CPU device: the pass and its kernel. */
      compiled = op_test_run_compiled_output (g, 13, inputs, 1);
      break;
    }
    before = pass_run (g, clinfer_pass_fuse_layernorm, &ctx, inputs, fuses,
        "fuse-layernorm std");
    g_assert_cmpuint (op_test_count_ops (g, "LayerNormStd"), ==, fuses ? 1 : 0);
    g_assert_cmpuint (op_test_count_ops (g, "LayerNormalization"), ==, 0);
    g_assert_cmpuint (op_test_count_ops (g, "Sqrt") + op_test_count_ops (g, "Div")
        + op_test_count_ops (g, "ReduceMean"), ==, fuses ? 0 : lore ? 6 : 4);
    clinfer_graph_free (g);
  }
  op_test_assert_close (compiled, before, "fuse-layernorm std compiled");
}

/* @g (taken over) compiled for the CPU device with profiling and run on
 * @inputs: a copy of output 0; with @no_reference, no step ran on a
 * reference eval but Reshapes (a graph input's Reshape is a copy, not a
 * view of the same bytes). */
static ClinferTensor *
run_cpu_profiled (ClinferGraph *g, ClinferTensor *const *inputs, guint n_in,
    gboolean no_reference)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) cc = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  const ClinferProfileEntry *e;
  ClinferTensor *y;
  GError *err = NULL;
  guint n_steps = 0;

  m = op_test_model (g, 13, &err);
  g_assert_no_error (err);
  clinfer_compile_config_set_profiling (cfg, TRUE);
  cc = clinfer_compile (m, cfg, &err);
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (cc, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < n_in; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i, inputs[i], &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  e = clinfer_request_get_profile (r, &n_steps);
  for (guint i = 0; i < n_steps; i++) {
    g_test_message ("%s: %s", e[i].node_name, e[i].kernel);
    if (no_reference && strcmp (e[i].op_type, "Reshape") != 0)
      g_assert_cmpstr (e[i].kernel, !=, "reference");
  }
  y = clinfer_tensor_copy (clinfer_request_get_output (r, 0), &err);
  g_assert_no_error (err);
  return y;
}

/* ---------------------------------------------------------------- */
/* gemm-to-matmul                                                    */

typedef enum {
  GM_CONST_TRANSB,           /* B [7, 12] transB, C [7], alpha 0.5 beta 2 */
  GM_C_MATRIX,               /* B [12, 7], C [5, 7] */
  GM_B_ACTIVATION,           /* B a graph input [12, 7], C [1, 7] */
  GM_C_ACTIVATION,           /* C a graph input [5, 7], beta 1 */
  GM_BETA_ZERO,              /* C [7] times 0: dropped */
  GM_NO_C,
  GM_TRANS_A,                /* A [12, 5] transA, constant B transB */
  GM_B_ACTIVATION_TRANSB,    /* B a graph input [7, 12], transB */
  GM_B_ACTIVATION_ALPHA,     /* left alone */
  GM_C_ACTIVATION_BETA,      /* left alone */
  GM_NOT_ASKED,              /* left alone */
} GmCase;

static const char *const gm_names[] = { "const-transb", "c-matrix",
  "b-activation", "c-activation", "beta-zero", "no-c", "trans-a",
  "b-activation-transb", "b-activation-alpha", "c-activation-beta",
  "not-asked" };

/* The case's graph (prepared) and its inputs (x, then B or C where they
 * are graph inputs), all from @seed. */
static ClinferGraph *
gm_graph (GmCase c, guint32 seed, ClinferTensor **inputs, guint *n_in)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  ClinferGraph *g = op_test_graph (13);
  gboolean trans_a = c == GM_TRANS_A;
  gboolean trans_b = c == GM_CONST_TRANSB || c == GM_B_ACTIVATION_TRANSB
      || c == GM_TRANS_A;
  gboolean b_act = c == GM_B_ACTIVATION || c == GM_B_ACTIVATION_TRANSB
      || c == GM_B_ACTIVATION_ALPHA;
  gboolean c_act = c == GM_C_ACTIVATION || c == GM_C_ACTIVATION_BETA;
  int64_t ad[] = { trans_a ? 12 : 5, trans_a ? 5 : 12 };
  int64_t bd[] = { trans_b ? 7 : 12, trans_b ? 12 : 7 };
  int64_t cd_vec[] = { 7 }, cd_row[] = { 1, 7 }, cd_mat[] = { 5, 7 };
  ClinferNode *in[3], *n;
  GError *err = NULL;

  *n_in = 0;
  inputs[(*n_in)++] = op_test_random (rand, 2, ad);
  in[0] = op_test_input_like (g, "a", inputs[0]);
  if (b_act) {
    inputs[(*n_in)++] = op_test_random (rand, 2, bd);
    in[1] = op_test_input_like (g, "b", inputs[*n_in - 1]);
  } else {
    g_autoptr (ClinferTensor) b = op_test_random (rand, 2, bd);
    in[1] = clinfer_graph_add_constant (g, "b", b);
  }
  if (c_act) {
    inputs[(*n_in)++] = op_test_random (rand, 2, cd_mat);
    in[2] = op_test_input_like (g, "c", inputs[*n_in - 1]);
  } else {
    g_autoptr (ClinferTensor) cv = c == GM_C_MATRIX
        ? op_test_random (rand, 2, cd_mat) : c == GM_B_ACTIVATION
        ? op_test_random (rand, 2, cd_row) : op_test_random (rand, 1, cd_vec);
    in[2] = clinfer_graph_add_constant (g, "c", cv);
  }
  n = op_test_node (g, "Gemm", "", "gemm", c == GM_NO_C ? 2 : 3, in, 1);
  clinfer_node_set_attr (n, "transA", clinfer_attr_new_int (trans_a));
  clinfer_node_set_attr (n, "transB", clinfer_attr_new_int (trans_b));
  if (c == GM_B_ACTIVATION_ALPHA)
    clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (0.5f));
  if (c == GM_CONST_TRANSB || c == GM_TRANS_A) {
    clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (0.5f));
    clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (2.f));
  }
  if (c == GM_BETA_ZERO)
    clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (0.f));
  if (c == GM_C_ACTIVATION_BETA)
    clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (0.25f));
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

static void
test_gemm_to_matmul (gconstpointer data)
{
  GmCase c = GPOINTER_TO_INT (data);
  gboolean rewrites = c < GM_B_ACTIVATION_ALPHA;
  guint transposes = c == GM_TRANS_A || c == GM_B_ACTIVATION_TRANSB;
  ClinferTensor *inputs[6] = { NULL };   /* twice the graph inputs */
  guint n_in;
  ClinferGraph *g = gm_graph (c, 90 + c, inputs, &n_in);
  ClinferPassContext ctx = { NULL, 13 };
  g_autoptr (ClinferTensor) before = NULL, compiled = NULL;

  ctx.gemm_as_matmul = c != GM_NOT_ASKED;
  before = pass_run (g, clinfer_pass_gemm_to_matmul, &ctx, inputs, rewrites,
      gm_names[c]);
  g_assert_cmpuint (op_test_count_ops (g, "Gemm"), ==, rewrites ? 0 : 1);
  g_assert_cmpuint (op_test_count_ops (g, "MatMul"), ==, rewrites ? 1 : 0);
  g_assert_cmpuint (op_test_count_ops (g, "Transpose"), ==, transposes);
  g_assert_cmpuint (op_test_count_ops (g, "Add"), ==,
      rewrites && c != GM_BETA_ZERO && c != GM_NO_C ? 1 : 0);
  clinfer_graph_free (g);

  /* Compiled for the CPU device, which asks for the pass: no reference
   * step where it rewrites. */
  g = gm_graph (c, 90 + c, inputs + n_in, &n_in);
  for (guint i = 0; i < n_in; i++)
    g_clear_pointer (&inputs[n_in + i], clinfer_tensor_unref);
  compiled = run_cpu_profiled (g, inputs, n_in, rewrites);
  op_test_assert_close (compiled, before, gm_names[c]);
  for (guint i = 0; i < n_in; i++)
    clinfer_tensor_unref (inputs[i]);
}

/* ---------------------------------------------------------------- */
/* conv1d-to-2d                                                      */

typedef enum {
  C1_PADS_STRIDES_DILATION,  /* x [2, 6, 23], w [5, 6, 3], no kernel_shape */
  C1_GROUP_SAME_UPPER,       /* group 2, auto_pad SAME_UPPER */
  C1_FUSED_RELU_RESIDUAL,    /* com.clinfer FusedConv, Relu, residual */
  C1_NOT_ASKED,              /* left alone */
} C1Case;

static const char *const c1_names[] = { "pads-strides-dilation",
  "group-same-upper", "fused-relu-residual", "not-asked" };

static ClinferGraph *
c1_graph (C1Case c, guint32 seed, ClinferTensor **inputs, guint *n_in)
{
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  ClinferGraph *g = op_test_graph (13);
  gboolean grouped = c == C1_GROUP_SAME_UPPER;
  gboolean fused = c == C1_FUSED_RELU_RESIDUAL;
  int64_t xd[] = { grouped ? 1 : 2, grouped ? 8 : 6, grouped ? 17 : 23 };
  int64_t wd[] = { grouped ? 4 : 5, grouped ? 4 : 6, grouped ? 4 : 3 };
  int64_t bd[] = { wd[0] };
  g_autoptr (ClinferTensor) w = op_test_random (rand, 3, wd);
  g_autoptr (ClinferTensor) b = op_test_random (rand, 1, bd);
  ClinferNode *in[4], *n;
  GError *err = NULL;

  *n_in = 0;
  inputs[(*n_in)++] = op_test_random (rand, 3, xd);
  in[0] = op_test_input_like (g, "x", inputs[0]);
  in[1] = clinfer_graph_add_constant (g, "w", w);
  in[2] = clinfer_graph_add_constant (g, "b", b);
  if (fused) {
    int64_t zd[] = { 2, 5, 23 };
    inputs[(*n_in)++] = op_test_random (rand, 3, zd);
    in[3] = op_test_input_like (g, "z", inputs[1]);
  }
  n = op_test_node (g, fused ? "FusedConv" : "Conv", fused ? "com.clinfer"
      : "", "conv", fused ? 4 : 3, in, 1);
  if (grouped) {
    int64_t k[] = { 4 };
    clinfer_node_set_attr (n, "group", clinfer_attr_new_int (2));
    clinfer_node_set_attr (n, "kernel_shape", clinfer_attr_new_ints (k, 1));
    clinfer_node_set_attr (n, "auto_pad", clinfer_attr_new_string ("SAME_UPPER"));
  } else if (fused) {
    int64_t pads[] = { 1, 1 };
    clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (pads, 2));
    clinfer_node_set_attr (n, "activation", clinfer_attr_new_string ("Relu"));
  } else {
    int64_t s2[] = { 2 }, d2[] = { 2 }, pads[] = { 1, 2 };
    clinfer_node_set_attr (n, "strides", clinfer_attr_new_ints (s2, 1));
    clinfer_node_set_attr (n, "dilations", clinfer_attr_new_ints (d2, 1));
    clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (pads, 2));
  }
  clinfer_graph_add_output (g, (ClinferPortRef) { n, 0 }, "y");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  return g;
}

static void
test_conv1d_to_2d (gconstpointer data)
{
  C1Case c = GPOINTER_TO_INT (data);
  gboolean rewrites = c != C1_NOT_ASKED;
  ClinferTensor *inputs[6] = { NULL };   /* twice the graph inputs */
  guint n_in;
  ClinferGraph *g = c1_graph (c, 110 + c, inputs, &n_in);
  ClinferPassContext ctx = { NULL, 13 };
  g_autoptr (ClinferTensor) before = NULL, compiled = NULL;
  const char *op = c == C1_FUSED_RELU_RESIDUAL ? "FusedConv" : "Conv";

  ctx.conv1d_as_2d = rewrites;
  before = pass_run (g, clinfer_pass_conv1d_to_2d, &ctx, inputs, rewrites,
      c1_names[c]);
  g_assert_cmpuint (op_test_count_ops (g, op), ==, 1);
  g_assert_cmpuint (op_test_count_ops (g, "Reshape"), ==,
      rewrites ? (c == C1_FUSED_RELU_RESIDUAL ? 3 : 2) : 0);
  clinfer_graph_free (g);

  /* The CPU device asks for it: its 2-D kernels, no reference step. */
  g = c1_graph (c, 110 + c, inputs + n_in, &n_in);
  for (guint i = 0; i < n_in; i++)
    g_clear_pointer (&inputs[n_in + i], clinfer_tensor_unref);
  compiled = run_cpu_profiled (g, inputs, n_in, TRUE);
  op_test_assert_close (compiled, before, c1_names[c]);
  for (guint i = 0; i < n_in; i++)
    clinfer_tensor_unref (inputs[i]);
}

/* ---------------------------------------------------------------- */
/* fuse-swish                                                        */

typedef enum {
  SW_SIGMOID_SECOND,         /* Mul (x, Sigmoid (x)) */
  SW_SIGMOID_FIRST,          /* Mul (Sigmoid (x), x) */
  SW_SHARED_NOT_FUSED,       /* the Sigmoid also a graph output */
  SW_OTHER_NOT_FUSED,        /* Mul (x, Sigmoid (x2)) */
  SW_NOT_ASKED,              /* the device has no Swish kernel */
} SwForm;

static const char *const sw_names[] = { "sigmoid-second", "sigmoid-first",
  "shared-not-fused", "other-not-fused", "not-asked" };

static void
test_swish (gconstpointer data)
{
  SwForm form = GPOINTER_TO_INT (data);
  gboolean fuses = form == SW_SIGMOID_SECOND || form == SW_SIGMOID_FIRST;
  g_autoptr (GRand) rand = g_rand_new_with_seed (47);
  g_autoptr (ClinferGraph) g = op_test_graph (13);
  int64_t xd[] = { 2, 6, 9 };
  ClinferShape xs = clinfer_shape_make (3, xd);
  g_autoptr (ClinferTensor) x = op_test_random (rand, 3, xd);
  g_autoptr (ClinferTensor) x2 = op_test_random (rand, 3, xd);
  g_autoptr (ClinferTensor) before = NULL;
  ClinferTensor *inputs[2] = { x, x2 };
  ClinferPassContext ctx = { NULL, 13 };
  ClinferNode *in, *in2, *sig, *mul;
  ClinferGraphOutput *o;
  GError *err = NULL;
  float *v = clinfer_tensor_get_data (x);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (x); i++)
    v[i] *= 8.f;
  ctx.swish = form != SW_NOT_ASKED;
  in = clinfer_graph_add_input (g, "x", CLINFER_TYPE_F32, &xs);
  in2 = clinfer_graph_add_input (g, "x2", CLINFER_TYPE_F32, &xs);
  sig = op_test_node (g, "Sigmoid", "", "sig", 1,
      form == SW_OTHER_NOT_FUSED ? &in2 : &in, 1);
  mul = form == SW_SIGMOID_FIRST ? binary (g, "Mul", "tail", sig, in)
      : binary (g, "Mul", "tail", in, sig);
  clinfer_graph_add_output (g, (ClinferPortRef) { mul, 0 }, "y");
  if (form == SW_SHARED_NOT_FUSED)
    clinfer_graph_add_output (g, (ClinferPortRef) { sig, 0 }, "s");
  g_assert_true (op_test_prepare (g, &err));
  g_assert_no_error (err);
  before = pass_run (g, clinfer_pass_fuse_swish, &ctx, inputs, fuses,
      sw_names[form]);
  g_assert_cmpuint (op_test_count_ops (g, "Swish"), ==, fuses ? 1 : 0);
  g_assert_cmpuint (op_test_count_ops (g, "Sigmoid")
      + op_test_count_ops (g, "Mul"), ==, fuses ? 0 : 2);
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  if (fuses) {
    g_assert_cmpstr (o->ref.node->domain, ==, "com.clinfer");
    g_assert_true (o->ref.node->inputs[0].node == in);
  }
  g_assert_cmpstr (o->ref.node->outputs[o->ref.port].name, ==, "tail:0");
}

int
main (int argc, char **argv)
{
  static const char *const names[] = { "div-after-mul", "div-inside",
    "mul-by-sixth", "hard-sigmoid", "shared-clip-not-fused",
    "clip-to-five-not-fused" };
  static const char *const scale_names[] = { "mul-add", "sub-div", "no-bias",
    "shared-conv-not-fused", "per-column-not-fused", "sub-from-not-fused",
    "div-by-zero-not-fused", "add-batchnorm", "conv-transpose-not-fused" };
  static const char *const gate_names[] = { "x-first", "swapped",
    "shared-product-not-fused", "same-shape-not-fused" };
  static const char *const affine_names[] = { "alone", "add-folded",
    "sub-folded", "mul-folded", "shared-add-kept", "per-column-add-kept" };
  static const char *const ln_std_names[] = { "lore", "bare",
    "shared-not-fused", "not-asked" };
  static const char *const ln_names[] = { "full", "scale-mul-square", "bare",
    "axes-input", "shared-deviation-not-fused", "other-axis-not-fused" };

  static const char *const chain_names[] = { "long", "shared-value",
    "broadcast-operand", "not-asked" };

  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (chain_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-eltwise-chain/%s",
        chain_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_eltwise_chain);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-hardswish/%s", names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_form);
  }
  g_test_add_func ("/passes/fuse-hardswish/registered", test_registered);
  for (gsize i = 0; i < G_N_ELEMENTS (scale_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-conv-scale/%s",
        scale_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_conv_scale);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (gate_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-residual-gate/%s",
        gate_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_residual_gate);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (affine_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/batchnorm-to-affine/%s",
        affine_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i),
        test_batchnorm_affine);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (ln_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-layernorm/%s",
        ln_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_layernorm);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (c1_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/conv1d-to-2d/%s",
        c1_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_conv1d_to_2d);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (sw_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-swish/%s",
        sw_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_swish);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (gm_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/gemm-to-matmul/%s",
        gm_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i),
        test_gemm_to_matmul);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (ln_std_names); i++) {
    g_autofree char *path = g_strdup_printf ("/passes/fuse-layernorm/std-%s",
        ln_std_names[i]);
    g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_layernorm_std);
  }
  return g_test_run ();
}
