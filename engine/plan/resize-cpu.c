/* clinfer — the CPU device's Resize / Upsample (f32, parameters known at
 * compile time, no tf_crop_and_resize extrapolation), for what oneDNN's
 * resampling leaves (linear in align_corners or asymmetric mode, nearest
 * at scales other than whole factors, ranks other than 4):
 * - nearest, any rank: the input index of every output index of every
 *   dim is computed once, when the kernel is made; each output row
 *   gathers its input row through the last dim's map;
 * - linear on the last two dims (the others unchanged): each output row
 *   is wy0 * h (iy0) + wy1 * h (iy1), h (iy) input row iy resampled along
 *   the last dim. A thread walks its output rows in order and keeps the
 *   two h rows it made last, so each is made about once. A leading dim
 *   whose taps read only their own index (pytorch_half_pixel gives a dim
 *   of length 1 the coordinate -0.5: taps 0.5 and 0.5 of index 0) is one
 *   more pass over the output, w0 v + w1 v, as the reference's.
 * The arithmetic is the reference eval's (engine/ops/resize.c), in the
 * same order, so the results are the same to the bit. */
#include "plan/cpu-kernels.h"
#include "ops/resize.h"
#include <omp.h>
#include <string.h>

/* Steps of at least this many output values split between the threads. */
#define RESIZE_SPLIT_VALUES 32768

typedef struct {
  ClinferShape x_shape;
  gboolean linear;
  int rank;
  int64_t in[CLINFER_MAX_RANK], out[CLINFER_MAX_RANK];
  int64_t *map[CLINFER_MAX_RANK];   /* nearest: input index per output index */
  int64_t in_stride[CLINFER_MAX_RANK];
  /* linear: per output index of H and W, two input indices and weights;
   * NULL where the dim is unchanged */
  ClinferResizeTap *th, *tw;
  /* linear: taps of a leading dim that read only their own index, else
   * NULL */
  ClinferResizeTap *self[CLINFER_MAX_RANK];
  int64_t planes, ih, iw, oh, ow;
  int n_scratch;
  float *scratch;            /* per thread: two h rows of ow floats */
  GMutex lock;
} ResizeState;

static void
resize_state_free (gpointer data)
{
  ResizeState *st = data;

  for (int i = 0; i < CLINFER_MAX_RANK; i++) {
    g_free (st->map[i]);
    g_free (st->self[i]);
  }
  g_free (st->th);
  g_free (st->tw);
  g_free (st->scratch);
  g_mutex_clear (&st->lock);
  g_free (st);
}

/* ---------------------------------------------------------------- */
/* Run                                                               */

static void
run_nearest (const ResizeState *st, const float *x, float *y)
{
  int r = st->rank;
  int64_t inner = st->out[r - 1], rows = 1;

  for (int i = 0; i < r - 1; i++)
    rows *= st->out[i];
#pragma omp parallel for schedule (static) \
    if (rows * inner >= RESIZE_SPLIT_VALUES)
  for (int64_t row = 0; row < rows; row++) {
    int64_t rest = row, off = 0;
    const int64_t *m = st->map[r - 1];
    const float *src;
    float *dst = y + row * inner;

    for (int i = r - 2; i >= 0; i--) {
      off += st->map[i][rest % st->out[i]] * st->in_stride[i];
      rest /= st->out[i];
    }
    src = x + off;
    for (int64_t j = 0; j < inner; j++)
      dst[j] = src[m[j]];
  }
}

/* Input row @src resampled along W into @h (the reference's first
 * pass: 0 + w0 s[i0] + w1 s[i1]). */
static void
h_row (const ResizeState *st, const float *src, float *h)
{
  for (int64_t j = 0; j < st->ow; j++) {
    const ClinferResizeTap *t = &st->tw[j];
    float acc = 0.f;
    acc += t->w[0] * src[t->idx[0]];
    acc += t->w[1] * src[t->idx[1]];
    h[j] = acc;
  }
}

