/* clinfer — Resize (opset 10..17) and Upsample (7..9): nearest as a byte
 * gather for every type, linear and cubic as separable passes in f32. */
#include "ops/resize.h"
#include <math.h>
#include <string.h>

typedef enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC } ResizeMode;

typedef enum {
  CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC,
  CT_TF_CROP_AND_RESIZE, CT_TF_HALF_PIXEL_FOR_NN,
} CoordMode;

typedef enum {
  NR_ROUND_PREFER_FLOOR, NR_ROUND_PREFER_CEIL, NR_FLOOR, NR_CEIL,
  NR_SIMPLE,                 /* Resize-10/Upsample: floor, ceil downscaling */
} NearestMode;

typedef struct {
  ResizeMode mode;
  CoordMode ct;
  NearestMode nearest;
  double cubic_a;
  float extrapolation;
  gboolean exclude_outside;
  /* Input indices of roi, scales and sizes (-1: none) */
  int i_roi, i_scales, i_sizes;
  gsize n_attr_scales;       /* Upsample-7: scales attribute */
  float attr_scales[CLINFER_MAX_RANK];
} ResizeData;

static const char *const mode_names[] = { "nearest", "linear", "cubic" };
static const char *const ct_names[] = { "half_pixel", "pytorch_half_pixel",
  "align_corners", "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn" };
static const char *const nearest_names[] = { "round_prefer_floor",
  "round_prefer_ceil", "floor", "ceil" };

static gboolean
parse_enum (const ClinferNode *node, const char *attr, const char *def,
    const char *const *names, int n, int *out, GError **error)
{
  const char *v;

  if (!clinfer_node_attr_string (node, attr, def, &v, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    if (g_ascii_strcasecmp (v, names[i]) == 0) {
      *out = i;
      return TRUE;
    }
  /* Upsample-1 spelled linear as "bilinear". */
  if (strcmp (attr, "mode") == 0 && g_ascii_strcasecmp (v, "bilinear") == 0) {
    *out = MODE_LINEAR;
    return TRUE;
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: %s '%s' is not supported", clinfer_node_label (node), attr, v);
  return FALSE;
}

static gboolean
prepare_upsample_attrs (ClinferNode *node, ResizeData *d, GError **error)
{
  const float *s;
  gsize n;

  d->ct = CT_ASYMMETRIC;
  d->nearest = NR_SIMPLE;
  d->i_roi = d->i_sizes = -1;
  d->i_scales = 1;
  if (strcmp (node->op_type, "Upsample") != 0 || node->opset >= 9)
    return TRUE;
  d->i_scales = -1;
  if (!clinfer_node_attr_floats (node, "scales", &s, &n, error))
    return FALSE;
  if (n == 0 || n > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the scales attribute is required (1 to %d entries)",
        clinfer_node_label (node), CLINFER_MAX_RANK);
    return FALSE;
  }
  memcpy (d->attr_scales, s, n * sizeof (float));
  d->n_attr_scales = n;
  return TRUE;
}

static gboolean
prepare_resize (ClinferNode *node, GError **error)
{
  g_autofree ResizeData *d = g_new0 (ResizeData, 1);
  int mode, ct = CT_HALF_PIXEL, nr = NR_ROUND_PREFER_FLOOR;
  int64_t excl = 0;

  if (!parse_enum (node, "mode", "nearest", mode_names, 3, &mode, error))
    return FALSE;
  d->mode = mode;
  d->cubic_a = -0.75;
  if (strcmp (node->op_type, "Upsample") == 0 || node->opset < 11) {
    if (d->mode == MODE_CUBIC) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: cubic mode needs Resize-11 or later", clinfer_node_label (node));
      return FALSE;
    }
    if (!prepare_upsample_attrs (node, d, error))
      return FALSE;
  } else {
    float a;
    if (!parse_enum (node, "coordinate_transformation_mode", "half_pixel",
            ct_names, G_N_ELEMENTS (ct_names), &ct, error)
        || !parse_enum (node, "nearest_mode", "round_prefer_floor",
            nearest_names, G_N_ELEMENTS (nearest_names), &nr, error)
        || !clinfer_node_attr_float (node, "cubic_coeff_a", -0.75f, &a, error)
        || !clinfer_node_attr_int (node, "exclude_outside", 0, &excl, error)
        || !clinfer_node_attr_float (node, "extrapolation_value", 0.f,
            &d->extrapolation, error))
      return FALSE;
    d->ct = ct;
    d->nearest = nr;
    d->cubic_a = a;
    d->exclude_outside = excl != 0;
    d->i_roi = 1;
    d->i_scales = 2;
    d->i_sizes = 3;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Output sizes                                                      */

/* One optional parameter input: presence, element count (-1 unknown) and
 * value when known. */
typedef struct {
  gboolean present;
  int64_t n;
  const ClinferTensor *value;
} ResizeArg;

typedef struct {
  int rank;
  int64_t out[CLINFER_MAX_RANK];
  double scale[CLINFER_MAX_RANK];   /* 0 when unknown */
  double roi[2 * CLINFER_MAX_RANK];
} ResizeParams;

static gboolean
resize_sizes (const ClinferNode *node, const ClinferShape *is,
    const ClinferTensor *t, ResizeParams *p, GError **error)
{
  g_autofree int64_t *v = NULL;
  gsize n;

  if (!clinfer_op_read_int_list (node, t, "sizes", &v, &n, error)
      || !clinfer_op_check_list_len (node, "sizes", n, is->rank, error))
    return FALSE;
  for (int i = 0; i < is->rank; i++) {
    if (v[i] < 0 || v[i] > G_MAXINT32) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: size %" G_GINT64_FORMAT " of dimension %d is out of range",
          clinfer_node_label (node), v[i], i);
      return FALSE;
    }
    p->out[i] = v[i];
    p->scale[i] = is->dims[i] > 0 ? (double) v[i] / (double) is->dims[i] : 0;
  }
  return TRUE;
}

static gboolean
resize_scales (const ClinferNode *node, const ClinferShape *is,
    const float *s, gsize n, ResizeParams *p, GError **error)
{
  if (!clinfer_op_check_list_len (node, "scales", n, is->rank, error))
    return FALSE;
  for (int i = 0; i < is->rank; i++) {
    double o = (double) s[i] * (double) is->dims[i];
    if (!(s[i] > 0.f) || o > (double) G_MAXINT32) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: scale %g of dimension %d is out of range",
          clinfer_node_label (node), s[i], i);
      return FALSE;
    }
    p->scale[i] = s[i];
    p->out[i] = is->dims[i] < 0 ? CLINFER_DIM_DYNAMIC : (int64_t) floor (o);
  }
  return TRUE;
}

