/* clinfer — OpenVINO IR op translators: index ops: TopK, DepthToSpace, SpaceToDepth, NonZero,
 * GatherND, GatherElements, the scatters, CumSum, Einsum and OneHot. Each OpenVINO layer
 * becomes one or a few nodes of the engine's ONNX-semantics op set; the
 * table at the end lists the (type, opset range) this file reads. */
#include "frontend/ir/ir-ops.h"
#include <string.h>

/* ---------------------------------------------------------------- */
/* Index and layout ops                                              */

/* Output @port of @n as IR output @output, cast when @type_attr (an IR
 * element type attribute, default @def) is not i64. */
static gboolean
output_index_type (IrReader *r, IrLayer *l, guint output, ClinferNode *n,
    guint port, const char *type_attr, const char *def, GError **error)
{
  const char *name = ir_attr_str (l, type_attr, def);
  ClinferElementType t = clinfer_ir_type_from_name (name);
  ClinferNode *cast;

  if (t != CLINFER_TYPE_I64 && t != CLINFER_TYPE_I32) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "%s='%s' is not supported (expected i64 or i32)", type_attr, name);
    return FALSE;
  }
  if (output >= l->outputs->len)
    return TRUE;
  if (t == CLINFER_TYPE_I64) {
    ir_output (r, l, output, n, port);
    return TRUE;
  }
  cast = ir_cast (r, l, "indices", t);
  cast->inputs[0].node = n;
  cast->inputs[0].port = port;
  ir_output (r, l, output, cast, 0);
  return TRUE;
}

static gboolean
tr_topk (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "max", "min", NULL };
  static const char *const sorts[] = { "value", "none", "index", NULL };
  ClinferNode *n = ir_add_node (r, l, "TopK", 11, 2, 2, NULL);
  int64_t axis;
  int mode, sort;

  if (!ir_attr_int (r, l, "axis", TRUE, 0, &axis, error)
      || !ir_attr_enum (r, l, "mode", modes, 0, &mode, error)
      || !ir_attr_enum (r, l, "sort", sorts, 0, &sort, error))
    return FALSE;
  if (sort == 2) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "sort='index' is not supported (value and none are)");
    return FALSE;
  }
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (axis));
  clinfer_node_set_attr (n, "largest", clinfer_attr_new_int (mode == 0));
  clinfer_node_set_attr (n, "sorted", clinfer_attr_new_int (sort == 0));
  ir_sink (l, 0, n, 0);
  ir_sink_int_list (r, l, 1, n, 1, "k");
  ir_output (r, l, 0, n, 0);
  return output_index_type (r, l, 1, n, 1, "index_element_type",
      l->opset >= 3 ? "i32" : "i64", error);
}

static gboolean
tr_depth_space (IrReader *r, IrLayer *l, GError **error)
{
  static const char *const modes[] = { "blocks_first", "depth_first", NULL };
  gboolean d2s = g_ascii_strcasecmp (l->def->type, "DepthToSpace") == 0;
  int64_t bs;
  int mode;
  ClinferNode *n;

  if (!ir_attr_int (r, l, "block_size", TRUE, 1, &bs, error)
      || !ir_attr_enum (r, l, "mode", modes, 0, &mode, error))
    return FALSE;
  if (!d2s && mode != 0) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "SpaceToDepth mode='depth_first' is not supported");
    return FALSE;
  }
  n = ir_simple (r, l, d2s ? "DepthToSpace" : "SpaceToDepth", 13, 1, 1);
  clinfer_node_set_attr (n, "blocksize", clinfer_attr_new_int (bs));
  if (d2s)
    clinfer_node_set_attr (n, "mode", clinfer_attr_new_string (mode ? "CRD"
        : "DCR"));
  return TRUE;
}

static gboolean
tr_nonzero (IrReader *r, IrLayer *l, GError **error)
{
  ClinferNode *n = ir_add_node (r, l, "NonZero", 13, 1, 1, NULL);

  ir_sink (l, 0, n, 0);
  return output_index_type (r, l, 0, n, 0, "output_type", "i64", error);
}

static gboolean
tr_int_attr_op (IrReader *r, IrLayer *l, const char *attr, const char *onnx,
    const char *onnx_attr, int64_t def, GError **error)
{
  int64_t v;

  if (!ir_attr_int (r, l, attr, FALSE, def, &v, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, onnx, 13, l->inputs->len, 1),
      onnx_attr, clinfer_attr_new_int (v));
  return TRUE;
}

static gboolean
tr_gather_nd (IrReader *r, IrLayer *l, GError **error)
{
  return tr_int_attr_op (r, l, "batch_dims", "GatherND", "batch_dims", 0, error);
}

static gboolean
tr_gather_elements (IrReader *r, IrLayer *l, GError **error)
{
  return tr_int_attr_op (r, l, "axis", "GatherElements", "axis", 0, error);
}

/* The ONNX reduction of ScatterElementsUpdate-12 / ScatterNDUpdate-15
 * (which both start from the data's values, as ONNX's do). */
static gboolean
scatter_reduction (IrReader *r, IrLayer *l, const char **onnx, GError **error)
{
  static const char *const names[] = { "none", "sum", "prod", "min", "max",
    NULL };
  static const char *const onnx_names[] = { "none", "add", "mul", "min",
    "max" };
  gboolean init;
  int red;

  if (!ir_attr_bool (r, l, "use_init_val", TRUE, &init, error))
    return FALSE;
  if (!init) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "use_init_val='false' is not supported");
    return FALSE;
  }
  if (!ir_attr_enum (r, l, "reduction", names, 0, &red, error))
    return FALSE;
  *onnx = onnx_names[red];
  return TRUE;
}

