/* clinfer — Conv and the fusion pass's com.clinfer FusedConv (conv + bias +
 * residual + activation): attributes, shape inference, reference evals,
 * and the sliding-window geometry the pools share. */
#include "ops/conv.h"
#include <math.h>
#include <string.h>

/* Attribute values beyond this are rejected: it keeps every product of
 * kernel, dilation, stride and pad far from int64 overflow. */
#define WINDOW_MAX_VALUE ((int64_t) 1 << 30)
/* Input extents beyond this cannot be real tensors; rejecting them keeps
 * in + pads from overflowing. */
#define WINDOW_MAX_EXTENT ((int64_t) 1 << 60)

/* ---------------------------------------------------------------- */
/* Window attributes and geometry                                    */

gboolean
clinfer_window_read_ints (const ClinferNode *node, const char *name,
    int64_t min_value, gsize max_n, int64_t *dst, gsize *n, GError **error)
{
  const int64_t *v;
  gsize len;

  if (!clinfer_node_attr_ints (node, name, &v, &len, error))
    return FALSE;
  if (len > max_n) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: attribute '%s' has %" G_GSIZE_FORMAT " values; at most %d "
        "spatial dims are supported", clinfer_node_label (node), name, len,
        CLINFER_MAX_SPATIAL);
    return FALSE;
  }
  for (gsize i = 0; i < len; i++) {
    if (v[i] < min_value || v[i] > WINDOW_MAX_VALUE) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: attribute '%s' has value %" G_GINT64_FORMAT " at index %"
          G_GSIZE_FORMAT ", expected %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT
          "%s", clinfer_node_label (node), name, v[i], i, min_value,
          WINDOW_MAX_VALUE, strcmp (name, "pads") == 0 ? " (negative pads "
          "are not allowed)" : "");
      return FALSE;
    }
    dst[i] = v[i];
  }
  *n = len;
  return TRUE;
}

gboolean
clinfer_window_attrs_parse (const ClinferNode *node, gboolean with_ceil_mode,
    ClinferWindowAttrs *attrs, GError **error)
{
  static const char *auto_pads[] = { "NOTSET", "SAME_UPPER", "SAME_LOWER",
    "VALID" };
  const char *auto_pad;
  int64_t ceil_mode = 0;

  memset (attrs, 0, sizeof (*attrs));
  if (!clinfer_node_attr_string (node, "auto_pad", "NOTSET", &auto_pad, error))
    return FALSE;
  attrs->auto_pad = G_N_ELEMENTS (auto_pads);
  for (gsize i = 0; i < G_N_ELEMENTS (auto_pads); i++)
    if (strcmp (auto_pad, auto_pads[i]) == 0)
      attrs->auto_pad = i;
  if (*auto_pad == '\0')
    attrs->auto_pad = CLINFER_AUTO_PAD_NOTSET;
  if (attrs->auto_pad == G_N_ELEMENTS (auto_pads)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: unknown auto_pad '%s' (expected NOTSET, SAME_UPPER, SAME_LOWER "
        "or VALID)", clinfer_node_label (node), auto_pad);
    return FALSE;
  }
  if (!clinfer_window_read_ints (node, "kernel_shape", 1, CLINFER_MAX_SPATIAL,
          attrs->kernel, &attrs->n_kernel, error)
      || !clinfer_window_read_ints (node, "strides", 1, CLINFER_MAX_SPATIAL,
          attrs->strides, &attrs->n_strides, error)
      || !clinfer_window_read_ints (node, "dilations", 1, CLINFER_MAX_SPATIAL,
          attrs->dilations, &attrs->n_dilations, error)
      || !clinfer_window_read_ints (node, "pads", 0, 2 * CLINFER_MAX_SPATIAL,
          attrs->pads, &attrs->n_pads, error))
    return FALSE;
  if (with_ceil_mode) {
    if (!clinfer_node_attr_int (node, "ceil_mode", 0, &ceil_mode, error))
      return FALSE;
    attrs->ceil_mode = ceil_mode != 0;
  }
  return TRUE;
}

