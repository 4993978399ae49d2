/* clinfer — small helpers shared by op implementations. */
#include "ops/op.h"
#include "ops/broadcast.h"
#include <math.h>

gboolean
clinfer_op_normalize_axis (const ClinferNode *node, int64_t axis, int rank,
    int *out, GError **error)
{
  if (axis < -rank || axis >= MAX (rank, 1) || (rank == 0 && axis != 0 && axis != -1)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: axis %" G_GINT64_FORMAT " is out of range for rank %d (expected "
        "%d..%d)", clinfer_node_label (node), axis, rank, -rank, rank - 1);
    return FALSE;
  }
  *out = (int) (axis < 0 ? axis + rank : axis);
  return TRUE;
}

gboolean
clinfer_op_axis_attr (const ClinferNode *node, int64_t def, int rank,
    int *axis, GError **error)
{
  int64_t a;

  return clinfer_node_attr_int (node, "axis", def, &a, error)
      && clinfer_op_normalize_axis (node, a, rank, axis, error);
}

gboolean
clinfer_op_require_input (const ClinferNode *node, const ClinferValueInfo *in,
    guint i, GError **error)
{
  if (i >= node->n_inputs || !in[i].present) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input %u is required", clinfer_node_label (node), i);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_op_read_int_list (const ClinferNode *node, const ClinferTensor *t,
    const char *what, int64_t **out, gsize *n, GError **error)
{
  ClinferElementType type = clinfer_tensor_get_element_type (t);
  const ClinferShape *s = clinfer_tensor_get_shape (t);
  int64_t count = clinfer_tensor_get_n_elements (t);

  if ((type != CLINFER_TYPE_I64 && type != CLINFER_TYPE_I32) || s->rank > 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %s must be a 1-D int64 or int32 tensor, got %s of rank %d",
        clinfer_node_label (node), what, clinfer_element_type_name (type),
        s->rank);
    return FALSE;
  }
  *n = (gsize) count;
  *out = g_new (int64_t, MAX (count, 1));
  for (int64_t i = 0; i < count; i++)
    (*out)[i] = clinfer_tensor_get_as_int64 (t, i);
  return TRUE;
}

gboolean
clinfer_op_check_list_len (const ClinferNode *node, const char *what,
    gsize n, int rank, GError **error)
{
  if (n == (gsize) rank)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: %s has %" G_GSIZE_FORMAT " entries for an input of rank %d",
      clinfer_node_label (node), what, n, rank);
  return FALSE;
}

void
clinfer_shape_elem_strides (const ClinferShape *shape, int64_t *strides)
{
  int64_t s = 1;

  for (int i = shape->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= MAX (shape->dims[i], 1);
  }
}

void
clinfer_shape_split_axis (const ClinferShape *s, int axis, int64_t *outer,
    int64_t *dim, int64_t *inner)
{
  *outer = 1;
  *inner = 1;
  for (int i = 0; i < axis; i++)
    *outer *= s->dims[i];
  for (int i = axis + 1; i < s->rank; i++)
    *inner *= s->dims[i];
  *dim = s->rank > 0 ? s->dims[axis] : 1;
}

/* ---------------------------------------------------------------- */
/* Type checks                                                       */

gboolean
clinfer_op_unsupported_type (const ClinferNode *node, ClinferElementType t,
    GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
      "%s: element type %s is not supported", clinfer_node_label (node),
      clinfer_element_type_name (t));
  return FALSE;
}

gboolean
clinfer_op_check_movable (const ClinferNode *node, ClinferElementType t,
    GError **error)
{
  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0)
    return clinfer_op_unsupported_type (node, t, error);
  return TRUE;
}

gboolean
clinfer_op_check_int_input (const ClinferNode *node, const ClinferValueInfo *in,
    guint i, const char *what, GError **error)
{
  if (in[i].type == CLINFER_TYPE_I64 || in[i].type == CLINFER_TYPE_I32)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
      "%s: %s (input %u) is %s, expected i64 or i32", clinfer_node_label (node),
      what, i, clinfer_element_type_name (in[i].type));
  return FALSE;
}

