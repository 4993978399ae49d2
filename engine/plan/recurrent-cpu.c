/* clinfer — the CPU device's RNN, GRU and LSTM in f32: constant W, R, B
 * and peepholes; anything else the op takes (any activations, clip,
 * input_forget, sequence_lens, direction, layout and initial state).
 * Other configurations (and runs too long for the scratch) take the
 * reference eval (ops/recurrent.c, whose comment has the equations).
 *
 * Per direction, X W^T + Wb (+ Rb) of every step is one GEMM (W^T packed
 * at compile time). Each step is then one vector-matrix product per
 * batch entry, H R^T, on R^T packed in column panels: the recurrent
 * weights (4 MB per direction for a 512-unit LSTM) are read once per
 * step, in order, four panels at a time (gemv ()); Sigmoid, Tanh and
 * Relu gates are vector rows (unary_row ()), the other activations the
 * reference's scalar functions. With sequence_lens, batch entry b runs
 * its first len[b] steps as the reference's does. A bidirectional op
 * runs one direction per thread; one direction splits its input GEMM's
 * columns over the threads. */
#include "plan/cpu-simd.h"
#include <math.h>
#include <omp.h>
#include <string.h>

enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P };

/* unary_row () ops */
#define OP_RELU 0
#define OP_SIGMOID 5
#define OP_TANH 6

/* Scratch floats of one direction at most; longer runs (their X W^T for
 * every step is kept) take the reference eval. */
#define MAX_DIR_SCRATCH_FLOATS ((gsize) 64 << 20)

typedef struct {
  float *w;                  /* W^T in pack_b () panels: input rows, gh
                              * columns */
  float *ra;                 /* R^T's columns [0, na) in panels: hid rows */
  float *rc;                 /* GRU: R^T's h columns [2 hid, 3 hid) in
                              * panels, else NULL */
  float *bias;               /* [gh], added to each row of X W^T: Wb + Rb
                              * (GRU with linear_before_reset: Wb only in
                              * the h block) */
  float *rbh;                /* GRU with linear_before_reset: Rb's h block
                              * [hid], else NULL */
  float *p;                  /* LSTM peepholes [3 hid] (i, o, f), or NULL */
} RecDir;

typedef struct {
  ClinferRecurrentInfo info;
  const ClinferCpuSimd *simd;
  ClinferShape x_shape;
  ClinferShape lens_shape;   /* [batch] */
  int seq, batch, input, hid, gh;
  int na;                    /* columns of ra: gh, GRU 2 hid */
  int m, mr;                 /* the input GEMM's rows (seq x batch) and
                              * panel rows */
  RecDir dir[2];
  float *zeros;              /* the input GEMM's row bias: m rounded up to
                              * mr zeros */
  /* One direction's scratch, in floats: X in panels, X W^T, the gates,
   * H, C and a row of hid. */
  gsize a_floats, xw_floats, g_floats, state_floats, dir_floats;
  float *scratch;            /* n_dirs * dir_floats */
  /* Held while a run uses @scratch (conv-cpu.c has the same scheme). */
  GMutex lock;
} RecState;

static void
rec_state_free (gpointer data)
{
  RecState *st = data;

  for (int d = 0; d < 2; d++) {
    g_aligned_free (st->dir[d].w);
    g_aligned_free (st->dir[d].ra);
    g_aligned_free (st->dir[d].rc);
    g_aligned_free (st->dir[d].bias);
    g_aligned_free (st->dir[d].rbh);
    g_aligned_free (st->dir[d].p);
  }
  g_aligned_free (st->zeros);
  g_aligned_free (st->scratch);
  g_mutex_clear (&st->lock);
  g_free (st);
}

/* ---------------------------------------------------------------- */
/* Run                                                               */

/* What one direction reads and writes (outputs and initial states may be
 * NULL). */
typedef struct {
  const float *x, *h0, *c0;
  const int32_t *lens;       /* sequence_lens (checked), or NULL */
  float *y, *yh, *yc;
} RecIo;

static inline gsize
state_off (const RecState *st, int dir, int b)
{
  return ((gsize) (st->info.layout ? b * st->info.n_dirs + dir
          : dir * st->batch + b)) * st->hid;
}

/* X's row (and X W^T's) of step @t, batch entry @b. */
static inline gsize
x_row (const RecState *st, int t, int b)
{
  return st->info.layout ? (gsize) b * st->seq + t : (gsize) t * st->batch + b;
}