gboolean
clinfer_window_check_len (const ClinferNode *node, const char *name,
    gsize len, gsize expected, GError **error)
{
  if (len == 0 || len == expected)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: attribute '%s' has %" G_GSIZE_FORMAT " values, expected %"
      G_GSIZE_FORMAT " for an input with %" G_GSIZE_FORMAT " spatial dims",
      clinfer_node_label (node), name, len, expected,
      expected / (strcmp (name, "pads") == 0 ? 2 : 1));
  return FALSE;
}

gboolean
clinfer_window_check_lens (const ClinferNode *node,
    const ClinferWindowAttrs *attrs, int n, GError **error)
{
  if (n < 1 || n > CLINFER_MAX_SPATIAL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %d spatial dims are not supported (1 to %d)",
        clinfer_node_label (node), n, CLINFER_MAX_SPATIAL);
    return FALSE;
  }
  return clinfer_window_check_len (node, "kernel_shape", attrs->n_kernel, n,
          error)
      && clinfer_window_check_len (node, "strides", attrs->n_strides, n, error)
      && clinfer_window_check_len (node, "dilations", attrs->n_dilations, n,
          error)
      && clinfer_window_check_len (node, "pads", attrs->n_pads, 2 * n, error);
}

/* Output extent and pads of spatial axis @i of @win (kernel, stride,
 * dilation and explicit pads already filled in). */
static gboolean
window_axis (const ClinferNode *node, const ClinferWindowAttrs *attrs, int i,
    ClinferWindow *win, GError **error)
{
  int64_t in = win->in[i], k = win->kernel[i], s = win->stride[i];
  int64_t eff, total, out;

  if (in == CLINFER_DIM_DYNAMIC || k == CLINFER_DIM_DYNAMIC) {
    win->out[i] = CLINFER_DIM_DYNAMIC;
    return TRUE;
  }
  if (in < 0 || in > WINDOW_MAX_EXTENT) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: spatial dim %d has invalid extent %" G_GINT64_FORMAT,
        clinfer_node_label (node), i, in);
    return FALSE;
  }
  eff = (k - 1) * win->dilation[i] + 1;
  if (attrs->auto_pad == CLINFER_AUTO_PAD_SAME_UPPER
      || attrs->auto_pad == CLINFER_AUTO_PAD_SAME_LOWER) {
    int64_t needed;

    out = (in + s - 1) / s;
    needed = MAX (0, (out - 1) * s + eff - in);
    win->pad_begin[i] = attrs->auto_pad == CLINFER_AUTO_PAD_SAME_UPPER
        ? needed / 2 : needed - needed / 2;
    win->pad_end[i] = needed - win->pad_begin[i];
    win->out[i] = out;
    return TRUE;
  }
  total = in + win->pad_begin[i] + win->pad_end[i];
  if (total < eff) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: spatial dim %d: padded input extent %" G_GINT64_FORMAT
        " is smaller than the window extent %" G_GINT64_FORMAT,
        clinfer_node_label (node), i, total, eff);
    return FALSE;
  }
  if (attrs->ceil_mode) {
    out = (total - eff + s - 1) / s + 1;
    /* The last window must start inside the input or its begin pad. */
    if ((out - 1) * s >= in + win->pad_begin[i])
      out--;
  } else {
    out = (total - eff) / s + 1;
  }
  win->out[i] = out;
  return TRUE;
}

gboolean
clinfer_window_weight_kernel (const ClinferNode *node,
    const ClinferWindowAttrs *attrs, int i, int64_t *k, GError **error)
{
  if (attrs->n_kernel == 0)
    return TRUE;
  if (*k == CLINFER_DIM_DYNAMIC) {
    *k = attrs->kernel[i];
    return TRUE;
  }
  if (attrs->kernel[i] == *k)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "%s: kernel_shape[%d] = %" G_GINT64_FORMAT " does not match the "
      "weight's extent %" G_GINT64_FORMAT, clinfer_node_label (node), i,
      attrs->kernel[i], *k);
  return FALSE;
}

