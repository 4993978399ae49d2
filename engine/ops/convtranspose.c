/* clinfer — ConvTranspose (1-D to 3-D; group, strides, dilations, pads,
 * auto_pad, output_padding, output_shape) with a scatter reference eval. */
#include "ops/conv.h"
#include <string.h>

typedef struct {
  ClinferWindowAttrs win;    /* auto_pad, kernel_shape, strides, ... pads */
  int64_t group;
  gsize n_out_pad, n_out_shape;
  int64_t out_pad[CLINFER_MAX_SPATIAL];
  int64_t out_shape[CLINFER_MAX_SPATIAL + 2];
} CtParams;

static gboolean
prepare_ct (ClinferNode *node, GError **error)
{
  g_autofree CtParams *p = g_new0 (CtParams, 1);

  if (!clinfer_window_attrs_parse (node, FALSE, &p->win, error)
      || !clinfer_conv_group_attr (node, &p->group, error)
      || !clinfer_window_read_ints (node, "output_padding", 0,
          CLINFER_MAX_SPATIAL, p->out_pad, &p->n_out_pad, error)
      || !clinfer_window_read_ints (node, "output_shape", 0,
          CLINFER_MAX_SPATIAL + 2, p->out_shape, &p->n_out_shape, error))
    return FALSE;
  node->op_data = g_steal_pointer (&p);
  return TRUE;
}

/* Pads and output extent of spatial axis @i (CLINFER_DIM_DYNAMIC when the
 * input extent is unknown). */
static gboolean
ct_axis (const ClinferNode *node, const CtParams *p, int n, int i, int64_t in,
    int64_t k, ClinferWindow *g, GError **error)
{
  int64_t s = p->win.n_strides ? p->win.strides[i] : 1;
  int64_t d = p->win.n_dilations ? p->win.dilations[i] : 1;
  int64_t op = p->n_out_pad ? p->out_pad[i] : 0;
  int64_t full, want, total, half;
  gboolean explicit_out = p->n_out_shape > 0, explicit_pads;
  ClinferAutoPad ap = p->win.auto_pad;

  g->stride[i] = s;
  g->dilation[i] = d;
  g->kernel[i] = k;
  g->in[i] = in;
  if (in == CLINFER_DIM_DYNAMIC || k == CLINFER_DIM_DYNAMIC) {
    g->out[i] = explicit_out ? p->out_shape[p->n_out_shape - n + i]
        : CLINFER_DIM_DYNAMIC;
    return TRUE;
  }
  if (in > ((int64_t) 1 << 62) / s) {   /* keeps the products in range */
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: spatial dim %d has invalid extent %" G_GINT64_FORMAT,
        clinfer_node_label (node), i, in);
    return FALSE;
  }
  full = s * (in - 1) + op + (k - 1) * d + 1;
  if (explicit_out || ap == CLINFER_AUTO_PAD_SAME_UPPER
      || ap == CLINFER_AUTO_PAD_SAME_LOWER) {
    want = explicit_out ? p->out_shape[p->n_out_shape - n + i] : in * s;
    /* A negative total (output_shape larger than the full extent) pads
     * the end: the extra outputs only get the bias, like the reference. */
    total = full - want;
    half = total >= 0 ? total / 2 : -((-total + 1) / 2);   /* floor */
    g->pad_begin[i] = ap == CLINFER_AUTO_PAD_SAME_UPPER ? half : total - half;
    g->out[i] = want;
    return TRUE;
  }
  explicit_pads = ap == CLINFER_AUTO_PAD_NOTSET && p->win.n_pads;
  g->pad_begin[i] = explicit_pads ? p->win.pads[i] : 0;
  g->out[i] = full - g->pad_begin[i]
      - (explicit_pads ? p->win.pads[n + i] : 0);
  if (g->out[i] < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: pads leave a negative output extent in spatial dim %d",
        clinfer_node_label (node), i);
    return FALSE;
  }
  return TRUE;
}

