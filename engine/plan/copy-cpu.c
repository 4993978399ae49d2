/* clinfer — the CPU device's fast data-moving kernels, for tensors with
 * static shapes and parameters known at compile time:
 *   Concat  each output row (the dims from the axis on) gathers one row
 *           per input; rows of 4 or 8 bytes (a concat along a last dim of
 *           one value, as TensorFlow graphs stack channels) are copied as
 *           words, not by memcpy calls;
 *   Split   Concat backwards: each input row scattered to one row per
 *           output;
 *   Slice   the output as runs of contiguous input bytes: the trailing
 *           dims taken whole with step 1 merge into one run, copied with
 *           memcpy, or gathered value by value with a step;
 *   Transpose  rows of the input's last dim copied whole when it stays
 *           last (rows of up to 8 bytes: as one value each), else tiled
 *           2-D transposes (dims of extent 1 dropped, dims that stay
 *           adjacent merged).
 * The outer rows are split between the threads when there are enough
 * bytes. The reference evals (engine/ops/shape-ops.c) do the same
 * element or row copies one call at a time (Transpose value by value). */
#include "plan/cpu-kernels.h"
#include "ops/slice.h"
#include <omp.h>
#include <string.h>

/* At least this many bytes moved before the threads split the rows. */
#define COPY_PARALLEL_BYTES (256 * 1024)

static void
copy_bytes (guint8 *dst, const guint8 *src, int64_t n)
{
  switch (n) {
    case 4: memcpy (dst, src, 4); break;     /* inlined: one word */
    case 8: memcpy (dst, src, 8); break;
    default: memcpy (dst, src, (size_t) n); break;
  }
}

/* Concat, and Split read the other way round (@split: y_shape is the
 * input's, out_row an input row, row[i] and offset[i] output i's). */
typedef struct {
  ClinferShape y_shape;
  guint n_in;
  int64_t outer, out_row;    /* bytes */
  int64_t *row, *offset;     /* per input: bytes of a row, offset in the out row */
  gboolean split;
} ConcatState;

static void
concat_state_free (gpointer p)
{
  ConcatState *st = p;

  g_free (st->row);
  g_free (st->offset);
  g_free (st);
}

static gboolean
concat_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const ConcatState *st = kernel->state;
  ClinferTensor *const *parts = st->split ? outputs : inputs;
  ClinferTensor *whole = st->split ? inputs[0] : outputs[0];
  guint8 *w = clinfer_tensor_get_data (whole);

  if (!clinfer_cpu_kernel_check_shape (kernel, node,
          st->split ? "input" : "output", whole, &st->y_shape, error))
    return FALSE;
#pragma omp parallel for schedule (static) \
    if (st->outer > 1 && st->outer * st->out_row > COPY_PARALLEL_BYTES)
  for (int64_t o = 0; o < st->outer; o++)
    for (guint i = 0; i < st->n_in; i++) {
      guint8 *wo = w + o * st->out_row + st->offset[i];
      guint8 *po = (guint8 *) clinfer_tensor_get_data (parts[i])
          + o * st->row[i];
      if (st->row[i] > 0)
        copy_bytes (st->split ? po : wo, st->split ? wo : po, st->row[i]);
    }
  return TRUE;
}

