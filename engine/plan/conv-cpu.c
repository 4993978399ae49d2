/* clinfer — the CPU device's fast Conv and FusedConv (f32, 2-D, NCHW):
 * weights packed once at compile time, then a 1x1 GEMM, a depthwise or a
 * direct (implicit GEMM over a padded copy of the input) path, each
 * applying bias, residual and activation while the output tile is still
 * in registers. */
#include "plan/cpu-simd.h"
#include <omp.h>
#include <string.h>

/* Geometry values and buffers beyond these go to the reference eval: the
 * kernels index with int and scratch must stay reasonable. */
#define MAX_EXTENT (1 << 24)
#define MAX_SCRATCH_FLOATS ((gsize) 1 << 26)

/* Floats of B one 1x1 GEMM task packs: L2-sized so the packed chunk is
 * reused across all row panels from cache. */
#define GEMM_CHUNK_FLOATS 16384

typedef enum { CONV_GEMM_1X1, CONV_DEPTHWISE, CONV_DIRECT } ConvPath;

static const char *const path_names[] = { "conv1x1_gemm", "conv_depthwise",
  "conv_direct_gemm" };

typedef struct {
  const ClinferCpuSimd *simd;
  ConvPath path;
  ClinferShape x_shape;      /* the input shape the kernel was made for */
  int batch, cin, cout, group, cout_g, k;  /* k: GEMM depth */
  ClinferCpuConvGeom geom;
  ClinferCpuDwArgs dw;
  int *taps;                 /* depthwise taps, direct path B offsets */
  int chunk;                 /* 1x1: columns per task */
  gsize plane;               /* direct: floats per padded input plane */
  float *a;                  /* packed GEMM panels or depthwise weights */
  gsize a_group;             /* floats of @a per group */
  float *bias;               /* GEMM: per group, rounded up to mr */
  gsize bias_group;
  ClinferCpuEpilogue ep;
  gboolean has_z;
  int n_scratch;             /* per-thread scratch buffers */
  gsize scratch_floats;      /* floats per buffer */
  float *scratch;
  /* Held while a run uses @scratch: a compiled model may run in several
   * requests at once, and a run that finds it taken uses its own. */
  GMutex lock;
} ConvState;

static void
conv_state_free (gpointer data)
{
  ConvState *st = data;

  g_free (st->taps);
  g_aligned_free (st->a);
  g_aligned_free (st->bias);
  g_aligned_free (st->scratch);
  g_mutex_clear (&st->lock);
  g_free (st);
}

/* ---------------------------------------------------------------- */
/* Run                                                               */

/* Threads for a run: the paths with per-thread scratch cannot use more
 * threads than they have buffers. */
static int
n_threads (const ConvState *st)
{
  if (st->path == CONV_DIRECT)
    return MAX (1, omp_get_max_threads ());
  return MAX (1, MIN (omp_get_max_threads (), st->n_scratch));
}

static float *
thread_scratch (const ConvState *st, float *scratch)
{
  return scratch + (gsize) omp_get_thread_num () * st->scratch_floats;
}

/* Splits @tasks over @nt threads: row parts (multiples of mr) when there
 * are fewer tasks than threads. */
static void
row_parts (const ConvState *st, int64_t tasks, int nt, int64_t *parts,
    int64_t *per_part)
{
  int64_t panels = (st->cout_g + st->simd->mr - 1) / st->simd->mr;

  *parts = tasks >= nt ? 1 : MIN (panels, (nt + tasks - 1) / tasks);
  *per_part = (panels + *parts - 1) / *parts * st->simd->mr;
}