/* Geometry for input extents @x and kernel extents @w (n spatial dims). */
static gboolean
ct_geom (const ClinferNode *node, int n, const int64_t *x, const int64_t *w,
    ClinferWindow *g, GError **error)
{
  const CtParams *p = node->op_data;

  memset (g, 0, sizeof (*g));
  if (!clinfer_window_check_lens (node, &p->win, n, error)
      || !clinfer_window_check_len (node, "output_padding", p->n_out_pad, n,
          error))
    return FALSE;
  if (p->n_out_shape && p->n_out_shape != (gsize) n
      && p->n_out_shape != (gsize) n + 2)
    return clinfer_window_check_len (node, "output_shape", p->n_out_shape, n,
        error);
  g->n = n;
  for (int i = 0; i < n; i++) {
    int64_t k = w[i];
    if (!clinfer_window_weight_kernel (node, &p->win, i, &k, error)
        || !ct_axis (node, p, n, i, x[i], k, g, error))
      return FALSE;
  }
  return TRUE;
}

/* X [N, C, ...], W [C, M / group, k...], B [M]. */
static gboolean
check_ct_channels (const ClinferNode *node, const ClinferValueInfo *in,
    int rank, GError **error)
{
  const CtParams *p = node->op_data;
  const ClinferShape *x = &in[0].shape, *w = &in[1].shape;
  int64_t c = x->rank >= 0 ? x->dims[1] : CLINFER_DIM_DYNAMIC;
  int64_t wc = w->rank >= 0 ? w->dims[0] : CLINFER_DIM_DYNAMIC;
  int64_t m = CLINFER_DIM_DYNAMIC;
  const char *label = clinfer_node_label (node);

  if (w->rank >= 0 && w->rank != rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: weight W has rank %d, expected %d (C, M/group, kernel...)",
        label, w->rank, rank);
    return FALSE;
  }
  if (w->rank >= 0 && w->dims[1] > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: weight W has %" G_GINT64_FORMAT " output channels per group",
        label, w->dims[1]);
    return FALSE;
  }
  if (w->rank >= 0 && w->dims[1] != CLINFER_DIM_DYNAMIC)
    m = w->dims[1] * p->group;
  if ((c != CLINFER_DIM_DYNAMIC && c % p->group != 0)
      || (c != CLINFER_DIM_DYNAMIC && wc != CLINFER_DIM_DYNAMIC && c != wc)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: X has %" G_GINT64_FORMAT " channels; W has %" G_GINT64_FORMAT
        " and group is %" G_GINT64_FORMAT " (channels must match and divide "
        "by group)", label, c, wc, p->group);
    return FALSE;
  }
  return clinfer_conv_check_bias (node, in, m, error);
}

static gboolean
infer_ct (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *x = &in[0].shape, *w = &in[1].shape;
  const CtParams *p = node->op_data;
  int rank = x->rank >= 0 ? x->rank : w->rank;
  int64_t xin[CLINFER_MAX_SPATIAL], kin[CLINFER_MAX_SPATIAL];
  ClinferWindow g;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_conv_check_types (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  if (rank < 0)
    return TRUE;
  if (rank < 3 || rank > CLINFER_MAX_SPATIAL + 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: input X has rank %d, expected 3 to %d (N, C, spatial...)",
        clinfer_node_label (node), rank, CLINFER_MAX_SPATIAL + 2);
    return FALSE;
  }
  if (!check_ct_channels (node, in, rank, error))
    return FALSE;
  for (int i = 0; i < rank - 2; i++) {
    xin[i] = x->rank >= 0 ? x->dims[i + 2] : CLINFER_DIM_DYNAMIC;
    kin[i] = w->rank >= 0 ? w->dims[i + 2] : CLINFER_DIM_DYNAMIC;
  }
  if (!ct_geom (node, rank - 2, xin, kin, &g, error))
    return FALSE;
  out[0].shape.rank = rank;
  out[0].shape.dims[0] = x->rank >= 0 ? x->dims[0] : CLINFER_DIM_DYNAMIC;
  out[0].shape.dims[1] = w->rank >= 0 && w->dims[1] != CLINFER_DIM_DYNAMIC
      ? w->dims[1] * p->group : CLINFER_DIM_DYNAMIC;
  for (int i = 0; i < rank - 2; i++)
    out[0].shape.dims[i + 2] = g.out[i];
  return TRUE;
}

/* Each (batch, output channel) plane gathers the scatter of every input
 * channel of its group, so planes are independent. */
