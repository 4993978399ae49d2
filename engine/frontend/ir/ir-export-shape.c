/* clinfer — OpenVINO IR op exporters, part 2: shape and layout ops,
 * reductions, index ops, Resize, and the table mapping every engine op
 * type to its exporter. */
#include "frontend/ir/ir-export.h"
#include <string.h>

/* Name-based helpers. */
static IrVal
ints_const (IrWriter *w, const ClinferNode *n, const char *suffix,
    const int64_t *v, gsize k, gboolean scalar)
{
  g_autofree char *name = ir_export_name (n, suffix);
  return irw_const_i64 (w, name, v, k, scalar);
}

/* Integer list from attribute @attr (older opsets) or input @i. */
static gboolean
attr_or_input (IrWriter *w, const ClinferNode *n, const char *attr, guint i,
    gboolean input_form, IrVal *out, gboolean *present)
{
  const int64_t *v;
  gsize k;

  *present = FALSE;
  if (input_form) {
    if (i < n->n_inputs && n->inputs[i].node) {
      *out = irw_in (w, n, i);
      *present = TRUE;
    }
    return TRUE;
  }
  if (!clinfer_node_attr_ints (n, attr, &v, &k, NULL))
    return FALSE;
  if (v) {
    *out = ints_const (w, n, attr, v, k, FALSE);
    *present = TRUE;
  }
  return TRUE;
}

static IrVal
op2 (IrWriter *w, const ClinferNode *n, const char *type, int opset,
    const char *suffix, IrVal a, IrVal b)
{
  IrVal ins[2] = { a, b };
  return irw_op (w, n, type, opset, suffix, ins, 2, 0);
}

/* ---------------------------------------------------------------- */
/* Shape ops                                                         */

static gboolean
export_concat (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis;
  int l;

  if (!clinfer_node_attr_int (n, "axis", 0, &axis, NULL))
    return FALSE;
  l = irw_layer (w, "Concat", 1, *n->name ? n->name : n->outputs[0].name, NULL);
  irw_attr (w, l, "axis", "%" G_GINT64_FORMAT, axis);
  for (guint i = 0; i < n->n_inputs; i++)
    if (n->inputs[i].node)
      irw_input (w, l, irw_in (w, n, i));
  irw_set (w, n, 0, irw_output (w, l, n->outputs[0].type, &n->outputs[0].shape));
  return TRUE;
}

