/* clinfer — layout ops: Pad, Tile, DepthToSpace, SpaceToDepth, Split and
 * Compress. They only move data, so one byte-level path serves every type. */
#include "ops/op.h"
#include "ops/pad.h"
#include <math.h>
#include <string.h>

#define NV CLINFER_OP_SHAPE_NEEDS_VALUES

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

static inline void
copy_elem (guint8 *dst, const guint8 *src, gsize es)
{
  switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy (dst, src, 2); break;
    case 4: memcpy (dst, src, 4); break;
    case 8: memcpy (dst, src, 8); break;
    default: memcpy (dst, src, es); break;
  }
}

/* Stores @v converted to @type at @p (the fill value of Pad-1..10). */
static void
store_double (ClinferElementType type, gpointer p, double v)
{
  if (!clinfer_element_type_is_float (type))   /* no undefined casts */
    v = isnan (v) ? 0. : CLAMP (v, -9.2e18, 1.8e19);
  switch (type) {
    case CLINFER_TYPE_F32: *(float *) p = (float) v; break;
    case CLINFER_TYPE_F64: *(double *) p = v; break;
    case CLINFER_TYPE_F16: *(uint16_t *) p = clinfer_float_to_half ((float) v); break;
    case CLINFER_TYPE_BF16: *(uint16_t *) p = clinfer_float_to_bfloat16 ((float) v); break;
    case CLINFER_TYPE_I8: *(int8_t *) p = (int8_t) CLAMP (v, -128., 127.); break;
    case CLINFER_TYPE_U8: *(uint8_t *) p = (uint8_t) CLAMP (v, 0., 255.); break;
    case CLINFER_TYPE_I16: *(int16_t *) p = (int16_t) CLAMP (v, -32768., 32767.); break;
    case CLINFER_TYPE_U16: *(uint16_t *) p = (uint16_t) CLAMP (v, 0., 65535.); break;
    case CLINFER_TYPE_I32: *(int32_t *) p = (int32_t) CLAMP (v, -2147483648., 2147483647.); break;
    case CLINFER_TYPE_U32: *(uint32_t *) p = (uint32_t) CLAMP (v, 0., 4294967295.); break;
    case CLINFER_TYPE_I64: *(int64_t *) p = (int64_t) MIN (v, 9.2e18); break;
    case CLINFER_TYPE_U64: *(uint64_t *) p = (uint64_t) MAX (v, 0.); break;
    case CLINFER_TYPE_BOOL: *(uint8_t *) p = v != 0; break;
    default: break;
  }
}

/* out[o_0, .., o_r] = in[map_0[o_0], .., map_r[o_r]], or @fill where any
 * map entry is negative. Serves Pad (all modes) and Tile. */
static void
gather_by_maps (const guint8 *src, const ClinferShape *is, guint8 *dst,
    const ClinferShape *os, int64_t *const *maps, gsize es, const guint8 *fill)
{
  int r = os->rank;
  int64_t ist[CLINFER_MAX_RANK], rows = 1, inner;

  if (r == 0) {
    copy_elem (dst, src, es);
    return;
  }
  clinfer_shape_elem_strides (is, ist);
  for (int d = 0; d < r - 1; d++)
    rows *= os->dims[d];
  inner = os->dims[r - 1];
  if (rows == 0 || inner == 0)
    return;
#pragma omp parallel for schedule(static) if (rows * inner > 65536)
  for (int64_t row = 0; row < rows; row++) {
    int64_t rem = row, off = 0;
    gboolean filled = FALSE;
    guint8 *drow = dst + (gsize) (row * inner) * es;
    const int64_t *last = maps[r - 1];

    for (int d = r - 2; d >= 0; d--) {
      int64_t m = maps[d][rem % os->dims[d]];
      rem /= os->dims[d];
      if (m < 0)
        filled = TRUE;
      else
        off += m * ist[d];
    }
    for (int64_t j = 0; j < inner; j++) {
      if (filled || last[j] < 0)
        copy_elem (drow + j * es, fill, es);
      else
        copy_elem (drow + j * es, src + (gsize) (off + last[j]) * es, es);
    }
  }
}

/* Copies the rank-@rank tensor @src of @dims into @dst transposed by @perm
 * (output dim k is input dim perm[k]). */
