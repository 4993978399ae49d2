/* clinfer — com.clinfer EltwiseChain (see eltwise-chain.h): attribute
 * parsing, shape inference and the reference evaluation (the CPU fallback
 * of a device that fused the chain). */
#include "ops/eltwise-chain.h"
#include <math.h>
#include <string.h>

static const char *const op_types[CLINFER_CHAIN_N_OPS] = {
  "Add", "Sub", "Mul", "Div", "Max", "Min", "Relu", "Clip", "Sigmoid", "Tanh",
  "LeakyRelu", "HardSigmoid", "HardSwish", "Exp", "Neg", "Abs", "Sqrt",
};

int
clinfer_chain_op_from_type (const char *op_type)
{
  for (int i = 0; i < CLINFER_CHAIN_N_OPS; i++)
    if (strcmp (op_types[i], op_type) == 0)
      return i;
  return -1;
}

static gboolean
bad_attr (const ClinferNode *node, const char *what, GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: %s", clinfer_node_label (node), what);
  return FALSE;
}

static gboolean
prepare_chain (ClinferNode *node, GError **error)
{
  g_autofree ClinferChain *c = g_new0 (ClinferChain, 1);
  const int64_t *ops = NULL, *operands = NULL;
  const float *a = NULL, *b = NULL;
  gsize n_ops = 0, n_operands = 0, na = 0, nb = 0;

  if (!clinfer_node_attr_ints (node, "ops", &ops, &n_ops, error)
      || !clinfer_node_attr_ints (node, "operands", &operands, &n_operands,
          error)
      || !clinfer_node_attr_floats (node, "a", &a, &na, error)
      || !clinfer_node_attr_floats (node, "b", &b, &nb, error))
    return FALSE;
  if (n_ops == 0 || n_ops > CLINFER_CHAIN_MAX_OPS)
    return bad_attr (node, "attribute 'ops' must list 1 to 8 op codes", error);
  if (n_operands != n_ops || na != n_ops || nb != n_ops)
    return bad_attr (node, "attributes 'operands', 'a' and 'b' must have "
        "one entry per op", error);
  c->n_ops = n_ops;
  for (gsize k = 0; k < n_ops; k++) {
    int src = (int) (operands[k] & ~(int64_t) CLINFER_CHAIN_REVERSED);
    if (ops[k] < 0 || ops[k] >= CLINFER_CHAIN_N_OPS)
      return bad_attr (node, "an op code is out of range", error);
    if (operands[k] < 0 || src >= (int) node->n_inputs
        || (!CLINFER_CHAIN_IS_BINARY (ops[k]) && operands[k] != 0))
      return bad_attr (node, "an operand names no input of the node", error);
    c->op[k] = (int) ops[k];
    c->operand[k] = (int) operands[k];
    c->a[k] = a[k];
    c->b[k] = b[k];
  }
  node->op_data = g_steal_pointer (&c);
  return TRUE;
}

static gboolean
infer_chain (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  for (guint i = 0; i < node->n_inputs; i++) {
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
    if (in[i].type != in[0].type || !clinfer_shape_equal (&in[i].shape,
            &in[0].shape)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input %u must have the type and shape of input 0",
          clinfer_node_label (node), i);
      return FALSE;
    }
  }
  if (in[0].type != CLINFER_TYPE_F32 && in[0].type != CLINFER_TYPE_F16)
    return clinfer_op_unsupported_type (node, in[0].type, error);
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

/* One link on value @v; @t is the other operand of a binary op. */
static inline float
apply (int op, float v, float t, float a, float b, gboolean reversed)
{
  float x = reversed ? t : v, y = reversed ? v : t;

  switch (op) {
    case CLINFER_CHAIN_ADD: return x + y;
    case CLINFER_CHAIN_SUB: return x - y;
    case CLINFER_CHAIN_MUL: return x * y;
    case CLINFER_CHAIN_DIV: return x / y;
    case CLINFER_CHAIN_MAX: return isnan (x) || isnan (y) ? NAN : fmaxf (x, y);
    case CLINFER_CHAIN_MIN: return isnan (x) || isnan (y) ? NAN : fminf (x, y);
    case CLINFER_CHAIN_RELU: return v > 0.f ? v : 0.f;
    case CLINFER_CHAIN_CLIP: return v < a ? a : v > b ? b : v;
    case CLINFER_CHAIN_SIGMOID: return 1.f / (1.f + expf (-v));
    case CLINFER_CHAIN_TANH: return tanhf (v);
    case CLINFER_CHAIN_LEAKY_RELU: return v >= 0.f ? v : a * v;
    case CLINFER_CHAIN_HARD_SIGMOID: return fmaxf (0.f, fminf (1.f, a * v + b));
    case CLINFER_CHAIN_HARD_SWISH:
      return v * fmaxf (0.f, fminf (1.f, v / 6.f + 0.5f));
    case CLINFER_CHAIN_EXP: return expf (v);
    case CLINFER_CHAIN_NEG: return -v;
    case CLINFER_CHAIN_ABS: return fabsf (v);
    case CLINFER_CHAIN_SQRT: return sqrtf (v);
    default: return v;
  }
}

static gboolean
eval_f32 (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferChain *c = node->op_data;
  const float *src[CLINFER_CHAIN_MAX_INPUTS] = { NULL };
  float *y = clinfer_tensor_get_data (out[0]);
  int64_t n = clinfer_tensor_get_n_elements (out[0]);

  for (guint i = 0; i < node->n_inputs && i < CLINFER_CHAIN_MAX_INPUTS; i++)
    src[i] = clinfer_tensor_get_const_data (in[i]);
#pragma omp parallel for if (n > 65536)
  for (int64_t i = 0; i < n; i++) {
    float v = src[0][i];
    for (guint k = 0; k < c->n_ops; k++) {
      int s = c->operand[k] & ~CLINFER_CHAIN_REVERSED;
      float t = s > 0 ? src[s][i] : c->a[k];
      v = apply (c->op[k], v, t, c->a[k], c->b[k],
          (c->operand[k] & CLINFER_CHAIN_REVERSED) != 0);
    }
    y[i] = v;
  }
  return TRUE;
}

static gboolean
eval_chain (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  switch (clinfer_tensor_get_element_type (out[0])) {
    case CLINFER_TYPE_F32:
      return eval_f32 (node, in, out, error);
    case CLINFER_TYPE_F16:
      return clinfer_op_eval_via_f32 (node, in, out, eval_f32, error);
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (out[0]), error);
  }
}

const ClinferOpDef clinfer_ops_eltwise_chain[] = {
  { "EltwiseChain", "com.clinfer", 1, 0, 1, CLINFER_CHAIN_MAX_INPUTS, 1, 1, 0,
    prepare_chain, g_free, infer_chain, eval_chain },
  { NULL }
};