gboolean
clinfer_cpu_concat_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  const ClinferShape *ys = &node->outputs[0].shape;
  gsize es = clinfer_element_type_size (node->outputs[0].type);
  int64_t inner = 1, off = 0;
  int axis;
  ConcatState *st;

  if (node->n_outputs != 1 || es == 0 || ys->rank < 1
      || node->outputs[0].type == CLINFER_TYPE_STRING
      || !clinfer_shape_is_static (ys)
      || !clinfer_op_axis_attr (node, 1, ys->rank, &axis, NULL))
    return FALSE;
  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d == NULL || !clinfer_shape_is_static (&d->shape)
        || d->shape.rank != ys->rank || d->type != node->outputs[0].type)
      return FALSE;
  }
  for (int d = axis + 1; d < ys->rank; d++)
    inner *= ys->dims[d];
  st = g_new0 (ConcatState, 1);
  st->y_shape = *ys;
  st->n_in = node->n_inputs;
  st->outer = 1;
  for (int d = 0; d < axis; d++)
    st->outer *= ys->dims[d];
  st->out_row = ys->dims[axis] * inner * (int64_t) es;
  st->row = g_new0 (int64_t, MAX (st->n_in, 1));
  st->offset = g_new0 (int64_t, MAX (st->n_in, 1));
  for (guint i = 0; i < st->n_in; i++) {
    st->row[i] = clinfer_node_input_desc (node, i)->shape.dims[axis] * inner
        * (int64_t) es;
    st->offset[i] = off;
    off += st->row[i];
  }
  kernel->name = g_strdup ("concat_rows");
  kernel->state = st;
  kernel->free_state = concat_state_free;
  kernel->run = concat_run;
  return TRUE;
}

/* The parts are the outputs' inferred extents along the axis (whatever
 * said them: the split input or attribute, or equal parts). */
gboolean
clinfer_cpu_split_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  gsize es;
  int64_t inner = 1, off = 0;
  int axis;
  ConcatState *st;

  if (xd == NULL || xd->shape.rank < 1 || !clinfer_shape_is_static (&xd->shape)
      || xd->type == CLINFER_TYPE_STRING
      || (es = clinfer_element_type_size (xd->type)) == 0
      || node->n_outputs < 1
      || !clinfer_op_axis_attr (node, 0, xd->shape.rank, &axis, NULL))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++) {
    const ClinferPortDesc *d = &node->outputs[i];
    if (d->left_out || !clinfer_shape_is_static (&d->shape)
        || d->type != xd->type || d->shape.rank != xd->shape.rank)
      return FALSE;
    off += d->shape.dims[axis];
  }
  if (off != xd->shape.dims[axis])
    return FALSE;
  for (int d = axis + 1; d < xd->shape.rank; d++)
    inner *= xd->shape.dims[d];
  st = g_new0 (ConcatState, 1);
  st->y_shape = xd->shape;
  st->n_in = node->n_outputs;
  st->outer = 1;
  for (int d = 0; d < axis; d++)
    st->outer *= xd->shape.dims[d];
  st->out_row = xd->shape.dims[axis] * inner * (int64_t) es;
  st->row = g_new0 (int64_t, st->n_in);
  st->offset = g_new0 (int64_t, st->n_in);
  off = 0;
  for (guint i = 0; i < st->n_in; i++) {
    st->row[i] = node->outputs[i].shape.dims[axis] * inner * (int64_t) es;
    st->offset[i] = off;
    off += st->row[i];
  }
  st->split = TRUE;
  kernel->name = g_strdup ("split_rows");
  kernel->state = st;
  kernel->free_state = concat_state_free;
  kernel->run = concat_run;
  return TRUE;
}

typedef struct {
  ClinferShape x_shape;
  int rank;                       /* of the outer index space */
  int64_t dims[CLINFER_MAX_RANK]; /* outer dims, then the run's values */
  int64_t src_stride[CLINFER_MAX_RANK];  /* bytes */
  int64_t offset;                 /* bytes to the first value */
  int64_t run, run_step;          /* values per run; bytes between them */
  gsize es;
  int64_t outer;
} SliceState;

static gboolean
slice_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const SliceState *st = kernel->state;
  const guint8 *x = (const guint8 *) clinfer_tensor_get_const_data (inputs[0])
      + st->offset;
  guint8 *y = clinfer_tensor_get_data (outputs[0]);
  int64_t run_bytes = st->run * (int64_t) st->es;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->x_shape, error))
    return FALSE;