static gboolean
resize_read_roi (const ClinferNode *node, const ResizeArg *roi, int rank,
    ResizeParams *p, GError **error)
{
  const ResizeData *d = node->op_data;

  for (int i = 0; i < rank; i++) {
    p->roi[i] = 0.;
    p->roi[i + rank] = 1.;
  }
  if (d->ct != CT_TF_CROP_AND_RESIZE || roi == NULL || roi->value == NULL)
    return TRUE;
  if (clinfer_tensor_get_n_elements (roi->value) != 2 * rank) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: roi has %" G_GINT64_FORMAT " entries, expected %d",
        clinfer_node_label (node), clinfer_tensor_get_n_elements (roi->value),
        2 * rank);
    return FALSE;
  }
  for (int i = 0; i < 2 * rank; i++)
    p->roi[i] = clinfer_tensor_get_as_double (roi->value, i);
  return TRUE;
}

/* Output extents and scales; *known FALSE while a needed value is only
 * known at run time. */
static gboolean
resize_params (const ClinferNode *node, const ClinferShape *is,
    const ResizeArg *args, ResizeParams *p, gboolean *known, GError **error)
{
  const ResizeData *d = node->op_data;
  const ResizeArg *scales = d->i_scales >= 0 ? &args[d->i_scales] : NULL;
  const ResizeArg *sizes = d->i_sizes >= 0 ? &args[d->i_sizes] : NULL;
  const ResizeArg *roi = d->i_roi >= 0 ? &args[d->i_roi] : NULL;
  g_autofree float *s = NULL;
  gsize n;

  *known = FALSE;
  p->rank = is->rank;
  if (!resize_read_roi (node, roi, is->rank, p, error))
    return FALSE;
  if (sizes && sizes->present && sizes->n != 0) {
    if (sizes->value == NULL)
      return TRUE;
    if (clinfer_tensor_get_n_elements (sizes->value) > 0) {
      *known = TRUE;
      return resize_sizes (node, is, sizes->value, p, error);
    }
  }
  if (scales == NULL) {
    *known = TRUE;
    return resize_scales (node, is, d->attr_scales, d->n_attr_scales, p, error);
  }
  if (scales->present && scales->value == NULL && scales->n != 0)
    return TRUE;
  if (!scales->present || scales->n == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: needs either scales or sizes", clinfer_node_label (node));
    return FALSE;
  }
  n = clinfer_tensor_get_n_elements (scales->value);
  s = g_new (float, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    s[i] = (float) clinfer_tensor_get_as_double (scales->value, i);
  *known = TRUE;
  return resize_scales (node, is, s, n, p, error);
}

static gboolean
infer_resize (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ResizeData *d = node->op_data;
  ResizeArg args[4] = { { 0 } };
  ResizeParams p;
  gboolean known;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (in[0].type == CLINFER_TYPE_STRING || clinfer_element_type_size (in[0].type) == 0
      || (d->mode != MODE_NEAREST && in[0].type == CLINFER_TYPE_BOOL)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: element type %s is not supported in %s mode",
        clinfer_node_label (node), clinfer_element_type_name (in[0].type),
        mode_names[d->mode]);
    return FALSE;
  }
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0)
    return TRUE;
  for (guint i = 1; i < MIN (node->n_inputs, 4); i++) {
    args[i].present = in[i].present;
    args[i].n = in[i].present ? clinfer_shape_n_elements (&in[i].shape) : 0;
    args[i].value = in[i].value;
  }
  if (!resize_params (node, &in[0].shape, args, &p, &known, error))
    return FALSE;
  out[0].shape.rank = in[0].shape.rank;
  for (int i = 0; i < in[0].shape.rank; i++)
    out[0].shape.dims[i] = known ? p.out[i] : CLINFER_DIM_DYNAMIC;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Coordinate mapping                                                */

