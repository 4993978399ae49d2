/* clinfer — OpenVINO IR op translators: MatMul, reductions and normalisations. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* MatMul                                                            */

/* Input @input of @l, its last two dims swapped when @transpose. */
static ClinferNode *
matmul_operand (IrReader *r, IrLayer *l, guint input, gboolean transpose,
    GError **error)
{
  ClinferShape s = ir_input_shape (l, input);
  ClinferNode *n = ir_add_node (r, l, transpose ? "Transpose" : "Identity",
      13, 1, 1, input == 0 ? "a" : "b");
  int64_t perm[CLINFER_MAX_RANK];

  ir_sink (l, input, n, 0);
  if (!transpose || s.rank == 1)
    return n;
  if (s.rank < 2) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "transpose_%c needs the rank of input %u, which the file does not give",
        input == 0 ? 'a' : 'b', input);
    return NULL;
  }
  for (int i = 0; i < s.rank; i++)
    perm[i] = i;
  perm[s.rank - 2] = s.rank - 1;
  perm[s.rank - 1] = s.rank - 2;
  clinfer_node_set_attr (n, "perm", clinfer_attr_new_ints (perm, s.rank));
  return n;
}

static gboolean
tr_matmul (IrReader *r, IrLayer *l, GError **error)
{
  gboolean ta, tb;
  ClinferNode *a, *b;

  if (!ir_attr_bool (r, l, "transpose_a", FALSE, &ta, error)
      || !ir_attr_bool (r, l, "transpose_b", FALSE, &tb, error))
    return FALSE;
  if (!ta && !tb) {
    ir_simple (r, l, "MatMul", 13, 2, 1);
    return TRUE;
  }
  if (!(a = matmul_operand (r, l, 0, ta, error))
      || !(b = matmul_operand (r, l, 1, tb, error)))
    return FALSE;
  ir_output (r, l, 0, ir_binary (r, l, "MatMul", NULL, a, b), 0);
  return TRUE;
}

/* Reductions and normalisations                                     */

static ClinferNode *
reduce_node (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    gboolean keepdims)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 18, 2, 1, suffix);

  clinfer_node_set_attr (n, "keepdims", clinfer_attr_new_int (keepdims));
  /* OpenVINO: empty axes reduce nothing. */
  clinfer_node_set_attr (n, "noop_with_empty_axes", clinfer_attr_new_int (1));
  return n;
}

static gboolean
tr_reduce (IrReader *r, IrLayer *l, GError **error)
{
  gboolean keep;
  ClinferNode *n;

  if (!ir_attr_bool (r, l, "keep_dims", FALSE, &keep, error))
    return FALSE;
  n = reduce_node (r, l, l->def->onnx_op, NULL, keep);
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "axes");
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

/* NormalizeL2: x / sqrt (max (sum x^2, eps)) or x / sqrt (sum x^2 + eps). */
static gboolean
tr_normalize_l2 (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "add", "max", NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *sum, *den, *y;
  float eps;
  int mode;

  if (!ir_attr_float (r, l, "eps", TRUE, 0.f, &eps, error)
      || !ir_attr_enum (r, l, "eps_mode", modes, 0, &mode, error))
    return FALSE;
  ir_sink (l, 0, x, 0);
  sum = reduce_node (r, l, "ReduceSumSquare", "sum_squares", TRUE);
  ir_connect (sum, 0, x);
  ir_sink_int_list (r, l, 1, sum, 1, "axes");
  den = ir_binary (r, l, mode == 0 ? "Add" : "Max", "eps", sum,
      ir_add_scalar (r, l, "eps_value", t, eps));
  den = ir_unary (r, l, "Sqrt", "norm", den);
  y = ir_binary (r, l, "Div", NULL, x, den);
  ir_output (r, l, 0, y, 0);
  return TRUE;
}

/* MVN-1 (axes from across_channels, eps outside the root) and MVN-6
 * (axes input, eps_mode). */