#pragma omp parallel for schedule (static) \
    if (st->outer > 1 && st->outer * run_bytes > COPY_PARALLEL_BYTES)
  for (int64_t o = 0; o < st->outer; o++) {
    int64_t rest = o, src = 0;
    guint8 *dst = y + o * run_bytes;

    for (int d = st->rank - 1; d >= 0; d--) {
      src += (rest % st->dims[d]) * st->src_stride[d];
      rest /= st->dims[d];
    }
    if (st->run_step == (int64_t) st->es)
      copy_bytes (dst, x + src, run_bytes);
    else
      for (int64_t k = 0; k < st->run; k++)
        memcpy (dst + k * (int64_t) st->es, x + src + k * st->run_step, st->es);
  }
  return TRUE;
}

gboolean
clinfer_cpu_slice_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  const ClinferTensor *vals[5] = { NULL };
  int64_t xstr[CLINFER_MAX_RANK];
  ClinferSliceParams sp;
  gboolean known = FALSE;
  SliceState *st;
  gsize es;
  int r, last;

  if (xd == NULL || node->n_outputs != 1 || xd->shape.rank < 1
      || !clinfer_shape_is_static (&xd->shape)
      || xd->type == CLINFER_TYPE_STRING
      || (es = clinfer_element_type_size (xd->type)) == 0)
    return FALSE;
  for (guint i = 1; i < MIN (node->n_inputs, 5); i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d && d->value == NULL)
      return FALSE;          /* parameters known only at run time */
    vals[i] = d ? d->value : NULL;
  }
  if (!clinfer_slice_params (node, &xd->shape, vals, &sp, &known, NULL)
      || !known)
    return FALSE;
  r = xd->shape.rank;
  for (int d = 0; d < r; d++)
    if (sp.len[d] != node->outputs[0].shape.dims[d] || sp.len[d] == 0)
      return FALSE;
  xstr[r - 1] = (int64_t) es;
  for (int d = r - 2; d >= 0; d--)
    xstr[d] = xstr[d + 1] * xd->shape.dims[d + 1];
  st = g_new0 (SliceState, 1);
  st->x_shape = xd->shape;
  st->es = es;
  for (int d = 0; d < r; d++)
    st->offset += sp.start[d] * xstr[d];
  /* The run: the last dim, and with step 1 the dims before it while the
   * ones after them are taken whole (the bytes stay contiguous). */
  last = r - 1;
  st->run = sp.len[last];
  st->run_step = (sp.len[last] > 1 ? sp.step[last] : 1) * xstr[last];
  if (st->run_step == (int64_t) es)
    while (last > 0 && sp.len[last] == xd->shape.dims[last]
        && (sp.len[last - 1] == 1 || sp.step[last - 1] == 1)) {
      last--;
      st->run *= sp.len[last];
    }
  st->rank = last;
  st->outer = 1;
  for (int d = 0; d < last; d++) {
    st->dims[d] = sp.len[d];
    st->src_stride[d] = (sp.len[d] > 1 ? sp.step[d] : 1) * xstr[d];
    st->outer *= sp.len[d];
  }
  kernel->name = g_strdup ("slice_rows");
  kernel->state = st;
  kernel->free_state = g_free;
  kernel->run = slice_run;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Transpose                                                         */

/* Transpose after dropping dims of extent 1 and merging the input dims
 * that stay adjacent and in order: when the last input dim stays last,
 * rows of it are copied whole (TRANSPOSE_ROWS); otherwise every
 * (outer index) holds a 2-D transpose between the output's last dim (c,
 * input stride @c_stride) and the input's last dim (r, output stride
 * @r_stride), done in tiles so both sides are read and written a cache
 * line at a time (TRANSPOSE_TILES). */
typedef enum { TRANSPOSE_ROWS, TRANSPOSE_TILES } TransposeKind;

#define TRANSPOSE_TILE 16