gboolean
clinfer_window_resolve (const ClinferNode *node, const ClinferWindowAttrs *attrs,
    int n, const int64_t *in, const int64_t *kernel, ClinferWindow *win,
    GError **error)
{
  gboolean explicit_pads = attrs->auto_pad == CLINFER_AUTO_PAD_NOTSET;

  memset (win, 0, sizeof (*win));
  if (!clinfer_window_check_lens (node, attrs, n, error))
    return FALSE;
  if (kernel == NULL && attrs->n_kernel == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'kernel_shape' is required", clinfer_node_label (node));
    return FALSE;
  }
  win->n = n;
  for (int i = 0; i < n; i++) {
    int64_t k = kernel ? kernel[i] : attrs->kernel[i];

    if (kernel && k != CLINFER_DIM_DYNAMIC && (k < 1 || k > WINDOW_MAX_VALUE)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: weight has kernel extent %" G_GINT64_FORMAT " in spatial dim "
          "%d, expected 1..%" G_GINT64_FORMAT, clinfer_node_label (node), k, i,
          WINDOW_MAX_VALUE);
      return FALSE;
    }
    if (kernel && !clinfer_window_weight_kernel (node, attrs, i, &k, error))
      return FALSE;
    win->in[i] = in[i];
    win->kernel[i] = k;
    win->stride[i] = attrs->n_strides ? attrs->strides[i] : 1;
    win->dilation[i] = attrs->n_dilations ? attrs->dilations[i] : 1;
    /* ONNX forbids pads together with auto_pad; like ONNX Runtime, the
     * auto_pad wins. */
    win->pad_begin[i] = explicit_pads && attrs->n_pads ? attrs->pads[i] : 0;
    win->pad_end[i] = explicit_pads && attrs->n_pads ? attrs->pads[n + i] : 0;
    if (!window_axis (node, attrs, i, win, error))
      return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_conv_window (const ClinferNode *node, const ClinferShape *x,
    const ClinferShape *w, ClinferWindow *win, GError **error)
{
  const ClinferConvParams *p = node->op_data;
  int rank = x->rank >= 0 ? x->rank : w->rank;
  int64_t in[CLINFER_MAX_SPATIAL] = { 0 }, k[CLINFER_MAX_SPATIAL] = { 0 };

  if (rank - 2 < 1 || rank - 2 > CLINFER_MAX_SPATIAL)
    return clinfer_window_resolve (node, &p->win, rank - 2, in, k, win, error);
  for (int i = 0; i < rank - 2; i++) {
    in[i] = x->rank >= 0 ? x->dims[i + 2] : CLINFER_DIM_DYNAMIC;
    k[i] = w->rank >= 0 ? w->dims[i + 2] : CLINFER_DIM_DYNAMIC;
  }
  return clinfer_window_resolve (node, &p->win, rank - 2, in, k, win, error);
}

void
clinfer_window_to_3d (const ClinferWindow *win, ClinferWindow3 *w3)
{
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - win->n);
    w3->in[i] = j >= 0 ? win->in[j] : 1;
    w3->out[i] = j >= 0 ? win->out[j] : 1;
    w3->k[i] = j >= 0 ? win->kernel[j] : 1;
    w3->s[i] = j >= 0 ? win->stride[j] : 1;
    w3->d[i] = j >= 0 ? win->dilation[j] : 1;
    w3->pb[i] = j >= 0 ? win->pad_begin[j] : 0;
    w3->pe[i] = j >= 0 ? win->pad_end[j] : 0;
  }
}

/* ---------------------------------------------------------------- */
/* Attributes                                                        */

