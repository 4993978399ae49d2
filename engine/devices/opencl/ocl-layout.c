/* clinfer — OpenCL ops that only move elements (kernels/layout.cl and
 * device-side copies): Reshape, Flatten, Squeeze, Unsqueeze, Identity and
 * Dropout as one buffer copy; Transpose, Slice, Expand and Split as
 * strided gathers; Concat as block copies. Any element type (raw bits). */
#include "devices/opencl/ocl-internal.h"
#include "ops/slice.h"
#include <string.h>

static gboolean
any_type_ok (const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (t == CLINFER_TYPE_STRING || clinfer_element_type_size (t) == 0) {
    *reason = "element type cannot live in device memory";
    return FALSE;
  }
  return TRUE;
}

/* Element strides of @s (row-major). */
static void
elem_strides (const ClinferShape *s, int64_t *st)
{
  int64_t acc = 1;

  for (int i = s->rank - 1; i >= 0; i--) {
    st[i] = acc;
    acc *= s->dims[i];
  }
}

/* Drops the size-1 dims of (@dims, @xs) and merges neighbours that are
 * contiguous in x as well (xs_i == xs_i+1 * dims_i+1) into @d, @s; the
 * collapsed rank (at least 1). A transpose NHWC -> NCHW becomes [C, H*W]
 * read with strides [1, C]. */
static int
collapse_dims (const ClinferShape *dims, const int64_t *xs, int *d, int *s)
{
  int rank = 0;

  for (int i = 0; i < dims->rank; i++) {
    if (dims->dims[i] == 1)
      continue;
    if (rank > 0 && s[rank - 1] == xs[i] * dims->dims[i]) {
      d[rank - 1] *= (int) dims->dims[i];
      s[rank - 1] = (int) xs[i];
      continue;
    }
    d[rank] = (int) dims->dims[i];
    s[rank++] = (int) xs[i];
  }
  if (rank == 0) {
    d[0] = 1;
    s[0] = 0;
    rank = 1;
  }
  return rank;
}

/* One gather_rows8 launch: rows of the collapsed last dim, 8 elements per
 * work-item. */
gboolean
clinfer_ocl_gather_new (OclBuilder *b, ClinferElementType type,
    OclArgKind src_kind, guint src, OclArgKind dst_kind, guint dst,
    const ClinferShape *dims, const int64_t *xs, int64_t base, GError **error)
{
  OclLaunch *l = clinfer_ocl_launch_new (b, "layout",
      clinfer_ocl_elem_options (type), "gather_rows8", error);
  int d[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, s[8] = { 0 };
  int64_t n = clinfer_shape_n_elements (dims), rows;
  int rank, last, ls;

  if (l == NULL)
    return FALSE;
  rank = collapse_dims (dims, xs, d, s);
  last = d[rank - 1];
  ls = s[rank - 1];
  /* The row dims: all but the last (one dim of 1 when there is none). */
  d[rank - 1] = 1;
  s[rank - 1] = 0;
  rows = last > 0 ? n / last : 0;
  clinfer_ocl_arg_buffer (l, src_kind, src);
  clinfer_ocl_arg_buffer (l, dst_kind, dst);
  clinfer_ocl_arg_int (l, last);
  clinfer_ocl_arg_int (l, ls);
  clinfer_ocl_arg_int (l, MAX (rank - 1, 1));
  clinfer_ocl_arg_int8 (l, d, 8);
  clinfer_ocl_arg_int8 (l, s, 8);
  clinfer_ocl_arg_int (l, (int) base);
  clinfer_ocl_launch_set_global (l, 2, n > 0 ? (last + 7) / 8 : 0,
      n > 0 ? rows : 0, 1);
  return TRUE;
}

/* Output @port of @dims (contiguous) read from input 0 at @base + sum
 * idx_d * @xs_d. */
static gboolean
gather (OclBuilder *b, const ClinferNode *node, guint port,
    const ClinferShape *dims, const int64_t *xs, int64_t base, GError **error)
{
  return clinfer_ocl_gather_new (b, clinfer_ocl_in_type (node, 0),
      OCL_ARG_INPUT, 0, OCL_ARG_OUTPUT, port, dims, xs, base, error);
}

/* ---- Reshape and friends: one copy ---- */

gboolean
clinfer_ocl_copy_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  if (strcmp (node->op_type, "Dropout") == 0) {
    const ClinferTensor *training = clinfer_ocl_const_input (node, 2);
    /* Training mode drops at random: only a constant false is a copy. */
    if (node->n_inputs > 2 && node->inputs[2].node
        && (training == NULL || clinfer_tensor_get_n_elements (training) < 1
            || clinfer_tensor_get_as_double (training, 0) != 0.0)) {
      *reason = "training mode is not implemented";
      return FALSE;
    }
  }
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_copy_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferPortDesc *out = &node->outputs[0];
  gsize bytes = (gsize) clinfer_shape_n_elements (&out->shape)
      * clinfer_element_type_size (out->type);

  clinfer_ocl_copy_new (b, 0, 0, 0, 0, bytes);
  /* Dropout outside training: the mask is all true. */
  if (node->n_outputs > 1 && strcmp (node->op_type, "Dropout") == 0) {
    int64_t n = clinfer_shape_n_elements (&node->outputs[1].shape);
    OclLaunch *l = clinfer_ocl_launch_new (b, "binary",
        "-DA_T=uchar -DC_T=uchar -DY_T=uchar -DC_UNSIGNED", "fill_true", error);
    if (l == NULL)
      return FALSE;
    clinfer_ocl_arg_output (l, 1);
    clinfer_ocl_arg_int (l, (int) n);
    clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  }
  return TRUE;
}