/* Input coordinate of output index @x along one dim; *extrap TRUE when it
 * falls outside the crop (tf_crop_and_resize). Follows the ONNX reference,
 * including its use of scale * in_len as the output length. */
static double
map_coord (const ResizeData *d, double x, double scale, int64_t in_len,
    double r0, double r1, gboolean *extrap)
{
  double ow = scale * (double) in_len, v;

  *extrap = FALSE;
  switch (d->ct) {
    case CT_ALIGN_CORNERS:
      return ow == 1. ? 0. : x * (double) (in_len - 1) / (ow - 1.);
    case CT_ASYMMETRIC:
      return x / scale;
    case CT_TF_CROP_AND_RESIZE:
      v = ow == 1. ? (r1 - r0) * (double) (in_len - 1) / 2.
          : x * (r1 - r0) * (double) (in_len - 1) / (ow - 1.);
      v += r0 * (double) (in_len - 1);
      *extrap = v < 0. || v > (double) (in_len - 1);
      return v;
    case CT_PYTORCH_HALF_PIXEL:
      return ow == 1. ? -0.5 : (x + 0.5) / scale - 0.5;
    case CT_TF_HALF_PIXEL_FOR_NN:
      return (x + 0.5) / scale;
    case CT_HALF_PIXEL:
    default:
      return (x + 0.5) / scale - 0.5;
  }
}

static int64_t
nearest_index (const ResizeData *d, double v, double scale, int64_t in_len)
{
  double f, r;
  int64_t i;

  /* Far outside (a crop box from the model's data), or NaN: the edge,
   * before any conversion to int64 could overflow. */
  if (!(v > -1.))
    return 0;
  if (v > (double) in_len)
    return MAX (in_len - 1, 0);
  f = floor (v);
  r = v - f;

  if (r == 0.)
    i = (int64_t) f;
  else switch (d->nearest) {
    case NR_ROUND_PREFER_CEIL: i = (int64_t) (r < 0.5 ? f : f + 1.); break;
    case NR_FLOOR: i = (int64_t) f; break;
    case NR_CEIL: i = (int64_t) f + 1; break;
    case NR_SIMPLE: i = (int64_t) (scale < 1. ? f + 1. : f); break;
    case NR_ROUND_PREFER_FLOOR:
    default: i = (int64_t) (r <= 0.5 ? f : f + 1.); break;
  }
  return CLAMP (i, 0, in_len - 1);
}

/* Interpolation taps of one output index: input indices and weights. */
typedef ClinferResizeTap Tap;