gboolean
clinfer_op_check_same_types (const ClinferNode *node,
    const ClinferValueInfo *in, guint first, GError **error)
{
  for (guint i = first; i < node->n_inputs; i++) {
    if (!in[i].present || in[i].type == in[0].type)
      continue;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input %u is %s but input 0 is %s", clinfer_node_label (node), i,
        clinfer_element_type_name (in[i].type),
        clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* f16 / bf16 through f32                                            */

void
clinfer_op_half_to_float (ClinferElementType t, const uint16_t *src,
    float *dst, int64_t n)
{
  if (t == CLINFER_TYPE_BF16)
    for (int64_t i = 0; i < n; i++)
      dst[i] = clinfer_bfloat16_to_float (src[i]);
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = clinfer_half_to_float (src[i]);
}

void
clinfer_op_float_to_half (ClinferElementType t, const float *src,
    uint16_t *dst, int64_t n)
{
  if (t == CLINFER_TYPE_BF16)
    for (int64_t i = 0; i < n; i++)
      dst[i] = clinfer_float_to_bfloat16 (src[i]);
  else
    for (int64_t i = 0; i < n; i++)
      dst[i] = clinfer_float_to_half (src[i]);
}

ClinferTensor *
clinfer_op_half_to_f32 (const ClinferTensor *t, GError **error)
{
  ClinferTensor *f;

  if (t == NULL)
    return NULL;
  f = clinfer_tensor_new (CLINFER_TYPE_F32, clinfer_tensor_get_shape (t),
      error);
  if (f != NULL)
    clinfer_op_half_to_float (clinfer_tensor_get_element_type (t),
        clinfer_tensor_get_const_data (t), clinfer_tensor_get_data (f),
        clinfer_tensor_get_n_elements (t));
  return f;
}

void
clinfer_op_f32_to_half (const ClinferTensor *src, ClinferTensor *dst)
{
  clinfer_op_float_to_half (clinfer_tensor_get_element_type (dst),
      clinfer_tensor_get_const_data (src), clinfer_tensor_get_data (dst),
      clinfer_tensor_get_n_elements (dst));
}

gboolean
clinfer_op_eval_via_f32 (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, ClinferOpEvalFunc eval, GError **error)
{
  guint n_in = node->n_inputs, n_out = node->n_outputs;
  ClinferTensor **fin = g_new0 (ClinferTensor *, MAX (n_in, 1));
  ClinferTensor **fout = g_new0 (ClinferTensor *, MAX (n_out, 1));
  gboolean ok = FALSE;

  for (guint i = 0; i < n_in; i++) {
    if (in[i] == NULL)
      continue;
    if (!clinfer_op_type_is_half (clinfer_tensor_get_element_type (in[i])))
      fin[i] = clinfer_tensor_ref (in[i]);
    else if ((fin[i] = clinfer_op_half_to_f32 (in[i], error)) == NULL)
      goto done;
  }
  for (guint i = 0; i < n_out; i++) {
    if (!clinfer_op_type_is_half (clinfer_tensor_get_element_type (out[i])))
      fout[i] = clinfer_tensor_ref (out[i]);
    else if ((fout[i] = clinfer_tensor_new (CLINFER_TYPE_F32,
                clinfer_tensor_get_shape (out[i]), error)) == NULL)
      goto done;
  }
  if (!eval (node, fin, fout, error))
    goto done;
  for (guint i = 0; i < n_out; i++)
    if (fout[i] != out[i])
      clinfer_op_f32_to_half (fout[i], out[i]);
  ok = TRUE;
done:
  for (guint i = 0; i < n_in; i++)
    if (fin[i])
      clinfer_tensor_unref (fin[i]);
  for (guint i = 0; i < n_out; i++)
    if (fout[i])
      clinfer_tensor_unref (fout[i]);
  g_free (fin);
  g_free (fout);
  return ok;
}

void
clinfer_op_store_double (ClinferTensor *t, int64_t i, double v)
{
  gpointer p = clinfer_tensor_get_data (t);
  ClinferElementType type = clinfer_tensor_get_element_type (t);

  /* A double out of an integer type's range is undefined behaviour in C:
   * saturate (NaN gives 0). */
  if (!clinfer_element_type_is_float (type) && type != CLINFER_TYPE_BOOL) {
    double lo = 0., hi = 0.;
    switch (type) {
      case CLINFER_TYPE_I8: lo = -128.; hi = 127.; break;
      case CLINFER_TYPE_I16: lo = -32768.; hi = 32767.; break;
      case CLINFER_TYPE_I32: lo = -2147483648.; hi = 2147483647.; break;
      case CLINFER_TYPE_I64: lo = -9223372036854775808.; hi = 9.2233720368547748e18; break;
      case CLINFER_TYPE_U8: hi = 255.; break;
      case CLINFER_TYPE_U16: hi = 65535.; break;
      case CLINFER_TYPE_U32: hi = 4294967295.; break;
      case CLINFER_TYPE_U64: hi = 1.8446744073709550e19; break;
      default: break;
    }
    v = isnan (v) ? 0. : CLAMP (v, lo, hi);
  }
  switch (type) {
    case CLINFER_TYPE_F32: ((float *) p)[i] = (float) v; break;
    case CLINFER_TYPE_F64: ((double *) p)[i] = v; break;
    case CLINFER_TYPE_F16:
      ((uint16_t *) p)[i] = clinfer_float_to_half ((float) v);
      break;
    case CLINFER_TYPE_BF16:
      ((uint16_t *) p)[i] = clinfer_float_to_bfloat16 ((float) v);
      break;
    case CLINFER_TYPE_I8: ((int8_t *) p)[i] = (int8_t) v; break;
    case CLINFER_TYPE_I16: ((int16_t *) p)[i] = (int16_t) v; break;
    case CLINFER_TYPE_I32: ((int32_t *) p)[i] = (int32_t) v; break;
    case CLINFER_TYPE_I64: ((int64_t *) p)[i] = (int64_t) v; break;
    case CLINFER_TYPE_U8: ((uint8_t *) p)[i] = (uint8_t) v; break;
    case CLINFER_TYPE_U16: ((uint16_t *) p)[i] = (uint16_t) v; break;
    case CLINFER_TYPE_U32: ((uint32_t *) p)[i] = (uint32_t) v; break;
    case CLINFER_TYPE_U64: ((uint64_t *) p)[i] = (uint64_t) v; break;
    case CLINFER_TYPE_BOOL: ((uint8_t *) p)[i] = v != 0; break;
    default: break;
  }
}

/* ---------------------------------------------------------------- */
/* Legacy (opset < 7) broadcast                                      */

gboolean
clinfer_legacy_bcast_parse (const ClinferNode *node, ClinferLegacyBcast *lb,
    GError **error)
{
  int64_t bc = 0, axis = G_MININT64;

  if (!clinfer_node_attr_int (node, "broadcast", 0, &bc, error)
      || !clinfer_node_attr_int (node, "axis", G_MININT64, &axis, error))
    return FALSE;
  if (axis != G_MININT64
      && (axis < -CLINFER_MAX_RANK || axis >= CLINFER_MAX_RANK)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'axis' %" G_GINT64_FORMAT " is out of range",
        clinfer_node_label (node), axis);
    return FALSE;
  }
  lb->enabled = bc != 0 && axis != G_MININT64;
  lb->axis = lb->enabled ? (int) axis : -1;
  return TRUE;
}

gboolean
clinfer_legacy_bcast_shape (const ClinferNode *node,
    const ClinferLegacyBcast *lb, const ClinferShape *a, const ClinferShape *b,
    ClinferShape *eff, GError **error)
{
  int axis;

  *eff = *b;
  if (!lb->enabled || a->rank < 0 || b->rank < 0)
    return TRUE;
  axis = lb->axis < 0 ? lb->axis + a->rank : lb->axis;
  if (axis < 0 || axis + b->rank > a->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: legacy broadcast axis %d does not fit B of rank %d into A of "
        "rank %d", clinfer_node_label (node), lb->axis, b->rank, a->rank);
    return FALSE;
  }
  for (int k = b->rank; k < a->rank - axis; k++)
    eff->dims[eff->rank++] = 1;
  return TRUE;
}

