/* Pre-processing on the CPU: colour conversion, bilinear resize (stretch,
 * letterbox or crop), mean/scale, channel order, NCHW/NHWC layout and
 * f32/f16/u8 output in one pass over the model input, rows split over
 * OpenMP threads (the engine's thread runtime).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferpreprocesscpu.h"

#include <math.h>
#include <string.h>

/* Below this many model pixels threads cost more than they save. */
#define PARALLEL_MIN_PIXELS 4096

static gboolean gst_clinfer_preprocess_cpu_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error);
static gboolean gst_clinfer_preprocess_cpu_run (GstClinferPreprocess * pp,
    GstBuffer * buffer, GError ** error);
static void gst_clinfer_preprocess_cpu_free (GstClinferPreprocess * pp);

static const GstClinferPreprocessFuncs cpu_funcs = {
  "cpu",
  gst_clinfer_preprocess_cpu_bind,
  gst_clinfer_preprocess_cpu_run,
  gst_clinfer_preprocess_cpu_free,
};

static Tap *
make_taps (gint n, gint dst_start, gint dst_len, gdouble src_start,
    gdouble src_len, gint src_size)
{
  Tap *taps = g_new (Tap, n);
  gdouble ratio = src_len / dst_len;
  gint i;

  for (i = 0; i < n; i++) {
    gdouble s, fl;

    if (i < dst_start || i >= dst_start + dst_len) {
      taps[i].i0 = taps[i].i1 = -1;
      taps[i].f = 0;
      continue;
    }
    /* Half-pixel centres (ONNX Resize "half_pixel", OpenCV INTER_LINEAR),
     * clamped to the frame. */
    s = src_start + (i + 0.5 - dst_start) * ratio - 0.5;
    s = CLAMP (s, 0.0, (gdouble) (src_size - 1));
    fl = floor (s);
    taps[i].i0 = (gint) fl;
    taps[i].i1 = MIN (taps[i].i0 + 1, src_size - 1);
    taps[i].f = (gfloat) (s - fl);
  }
  return taps;
}

static void
setup_yuv (GstClinferPreprocessCpu * self, const GstVideoInfo * vinfo)
{
  const GstVideoColorimetry *cm = &GST_VIDEO_INFO_COLORIMETRY (vinfo);
  gdouble kr, kb, kg;

  if (!gst_video_color_matrix_get_Kr_Kb (cm->matrix, &kr, &kb)) {
    /* RGB or unknown matrix on a YUV frame: BT.601, as videoconvert does. */
    kr = 0.299;
    kb = 0.114;
  }
  kg = 1.0 - kr - kb;
  if (cm->range == GST_VIDEO_COLOR_RANGE_0_255) {
    self->y_offset = 0;
    self->y_scale = 1;
    self->c_scale = 1;
  } else {
    self->y_offset = 16;
    self->y_scale = 255.0 / 219.0;
    self->c_scale = 255.0 / 224.0;
  }
  self->rv = 2.0 * (1.0 - kr);
  self->bu = 2.0 * (1.0 - kb);
  self->gu = -2.0 * kb * (1.0 - kb) / kg;
  self->gv = -2.0 * kr * (1.0 - kr) / kg;
}

#ifdef GST_CLINFER_HAVE_AVX2
gboolean
gst_clinfer_preprocess_avx2_available (void)
{
  const gchar *isa = g_getenv ("CLINFER_CPU_ISA");

  /* The engine's switch for its own kernels applies here too. */
  if (isa != NULL && g_ascii_strcasecmp (isa, "generic") == 0)
    return FALSE;
  __builtin_cpu_init ();
  return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
}
#endif

#ifdef GST_CLINFER_HAVE_AVX2
/* Shuffle of sample bytes @first and @second of both 8-byte reads of a
 * 128-bit lane into four zero-extended 32-bit words, in both lanes. */
static void
set_simd_mask (guint8 mask[32], gint first, gint second)
{
  gint i;

  memset (mask, 0x80, 32);
  for (i = 0; i < 32; i += 16) {
    mask[i] = first;
    mask[i + 4] = second;
    mask[i + 8] = 8 + first;
    mask[i + 12] = 8 + second;
  }
}

