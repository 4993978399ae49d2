/* clinfer — ops that compute or rearrange shapes: Reshape, Transpose,
 * Concat, ConstantOfShape, Shape, Size, Gather, Unsqueeze, Squeeze,
 * Flatten, Identity, Cast, Slice and Expand. Data moves work on bytes of
 * the element size, so one implementation serves every element type. */
#include "ops/op.h"
#include "ops/slice.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

/* Product of @n dims with overflow and dynamic checks: -1 when a dim is
 * dynamic, -2 on overflow. */
static int64_t
dims_product (const int64_t *dims, int n)
{
  int64_t p = 1;

  for (int i = 0; i < n; i++) {
    if (dims[i] < 0)
      return -1;
    if (__builtin_mul_overflow (p, dims[i], &p))
      return -2;
  }
  return p;
}

static void
copy_row (guint8 *dst, const guint8 *src, int64_t n, int64_t stride, gsize es)
{
  if (stride == (int64_t) es) {
    memcpy (dst, src, (gsize) n * es);
    return;
  }
  /* Fixed-size memcpys compile to plain loads and stores. */
  switch (es) {
    case 1:
      for (int64_t i = 0; i < n; i++)
        dst[i] = src[i * stride];
      break;
    case 2:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * 2, src + i * stride, 2);
      break;
    case 4:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * 4, src + i * stride, 4);
      break;
    case 8:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * 8, src + i * stride, 8);
      break;
    default:
      for (int64_t i = 0; i < n; i++)
        memcpy (dst + i * es, src + i * stride, es);
      break;
  }
}

/* Copies the @rank-D view of @src with extents @dims and byte strides
 * @sstr (may be 0 or negative) into contiguous @dst. */
static void
strided_copy (guint8 *dst, const guint8 *src, gsize es, int rank,
    const int64_t *dims, const int64_t *sstr)
{
  int64_t idx[CLINFER_MAX_RANK] = { 0 };
  int64_t n = dims_product (dims, rank), inner, rows;

  if (rank == 0) {
    memcpy (dst, src, es);
    return;
  }
  if (n <= 0)
    return;
  inner = dims[rank - 1];
  rows = n / inner;
  for (int64_t r = 0; r < rows; r++) {
    copy_row (dst, src, inner, sstr[rank - 1], es);
    dst += inner * (int64_t) es;
    for (int d = rank - 2; d >= 0; d--) {
      src += sstr[d];
      if (++idx[d] < dims[d])
        break;
      src -= sstr[d] * dims[d];
      idx[d] = 0;
    }
  }
}

static void
byte_strides (const ClinferShape *s, gsize es, int64_t *strides)
{
  clinfer_shape_elem_strides (s, strides);
  for (int i = 0; i < s->rank; i++)
    strides[i] *= (int64_t) es;
}

/* Output = input bytes (Reshape, Squeeze, Unsqueeze, Flatten, Identity). */
static gboolean
eval_copy (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  gsize n = clinfer_tensor_get_byte_size (in[0]);

  if (n != clinfer_tensor_get_byte_size (out[0])) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: input has %" G_GSIZE_FORMAT " bytes but the output %"
        G_GSIZE_FORMAT, clinfer_node_label (node), n,
        clinfer_tensor_get_byte_size (out[0]));
    return FALSE;
  }
  if (n > 0 && clinfer_tensor_get_data (out[0])
      != clinfer_tensor_get_const_data (in[0]))
    memcpy (clinfer_tensor_get_data (out[0]),
        clinfer_tensor_get_const_data (in[0]), n);
  return TRUE;
}

/* Reads an optional int list input (value known) or the attribute. */
static gboolean
read_ints_value (const ClinferNode *node, const ClinferTensor *t,
    const char *what, int64_t **out, gsize *n, GError **error)
{
  *out = NULL;
  *n = 0;
  return clinfer_op_read_int_list (node, t, what, out, n, error);
}

/* A target shape input known by its length only (the value comes at run
 * time): the output has that many dims (at least @min_rank), all
 * dynamic; left unknown when the length is unknown too. */
static void
rank_from_shape_input (const ClinferValueInfo *shape_in, int min_rank,
    ClinferShape *out)
{
  int64_t len = shape_in->shape.rank == 1 ? shape_in->shape.dims[0] : -1;

  if (len < 0 || len > CLINFER_MAX_RANK)
    return;
  out->rank = MAX (min_rank, (int) len);
  for (int i = 0; i < out->rank; i++)
    out->dims[i] = CLINFER_DIM_DYNAMIC;
}

/* The value of a target shape input: at most CLINFER_MAX_RANK dims. */
static gboolean
read_shape_value (const ClinferNode *node, const ClinferTensor *t,
    int64_t **dims, gsize *n, GError **error)
{
  if (!read_ints_value (node, t, "shape", dims, n, error))
    return FALSE;
  if (*n > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: shape has %" G_GSIZE_FORMAT " dims, at most %d supported",
        clinfer_node_label (node), *n, CLINFER_MAX_RANK);
    return FALSE;
  }
  return TRUE;
}

static gboolean
normalize_axes (const ClinferNode *node, int64_t *axes, gsize n, int rank,
    GError **error)
{
  guint64 seen = 0;

  for (gsize i = 0; i < n; i++) {
    int a;
    if (!clinfer_op_normalize_axis (node, axes[i], rank, &a, error))
      return FALSE;
    if (seen & ((guint64) 1 << a)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: axis %" G_GINT64_FORMAT " is given twice",
          clinfer_node_label (node), axes[i]);
      return FALSE;
    }
    seen |= (guint64) 1 << a;
    axes[i] = a;
  }
  return TRUE;
}

static gboolean
has_axis (const int64_t *axes, gsize n, int64_t a)
{
  for (gsize i = 0; i < n; i++)
    if (axes[i] == a)
      return TRUE;
  return FALSE;
}

/* ---------------------------------------------------------------- */
/* Reshape                                                           */

