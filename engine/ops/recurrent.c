/* clinfer — the recurrent ops RNN, GRU and LSTM (ONNX opsets 7 and 14:
 * directions forward, reverse and bidirectional, layout 0 and 1,
 * sequence_lens, initial states, LSTM peepholes and input_forget, GRU
 * linear_before_reset, clip, the activation functions of the spec with
 * their alpha and beta). Reference evals in f32 (f16 and bf16 through
 * f32).
 *
 * Per direction, the input projections of all steps are one GEMM
 * (X W^T + Wb over the seq x batch rows); each step adds H R^T (one GEMM
 * over the batch) and applies the gates. With sequence_lens, batch entry
 * b runs its first len[b] steps (a reverse direction from step len[b] - 1
 * down to 0): Y is zero past them and Y_h / Y_c hold the last state. */
#include "ops/op.h"
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <string.h>

typedef enum { REC_RNN, REC_GRU, REC_LSTM } RecKind;
G_STATIC_ASSERT ((int) REC_GRU == (int) CLINFER_RECURRENT_GRU
    && (int) REC_LSTM == (int) CLINFER_RECURRENT_LSTM);

typedef ClinferRecurrentAct RecAct;

/* The activation functions by name: how many of alpha and beta each takes
 * from activation_alpha / activation_beta (in list order), and their
 * defaults when the lists run out. */
static const struct {
  const char *name;
  ClinferRecurrentActKind kind;
  int n_params;               /* 0, 1 (alpha) or 2 (alpha, beta) */
  float alpha, beta;
} act_table[] = {
  { "Relu", CLINFER_REC_ACT_RELU, 0, 0.f, 0.f },
  { "Tanh", CLINFER_REC_ACT_TANH, 0, 0.f, 0.f },
  { "Sigmoid", CLINFER_REC_ACT_SIGMOID, 0, 0.f, 0.f },
  { "Affine", CLINFER_REC_ACT_AFFINE, 2, 1.f, 0.f },
  { "LeakyRelu", CLINFER_REC_ACT_LEAKY_RELU, 1, 0.01f, 0.f },
  { "ThresholdedRelu", CLINFER_REC_ACT_THRESHOLDED_RELU, 1, 1.f, 0.f },
  { "ScaledTanh", CLINFER_REC_ACT_SCALED_TANH, 2, 1.f, 1.f },
  { "HardSigmoid", CLINFER_REC_ACT_HARD_SIGMOID, 2, 0.2f, 0.5f },
  { "Elu", CLINFER_REC_ACT_ELU, 1, 1.f, 0.f },
  { "Softsign", CLINFER_REC_ACT_SOFTSIGN, 0, 0.f, 0.f },
  { "Softplus", CLINFER_REC_ACT_SOFTPLUS, 0, 0.f, 0.f },
};

#define REC_MAX_ACTS 3        /* per direction: LSTM's f, g, h */

typedef struct {
  RecKind kind;
  int n_gates;                /* gate blocks in W and R: 1, 3 or 4 */
  int n_acts;                 /* activations per direction: 1, 2 or 3 */
  int n_dirs;
  gboolean reverse;           /* direction "reverse" */
  int64_t hidden;             /* hidden_size, 0 when absent (from R) */
  int64_t layout;
  float clip;                 /* 0: none */
  gboolean linear_before_reset, input_forget;
  RecAct act[2][REC_MAX_ACTS];
} RecData;

static const char *const kind_names[] = { "RNN", "GRU", "LSTM" };

/* ---------------------------------------------------------------- */
/* Attributes                                                        */

static gboolean
rec_fail (const ClinferNode *node, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF (3, 4);

static gboolean
rec_fail (const ClinferNode *node, GError **error, const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT, "%s: %s",
      clinfer_node_label (node), msg);
  return FALSE;
}