/* Tables of the packed RGB to NHWC f32 rows. Register r of a group of 8
 * columns holds, per 128-bit lane, the 8-byte reads of two neighbouring
 * columns: lanes (0, 1), (1, 2) | (2, 3), (4, 5) | (5, 6), (6, 7), the
 * first columns of which are lane_column[]; each lane's 4 values belong
 * to those two columns only. */
static void
setup_packed_nhwc (GstClinferPreprocessCpu * self)
{
  static const gint lane_column[3][2] = { {0, 1}, {2, 4}, {5, 6} };
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  gint byte_of_channel[3], comp_of_channel[3], r, l, d, k, u;

  if (self->family != FAMILY_PACKED_RGB || cfg->type != CLINFER_TYPE_F32
      || self->pixel_step != 3)
    return;
  /* NHWC: channel_offset[k] is the model channel component k feeds. */
  for (k = 0; k < 3; k++) {
    byte_of_channel[self->channel_offset[k]] = self->comp_offset[k];
    comp_of_channel[self->channel_offset[k]] = k;
  }
  memset (self->nhwc_mask, 0x80, sizeof (self->nhwc_mask));
  for (r = 0; r < 3; r++) {
    for (l = 0; l < 2; l++) {
      for (d = 0; d < 4; d++) {
        gint j = 8 * r + 4 * l + d, pixel = j / 3, ch = j % 3;
        gint byte = (pixel - lane_column[r][l]) * 8 + byte_of_channel[ch];

        self->nhwc_mask[r][0][16 * l + 4 * d] = byte;
        self->nhwc_mask[r][1][16 * l + 4 * d] = byte + self->pixel_stride;
        k = comp_of_channel[ch];
        self->nhwc_inv[j] = self->inv_scale[k];
        self->nhwc_bias[j] = -self->mean[k] * self->inv_scale[k];
      }
    }
  }
  self->nhwc_weight = g_new (gfloat, (gsize) cfg->width * 3);
  for (u = 0; u < cfg->width; u++)
    for (k = 0; k < 3; k++)
      self->nhwc_weight[u * 3 + k] = self->x_weight[u];
  self->packed_nhwc = TRUE;
}

/* Cache lines that the reads of 8 columns from any of the SIMD groups can
 * touch in a frame row, for any alignment of the row: the span of the
 * reads, rounded up to lines, plus one for a span straddling a line. */
static gint
simd_prefetch_lines (const GstClinferPreprocessCpu * self)
{
  gint u, n = 1;

  for (u = self->simd_begin; u < self->simd_end; u += 8) {
    gint64 span = (gint64) self->x_offset[u + 7] + 8 - self->x_offset[u];

    n = MAX (n, (gint) ((span + 62) / 64) + 1);
  }
  return n;
}
#endif

/* Tables of the AVX2 rows: the model columns, from the first of the frame
 * rectangle on, whose 8-byte reads at the first tap (plane 0 and chroma)
 * stay inside the frame's rows, rounded down to a multiple of 8. */