gboolean
clinfer_conv_group_attr (const ClinferNode *node, int64_t *group,
    GError **error)
{
  if (!clinfer_node_attr_int (node, "group", 1, group, error))
    return FALSE;
  if (*group < 1 || *group > G_MAXINT32) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'group' is %" G_GINT64_FORMAT ", expected >= 1",
        clinfer_node_label (node), *group);
    return FALSE;
  }
  return TRUE;
}

static gboolean
parse_conv_params (ClinferNode *node, ClinferConvParams *p, GError **error)
{
  return clinfer_window_attrs_parse (node, FALSE, &p->win, error)
      && clinfer_conv_group_attr (node, &p->group, error);
}

static gboolean
prepare_conv (ClinferNode *node, GError **error)
{
  g_autofree ClinferConvParams *p = g_new0 (ClinferConvParams, 1);

  if (!parse_conv_params (node, p, error))
    return FALSE;
  node->op_data = g_steal_pointer (&p);
  return TRUE;
}

static gboolean
parse_activation (ClinferNode *node, ClinferConvParams *p, GError **error)
{
  const char *act;

  if (!clinfer_node_attr_string (node, "activation", "", &act, error)
      || !clinfer_node_attr_float (node, "activation_min", -INFINITY,
          &p->act_min, error)
      || !clinfer_node_attr_float (node, "activation_max", INFINITY,
          &p->act_max, error)
      || !clinfer_node_attr_float (node, "activation_alpha", 0.01f,
          &p->act_alpha, error))
    return FALSE;
  if (*act == '\0')
    p->act = CLINFER_ACT_NONE;
  else if (strcmp (act, "Relu") == 0)
    p->act = CLINFER_ACT_RELU;
  else if (strcmp (act, "Clip") == 0)
    p->act = CLINFER_ACT_CLIP;
  else if (strcmp (act, "LeakyRelu") == 0)
    p->act = CLINFER_ACT_LEAKY_RELU;
  else {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: unknown activation '%s' (expected \"\", Relu, Clip or LeakyRelu)",
        clinfer_node_label (node), act);
    return FALSE;
  }
  if (p->act == CLINFER_ACT_CLIP && !(p->act_min <= p->act_max)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: activation_min %g is above activation_max %g",
        clinfer_node_label (node), p->act_min, p->act_max);
    return FALSE;
  }
  return TRUE;
}

static gboolean
prepare_fused_conv (ClinferNode *node, GError **error)
{
  g_autofree ClinferConvParams *p = g_new0 (ClinferConvParams, 1);

  if (!parse_conv_params (node, p, error) || !parse_activation (node, p, error))
    return FALSE;
  node->op_data = g_steal_pointer (&p);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Shape inference                                                   */

gboolean
clinfer_conv_check_types (const ClinferNode *node, const ClinferValueInfo *in,
    GError **error)
{
  ClinferElementType t = in[0].type;

  if (t != CLINFER_TYPE_F32 && t != CLINFER_TYPE_F64 && t != CLINFER_TYPE_F16) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input X is %s, expected f32, f64 or f16", clinfer_node_label (node),
        clinfer_element_type_name (t));
    return FALSE;
  }
  for (guint i = 1; i < node->n_inputs; i++) {
    if (!in[i].present || in[i].type == t)
      continue;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input %u is %s but X is %s", clinfer_node_label (node), i,
        clinfer_element_type_name (in[i].type), clinfer_element_type_name (t));
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_conv_check_bias (const ClinferNode *node, const ClinferValueInfo *in,
    int64_t m, GError **error)
{
  if (node->n_inputs > 2 && in[2].present && in[2].shape.rank >= 0
      && (in[2].shape.rank != 1 || (m != CLINFER_DIM_DYNAMIC
              && in[2].shape.dims[0] != CLINFER_DIM_DYNAMIC
              && in[2].shape.dims[0] != m))) {
    g_autofree char *s = clinfer_shape_to_string (&in[2].shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: bias B has shape %s, expected [%" G_GINT64_FORMAT "]",
        clinfer_node_label (node), s, m);
    return FALSE;
  }
  return TRUE;
}