static gboolean
reshape_dims (const ClinferNode *node, const ClinferShape *in,
    const int64_t *spec, gsize n, gboolean allowzero, ClinferShape *out,
    GError **error)
{
  int infer_at = -1;
  int64_t n_in, rest;

  if (n > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: target shape has %" G_GSIZE_FORMAT " dims, at most %d supported",
        clinfer_node_label (node), n, CLINFER_MAX_RANK);
    return FALSE;
  }
  out->rank = n;
  for (gsize i = 0; i < n; i++) {
    int64_t v = spec[i];
    if (v == -1 && infer_at < 0) {
      infer_at = i;
      out->dims[i] = 1;
    } else if (v == 0 && !allowzero) {
      if (in->rank >= 0 && (int) i >= in->rank) {
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
            "%s: target dim %" G_GSIZE_FORMAT " is 0 (copy) but the input "
            "has rank %d", clinfer_node_label (node), i, in->rank);
        return FALSE;
      }
      out->dims[i] = in->rank >= 0 ? in->dims[i] : CLINFER_DIM_DYNAMIC;
    } else if (v < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: invalid target dim %" G_GINT64_FORMAT " at index %"
          G_GSIZE_FORMAT " (only one -1 is allowed)", clinfer_node_label (node),
          v, i);
      return FALSE;
    } else {
      out->dims[i] = v;
    }
  }
  n_in = in->rank >= 0 ? dims_product (in->dims, in->rank) : -1;
  rest = dims_product (out->dims, out->rank);
  if (infer_at >= 0) {
    if (n_in == -1 || rest == -1) {
      out->dims[infer_at] = CLINFER_DIM_DYNAMIC;
      return TRUE;
    }
    if (rest <= 0 || n_in < 0 || n_in % rest != 0) {
      g_autofree char *s = clinfer_shape_to_string (in);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: cannot infer the -1 dim: input %s does not split into parts "
          "of %" G_GINT64_FORMAT " elements", clinfer_node_label (node), s, rest);
      return FALSE;
    }
    out->dims[infer_at] = n_in / rest;
  } else if (n_in != -1 && rest != -1 && n_in != rest) {
    g_autofree char *a = clinfer_shape_to_string (in);
    g_autofree char *b = clinfer_shape_to_string (out);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: cannot reshape %s into %s (element counts differ)",
        clinfer_node_label (node), a, b);
    return FALSE;
  }
  return TRUE;
}

static gboolean
infer_reshape (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  g_autofree int64_t *spec = NULL;
  const int64_t *attr;
  gsize n;
  int64_t allowzero = 0;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_node_attr_int (node, "allowzero", 0, &allowzero, error))
    return FALSE;
  out[0].type = in[0].type;
  if (node->n_inputs < 2 || !in[1].present) {
    /* Opset 1-4: the target shape is an attribute. */
    if (!clinfer_node_attr_ints (node, "shape", &attr, &n, error))
      return FALSE;
    return reshape_dims (node, &in[0].shape, attr, n, FALSE, &out[0].shape,
        error);
  }
  if (!clinfer_op_check_int_input (node, in, 1, "shape", error))
    return FALSE;
  if (in[1].value == NULL) {
    rank_from_shape_input (&in[1], 0, &out[0].shape);
    return TRUE;
  }
  if (!read_ints_value (node, in[1].value, "shape", &spec, &n, error))
    return FALSE;
  return reshape_dims (node, &in[0].shape, spec, n, allowzero != 0,
      &out[0].shape, error);
}

/* ---------------------------------------------------------------- */
/* Transpose                                                         */

gboolean
clinfer_transpose_perm (const ClinferNode *node, int rank, int *perm,
    GError **error)
{
  const int64_t *p;
  gsize n;
  guint seen = 0;

  if (!clinfer_node_attr_ints (node, "perm", &p, &n, error))
    return FALSE;
  if (n == 0) {
    for (int i = 0; i < rank; i++)
      perm[i] = rank - 1 - i;
    return TRUE;
  }
  if ((int) n != rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: perm has %" G_GSIZE_FORMAT " entries but the input has rank %d",
        clinfer_node_label (node), n, rank);
    return FALSE;
  }
  for (int i = 0; i < rank; i++) {
    if (p[i] < 0 || p[i] >= rank || (seen & (1u << p[i]))) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: perm is not a permutation of 0..%d (entry %d is %"
          G_GINT64_FORMAT ")", clinfer_node_label (node), rank - 1, i, p[i]);
      return FALSE;
    }
    seen |= 1u << p[i];
    perm[i] = p[i];
  }
  return TRUE;
}

static gboolean
infer_transpose (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  int perm[CLINFER_MAX_RANK];

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0)
    return TRUE;
  if (!clinfer_transpose_perm (node, in[0].shape.rank, perm, error))
    return FALSE;
  out[0].shape.rank = in[0].shape.rank;
  for (int i = 0; i < in[0].shape.rank; i++)
    out[0].shape.dims[i] = in[0].shape.dims[perm[i]];
  return TRUE;
}

/* dst[c * rows + r] = src[r * cols + c] for 4-byte elements, one image
 * of a batched 2-D transpose: a few columns (the channels of an NHWC
 * image) split into planes directly, else 8x8 tiles so both sides are
 * read and written a cache line at a time. */
static void
transpose_2d_u32 (guint32 *restrict dst, const guint32 *restrict src,
    int64_t rows, int64_t cols)
{
  if (cols == 3) {
    guint32 *d0 = dst, *d1 = dst + rows, *d2 = dst + 2 * rows;
    /* Split between the threads when large: the next step (a conv)
     * usually reads the planes from every thread, so each write here has
     * to take its cache line back from another core first; two threads
     * wait for those transfers side by side. */
    _Pragma ("omp parallel for schedule(static) if (rows > 8192)")
    for (int64_t r = 0; r < rows; r++) {
      d0[r] = src[3 * r];
      d1[r] = src[3 * r + 1];
      d2[r] = src[3 * r + 2];
    }
    return;
  }
  for (int64_t r0 = 0; r0 < rows; r0 += 8)
    for (int64_t c0 = 0; c0 < cols; c0 += 8) {
      int64_t r1 = MIN (r0 + 8, rows), c1 = MIN (c0 + 8, cols);
      for (int64_t c = c0; c < c1; c++)
        for (int64_t r = r0; r < r1; r++)
          dst[c * rows + r] = src[r * cols + c];
    }
}