/* 1x1: tasks are (image, column chunk, row part). */
static void
run_gemm_1x1 (const ConvState *st, const float *x, const float *z, float *y,
    float *scratch)
{
  const ClinferCpuSimd *s = st->simd;
  int64_t cols = (int64_t) st->geom.ih * st->geom.iw;
  int64_t nb = (cols + st->chunk - 1) / st->chunk, parts, per_part;
  int nt = n_threads (st);
  int64_t tasks = (int64_t) st->batch * nb;

  row_parts (st, tasks, nt, &parts, &per_part);
#pragma omp parallel for num_threads (nt) schedule (static)
  for (int64_t t = 0; t < tasks * parts; t++) {
    int64_t part = t % parts, jb = t / parts % nb, b = t / parts / nb;
    int64_t j0 = jb * st->chunk, r0 = part * per_part;
    int nc = (int) MIN (st->chunk, cols - j0);
    int rows = (int) MIN (per_part, st->cout - r0);
    int64_t ybase = (b * st->cout + r0) * cols + j0;
    float *scr = thread_scratch (st, scratch);

    if (rows <= 0)
      continue;
    s->pack_b (scr, x + b * st->cin * cols + j0, cols, st->k, nc);
    s->gemm (rows, st->k, st->a + (gsize) r0 * st->k, st->bias + r0, scr, nc,
        y + ybase, cols, z ? z + ybase : NULL, cols, &st->ep);
  }
}

/* Direct: per (image, group) the input planes are padded once (shared),
 * then tasks are (output row, row part) reading B through offsets. */
static void
run_direct (const ConvState *st, const float *x, const float *z, float *y,
    float *scratch)
{
  const ClinferCpuConvGeom *g = &st->geom;
  const ClinferCpuSimd *s = st->simd;
  int64_t in_plane = (int64_t) g->ih * g->iw, cols = (int64_t) g->oh * g->ow;
  int64_t parts, per_part;
  int nt = n_threads (st);

  row_parts (st, g->oh, nt, &parts, &per_part);
#pragma omp parallel num_threads (nt)
  for (int64_t bg = 0; bg < (int64_t) st->batch * st->group; bg++) {
    int64_t b = bg / st->group, grp = bg % st->group;
    const float *xg = x + (b * st->cin + grp * g->cin_g) * in_plane;

#pragma omp for schedule (static)
    for (int ic = 0; ic < g->cin_g; ic++)
      s->pad_plane (g, st->dw.hp, st->dw.pw, xg + ic * in_plane,
          scratch + ic * st->plane);
#pragma omp for schedule (static)
    for (int64_t t = 0; t < g->oh * parts; t++) {
      int64_t oy = t / parts, r0 = t % parts * per_part;
      int rows = (int) MIN (per_part, st->cout_g - r0);
      int64_t ybase = (b * st->cout + grp * st->cout_g + r0) * cols + oy * g->ow;

      if (rows <= 0)
        continue;
      s->gemm_indirect (rows, st->k,
          st->a + grp * st->a_group + (gsize) r0 * st->k,
          st->bias + grp * st->bias_group + r0,
          scratch + oy * g->sh * st->dw.pw, st->taps, g->ow, y + ybase,
          cols, z ? z + ybase : NULL, cols, &st->ep);
    }
  }
}

static void
run_depthwise (const ConvState *st, const float *x, const float *z, float *y,
    float *scratch)
{
  const ClinferCpuConvGeom *g = &st->geom;
  int64_t planes = (int64_t) st->batch * st->cout;
  int64_t in_plane = (int64_t) g->ih * g->iw, out_plane = (int64_t) g->oh * g->ow;
  int nt = n_threads (st);

#pragma omp parallel for num_threads (nt) schedule (static)
  for (int64_t p = 0; p < planes; p++) {
    int64_t c = p % st->cout;
    st->simd->depthwise (&st->dw, x + p * in_plane, st->a + c * st->dw.n_taps,
        st->bias[c], z ? z + p * out_plane : NULL, y + p * out_plane,
        thread_scratch (st, scratch));
  }
}

static void
conv_dispatch (const ConvState *st, ClinferTensor *const *inputs,
    ClinferTensor *const *outputs, const float *z, float *scratch)
{
  const float *x = clinfer_tensor_get_const_data (inputs[0]);
  float *y = clinfer_tensor_get_data (outputs[0]);

  if (st->path == CONV_DEPTHWISE)
    run_depthwise (st, x, z, y, scratch);
  else if (st->path == CONV_DIRECT)
    run_direct (st, x, z, y, scratch);
  else
    run_gemm_1x1 (st, x, z, y, scratch);
}

