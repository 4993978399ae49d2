/* clinfer — OpenCL typed binary ops (kernels/binary.cl) for every numeric
 * type (f64 where the device has cl_khr_fp64): Add/Sub/Mul/Div/Pow and
 * Max/Min/Sum/Mean of any number of inputs, Mod, BitShift, comparisons
 * (bool out, any numeric input), And/Or/Xor, Not, Clip, and Where (raw
 * bits, kernels/layout.cl). All with numpy broadcasting, rank <= 8. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

enum {
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_MOD, OP_FMOD, OP_EQ,
  OP_LT, OP_GT, OP_LE, OP_GE, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR, OP_POW,
  OP_PRELU,
  OP_MEAN,                   /* host only: OP_ADD launches, then a scale */
};

static const struct {
  const char *name;
  int op;
} ops[] = {
  { "Add", OP_ADD }, { "Sub", OP_SUB }, { "Mul", OP_MUL }, { "Div", OP_DIV },
  { "Max", OP_MAX }, { "Min", OP_MIN }, { "Sum", OP_ADD }, { "Mod", OP_MOD },
  { "Equal", OP_EQ }, { "Less", OP_LT }, { "Greater", OP_GT },
  { "LessOrEqual", OP_LE }, { "GreaterOrEqual", OP_GE }, { "And", OP_AND },
  { "Or", OP_OR }, { "Xor", OP_XOR }, { "BitShift", OP_SHL },
  { "Pow", OP_POW }, { "Mean", OP_MEAN }, { "PRelu", OP_PRELU },
};

static int
op_code (const ClinferNode *node)
{
  int64_t fmod = 0;
  const char *dir = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    if (strcmp (ops[i].name, node->op_type) == 0) {
      if (ops[i].op == OP_MOD && clinfer_node_attr_int (node, "fmod", 0,
              &fmod, NULL) && fmod)
        return OP_FMOD;
      if (ops[i].op == OP_SHL && clinfer_node_attr_string (node, "direction",
              "LEFT", &dir, NULL) && g_strcmp0 (dir, "RIGHT") == 0)
        return OP_SHR;
      return ops[i].op;
    }
  return -1;
}

static gboolean
is_unsigned (ClinferElementType t)
{
  return t == CLINFER_TYPE_U8 || t == CLINFER_TYPE_U16 || t == CLINFER_TYPE_U32
      || t == CLINFER_TYPE_U64 || t == CLINFER_TYPE_BOOL;
}

static gboolean
is_variadic (const ClinferNode *node)
{
  const char *op = node->op_type;

  return strcmp (op, "Sum") == 0 || strcmp (op, "Mean") == 0
      || strcmp (op, "Max") == 0 || strcmp (op, "Min") == 0;
}

gboolean
clinfer_ocl_fp64_ok (const OclDevice *dev, ClinferElementType t,
    const char **reason)
{
  if (t == CLINFER_TYPE_F64 && !dev->core->fp64) {
    *reason = "f64 needs the cl_khr_fp64 extension, which this OpenCL device "
        "lacks";
    return FALSE;
  }
  return TRUE;
}

/* Common checks: input count (any for Sum/Mean/Max/Min), rank, same input
 * types (Pow: any numeric exponent), a type the kernels (and the device,
 * for f64) take. */
static gboolean
typed_ok (const OclDevice *dev, const ClinferNode *node, guint n_in,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  gboolean is_pow = strcmp (node->op_type, "Pow") == 0;

  if ((is_variadic (node) ? node->n_inputs < 1 : node->n_inputs != n_in)
      || node->outputs[0].shape.rank > 8) {
    *reason = "unexpected number of inputs or rank above 8";
    return FALSE;
  }
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferElementType ti = clinfer_ocl_in_type (node, i);
    if (node->inputs[i].node == NULL || (ti != t && !(is_pow && i == 1))) {
      *reason = "absent input or inputs of mixed element types";
      return FALSE;
    }
    if (clinfer_ocl_c_type (ti) == NULL
        || (is_pow && ti == CLINFER_TYPE_BOOL)) {
      *reason = "element type not supported by the OpenCL kernels";
      return FALSE;
    }
    if (!clinfer_ocl_fp64_ok (dev, ti, reason))
      return FALSE;
  }
  /* Pow of mixed types computes in double, as the CPU device does. */
  if (is_pow && clinfer_ocl_in_type (node, 1) != t && !dev->core->fp64) {
    *reason = "Pow of mixed element types computes in f64, which needs the "
        "cl_khr_fp64 extension this OpenCL device lacks";
    return FALSE;
  }
  return TRUE;
}