#define DEFINE_CT(NAME, T)                                                   \
static void                                                                  \
NAME (const ClinferWindow3 *g, int64_t batch, int64_t cin, int64_t cout,             \
    int64_t group, const T *x, const T *w, const T *b, T *y)                 \
{                                                                            \
  int64_t cin_g = cin / group, cout_g = cout / group;                        \
  int64_t in_sp = g->in[0] * g->in[1] * g->in[2];                            \
  int64_t out_sp = g->out[0] * g->out[1] * g->out[2];                        \
  int64_t ksz = g->k[0] * g->k[1] * g->k[2];                                 \
  _Pragma ("omp parallel for collapse(2) schedule(static)")                  \
  for (int64_t n = 0; n < batch; n++)                                        \
    for (int64_t oc = 0; oc < cout; oc++) {                                  \
      int64_t grp = oc / cout_g, m = oc % cout_g;                            \
      T *yo = y + (n * cout + oc) * out_sp;                                  \
      for (int64_t i = 0; i < out_sp; i++)                                   \
        yo[i] = b ? b[oc] : (T) 0;                                           \
      for (int64_t ic = grp * cin_g; ic < (grp + 1) * cin_g; ic++) {         \
        const T *xi = x + (n * cin + ic) * in_sp;                            \
        const T *wk = w + (ic * cout_g + m) * ksz;                           \
        for (int64_t id = 0; id < g->in[0]; id++)                            \
          for (int64_t ih = 0; ih < g->in[1]; ih++)                          \
            for (int64_t iw = 0; iw < g->in[2]; iw++) {                      \
              T xv = xi[(id * g->in[1] + ih) * g->in[2] + iw];               \
              for (int64_t kd = 0; kd < g->k[0]; kd++) {                     \
                int64_t od = id * g->s[0] + kd * g->d[0] - g->pb[0];         \
                if (od < 0 || od >= g->out[0])                               \
                  continue;                                                  \
                for (int64_t kh = 0; kh < g->k[1]; kh++) {                   \
                  int64_t oh = ih * g->s[1] + kh * g->d[1] - g->pb[1];       \
                  if (oh < 0 || oh >= g->out[1])                             \
                    continue;                                                \
                  for (int64_t kw = 0; kw < g->k[2]; kw++) {                 \
                    int64_t ow = iw * g->s[2] + kw * g->d[2] - g->pb[2];     \
                    if (ow < 0 || ow >= g->out[2])                           \
                      continue;                                              \
                    yo[(od * g->out[1] + oh) * g->out[2] + ow] += xv         \
                        * wk[(kd * g->k[1] + kh) * g->k[2] + kw];            \
                  }                                                          \
                }                                                            \
              }                                                              \
            }                                                                \
      }                                                                      \
    }                                                                        \
}

DEFINE_CT (ct_f32, float)
DEFINE_CT (ct_f64, double)

#define DATA_OR_NULL(t) ((t) ? clinfer_tensor_get_const_data (t) : NULL)

static gboolean
eval_ct (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const CtParams *p = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *ws = clinfer_tensor_get_shape (in[1]);
  const ClinferShape *ys = clinfer_tensor_get_shape (out[0]);
  const ClinferTensor *b = node->n_inputs > 2 ? in[2] : NULL;
  ClinferWindow g;
  ClinferWindow3 g3;

  if (!ct_geom (node, xs->rank - 2, xs->dims + 2, ws->dims + 2, &g, error))
    return FALSE;
  clinfer_window_to_3d (&g, &g3);
  if (clinfer_tensor_get_n_elements (out[0]) == 0)
    return TRUE;
  switch (clinfer_tensor_get_element_type (out[0])) {
    case CLINFER_TYPE_F32:
      ct_f32 (&g3, xs->dims[0], xs->dims[1], ys->dims[1], p->group,
          clinfer_tensor_get_const_data (in[0]),
          clinfer_tensor_get_const_data (in[1]), DATA_OR_NULL (b),
          clinfer_tensor_get_data (out[0]));
      return TRUE;
    case CLINFER_TYPE_F64:
      ct_f64 (&g3, xs->dims[0], xs->dims[1], ys->dims[1], p->group,
          clinfer_tensor_get_const_data (in[0]),
          clinfer_tensor_get_const_data (in[1]), DATA_OR_NULL (b),
          clinfer_tensor_get_data (out[0]));
      return TRUE;
    case CLINFER_TYPE_F16:
      return clinfer_op_eval_via_f32 (node, in, out, eval_ct, error);
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (out[0]), error);
  }
}

const ClinferOpDef clinfer_ops_convtranspose[] = {
  { "ConvTranspose", "", 1, 0, 2, 3, 1, 1, 0, prepare_ct, g_free, infer_ct,
    eval_ct },
  { NULL }
};