/* Channel counts of X, W and B against each other and the group. */
static gboolean
check_conv_channels (const ClinferNode *node, const ClinferValueInfo *in,
    int rank, GError **error)
{
  const ClinferConvParams *p = node->op_data;
  const ClinferShape *x = &in[0].shape, *w = &in[1].shape;
  int64_t c = x->rank >= 0 ? x->dims[1] : CLINFER_DIM_DYNAMIC;
  int64_t m = w->rank >= 0 ? w->dims[0] : CLINFER_DIM_DYNAMIC;
  int64_t cg = w->rank >= 0 ? w->dims[1] : CLINFER_DIM_DYNAMIC;
  const char *label = clinfer_node_label (node);

  if (w->rank >= 0 && w->rank != rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: weight W has rank %d, expected %d (M, C/group, kernel...) to "
        "match X", label, w->rank, rank);
    return FALSE;
  }
  if (c != CLINFER_DIM_DYNAMIC && c % p->group != 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %" G_GINT64_FORMAT " input channels are not divisible by group %"
        G_GINT64_FORMAT, label, c, p->group);
    return FALSE;
  }
  if (m != CLINFER_DIM_DYNAMIC && m % p->group != 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %" G_GINT64_FORMAT " output channels (W dim 0) are not divisible "
        "by group %" G_GINT64_FORMAT, label, m, p->group);
    return FALSE;
  }
  if (c != CLINFER_DIM_DYNAMIC && cg != CLINFER_DIM_DYNAMIC
      && c != cg * p->group) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: X has %" G_GINT64_FORMAT " channels but W expects %" G_GINT64_FORMAT
        " (%" G_GINT64_FORMAT " per group x group %" G_GINT64_FORMAT ")", label,
        c, cg * p->group, cg, p->group);
    return FALSE;
  }
  return clinfer_conv_check_bias (node, in, m, error);
}

/* FusedConv's residual Z must have exactly the output's shape. */
static gboolean
check_residual (const ClinferNode *node, const ClinferValueInfo *z,
    const ClinferShape *out, GError **error)
{
  gboolean ok = z->shape.rank < 0 || out->rank < 0 || z->shape.rank == out->rank;

  for (int i = 0; ok && z->shape.rank >= 0 && i < MIN (z->shape.rank, out->rank); i++)
    ok = z->shape.dims[i] == out->dims[i] || z->shape.dims[i] == CLINFER_DIM_DYNAMIC
        || out->dims[i] == CLINFER_DIM_DYNAMIC;
  if (!ok) {
    g_autofree char *zs = clinfer_shape_to_string (&z->shape);
    g_autofree char *os = clinfer_shape_to_string (out);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: residual Z has shape %s, expected the output shape %s",
        clinfer_node_label (node), zs, os);
  }
  return ok;
}

static gboolean
infer_conv (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *x = &in[0].shape, *w = &in[1].shape;
  int rank = x->rank >= 0 ? x->rank : w->rank;
  ClinferWindow win;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !clinfer_conv_check_types (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  if (rank < 0)
    return TRUE;
  if (rank < 3) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input X has rank %d, expected at least 3 (N, C, spatial...)",
        clinfer_node_label (node), rank);
    return FALSE;
  }
  if (!check_conv_channels (node, in, rank, error)
      || !clinfer_conv_window (node, x, w, &win, error))
    return FALSE;
  out[0].shape.rank = rank;
  out[0].shape.dims[0] = x->rank >= 0 ? x->dims[0] : CLINFER_DIM_DYNAMIC;
  out[0].shape.dims[1] = w->rank >= 0 ? w->dims[0] : CLINFER_DIM_DYNAMIC;
  for (int i = 0; i < win.n; i++)
    out[0].shape.dims[i + 2] = win.out[i];
  if (node->n_inputs > 3 && in[3].present)
    return check_residual (node, &in[3], &out[0].shape, error);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Reference evaluation                                              */