/* The h row of input row @iy of @plane: the input row itself when W is
 * unchanged, else one of the two cached rows (made when missing). */
static const float *
cached_h (const ResizeState *st, const float *x, int64_t plane, int64_t iy,
    float *buf[2], int64_t tag[2], int *next)
{
  int64_t key = plane * st->ih + iy;
  const float *src = x + key * st->iw;

  if (st->tw == NULL)
    return src;
  for (int k = 0; k < 2; k++)
    if (tag[k] == key) {
      *next = 1 - k;         /* keep this one for the other tap */
      return buf[k];
    }
  /* Replace the one not used last. */
  h_row (st, src, buf[*next]);
  tag[*next] = key;
  *next = 1 - *next;
  return buf[1 - *next];
}

static void
run_linear (const ResizeState *st, const float *x, float *y, float *scratch)
{
  int64_t total = st->planes * st->oh;
  gboolean split = total * st->ow >= RESIZE_SPLIT_VALUES;

#pragma omp parallel if (split) \
    num_threads (MIN (st->n_scratch, omp_get_max_threads ()))
  {
    int nt = omp_get_num_threads (), t = omp_get_thread_num ();
    int64_t r0 = total * t / nt, r1 = total * (t + 1) / nt;
    float *buf[2] = { scratch + (gsize) t * 2 * st->ow,
      scratch + ((gsize) t * 2 + 1) * st->ow };
    int64_t tag[2] = { -1, -1 };
    int next = 0;

    for (int64_t r = r0; r < r1; r++) {
      int64_t plane = r / st->oh, oy = r % st->oh;
      float *dst = y + r * st->ow;
      if (st->th == NULL) {
        const float *h = cached_h (st, x, plane, oy, buf, tag, &next);
        memcpy (dst, h, st->ow * sizeof (float));
        continue;
      }
      {
        const ClinferResizeTap *ty = &st->th[oy];
        const float *h0 = cached_h (st, x, plane, ty->idx[0], buf, tag, &next);
        const float *h1 = cached_h (st, x, plane, ty->idx[1], buf, tag, &next);
        float w0 = ty->w[0], w1 = ty->w[1];
        for (int64_t j = 0; j < st->ow; j++) {
          float acc = 0.f;
          acc += w0 * h0[j];
          acc += w1 * h1[j];
          dst[j] = acc;
        }
      }
    }
  }
}

/* The passes of the leading dims whose taps read their own index, last
 * dim first as the reference applies them: (0 + w0 v) + w1 v. */
static void
run_self_taps (const ResizeState *st, float *y)
{
  for (int i = st->rank - 3; i >= 0; i--) {
    int64_t outer = 1, inner = 1, n = st->out[i];

    if (st->self[i] == NULL)
      continue;
    for (int k = 0; k < i; k++)
      outer *= st->out[k];
    for (int k = i + 1; k < st->rank; k++)
      inner *= st->out[k];
#pragma omp parallel for schedule (static) \
    if (outer * n * inner >= RESIZE_SPLIT_VALUES)
    for (int64_t row = 0; row < outer * n; row++) {
      const ClinferResizeTap *t = &st->self[i][row % n];
      float *v = y + row * inner;
      for (int64_t j = 0; j < inner; j++) {
        float acc = 0.f;
        acc += t->w[0] * v[j];
        acc += t->w[1] * v[j];
        v[j] = acc;
      }
    }
  }
}

static gboolean
resize_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  ResizeState *st = kernel->state;
  const float *x = clinfer_tensor_get_const_data (inputs[0]);
  float *y = clinfer_tensor_get_data (outputs[0]);

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->x_shape, error))
    return FALSE;
  if (!st->linear) {
    run_nearest (st, x, y);
  } else if (g_mutex_trylock (&st->lock)) {
    run_linear (st, x, y, st->scratch);
    g_mutex_unlock (&st->lock);
  } else {
    /* Another request runs this kernel now: its own h rows. */
    float *own = g_new (float, (gsize) st->n_scratch * 2 * st->ow);
    run_linear (st, x, y, own);
    g_free (own);
  }
  if (st->linear)
    run_self_taps (st, y);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Preparation                                                       */

