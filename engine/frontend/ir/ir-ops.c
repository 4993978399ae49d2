/* clinfer — OpenVINO IR op translators: the helpers they share
 * (declared in ir-ops.h), the graph's own layers (Parameter, Const,
 * Result) and the lookup over every family's table (ir-ops-<family>.c). */
#include "frontend/ir/ir-ops.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Shared helpers (declared in ir-ops.h)                             */

ClinferNode *
ir_simple (IrReader *r, IrLayer *l, const char *op_type, int opset,
    guint n_inputs, guint n_outputs)
{
  ClinferNode *n = ir_add_node (r, l, op_type, opset, n_inputs, n_outputs,
      NULL);

  for (guint i = 0; i < n_inputs && i < l->inputs->len; i++)
    ir_sink (l, i, n, i);
  for (guint i = 0; i < n_outputs && i < l->outputs->len; i++)
    ir_output (r, l, i, n, i);
  return n;
}

gboolean
ir_try_const (IrReader *r, IrLayer *l, guint input, ClinferTensor **t,
    GError **error)
{
  GError *err = NULL;

  *t = ir_input_const (r, l, input, &err);
  if (err) {
    g_propagate_error (error, err);
    return FALSE;
  }
  return TRUE;
}

gboolean
ir_const_ints (IrReader *r, IrLayer *l, guint input, const char *what,
    int64_t **v, gsize *n, GError **error)
{
  ClinferTensor *t;
  ClinferElementType type;

  *v = NULL;
  *n = 0;
  if (!ir_try_const (r, l, input, &t, error))
    return FALSE;
  type = t ? clinfer_tensor_get_element_type (t) : CLINFER_TYPE_UNDEFINED;
  if (t == NULL || clinfer_element_type_is_float (type)
      || type == CLINFER_TYPE_BOOL || clinfer_tensor_get_shape (t)->rank > 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input %u (%s) must be a Const integer scalar or list", input, what);
    return FALSE;
  }
  *n = (gsize) clinfer_tensor_get_n_elements (t);
  *v = g_new0 (int64_t, MAX (*n, 1));
  for (gsize i = 0; i < *n; i++)
    (*v)[i] = clinfer_tensor_get_as_int64 (t, (int64_t) i);
  return TRUE;
}

gboolean
ir_const_float (IrReader *r, IrLayer *l, guint input, const char *what,
    float *out, GError **error)
{
  ClinferTensor *t;

  if (!ir_try_const (r, l, input, &t, error))
    return FALSE;
  if (t == NULL || clinfer_tensor_get_n_elements (t) != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input %u (%s) must be a Const holding one value", input, what);
    return FALSE;
  }
  *out = (float) clinfer_tensor_get_as_double (t, 0);
  return TRUE;
}

ClinferNode *
ir_add_scalar (IrReader *r, IrLayer *l, const char *suffix,
    ClinferElementType type, double v)
{
  ClinferShape s = clinfer_shape_make (0, NULL);
  g_autoptr (ClinferTensor) t = NULL;
  gpointer p;

  if (type != CLINFER_TYPE_F16 && type != CLINFER_TYPE_F64
      && type != CLINFER_TYPE_BF16)
    type = CLINFER_TYPE_F32;
  t = clinfer_tensor_new (type, &s, NULL);
  p = clinfer_tensor_get_data (t);
  if (type == CLINFER_TYPE_F16)
    *(uint16_t *) p = clinfer_float_to_half ((float) v);
  else if (type == CLINFER_TYPE_BF16)
    *(uint16_t *) p = clinfer_float_to_bfloat16 ((float) v);
  else if (type == CLINFER_TYPE_F64)
    *(double *) p = v;
  else
    *(float *) p = (float) v;
  return ir_add_const (r, l, suffix, t);
}

ClinferNode *
ir_binary (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    ClinferNode *a, ClinferNode *b)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 13, 2, 1, suffix);

  if (a)
    ir_connect (n, 0, a);
  if (b)
    ir_connect (n, 1, b);
  return n;
}

ClinferNode *
ir_unary (IrReader *r, IrLayer *l, const char *op_type, const char *suffix,
    ClinferNode *a)
{
  ClinferNode *n = ir_add_node (r, l, op_type, 13, 1, 1, suffix);

  if (a)
    ir_connect (n, 0, a);
  return n;
}