/* When @perm on @dims (dims of 1 dropped, axes that stay neighbours
 * merged) swaps the last two of at most three axes, the batch, rows and
 * columns of that batched 2-D transpose; else FALSE. */
static gboolean
transpose_as_2d (const ClinferShape *xs, const int *perm, int64_t *batch,
    int64_t *rows, int64_t *cols)
{
  int64_t size[CLINFER_MAX_RANK];
  int axis[CLINFER_MAX_RANK], n = 0;

  /* Output-order groups of input axes: size and first input axis. */
  for (int i = 0; i < xs->rank; i++) {
    int a = perm[i];
    if (xs->dims[a] == 1)
      continue;
    if (n > 0) {
      int last = axis[n - 1];
      gboolean adjacent = TRUE;
      /* a continues the group when it follows the group's last input
       * axis with only extent-1 axes between */
      for (int k = last + 1; k < a && adjacent; k++)
        adjacent = xs->dims[k] == 1;
      if (a > last && adjacent) {
        size[n - 1] *= xs->dims[a];
        axis[n - 1] = a;
        continue;
      }
    }
    size[n] = xs->dims[a];
    axis[n] = a;
    n++;
  }
  /* axis[] holds each group's last input axis: input order of groups. */
  if (n == 2 && axis[0] > axis[1]) {
    *batch = 1;
    *rows = size[1];
    *cols = size[0];
    return TRUE;
  }
  if (n == 3 && axis[0] < axis[2] && axis[2] < axis[1]) {
    *batch = size[0];
    *rows = size[2];
    *cols = size[1];
    return TRUE;
  }
  return FALSE;
}

static gboolean
eval_transpose (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *ys = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  int64_t xstr[CLINFER_MAX_RANK], sstr[CLINFER_MAX_RANK];
  int perm[CLINFER_MAX_RANK];

  int64_t batch, rows, cols;

  if (!clinfer_transpose_perm (node, xs->rank, perm, error))
    return FALSE;
  if (es == 4 && transpose_as_2d (xs, perm, &batch, &rows, &cols)) {
    const guint32 *x = clinfer_tensor_get_const_data (in[0]);
    guint32 *y = clinfer_tensor_get_data (out[0]);
    for (int64_t b = 0; b < batch; b++)
      transpose_2d_u32 (y + b * rows * cols, x + b * rows * cols, rows, cols);
    return TRUE;
  }
  byte_strides (xs, es, xstr);
  for (int i = 0; i < xs->rank; i++)
    sstr[i] = xstr[perm[i]];
  strided_copy (clinfer_tensor_get_data (out[0]),
      clinfer_tensor_get_const_data (in[0]), es, ys->rank, ys->dims, sstr);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Concat                                                            */

static gboolean
concat_axis (const ClinferNode *node, int rank, int *axis, GError **error)
{
  int64_t a;

  if (!clinfer_node_attr_int (node, "axis", G_MININT64, &a, error))
    return FALSE;
  if (a == G_MININT64) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'axis' is required", clinfer_node_label (node));
    return FALSE;
  }
  return clinfer_op_normalize_axis (node, a, rank, axis, error);
}

static gboolean
concat_input (const ClinferNode *node, const ClinferValueInfo *in, guint i,
    int axis, ClinferShape *acc, GError **error)
{
  const ClinferShape *s = &in[i].shape;

  if (s->rank != acc->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: input %u has rank %d but input 0 has rank %d",
        clinfer_node_label (node), i, s->rank, acc->rank);
    return FALSE;
  }
  for (int d = 0; d < s->rank; d++) {
    if (d == axis) {
      acc->dims[d] = acc->dims[d] < 0 || s->dims[d] < 0 ? CLINFER_DIM_DYNAMIC
          : acc->dims[d] + s->dims[d];
    } else if (acc->dims[d] < 0) {
      acc->dims[d] = s->dims[d];
    } else if (s->dims[d] >= 0 && s->dims[d] != acc->dims[d]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input %u has extent %" G_GINT64_FORMAT " in dim %d, expected %"
          G_GINT64_FORMAT " (only axis %d may differ)",
          clinfer_node_label (node), i, s->dims[d], d, acc->dims[d], axis);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
infer_concat (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  ClinferShape acc = clinfer_shape_unknown ();
  int axis = 0;

  for (guint i = 0; i < node->n_inputs; i++) {
    if (!clinfer_op_require_input (node, in, i, error)
        || !clinfer_op_check_movable (node, in[i].type, error))
      return FALSE;
    if (in[i].type != in[0].type) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: input %u is %s but input 0 is %s", clinfer_node_label (node), i,
          clinfer_element_type_name (in[i].type),
          clinfer_element_type_name (in[0].type));
      return FALSE;
    }
    if (in[i].shape.rank >= 0 && acc.rank < 0) {
      if (!concat_axis (node, in[i].shape.rank, &axis, error))
        return FALSE;
      acc = in[i].shape;
      acc.dims[axis] = 0;
    }
  }
  out[0].type = in[0].type;
  for (guint i = 0; i < node->n_inputs && acc.rank >= 0; i++)
    if (in[i].shape.rank < 0)
      acc.dims[axis] = CLINFER_DIM_DYNAMIC;
    else if (!concat_input (node, in, i, axis, &acc, error))
      return FALSE;
  out[0].shape = acc;
  return TRUE;
}