static void
setup_simd (GstClinferPreprocessCpu * self)
{
#ifdef GST_CLINFER_HAVE_AVX2
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  const GstClinferGeometry *g = &self->parent.geometry;
  gint w = cfg->width, frame_w = g->frame_width, u, end, c;
  gboolean yuv = self->family == FAMILY_NV12 || self->family == FAMILY_I420;
  gint cps = self->family == FAMILY_NV12 ? 2 : 1;
  gint64 row_bytes = (gint64) frame_w * self->pixel_stride;
  gint64 chroma_bytes = (gint64) ((frame_w + 1) / 2) * cps;

  if (cfg->channels != 3 || !gst_clinfer_preprocess_avx2_available ())
    return;
  self->x_offset = g_new0 (gint32, w);
  self->c_offset = g_new0 (gint32, w);
  self->x_weight = g_new0 (gfloat, w);
  self->c_weight = g_new0 (gfloat, w);
  end = g->dst_x;
  for (u = g->dst_x; u < g->dst_x + g->dst_w; u++) {
    const Tap *t = &self->xtaps[u];
    gint64 x0 = (gint64) t->i0 * self->pixel_stride;
    gint64 c0 = (gint64) (t->i0 / 2) * cps, c1 = (gint64) (t->i1 / 2) * cps;

    /* make_taps() gives i1 = i0 + 1, or i1 = i0 with weight 0 at the
     * frame's edge; the rows rely on it. */
    if ((t->i1 != t->i0 + 1 && (t->i1 != t->i0 || t->f != 0.f))
        || x0 + 8 > row_bytes || (yuv && c0 + 8 > chroma_bytes))
      break;
    self->x_offset[u] = (gint32) x0;
    self->x_weight[u] = t->f;
    self->c_offset[u] = (gint32) c0;
    /* The chroma taps are one sample apart or the same sample. */
    self->c_weight[u] = c1 != c0 ? t->f : 0.f;
    end = u + 1;
  }
  self->simd_begin = g->dst_x;
  self->simd_end = g->dst_x + (end - g->dst_x) / 8 * 8;
  self->use_simd = self->simd_end > self->simd_begin;

  switch (self->family) {
    case FAMILY_PACKED_RGB:
      for (c = 0; c < 3; c++)
        set_simd_mask (self->simd_mask[c], self->comp_offset[c],
            self->pixel_stride + self->comp_offset[c]);
      break;
    case FAMILY_NV12:
      set_simd_mask (self->simd_mask[0], 0, 1);
      set_simd_mask (self->simd_mask[1], 0, 2);
      set_simd_mask (self->simd_mask[2], 1, 3);
      break;
    case FAMILY_GRAY:
    case FAMILY_I420:
    default:
      for (c = 0; c < 3; c++)
        set_simd_mask (self->simd_mask[c], 0, 1);
      break;
  }
  self->prefetch_lines = simd_prefetch_lines (self);
  if (self->use_simd)
    setup_packed_nhwc (self);
#endif
}

GstClinferPreprocess *
gst_clinfer_preprocess_cpu_new (const GstClinferPreprocessConfig * config,
    GError ** error)
{
  GstClinferPreprocessCpu *self;
  const GstVideoInfo *vinfo = &config->vinfo;
  const GstClinferGeometry *g;
  gint c;

  self = g_new0 (GstClinferPreprocessCpu, 1);
  self->parent.funcs = &cpu_funcs;
  self->parent.config = *config;
  gst_clinfer_geometry_init (&self->parent.geometry,
      GST_VIDEO_INFO_WIDTH (vinfo), GST_VIDEO_INFO_HEIGHT (vinfo),
      config->width, config->height, config->resize_method);
  g = &self->parent.geometry;

  switch (GST_VIDEO_INFO_FORMAT (vinfo)) {
    case GST_VIDEO_FORMAT_GRAY8:
      /* comp_offset all 0: the AVX2 rows read it as packed RGB. */
      self->family = FAMILY_GRAY;
      self->pixel_stride = 1;
      break;
    case GST_VIDEO_FORMAT_NV12:
      self->family = FAMILY_NV12;
      self->pixel_stride = 1;   /* of the Y plane */
      setup_yuv (self, vinfo);
      break;
    case GST_VIDEO_FORMAT_I420:
      self->family = FAMILY_I420;
      self->pixel_stride = 1;
      setup_yuv (self, vinfo);
      break;
    default:
      if (!GST_VIDEO_INFO_IS_RGB (vinfo) || GST_VIDEO_INFO_N_PLANES (vinfo) != 1
          || GST_VIDEO_INFO_COMP_DEPTH (vinfo, 0) != 8) {
        g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
            "video format %s is not supported by the CPU pre-processing",
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (vinfo)));
        g_free (self);
        return NULL;
      }
      self->family = FAMILY_PACKED_RGB;
      for (c = 0; c < 3; c++)
        self->comp_offset[c] = GST_VIDEO_INFO_COMP_POFFSET (vinfo, c);
      self->pixel_stride = GST_VIDEO_INFO_COMP_PSTRIDE (vinfo, 0);
      break;
  }

  self->xtaps = make_taps (config->width, g->dst_x, g->dst_w, g->src_x,
      g->src_w, g->frame_width);
  self->ytaps = make_taps (config->height, g->dst_y, g->dst_h, g->src_y,
      g->src_h, g->frame_height);
  /* Component k (R, G, B) feeds model channel k, or 2 - k when the model
   * wants B, G, R. */
  for (c = 0; c < 3; c++) {
    gint ch = config->channels == 3 && config->reverse_channels ? 2 - c : c;

    if (ch >= config->channels)
      ch = 0;
    self->mean[c] = config->mean[ch];
    self->inv_scale[c] = 1.0f / config->scale[ch];
    self->channel_offset[c] = config->layout == GST_CLINFER_LAYOUT_NCHW
        ? (gsize) ch * config->width * config->height : (gsize) ch;
  }
  self->pixel_step = config->layout == GST_CLINFER_LAYOUT_NCHW ? 1
      : (gsize) config->channels;
  setup_simd (self);
  return &self->parent;
}