static void
cubic_coeffs (double r, double a, double *c)
{
  double s = 1. - r;

  c[0] = ((a * (r + 1.) - 5. * a) * (r + 1.) + 8. * a) * (r + 1.) - 4. * a;
  c[1] = ((a + 2.) * r - (a + 3.)) * r * r + 1.;
  c[2] = ((a + 2.) * s - (a + 3.)) * s * s + 1.;
  c[3] = ((a * (s + 1.) - 5. * a) * (s + 1.) + 8. * a) * (s + 1.) - 4. * a;
}

static void
make_tap (const ResizeData *d, double v, int64_t in_len, Tap *t)
{
  double f, r, c[4], sum = 0.;
  int nt = d->mode == MODE_CUBIC ? 4 : 2;
  int64_t base;

  /* Taps beyond the edges are clamped anyway: keep v where floor() fits
   * int64 (NaN included). */
  if (!(v > -4.))
    v = -4.;
  else if (v > (double) in_len + 4.)
    v = (double) in_len + 4.;
  f = floor (v);
  r = v - f;

  /* An exact hit counts as ratio 1 from the left neighbour. */
  if (r == 0.) {
    r = 1.;
    f -= 1.;
  }
  base = (int64_t) f - (nt == 4 ? 1 : 0);
  if (nt == 4)
    cubic_coeffs (r, d->cubic_a, c);
  else {
    c[0] = 1. - r;
    c[1] = r;
  }
  for (int k = 0; k < nt; k++) {
    int64_t i = base + k;
    if (d->exclude_outside && (i < 0 || i >= in_len))
      c[k] = 0.;
    sum += c[k];
    t->idx[k] = CLAMP (i, 0, in_len - 1);
  }
  for (int k = 0; k < nt; k++)
    t->w[k] = (float) (d->exclude_outside && sum != 0. ? c[k] / sum : c[k]);
}

/* ---------------------------------------------------------------- */
/* Evaluation                                                        */

static gboolean
eval_params (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, ResizeParams *p, GError **error)
{
  const ClinferShape *is = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *os = clinfer_tensor_get_shape (out[0]);
  ResizeArg args[4] = { { 0 } };
  gboolean known;

  for (guint i = 1; i < MIN (node->n_inputs, 4); i++) {
    args[i].present = in[i] != NULL;
    args[i].n = in[i] ? clinfer_tensor_get_n_elements (in[i]) : 0;
    args[i].value = in[i];
  }
  if (!resize_params (node, is, args, p, &known, error))
    return FALSE;
  for (int i = 0; i < is->rank; i++)
    if (!known || p->out[i] != os->dims[i] || (is->dims[i] == 0 && p->out[i] > 0)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: cannot resize dimension %d from %" G_GINT64_FORMAT " to %"
          G_GINT64_FORMAT, clinfer_node_label (node), i, is->dims[i],
          os->dims[i]);
      return FALSE;
    }
  return TRUE;
}

static void
store_value (ClinferElementType type, gpointer p, int64_t i, double v)
{
  /* Integer outputs round; NaN and out-of-range values never reach a cast. */
  if (!clinfer_element_type_is_float (type))
    v = isnan (v) ? 0. : CLAMP (nearbyint (v), -9.2e18, 1.8e19);
  switch (type) {
    case CLINFER_TYPE_F32: ((float *) p)[i] = (float) v; break;
    case CLINFER_TYPE_F64: ((double *) p)[i] = v; break;
    case CLINFER_TYPE_F16: ((uint16_t *) p)[i] = clinfer_float_to_half ((float) v); break;
    case CLINFER_TYPE_BF16: ((uint16_t *) p)[i] = clinfer_float_to_bfloat16 ((float) v); break;
    case CLINFER_TYPE_I8: ((int8_t *) p)[i] = (int8_t) CLAMP (v, -128., 127.); break;
    case CLINFER_TYPE_U8: ((uint8_t *) p)[i] = (uint8_t) CLAMP (v, 0., 255.); break;
    case CLINFER_TYPE_I16: ((int16_t *) p)[i] = (int16_t) CLAMP (v, -32768., 32767.); break;
    case CLINFER_TYPE_U16: ((uint16_t *) p)[i] = (uint16_t) CLAMP (v, 0., 65535.); break;
    case CLINFER_TYPE_I32:
      ((int32_t *) p)[i] = (int32_t) CLAMP (v, -2147483648., 2147483647.);
      break;
    case CLINFER_TYPE_U32: ((uint32_t *) p)[i] = (uint32_t) CLAMP (v, 0., 4294967295.); break;
    case CLINFER_TYPE_I64: ((int64_t *) p)[i] = (int64_t) MIN (v, 9.2e18); break;
    case CLINFER_TYPE_U64: ((uint64_t *) p)[i] = v < 0. ? 0 : (uint64_t) v; break;
    default: break;
  }
}