/* -DA_T=... -DC_T=... -DY_T=... for input type @t and output @yt. */
static char *
typed_options (ClinferElementType t, ClinferElementType yt)
{
  gboolean fl = clinfer_element_type_is_float (t);
  const char *ct = t == CLINFER_TYPE_F16 ? "float" : clinfer_ocl_c_type (t);

  return g_strdup_printf ("-DA_T=%s -DC_T=%s -DY_T=%s%s%s%s%s%s",
      clinfer_ocl_c_type (t), ct, clinfer_ocl_c_type (yt),
      fl ? " -DC_FLOAT" : "", t == CLINFER_TYPE_F16 ? " -DA_HALF" : "",
      yt == CLINFER_TYPE_F16 ? " -DY_HALF" : "",
      is_unsigned (t) ? " -DC_UNSIGNED" : "",
      t == CLINFER_TYPE_F64 || yt == CLINFER_TYPE_F64 ? " -DUSE_FP64" : "");
}

static gboolean
typed_launch (OclBuilder *b, const ClinferNode *node, int op, GError **error)
{
  g_autofree char *opts = typed_options (clinfer_ocl_in_type (node, 0),
      node->outputs[0].type);

  return clinfer_ocl_launch_broadcast2 (b, node, "binary", opts,
      "binary_typed", op, error);
}

/* y = a op input @b_port where a is input 0 (@a_is_output FALSE) or the
 * output so far (the chained launches of Sum/Mean/Max/Min). */
static gboolean
typed_chain_launch (OclBuilder *b, const ClinferNode *node, const char *opts,
    int op, gboolean a_is_output, guint b_port, GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  const ClinferShape *as = a_is_output ? out : clinfer_ocl_in_shape (b, 0);
  OclLaunch *l = clinfer_ocl_launch_new (b, "binary", opts, "binary_typed",
      error);
  int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, sa[8] = { 0 }, sb[8] = { 0 };
  int64_t n = clinfer_shape_n_elements (out);
  ClinferShape beff;

  if (l == NULL)
    return FALSE;
  for (int i = 0; i < out->rank; i++)
    dims[i] = (int) out->dims[i];
  clinfer_ocl_b_shape (node, as, clinfer_ocl_in_shape (b, b_port), &beff);
  clinfer_ocl_broadcast_strides (as, out, sa);
  clinfer_ocl_broadcast_strides (&beff, out, sb);
  if (a_is_output)
    clinfer_ocl_arg_output (l, 0);
  else
    clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, b_port);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, op);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, dims, 8);
  clinfer_ocl_arg_int8 (l, sa, 8);
  clinfer_ocl_arg_int8 (l, sb, 8);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* y *= @s in place, in the output's type (float types only). */
gboolean
clinfer_ocl_scale_output (OclBuilder *b, const ClinferNode *node, float s,
    GError **error)
{
  ClinferElementType t = node->outputs[0].type;
  g_autofree char *opts = typed_options (t, t);
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  OclLaunch *l = clinfer_ocl_launch_new (b, "binary", opts, "scale_typed",
      error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_float (l, s);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* Sum/Mean/Max/Min of N inputs: a left fold of launches into the output
 * (one input: a copy), Mean then scaled by 1/N. */
static gboolean
typed_fold (OclBuilder *b, const ClinferNode *node, int op, GError **error)
{
  g_autofree char *opts = typed_options (clinfer_ocl_in_type (node, 0),
      node->outputs[0].type);
  gboolean mean = op == OP_MEAN;

  if (node->n_inputs == 1) {
    clinfer_ocl_copy_new (b, 0, 0, 0, 0,
        (gsize) clinfer_shape_n_elements (&node->outputs[0].shape)
        * clinfer_element_type_size (node->outputs[0].type));
    return TRUE;
  }
  for (guint i = 1; i < node->n_inputs; i++)
    if (!typed_chain_launch (b, node, opts, mean ? OP_ADD : op, i > 1, i,
            error))
      return FALSE;
  return !mean || clinfer_ocl_scale_output (b, node,
      1.0f / (float) node->n_inputs, error);
}

/* Pow with an exponent of another type than the base, in double. */
static gboolean
pow_typed (OclBuilder *b, const ClinferNode *node, GError **error)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *base = typed_options (t, node->outputs[0].type);
  g_autofree char *opts = g_strdup_printf ("%s -DB_T=%s -DP_T=double%s", base,
      clinfer_ocl_c_type (clinfer_ocl_in_type (node, 1)),
      strstr (base, "USE_FP64") ? "" : " -DUSE_FP64");

  return clinfer_ocl_launch_broadcast2 (b, node, "binary", opts, "pow_typed",
      -1, error);
}

/* ---- integer arithmetic, Mod, BitShift ---- */

gboolean
clinfer_ocl_int_binary_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  int op = op_code (node);

  if (op < 0 || (op >= OP_EQ && op != OP_SHL && op != OP_SHR && op != OP_POW
          && op != OP_MEAN && op != OP_PRELU)) {
    *reason = "no OpenCL kernel for this op and element type";
    return FALSE;
  }
  if (clinfer_ocl_in_type (node, 0) == CLINFER_TYPE_BOOL) {
    *reason = "arithmetic on bool";
    return FALSE;
  }
  if (op == OP_MEAN
      && !clinfer_element_type_is_float (clinfer_ocl_in_type (node, 0))) {
    *reason = "Mean of integers";
    return FALSE;
  }
  return typed_ok (dev, node, 2, reason);
}