static inline gsize
y_off (const RecState *st, int dir, int t, int b)
{
  int nd = st->info.n_dirs;

  return (st->info.layout ? ((gsize) b * st->seq + t) * nd + dir
      : ((gsize) t * nd + dir) * st->batch + b) * st->hid;
}

/* Column panels [p0, p1) of X W^T + bias. */
static void
input_gemm (const RecState *st, const RecDir *rd, const float *a, float *xw,
    int p0, int p1)
{
  int nr = st->simd->nr, c0 = p0 * nr;

  if (p1 <= p0)
    return;
  st->simd->gemm_rows (st->mr, st->m, st->input, a, st->zeros,
      rd->w + (gsize) p0 * st->input * nr, MIN (p1 * nr, st->gh) - c0,
      xw + c0, st->gh, rd->bias + c0, 0, 0);
}

/* @act over @n values of @x into @y: Sigmoid, Tanh and Relu as vector
 * rows, the others as the reference eval computes them. */
static void
act_row (const RecState *st, const ClinferRecurrentAct *act, const float *x,
    float *y, int n)
{
  switch (act->kind) {
    case CLINFER_REC_ACT_SIGMOID:
      st->simd->unary_row (OP_SIGMOID, x, y, n);
      break;
    case CLINFER_REC_ACT_TANH:
      st->simd->unary_row (OP_TANH, x, y, n);
      break;
    case CLINFER_REC_ACT_RELU:
      st->simd->unary_row (OP_RELU, x, y, n);
      break;
    default:
      clinfer_op_recurrent_act_row (act, x, y, n);
      break;
  }
}

/* act_row () of gate pre-activations @x, clipped to [-clip, clip] in
 * place first when the node has a clip, as the reference eval's gate ()
 * does (the cell state's activation is not a gate: act_row ()). */
static void
gate_row (const RecState *st, const ClinferRecurrentAct *act, float *x,
    float *y, int n)
{
  float c = st->info.clip;

  if (c > 0.f)
    for (int j = 0; j < n; j++)
      x[j] = fminf (c, fmaxf (-c, x[j]));
  act_row (st, act, x, y, n);
}