static void
transpose_bytes (const guint8 *src, int rank, const int64_t *dims,
    const int *perm, guint8 *dst, gsize es)
{
  int64_t st[CLINFER_MAX_RANK], od[CLINFER_MAX_RANK], rows = 1, inner, istep;
  ClinferShape s = clinfer_shape_make (rank, dims);

  clinfer_shape_elem_strides (&s, st);
  for (int k = 0; k < rank; k++)
    od[k] = dims[perm[k]];
  for (int k = 0; k < rank - 1; k++)
    rows *= od[k];
  inner = od[rank - 1];
  istep = st[perm[rank - 1]];
  if (rows == 0 || inner == 0)
    return;
#pragma omp parallel for schedule(static) if (rows * inner > 65536)
  for (int64_t row = 0; row < rows; row++) {
    int64_t rem = row, off = 0;
    guint8 *drow = dst + (gsize) (row * inner) * es;
    for (int k = rank - 2; k >= 0; k--) {
      off += (rem % od[k]) * st[perm[k]];
      rem /= od[k];
    }
    for (int64_t j = 0; j < inner; j++)
      copy_elem (drow + j * es, src + (gsize) (off + j * istep) * es, es);
  }
}

/* ---------------------------------------------------------------- */
/* Pad                                                               */

typedef enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE } PadMode;

typedef struct {
  PadMode mode;
  gboolean attr_pads;        /* opset < 11: pads and value are attributes */
  gsize n_pads;
  int64_t pads[2 * CLINFER_MAX_RANK];
  float value;
} PadData;

static gboolean
prepare_pad (ClinferNode *node, GError **error)
{
  g_autofree PadData *d = g_new0 (PadData, 1);
  const char *mode;
  const int64_t *p = NULL;
  gsize n = 0;

  if (!clinfer_node_attr_string (node, "mode", "constant", &mode, error))
    return FALSE;
  if (strcmp (mode, "constant") == 0)
    d->mode = PAD_CONSTANT;
  else if (strcmp (mode, "reflect") == 0)
    d->mode = PAD_REFLECT;
  else if (strcmp (mode, "edge") == 0)
    d->mode = PAD_EDGE;
  else {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: mode '%s' is not supported (expected constant, reflect or edge)",
        clinfer_node_label (node), mode);
    return FALSE;
  }
  d->attr_pads = node->opset < 11;
  if (d->attr_pads) {
    if (!clinfer_node_attr_ints (node, node->opset < 2 ? "paddings" : "pads",
            &p, &n, error)
        || !clinfer_node_attr_float (node, "value", 0.f, &d->value, error))
      return FALSE;
    if (n == 0 || n % 2 != 0 || n > G_N_ELEMENTS (d->pads)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: pads must have 2 entries per dimension, got %" G_GSIZE_FORMAT,
          clinfer_node_label (node), n);
      return FALSE;
    }
    memcpy (d->pads, p, n * sizeof (int64_t));
    d->n_pads = n;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Reads the pads (attribute or input 1) into @pads; *known FALSE when the
 * input's value is not available yet. */