static gboolean
parse_activations (ClinferNode *node, RecData *d, GError **error)
{
  static const char *const defaults[3][REC_MAX_ACTS] = {
    { "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" },
  };
  const ClinferAttr *names = clinfer_node_get_attr (node, "activations");
  const float *alphas = NULL, *betas = NULL;
  gsize n_alpha = 0, n_beta = 0, ia = 0, ib = 0, n_names;

  if (!clinfer_node_attr_floats (node, "activation_alpha", &alphas, &n_alpha,
          error)
      || !clinfer_node_attr_floats (node, "activation_beta", &betas, &n_beta,
          error))
    return FALSE;
  if (names && names->type != CLINFER_ATTR_STRINGS)
    return rec_fail (node, error, "attribute activations is %s, expected "
        "a list of strings", clinfer_attr_type_name (names->type));
  n_names = names ? names->strings.n : 0;
  /* The spec wants one list entry per activation and direction; one
   * direction's list for both is accepted too. */
  if (names && n_names != (gsize) d->n_acts
      && n_names != (gsize) (d->n_acts * d->n_dirs))
    return rec_fail (node, error, "attribute activations has %" G_GSIZE_FORMAT
        " entries, expected %d (%d per direction)", n_names,
        d->n_acts * d->n_dirs, d->n_acts);
  for (int dir = 0; dir < d->n_dirs; dir++)
    for (int k = 0; k < d->n_acts; k++) {
      const char *name = defaults[d->kind][k];
      RecAct *a = &d->act[dir][k];
      guint t;

      if (names)
        name = names->strings.v[(dir * d->n_acts + k) % n_names];
      for (t = 0; t < G_N_ELEMENTS (act_table); t++)
        if (g_ascii_strcasecmp (name, act_table[t].name) == 0)
          break;
      if (t == G_N_ELEMENTS (act_table))
        return rec_fail (node, error, "unknown activation function \"%s\" "
            "(expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
            "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign or "
            "Softplus)", name);
      a->kind = act_table[t].kind;
      a->alpha = act_table[t].alpha;
      a->beta = act_table[t].beta;
      if (act_table[t].n_params >= 1 && ia < n_alpha)
        a->alpha = alphas[ia++];
      if (act_table[t].n_params >= 2 && ib < n_beta)
        a->beta = betas[ib++];
    }
  return TRUE;
}

static gboolean
prepare_rec (ClinferNode *node, RecKind kind, GError **error)
{
  g_autofree RecData *d = g_new0 (RecData, 1);
  const char *dir;
  int64_t lbr = 0, ifg = 0;

  d->kind = kind;
  d->n_gates = kind == REC_RNN ? 1 : kind == REC_GRU ? 3 : 4;
  d->n_acts = kind == REC_RNN ? 1 : kind == REC_GRU ? 2 : 3;
  if (!clinfer_node_attr_string (node, "direction", "forward", &dir, error)
      || !clinfer_node_attr_int (node, "hidden_size", 0, &d->hidden, error)
      || !clinfer_node_attr_int (node, "layout", 0, &d->layout, error)
      || !clinfer_node_attr_float (node, "clip", 0.f, &d->clip, error)
      || !clinfer_node_attr_int (node, "linear_before_reset", 0, &lbr, error)
      || !clinfer_node_attr_int (node, "input_forget", 0, &ifg, error))
    return FALSE;
  if (strcmp (dir, "forward") == 0 || strcmp (dir, "reverse") == 0) {
    d->n_dirs = 1;
    d->reverse = dir[0] == 'r';
  } else if (strcmp (dir, "bidirectional") == 0) {
    d->n_dirs = 2;
  } else {
    return rec_fail (node, error, "direction \"%s\", expected forward, "
        "reverse or bidirectional", dir);
  }
  if (d->hidden < 0 || d->hidden > G_MAXINT32)
    return rec_fail (node, error, "hidden_size %" G_GINT64_FORMAT ", expected "
        "a positive size", d->hidden);
  if (d->layout != 0 && d->layout != 1)
    return rec_fail (node, error, "layout %" G_GINT64_FORMAT ", expected 0 "
        "or 1", d->layout);
  if (d->clip < 0.f || isnan (d->clip))
    return rec_fail (node, error, "clip %g, expected a positive threshold",
        d->clip);
  d->linear_before_reset = lbr != 0;
  d->input_forget = ifg != 0;
  if (!parse_activations (node, d, error))
    return FALSE;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
prepare_rnn (ClinferNode *node, GError **error)
{
  return prepare_rec (node, REC_RNN, error);
}

static gboolean
prepare_gru (ClinferNode *node, GError **error)
{
  return prepare_rec (node, REC_GRU, error);
}

static gboolean
prepare_lstm (ClinferNode *node, GError **error)
{
  return prepare_rec (node, REC_LSTM, error);
}

/* ---------------------------------------------------------------- */
/* Shapes                                                            */

/* Inputs by position (the same for the three ops up to B). */
enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P };