/* Linear: H and W taps (two each, in range), every other dim unchanged. */
static gboolean
prepare_linear (ResizeState *st, ClinferResizeGeometry *g)
{
  int r = st->rank;

  if (g->n_taps != 2 || r < 2)
    return FALSE;
  for (int i = 0; i < r - 2; i++) {
    if (st->out[i] != st->in[i])
      return FALSE;
    for (int64_t o = 0; g->taps[i] && o < st->out[i]; o++)
      if (g->taps[i][o].extrap || g->taps[i][o].idx[0] != o
          || g->taps[i][o].idx[1] != o)
        return FALSE;
    st->self[i] = g_steal_pointer (&g->taps[i]);
  }
  for (int i = r - 2; i < r; i++)
    for (int64_t o = 0; g->taps[i] && o < st->out[i]; o++)
      if (g->taps[i][o].extrap)
        return FALSE;
  st->planes = 1;
  for (int i = 0; i < r - 2; i++)
    st->planes *= st->in[i];
  st->ih = st->in[r - 2];
  st->iw = st->in[r - 1];
  st->oh = st->out[r - 2];
  st->ow = st->out[r - 1];
  st->th = g_steal_pointer (&g->taps[r - 2]);
  st->tw = g_steal_pointer (&g->taps[r - 1]);
  st->n_scratch = MAX (1, omp_get_max_threads ());
  st->scratch = g_new (float, (gsize) st->n_scratch * 2 * st->ow);
  return TRUE;
}

static gboolean
prepare_nearest (ResizeState *st, ClinferResizeGeometry *g)
{
  for (int i = 0; i < st->rank; i++) {
    if (g->taps[i] == NULL)
      return FALSE;
    st->map[i] = g_new (int64_t, st->out[i]);
    for (int64_t o = 0; o < st->out[i]; o++) {
      if (g->taps[i][o].extrap)
        return FALSE;
      st->map[i][o] = g->taps[i][o].idx[0];
    }
  }
  return TRUE;
}

gboolean
clinfer_cpu_resize_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  ClinferResizeGeometry g;
  ResizeState *st;
  gboolean ok;

  if (xd == NULL || xd->type != CLINFER_TYPE_F32 || xd->shape.rank < 1
      || !clinfer_shape_is_static (&xd->shape)
      || node->outputs[0].type != CLINFER_TYPE_F32
      || clinfer_shape_n_elements (&node->outputs[0].shape) == 0
      || clinfer_shape_n_elements (&xd->shape) == 0
      || !clinfer_resize_const_geometry (node, &g))
    return FALSE;
  st = g_new0 (ResizeState, 1);
  g_mutex_init (&st->lock);
  st->x_shape = xd->shape;
  st->rank = xd->shape.rank;
  for (int i = 0; i < st->rank; i++) {
    st->in[i] = xd->shape.dims[i];
    st->out[i] = g.out[i];
  }
  st->in_stride[st->rank - 1] = 1;
  for (int i = st->rank - 2; i >= 0; i--)
    st->in_stride[i] = st->in_stride[i + 1] * st->in[i + 1];
  st->linear = g.mode == CLINFER_RESIZE_LINEAR;
  if (g.mode == CLINFER_RESIZE_NEAREST)
    ok = prepare_nearest (st, &g);
  else
    ok = st->linear && prepare_linear (st, &g);
  clinfer_resize_geometry_clear (&g);
  if (!ok) {
    resize_state_free (st);
    return FALSE;
  }
  kernel->name = g_strdup (st->linear ? "resize_linear_rows"
      : "resize_nearest_rows");
  kernel->state = st;
  kernel->free_state = resize_state_free;
  kernel->run = resize_run;
  return TRUE;
}