typedef struct {
  int64_t batch, cin, cout, cin_g, cout_g;
  ClinferWindow3 w;
} ConvDims;

static gboolean
conv_dims (const ClinferNode *node, const ClinferTensor *x,
    const ClinferTensor *w, ConvDims *c, GError **error)
{
  const ClinferConvParams *p = node->op_data;
  const ClinferShape *xs = clinfer_tensor_get_shape (x);
  const ClinferShape *ws = clinfer_tensor_get_shape (w);
  ClinferWindow win;

  if (!clinfer_conv_window (node, xs, ws, &win, error))
    return FALSE;
  c->batch = xs->dims[0];
  c->cin = xs->dims[1];
  c->cout = ws->dims[0];
  c->cin_g = c->cin / p->group;
  c->cout_g = c->cout / p->group;
  clinfer_window_to_3d (&win, &c->w);
  return TRUE;
}

/* Range [*lo, *hi) of output positions whose input index o*s + off lies in
 * [0, in). */
static void
valid_range (int64_t in, int64_t out, int64_t s, int64_t off, int64_t *lo,
    int64_t *hi)
{
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = in - 1 - off < 0 ? 0 : MIN (out, (in - 1 - off) / s + 1);
  if (*hi < *lo)
    *hi = *lo;
}

static double
activation_apply_d (const ClinferConvParams *p, double x)
{
  switch (p->act) {
    case CLINFER_ACT_RELU: return x > 0 ? x : 0;
    case CLINFER_ACT_CLIP: return x < p->act_min ? p->act_min
          : (x > p->act_max ? p->act_max : x);
    case CLINFER_ACT_LEAKY_RELU: return x >= 0 ? x : p->act_alpha * x;
    default: return x;
  }
}

/* Direct convolution of one (batch, output channel) plane: accumulate
 * every input channel of the group and kernel tap into @yo. */
#define DEFINE_CONV_PLANE(NAME, T)                                            \
static void                                                                   \
NAME (const ConvDims *c, const T *xg, const T *wo, T *yo)                     \
{                                                                             \
  const ClinferWindow3 *g = &c->w;                                            \
  int64_t in_sp = g->in[0] * g->in[1] * g->in[2];                             \
  int64_t ksz = g->k[0] * g->k[1] * g->k[2];                                  \
                                                                              \
  for (int64_t ic = 0; ic < c->cin_g; ic++) {                                 \
    const T *xi = xg + ic * in_sp;                                            \
    for (int64_t kd = 0; kd < g->k[0]; kd++)                                  \
      for (int64_t kh = 0; kh < g->k[1]; kh++)                                \
        for (int64_t kw = 0; kw < g->k[2]; kw++) {                            \
          T wv = wo[ic * ksz + (kd * g->k[1] + kh) * g->k[2] + kw];           \
          int64_t d0, d1, h0, h1, w0, w1;                                     \
          int64_t offd = kd * g->d[0] - g->pb[0];                             \
          int64_t offh = kh * g->d[1] - g->pb[1];                             \
          int64_t offw = kw * g->d[2] - g->pb[2];                             \
          valid_range (g->in[0], g->out[0], g->s[0], offd, &d0, &d1);         \
          valid_range (g->in[1], g->out[1], g->s[1], offh, &h0, &h1);         \
          valid_range (g->in[2], g->out[2], g->s[2], offw, &w0, &w1);         \
          for (int64_t od = d0; od < d1; od++)                                \
            for (int64_t oh = h0; oh < h1; oh++) {                            \
              const T *row = xi + ((od * g->s[0] + offd) * g->in[1]           \
                  + oh * g->s[1] + offh) * g->in[2] + offw;                   \
              T *yrow = yo + (od * g->out[1] + oh) * g->out[2];               \
              for (int64_t ow = w0; ow < w1; ow++)                            \
                yrow[ow] += wv * row[ow * g->s[2]];                           \
            }                                                                 \
        }                                                                     \
  }                                                                           \
}