static void
gst_clinfer_preprocess_cpu_free (GstClinferPreprocess * pp)
{
  GstClinferPreprocessCpu *self = (GstClinferPreprocessCpu *) pp;

  g_clear_pointer (&self->input, clinfer_tensor_unref);
  g_free (self->xtaps);
  g_free (self->ytaps);
  g_free (self->x_offset);
  g_free (self->c_offset);
  g_free (self->x_weight);
  g_free (self->c_weight);
  g_free (self->nhwc_weight);
  g_free (self);
}

static inline gfloat
clamp_255 (gfloat v)
{
  return v < 0.f ? 0.f : (v > 255.f ? 255.f : v);
}

/* The frame rows one model row reads: the two luma/packed rows of the
 * vertical taps and, for YUV, the chroma rows holding their U and V. */
typedef struct
{
  const guint8 *p[2];
  const guint8 *u[2], *v[2];
} Rows;

/* The three samples of pixel @x in row @k (0 or 1) of @r: R, G, B of RGB
 * frames, the gray value three times for GRAY8, and Y, U, V (raw) for YUV
 * frames, which are converted after interpolation (finish_yuv()). Always
 * inlined into one loop per format family, so the switch disappears. */
static G_ALWAYS_INLINE inline void
fetch_samples (const GstClinferPreprocessCpu * self, FormatFamily family,
    const Rows * r, gint k, gint x, gfloat s[3])
{
  const guint8 *p;
  gint cx;

  switch (family) {
    case FAMILY_PACKED_RGB:
      p = r->p[k] + (gsize) x * self->pixel_stride;
      s[0] = p[self->comp_offset[0]];
      s[1] = p[self->comp_offset[1]];
      s[2] = p[self->comp_offset[2]];
      return;
    case FAMILY_GRAY:
      s[0] = s[1] = s[2] = r->p[k][x];
      return;
    case FAMILY_NV12:
    case FAMILY_I420:
    default:
      cx = (x / 2) * (family == FAMILY_NV12 ? 2 : 1);
      s[0] = r->p[k][x];
      s[1] = r->u[k][cx];
      s[2] = r->v[k][cx];
      return;
  }
}

/* Interpolated Y, U, V to R, G, B (0..255). Interpolating before the
 * conversion is exact (the conversion is affine) except for clamping,
 * which happens once, here. */
static inline void
finish_yuv (const GstClinferPreprocessCpu * self, gfloat px[3])
{
  gfloat yy = (px[0] - self->y_offset) * self->y_scale;
  gfloat u = (px[1] - 128.f) * self->c_scale;
  gfloat v = (px[2] - 128.f) * self->c_scale;

  px[0] = clamp_255 (yy + self->rv * v);
  px[1] = clamp_255 (yy + self->gu * u + self->gv * v);
  px[2] = clamp_255 (yy + self->bu * u);
}

/* Gray value (0..255) for one-channel models: BT.601 luma of RGB frames,
 * the GRAY8 value, or the raw Y of YUV frames (expanded to full range after
 * interpolation). */
static G_ALWAYS_INLINE inline gfloat
fetch_gray (const GstClinferPreprocessCpu * self, FormatFamily family,
    const Rows * r, gint k, gint x)
{
  gfloat s[3];

  switch (family) {
    case FAMILY_PACKED_RGB:
      fetch_samples (self, family, r, k, x, s);
      return 0.299f * s[0] + 0.587f * s[1] + 0.114f * s[2];
    case FAMILY_GRAY:
    default:
      return r->p[k][x];
  }
}