static gboolean
conv_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  ConvState *st = kernel->state;
  const float *z = NULL;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->x_shape, error))
    return FALSE;
  if (st->has_z && inputs[3])
    z = clinfer_tensor_get_const_data (inputs[3]);
  if (g_mutex_trylock (&st->lock)) {
    conv_dispatch (st, inputs, outputs, z, st->scratch);
    g_mutex_unlock (&st->lock);
  } else {
    /* Another request runs this kernel now: the rare concurrent case pays
     * for its own scratch rather than every run paying for a lock wait. */
    float *own = g_aligned_alloc0 (st->scratch_floats * st->n_scratch,
        sizeof (float), 64);
    conv_dispatch (st, inputs, outputs, z, own);
    g_aligned_free (own);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Preparation                                                       */

/* A in panels of mr rows per group: panel p, depth kk, row r at
 * ((p * k) + kk) * mr + r; W is [cout, k] row-major. */
static void
pack_gemm_weights (ConvState *st, const float *w, const float *b)
{
  int mr = st->simd->mr;
  int64_t panels = (st->cout_g + mr - 1) / mr;

  st->a_group = (gsize) panels * mr * st->k;
  st->bias_group = (gsize) panels * mr;
  st->a = g_aligned_alloc0 (st->a_group * st->group, sizeof (float), 64);
  st->bias = g_aligned_alloc0 (st->bias_group * st->group, sizeof (float), 64);
  for (int grp = 0; grp < st->group; grp++)
    for (int m = 0; m < st->cout_g; m++) {
      int oc = grp * st->cout_g + m;
      float *pa = st->a + grp * st->a_group + (gsize) (m / mr) * st->k * mr + m % mr;
      for (int kk = 0; kk < st->k; kk++)
        pa[(gsize) kk * mr] = w[(gsize) oc * st->k + kk];
      st->bias[grp * st->bias_group + m] = b ? b[oc] : 0.f;
    }
}

/* Padded, phase-split plane geometry (cpu-simd.h); FALSE when a plane
 * would exceed the scratch limit (computed in int64: the factors are each
 * bounded, their products are not). */
static gboolean
padded_geometry (ConvState *st)
{
  const ClinferCpuConvGeom *g = &st->geom;
  ClinferCpuDwArgs *dw = &st->dw;
  int64_t wn = (int64_t) (g->ow - 1) * g->sw + (int64_t) (g->kw - 1) * g->dw + 1;
  int64_t hp = (int64_t) (g->oh - 1) * g->sh + (int64_t) (g->kh - 1) * g->dh + 1;
  int64_t pw = (wn + g->sw - 1) / g->sw;

  if (hp > MAX_EXTENT || pw > MAX_EXTENT
      || (guint64) hp * pw * g->sw > MAX_SCRATCH_FLOATS)
    return FALSE;
  dw->g = *g;
  dw->ep = st->ep;
  dw->hp = hp;
  dw->pw = pw;
  dw->n_taps = g->kh * g->kw;
  st->plane = (gsize) g->sw * dw->hp * dw->pw;
  return TRUE;
}

static int
tap_offset (const ConvState *st, int ky, int kx)
{
  const ClinferCpuConvGeom *g = &st->geom;
  int off = kx * g->dw;

  return ((off % g->sw) * st->dw.hp + ky * g->dh) * st->dw.pw + off / g->sw;
}

static void
prepare_depthwise (ConvState *st, const float *w, const float *b)
{
  ClinferCpuDwArgs *dw = &st->dw;
  const ClinferCpuConvGeom *g = &st->geom;

  st->taps = g_new (int, dw->n_taps);
  for (int ky = 0; ky < g->kh; ky++)
    for (int kx = 0; kx < g->kw; kx++)
      st->taps[ky * g->kw + kx] = tap_offset (st, ky, kx);
  dw->taps = st->taps;
  st->a = g_aligned_alloc (st->cout * dw->n_taps, sizeof (float), 64);
  memcpy (st->a, w, sizeof (float) * st->cout * dw->n_taps);
  st->bias = g_aligned_alloc0 (st->cout, sizeof (float), 64);
  for (int c = 0; c < st->cout && b; c++)
    st->bias[c] = b[c];
  st->scratch_floats = st->plane;
}

/* B row (ic, ky, kx) of the implicit im2col matrix is tap (ky, kx) of
 * padded plane ic. */
static void
prepare_direct (ConvState *st)
{
  const ClinferCpuConvGeom *g = &st->geom;
  int kk = 0;

  st->taps = g_new (int, st->k);
  for (int ic = 0; ic < g->cin_g; ic++)
    for (int ky = 0; ky < g->kh; ky++)
      for (int kx = 0; kx < g->kw; kx++)
        st->taps[kk++] = ic * st->plane + tap_offset (st, ky, kx);
}

gboolean
clinfer_cpu_conv_geom_from_window (const ClinferWindow *win,
    ClinferCpuConvGeom *g)
{
  const int64_t v[] = { win->in[0], win->in[1], win->out[0], win->out[1],
    win->kernel[0], win->kernel[1], win->stride[0], win->stride[1],
    win->dilation[0], win->dilation[1], win->pad_begin[0], win->pad_begin[1],
    win->pad_end[0], win->pad_end[1] };

  if (win->n != 2)
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
    if (v[i] < 0 || v[i] > MAX_EXTENT)
      return FALSE;
  memset (g, 0, sizeof (*g));
  g->ih = win->in[0];
  g->iw = win->in[1];
  g->oh = win->out[0];
  g->ow = win->out[1];
  g->kh = win->kernel[0];
  g->kw = win->kernel[1];
  g->sh = win->stride[0];
  g->sw = win->stride[1];
  g->dh = win->dilation[0];
  g->dw = win->dilation[1];
  g->pt = win->pad_begin[0];
  g->pl = win->pad_begin[1];
  return TRUE;
}

/* Fills the geometry; FALSE when an extent is beyond what the kernels
 * index. */
static gboolean
fill_geometry (ConvState *st, const ClinferShape *xs, const ClinferShape *ws,
    const ClinferWindow *win, int64_t group)
{
  const int64_t v[] = { xs->dims[0], xs->dims[1], ws->dims[0] };
  ClinferCpuConvGeom *g = &st->geom;

  for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
    if (v[i] < 0 || v[i] > MAX_EXTENT)
      return FALSE;
  if (!clinfer_cpu_conv_geom_from_window (win, g))
    return FALSE;
  st->x_shape = *xs;
  st->batch = xs->dims[0];
  st->cin = xs->dims[1];
  st->cout = ws->dims[0];
  st->group = group;
  st->cout_g = st->cout / group;
  g->cin_g = st->cin / group;
  if ((int64_t) g->cin_g * g->kh * g->kw > MAX_EXTENT)
    return FALSE;
  st->k = g->cin_g * g->kh * g->kw;
  return st->batch > 0 && st->cout > 0 && g->oh > 0 && g->ow > 0;
}

static ConvPath
choose_path (const ConvState *st, const ClinferWindow *win)
{
  const ClinferCpuConvGeom *g = &st->geom;

  if (st->group == st->cin && st->cout == st->cin)
    return CONV_DEPTHWISE;
  if (st->group == 1 && g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1
      && g->pt == 0 && g->pl == 0 && win->pad_end[0] == 0 && win->pad_end[1] == 0)
    return CONV_GEMM_1X1;
  return CONV_DIRECT;
}

/* Weights, offsets and scratch of the chosen path; FALSE when the scratch
 * would be unreasonably large (the reference eval runs instead). */
static gboolean
prepare_path (ConvState *st, const float *w, const float *b)
{
  int nr = st->simd->nr;

  st->n_scratch = MAX (1, omp_get_max_threads ());
  if ((gsize) st->geom.cin_g > MAX_SCRATCH_FLOATS / MAX (st->plane, 1))
    return FALSE;
  if (st->path == CONV_DEPTHWISE) {
    prepare_depthwise (st, w, b);
  } else {
    pack_gemm_weights (st, w, b);
    if (st->path == CONV_DIRECT) {
      prepare_direct (st);
      /* One shared set of padded planes, plus the over-read of a tile. */
      st->n_scratch = 1;
      st->scratch_floats = st->plane * st->geom.cin_g + nr;
    } else {
      st->chunk = MAX (nr, GEMM_CHUNK_FLOATS / MAX (st->k, 1) / nr * nr);
      st->scratch_floats = (gsize) st->k * st->chunk;
    }
  }
  /* Rounded to whole cache lines so threads do not share one. */
  st->scratch_floats = (st->scratch_floats + 15) & ~(gsize) 15;
  if (st->scratch_floats > MAX_SCRATCH_FLOATS / st->n_scratch)
    return FALSE;
  st->scratch = g_aligned_alloc0 (st->scratch_floats * st->n_scratch,
      sizeof (float), 64);
  return TRUE;
}

static void
fill_epilogue (const ClinferNode *node, ConvState *st)
{
  const ClinferConvParams *p = node->op_data;

  st->ep.act = p->act;
  st->ep.min = p->act_min;
  st->ep.max = p->act_max;
  st->ep.alpha = p->act_alpha;
  st->has_z = node->n_inputs > 3 && node->inputs[3].node != NULL;
}

/* The node's ports when the fast kernel applies to it, else FALSE. */
static gboolean
applicable (const ClinferNode *node, ClinferPortDesc **x, ClinferPortDesc **w,
    const float **bias)
{
  ClinferPortDesc *b = node->n_inputs > 2 ? clinfer_node_input_desc (node, 2) : NULL;

  *x = clinfer_node_input_desc (node, 0);
  *w = clinfer_node_input_desc (node, 1);
  if (node->op_data == NULL || *x == NULL || *w == NULL
      || (*x)->type != CLINFER_TYPE_F32 || (*x)->shape.rank != 4
      || !clinfer_shape_is_static (&(*x)->shape) || (*w)->value == NULL
      || clinfer_tensor_get_element_type ((*w)->value) != CLINFER_TYPE_F32
      || (b && (b->value == NULL
              || clinfer_tensor_get_element_type (b->value) != CLINFER_TYPE_F32)))
    return FALSE;
  *bias = b ? clinfer_tensor_get_const_data (b->value) : NULL;
  return TRUE;
}

gboolean
clinfer_cpu_conv_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  const ClinferConvParams *p = node->op_data;
  ClinferPortDesc *xd, *wd;
  const float *bias;
  ClinferWindow win;
  ConvState *st;

  if (!applicable (node, &xd, &wd, &bias))
    return FALSE;
  if (!clinfer_conv_window (node, &xd->shape, &wd->shape, &win, error))
    return FALSE;
  st = g_new0 (ConvState, 1);
  g_mutex_init (&st->lock);
  st->simd = clinfer_cpu_simd_get (isa);
  if (!fill_geometry (st, &xd->shape, clinfer_tensor_get_shape (wd->value),
          &win, p->group)) {
    conv_state_free (st);
    return FALSE;
  }
  fill_epilogue (node, st);
  st->path = choose_path (st, &win);
  if ((st->path != CONV_GEMM_1X1 && !padded_geometry (st))
      || !prepare_path (st, clinfer_tensor_get_const_data (wd->value), bias)) {
    conv_state_free (st);
    return FALSE;
  }
  kernel->name = g_strdup_printf ("%s_%s", path_names[st->path],
      st->simd->isa_name);
  kernel->state = st;
  kernel->free_state = conv_state_free;
  kernel->run = conv_run;
  return TRUE;
}