DEFINE_CONV_PLANE (conv_plane_f32, float)
DEFINE_CONV_PLANE (conv_plane_f64, double)

#define DEFINE_CONV_REF(NAME, PLANE, T)                                       \
static void                                                                   \
NAME (const ConvDims *c, const ClinferConvParams *p, const T *x, const T *w,  \
    const T *b, const T *z, T *y)                                             \
{                                                                             \
  int64_t in_sp = c->w.in[0] * c->w.in[1] * c->w.in[2];                       \
  int64_t out_sp = c->w.out[0] * c->w.out[1] * c->w.out[2];                   \
  int64_t wsz = c->cin_g * c->w.k[0] * c->w.k[1] * c->w.k[2];                 \
                                                                              \
  _Pragma ("omp parallel for collapse(2) schedule(static)")                   \
  for (int64_t n = 0; n < c->batch; n++)                                      \
    for (int64_t oc = 0; oc < c->cout; oc++) {                                \
      int64_t g = oc / c->cout_g, base = (n * c->cout + oc) * out_sp;         \
      T *yo = y + base;                                                       \
      for (int64_t i = 0; i < out_sp; i++)                                    \
        yo[i] = b ? b[oc] : 0;                                                \
      PLANE (c, x + (n * c->cin + g * c->cin_g) * in_sp, w + oc * wsz, yo);   \
      for (int64_t i = 0; i < out_sp; i++)                                    \
        yo[i] = (T) activation_apply_d (p, (double) yo[i]                     \
            + (z ? (double) z[base + i] : 0.0));                              \
    }                                                                         \
}

DEFINE_CONV_REF (conv_ref_f32, conv_plane_f32, float)
DEFINE_CONV_REF (conv_ref_f64, conv_plane_f64, double)

#define DATA_OR_NULL(t) ((t) ? clinfer_tensor_get_const_data (t) : NULL)

static gboolean
eval_conv (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  guint n_in = MIN (node->n_inputs, 4);
  const ClinferTensor *b = n_in > 2 ? in[2] : NULL;
  const ClinferTensor *z = n_in > 3 ? in[3] : NULL;
  ConvDims c;

  if (!conv_dims (node, in[0], in[1], &c, error))
    return FALSE;
  if (c.batch == 0 || c.cout == 0)
    return TRUE;
  switch (clinfer_tensor_get_element_type (out[0])) {
    case CLINFER_TYPE_F32:
      conv_ref_f32 (&c, node->op_data, clinfer_tensor_get_const_data (in[0]),
          clinfer_tensor_get_const_data (in[1]), DATA_OR_NULL (b),
          DATA_OR_NULL (z), clinfer_tensor_get_data (out[0]));
      return TRUE;
    case CLINFER_TYPE_F64:
      conv_ref_f64 (&c, node->op_data, clinfer_tensor_get_const_data (in[0]),
          clinfer_tensor_get_const_data (in[1]), DATA_OR_NULL (b),
          DATA_OR_NULL (z), clinfer_tensor_get_data (out[0]));
      return TRUE;
    case CLINFER_TYPE_F16:
      return clinfer_op_eval_via_f32 (node, in, out, eval_conv, error);
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (out[0]), error);
  }
}

const ClinferOpDef clinfer_ops_conv[] = {
  { "Conv", "", 1, 0, 2, 3, 1, 1, 0,
    prepare_conv, g_free, infer_conv, eval_conv },
  { NULL }
};

/* Inputs X, W, B (optional), Z (optional residual added after B); the
 * activation is applied last: y = act (conv (X, W) + B + Z). */
const ClinferOpDef clinfer_ops_fused[] = {
  { "FusedConv", "com.clinfer", 1, 0, 2, 4, 1, 1, 0,
    prepare_fused_conv, g_free, infer_conv, eval_conv },
  { NULL }
};