static G_ALWAYS_INLINE inline void
store (ClinferElementType type, gpointer data, gsize index, gfloat value)
{
  switch (type) {
    case CLINFER_TYPE_F16:
      ((guint16 *) data)[index] = clinfer_float_to_half (value);
      break;
    case CLINFER_TYPE_U8:
      ((guint8 *) data)[index] = (guint8) CLAMP (lrintf (value), 0, 255);
      break;
    case CLINFER_TYPE_F32:
    default:
      ((gfloat *) data)[index] = value;
      break;
  }
}

static void
get_rows (const GstClinferPreprocessCpu * self, const GstVideoFrame * frame,
    const Tap * ty, Rows * r)
{
  const guint8 *plane0 = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gsize stride0 = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  gint k, y;

  for (k = 0; k < 2; k++) {
    y = k == 0 ? ty->i0 : ty->i1;
    r->p[k] = plane0 + (gsize) y * stride0;
    if (self->family == FAMILY_NV12) {
      r->u[k] = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 1)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (frame, 1);
      r->v[k] = r->u[k] + 1;
    } else if (self->family == FAMILY_I420) {
      r->u[k] = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 1)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (frame, 1);
      r->v[k] = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 2)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (frame, 2);
    } else {
      r->u[k] = r->v[k] = NULL;
    }
  }
}

/* One model row; @family and @type are constants in each caller, so the
 * compiler makes one loop per format family and element type. */
static G_ALWAYS_INLINE inline void
process_row_family (const GstClinferPreprocessCpu * self,
    const GstVideoFrame * frame, gint v, gpointer data, gint u_begin,
    gint u_end, FormatFamily family, ClinferElementType type)
{
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  const Tap *ty = &self->ytaps[v];
  gint w = cfg->width, u, k;
  gboolean gray = cfg->channels == 1;
  gsize index = ((gsize) v * w + u_begin) * self->pixel_step;
  Rows rows;

  if (ty->i0 >= 0)
    get_rows (self, frame, ty, &rows);

  for (u = u_begin; u < u_end; u++, index += self->pixel_step) {
    const Tap *tx = &self->xtaps[u];
    gfloat px[3] = { 0, 0, 0 };

    if (tx->i0 >= 0 && ty->i0 >= 0) {
      gfloat fx = tx->f, fy = ty->f;
      gfloat w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy);
      gfloat w10 = (1 - fx) * fy, w11 = fx * fy;

      if (gray) {
        px[0] = w00 * fetch_gray (self, family, &rows, 0, tx->i0)
            + w01 * fetch_gray (self, family, &rows, 0, tx->i1)
            + w10 * fetch_gray (self, family, &rows, 1, tx->i0)
            + w11 * fetch_gray (self, family, &rows, 1, tx->i1);
        if (family == FAMILY_NV12 || family == FAMILY_I420)
          px[0] = clamp_255 ((px[0] - self->y_offset) * self->y_scale);
      } else {
        gfloat a[3], b[3], d[3], e[3];

        fetch_samples (self, family, &rows, 0, tx->i0, a);
        fetch_samples (self, family, &rows, 0, tx->i1, b);
        fetch_samples (self, family, &rows, 1, tx->i0, d);
        fetch_samples (self, family, &rows, 1, tx->i1, e);
        for (k = 0; k < 3; k++)
          px[k] = w00 * a[k] + w01 * b[k] + w10 * d[k] + w11 * e[k];
        if (family == FAMILY_NV12 || family == FAMILY_I420)
          finish_yuv (self, px);
      }
    }
    /* else: padding, a black pixel */

    if (gray) {
      store (type, data, index, (px[0] - self->mean[0]) * self->inv_scale[0]);
    } else {
      for (k = 0; k < 3; k++)
        store (type, data, index + self->channel_offset[k],
            (px[k] - self->mean[k]) * self->inv_scale[k]);
    }
  }
}

#define DISPATCH_TYPE(family) \
  switch (self->parent.config.type) { \
    case CLINFER_TYPE_F16: \
      process_row_family (self, frame, v, data, u_begin, u_end, family, \
          CLINFER_TYPE_F16); \
      break; \
    case CLINFER_TYPE_U8: \
      process_row_family (self, frame, v, data, u_begin, u_end, family, \
          CLINFER_TYPE_U8); \
      break; \
    default: \
      process_row_family (self, frame, v, data, u_begin, u_end, family, \
          CLINFER_TYPE_F32); \
      break; \
  }