static gboolean
eval_concat (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ys = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (out[0]));
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t outer, out_row, offset = 0;
  int axis;

  if (!concat_axis (node, ys->rank, &axis, error))
    return FALSE;
  outer = dims_product (ys->dims, axis);
  out_row = dims_product (ys->dims + axis, ys->rank - axis) * (int64_t) es;
  for (guint i = 0; i < node->n_inputs; i++) {
    const ClinferShape *xs = clinfer_tensor_get_shape (in[i]);
    const guint8 *src = clinfer_tensor_get_const_data (in[i]);
    int64_t row = dims_product (xs->dims + axis, xs->rank - axis) * (int64_t) es;

    if (row > 0)
      for (int64_t o = 0; o < outer; o++)
        memcpy (dst + o * out_row + offset, src + o * row, row);
    offset += row;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* ConstantOfShape, Shape, Size                                      */

/* The fill value: attribute 'value' (one element) or f32 0. */
static gboolean
fill_value (const ClinferNode *node, const ClinferTensor **value,
    GError **error)
{
  const ClinferAttr *a = clinfer_node_get_attr (node, "value");

  *value = NULL;
  if (a == NULL)
    return TRUE;
  if (a->type != CLINFER_ATTR_TENSOR || clinfer_tensor_get_n_elements (a->t) != 1
      || !clinfer_op_check_movable (node, clinfer_tensor_get_element_type (a->t), error)) {
    if (error && *error)
      return FALSE;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'value' must be a tensor of one element",
        clinfer_node_label (node));
    return FALSE;
  }
  *value = a->t;
  return TRUE;
}

static gboolean
prepare_constant_of_shape (ClinferNode *node, GError **error)
{
  const ClinferTensor *v;

  return fill_value (node, &v, error);
}

static gboolean
infer_constant_of_shape (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferTensor *v;
  g_autofree int64_t *dims = NULL;
  gsize n;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_int_input (node, in, 0, "shape", error)
      || !fill_value (node, &v, error))
    return FALSE;
  out[0].type = v ? clinfer_tensor_get_element_type (v) : CLINFER_TYPE_F32;
  if (in[0].value == NULL) {
    rank_from_shape_input (&in[0], 0, &out[0].shape);
    return TRUE;
  }
  if (!read_shape_value (node, in[0].value, &dims, &n, error))
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (dims[i] < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: shape dim %" G_GSIZE_FORMAT " is negative (%" G_GINT64_FORMAT ")",
          clinfer_node_label (node), i, dims[i]);
      return FALSE;
    }
  out[0].shape = clinfer_shape_make (n, dims);
  return TRUE;
}

static gboolean
eval_constant_of_shape (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferTensor *v;
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  gsize total = clinfer_tensor_get_byte_size (out[0]), es, filled;
  const guint8 *src;
  gboolean zero = TRUE;

  if (!fill_value (node, &v, error))
    return FALSE;
  if (v == NULL || total == 0) {
    memset (dst, 0, total);
    return TRUE;
  }
  es = clinfer_element_type_size (clinfer_tensor_get_element_type (v));
  src = clinfer_tensor_get_const_data (v);
  for (gsize i = 0; i < es; i++)
    zero = zero && src[i] == 0;
  if (zero) {
    memset (dst, 0, total);
    return TRUE;
  }
  /* Fill by doubling the filled prefix. */
  memcpy (dst, src, es);
  for (filled = es; filled < total; filled *= 2)
    memcpy (dst + filled, dst, MIN (filled, total - filled));
  return TRUE;
}

static void
shape_range (const ClinferNode *node, int rank, int64_t *start, int64_t *end)
{
  int64_t s = 0, e = rank;

  /* Opset 15 start/end; errors cannot happen for well-typed attributes and
   * are reported by prepare. */
  clinfer_node_attr_int (node, "start", 0, &s, NULL);
  clinfer_node_attr_int (node, "end", rank, &e, NULL);
  if (s < 0)
    s += rank;
  if (e < 0)
    e += rank;
  *start = CLAMP (s, 0, rank);
  *end = CLAMP (e, *start, rank);
}

static gboolean
prepare_shape (ClinferNode *node, GError **error)
{
  int64_t v;

  return clinfer_node_attr_int (node, "start", 0, &v, error)
      && clinfer_node_attr_int (node, "end", 0, &v, error);
}

static gboolean
infer_shape (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  int64_t s, e;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  out[0].type = CLINFER_TYPE_I64;
  out[0].shape.rank = 1;
  out[0].shape.dims[0] = CLINFER_DIM_DYNAMIC;
  if (in[0].shape.rank >= 0) {
    shape_range (node, in[0].shape.rank, &s, &e);
    out[0].shape.dims[0] = e - s;
  }
  return TRUE;
}

/* Reads only the input's shape: constant folding passes a placeholder
 * without data. */
static gboolean
eval_shape (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  int64_t *dst = clinfer_tensor_get_data (out[0]), s, e;

  shape_range (node, xs->rank, &s, &e);
  for (int64_t i = s; i < e; i++)
    dst[i - s] = xs->dims[i];
  return TRUE;
}

static gboolean
infer_size (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  out[0].type = CLINFER_TYPE_I64;
  out[0].shape.rank = 0;
  return TRUE;
}

static gboolean
eval_size (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);

  *(int64_t *) clinfer_tensor_get_data (out[0]) = dims_product (xs->dims, xs->rank);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Gather                                                            */

static gboolean
infer_gather (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *d = &in[0].shape, *ix = &in[1].shape;
  int64_t a;
  int axis, r = 0;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_op_check_int_input (node, in, 1, "indices", error)
      || !clinfer_node_attr_int (node, "axis", 0, &a, error))
    return FALSE;
  out[0].type = in[0].type;
  if (d->rank < 0 || ix->rank < 0)
    return TRUE;
  if (d->rank == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: data must have rank >= 1", clinfer_node_label (node));
    return FALSE;
  }
  if (!clinfer_op_normalize_axis (node, a, d->rank, &axis, error))
    return FALSE;
  if (d->rank - 1 + ix->rank > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: output rank %d exceeds %d", clinfer_node_label (node),
        d->rank - 1 + ix->rank, CLINFER_MAX_RANK);
    return FALSE;
  }
  for (int i = 0; i < axis; i++)
    out[0].shape.dims[r++] = d->dims[i];
  for (int i = 0; i < ix->rank; i++)
    out[0].shape.dims[r++] = ix->dims[i];
  for (int i = axis + 1; i < d->rank; i++)
    out[0].shape.dims[r++] = d->dims[i];
  out[0].shape.rank = r;
  return TRUE;
}