static gboolean
export_reshape (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t allowzero = 0;
  IrVal shape, v;
  gboolean present;

  if (!clinfer_node_attr_int (n, "allowzero", 0, &allowzero, NULL)
      || !attr_or_input (w, n, "shape", 1, n->opset >= 5, &shape, &present)
      || !present)
    return FALSE;
  v = op2 (w, n, "Reshape", 1, NULL, irw_in (w, n, 0), shape);
  irw_attr (w, v.layer, "special_zero", "%s", allowzero ? "false" : "true");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Flatten (axis): Reshape to [prod (dims < axis), -1]. */
static gboolean
export_flatten (IrWriter *w, const ClinferNode *n, GError **error)
{
  ClinferPortDesc *d = clinfer_node_input_desc (n, 0);
  int64_t axis, shape[2] = { 1, -1 };
  gboolean copy0 = FALSE;
  IrVal v;

  if (d == NULL || d->shape.rank < 0
      || !clinfer_node_attr_int (n, "axis", 1, &axis, NULL))
    return FALSE;
  if (axis < 0)
    axis += d->shape.rank;
  for (int i = 0; i < axis && i < d->shape.rank; i++) {
    if (d->shape.dims[i] < 0) {
      if (axis != 1)
        return FALSE;
      copy0 = TRUE;
    }
    shape[0] *= d->shape.dims[i];
  }
  if (copy0)
    shape[0] = 0;
  v = op2 (w, n, "Reshape", 1, NULL, irw_in (w, n, 0),
      ints_const (w, n, "shape", shape, 2, FALSE));
  irw_attr (w, v.layer, "special_zero", "%s", copy0 ? "true" : "false");
  irw_set (w, n, 0, v);
  return TRUE;
}

static gboolean
export_transpose (IrWriter *w, const ClinferNode *n, GError **error)
{
  const int64_t *perm;
  gsize k;

  if (!clinfer_node_attr_ints (n, "perm", &perm, &k, NULL))
    return FALSE;
  /* No perm reverses the dims: an empty order does the same. */
  irw_set (w, n, 0, op2 (w, n, "Transpose", 1, NULL, irw_in (w, n, 0),
      ints_const (w, n, "order", perm, k, FALSE)));
  return TRUE;
}

static gboolean
export_squeeze_like (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal axes;
  gboolean present;

  if (!attr_or_input (w, n, "axes", 1, n->opset >= 13, &axes, &present))
    return FALSE;
  if (!present && strcmp (n->op_type, "Unsqueeze") == 0)
    return FALSE;
  if (present)
    irw_set (w, n, 0, op2 (w, n, n->op_type, 1, NULL, irw_in (w, n, 0), axes));
  else
    irw_set (w, n, 0, ir_export_unary (w, n, "Squeeze", 1, NULL,
        irw_in (w, n, 0)));
  return TRUE;
}

/* Shape (with start/end of opset 15 as a Slice) and Size. */
static gboolean
export_shape (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t start = 0, end = G_MAXINT64, one = 1, zero = 0;
  gboolean size = strcmp (n->op_type, "Size") == 0;
  gboolean sliced;
  IrVal v, x = irw_in (w, n, 0);
  int l;

  if (!clinfer_node_attr_int (n, "start", 0, &start, NULL)
      || !clinfer_node_attr_int (n, "end", G_MAXINT64, &end, NULL))
    return FALSE;
  sliced = start != 0 || end != G_MAXINT64;
  l = irw_layer (w, "ShapeOf", 3, *n->name ? n->name : n->outputs[0].name,
      sliced || size ? "shape" : NULL);
  irw_attr (w, l, "output_type", "i64");
  irw_input (w, l, x);
  v = irw_output (w, l, CLINFER_TYPE_I64, NULL);
  if (sliced) {
    IrVal ins[5] = { v, ints_const (w, n, "start", &start, 1, FALSE),
      ints_const (w, n, "stop", &end, 1, FALSE),
      ints_const (w, n, "step", &one, 1, FALSE),
      ints_const (w, n, "axis", &zero, 1, FALSE) };
    v = irw_op (w, n, "Slice", 8, NULL, ins, 5, 0);
  }
  if (size) {
    v = op2 (w, n, "ReduceProd", 1, NULL, v, ints_const (w, n, "axes", &zero,
        1, FALSE));
    irw_attr (w, v.layer, "keep_dims", "false");
  }
  irw_set (w, n, 0, v);
  return TRUE;
}

static gboolean
export_gather (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis;
  IrVal ins[3];

  if (!clinfer_node_attr_int (n, "axis", 0, &axis, NULL))
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_in (w, n, 1);
  ins[2] = ints_const (w, n, "axis", &axis, 1, TRUE);
  ins[0] = irw_op (w, n, "Gather", 8, NULL, ins, 3, 0);
  irw_attr (w, ins[0].layer, "batch_dims", "0");
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

/* The OpenVINO name of an ONNX scatter reduction; NULL for none. */
static const char *
scatter_reduction_name (const char *onnx)
{
  static const char *const map[][2] = { { "add", "sum" }, { "mul", "prod" },
    { "min", "min" }, { "max", "max" } };

  for (gsize i = 0; i < G_N_ELEMENTS (map); i++)
    if (strcmp (onnx, map[i][0]) == 0)
      return map[i][1];
  return NULL;
}

/* GatherElements (axis), GatherND (batch_dims), ScatterND,
 * ScatterElements (axis input); a scatter with a reduction as
 * ScatterNDUpdate-15 / ScatterElementsUpdate-12. */
static gboolean
export_index_op (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *red = "none", *ov_red = NULL;
  int64_t v = 0;
  IrVal ins[4];
  guint k = n->n_inputs;

  if (!clinfer_node_attr_string (n, "reduction", "none", &red, NULL))
    return FALSE;
  if (strcmp (red, "none") != 0
      && ((ov_red = scatter_reduction_name (red)) == NULL
          || g_str_has_prefix (n->op_type, "Gather")))
    return FALSE;
  for (guint i = 0; i < k; i++)
    ins[i] = irw_in (w, n, i);
  if (strcmp (n->op_type, "GatherElements") == 0) {
    clinfer_node_attr_int (n, "axis", 0, &v, NULL);
    ins[0] = irw_op (w, n, "GatherElements", 6, NULL, ins, 2, 0);
    irw_attr (w, ins[0].layer, "axis", "%" G_GINT64_FORMAT, v);
  } else if (strcmp (n->op_type, "GatherND") == 0) {
    clinfer_node_attr_int (n, "batch_dims", 0, &v, NULL);
    ins[0] = irw_op (w, n, "GatherND", 8, NULL, ins, 2, 0);
    irw_attr (w, ins[0].layer, "batch_dims", "%" G_GINT64_FORMAT, v);
  } else if (strcmp (n->op_type, "ScatterND") == 0) {
    ins[0] = irw_op (w, n, "ScatterNDUpdate", ov_red ? 15 : 4, NULL, ins, 3,
        0);
    if (ov_red)
      irw_attr (w, ins[0].layer, "reduction", "%s", ov_red);
  } else {
    clinfer_node_attr_int (n, "axis", 0, &v, NULL);
    ins[3] = ints_const (w, n, "axis", &v, 1, TRUE);
    ins[0] = irw_op (w, n, "ScatterElementsUpdate", ov_red ? 12 : 3, NULL,
        ins, 4, 0);
    if (ov_red) {
      irw_attr (w, ins[0].layer, "reduction", "%s", ov_red);
      irw_attr (w, ins[0].layer, "use_init_val", "true");
    }
  }
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

static gboolean
export_cast (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *type = clinfer_ir_type_name (n->outputs[0].type);
  IrVal v;

  if (type == NULL)
    return FALSE;
  v = ir_export_unary (w, n, "Convert", 1, NULL, irw_in (w, n, 0));
  irw_attr (w, v.layer, "destination_type", "%s", type);
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Slice (data, starts, ends[, axes[, steps]]) -> Slice-8 (data, start,
 * stop, step[, axes]); attributes before opset 10. */
static gboolean
export_slice (IrWriter *w, const ClinferNode *n, GError **error)
{
  gboolean inputs = n->opset >= 10, has_starts, has_ends, has_axes, has_steps;
  IrVal ins[5];
  ClinferPortDesc *sd;

  if (!attr_or_input (w, n, "starts", 1, inputs, &ins[1], &has_starts)
      || !attr_or_input (w, n, "ends", 2, inputs, &ins[2], &has_ends)
      || !attr_or_input (w, n, "axes", 3, inputs, &ins[4], &has_axes)
      || !has_starts || !has_ends)
    return FALSE;
  has_steps = inputs && n->n_inputs > 4 && n->inputs[4].node;
  if (has_steps) {
    ins[3] = irw_in (w, n, 4);
  } else {
    int64_t ones[CLINFER_MAX_RANK];
    gsize k;
    const int64_t *v;
    if (inputs) {
      sd = clinfer_node_input_desc (n, 1);
      if (sd == NULL || sd->shape.rank != 1 || sd->shape.dims[0] < 0
          || sd->shape.dims[0] > CLINFER_MAX_RANK)
        return FALSE;
      k = (gsize) sd->shape.dims[0];
    } else if (!clinfer_node_attr_ints (n, "starts", &v, &k, NULL)
        || k > CLINFER_MAX_RANK) {
      return FALSE;
    }
    for (gsize i = 0; i < k; i++)
      ones[i] = 1;
    ins[3] = ints_const (w, n, "steps", ones, k, FALSE);
  }
  ins[0] = irw_in (w, n, 0);
  irw_set (w, n, 0, irw_op (w, n, "Slice", 8, NULL, ins, has_axes ? 5 : 4, 0));
  return TRUE;
}

static gboolean
export_expand (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal v = op2 (w, n, "Broadcast", 3, NULL, irw_in (w, n, 0), irw_in (w, n, 1));

  irw_attr (w, v.layer, "mode", "bidirectional");
  irw_set (w, n, 0, v);
  return TRUE;
}

static gboolean
export_constant_of_shape (IrWriter *w, const ClinferNode *n, GError **error)
{
  const ClinferAttr *a = clinfer_node_get_attr (n, "value");
  g_autoptr (ClinferTensor) zero = NULL;
  g_autofree char *name = ir_export_name (n, "value");
  const ClinferTensor *t;
  ClinferShape scalar = clinfer_shape_make (0, NULL);
  IrVal v;

  if (a && a->type == CLINFER_ATTR_TENSOR) {
    t = a->t;
  } else {
    t = zero = clinfer_tensor_new (CLINFER_TYPE_F32, &scalar, NULL);
  }
  if (t == NULL || clinfer_tensor_get_n_elements (t) != 1
      || clinfer_ir_type_name (clinfer_tensor_get_element_type (t)) == NULL)
    return FALSE;
  {
    /* The value as a scalar. */
    g_autoptr (ClinferTensor) s = clinfer_tensor_new_wrapped (
        clinfer_tensor_get_element_type (t), &scalar, NULL,
        (gpointer) clinfer_tensor_get_const_data (t), NULL, NULL, NULL);
    v = op2 (w, n, "Broadcast", 3, NULL, irw_const (w, s, name, FALSE),
        irw_in (w, n, 0));
  }
  irw_attr (w, v.layer, "mode", "numpy");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* Split: equal parts (Split) or given lengths (VariadicSplit). */
static gboolean
export_split (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis;
  const int64_t *attr_split;
  gsize k;
  int l;
  IrVal split = IR_VAL_NONE;

  if (!clinfer_node_attr_int (n, "axis", 0, &axis, NULL)
      || !clinfer_node_attr_ints (n, "split", &attr_split, &k, NULL))
    return FALSE;
  if (clinfer_node_get_attr (n, "num_outputs")) {
    /* Opset 18: uneven last part; lengths from the static dim. */
    ClinferPortDesc *d = clinfer_node_input_desc (n, 0);
    int64_t lens[64], a = axis < 0 ? axis + d->shape.rank : axis;
    if (n->n_outputs > 64 || a < 0 || a >= d->shape.rank || d->shape.dims[a] < 0)
      return FALSE;
    for (guint i = 0; i < n->n_outputs; i++)
      lens[i] = n->outputs[i].shape.rank > a ? n->outputs[i].shape.dims[a] : -1;
    split = ints_const (w, n, "split", lens, n->n_outputs, FALSE);
  } else if (attr_split) {
    split = ints_const (w, n, "split", attr_split, k, FALSE);
  } else if (n->n_inputs > 1 && n->inputs[1].node) {
    split = irw_in (w, n, 1);
  }
  {
    IrVal x = irw_in (w, n, 0), ax = ints_const (w, n, "axis", &axis, 1, TRUE);
    l = irw_layer (w, split.layer >= 0 ? "VariadicSplit" : "Split", 1,
        *n->name ? n->name : n->outputs[0].name, NULL);
    irw_input (w, l, x);
    irw_input (w, l, ax);
  }
  if (split.layer >= 0)
    irw_input (w, l, split);
  else
    irw_attr (w, l, "num_splits", "%u", n->n_outputs);
  for (guint i = 0; i < n->n_outputs; i++)
    irw_set (w, n, i, irw_output (w, l, n->outputs[i].type,
        &n->outputs[i].shape));
  return TRUE;
}

/* Pad: pads [begin..., end...] split in two; attributes before 11. */
static gboolean
export_pad (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *mode;
  g_autofree int64_t *pads = NULL;
  gsize k = 0;
  float value = 0.f;
  IrVal ins[4];
  guint n_ins = 3;

  if (!clinfer_node_attr_string (n, "mode", "constant", &mode, NULL)
      || (strcmp (mode, "constant") && strcmp (mode, "edge")
          && strcmp (mode, "reflect"))
      || (n->n_inputs > 3 && n->inputs[3].node))
    return FALSE;
  if (n->opset < 11) {
    const int64_t *v;
    if (!clinfer_node_attr_ints (n, n->opset < 2 ? "paddings" : "pads", &v, &k,
            NULL) || !clinfer_node_attr_float (n, "value", 0.f, &value, NULL))
      return FALSE;
    pads = g_memdup2 (v, k * sizeof (int64_t));
  } else if (!ir_export_const_ints (n, 1, &pads, &k)) {
    return FALSE;
  }
  if (k % 2)
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = ints_const (w, n, "pads_begin", pads, k / 2, FALSE);
  ins[2] = ints_const (w, n, "pads_end", pads + k / 2, k / 2, FALSE);
  if (n->opset < 11 && value != 0.f) {
    g_autofree char *name = ir_export_name (n, "value");
    ins[3] = irw_const_float (w, name, n->outputs[0].type, value, FALSE);
    n_ins = 4;
  } else if (n->opset >= 11 && n->n_inputs > 2 && n->inputs[2].node) {
    ins[3] = irw_in (w, n, 2);
    n_ins = 4;
  }
  ins[0] = irw_op (w, n, "Pad", 12, NULL, ins, n_ins, 0);
  irw_attr (w, ins[0].layer, "pad_mode", "%s", mode);
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

static gboolean
export_tile (IrWriter *w, const ClinferNode *n, GError **error)
{
  if (n->opset < 6)
    return FALSE;
  irw_set (w, n, 0, op2 (w, n, "Tile", 1, NULL, irw_in (w, n, 0),
      irw_in (w, n, 1)));
  return TRUE;
}

static gboolean
export_einsum (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *eq;
  int l;

  if (!clinfer_node_attr_string (n, "equation", NULL, &eq, NULL) || eq == NULL)
    return FALSE;
  l = irw_layer (w, "Einsum", 7, *n->name ? n->name : n->outputs[0].name, NULL);
  irw_attr (w, l, "equation", "%s", eq);
  for (guint i = 0; i < n->n_inputs; i++)
    irw_input (w, l, irw_in (w, n, i));
  irw_set (w, n, 0, irw_output (w, l, n->outputs[0].type, &n->outputs[0].shape));
  return TRUE;
}

static gboolean
export_depth_space (IrWriter *w, const ClinferNode *n, GError **error)
{
  gboolean d2s = strcmp (n->op_type, "DepthToSpace") == 0;
  const char *mode = "DCR";
  int64_t bs;
  IrVal v;

  if (!clinfer_node_attr_int (n, "blocksize", 0, &bs, NULL)
      || (d2s && !clinfer_node_attr_string (n, "mode", "DCR", &mode, NULL)))
    return FALSE;
  v = ir_export_unary (w, n, n->op_type, 1, NULL, irw_in (w, n, 0));
  irw_attr (w, v.layer, "block_size", "%" G_GINT64_FORMAT, bs);
  irw_attr (w, v.layer, "mode", "%s", strcmp (mode, "CRD") == 0
      ? "depth_first" : "blocks_first");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Reductions, ArgMax/ArgMin, TopK                                   */

static const struct { const char *onnx, *ov; int opset; } reduce_map[] = {
  { "ReduceMean", "ReduceMean", 1 }, { "ReduceSum", "ReduceSum", 1 },
  { "ReduceMax", "ReduceMax", 1 }, { "ReduceMin", "ReduceMin", 1 },
  { "ReduceProd", "ReduceProd", 1 }, { "ReduceL1", "ReduceL1", 4 },
  { "ReduceL2", "ReduceL2", 4 }, { "ReduceSumSquare", "ReduceSum", 1 },
  { "ReduceLogSum", "ReduceSum", 1 }, { "ReduceLogSumExp", "ReduceSum", 1 },
};

/* Axes of a reduction: attribute (old opsets) or input; every axis when
 * none are given (unless noop_with_empty_axes). */
static gboolean
reduce_axes (IrWriter *w, const ClinferNode *n, IrVal *axes, gboolean *noop)
{
  gboolean input_form = n->opset >= 18
      || (strcmp (n->op_type, "ReduceSum") == 0 && n->opset >= 13);
  gboolean present;
  int64_t noop_attr = 0;
  int rank = ir_export_rank (n, 0);

  if (!clinfer_node_attr_int (n, "noop_with_empty_axes", 0, &noop_attr, NULL)
      || !attr_or_input (w, n, "axes", 1, input_form, axes, &present))
    return FALSE;
  /* An axes input known to be empty is no axes. */
  if (present && input_form) {
    ClinferPortDesc *d = clinfer_node_input_desc (n, 1);
    if (d && clinfer_shape_n_elements (&d->shape) == 0)
      present = FALSE;
  }
  *noop = !present && noop_attr;
  if (!present && !noop_attr) {
    int64_t all[CLINFER_MAX_RANK];
    if (rank < 0)
      return FALSE;
    for (int i = 0; i < rank; i++)
      all[i] = i;
    *axes = ints_const (w, n, "axes", all, (gsize) rank, FALSE);
  }
  return TRUE;
}

static gboolean
export_reduce (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t keep = 1;
  gboolean noop;
  IrVal axes, x = IR_VAL_NONE, v;
  gsize k = 0;

  while (k < G_N_ELEMENTS (reduce_map) && strcmp (reduce_map[k].onnx, n->op_type))
    k++;
  if (k == G_N_ELEMENTS (reduce_map) || ir_export_rank (n, 0) < 0
      || !clinfer_node_attr_int (n, "keepdims", 1, &keep, NULL))
    return FALSE;
  x = irw_in (w, n, 0);
  if (!reduce_axes (w, n, &axes, &noop))
    return FALSE;
  if (noop) {
    irw_set (w, n, 0, x);
    return TRUE;
  }
  if (strcmp (n->op_type, "ReduceSumSquare") == 0)
    x = ir_export_binary (w, n, "Multiply", "square", x, x);
  else if (strcmp (n->op_type, "ReduceLogSumExp") == 0)
    x = ir_export_unary (w, n, "Exp", 1, "exp", x);
  v = op2 (w, n, reduce_map[k].ov, reduce_map[k].opset,
      strstr (n->op_type, "Log") ? "sum" : NULL, x, axes);
  irw_attr (w, v.layer, "keep_dims", "%s", keep ? "true" : "false");
  if (strstr (n->op_type, "Log"))
    v = ir_export_unary (w, n, "Log", 1, NULL, v);
  irw_set (w, n, 0, v);
  return TRUE;
}

/* TopK-11 layer with k, returning its first output; *indices = second. */
static IrVal
topk_layer (IrWriter *w, const ClinferNode *n, const char *suffix, IrVal k,
    int64_t axis, gboolean largest, gboolean sorted, IrVal *indices)
{
  int l = irw_layer (w, "TopK", 11, *n->name ? n->name : n->outputs[0].name,
      suffix);
  IrVal values;

  irw_attr (w, l, "axis", "%" G_GINT64_FORMAT, axis);
  irw_attr (w, l, "mode", "%s", largest ? "max" : "min");
  irw_attr (w, l, "sort", "%s", sorted ? "value" : "none");
  irw_attr (w, l, "index_element_type", "i64");
  irw_input (w, l, irw_in (w, n, 0));
  irw_input (w, l, k);
  values = irw_output (w, l, ir_export_type (n, 0), NULL);
  *indices = irw_output (w, l, CLINFER_TYPE_I64, NULL);
  return values;
}

static gboolean
export_arg_minmax (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis, keep, last, one = 1;
  IrVal idx;

  if (!clinfer_node_attr_int (n, "axis", 0, &axis, NULL)
      || !clinfer_node_attr_int (n, "keepdims", 1, &keep, NULL)
      || !clinfer_node_attr_int (n, "select_last_index", 0, &last, NULL) || last)
    return FALSE;
  topk_layer (w, n, keep ? NULL : "topk", ints_const (w, n, "k", &one, 1, TRUE),
      axis, strcmp (n->op_type, "ArgMax") == 0, FALSE, &idx);
  if (!keep)
    idx = op2 (w, n, "Squeeze", 1, NULL, idx, ints_const (w, n, "axis", &axis,
        1, FALSE));
  irw_set (w, n, 0, idx);
  return TRUE;
}

static gboolean
export_topk (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t axis, largest, sorted, k_attr;
  IrVal k, idx, values;

  if (!clinfer_node_attr_int (n, "axis", -1, &axis, NULL)
      || !clinfer_node_attr_int (n, "largest", 1, &largest, NULL)
      || !clinfer_node_attr_int (n, "sorted", 1, &sorted, NULL)
      || !clinfer_node_attr_int (n, "k", -1, &k_attr, NULL))
    return FALSE;
  if (n->opset < 10) {
    k = ints_const (w, n, "k", &k_attr, 1, TRUE);
  } else {
    const ClinferTensor *t = irw_in_value (n, 1);
    if (t && clinfer_tensor_get_n_elements (t) == 1) {
      int64_t kv = clinfer_tensor_get_as_int64 (t, 0);
      k = ints_const (w, n, "k", &kv, 1, TRUE);
    } else {
      k = ir_export_unary (w, n, "Squeeze", 1, "k", irw_in (w, n, 1));
    }
  }
  values = topk_layer (w, n, NULL, k, axis, largest != 0, sorted != 0, &idx);
  irw_set (w, n, 0, values);
  if (n->n_outputs > 1)
    irw_set (w, n, 1, idx);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Resize / Upsample -> Interpolate-11                               */

static gboolean
export_resize (IrWriter *w, const ClinferNode *n, GError **error)
{
  static const char *const cts[] = { "half_pixel", "pytorch_half_pixel",
    "asymmetric", "tf_half_pixel_for_nn", "align_corners" };
  gboolean legacy = strcmp (n->op_type, "Upsample") == 0 || n->opset < 11;
  const char *mode, *ct = "asymmetric", *nearest = "floor";
  float cubic = -0.75f;
  int64_t excl = 0, zeros[CLINFER_MAX_RANK] = { 0 };
  gboolean sizes = !legacy && n->n_inputs > 3 && n->inputs[3].node, known_ct;
  int rank = ir_export_rank (n, 0);
  IrVal ins[2];

  if (rank < 0 || !clinfer_node_attr_string (n, "mode", "nearest", &mode, NULL)
      || (!legacy && (!clinfer_node_attr_string (n,
              "coordinate_transformation_mode", "half_pixel", &ct, NULL)
          || !clinfer_node_attr_string (n, "nearest_mode", "round_prefer_floor",
              &nearest, NULL)
          || !clinfer_node_attr_float (n, "cubic_coeff_a", -0.75f, &cubic, NULL)
          || !clinfer_node_attr_int (n, "exclude_outside", 0, &excl, NULL)))
      || excl || clinfer_node_get_attr (n, "keep_aspect_ratio_policy")
      || clinfer_node_get_attr (n, "axes") || clinfer_node_get_attr (n, "scales"))
    return FALSE;
  known_ct = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (cts); i++)
    known_ct = known_ct || strcmp (ct, cts[i]) == 0;
  if (!known_ct)
    return FALSE;
  ins[0] = irw_in (w, n, 0);
  ins[1] = irw_in (w, n, legacy ? 1 : (sizes ? 3 : 2));
  ins[0] = irw_op (w, n, "Interpolate", 11, NULL, ins, 2, 0);
  irw_attr (w, ins[0].layer, "mode", "%s", g_ascii_strcasecmp (mode, "nearest")
      == 0 ? "nearest" : g_ascii_strcasecmp (mode, "cubic") == 0 ? "cubic"
      : "linear_onnx");
  irw_attr (w, ins[0].layer, "shape_calculation_mode", "%s",
      sizes ? "sizes" : "scales");
  irw_attr (w, ins[0].layer, "coordinate_transformation_mode", "%s", ct);
  irw_attr (w, ins[0].layer, "nearest_mode", "%s", nearest);
  irw_attr (w, ins[0].layer, "antialias", "false");
  irw_attr_ints (w, ins[0].layer, "pads_begin", zeros, (gsize) rank);
  irw_attr_ints (w, ins[0].layer, "pads_end", zeros, (gsize) rank);
  irw_attr (w, ins[0].layer, "cube_coeff", "%.9g", cubic);
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Misc                                                              */

static gboolean
export_range (IrWriter *w, const ClinferNode *n, GError **error)
{
  const char *type = clinfer_ir_type_name (n->outputs[0].type);
  IrVal ins[3] = { irw_in (w, n, 0), irw_in (w, n, 1), irw_in (w, n, 2) };

  if (type == NULL)
    return FALSE;
  ins[0] = irw_op (w, n, "Range", 4, NULL, ins, 3, 0);
  irw_attr (w, ins[0].layer, "output_type", "%s", type);
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

static gboolean
export_nonzero (IrWriter *w, const ClinferNode *n, GError **error)
{
  IrVal v = ir_export_unary (w, n, "NonZero", 3, NULL, irw_in (w, n, 0));

  irw_attr (w, v.layer, "output_type", "i64");
  irw_set (w, n, 0, v);
  return TRUE;
}

static gboolean
export_cumsum (IrWriter *w, const ClinferNode *n, GError **error)
{
  int64_t excl, rev;
  IrVal v;

  if (!clinfer_node_attr_int (n, "exclusive", 0, &excl, NULL)
      || !clinfer_node_attr_int (n, "reverse", 0, &rev, NULL))
    return FALSE;
  v = op2 (w, n, "CumSum", 3, NULL, irw_in (w, n, 0), irw_in (w, n, 1));
  irw_attr (w, v.layer, "exclusive", "%s", excl ? "true" : "false");
  irw_attr (w, v.layer, "reverse", "%s", rev ? "true" : "false");
  irw_set (w, n, 0, v);
  return TRUE;
}

/* OneHot (indices, depth, [off, on]) with constant depth and values. */
static gboolean
export_one_hot (IrWriter *w, const ClinferNode *n, GError **error)
{
  const ClinferTensor *depth = irw_in_value (n, 1), *values = irw_in_value (n, 2);
  ClinferElementType vt = values ? clinfer_tensor_get_element_type (values)
      : CLINFER_TYPE_UNDEFINED;
  int64_t axis, d;
  IrVal ins[4];

  if (depth == NULL || values == NULL || clinfer_tensor_get_n_elements (values) != 2
      || !clinfer_element_type_is_float (vt)
      || !clinfer_node_attr_int (n, "axis", -1, &axis, NULL))
    return FALSE;
  d = (int64_t) clinfer_tensor_get_as_double (depth, 0);
  ins[0] = irw_in (w, n, 0);
  ins[1] = ints_const (w, n, "depth", &d, 1, TRUE);
  {
    g_autofree char *on = ir_export_name (n, "on"), *off = ir_export_name (n, "off");
    ins[2] = irw_const_float (w, on, vt, clinfer_tensor_get_as_double (values, 1),
        FALSE);
    ins[3] = irw_const_float (w, off, vt, clinfer_tensor_get_as_double (values, 0),
        FALSE);
  }
  ins[0] = irw_op (w, n, "OneHot", 1, NULL, ins, 4, 0);
  irw_attr (w, ins[0].layer, "axis", "%" G_GINT64_FORMAT, axis);
  irw_set (w, n, 0, ins[0]);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Table                                                             */

static const struct { const char *op; IrExportFunc fn; } exporters[] = {
  { "Relu", ir_export_unary_op }, { "Sigmoid", ir_export_unary_op },
  { "Tanh", ir_export_unary_op }, { "Exp", ir_export_unary_op },
  { "Sqrt", ir_export_unary_op }, { "Abs", ir_export_unary_op },
  { "Ceil", ir_export_unary_op }, { "Floor", ir_export_unary_op },
  { "Log", ir_export_unary_op }, { "Neg", ir_export_unary_op },
  { "Sin", ir_export_unary_op }, { "Cos", ir_export_unary_op },
  { "Tan", ir_export_unary_op }, { "Asin", ir_export_unary_op },
  { "Acos", ir_export_unary_op }, { "Atan", ir_export_unary_op },
  { "Sinh", ir_export_unary_op }, { "Cosh", ir_export_unary_op },
  { "Asinh", ir_export_unary_op }, { "Acosh", ir_export_unary_op },
  { "Atanh", ir_export_unary_op }, { "Erf", ir_export_unary_op },
  { "Sign", ir_export_unary_op }, { "HardSwish", ir_export_unary_op },
  { "Mish", ir_export_unary_op }, { "Softplus", ir_export_unary_op },
  { "Softsign", ir_export_unary_op }, { "Not", ir_export_unary_op },
  { "IsNaN", ir_export_unary_op },
  { "Add", ir_export_binary_op }, { "Sub", ir_export_binary_op },
  { "Mul", ir_export_binary_op }, { "Div", ir_export_binary_op },
  { "Pow", ir_export_binary_op }, { "Max", ir_export_binary_op },
  { "Min", ir_export_binary_op }, { "Sum", ir_export_binary_op },
  { "Mean", ir_export_binary_op }, { "Equal", ir_export_binary_op },
  { "Less", ir_export_binary_op }, { "Greater", ir_export_binary_op },
  { "LessOrEqual", ir_export_binary_op },
  { "GreaterOrEqual", ir_export_binary_op }, { "And", ir_export_binary_op },
  { "Or", ir_export_binary_op }, { "Xor", ir_export_binary_op },
  { "Mod", ir_export_mod }, { "Where", ir_export_where },
  { "PRelu", ir_export_prelu }, { "LeakyRelu", ir_export_leaky_relu },
  { "Elu", ir_export_elu }, { "Selu", ir_export_selu },
  { "HardSigmoid", ir_export_hard_sigmoid }, { "Clip", ir_export_clip },
  { "Round", ir_export_round }, { "Reciprocal", ir_export_reciprocal },
  { "Softmax", ir_export_softmax }, { "LogSoftmax", ir_export_softmax },
  { "Conv", ir_export_conv }, { "ConvTranspose", ir_export_conv_transpose },
  { "MaxPool", ir_export_max_pool }, { "AveragePool", ir_export_avg_pool },
  { "GlobalAveragePool", ir_export_global_pool },
  { "GlobalMaxPool", ir_export_global_pool },
  { "BatchNormalization", ir_export_batch_norm },
  { "InstanceNormalization", ir_export_instance_norm },
  { "LayerNormalization", ir_export_layer_norm },
  { "MeanVarianceNormalization", ir_export_mvn },
  { "LpNormalization", ir_export_lp_norm }, { "LRN", ir_export_lrn },
  { "MatMul", ir_export_matmul }, { "Gemm", ir_export_gemm },
  { "Identity", ir_export_identity }, { "Dropout", ir_export_identity },
  { "Concat", export_concat }, { "Reshape", export_reshape },
  { "Flatten", export_flatten }, { "Transpose", export_transpose },
  { "Squeeze", export_squeeze_like }, { "Unsqueeze", export_squeeze_like },
  { "Shape", export_shape }, { "Size", export_shape },
  { "Gather", export_gather }, { "GatherElements", export_index_op },
  { "GatherND", export_index_op }, { "ScatterND", export_index_op },
  { "ScatterElements", export_index_op }, { "Cast", export_cast },
  { "Slice", export_slice }, { "Expand", export_expand },
  { "ConstantOfShape", export_constant_of_shape }, { "Split", export_split },
  { "Pad", export_pad }, { "Tile", export_tile }, { "Einsum", export_einsum },
  { "DepthToSpace", export_depth_space }, { "SpaceToDepth", export_depth_space },
  { "ReduceMean", export_reduce }, { "ReduceSum", export_reduce },
  { "ReduceMax", export_reduce }, { "ReduceMin", export_reduce },
  { "ReduceProd", export_reduce }, { "ReduceL1", export_reduce },
  { "ReduceL2", export_reduce }, { "ReduceSumSquare", export_reduce },
  { "ReduceLogSum", export_reduce }, { "ReduceLogSumExp", export_reduce },
  { "ArgMax", export_arg_minmax }, { "ArgMin", export_arg_minmax },
  { "TopK", export_topk }, { "Resize", export_resize },
  { "Upsample", export_resize }, { "Range", export_range },
  { "NonZero", export_nonzero }, { "CumSum", export_cumsum },
  { "OneHot", export_one_hot },
};

IrExportFunc
clinfer_ir_exporter_lookup (const char *op_type)
{
  for (gsize i = 0; i < G_N_ELEMENTS (exporters); i++)
    if (strcmp (exporters[i].op, op_type) == 0)
      return exporters[i].fn;
  return NULL;
}