/* drow[j] = srow[map[j]] (fill where map[j] < 0), fixed-size copies for
 * the common element sizes. */
static void
gather_row (guint8 *drow, const guint8 *srow, const int64_t *map, int64_t n,
    gsize es, const guint8 *fill)
{
#define GATHER_ROW(T)                                                       \
  do {                                                                     \
    T *d = (T *) drow, f;                                                  \
    const T *sp = (const T *) srow;                                        \
    memcpy (&f, fill, sizeof (T));                                         \
    for (int64_t j = 0; j < n; j++) {                                      \
      int64_t m = map ? map[j] : 0;                                        \
      d[j] = m < 0 ? f : sp[m];                                            \
    }                                                                      \
  } while (0)
  switch (es) {
    case 1: GATHER_ROW (uint8_t); break;
    case 2: GATHER_ROW (uint16_t); break;
    case 4: GATHER_ROW (uint32_t); break;
    case 8: GATHER_ROW (uint64_t); break;
    default:
      for (int64_t j = 0; j < n; j++) {
        int64_t m = map ? map[j] : 0;
        memcpy (drow + j * es, m < 0 ? fill : srow + m * es, es);
      }
      break;
  }
#undef GATHER_ROW
}

/* Nearest: out[o...] = in[map_0[o_0], ...] on bytes; -1 = extrapolate. */
static gboolean
eval_nearest (const ClinferNode *node, const ClinferTensor *x, ClinferTensor *y,
    const ResizeParams *p)
{
  const ResizeData *d = node->op_data;
  const ClinferShape *is = clinfer_tensor_get_shape (x);
  const ClinferShape *os = clinfer_tensor_get_shape (y);
  ClinferElementType type = clinfer_tensor_get_element_type (x);
  gsize es = clinfer_element_type_size (type);
  int r = is->rank;
  int64_t *maps[CLINFER_MAX_RANK] = { NULL }, ist[CLINFER_MAX_RANK], rows = 1;
  int64_t n = clinfer_tensor_get_n_elements (y), inner = r ? os->dims[r - 1] : 1;
  const guint8 *src = clinfer_tensor_get_const_data (x);
  guint8 *dst = clinfer_tensor_get_data (y), fill[16] = { 0 };

  store_value (type, fill, 0, d->extrapolation);
  clinfer_shape_elem_strides (is, ist);
  for (int i = 0; i < r; i++) {
    maps[i] = g_new (int64_t, MAX (os->dims[i], 1));
    for (int64_t o = 0; o < os->dims[i]; o++) {
      gboolean ex;
      double v = map_coord (d, (double) o, p->scale[i], is->dims[i], p->roi[i],
          p->roi[i + r], &ex);
      maps[i][o] = ex ? -1 : nearest_index (d, v, p->scale[i], is->dims[i]);
    }
    if (i < r - 1)
      rows *= os->dims[i];
  }
  if (n > 0) {
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t row = 0; row < rows; row++) {
      int64_t rem = row, off = 0;
      gboolean ex = FALSE;
      guint8 *drow = dst + (gsize) (row * inner) * es;
      for (int i = r - 2; i >= 0; i--) {
        int64_t m = maps[i][rem % os->dims[i]];
        rem /= os->dims[i];
        ex = ex || m < 0;
        off += m * ist[i];
      }
      if (ex)
        for (int64_t j = 0; j < inner; j++)
          memcpy (drow + j * es, fill, es);
      else
        gather_row (drow, src + (gsize) off * es, r ? maps[r - 1] : NULL,
            inner, es, fill);
    }
  }
  for (int i = 0; i < r; i++)
    g_free (maps[i]);
  return TRUE;
}