static gboolean
pad_read_pads (const ClinferNode *node, const ClinferTensor *t, int rank,
    int64_t *pads, gboolean *known, GError **error)
{
  const PadData *d = node->op_data;
  g_autofree int64_t *v = NULL;
  gsize n = d->n_pads;

  *known = TRUE;
  if (d->attr_pads)
    memcpy (pads, d->pads, n * sizeof (int64_t));
  else if (t == NULL) {
    *known = FALSE;
    return TRUE;
  } else {
    if (!clinfer_op_read_int_list (node, t, "pads", &v, &n, error))
      return FALSE;
    if (n == (gsize) 2 * rank)
      memcpy (pads, v, n * sizeof (int64_t));
  }
  if (n != (gsize) 2 * rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: pads has %" G_GSIZE_FORMAT " entries, expected %d (2 per "
        "dimension of the rank-%d input)", clinfer_node_label (node), n,
        2 * rank, rank);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_pad_params (const ClinferNode *node, int rank, ClinferPadParams *p)
{
  const PadData *d = node->op_data;
  const ClinferPortDesc *pd, *vd;

  if (d == NULL || rank < 1 || rank > CLINFER_MAX_RANK)
    return FALSE;
  p->constant = d->mode == PAD_CONSTANT;
  p->edge = d->mode == PAD_EDGE;
  if (d->attr_pads) {
    if (d->n_pads != (gsize) 2 * rank)
      return FALSE;
    memcpy (p->pads, d->pads, d->n_pads * sizeof (int64_t));
    p->value = d->value;
    return TRUE;
  }
  pd = clinfer_node_input_desc (node, 1);
  vd = clinfer_node_input_desc (node, 2);
  if (pd == NULL || pd->value == NULL
      || clinfer_tensor_get_n_elements (pd->value) != 2 * rank
      || (vd && (vd->value == NULL
              || clinfer_tensor_get_n_elements (vd->value) != 1)))
    return FALSE;
  for (int i = 0; i < 2 * rank; i++)
    p->pads[i] = clinfer_tensor_get_as_int64 (pd->value, i);
  p->value = vd ? clinfer_tensor_get_as_double (vd->value, 0) : 0.0;
  return TRUE;
}

#define PAD_LIMIT ((int64_t) 1 << 40)

static gboolean
pad_out_shape (const ClinferNode *node, const ClinferShape *is,
    const int64_t *pads, ClinferShape *os, GError **error)
{
  int r = is->rank;

  os->rank = r;
  for (int i = 0; i < r; i++) {
    int64_t v;
    if (is->dims[i] < 0) {
      os->dims[i] = CLINFER_DIM_DYNAMIC;
      continue;
    }
    /* Range checks, not ABS (): ABS (INT64_MIN) overflows. */
    if (pads[i] > PAD_LIMIT || pads[i] < -PAD_LIMIT
        || pads[i + r] > PAD_LIMIT || pads[i + r] < -PAD_LIMIT
        || (v = is->dims[i] + pads[i] + pads[i + r]) < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: pads %" G_GINT64_FORMAT ",%" G_GINT64_FORMAT " do not fit "
          "dimension %d of extent %" G_GINT64_FORMAT, clinfer_node_label (node),
          pads[i], pads[i + r], i, is->dims[i]);
      return FALSE;
    }
    os->dims[i] = v;
  }
  return TRUE;
}

static gboolean
infer_pad (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  int64_t pads[2 * CLINFER_MAX_RANK];
  gboolean known;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  if (node->n_inputs > 1 && in[1].present
      && !clinfer_op_check_int_input (node, in, 1, "pads", error))
    return FALSE;
  if (node->n_inputs > 2 && in[2].present && in[2].type != in[0].type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: constant_value is %s but the data is %s", clinfer_node_label (node),
        clinfer_element_type_name (in[2].type),
        clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = clinfer_shape_unknown ();
  if (in[0].shape.rank < 0)
    return TRUE;
  if (!pad_read_pads (node, node->n_inputs > 1 ? in[1].value : NULL,
          in[0].shape.rank, pads, &known, error))
    return FALSE;
  if (!known) {
    out[0].shape.rank = in[0].shape.rank;
    for (int i = 0; i < in[0].shape.rank; i++)
      out[0].shape.dims[i] = CLINFER_DIM_DYNAMIC;
    return TRUE;
  }
  return pad_out_shape (node, &in[0].shape, pads, &out[0].shape, error);
}

int64_t
clinfer_pad_source (const ClinferPadParams *p, int64_t o, int64_t begin,
    int64_t n)
{
  int64_t i = o - begin, period;

  if (i >= 0 && i < n)
    return i;
  if (p->constant)
    return -1;
  if (p->edge)
    return i < 0 ? 0 : n - 1;
  if (n == 1)
    return 0;
  period = 2 * (n - 1);
  i = i < 0 ? -i : i;
  i %= period;
  return i >= n ? period - i : i;
}

static gboolean
eval_pad (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const PadData *d = node->op_data;
  const ClinferPadParams mode = { .constant = d->mode == PAD_CONSTANT,
    .edge = d->mode == PAD_EDGE };
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *os = clinfer_tensor_get_shape (out[0]);
  ClinferElementType type = clinfer_tensor_get_element_type (in[0]);
  gsize es = clinfer_element_type_size (type);
  int64_t pads[2 * CLINFER_MAX_RANK], *maps[CLINFER_MAX_RANK] = { NULL };
  guint8 fill[16] = { 0 };
  ClinferShape want;
  gboolean known, ok = FALSE;

  if (!pad_read_pads (node, node->n_inputs > 1 ? in[1] : NULL, is->rank, pads,
          &known, error) || !pad_out_shape (node, is, pads, &want, error))
    return FALSE;
  if (!known || !clinfer_shape_equal (&want, os)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the pads do not match the output shape", clinfer_node_label (node));
    return FALSE;
  }
  if (d->attr_pads)
    store_double (type, fill, d->value);
  else if (node->n_inputs > 2 && in[2] && clinfer_tensor_get_n_elements (in[2]) > 0)
    memcpy (fill, clinfer_tensor_get_const_data (in[2]), MIN (es, sizeof (fill)));
  /* Nothing to write: no index maps, whose size is that of the other
   * (possibly huge) dims. */
  if (clinfer_tensor_get_n_elements (out[0]) == 0) {
    ok = TRUE;
    goto done;
  }
  for (int i = 0; i < is->rank; i++) {
    if (d->mode != PAD_CONSTANT && is->dims[i] == 0 && os->dims[i] > 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: cannot pad the empty dimension %d in %s mode",
          clinfer_node_label (node), i, d->mode == PAD_EDGE ? "edge" : "reflect");
      goto done;
    }
    maps[i] = g_new (int64_t, MAX (os->dims[i], 1));
    for (int64_t o = 0; o < os->dims[i]; o++)
      maps[i][o] = clinfer_pad_source (&mode, o, pads[i], is->dims[i]);
  }
  gather_by_maps (clinfer_tensor_get_const_data (in[0]), is,
      clinfer_tensor_get_data (out[0]), os, maps, es, fill);
  ok = TRUE;
done:
  for (int i = 0; i < is->rank; i++)
    g_free (maps[i]);
  return ok;
}

/* ---------------------------------------------------------------- */
/* Tile                                                              */

/* Repeats per dim from input 1 (Tile-6+) or from tiles/axis (Tile-1). */
static gboolean
tile_repeats (const ClinferNode *node, const ClinferTensor *const *vals,
    int rank, int64_t *reps, gboolean *known, GError **error)
{
  g_autofree int64_t *v = NULL;
  gsize n;

  *known = vals[0] != NULL && (node->opset >= 6 || vals[1] != NULL);
  if (!*known)
    return TRUE;
  if (node->opset < 6) {
    int axis;
    if (!clinfer_op_normalize_axis (node, clinfer_tensor_get_as_int64 (vals[1], 0),
            rank, &axis, error))
      return FALSE;
    for (int i = 0; i < rank; i++)
      reps[i] = 1;
    reps[axis] = clinfer_tensor_get_as_int64 (vals[0], 0);
  } else {
    if (!clinfer_op_read_int_list (node, vals[0], "repeats", &v, &n, error)
        || !clinfer_op_check_list_len (node, "repeats", n, rank, error))
      return FALSE;
    memcpy (reps, v, n * sizeof (int64_t));
  }
  for (int i = 0; i < rank; i++)
    if (reps[i] < 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: repeat %" G_GINT64_FORMAT " of dimension %d is negative",
          clinfer_node_label (node), reps[i], i);
      return FALSE;
    }
  return TRUE;
}