typedef struct {
  ClinferShape x_shape;
  TransposeKind kind;
  gsize es;
  int rank;                       /* outer dims */
  int64_t dims[CLINFER_MAX_RANK];
  int64_t x_stride[CLINFER_MAX_RANK], y_stride[CLINFER_MAX_RANK];  /* elements */
  int64_t outer;
  int64_t row;                    /* TRANSPOSE_ROWS: elements per row */
  int64_t n_r, n_c, r_stride, c_stride;   /* TRANSPOSE_TILES */
} TransposeState;

/* One tile of the 2-D transpose: y[r * rs + c] = x[c * cs + r]. */
#define TILE_LOOP(T)                                                         \
  for (int64_t c = c0; c < c1; c++)                                          \
    for (int64_t r = r0; r < r1; r++)                                        \
      ((T *) y)[r * st->r_stride + c] = ((const T *) x)[c * st->c_stride + r]

static void
transpose_tile (const TransposeState *st, const guint8 *x, guint8 *y,
    int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
  switch (st->es) {
    case 1: TILE_LOOP (guint8); break;
    case 2: TILE_LOOP (guint16); break;
    case 4: TILE_LOOP (guint32); break;
    default: TILE_LOOP (guint64); break;
  }
}
#undef TILE_LOOP

static gboolean
transpose_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const TransposeState *st = kernel->state;
  const guint8 *x = clinfer_tensor_get_const_data (inputs[0]);
  guint8 *y = clinfer_tensor_get_data (outputs[0]);
  int64_t tiles_c = (st->n_c + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE;
  int64_t units = st->kind == TRANSPOSE_ROWS ? st->outer : st->outer * tiles_c;
  int64_t bytes = clinfer_shape_n_elements (&st->x_shape) * (int64_t) st->es;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->x_shape, error))
    return FALSE;
  /* Units: output rows, or (outer index, band of TRANSPOSE_TILE columns
   * of the output's last dim). */
#pragma omp parallel for schedule (static) \
    if (units > 1 && bytes > COPY_PARALLEL_BYTES)
  for (int64_t u = 0; u < units; u++) {
    int64_t o = st->kind == TRANSPOSE_ROWS ? u : u / tiles_c, rest = o;
    int64_t xo = 0, yo = 0;

    for (int d = st->rank - 1; d >= 0; d--) {
      int64_t i = rest % st->dims[d];
      rest /= st->dims[d];
      xo += i * st->x_stride[d];
      yo += i * st->y_stride[d];
    }
    if (st->kind == TRANSPOSE_ROWS) {
      copy_bytes (y + yo * (int64_t) st->es, x + xo * (int64_t) st->es,
          st->row * (int64_t) st->es);
    } else {
      int64_t c0 = u % tiles_c * TRANSPOSE_TILE;
      int64_t c1 = MIN (st->n_c, c0 + TRANSPOSE_TILE);
      for (int64_t r0 = 0; r0 < st->n_r; r0 += TRANSPOSE_TILE)
        transpose_tile (st, x + xo * (int64_t) st->es,
            y + yo * (int64_t) st->es, r0, MIN (st->n_r, r0 + TRANSPOSE_TILE),
            c0, c1);
    }
  }
  return TRUE;
}