/* Taps of one dim; NULL when the dim maps onto itself unchanged. */
static Tap *
dim_taps (const ResizeData *d, const ResizeParams *p, int i, int64_t in_len)
{
  int64_t out_len = p->out[i];
  Tap *taps = g_new0 (Tap, MAX (out_len, 1));
  gboolean identity = out_len == in_len;

  for (int64_t o = 0; o < out_len; o++) {
    double v = map_coord (d, (double) o, p->scale[i], in_len, p->roi[i],
        p->roi[i + p->rank], &taps[o].extrap);
    make_tap (d, v, in_len, &taps[o]);
    if (taps[o].extrap || v != (double) o)
      identity = FALSE;
  }
  if (identity) {
    g_free (taps);
    return NULL;
  }
  return taps;
}

/* One separable pass along a dim: [outer, n_in, inner] -> [outer, n_out,
 * inner]. */
static void
resample_dim (const float *src, float *dst, int64_t outer, int64_t n_in,
    int64_t n_out, int64_t inner, const Tap *taps, int nt, float extrap)
{
#pragma omp parallel for schedule(static) if (outer * n_out * inner > 32768)
  for (int64_t ox = 0; ox < outer * n_out; ox++) {
    int64_t o = ox / n_out, x = ox % n_out;
    const Tap *t = &taps[x];
    float *drow = dst + ox * inner;

    if (t->extrap) {
      for (int64_t j = 0; j < inner; j++)
        drow[j] = extrap;
      continue;
    }
    if (inner == 1) {
      const float *srow = src + o * n_in;
      float acc = 0.f;
      for (int k = 0; k < nt; k++)
        acc += t->w[k] * srow[t->idx[k]];
      drow[0] = acc;
      continue;
    }
    for (int64_t j = 0; j < inner; j++)
      drow[j] = 0.f;
    for (int k = 0; k < nt; k++) {
      const float *srow = src + (o * n_in + t->idx[k]) * inner;
      float w = t->w[k];
      for (int64_t j = 0; j < inner; j++)
        drow[j] += w * srow[j];
    }
  }
}

static gboolean
eval_interp (const ClinferNode *node, const ClinferTensor *x, ClinferTensor *y,
    const ResizeParams *p, GError **error)
{
  const ResizeData *d = node->op_data;
  ClinferShape cur = *clinfer_tensor_get_shape (x);
  ClinferElementType type = clinfer_tensor_get_element_type (x);
  int64_t n = clinfer_tensor_get_n_elements (x), on;
  int nt = d->mode == MODE_CUBIC ? 4 : 2;
  float *buf = g_try_new (float, MAX (n, 1));

  if (buf == NULL)
    goto oom;
  if (type == CLINFER_TYPE_F32)
    memcpy (buf, clinfer_tensor_get_const_data (x), n * sizeof (float));
  else
    for (int64_t i = 0; i < n; i++)
      buf[i] = (float) clinfer_tensor_get_as_double (x, i);
  for (int i = cur.rank - 1; i >= 0; i--) {
    g_autofree Tap *taps = dim_taps (d, p, i, cur.dims[i]);
    int64_t outer = 1, inner = 1, in_len = cur.dims[i];
    float *next;
    if (taps == NULL)
      continue;
    for (int k = 0; k < i; k++)
      outer *= cur.dims[k];
    for (int k = i + 1; k < cur.rank; k++)
      inner *= cur.dims[k];
    cur.dims[i] = p->out[i];
    on = clinfer_shape_n_elements (&cur);
    /* One dim at a time: an upscaled dim before a downscaled one can make
     * the intermediate larger than input and output; the memory limit
     * bounds it too. */
    if (on < 0 || (guint64) on > clinfer_graph_get_memory_limit (node->graph)
        / sizeof (float) || (next = g_try_new (float, MAX (on, 1))) == NULL)
      goto oom;
    resample_dim (buf, next, outer, in_len, p->out[i], inner, taps, nt,
        d->extrapolation);
    g_free (buf);
    buf = next;
  }
  n = clinfer_tensor_get_n_elements (y);
  if (type == CLINFER_TYPE_F32)
    memcpy (clinfer_tensor_get_data (y), buf, n * sizeof (float));
  else
    for (int64_t i = 0; i < n; i++)
      store_value (type, clinfer_tensor_get_data (y), i, buf[i]);
  g_free (buf);
  return TRUE;
oom:
  g_free (buf);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
      "%s: the resize's intermediate buffers would exceed the memory limit "
      "of %" G_GUINT64_FORMAT " bytes (resize the downscaled dims first, in "
      "a Resize of their own)", clinfer_node_label (node),
      clinfer_graph_get_memory_limit (node->graph));
  return FALSE;
}