static gboolean
eval_gather (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *ds = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  int64_t n_idx = clinfer_tensor_get_n_elements (in[1]), outer, inner, len;
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  g_autofree int64_t *idx = g_new (int64_t, MAX (n_idx, 1));
  int axis;

  if (!clinfer_op_axis_attr (node, 0, ds->rank, &axis, error))
    return FALSE;
  len = ds->dims[axis];
  outer = dims_product (ds->dims, axis);
  inner = dims_product (ds->dims + axis + 1, ds->rank - axis - 1) * (int64_t) es;
  for (int64_t j = 0; j < n_idx; j++) {
    int64_t v = clinfer_tensor_get_as_int64 (in[1], j);
    if (v < -len || v >= len) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: index %" G_GINT64_FORMAT " is out of range for axis %d of "
          "extent %" G_GINT64_FORMAT, clinfer_node_label (node), v, axis, len);
      return FALSE;
    }
    idx[j] = v < 0 ? v + len : v;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < n_idx; j++)
      memcpy (dst + (o * n_idx + j) * inner, src + (o * len + idx[j]) * inner,
          inner);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Unsqueeze, Squeeze, Flatten, Identity                             */

/* Axes from input 1 (opset 13+) or the attribute: *known FALSE when the
 * input's value is not known yet; *n = 0 and *axes NULL when absent. */
static gboolean
get_axes (const ClinferNode *node, const ClinferValueInfo *in, int64_t **axes,
    gsize *n, gboolean *known, GError **error)
{
  const int64_t *attr;

  *axes = NULL;
  *n = 0;
  *known = TRUE;
  if (node->n_inputs > 1 && in[1].present) {
    if (!clinfer_op_check_int_input (node, in, 1, "axes", error))
      return FALSE;
    if (in[1].value == NULL) {
      *known = FALSE;
      return TRUE;
    }
    return read_ints_value (node, in[1].value, "axes", axes, n, error);
  }
  if (!clinfer_node_attr_ints (node, "axes", &attr, n, error))
    return FALSE;
  *axes = *n ? g_memdup2 (attr, *n * sizeof (int64_t)) : NULL;
  return TRUE;
}

static gboolean
infer_unsqueeze (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  g_autofree int64_t *axes = NULL;
  const ClinferShape *x = &in[0].shape;
  gboolean known;
  gsize n;
  int r, j = 0;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !get_axes (node, in, &axes, &n, &known, error))
    return FALSE;
  out[0].type = in[0].type;
  if (x->rank < 0 || !known)
    return TRUE;
  r = x->rank + (int) n;
  if (n == 0 || r > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: needs 1 to %d axes for an input of rank %d, got %" G_GSIZE_FORMAT,
        clinfer_node_label (node), CLINFER_MAX_RANK - x->rank, x->rank, n);
    return FALSE;
  }
  if (!normalize_axes (node, axes, n, r, error))
    return FALSE;
  out[0].shape.rank = r;
  for (int i = 0; i < r; i++)
    out[0].shape.dims[i] = has_axis (axes, n, i) ? 1 : x->dims[j++];
  return TRUE;
}

static gboolean
infer_squeeze (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  g_autofree int64_t *axes = NULL;
  const ClinferShape *x = &in[0].shape;
  gboolean known;
  gsize n;
  int r = 0;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !get_axes (node, in, &axes, &n, &known, error))
    return FALSE;
  out[0].type = in[0].type;
  if (x->rank < 0 || !known)
    return TRUE;
  if (!normalize_axes (node, axes, n, x->rank, error))
    return FALSE;
  for (int i = 0; i < x->rank; i++) {
    gboolean drop = n ? has_axis (axes, n, i) : x->dims[i] == 1;
    /* Without axes a dynamic dim may or may not be 1: rank unknown. */
    if (n == 0 && x->dims[i] == CLINFER_DIM_DYNAMIC) {
      out[0].shape = clinfer_shape_unknown ();
      return TRUE;
    }
    if (drop && x->dims[i] != 1 && x->dims[i] != CLINFER_DIM_DYNAMIC) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: cannot squeeze axis %d of extent %" G_GINT64_FORMAT,
          clinfer_node_label (node), i, x->dims[i]);
      return FALSE;
    }
    if (!drop)
      out[0].shape.dims[r++] = x->dims[i];
  }
  out[0].shape.rank = r;
  return TRUE;
}