static gboolean
infer_tile (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferTensor *vals[2] = { NULL, NULL };
  int64_t reps[CLINFER_MAX_RANK];
  gboolean known;
  int r = in[0].shape.rank;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || !clinfer_op_check_int_input (node, in, 1, "repeats", error))
    return FALSE;
  out[0].type = in[0].type;
  if (r < 0)
    return TRUE;
  vals[0] = in[1].value;
  if (node->n_inputs > 2 && in[2].present)
    vals[1] = in[2].value;
  if (!tile_repeats (node, vals, r, reps, &known, error))
    return FALSE;
  out[0].shape.rank = r;
  for (int i = 0; i < r; i++) {
    int64_t v = CLINFER_DIM_DYNAMIC;
    if (known && in[0].shape.dims[i] >= 0
        && __builtin_mul_overflow (in[0].shape.dims[i], reps[i], &v)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: tiling dimension %d overflows", clinfer_node_label (node), i);
      return FALSE;
    }
    out[0].shape.dims[i] = v;
  }
  return TRUE;
}

static gboolean
eval_tile (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *os = clinfer_tensor_get_shape (out[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  int64_t *maps[CLINFER_MAX_RANK] = { NULL };
  guint8 fill[16] = { 0 };

  for (int i = 0; i < is->rank; i++) {
    if (is->dims[i] == 0 || os->dims[i] % is->dims[i] != 0) {
      if (os->dims[i] == 0)
        continue;
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: output dimension %d is not a multiple of the input's",
          clinfer_node_label (node), i);
      for (int j = 0; j < i; j++)
        g_free (maps[j]);
      return FALSE;
    }
  }
  /* Nothing to write: no index maps (see eval_pad). */
  if (clinfer_tensor_get_n_elements (out[0]) == 0)
    return TRUE;
  for (int i = 0; i < is->rank; i++) {
    maps[i] = g_new (int64_t, MAX (os->dims[i], 1));
    for (int64_t o = 0; o < os->dims[i]; o++)
      maps[i][o] = o % is->dims[i];
  }
  gather_by_maps (clinfer_tensor_get_const_data (in[0]), is,
      clinfer_tensor_get_data (out[0]), os, maps, es, fill);
  for (int i = 0; i < is->rank; i++)
    g_free (maps[i]);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* DepthToSpace / SpaceToDepth                                       */

typedef struct {
  int64_t blocksize;
  gboolean crd;
} D2SData;

static gboolean
prepare_d2s (ClinferNode *node, GError **error)
{
  D2SData d = { 0 };
  const char *mode = "DCR";

  if (!clinfer_node_attr_int (node, "blocksize", 0, &d.blocksize, error)
      || (strcmp (node->op_type, "DepthToSpace") == 0
          && !clinfer_node_attr_string (node, "mode", "DCR", &mode, error)))
    return FALSE;
  if (d.blocksize <= 0 || d.blocksize > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: blocksize %" G_GINT64_FORMAT " must be positive",
        clinfer_node_label (node), d.blocksize);
    return FALSE;
  }
  if (strcmp (mode, "DCR") != 0 && strcmp (mode, "CRD") != 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: mode '%s' is not supported (expected DCR or CRD)",
        clinfer_node_label (node), mode);
    return FALSE;
  }
  d.crd = strcmp (mode, "CRD") == 0;
  node->op_data = g_memdup2 (&d, sizeof (d));
  return TRUE;
}