/* The steps of direction @dir from X W^T (+ bias) in @xw. */
static void
run_steps (const RecState *st, int dir, const RecIo *io, const float *xw,
    float *scr)
{
  const ClinferCpuSimd *k = st->simd;
  const RecDir *rd = &st->dir[dir];
  int hid = st->hid, gh = st->gh;
  float *g = scr + st->a_floats + st->xw_floats;
  float *h = g + st->g_floats, *c = h + st->state_floats;
  float *tmp = c + st->state_floats;
  gboolean reverse = st->info.reverse || dir == 1;
  const ClinferRecurrentAct *fa = &st->info.act[dir][0];
  const ClinferRecurrentAct *ga = &st->info.act[dir][1];
  const ClinferRecurrentAct *ha = &st->info.act[dir][2];

  for (int b = 0; b < st->batch; b++) {
    float *hs = h + (gsize) b * hid, *cs = c + (gsize) b * hid;
    if (io->h0)
      memcpy (hs, io->h0 + state_off (st, dir, b), hid * sizeof (float));
    else
      memset (hs, 0, hid * sizeof (float));
    if (io->c0)
      memcpy (cs, io->c0 + state_off (st, dir, b), hid * sizeof (float));
    else
      memset (cs, 0, hid * sizeof (float));
  }
  for (int s = 0; s < st->seq; s++) {
    for (int b = 0; b < st->batch; b++) {
      int len = io->lens ? io->lens[b] : st->seq;
      int t = reverse ? len - 1 - s : s;
      const float *xr;
      float *hs = h + (gsize) b * hid, *cs = c + (gsize) b * hid;

      /* past its length, an entry keeps its state (Y stays zero) */
      if (s >= len)
        continue;
      xr = xw + x_row (st, t, b) * gh;
      k->gemv (hid, hs, rd->ra, st->na, xr, g);
      switch (st->info.kind) {
        case CLINFER_RECURRENT_RNN:
          gate_row (st, fa, g, hs, hid);
          break;
        case CLINFER_RECURRENT_GRU:
          /* gates z, r, h */
          gate_row (st, fa, g, g, 2 * hid);
          if (st->info.linear_before_reset) {
            k->gemv (hid, hs, rd->rc, hid, rd->rbh, tmp);
            for (int j = 0; j < hid; j++)
              g[2 * hid + j] = xr[2 * hid + j] + g[hid + j] * tmp[j];
          } else {
            for (int j = 0; j < hid; j++)
              tmp[j] = g[hid + j] * hs[j];
            k->gemv (hid, tmp, rd->rc, hid, xr + 2 * hid, g + 2 * hid);
          }
          gate_row (st, ga, g + 2 * hid, g + 2 * hid, hid);
          for (int j = 0; j < hid; j++)
            hs[j] = (1.f - g[j]) * g[2 * hid + j] + g[j] * hs[j];
          break;
        case CLINFER_RECURRENT_LSTM:
          /* gates i, o, f, c; peepholes i, o, f */
          if (rd->p) {
            for (int j = 0; j < hid; j++)
              g[j] += rd->p[j] * cs[j];
            if (!st->info.input_forget)
              for (int j = 0; j < hid; j++)
                g[2 * hid + j] += rd->p[2 * hid + j] * cs[j];
          }
          if (st->info.input_forget) {
            /* f = 1 - i */
            gate_row (st, fa, g, g, hid);
            for (int j = 0; j < hid; j++)
              g[2 * hid + j] = 1.f - g[j];
          } else if (rd->p) {
            gate_row (st, fa, g, g, hid);
            gate_row (st, fa, g + 2 * hid, g + 2 * hid, hid);
          } else {
            gate_row (st, fa, g, g, 3 * hid);
          }
          gate_row (st, ga, g + 3 * hid, g + 3 * hid, hid);
          for (int j = 0; j < hid; j++)
            cs[j] = g[2 * hid + j] * cs[j] + g[j] * g[3 * hid + j];
          if (rd->p) {
            for (int j = 0; j < hid; j++)
              g[hid + j] += rd->p[hid + j] * cs[j];
            gate_row (st, fa, g + hid, g + hid, hid);
          } else if (st->info.input_forget) {
            /* o was left out of the i, o, f row above */
            gate_row (st, fa, g + hid, g + hid, hid);
          }
          act_row (st, ha, cs, tmp, hid);
          for (int j = 0; j < hid; j++)
            hs[j] = g[hid + j] * tmp[j];
          break;
      }
      if (io->y)
        memcpy (io->y + y_off (st, dir, t, b), hs, hid * sizeof (float));
    }
  }
  for (int b = 0; b < st->batch; b++) {
    if (io->yh)
      memcpy (io->yh + state_off (st, dir, b), h + (gsize) b * hid,
          hid * sizeof (float));
    if (io->yc)
      memcpy (io->yc + state_off (st, dir, b), c + (gsize) b * hid,
          hid * sizeof (float));
  }
}

static void
rec_dispatch (const RecState *st, const RecIo *io, float *scratch)
{
  int nt = omp_get_max_threads ();
  int panels = (st->gh + st->simd->nr - 1) / st->simd->nr;

  if (st->info.n_dirs == 2 && nt >= 2) {
    /* one direction per thread, each with its own GEMM */
#pragma omp parallel for schedule (static) num_threads (2)
    for (int dir = 0; dir < 2; dir++) {
      float *scr = scratch + (gsize) dir * st->dir_floats;
      clinfer_cpu_pack_a (io->x, st->m, st->input, st->mr, scr);
      input_gemm (st, &st->dir[dir], scr, scr + st->a_floats, 0, panels);
      run_steps (st, dir, io, scr + st->a_floats, scr);
    }
    return;
  }
  for (int dir = 0; dir < st->info.n_dirs; dir++) {
    float *scr = scratch + (gsize) dir * st->dir_floats;
    clinfer_cpu_pack_a (io->x, st->m, st->input, st->mr, scr);
    if (nt >= 2 && panels >= 2) {
#pragma omp parallel
      {
        int n = omp_get_num_threads (), i = omp_get_thread_num ();
        input_gemm (st, &st->dir[dir], scr, scr + st->a_floats,
            panels * i / n, panels * (i + 1) / n);
      }
    } else {
      input_gemm (st, &st->dir[dir], scr, scr + st->a_floats, 0, panels);
    }
    /* the steps outside any parallel construct (nothing in them is) */
    run_steps (st, dir, io, scr + st->a_floats, scr);
  }
}