static gboolean
infer_flatten (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *x = &in[0].shape;
  int64_t a, p0, p1;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_node_attr_int (node, "axis", 1, &a, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape.rank = 2;
  out[0].shape.dims[0] = out[0].shape.dims[1] = CLINFER_DIM_DYNAMIC;
  if (x->rank < 0)
    return TRUE;
  if (a < -x->rank || a > x->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: axis %" G_GINT64_FORMAT " is out of range for rank %d (expected "
        "%d..%d)", clinfer_node_label (node), a, x->rank, -x->rank, x->rank);
    return FALSE;
  }
  if (a < 0)
    a += x->rank;
  p0 = dims_product (x->dims, a);
  p1 = dims_product (x->dims + a, x->rank - a);
  out[0].shape.dims[0] = p0 >= 0 ? p0 : CLINFER_DIM_DYNAMIC;
  out[0].shape.dims[1] = p1 >= 0 ? p1 : CLINFER_DIM_DYNAMIC;
  return TRUE;
}

static gboolean
infer_identity (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Cast                                                              */

/* One element in the widest form of its kind. */
typedef struct {
  enum { K_FLOAT, K_SIGNED, K_UNSIGNED } kind;
  double f;
  int64_t i;
  uint64_t u;
} Scalar;

static void
load_scalar (ClinferElementType t, const guint8 *p, Scalar *s)
{
  s->kind = K_SIGNED;
  switch (t) {
    case CLINFER_TYPE_F32: { float v; memcpy (&v, p, 4); s->kind = K_FLOAT; s->f = v; break; }
    case CLINFER_TYPE_F64: memcpy (&s->f, p, 8); s->kind = K_FLOAT; break;
    case CLINFER_TYPE_F16: { uint16_t h; memcpy (&h, p, 2); s->kind = K_FLOAT; s->f = clinfer_half_to_float (h); break; }
    case CLINFER_TYPE_BF16: { uint16_t h; memcpy (&h, p, 2); s->kind = K_FLOAT; s->f = clinfer_bfloat16_to_float (h); break; }
    case CLINFER_TYPE_I8: s->i = *(const int8_t *) p; break;
    case CLINFER_TYPE_I16: { int16_t v; memcpy (&v, p, 2); s->i = v; break; }
    case CLINFER_TYPE_I32: { int32_t v; memcpy (&v, p, 4); s->i = v; break; }
    case CLINFER_TYPE_I64: memcpy (&s->i, p, 8); break;
    case CLINFER_TYPE_BOOL: s->i = p[0] != 0; break;
    case CLINFER_TYPE_U8: s->kind = K_UNSIGNED; s->u = p[0]; break;
    case CLINFER_TYPE_U16: { uint16_t v; memcpy (&v, p, 2); s->kind = K_UNSIGNED; s->u = v; break; }
    case CLINFER_TYPE_U32: { uint32_t v; memcpy (&v, p, 4); s->kind = K_UNSIGNED; s->u = v; break; }
    case CLINFER_TYPE_U64: memcpy (&s->u, p, 8); s->kind = K_UNSIGNED; break;
    default: s->i = 0; break;
  }
}

/* Float to integer saturates to int64/uint64 (C leaves out-of-range
 * conversions undefined), then wraps to the narrower type like numpy. */
static uint64_t
scalar_bits (const Scalar *s)
{
  if (s->kind == K_SIGNED)
    return (uint64_t) s->i;
  if (s->kind == K_UNSIGNED)
    return s->u;
  if (isnan (s->f))
    return 0;
  if (s->f >= 18446744073709551615.0)
    return G_MAXUINT64;
  if (s->f >= 9223372036854775807.0)
    return (uint64_t) s->f;
  if (s->f <= -9223372036854775808.0)
    return (uint64_t) G_MININT64;
  return (uint64_t) (int64_t) s->f;
}

static double
scalar_double (const Scalar *s)
{
  return s->kind == K_FLOAT ? s->f : s->kind == K_SIGNED ? (double) s->i
      : (double) s->u;
}

static void
store_scalar (ClinferElementType t, guint8 *p, const Scalar *s)
{
  uint64_t b = scalar_bits (s);

  switch (t) {
    case CLINFER_TYPE_F32: { float v = (float) scalar_double (s); memcpy (p, &v, 4); break; }
    case CLINFER_TYPE_F64: { double v = scalar_double (s); memcpy (p, &v, 8); break; }
    case CLINFER_TYPE_F16: { uint16_t h = clinfer_float_to_half ((float) scalar_double (s)); memcpy (p, &h, 2); break; }
    case CLINFER_TYPE_BF16: { uint16_t h = clinfer_float_to_bfloat16 ((float) scalar_double (s)); memcpy (p, &h, 2); break; }
    case CLINFER_TYPE_BOOL: p[0] = s->kind == K_FLOAT ? s->f != 0.0 : b != 0; break;
    case CLINFER_TYPE_I8: case CLINFER_TYPE_U8: p[0] = (guint8) b; break;
    case CLINFER_TYPE_I16: case CLINFER_TYPE_U16: { uint16_t v = (uint16_t) b; memcpy (p, &v, 2); break; }
    case CLINFER_TYPE_I32: case CLINFER_TYPE_U32: { uint32_t v = (uint32_t) b; memcpy (p, &v, 4); break; }
    case CLINFER_TYPE_I64: case CLINFER_TYPE_U64: memcpy (p, &b, 8); break;
    default: break;
  }
}

static gboolean
cast_target (const ClinferNode *node, ClinferElementType *to, GError **error)
{
  int64_t v;

  if (!clinfer_node_attr_int (node, "to", CLINFER_TYPE_UNDEFINED, &v, error))
    return FALSE;
  *to = (ClinferElementType) v;
  if (v <= 0 || v >= CLINFER_TYPE_LAST_ || v == CLINFER_TYPE_STRING
      || clinfer_element_type_size (*to) == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'to' is %" G_GINT64_FORMAT ", not a supported numeric "
        "element type", clinfer_node_label (node), v);
    return FALSE;
  }
  return TRUE;
}

static gboolean
prepare_cast (ClinferNode *node, GError **error)
{
  ClinferElementType to;

  return cast_target (node, &to, error);
}

static gboolean
infer_cast (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !cast_target (node, &out[0].type, error))
    return FALSE;
  out[0].shape = in[0].shape;
  return TRUE;
}