gboolean
clinfer_op_scalar_f32_input (const ClinferNode *node, guint i, float *v)
{
  ClinferPortDesc *d = i < node->n_inputs ? clinfer_node_input_desc (node, i) : NULL;

  if (d == NULL || d->value == NULL || d->type != CLINFER_TYPE_F32
      || clinfer_tensor_get_n_elements (d->value) != 1)
    return FALSE;
  *v = *(const float *) clinfer_tensor_get_const_data (d->value);
  return TRUE;
}

/* Refuses an output that would need more than the graph's memory limit
 * (or whose size overflows), naming the node and the size, before
 * anything of that size is allocated. Dynamic dims are checked when they
 * become known. */
gboolean
clinfer_node_check_output_size (const ClinferNode *node, guint index,
    const ClinferValueInfo *out, GError **error)
{
  guint64 limit = clinfer_graph_get_memory_limit (node->graph), bytes;
  g_autofree char *shape = NULL;

  if (out->shape.rank < 0 || clinfer_element_type_size (out->type) == 0)
    return TRUE;
  if (out->shape.rank > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: node %s: output %u has rank %d, the most is %d",
        node->graph->origin, clinfer_node_label (node), index,
        out->shape.rank, CLINFER_MAX_RANK);
    return FALSE;
  }
  if (!clinfer_shape_is_static (&out->shape))
    return TRUE;
  if (clinfer_shape_get_byte_size (&out->shape, out->type, &bytes)
      && bytes <= limit)
    return TRUE;
  shape = clinfer_shape_to_string (&out->shape);
  if (clinfer_shape_get_byte_size (&out->shape, out->type, &bytes))
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
        "%s: node %s: output %u (%s %s) needs %" G_GUINT64_FORMAT
        " bytes, over the memory limit of %" G_GUINT64_FORMAT " bytes",
        node->graph->origin, clinfer_node_label (node), index,
        clinfer_element_type_name (out->type), shape, bytes, limit);
  else
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
        "%s: node %s: output %u (%s %s) is too large (over %" G_GUINT64_FORMAT
        " bytes)", node->graph->origin, clinfer_node_label (node), index,
        clinfer_element_type_name (out->type), shape,
        (guint64) CLINFER_MAX_TENSOR_BYTES);
  return FALSE;
}

gboolean
clinfer_node_infer_checked (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!node->def->infer (node, in, out, error))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++)
    if (!clinfer_node_check_output_size (node, i, &out[i], error))
      return FALSE;
  return TRUE;
}