gboolean
clinfer_cpu_transpose_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  int perm[CLINFER_MAX_RANK], keep[CLINFER_MAX_RANK], p[CLINFER_MAX_RANK];
  int64_t xdims[CLINFER_MAX_RANK];
  int64_t mdims[CLINFER_MAX_RANK], mstr[CLINFER_MAX_RANK];
  int64_t ystr[CLINFER_MAX_RANK];
  int r, n = 0, m = 0, last_at = -1;
  g_autofree TransposeState *st = NULL;
  gsize es;

  if (xd == NULL || node->n_outputs != 1 || xd->shape.rank < 1
      || !clinfer_shape_is_static (&xd->shape)
      || xd->type == CLINFER_TYPE_STRING
      || (es = clinfer_element_type_size (xd->type)) == 0 || es > 8
      || (es & (es - 1)) != 0
      || !clinfer_transpose_perm (node, xd->shape.rank, perm, NULL))
    return FALSE;
  r = xd->shape.rank;
  /* The input dims of extent over 1, renumbered in order. */
  for (int d = 0, k = 0; d < r; d++)
    keep[d] = xd->shape.dims[d] > 1 ? k++ : -1;
  for (int d = 0; d < r; d++)
    if (keep[d] >= 0)
      xdims[keep[d]] = xd->shape.dims[d];
  for (int i = 0; i < r; i++)
    if (keep[perm[i]] >= 0)
      p[n++] = keep[perm[i]];
  if (n == 0) {
    p[0] = 0;
    xdims[0] = 1;
    n = 1;
  }
  /* Merge output-adjacent dims that are adjacent and in order in the
   * input: merged dim k covers input dims p[j..]. */
  {
    int first[CLINFER_MAX_RANK], count[CLINFER_MAX_RANK], rank_of[CLINFER_MAX_RANK];
    int64_t in_str[CLINFER_MAX_RANK];
    for (int i = 0; i < n; i++) {
      if (m > 0 && p[i] == first[m - 1] + count[m - 1]) {
        count[m - 1]++;
        continue;
      }
      first[m] = p[i];
      count[m] = 1;
      m++;
    }
    /* Merged dims in input order give the input strides. */
    in_str[n - 1] = 1;
    for (int d = n - 2; d >= 0; d--)
      in_str[d] = in_str[d + 1] * xdims[d + 1];
    for (int k = 0; k < m; k++) {
      mdims[k] = 1;
      for (int j = 0; j < count[k]; j++)
        mdims[k] *= xdims[first[k] + j];
      mstr[k] = in_str[first[k] + count[k] - 1];
      rank_of[k] = first[k];
    }
    ystr[m - 1] = 1;
    for (int k = m - 2; k >= 0; k--)
      ystr[k] = ystr[k + 1] * mdims[k + 1];
    /* The output dim holding the input's last dim. */
    for (int k = 0; k < m; k++)
      if (rank_of[k] + count[k] == n)
        last_at = k;
  }
  /* Rows of up to 8 bytes that stay last (1x172x309x2 -> 1x309x172x2):
   * each row is one value of a wider type, and the dims before it are
   * transposed in tiles. */
  if (last_at == m - 1 && m > 1 && mdims[m - 1] * (int64_t) es <= 8
      && ((mdims[m - 1] * es) & (mdims[m - 1] * es - 1)) == 0) {
    int64_t row = mdims[m - 1];
    es *= row;
    m--;
    for (int k = 0; k < m; k++) {
      mstr[k] /= row;
      ystr[k] /= row;
      if (mstr[k] == 1)
        last_at = k;
    }
  }
  st = g_new0 (TransposeState, 1);
  st->x_shape = xd->shape;
  st->es = es;
  st->outer = 1;
  if (last_at == m - 1) {
    st->kind = TRANSPOSE_ROWS;
    st->row = mdims[m - 1];
    for (int k = 0; k < m - 1; k++) {
      st->dims[st->rank] = mdims[k];
      st->x_stride[st->rank] = mstr[k];
      st->y_stride[st->rank] = ystr[k];
      st->outer *= mdims[k];
      st->rank++;
    }
  } else {
    st->kind = TRANSPOSE_TILES;
    st->n_c = mdims[m - 1];
    st->c_stride = mstr[m - 1];
    st->n_r = mdims[last_at];
    st->r_stride = ystr[last_at];
    for (int k = 0; k < m - 1; k++) {
      if (k == last_at)
        continue;
      st->dims[st->rank] = mdims[k];
      st->x_stride[st->rank] = mstr[k];
      st->y_stride[st->rank] = ystr[k];
      st->outer *= mdims[k];
      st->rank++;
    }
  }
  kernel->name = g_strdup (st->kind == TRANSPOSE_ROWS ? "transpose_rows"
      : "transpose_tiles");
  kernel->state = g_steal_pointer (&st);
  kernel->free_state = g_free;
  kernel->run = transpose_run;
  return TRUE;
}