static gboolean
eval_cast (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  ClinferElementType from = clinfer_tensor_get_element_type (in[0]);
  ClinferElementType to = clinfer_tensor_get_element_type (out[0]);
  gsize es_in = clinfer_element_type_size (from), es_out = clinfer_element_type_size (to);
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]);

  if (from == to)
    return eval_copy (node, in, out, error);
  if (from == CLINFER_TYPE_F32 && to == CLINFER_TYPE_F16) {
    for (int64_t i = 0; i < n; i++)
      ((uint16_t *) dst)[i] = clinfer_float_to_half (((const float *) src)[i]);
    return TRUE;
  }
  if (from == CLINFER_TYPE_F16 && to == CLINFER_TYPE_F32) {
    for (int64_t i = 0; i < n; i++)
      ((float *) dst)[i] = clinfer_half_to_float (((const uint16_t *) src)[i]);
    return TRUE;
  }
  _Pragma ("omp parallel for schedule(static) if (n > 65536)")
  for (int64_t i = 0; i < n; i++) {
    Scalar s;
    load_scalar (from, src + i * es_in, &s);
    store_scalar (to, dst + i * es_out, &s);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Slice                                                             */

static void
slice_axis (int64_t dim, int64_t start, int64_t end, int64_t step,
    int64_t *first, int64_t *len)
{
  int64_t diff;

  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = CLAMP (start, 0, dim);
    end = CLAMP (end, 0, dim);
    diff = end - start;
  } else {
    start = CLAMP (start, 0, dim - 1);
    end = CLAMP (end, -1, dim - 1);
    diff = start - end;
    step = step == G_MININT64 ? G_MAXINT64 : -step;
  }
  *first = start;
  *len = diff <= 0 ? 0 : (diff - 1) / step + 1;
}

/* Gathers starts/ends/axes/steps (attributes before opset 10, inputs
 * after). *known is FALSE when an input's value is not known yet. */
static gboolean
slice_lists (const ClinferNode *node, const ClinferTensor *const *vals,
    int64_t **lists, gsize *ns, gboolean *known, GError **error)
{
  static const char *names[] = { "starts", "ends", "axes", "steps" };

  *known = TRUE;
  for (int k = 0; k < 4; k++) {
    lists[k] = NULL;
    ns[k] = 0;
  }
  for (int k = 0; k < 4; k++) {
    if (node->n_inputs > 1) {
      if (k + 1 >= (int) node->n_inputs || node->inputs[k + 1].node == NULL)
        continue;
      if (vals[k + 1] == NULL) {
        *known = FALSE;
        return TRUE;
      }
      if (!read_ints_value (node, vals[k + 1], names[k], &lists[k], &ns[k], error))
        return FALSE;
    } else if (k < 3) {
      const int64_t *a;
      if (!clinfer_node_attr_ints (node, names[k], &a, &ns[k], error))
        return FALSE;
      lists[k] = ns[k] ? g_memdup2 (a, ns[k] * sizeof (int64_t)) : NULL;
    }
  }
  return TRUE;
}

static gboolean
slice_params_from_lists (const ClinferNode *node, const ClinferShape *x,
    int64_t **l, const gsize *ns, ClinferSliceParams *sp, GError **error)
{
  if (ns[0] != ns[1] || (l[2] && ns[2] != ns[0]) || (l[3] && ns[3] != ns[0])) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: starts, ends, axes and steps must have the same length (%"
        G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ", %"
        G_GSIZE_FORMAT ")", clinfer_node_label (node), ns[0], ns[1], ns[2], ns[3]);
    return FALSE;
  }
  if (l[2] == NULL && ns[0] > (gsize) x->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %" G_GSIZE_FORMAT " starts for an input of rank %d",
        clinfer_node_label (node), ns[0], x->rank);
    return FALSE;
  }
  if (l[2] && !normalize_axes (node, l[2], ns[2], x->rank, error))
    return FALSE;
  for (int d = 0; d < x->rank; d++) {
    sp->start[d] = 0;
    sp->step[d] = 1;
    sp->len[d] = x->dims[d];
  }
  for (gsize i = 0; i < ns[0]; i++) {
    int d = l[2] ? (int) l[2][i] : (int) i;
    int64_t step = l[3] ? l[3][i] : 1;
    if (step == 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: step of axis %d is 0", clinfer_node_label (node), d);
      return FALSE;
    }
    sp->step[d] = step;
    if (x->dims[d] == CLINFER_DIM_DYNAMIC)
      sp->len[d] = CLINFER_DIM_DYNAMIC;
    else
      slice_axis (x->dims[d], l[0][i], l[1][i], step, &sp->start[d], &sp->len[d]);
    /* With one element or none the step is never applied; any other
     * step is within the dim (|step| < dim), so step * stride, here and
     * in the devices' kernels, stays within the tensor. */
    if (sp->len[d] >= 0 && sp->len[d] <= 1)
      sp->step[d] = 1;
  }
  return TRUE;
}

gboolean
clinfer_slice_params (const ClinferNode *node, const ClinferShape *x,
    const ClinferTensor *const *vals, ClinferSliceParams *sp, gboolean *known,
    GError **error)
{
  int64_t *l[4];
  gsize ns[4];
  gboolean ok = slice_lists (node, vals, l, ns, known, error)
      && (!*known || slice_params_from_lists (node, x, l, ns, sp, error));

  for (int k = 0; k < 4; k++)
    g_free (l[k]);
  return ok;
}

static gboolean
infer_slice (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferTensor *vals[5] = { NULL };
  ClinferSliceParams sp;
  gboolean known;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  for (guint i = 1; i < MIN (node->n_inputs, 5); i++) {
    if (in[i].present && !clinfer_op_check_int_input (node, in, i, "slice parameter", error))
      return FALSE;
    vals[i] = in[i].value;
  }
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0)
    return TRUE;
  out[0].shape = in[0].shape;
  if (!clinfer_slice_params (node, &in[0].shape, vals, &sp, &known, error))
    return FALSE;
  if (!known) {
    for (int d = 0; d < out[0].shape.rank; d++)
      out[0].shape.dims[d] = CLINFER_DIM_DYNAMIC;
    return TRUE;
  }
  memcpy (out[0].shape.dims, sp.len, sizeof (int64_t) * in[0].shape.rank);
  return TRUE;
}