static gboolean
tr_mvn (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "inside_sqrt", "outside_sqrt", NULL };
  ClinferElementType t = ir_input_type (l, 0);
  ClinferNode *x = ir_add_node (r, l, "Identity", 13, 1, 1, "x");
  ClinferNode *axes = ir_add_node (r, l, "Identity", 13, 1, 1, "axes");
  ClinferNode *mean, *d, *var, *den, *eps_node;
  gboolean across = FALSE, norm_var;
  int mode = 1;
  float eps;

  if (!ir_attr_bool (r, l, "normalize_variance", TRUE, &norm_var, error)
      || !ir_attr_float (r, l, "eps", TRUE, 0.f, &eps, error)
      || (l->opset >= 6
          && !ir_attr_enum (r, l, "eps_mode", modes, 0, &mode, error))
      || (l->opset < 6
          && !ir_attr_bool (r, l, "across_channels", FALSE, &across, error)))
    return FALSE;
  ir_sink (l, 0, x, 0);
  if (l->opset >= 6) {
    ir_sink_int_list (r, l, 1, axes, 0, "axes_list");
  } else {
    ClinferShape s = ir_input_shape (l, 0);
    int64_t list[CLINFER_MAX_RANK];
    gsize n = 0;
    if (s.rank < 2) {
      ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
          "MVN-1 needs the rank (>= 2) of its input");
      return FALSE;
    }
    for (int i = across ? 1 : 2; i < s.rank; i++)
      list[n++] = i;
    ir_connect (axes, 0, ir_add_const_i64 (r, l, "axes_list", list, n, FALSE));
  }
  mean = ir_binary (r, l, "ReduceMean", "mean", x, axes);
  mean->opset = 18;
  d = ir_binary (r, l, "Sub", norm_var ? "centered" : NULL, x, mean);
  if (!norm_var) {
    ir_output (r, l, 0, d, 0);
    return TRUE;
  }
  var = ir_binary (r, l, "ReduceMean", "variance", ir_binary (r, l, "Mul",
      "squares", d, d), axes);
  var->opset = 18;
  eps_node = ir_add_scalar (r, l, "eps", t, eps);
  if (mode == 0)
    den = ir_unary (r, l, "Sqrt", "std", ir_binary (r, l, "Add", "var_eps",
        var, eps_node));
  else
    den = ir_binary (r, l, "Add", "std_eps", ir_unary (r, l, "Sqrt", "std",
        var), eps_node);
  ir_output (r, l, 0, ir_binary (r, l, "Div", NULL, d, den), 0);
  return TRUE;
}

/* BatchNormInference-1 orders its ports gamma, beta, data, mean, variance;
 * -5 orders them as ONNX does. */
static gboolean
tr_batch_norm (IrReader *r, IrLayer *l, GError **error)
{
  static const guint v1_order[] = { 2, 0, 1, 3, 4 };
  ClinferNode *n = ir_add_node (r, l, "BatchNormalization", 9, 5, 1, NULL);
  float eps;

  if (!ir_attr_float (r, l, "epsilon", TRUE, 0.f, &eps, error))
    return FALSE;
  for (guint i = 0; i < 5; i++)
    ir_sink (l, l->opset >= 5 ? i : v1_order[i], n, i);
  clinfer_node_set_attr (n, "epsilon", clinfer_attr_new_float (eps));
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_lrn (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axes = NULL;
  gsize na;
  float alpha, beta, bias;
  int64_t size;
  ClinferNode *n;

  if (!ir_const_ints (r, l, 1, "axes", &axes, &na, error)
      || !ir_attr_float (r, l, "alpha", TRUE, 0.f, &alpha, error)
      || !ir_attr_float (r, l, "beta", TRUE, 0.f, &beta, error)
      || !ir_attr_float (r, l, "bias", TRUE, 0.f, &bias, error)
      || !ir_attr_int (r, l, "size", TRUE, 0, &size, error))
    return FALSE;
  if (na != 1 || axes[0] != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "only LRN across channels (axes = [1]) is supported");
    return FALSE;
  }
  n = ir_simple (r, l, "LRN", 13, 1, 1);
  clinfer_node_set_attr (n, "alpha", clinfer_attr_new_float (alpha));
  clinfer_node_set_attr (n, "beta", clinfer_attr_new_float (beta));
  clinfer_node_set_attr (n, "bias", clinfer_attr_new_float (bias));
  clinfer_node_set_attr (n, "size", clinfer_attr_new_int (size));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define REDUCE(type, onnx, since) \
  { type, since, 0, 2, 2, 1, 1, tr_reduce, onnx, 18 }

const IrOpDef clinfer_ir_ops_math[] = {
  { "MatMul", 1, 0, 2, 2, 1, 1, tr_matmul, NULL, 0 },
  REDUCE ("ReduceMean", "ReduceMean", 1),
  REDUCE ("ReduceSum", "ReduceSum", 1),
  REDUCE ("ReduceMax", "ReduceMax", 1),
  REDUCE ("ReduceMin", "ReduceMin", 1),
  REDUCE ("ReduceProd", "ReduceProd", 1),
  REDUCE ("ReduceL1", "ReduceL1", 4),
  REDUCE ("ReduceL2", "ReduceL2", 4),
  { "NormalizeL2", 1, 0, 2, 2, 1, 1, tr_normalize_l2, NULL, 0 },
  { "MVN", 1, 5, 1, 1, 1, 1, tr_mvn, NULL, 0 },
  { "MVN", 6, 0, 2, 2, 1, 1, tr_mvn, NULL, 0 },
  { "BatchNormInference", 1, 0, 5, 5, 1, 1, tr_batch_norm, NULL, 0 },
  { "LRN", 1, 0, 2, 2, 1, 1, tr_lrn, NULL, 0 },
  { NULL }
};
