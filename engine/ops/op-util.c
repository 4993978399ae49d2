/* clinfer — small helpers shared by op implementations. */
#include "ops/op.h"

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

void
clinfer_shape_elem_strides (const ClinferShape *shape, int64_t *strides)
{
  int64_t s = 1;

  for (int i = shape->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= MAX (shape->dims[i], 1);
  }
}