static gboolean
infer_d2s (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const D2SData *d = node->op_data;
  gboolean to_space = strcmp (node->op_type, "DepthToSpace") == 0;
  const ClinferShape *s = &in[0].shape;
  int64_t b = d->blocksize, bb = b * b;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  if (s->rank < 0)
    return TRUE;
  if (s->rank != 4) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: expected a 4-D NCHW input, got rank %d", clinfer_node_label (node),
        s->rank);
    return FALSE;
  }
  out[0].shape = *s;
  for (int i = 1; i < 4; i++) {
    int64_t v = s->dims[i];
    gboolean bad = FALSE;
    if (v < 0)
      continue;
    if (i == 1 && to_space) {
      bad = v % bb != 0;
      v /= bb;
    } else if (i == 1) {
      bad = __builtin_mul_overflow (v, bb, &v);
    } else if (to_space) {
      bad = __builtin_mul_overflow (v, b, &v);
    } else {
      bad = v % b != 0;
      v /= b;
    }
    if (bad) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: dimension %d (%" G_GINT64_FORMAT ") does not fit blocksize %"
          G_GINT64_FORMAT, clinfer_node_label (node), i, s->dims[i], b);
      return FALSE;
    }
    out[0].shape.dims[i] = v;
  }
  return TRUE;
}

static gboolean
eval_d2s (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const D2SData *d = node->op_data;
  const int64_t *x = clinfer_tensor_get_shape (in[0])->dims;
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  int64_t b = d->blocksize, dims[6];
  static const int dcr[6] = { 0, 3, 4, 1, 5, 2 }, crd[6] = { 0, 1, 4, 2, 5, 3 };
  static const int s2d[6] = { 0, 3, 5, 1, 2, 4 };
  const int *perm;

  if (strcmp (node->op_type, "DepthToSpace") == 0) {
    int64_t c = x[1] / (b * b);
    if (d->crd) {
      int64_t v[6] = { x[0], c, b, b, x[2], x[3] };
      memcpy (dims, v, sizeof (v));
      perm = crd;
    } else {
      int64_t v[6] = { x[0], b, b, c, x[2], x[3] };
      memcpy (dims, v, sizeof (v));
      perm = dcr;
    }
  } else {
    int64_t v[6] = { x[0], x[1], x[2] / b, b, x[3] / b, b };
    memcpy (dims, v, sizeof (v));
    perm = s2d;
  }
  transpose_bytes (clinfer_tensor_get_const_data (in[0]), 6, dims, perm,
      clinfer_tensor_get_data (out[0]), es);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Split                                                             */

typedef struct {
  int64_t axis;
  gsize n_split;
  int64_t *split;            /* attribute form (opset < 13), may be NULL */
} SplitData;

static void
split_data_free (gpointer p)
{
  SplitData *d = p;

  g_free (d->split);
  g_free (d);
}

static gboolean
prepare_split (ClinferNode *node, GError **error)
{
  SplitData *d = g_new0 (SplitData, 1);
  const int64_t *s = NULL;

  if (!clinfer_node_attr_int (node, "axis", 0, &d->axis, error)
      || (node->opset < 13
          && !clinfer_node_attr_ints (node, "split", &s, &d->n_split, error))) {
    g_free (d);
    return FALSE;
  }
  if (d->n_split > 0 && d->n_split != node->n_outputs) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: split has %" G_GSIZE_FORMAT " entries for %u outputs",
        clinfer_node_label (node), d->n_split, node->n_outputs);
    g_free (d);
    return FALSE;
  }
  d->split = s ? g_memdup2 (s, d->n_split * sizeof (int64_t)) : NULL;
  node->op_data = d;
  return TRUE;
}