static gboolean
eval_slice (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *ys = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const ClinferTensor *vals[5] = { NULL };
  int64_t xstr[CLINFER_MAX_RANK], sstr[CLINFER_MAX_RANK], offset = 0;
  ClinferSliceParams sp;
  gboolean known;

  for (guint i = 1; i < MIN (node->n_inputs, 5); i++)
    vals[i] = in[i];
  if (!clinfer_slice_params (node, xs, vals, &sp, &known, error))
    return FALSE;
  if (!known) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: slice parameters are missing", clinfer_node_label (node));
    return FALSE;
  }
  for (int d = 0; d < xs->rank; d++)
    if (sp.len[d] != ys->dims[d]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: slice of dim %d has %" G_GINT64_FORMAT " elements, the output %"
          G_GINT64_FORMAT, clinfer_node_label (node), d, sp.len[d], ys->dims[d]);
      return FALSE;
    }
  byte_strides (xs, es, xstr);
  for (int d = 0; d < xs->rank; d++) {
    offset += sp.start[d] * xstr[d];
    sstr[d] = sp.step[d] * xstr[d];
  }
  strided_copy (clinfer_tensor_get_data (out[0]),
      (const guint8 *) clinfer_tensor_get_const_data (in[0]) + offset, es,
      ys->rank, ys->dims, sstr);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Expand                                                            */

static gboolean
infer_expand (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  g_autofree int64_t *dims = NULL;
  ClinferShape target;
  gsize n;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_op_check_int_input (node, in, 1, "shape", error))
    return FALSE;
  out[0].type = in[0].type;
  if (in[1].value == NULL) {
    if (in[0].shape.rank >= 0)
      rank_from_shape_input (&in[1], in[0].shape.rank, &out[0].shape);
    return TRUE;
  }
  if (!read_shape_value (node, in[1].value, &dims, &n, error))
    return FALSE;
  target = clinfer_shape_make (n, dims);
  if (in[0].shape.rank < 0)
    return TRUE;
  if (!clinfer_shape_broadcast (&in[0].shape, &target, &out[0].shape, error)) {
    g_prefix_error (error, "%s: ", clinfer_node_label (node));
    return FALSE;
  }
  return TRUE;
}

static gboolean
eval_expand (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *ys = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  int64_t xstr[CLINFER_MAX_RANK], sstr[CLINFER_MAX_RANK];

  if (xs->rank > ys->rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: output rank %d is below the input rank %d",
        clinfer_node_label (node), ys->rank, xs->rank);
    return FALSE;
  }
  byte_strides (xs, es, xstr);
  for (int i = 0; i < ys->rank; i++) {
    int j = i - (ys->rank - xs->rank);
    sstr[i] = j >= 0 && xs->dims[j] != 1 ? xstr[j] : 0;
    if (j >= 0 && xs->dims[j] != 1 && xs->dims[j] != ys->dims[i]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input dim %d (%" G_GINT64_FORMAT ") does not broadcast to %"
          G_GINT64_FORMAT, clinfer_node_label (node), j, xs->dims[j], ys->dims[i]);
      return FALSE;
    }
  }
  strided_copy (clinfer_tensor_get_data (out[0]),
      clinfer_tensor_get_const_data (in[0]), es, ys->rank, ys->dims, sstr);
  return TRUE;
}

/* ---------------------------------------------------------------- */

#define NV CLINFER_OP_SHAPE_NEEDS_VALUES

/* Newer versions first: nodes without an imported opset (0) take the
 * first match, which should be the current form. */
const ClinferOpDef clinfer_ops_shape[] = {
  { "Reshape", "", 5, 0, 2, 2, 1, 1, NV, NULL, NULL, infer_reshape, eval_copy },
  { "Reshape", "", 1, 4, 1, 1, 1, 1, 0, NULL, NULL, infer_reshape, eval_copy },
  { "Transpose", "", 1, 0, 1, 1, 1, 1, 0, NULL, NULL, infer_transpose, eval_transpose },
  { "Concat", "", 1, 0, 1, CLINFER_VARIADIC, 1, 1, 0, NULL, NULL, infer_concat, eval_concat },
  { "ConstantOfShape", "", 9, 0, 1, 1, 1, 1, NV, prepare_constant_of_shape, NULL,
    infer_constant_of_shape, eval_constant_of_shape },
  { "Shape", "", 1, 0, 1, 1, 1, 1, 0, prepare_shape, NULL, infer_shape, eval_shape },
  { "Size", "", 1, 0, 1, 1, 1, 1, 0, NULL, NULL, infer_size, eval_size },
  { "Gather", "", 1, 0, 2, 2, 1, 1, 0, NULL, NULL, infer_gather, eval_gather },
  { "Unsqueeze", "", 13, 0, 2, 2, 1, 1, NV, NULL, NULL, infer_unsqueeze, eval_copy },
  { "Unsqueeze", "", 1, 12, 1, 1, 1, 1, 0, NULL, NULL, infer_unsqueeze, eval_copy },
  /* Squeeze without axes depends on run-time extents of dynamic dims. */
  { "Squeeze", "", 13, 0, 1, 2, 1, 1, NV, NULL, NULL, infer_squeeze, eval_copy },
  { "Squeeze", "", 1, 12, 1, 1, 1, 1, NV, NULL, NULL, infer_squeeze, eval_copy },
  { "Flatten", "", 1, 0, 1, 1, 1, 1, 0, NULL, NULL, infer_flatten, eval_copy },
  { "Identity", "", 1, 0, 1, 1, 1, 1, 0, NULL, NULL, infer_identity, eval_copy },
  { "Cast", "", 1, 0, 1, 1, 1, 1, 0, prepare_cast, NULL, infer_cast, eval_cast },
  { "Slice", "", 10, 0, 3, 5, 1, 1, NV, NULL, NULL, infer_slice, eval_slice },
  { "Slice", "", 1, 9, 1, 1, 1, 1, 0, NULL, NULL, infer_slice, eval_slice },
  { "Expand", "", 8, 0, 2, 2, 1, 1, NV, NULL, NULL, infer_expand, eval_expand },
  { NULL }
};