static float *
opt_out (const ClinferNode *node, ClinferTensor *const *outputs, guint i)
{
  return node->n_outputs > i && outputs[i] ? clinfer_tensor_get_data (outputs[i])
      : NULL;
}

static gboolean
rec_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  RecState *st = kernel->state;
  RecIo io;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[IN_X],
          &st->x_shape, error))
    return FALSE;
  io = (RecIo) {
    .x = clinfer_tensor_get_const_data (inputs[IN_X]),
    .h0 = clinfer_op_opt_input_data (node, inputs, IN_H0),
    .c0 = st->info.kind == CLINFER_RECURRENT_LSTM
        ? clinfer_op_opt_input_data (node, inputs, IN_C0) : NULL,
    .lens = clinfer_op_opt_input_data (node, inputs, IN_LENS),
    .y = opt_out (node, outputs, 0), .yh = opt_out (node, outputs, 1),
    .yc = opt_out (node, outputs, 2),
  };
  if (io.lens) {
    if (!clinfer_cpu_kernel_check_shape (kernel, node, "sequence_lens",
            inputs[IN_LENS], &st->lens_shape, error)
        || !clinfer_op_recurrent_check_lens (node, io.lens, st->batch,
            st->seq, error))
      return FALSE;
    /* steps past an entry's length stay zero in Y */
    if (io.y)
      memset (io.y, 0, clinfer_tensor_get_byte_size (outputs[0]));
  }
  if (g_mutex_trylock (&st->lock)) {
    rec_dispatch (st, &io, st->scratch);
    g_mutex_unlock (&st->lock);
  } else {
    float *own = g_aligned_alloc (st->dir_floats * st->info.n_dirs,
        sizeof (float), 64);
    rec_dispatch (st, &io, own);
    g_aligned_free (own);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Preparation                                                       */

static const float *
const_f32 (const ClinferPortDesc *d)
{
  return d && d->value && d->type == CLINFER_TYPE_F32
      ? clinfer_tensor_get_const_data (d->value) : NULL;
}

static gsize
round16 (gsize n)
{
  return (n + 15) & ~(gsize) 15;
}

/* Columns [c0, c0 + cols) of @src^T in pack_b () panels: @src is
 * row-major with @rows floats a row (W [gh][input], R [gh][hid]), so
 * its row j is column j of the [rows][gh] transpose. */
static float *
pack_transposed (const ClinferCpuSimd *k, const float *src, int rows, int c0,
    int cols)
{
  g_autofree float *t = g_new (float, (gsize) rows * cols);
  int panels = (cols + k->nr - 1) / k->nr;
  float *dst = g_aligned_alloc0 ((gsize) panels * rows * k->nr,
      sizeof (float), 64);

  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      t[(gsize) i * cols + j] = src[(gsize) (c0 + j) * rows + i];
  k->pack_b (dst, t, cols, rows, cols);
  return dst;
}

static void
pack_direction (RecState *st, int dir, const float *w, const float *r,
    const float *b, const float *p)
{
  const ClinferCpuSimd *k = st->simd;
  RecDir *rd = &st->dir[dir];
  int hid = st->hid, gh = st->gh;
  gboolean gru = st->info.kind == CLINFER_RECURRENT_GRU;
  gboolean lbr = gru && st->info.linear_before_reset;

  w += (gsize) dir * gh * st->input;
  r += (gsize) dir * gh * hid;
  rd->w = pack_transposed (k, w, st->input, 0, gh);
  rd->ra = pack_transposed (k, r, hid, 0, st->na);
  if (gru)
    rd->rc = pack_transposed (k, r, hid, 2 * hid, hid);
  rd->bias = g_aligned_alloc0 (round16 (gh), sizeof (float), 64);
  if (lbr)
    rd->rbh = g_aligned_alloc0 (round16 (hid), sizeof (float), 64);
  if (b) {
    const float *wb = b + (gsize) dir * 2 * gh, *rb = wb + gh;
    for (int j = 0; j < gh; j++)
      rd->bias[j] = wb[j] + (lbr && j >= 2 * hid ? 0.f : rb[j]);
    if (lbr)
      memcpy (rd->rbh, rb + 2 * hid, hid * sizeof (float));
  }
  if (p) {
    rd->p = g_aligned_alloc (round16 (3 * (gsize) hid), sizeof (float), 64);
    memcpy (rd->p, p + (gsize) dir * 3 * hid, 3 * (gsize) hid * sizeof (float));
  }
}

gboolean
clinfer_cpu_recurrent_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  static const char *const names[] = { "rnn", "gru", "lstm" };
  ClinferRecurrentInfo info;
  ClinferPortDesc *x = clinfer_node_input_desc (node, IN_X);
  ClinferPortDesc *wd = clinfer_node_input_desc (node, IN_W);
  ClinferPortDesc *rdesc = clinfer_node_input_desc (node, IN_R);
  ClinferPortDesc *bd = clinfer_node_input_desc (node, IN_B);
  ClinferPortDesc *lens = clinfer_node_input_desc (node, IN_LENS);
  ClinferPortDesc *pd = clinfer_node_input_desc (node, IN_P);
  const float *w = const_f32 (wd), *r = const_f32 (rdesc);
  const float *b = const_f32 (bd), *p = NULL;
  int64_t seq, batch, input, hid, m;
  RecState *st;
  gsize a_floats;
  int mr;

  (void) error;
  if (!clinfer_op_recurrent_info (node, &info))
    return FALSE;
  if (x == NULL || x->type != CLINFER_TYPE_F32 || x->shape.rank != 3
      || !clinfer_shape_is_static (&x->shape) || w == NULL || r == NULL
      || (bd && b == NULL) || wd->shape.rank != 3 || rdesc->shape.rank != 3)
    return FALSE;
  if (info.kind == CLINFER_RECURRENT_LSTM && node->n_inputs > IN_P) {
    p = const_f32 (pd);
    if (pd && p == NULL)
      return FALSE;
  }
  seq = x->shape.dims[info.layout ? 1 : 0];
  batch = x->shape.dims[info.layout ? 0 : 1];
  input = x->shape.dims[2];
  hid = rdesc->shape.dims[2];
  /* infer () checked W, R, B and P against these */
  if ((info.hidden && info.hidden != hid) || seq < 1 || batch < 1 || input < 1
      || hid < 1 || wd->shape.dims[1] != info.n_gates * hid
      || wd->shape.dims[2] != input || seq > G_MAXINT || batch > G_MAXINT
      || input > G_MAXINT / 64 || hid > G_MAXINT / 64)
    return FALSE;
  /* sequence_lens, constant or not, is read (and checked) at run time */
  if (lens && lens->type != CLINFER_TYPE_I32)
    return FALSE;
  m = seq * batch;
  if (m > G_MAXINT / 2)
    return FALSE;
  st = g_new0 (RecState, 1);
  g_mutex_init (&st->lock);
  st->info = info;
  st->simd = clinfer_cpu_simd_get (isa);
  st->x_shape = x->shape;
  st->lens_shape = (ClinferShape) { .rank = 1, .dims = { batch } };
  st->seq = (int) seq;
  st->batch = (int) batch;
  st->input = (int) input;
  st->hid = (int) hid;
  st->gh = info.n_gates * st->hid;
  st->na = info.kind == CLINFER_RECURRENT_GRU ? 2 * st->hid : st->gh;
  st->m = (int) m;
  mr = st->mr = clinfer_cpu_gemm_mr (st->simd, st->m);
  a_floats = (gsize) (m + mr - 1) / mr * mr * input;
  st->a_floats = round16 (a_floats);
  st->xw_floats = round16 ((gsize) m * st->gh);
  st->g_floats = round16 (st->gh);
  st->state_floats = round16 ((gsize) batch * hid);
  st->dir_floats = st->a_floats + st->xw_floats + st->g_floats
      + 2 * st->state_floats + round16 (hid);
  if (st->dir_floats > MAX_DIR_SCRATCH_FLOATS) {
    rec_state_free (st);
    return FALSE;
  }
  st->zeros = g_aligned_alloc0 (round16 ((gsize) (m + mr - 1) / mr * mr),
      sizeof (float), 64);
  st->scratch = g_aligned_alloc (st->dir_floats * info.n_dirs, sizeof (float),
      64);
  for (int d = 0; d < info.n_dirs; d++)
    pack_direction (st, d, w, r, b, p);
  kernel->state = st;
  kernel->free_state = rec_state_free;
  kernel->run = rec_run;
  kernel->name = g_strdup_printf ("%s_gemv_%s", names[info.kind],
      st->simd->isa_name);
  return TRUE;
}
