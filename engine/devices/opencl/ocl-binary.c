/* clinfer — OpenCL typed binary ops (kernels/binary.cl) for every numeric
 * type: integer Add/Sub/Mul/Div/Max/Min/Sum, Mod, BitShift, comparisons
 * (bool out, any numeric input), And/Or/Xor, Not, and Where (raw bits,
 * kernels/layout.cl). All with numpy broadcasting, rank <= 8. */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

enum {
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN, OP_MOD, OP_FMOD, OP_EQ,
  OP_LT, OP_GT, OP_LE, OP_GE, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR,
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

/* Common checks: opset >= 7 broadcasting, rank, same input types, a type
 * the kernels (and the device, for f64) take. */
static gboolean
typed_ok (const ClinferNode *node, guint n_in, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (node->n_inputs != n_in || node->outputs[0].shape.rank > 8) {
    *reason = "more than two inputs or rank above 8";
    return FALSE;
  }
  for (guint i = 0; i < n_in; i++)
    if (node->inputs[i].node == NULL || clinfer_ocl_in_type (node, i) != t) {
      *reason = "absent input or inputs of mixed element types";
      return FALSE;
    }
  if (clinfer_ocl_c_type (t) == NULL || t == CLINFER_TYPE_F64) {
    *reason = "element type not supported by the OpenCL kernels";
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

  return g_strdup_printf ("-DA_T=%s -DC_T=%s -DY_T=%s%s%s%s%s",
      clinfer_ocl_c_type (t), ct, clinfer_ocl_c_type (yt),
      fl ? " -DC_FLOAT" : "", t == CLINFER_TYPE_F16 ? " -DA_HALF" : "",
      yt == CLINFER_TYPE_F16 ? " -DY_HALF" : "",
      is_unsigned (t) ? " -DC_UNSIGNED" : "");
}

static gboolean
typed_launch (OclBuilder *b, const ClinferNode *node, int op, GError **error)
{
  g_autofree char *opts = typed_options (clinfer_ocl_in_type (node, 0),
      node->outputs[0].type);

  return clinfer_ocl_launch_broadcast2 (b, node, "binary", opts,
      "binary_typed", op, error);
}

/* ---- integer arithmetic, Mod, BitShift ---- */

gboolean
clinfer_ocl_int_binary_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  int op = op_code (node);

  if (op < 0 || (op >= OP_EQ && op != OP_SHL && op != OP_SHR)) {
    *reason = "no OpenCL kernel for this op and element type";
    return FALSE;
  }
  if (clinfer_ocl_in_type (node, 0) == CLINFER_TYPE_BOOL) {
    *reason = "arithmetic on bool";
    return FALSE;
  }
  return typed_ok (node, 2, reason);
}

gboolean
clinfer_ocl_int_binary_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  return typed_launch (b, node, op_code (node), error);
}

/* ---- comparisons (any numeric input, bool output) ---- */

gboolean
clinfer_ocl_compare_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return typed_ok (node, 2, reason);
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
  return typed_ok (node, 2, reason);
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

  if (clinfer_ocl_const_input (node, 1) == NULL) {
    *reason = "axis is not a constant";
    return FALSE;
  }
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
  int64_t axis = clinfer_tensor_get_as_int64 (clinfer_ocl_const_input (node, 1), 0);
  int64_t ex = 0, rev = 0, outer, n, inner;
  OclLaunch *l;

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