/* The extents of a node's run: seq, batch, input and hidden sizes. */
typedef struct {
  int64_t seq, batch, input, hidden;
} RecDims;

/* @dim of @s must be @want (when both are known); @what names the input. */
static gboolean
check_dim (const ClinferNode *node, const char *what, const ClinferShape *s,
    int dim, int64_t want, GError **error)
{
  int64_t got = s->dims[dim];

  if (got == CLINFER_DIM_DYNAMIC || want == CLINFER_DIM_DYNAMIC || got == want)
    return TRUE;
  return rec_fail (node, error, "%s has extent %" G_GINT64_FORMAT " in dim "
      "%d, expected %" G_GINT64_FORMAT, what, got, dim, want);
}

static gboolean
check_rank (const ClinferNode *node, const char *what, const ClinferShape *s,
    int rank, GError **error)
{
  if (s->rank == rank)
    return TRUE;
  return rec_fail (node, error, "%s has rank %d, expected %d", what, s->rank,
      rank);
}

/* The node's dims from its inputs, each input's shape checked. */
static gboolean
rec_dims (const ClinferNode *node, const ClinferValueInfo *in, RecDims *rd,
    GError **error)
{
  const RecData *d = node->op_data;
  const ClinferShape *x = &in[IN_X].shape, *w = &in[IN_W].shape;
  const ClinferShape *r = &in[IN_R].shape;
  int64_t gh;
  /* initial_h, initial_c: [dirs, batch, hidden], layout 1 [batch, dirs,
   * hidden] */
  int sd = d->layout ? 1 : 0, sb = d->layout ? 0 : 1;

  if (!check_rank (node, "input X", x, 3, error)
      || !check_rank (node, "input W", w, 3, error)
      || !check_rank (node, "input R", r, 3, error))
    return FALSE;
  rd->seq = x->dims[d->layout ? 1 : 0];
  rd->batch = x->dims[d->layout ? 0 : 1];
  rd->input = x->dims[2];
  rd->hidden = d->hidden ? d->hidden : r->dims[2];
  gh = rd->hidden == CLINFER_DIM_DYNAMIC ? CLINFER_DIM_DYNAMIC
      : d->n_gates * rd->hidden;
  if (!check_dim (node, "input W", w, 0, d->n_dirs, error)
      || !check_dim (node, "input W", w, 1, gh, error)
      || !check_dim (node, "input W", w, 2, rd->input, error)
      || !check_dim (node, "input R", r, 0, d->n_dirs, error)
      || !check_dim (node, "input R", r, 1, gh, error)
      || !check_dim (node, "input R", r, 2, rd->hidden, error))
    return FALSE;
  if (node->n_inputs > IN_B && in[IN_B].present) {
    const ClinferShape *b = &in[IN_B].shape;
    if (!check_rank (node, "input B", b, 2, error)
        || !check_dim (node, "input B", b, 0, d->n_dirs, error)
        || !check_dim (node, "input B", b, 1, gh == CLINFER_DIM_DYNAMIC
            ? gh : 2 * gh, error))
      return FALSE;
  }
  if (node->n_inputs > IN_LENS && in[IN_LENS].present) {
    const ClinferShape *l = &in[IN_LENS].shape;
    if (in[IN_LENS].type != CLINFER_TYPE_I32)
      return rec_fail (node, error, "input sequence_lens is %s, expected "
          "int32", clinfer_element_type_name (in[IN_LENS].type));
    if (!check_rank (node, "input sequence_lens", l, 1, error)
        || !check_dim (node, "input sequence_lens", l, 0, rd->batch, error))
      return FALSE;
  }
  for (int i = IN_H0; i <= IN_C0; i++) {
    const char *what = i == IN_H0 ? "input initial_h" : "input initial_c";
    const ClinferShape *h = &in[i].shape;
    if (node->n_inputs <= (guint) i || !in[i].present)
      continue;
    if (i == IN_C0 && d->kind != REC_LSTM)
      break;
    if (!check_rank (node, what, h, 3, error)
        || !check_dim (node, what, h, sd, d->n_dirs, error)
        || !check_dim (node, what, h, sb, rd->batch, error)
        || !check_dim (node, what, h, 2, rd->hidden, error))
      return FALSE;
  }
  if (d->kind == REC_LSTM && node->n_inputs > IN_P && in[IN_P].present) {
    const ClinferShape *p = &in[IN_P].shape;
    if (!check_rank (node, "input P", p, 2, error)
        || !check_dim (node, "input P", p, 0, d->n_dirs, error)
        || !check_dim (node, "input P", p, 1, rd->hidden
            == CLINFER_DIM_DYNAMIC ? rd->hidden : 3 * rd->hidden, error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
infer_rec (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const RecData *d = node->op_data;
  ClinferElementType t = in[IN_X].type;
  RecDims rd;

  for (int i = IN_X; i <= IN_R; i++)
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
  if (t != CLINFER_TYPE_F32 && !clinfer_op_type_is_half (t))
    return clinfer_op_unsupported_type (node, t, error);
  for (guint i = IN_W; i < node->n_inputs; i++)
    if (in[i].present && i != IN_LENS && in[i].type != t) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: input %u is %s, expected %s like X", clinfer_node_label (node),
          i, clinfer_element_type_name (in[i].type),
          clinfer_element_type_name (t));
      return FALSE;
    }
  if (!rec_dims (node, in, &rd, error))
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++) {
    out[i].type = t;
    if (i == 0) {
      int64_t dims[4] = { rd.seq, d->n_dirs, rd.batch, rd.hidden };
      if (d->layout) {
        dims[0] = rd.batch;
        dims[1] = rd.seq;
        dims[2] = d->n_dirs;
      }
      out[i].shape = clinfer_shape_make (4, dims);
    } else {
      int64_t dims[3] = { d->n_dirs, rd.batch, rd.hidden };
      if (d->layout) {
        dims[0] = rd.batch;
        dims[1] = d->n_dirs;
      }
      out[i].shape = clinfer_shape_make (3, dims);
    }
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Evaluation                                                        */

static inline float
act_apply (const RecAct *a, float x)
{
  switch (a->kind) {
    case CLINFER_REC_ACT_RELU: return x > 0.f ? x : 0.f;
    case CLINFER_REC_ACT_TANH: return tanhf (x);
    case CLINFER_REC_ACT_SIGMOID: return 1.f / (1.f + expf (-x));
    case CLINFER_REC_ACT_AFFINE: return a->alpha * x + a->beta;
    case CLINFER_REC_ACT_LEAKY_RELU: return x >= 0.f ? x : a->alpha * x;
    case CLINFER_REC_ACT_THRESHOLDED_RELU: return x > a->alpha ? x : 0.f;
    case CLINFER_REC_ACT_SCALED_TANH: return a->alpha * tanhf (a->beta * x);
    case CLINFER_REC_ACT_HARD_SIGMOID:
      return fmaxf (0.f, fminf (1.f, a->alpha * x + a->beta));
    case CLINFER_REC_ACT_ELU:
      return x >= 0.f ? x : a->alpha * (expf (x) - 1.f);
    case CLINFER_REC_ACT_SOFTSIGN: return x / (1.f + fabsf (x));
    case CLINFER_REC_ACT_SOFTPLUS: return log1pf (expf (x));
  }
  return x;
}

/* The activation of a clipped gate pre-activation. */
static inline float
gate (const RecData *d, const RecAct *a, float x)
{
  if (d->clip > 0.f)
    x = fminf (d->clip, fmaxf (-d->clip, x));
  return act_apply (a, x);
}

/* One direction's run over the batch. */
typedef struct {
  const RecData *d;
  const RecDims *rd;
  int dir;
  gboolean reverse;
  const float *x;             /* X */
  const float *w, *r;         /* this direction's W [G*hid, input], R */
  const float *wb, *rb;       /* its biases [G*hid] each, or NULL */
  const float *p;             /* LSTM peepholes [3*hid] (i, o, f), or NULL */
  const int32_t *lens;        /* or NULL */
  const float *h0, *c0;       /* initial states, or NULL */
  float *y, *yh, *yc;         /* outputs, or NULL */
} RecRun;

/* Element offsets in the state tensors (initial_h, Y_h, ...) of batch
 * entry @b's row for direction @dir, and in Y of step @t. */
static inline int64_t
state_off (const RecRun *rr, int64_t b)
{
  int64_t n_dirs = rr->d->n_dirs, hid = rr->rd->hidden;
  return (rr->d->layout ? b * n_dirs + rr->dir
      : rr->dir * rr->rd->batch + b) * hid;
}

static inline int64_t
y_off (const RecRun *rr, int64_t t, int64_t b)
{
  int64_t n_dirs = rr->d->n_dirs, hid = rr->rd->hidden;
  int64_t batch = rr->rd->batch, seq = rr->rd->seq;
  return (rr->d->layout ? (b * seq + t) * n_dirs + rr->dir
      : (t * n_dirs + rr->dir) * batch + b) * hid;
}

static gboolean
run_direction (const ClinferNode *node, const RecRun *rr, GError **error)
{
  const RecData *d = rr->d;
  int64_t seq = rr->rd->seq, batch = rr->rd->batch, in = rr->rd->input;
  int64_t hid = rr->rd->hidden, gh = d->n_gates * hid;
  /* xw: X W^T + Wb for every (t, b): row t * batch + b (layout 0) or
   * b * seq + t (layout 1), as X's rows are */
  g_autofree float *xw = NULL, *hr = NULL, *h = NULL, *c = NULL;
  g_autofree float *rh = NULL;   /* GRU: r (.) H */
  const RecAct *f = &d->act[rr->dir][0], *g = &d->act[rr->dir][1];
  const RecAct *ha = &d->act[rr->dir][2];

  /* X and W bound seq * batch and gh, not their product. */
  if (gh > 0 && (gsize) (seq * batch) > G_MAXSIZE / sizeof (float) / (gsize) gh)
    return rec_fail (node, error, "%" G_GINT64_FORMAT " steps x %"
        G_GINT64_FORMAT " batch entries x %" G_GINT64_FORMAT " gate values "
        "do not fit in memory", seq, batch, gh);
  /* (at least one element each: g_try_new () gives NULL for none) */
  xw = g_try_new (float, MAX (1, seq * batch * gh));
  hr = g_try_new (float, MAX (1, batch * gh));
  h = g_try_new0 (float, MAX (1, batch * hid));
  c = g_try_new0 (float, MAX (1, batch * hid));
  if (d->kind == REC_GRU)
    rh = g_try_new (float, MAX (1, batch * hid));
  if (!xw || !hr || !h || !c || (d->kind == REC_GRU && !rh))
    return rec_fail (node, error, "out of memory for the %s state of %"
        G_GINT64_FORMAT " steps", kind_names[d->kind], seq);
  if (!clinfer_op_gemm_f32 (node, seq * batch, gh, in, 1.f, rr->x, in, 1,
          rr->w, 1, in, xw, gh, FALSE, error))
    return FALSE;
  if (rr->wb)
    for (int64_t i = 0; i < seq * batch; i++)
      for (int64_t j = 0; j < gh; j++)
        xw[i * gh + j] += rr->wb[j];
  for (int64_t b = 0; b < batch; b++) {
    if (rr->h0)
      memcpy (h + b * hid, rr->h0 + state_off (rr, b), hid * sizeof (float));
    if (rr->c0)
      memcpy (c + b * hid, rr->c0 + state_off (rr, b), hid * sizeof (float));
  }
  for (int64_t s = 0; s < seq; s++) {
    /* H R^T (+ Rb) for every batch entry; entries past their length keep
     * their state and are skipped below. GRU's candidate gate without
     * linear_before_reset needs r first: only its z and r columns here. */
    int64_t cols = d->kind == REC_GRU && !d->linear_before_reset
        ? 2 * hid : gh;
    if (!clinfer_op_gemm_f32 (node, batch, cols, hid, 1.f, h, hid, 1, rr->r,
            1, hid, hr, gh, FALSE, error))
      return FALSE;
    if (rr->rb)
      for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < cols; j++)
          hr[b * gh + j] += rr->rb[j];
    if (d->kind == REC_GRU && !d->linear_before_reset) {
      /* rh = r (.) H, then its projection by R_h into hr's h columns */
      for (int64_t b = 0; b < batch; b++) {
        int64_t len = rr->lens ? rr->lens[b] : seq;
        int64_t t = rr->reverse ? len - 1 - s : s;
        const float *xr;

        if (s >= len)
          continue;
        xr = xw + (d->layout ? b * seq + t : t * batch + b) * gh;
        for (int64_t j = 0; j < hid; j++)
          rh[b * hid + j] = gate (d, f, xr[hid + j] + hr[b * gh + hid + j])
              * h[b * hid + j];
      }
      if (!clinfer_op_gemm_f32 (node, batch, hid, hid, 1.f, rh, hid, 1,
              rr->r + 2 * hid * hid, 1, hid, hr + 2 * hid, gh, FALSE, error))
        return FALSE;
      if (rr->rb)
        for (int64_t b = 0; b < batch; b++)
          for (int64_t j = 0; j < hid; j++)
            hr[b * gh + 2 * hid + j] += rr->rb[2 * hid + j];
    }
    for (int64_t b = 0; b < batch; b++) {
      int64_t len = rr->lens ? rr->lens[b] : seq;
      int64_t t = rr->reverse ? len - 1 - s : s;
      const float *xr, *hb = hr + b * gh;
      float *hs = h + b * hid, *cs = c + b * hid;

      if (s >= len)
        continue;
      xr = xw + (d->layout ? b * seq + t : t * batch + b) * gh;
      switch (d->kind) {
        case REC_RNN:
          for (int64_t j = 0; j < hid; j++)
            hs[j] = gate (d, f, xr[j] + hb[j]);
          break;
        case REC_GRU:
          /* gates z, r, h */
          for (int64_t j = 0; j < hid; j++) {
            float z = gate (d, f, xr[j] + hb[j]);
            float cand;
            if (d->linear_before_reset) {
              float r = gate (d, f, xr[hid + j] + hb[hid + j]);
              cand = gate (d, g, xr[2 * hid + j] + r * hb[2 * hid + j]);
            } else {
              cand = gate (d, g, xr[2 * hid + j] + hb[2 * hid + j]);
            }
            hs[j] = (1.f - z) * cand + z * hs[j];
          }
          break;
        case REC_LSTM:
          /* gates i, o, f, c; peepholes i, o, f */
          for (int64_t j = 0; j < hid; j++) {
            float pi = rr->p ? rr->p[j] * cs[j] : 0.f;
            float pf = rr->p ? rr->p[2 * hid + j] * cs[j] : 0.f;
            float ig = gate (d, f, xr[j] + hb[j] + pi);
            float fg = d->input_forget ? 1.f - ig
                : gate (d, f, xr[2 * hid + j] + hb[2 * hid + j] + pf);
            float cg = gate (d, g, xr[3 * hid + j] + hb[3 * hid + j]);
            float og;

            cs[j] = fg * cs[j] + ig * cg;
            og = gate (d, f, xr[hid + j] + hb[hid + j]
                + (rr->p ? rr->p[hid + j] * cs[j] : 0.f));
            hs[j] = og * act_apply (ha, cs[j]);
          }
          break;
      }
      if (rr->y)
        memcpy (rr->y + y_off (rr, t, b), hs, hid * sizeof (float));
    }
  }
  for (int64_t b = 0; b < batch; b++) {
    if (rr->yh)
      memcpy (rr->yh + state_off (rr, b), h + b * hid, hid * sizeof (float));
    if (rr->yc)
      memcpy (rr->yc + state_off (rr, b), c + b * hid, hid * sizeof (float));
  }
  return TRUE;
}

static gboolean
eval_rec (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const RecData *d = node->op_data;
  ClinferValueInfo vi[IN_P + 1] = { { 0 } };
  const int32_t *lens = NULL;
  const float *b;
  GError *errs[2] = { NULL, NULL };
  RecRun runs[2];
  RecDims rd;

  if (clinfer_op_type_is_half (clinfer_tensor_get_element_type (in[IN_X])))
    return clinfer_op_eval_via_f32 (node, in, out, eval_rec, error);
  for (guint i = 0; i < node->n_inputs && i <= IN_P; i++)
    if (in[i]) {
      vi[i].present = TRUE;
      vi[i].type = clinfer_tensor_get_element_type (in[i]);
      vi[i].shape = *clinfer_tensor_get_shape (in[i]);
    }
  if (!rec_dims (node, vi, &rd, error))
    return FALSE;
  if (node->n_inputs > IN_LENS && in[IN_LENS]) {
    lens = clinfer_tensor_get_const_data (in[IN_LENS]);
    if (!clinfer_op_recurrent_check_lens (node, lens, rd.batch, rd.seq,
            error))
      return FALSE;
  }
  /* Steps past a batch entry's length stay zero in Y. */
  if (node->n_outputs > 0 && out[0])
    memset (clinfer_tensor_get_data (out[0]), 0,
        clinfer_tensor_get_byte_size (out[0]));
  b = clinfer_op_opt_input_data (node, in, IN_B);
  for (int dir = 0; dir < d->n_dirs; dir++) {
    int64_t gh = d->n_gates * rd.hidden;
    const float *p = d->kind == REC_LSTM ? clinfer_op_opt_input_data (node, in, IN_P) : NULL;
    const float *h0 = clinfer_op_opt_input_data (node, in, IN_H0);
    const float *c0 = d->kind == REC_LSTM ? clinfer_op_opt_input_data (node, in, IN_C0) : NULL;
    runs[dir] = (RecRun) {
      .d = d, .rd = &rd, .dir = dir, .reverse = d->reverse || dir == 1,
      .x = clinfer_tensor_get_const_data (in[IN_X]),
      .w = (const float *) clinfer_tensor_get_const_data (in[IN_W])
          + dir * gh * rd.input,
      .r = (const float *) clinfer_tensor_get_const_data (in[IN_R])
          + dir * gh * rd.hidden,
      .wb = b ? b + dir * 2 * gh : NULL,
      .rb = b ? b + dir * 2 * gh + gh : NULL,
      .p = p ? p + dir * 3 * rd.hidden : NULL,
      .lens = lens, .h0 = h0, .c0 = c0,
      .y = node->n_outputs > 0 && out[0] ? clinfer_tensor_get_data (out[0])
          : NULL,
      .yh = node->n_outputs > 1 && out[1] ? clinfer_tensor_get_data (out[1])
          : NULL,
      .yc = node->n_outputs > 2 && out[2] ? clinfer_tensor_get_data (out[2])
          : NULL,
    };
  }
  /* The two directions are independent: one thread each where there are
   * two (their GEMMs then run on one thread, OpenMP not nesting). One
   * direction runs outside any parallel construct: a parallel region
   * inside even a serialised one would start new threads for every
   * GEMM. */
  if (d->n_dirs == 2 && omp_get_max_threads () >= 2) {
    /* The node's label is made on first use: made here, the two
     * directions' error messages only read it. */
    (void) clinfer_node_label (node);
#pragma omp parallel for schedule (static) num_threads (2)
    for (int dir = 0; dir < 2; dir++)
      run_direction (node, &runs[dir], &errs[dir]);
  } else {
    for (int dir = 0; dir < d->n_dirs; dir++)
      run_direction (node, &runs[dir], &errs[dir]);
  }
  for (int dir = 0; dir < d->n_dirs; dir++)
    if (errs[dir]) {
      g_propagate_error (error, errs[dir]);
      g_clear_error (&errs[1 - dir]);
      return FALSE;
    }
  return TRUE;
}

gboolean
clinfer_op_recurrent_info (const ClinferNode *node, ClinferRecurrentInfo *info)
{
  const RecData *d;

  if (!clinfer_node_is_builtin_op (node, "", "RNN")
      && !clinfer_node_is_builtin_op (node, "", "GRU")
      && !clinfer_node_is_builtin_op (node, "", "LSTM"))
    return FALSE;
  if ((d = node->op_data) == NULL)
    return FALSE;
  *info = (ClinferRecurrentInfo) {
    .kind = (ClinferRecurrentKind) d->kind, .n_gates = d->n_gates,
    .n_dirs = d->n_dirs, .reverse = d->reverse, .hidden = d->hidden,
    .layout = d->layout, .clip = d->clip,
    .linear_before_reset = d->linear_before_reset,
    .input_forget = d->input_forget,
  };
  G_STATIC_ASSERT (sizeof (info->act) == sizeof (d->act));
  memcpy (info->act, d->act, sizeof (d->act));
  return TRUE;
}

void
clinfer_op_recurrent_act_row (const ClinferRecurrentAct *act, const float *x,
    float *y, gsize n)
{
  for (gsize i = 0; i < n; i++)
    y[i] = act_apply (act, x[i]);
}

gboolean
clinfer_op_recurrent_check_lens (const ClinferNode *node, const int32_t *lens,
    int64_t batch, int64_t seq, GError **error)
{
  for (int64_t k = 0; k < batch; k++)
    if (lens[k] < 0 || lens[k] > seq)
      return rec_fail (node, error, "sequence_lens[%" G_GINT64_FORMAT
          "] is %d, expected 0 to %" G_GINT64_FORMAT " (the steps of X)",
          k, (int) lens[k], seq);
  return TRUE;
}

const ClinferOpDef clinfer_ops_recurrent[] = {
  { "RNN", "", 7, 0, 3, 6, 1, 2, 0, prepare_rnn, g_free, infer_rec,
    eval_rec },
  { "GRU", "", 7, 0, 3, 6, 1, 2, 0, prepare_gru, g_free, infer_rec,
    eval_rec },
  { "LSTM", "", 7, 0, 3, 8, 1, 3, 0, prepare_lstm, g_free, infer_rec,
    eval_rec },
  { NULL }
};