static gboolean
eval_resize (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const ResizeData *d = node->op_data;
  ResizeParams p;

  if (!eval_params (node, in, out, &p, error))
    return FALSE;
  if (clinfer_tensor_get_n_elements (out[0]) == 0)
    return TRUE;
  if (d->mode == MODE_NEAREST)
    return eval_nearest (node, in[0], out[0], &p);
  return eval_interp (node, in[0], out[0], &p, error);
}

#define NV CLINFER_OP_SHAPE_NEEDS_VALUES

const ClinferOpDef clinfer_ops_resize[] = {
  { "Resize", "", 11, 0, 1, 4, 1, 1, NV, prepare_resize, g_free, infer_resize, eval_resize },
  { "Resize", "", 10, 10, 2, 2, 1, 1, NV, prepare_resize, g_free, infer_resize, eval_resize },
  { "Upsample", "", 9, 0, 2, 2, 1, 1, NV, prepare_resize, g_free, infer_resize, eval_resize },
  { "Upsample", "", 7, 8, 1, 1, 1, 1, 0, prepare_resize, g_free, infer_resize, eval_resize },
  { NULL }
};

/* ---------------------------------------------------------------- */
/* Geometry for device kernels (ops/resize.h)                        */

gboolean
clinfer_resize_geometry (const ClinferNode *node, ClinferElementType type,
    const ClinferValueInfo *in, ClinferResizeGeometry *g, GError **error)
{
  const ResizeData *d = node->op_data;
  const ClinferShape *is = &in[0].shape;
  ResizeArg args[4] = { { 0 } };
  ResizeParams p;
  gboolean known;

  memset (g, 0, sizeof (*g));
  for (guint i = 1; i < MIN (node->n_inputs, 4); i++) {
    args[i].present = in[i].present;
    args[i].n = in[i].present ? clinfer_shape_n_elements (&in[i].shape) : 0;
    args[i].value = in[i].value;
  }
  if (!resize_params (node, is, args, &p, &known, error))
    return FALSE;
  if (!known) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: scales or sizes are not known", clinfer_node_label (node));
    return FALSE;
  }
  g->mode = (ClinferResizeMode) d->mode;
  g->n_taps = d->mode == MODE_NEAREST ? 1 : d->mode == MODE_LINEAR ? 2 : 4;
  g->rank = is->rank;
  g->extrapolation = d->extrapolation;
  store_value (type, &g->fill, 0, d->extrapolation);
  for (int i = 0; i < is->rank; i++)
    g->out[i] = p.out[i];
  /* An empty output reads nothing: no taps, whose tables would be sized
   * by the other (possibly huge) dims. */
  for (int i = 0; i < is->rank; i++)
    if (p.out[i] == 0)
      return TRUE;
  for (int i = 0; i < is->rank; i++) {
    if (d->mode != MODE_NEAREST) {
      g->taps[i] = dim_taps (d, &p, i, is->dims[i]);
      continue;
    }
    g->taps[i] = g_new0 (Tap, MAX (p.out[i], 1));
    for (int64_t o = 0; o < p.out[i]; o++) {
      Tap *t = &g->taps[i][o];
      double v = map_coord (d, (double) o, p.scale[i], is->dims[i], p.roi[i],
          p.roi[i + is->rank], &t->extrap);
      t->idx[0] = t->extrap ? 0 : nearest_index (d, v, p.scale[i], is->dims[i]);
      t->w[0] = 1.f;
    }
  }
  return TRUE;
}

gboolean
clinfer_resize_const_geometry (const ClinferNode *node,
    ClinferResizeGeometry *g)
{
  ClinferValueInfo in[4] = { { 0 } };

  memset (g, 0, sizeof (*g));
  for (guint i = 0; i < MIN (node->n_inputs, 4); i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d == NULL)
      continue;
    if (i > 0 && d->value == NULL)
      return FALSE;
    in[i].present = TRUE;
    in[i].type = d->type;
    in[i].shape = d->shape;
    in[i].value = d->value;
  }
  return in[0].present
      && clinfer_resize_geometry (node, CLINFER_TYPE_F32, in, g, NULL);
}

void
clinfer_resize_geometry_clear (ClinferResizeGeometry *g)
{
  for (int i = 0; i < CLINFER_MAX_RANK; i++)
    g_clear_pointer (&g->taps[i], g_free);
}