gboolean
clinfer_ocl_int_binary_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  int op = op_code (node);

  if (op == OP_POW
      && clinfer_ocl_in_type (node, 1) != clinfer_ocl_in_type (node, 0))
    return pow_typed (b, node, error);
  if (is_variadic (node))
    return typed_fold (b, node, op, error);
  return typed_launch (b, node, op, error);
}

/* ---- comparisons (any numeric input, bool output) ---- */

gboolean
clinfer_ocl_compare_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return typed_ok (dev, node, 2, reason);
}

gboolean
clinfer_ocl_compare_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  return typed_launch (b, node, op_code (node), error);
}

/* ---- And, Or, Xor, Not on bool ---- */

gboolean
clinfer_ocl_logic_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return typed_ok (dev, node, 2, reason);
}

gboolean
clinfer_ocl_logic_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  return typed_launch (b, node, op_code (node), error);
}

gboolean
clinfer_ocl_not_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (clinfer_ocl_in_type (node, 0) != CLINFER_TYPE_BOOL) {
    *reason = "Not expects bool";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_not_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  OclLaunch *l = clinfer_ocl_launch_new (b, "binary",
      "-DA_T=uchar -DC_T=uchar -DY_T=uchar -DC_UNSIGNED", "logical_not", error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- Where (raw bits) ---- */

gboolean
clinfer_ocl_where_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 1);

  if (node->outputs[0].shape.rank > 8 || clinfer_ocl_c_type (t) == NULL
      || clinfer_ocl_in_type (node, 2) != t) {
    *reason = "rank above 8 or element type not supported";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_where_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  OclLaunch *l = clinfer_ocl_launch_new (b, "layout",
      clinfer_ocl_elem_options (node->outputs[0].type), "where_select", error);
  int dims[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, s[3][8] = { { 0 } };
  int64_t n = clinfer_shape_n_elements (out);

  if (l == NULL)
    return FALSE;
  for (int i = 0; i < out->rank; i++)
    dims[i] = (int) out->dims[i];
  for (guint k = 0; k < 3; k++) {
    clinfer_ocl_broadcast_strides (clinfer_ocl_in_shape (b, k), out, s[k]);
    clinfer_ocl_arg_input (l, k);
  }
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, MAX (out->rank, 1));
  clinfer_ocl_arg_int8 (l, dims, 8);
  for (guint k = 0; k < 3; k++)
    clinfer_ocl_arg_int8 (l, s[k], 8);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}

/* ---- CumSum (typed accumulation) ---- */

gboolean
clinfer_ocl_cumsum_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  /* An axis known only at run time is read on the device (ocl-select.c). */
  if (clinfer_ocl_const_input (node, 1) == NULL)
    return clinfer_ocl_cumsum_axis_supports (dev, node, reason);
  if (clinfer_ocl_c_type (t) == NULL || t == CLINFER_TYPE_F64
      || t == CLINFER_TYPE_BOOL) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_cumsum_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *opts = typed_options (t, t);
  int64_t axis, ex = 0, rev = 0, outer, n, inner;
  OclLaunch *l;

  if (clinfer_ocl_const_input (node, 1) == NULL)
    return clinfer_ocl_cumsum_axis_build (b, node, error);
  axis = clinfer_tensor_get_as_int64 (clinfer_ocl_const_input (node, 1), 0);
  if (!clinfer_node_attr_int (node, "exclusive", 0, &ex, error)
      || !clinfer_node_attr_int (node, "reverse", 0, &rev, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  clinfer_ocl_split_axis (in, (int) axis, &outer, &n, &inner);
  if (!(l = clinfer_ocl_launch_new (b, "binary", opts, "cumsum", error)))
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) outer);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) inner);
  clinfer_ocl_arg_int (l, ex != 0);
  clinfer_ocl_arg_int (l, rev != 0);
  clinfer_ocl_launch_set_global (l, 1, outer * inner, 1, 1);
  return TRUE;
}

/* ---- Clip on integer and f64 tensors (bounds as inputs, opset 11+) ---- */

gboolean
clinfer_ocl_clip_typed_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (clinfer_ocl_c_type (t) == NULL || t == CLINFER_TYPE_BOOL
      || node->opset < 11) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_in_type (node, i) != t) {
      *reason = "min or max of another element type than the input";
      return FALSE;
    }
  return clinfer_ocl_fp64_ok (dev, t, reason);
}

gboolean
clinfer_ocl_clip_typed_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  g_autofree char *opts = typed_options (t, t);
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape);
  gboolean has[3] = { TRUE, FALSE, FALSE };
  OclLaunch *l = clinfer_ocl_launch_new (b, "binary", opts, "clip_typed",
      error);

  if (l == NULL)
    return FALSE;
  for (guint i = 1; i < 3; i++)
    has[i] = i < node->n_inputs && node->inputs[i].node != NULL;
  /* An absent bound is never read: pass the data input in its place. */
  for (guint i = 0; i < 3; i++)
    clinfer_ocl_arg_input (l, has[i] ? i : 0);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, has[1]);
  clinfer_ocl_arg_int (l, has[2]);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}