/* Model columns [u_begin, u_end) of row @v, portable code. */
static void
process_columns (const GstClinferPreprocessCpu * self,
    const GstVideoFrame * frame, gint v, gpointer data, gint u_begin,
    gint u_end)
{
  if (u_begin >= u_end)
    return;
  switch (self->family) {
    case FAMILY_PACKED_RGB:
      DISPATCH_TYPE (FAMILY_PACKED_RGB);
      break;
    case FAMILY_GRAY:
      DISPATCH_TYPE (FAMILY_GRAY);
      break;
    case FAMILY_NV12:
      DISPATCH_TYPE (FAMILY_NV12);
      break;
    case FAMILY_I420:
      DISPATCH_TYPE (FAMILY_I420);
      break;
  }
}

#undef DISPATCH_TYPE

static void
process_row (const GstClinferPreprocessCpu * self, const GstVideoFrame * frame,
    gint v, gpointer data)
{
  gint w = self->parent.config.width;

#ifdef GST_CLINFER_HAVE_AVX2
  if (self->use_simd && self->ytaps[v].i0 >= 0) {
    process_columns (self, frame, v, data, 0, self->simd_begin);
    gst_clinfer_preprocess_avx2_row (self, frame, v, data);
    process_columns (self, frame, v, data, self->simd_end, w);
    return;
  }
#endif
  process_columns (self, frame, v, data, 0, w);
}

/* The model input shape of @cfg (batch 1). */
static void
input_shape (const GstClinferPreprocessConfig * cfg, ClinferShape * shape)
{
  shape->rank = 4;
  shape->dims[0] = 1;
  if (cfg->layout == GST_CLINFER_LAYOUT_NCHW) {
    shape->dims[1] = cfg->channels;
    shape->dims[2] = cfg->height;
    shape->dims[3] = cfg->width;
  } else {
    shape->dims[1] = cfg->height;
    shape->dims[2] = cfg->width;
    shape->dims[3] = cfg->channels;
  }
}

static gboolean
gst_clinfer_preprocess_cpu_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error)
{
  GstClinferPreprocessCpu *self = (GstClinferPreprocessCpu *) pp;
  ClinferShape shape;

  input_shape (&pp->config, &shape);
  g_clear_pointer (&self->input, clinfer_tensor_unref);
  self->input = clinfer_tensor_new (pp->config.type, &shape, error);
  return self->input != NULL && clinfer_request_set_input_by_index (request,
      index, self->input, error);
}

static void
process_frame (const GstClinferPreprocessCpu * self,
    const GstVideoFrame * frame, gpointer data)
{
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  gint h = cfg->height, v;
  gint n_threads = cfg->n_threads > 0 ? cfg->n_threads : 0;
  gboolean parallel = (gint64) cfg->width * h >= PARALLEL_MIN_PIXELS;

  /* One thread: no parallel region at all (entering one, even for a
   * single thread, sets up a team per frame). */
  if (n_threads == 1 || !parallel) {
    for (v = 0; v < h; v++)
      process_row (self, frame, v, data);
  } else if (n_threads > 0) {
#pragma omp parallel for schedule(static) num_threads(n_threads)
    for (v = 0; v < h; v++)
      process_row (self, frame, v, data);
  } else {
#pragma omp parallel for schedule(static)
    for (v = 0; v < h; v++)
      process_row (self, frame, v, data);
  }
}

static gboolean
gst_clinfer_preprocess_cpu_run (GstClinferPreprocess * pp, GstBuffer * buffer,
    GError ** error)
{
  const GstClinferPreprocessCpu *self = (const GstClinferPreprocessCpu *) pp;
  GstVideoFrame frame;

  if (self->input == NULL) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "pre-processing ran before its input tensor was bound");
    return FALSE;
  }
  if (!gst_video_frame_map (&frame, &pp->config.vinfo, buffer, GST_MAP_READ)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        "could not map the video frame for reading");
    return FALSE;
  }
  process_frame (self, &frame, clinfer_tensor_get_data (self->input));
  gst_video_frame_unmap (&frame);
  return TRUE;
}