/* Sizes of the parts along the axis of extent @dim (dynamic when @dim is).
 * @t: the split input when present (NULL: attribute or equal parts);
 * *known FALSE when the input is present without a value. */
static gboolean
split_sizes (const ClinferNode *node, gboolean have_input,
    const ClinferTensor *t, int64_t dim, int64_t *sizes, gboolean *known,
    GError **error)
{
  const SplitData *d = node->op_data;
  g_autofree int64_t *v = NULL;
  gsize n = d->n_split;
  int64_t sum = 0;

  *known = TRUE;
  if (have_input && t == NULL) {
    *known = FALSE;
    return TRUE;
  }
  if (have_input && !clinfer_op_read_int_list (node, t, "split", &v, &n, error))
    return FALSE;
  if (n == 0) {              /* equal parts */
    if (dim >= 0 && dim % node->n_outputs != 0) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: dimension of extent %" G_GINT64_FORMAT " does not split into %u "
          "equal parts", clinfer_node_label (node), dim, node->n_outputs);
      return FALSE;
    }
    for (guint i = 0; i < node->n_outputs; i++)
      sizes[i] = dim < 0 ? CLINFER_DIM_DYNAMIC : dim / node->n_outputs;
    return TRUE;
  }
  if (n != node->n_outputs) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: split has %" G_GSIZE_FORMAT " entries for %u outputs",
        clinfer_node_label (node), n, node->n_outputs);
    return FALSE;
  }
  for (gsize i = 0; i < n; i++) {
    sizes[i] = v ? v[i] : d->split[i];
    if (sizes[i] < 0 || __builtin_add_overflow (sum, sizes[i], &sum)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: split sizes must be non-negative", clinfer_node_label (node));
      return FALSE;
    }
  }
  if (dim >= 0 && sum != dim) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: split sizes add up to %" G_GINT64_FORMAT " but the dimension has %"
        G_GINT64_FORMAT, clinfer_node_label (node), sum, dim);
    return FALSE;
  }
  return TRUE;
}

static gboolean
infer_split (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const SplitData *d = node->op_data;
  g_autofree int64_t *sizes = g_new (int64_t, node->n_outputs);
  gboolean have = node->n_inputs > 1 && in[1].present, known;
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_check_movable (node, in[0].type, error)
      || (have && !clinfer_op_check_int_input (node, in, 1, "split", error)))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++)
    out[i].type = in[0].type;
  if (in[0].shape.rank < 0)
    return TRUE;
  if (!clinfer_op_normalize_axis (node, d->axis, in[0].shape.rank, &axis, error)
      || !split_sizes (node, have, have ? in[1].value : NULL,
          in[0].shape.dims[axis], sizes, &known, error))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++) {
    out[i].shape = in[0].shape;
    out[i].shape.dims[axis] = known ? sizes[i] : CLINFER_DIM_DYNAMIC;
  }
  return TRUE;
}

/* Copies consecutive slices along the axis; the parts' extents come from
 * the (inferred) output shapes. */