/* ---- Transpose ---- */

gboolean
clinfer_ocl_transpose_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_transpose_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const int64_t *perm = NULL;
  int64_t st[CLINFER_MAX_RANK], xs[CLINFER_MAX_RANK];
  gsize n_perm = 0;

  if (!clinfer_node_attr_ints (node, "perm", &perm, &n_perm, error))
    return FALSE;
  elem_strides (in, st);
  for (int i = 0; i < in->rank; i++) {
    int64_t p = n_perm ? perm[i] : in->rank - 1 - i;
    if (p < 0)
      p += in->rank;
    xs[i] = st[p];
  }
  return gather (b, node, 0, &node->outputs[0].shape, xs, 0, error);
}

/* ---- Expand ---- */

gboolean
clinfer_ocl_expand_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_expand_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *out = &node->outputs[0].shape;
  int64_t st[CLINFER_MAX_RANK], xs[CLINFER_MAX_RANK];
  int lead = out->rank - in->rank;

  elem_strides (in, st);
  for (int i = 0; i < out->rank; i++) {
    int j = i - lead;
    xs[i] = j < 0 || in->dims[j] == 1 ? 0 : st[j];
  }
  return gather (b, node, 0, out, xs, 0, error);
}

/* ---- Slice (constant starts/ends/axes/steps) ---- */

gboolean
clinfer_ocl_slice_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && !clinfer_ocl_input_known (node, i)) {
      *reason = "starts, ends, axes or steps are not constants";
      return FALSE;
    }
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_slice_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  const ClinferTensor *vals[5] = { NULL };
  int64_t st[CLINFER_MAX_RANK], xs[CLINFER_MAX_RANK], base = 0;
  ClinferSliceParams sp;
  gboolean known;

  for (guint i = 1; i < MIN (node->n_inputs, 5); i++)
    if (node->inputs[i].node)
      vals[i] = clinfer_ocl_const_input (node, i);
  if (!clinfer_slice_params (node, in, vals, &sp, &known, error))
    return FALSE;
  if (!known) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: slice parameters are not constants", clinfer_node_label (node));
    return FALSE;
  }
  elem_strides (in, st);
  for (int d = 0; d < in->rank; d++) {
    base += sp.start[d] * st[d];
    xs[d] = sp.step[d] * st[d];
  }
  return gather (b, node, 0, &node->outputs[0].shape, xs, base, error);
}

/* ---- Split: one gather per output ---- */

gboolean
clinfer_ocl_split_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_split_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *in = clinfer_ocl_in_shape (b, 0);
  int64_t axis = 0, st[CLINFER_MAX_RANK], offset = 0;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error))
    return FALSE;
  if (axis < 0)
    axis += in->rank;
  elem_strides (in, st);
  for (guint j = 0; j < node->n_outputs; j++) {
    const ClinferShape *out = &node->outputs[j].shape;
    if (!gather (b, node, j, out, st, offset * st[axis], error))
      return FALSE;
    offset += out->dims[axis];
  }
  return TRUE;
}

/* ---- Concat ---- */

gboolean
clinfer_ocl_concat_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  for (guint i = 0; i < node->n_inputs; i++)
    if (clinfer_ocl_in_type (node, i) != clinfer_ocl_in_type (node, 0)) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  return any_type_ok (node, reason);
}

gboolean
clinfer_ocl_concat_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *out = &node->outputs[0].shape;
  const char *opts = clinfer_ocl_elem_options (clinfer_ocl_in_type (node, 0));
  int64_t axis = 0, outer, n_out, inner, offset = 0;

  if (!clinfer_node_attr_int (node, "axis", 0, &axis, error))
    return FALSE;
  if (axis < 0)
    axis += out->rank;
  clinfer_ocl_split_axis (out, (int) axis, &outer, &n_out, &inner);
  for (guint i = 0; i < node->n_inputs; i++) {
    const ClinferShape *in = clinfer_ocl_in_shape (b, i);
    int64_t n_in = in->dims[axis];
    OclLaunch *l;
    if (n_in * inner == 0)
      continue;
    l = clinfer_ocl_launch_new (b, "layout", opts, "copy_block8", error);
    if (l == NULL)
      return FALSE;
    clinfer_ocl_arg_input (l, i);
    clinfer_ocl_arg_output (l, 0);
    clinfer_ocl_arg_int (l, (int) outer);
    clinfer_ocl_arg_int (l, (int) (n_in * inner));
    clinfer_ocl_arg_int (l, (int) (n_out * inner));
    clinfer_ocl_arg_int (l, (int) (offset * inner));
    clinfer_ocl_launch_set_global (l, 2, (n_in * inner + 7) / 8, outer, 1);
    offset += n_in;
  }
  return TRUE;
}