static gboolean
tr_scatter_elements (IrReader *r, IrLayer *l, GError **error)
{
  g_autofree int64_t *axis = NULL;
  const char *red;
  gsize n;
  ClinferNode *s;

  if (!ir_const_ints (r, l, 3, "axis", &axis, &n, error))
    return FALSE;
  if (n != 1) {
    ir_set_error (r, l, error, CLINFER_ERROR_UNSUPPORTED_OP,
        "input 3 (axis) must hold one value, not %" G_GSIZE_FORMAT, n);
    return FALSE;
  }
  if (!scatter_reduction (r, l, &red, error))
    return FALSE;
  s = ir_simple (r, l, "ScatterElements", 18, 3, 1);
  clinfer_node_set_attr (s, "axis", clinfer_attr_new_int (axis[0]));
  clinfer_node_set_attr (s, "reduction", clinfer_attr_new_string (red));
  return TRUE;
}

static gboolean
tr_cumsum (IrReader *r, IrLayer *l, GError **error)
{
  gboolean exclusive, reverse;
  ClinferNode *n = ir_add_node (r, l, "CumSum", 14, 2, 1, NULL);
  int64_t zero = 0;

  if (!ir_attr_bool (r, l, "exclusive", FALSE, &exclusive, error)
      || !ir_attr_bool (r, l, "reverse", FALSE, &reverse, error))
    return FALSE;
  clinfer_node_set_attr (n, "exclusive", clinfer_attr_new_int (exclusive));
  clinfer_node_set_attr (n, "reverse", clinfer_attr_new_int (reverse));
  ir_sink (l, 0, n, 0);
  if (l->inputs->len > 1)
    ir_sink (l, 1, n, 1);
  else
    ir_connect (n, 1, ir_add_const_i64 (r, l, "axis", &zero, 1, TRUE));
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_einsum (IrReader *r, IrLayer *l, GError **error)
{
  const char *eq = ir_attr_str (l, "equation", NULL);

  if (eq == NULL) {
    ir_set_error (r, l, error, CLINFER_ERROR_PARSE,
        "attribute 'equation' is missing");
    return FALSE;
  }
  clinfer_node_set_attr (ir_simple (r, l, "Einsum", 12, l->inputs->len, 1),
      "equation", clinfer_attr_new_string (eq));
  return TRUE;
}

/* OneHot (indices, depth, on, off) -> ONNX OneHot (indices, depth,
 * [off, on]). */
static gboolean
tr_one_hot (IrReader *r, IrLayer *l, GError **error)
{
  int64_t axis, one = 1;
  ClinferNode *n = ir_add_node (r, l, "OneHot", 11, 3, 1, NULL);
  ClinferNode *values = ir_add_node (r, l, "Concat", 13, 2, 1, "values");

  if (!ir_attr_int (r, l, "axis", TRUE, -1, &axis, error))
    return FALSE;
  clinfer_node_set_attr (n, "axis", clinfer_attr_new_int (axis));
  clinfer_node_set_attr (values, "axis", clinfer_attr_new_int (0));
  for (guint i = 0; i < 2; i++) {
    ClinferNode *v = ir_add_node (r, l, "Reshape", 14, 2, 1,
        i == 0 ? "off" : "on");
    ir_sink (l, i == 0 ? 3 : 2, v, 0);
    ir_connect (v, 1, ir_add_const_i64 (r, l, "one", &one, 1, FALSE));
    ir_connect (values, i, v);
  }
  ir_sink (l, 0, n, 0);
  ir_sink (l, 1, n, 1);
  ir_connect (n, 2, values);
  ir_output (r, l, 0, n, 0);
  return TRUE;
}

static gboolean
tr_scatter_nd (IrReader *r, IrLayer *l, GError **error)
{
  const char *red;

  if (!scatter_reduction (r, l, &red, error))
    return FALSE;
  clinfer_node_set_attr (ir_simple (r, l, "ScatterND", 18, 3, 1), "reduction",
      clinfer_attr_new_string (red));
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Table                                                             */

#define V G_MAXUINT

const IrOpDef clinfer_ir_ops_index[] = {
  { "TopK", 1, 0, 2, 2, 1, 2, tr_topk, NULL, 0 },
  { "DepthToSpace", 1, 0, 1, 1, 1, 1, tr_depth_space, NULL, 0 },
  { "SpaceToDepth", 1, 0, 1, 1, 1, 1, tr_depth_space, NULL, 0 },
  { "NonZero", 3, 0, 1, 1, 1, 1, tr_nonzero, NULL, 0 },
  { "GatherND", 5, 0, 2, 2, 1, 1, tr_gather_nd, NULL, 0 },
  { "GatherElements", 6, 0, 2, 2, 1, 1, tr_gather_elements, NULL, 0 },
  { "ScatterNDUpdate", 3, 0, 3, 3, 1, 1, tr_scatter_nd, NULL, 0 },
  { "ScatterElementsUpdate", 3, 0, 4, 4, 1, 1, tr_scatter_elements, NULL, 0 },
  { "CumSum", 3, 0, 1, 2, 1, 1, tr_cumsum, NULL, 0 },
  { "Einsum", 7, 0, 1, V, 1, 1, tr_einsum, NULL, 0 },
  { "OneHot", 1, 0, 4, 4, 1, 1, tr_one_hot, NULL, 0 },
  { NULL }
};