static gboolean
eval_split (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const SplitData *d = node->op_data;
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  int64_t outer, inner, dim, off = 0;
  int axis;

  if (!clinfer_op_normalize_axis (node, d->axis, is->rank, &axis, error))
    return FALSE;
  clinfer_shape_split_axis (is, axis, &outer, &dim, &inner);
  inner *= es;                /* bytes */
  for (guint j = 0; j < node->n_outputs; j++) {
    int64_t s = clinfer_tensor_get_shape (out[j])->dims[axis];
    guint8 *dst = clinfer_tensor_get_data (out[j]);
    if (off + s > dim) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: the outputs exceed the split dimension", clinfer_node_label (node));
      return FALSE;
    }
    for (int64_t o = 0; o < outer && s > 0; o++)
      memcpy (dst + o * s * inner, src + (o * dim + off) * inner, s * inner);
    off += s;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Compress                                                          */

static int64_t
compress_count (const ClinferTensor *cond, int64_t limit)
{
  int64_t n = MIN (clinfer_tensor_get_n_elements (cond), limit), c = 0;

  for (int64_t i = 0; i < n; i++)
    c += clinfer_tensor_get_as_int64 (cond, i) != 0;
  return c;
}

static gboolean
compress_axis (const ClinferNode *node, int rank, gboolean *has, int *axis,
    GError **error)
{
  int64_t a = G_MININT64;

  if (!clinfer_node_attr_int (node, "axis", G_MININT64, &a, error))
    return FALSE;
  *has = a != G_MININT64;
  *axis = 0;
  return !*has || clinfer_op_normalize_axis (node, a, rank, axis, error);
}

static gboolean
infer_compress (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  gboolean has;
  int axis;
  int64_t dim;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_op_check_movable (node, in[0].type, error))
    return FALSE;
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0)
    return TRUE;
  if (!compress_axis (node, in[0].shape.rank, &has, &axis, error))
    return FALSE;
  if (has) {
    out[0].shape = in[0].shape;
    dim = in[0].shape.dims[axis];
  } else {
    out[0].shape.rank = 1;
    dim = clinfer_shape_n_elements (&in[0].shape);
  }
  out[0].shape.dims[axis] = in[1].value && dim >= 0
      ? compress_count (in[1].value, dim) : CLINFER_DIM_DYNAMIC;
  return TRUE;
}

static gboolean
eval_compress (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  gsize es = clinfer_element_type_size (clinfer_tensor_get_element_type (in[0]));
  const guint8 *src = clinfer_tensor_get_const_data (in[0]);
  guint8 *dst = clinfer_tensor_get_data (out[0]);
  int64_t outer = 1, inner = 1, dim, n_out, k = 0;
  gboolean has;
  int axis;

  if (!compress_axis (node, is->rank, &has, &axis, error))
    return FALSE;
  if (has)
    clinfer_shape_split_axis (is, axis, &outer, &dim, &inner);
  else
    dim = clinfer_tensor_get_n_elements (in[0]);
  inner *= es;                /* bytes */
  n_out = clinfer_tensor_get_shape (out[0])->dims[has ? axis : 0];
  if (compress_count (in[1], dim) != n_out) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: the condition selects a different count than the output holds",
        clinfer_node_label (node));
    return FALSE;
  }
  for (int64_t i = 0; i < MIN (dim, clinfer_tensor_get_n_elements (in[1])); i++) {
    if (clinfer_tensor_get_as_int64 (in[1], i) == 0)
      continue;
    for (int64_t o = 0; o < outer; o++)
      memcpy (dst + (o * n_out + k) * inner, src + (o * dim + i) * inner, inner);
    k++;
  }
  return TRUE;
}

const ClinferOpDef clinfer_ops_layout[] = {
  { "Pad", "", 1, 0, 1, 3, 1, 1, NV, prepare_pad, g_free, infer_pad, eval_pad },
  { "Tile", "", 6, 0, 2, 2, 1, 1, NV, NULL, NULL, infer_tile, eval_tile },
  { "Tile", "", 1, 5, 3, 3, 1, 1, NV, NULL, NULL, infer_tile, eval_tile },
  { "DepthToSpace", "", 1, 0, 1, 1, 1, 1, 0, prepare_d2s, g_free, infer_d2s, eval_d2s },
  { "SpaceToDepth", "", 1, 0, 1, 1, 1, 1, 0, prepare_d2s, g_free, infer_d2s, eval_d2s },
  { "Split", "", 1, 0, 1, 2, 1, CLINFER_VARIADIC, NV, prepare_split,
    split_data_free, infer_split, eval_split },
  { "Compress", "", 9, 0, 2, 2, 1, 1, NV, NULL, NULL, infer_compress, eval_compress },
  { NULL }
};