void
ir_sink_int_list (IrReader *r, IrLayer *l, guint input, ClinferNode *node,
    guint index, const char *suffix)
{
  ClinferTensor *t = ir_input_const (r, l, input, NULL);
  ClinferElementType type = ir_input_type (l, input);
  ClinferNode *cast = NULL, *flat;

  if (t && !clinfer_element_type_is_float (clinfer_tensor_get_element_type (t))
      && clinfer_tensor_get_shape (t)->rank <= 1) {
    gsize n = (gsize) clinfer_tensor_get_n_elements (t);
    g_autofree int64_t *v = g_new0 (int64_t, MAX (n, 1));
    for (gsize i = 0; i < n; i++)
      v[i] = clinfer_tensor_get_as_int64 (t, (int64_t) i);
    ir_connect (node, index, ir_add_const_i64 (r, l, suffix, v, n, FALSE));
    return;
  }
  /* Computed: make it i64 and 1-D at run time. */
  if (type != CLINFER_TYPE_I64) {
    g_autofree char *s = g_strdup_printf ("%s/to_i64", suffix);
    cast = ir_add_node (r, l, "Cast", 13, 1, 1, s);
    clinfer_node_set_attr (cast, "to", clinfer_attr_new_int (CLINFER_TYPE_I64));
    ir_sink (l, input, cast, 0);
  }
  {
    g_autofree char *s = g_strdup_printf ("%s/flat", suffix);
    int64_t minus1 = -1;
    flat = ir_add_node (r, l, "Reshape", 14, 2, 1, s);
    if (cast)
      ir_connect (flat, 0, cast);
    else
      ir_sink (l, input, flat, 0);
    ir_connect (flat, 1, ir_add_const_i64 (r, l, s, &minus1, 1, FALSE));
  }
  ir_connect (node, index, flat);
}

ClinferNode *
ir_cast (IrReader *r, IrLayer *l, const char *suffix, ClinferElementType to)
{
  ClinferNode *n = ir_add_node (r, l, "Cast", 13, 1, 1, suffix);

  clinfer_node_set_attr (n, "to", clinfer_attr_new_int (to));
  return n;
}

gboolean
ir_check_broadcast (IrReader *r, IrLayer *l, GError **error)
{
  const char *v = ir_attr_str (l, "auto_broadcast", "numpy");

  if (g_ascii_strcasecmp (v, "numpy") == 0 || g_ascii_strcasecmp (v, "none") == 0
      || g_ascii_strcasecmp (v, "explicit") == 0)
    return TRUE;
  if (g_ascii_strcasecmp (v, "pdpd") == 0
      && strcmp (ir_attr_str (l, "axis", "-1"), "-1") == 0)
    return TRUE;              /* pdpd with axis -1 aligns like numpy */
  ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
      "auto_broadcast='%s' is not supported (expected numpy or none)", v);
  return FALSE;
}

/* ---------------------------------------------------------------- */
/* Table and lookup                                                  */

const IrOpDef clinfer_ir_ops_graph[] = {
  { "Parameter", 1, 0, 0, 0, 1, 1, NULL, NULL, 0 },
  { "Const", 1, 0, 0, 0, 1, 1, NULL, NULL, 0 },
  { "Result", 1, 0, 1, 1, 0, 0, NULL, NULL, 0 },
  { NULL }
};

/* Spellings the file format accepts besides the canonical ones. */
static const struct { const char *alias, *type; } aliases[] = {
  { "Constant", "Const" }, { "ReLU", "Relu" }, { "Softmax", "SoftMax" },
  { "PReLU", "PRelu" },
};

const IrOpDef *
clinfer_ir_op_lookup (const char *type, int opset, gboolean *type_known)
{
  const IrOpDef *const tables[] = { clinfer_ir_ops_graph, clinfer_ir_ops_eltwise,
    clinfer_ir_ops_conv, clinfer_ir_ops_shape, clinfer_ir_ops_math,
    clinfer_ir_ops_resize, clinfer_ir_ops_index };

  for (gsize i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (type, aliases[i].alias) == 0)
      type = aliases[i].type;
  *type_known = FALSE;
  for (gsize t = 0; t < G_N_ELEMENTS (tables); t++)
    for (const IrOpDef *d = tables[t]; d->type; d++) {
      if (g_ascii_strcasecmp (d->type, type) != 0)
        continue;
      *type_known = TRUE;
      if (opset >= d->since_opset && opset <= CLINFER_IR_OPSET_MAX
          && (d->last_opset == 0 || opset <= d->last_opset))
        return d;
    }
  return NULL;
}
