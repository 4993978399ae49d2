/* clinfer — pre-processing on the host: colour conversion, bilinear
 * resize (stretch, letterbox or crop), mean/scale, channel order,
 * NCHW/NHWC layout and f32/f16/u8 output in one pass over the model
 * input, rows split over OpenMP threads (the engine's thread runtime);
 * the geometry of the resize methods.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "plan/preprocess-host.h"
#include <clinfer/error.h>

#include <math.h>
#include <string.h>

/* Below this many model pixels threads cost more than they save. */
#define PARALLEL_MIN_PIXELS 4096

/* Model sizes and frame sizes up to this many pixels a side: the taps
 * and offsets are 32-bit. */
#define MAX_SIDE 32768

static ClinferPreprocessTap *
make_taps (gint n, gint dst_start, gint dst_len, gdouble src_start,
    gdouble src_len, gint src_size, gboolean mirror)
{
  ClinferPreprocessTap *taps = g_new (ClinferPreprocessTap, n);
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
    /* Mirrored within the source rectangle (half a turn: both axes). */
    if (mirror)
      s = 2 * src_start + src_len - 1 - s;
    s = CLAMP (s, 0.0, (gdouble) (src_size - 1));
    fl = floor (s);
    taps[i].i0 = (gint) fl;
    taps[i].i1 = MIN (taps[i].i0 + 1, src_size - 1);
    taps[i].f = (gfloat) (s - fl);
  }
  return taps;
}

/* Kr and Kb of @matrix (BT.601 for values out of range). */
static void
matrix_kr_kb (ClinferColorMatrix matrix, gdouble * kr, gdouble * kb)
{
  switch (matrix) {
    case CLINFER_COLOR_MATRIX_BT709:
      *kr = 0.2126;
      *kb = 0.0722;
      return;
    case CLINFER_COLOR_MATRIX_BT2020:
      *kr = 0.2627;
      *kb = 0.0593;
      return;
    case CLINFER_COLOR_MATRIX_SMPTE240M:
      *kr = 0.212;
      *kb = 0.087;
      return;
    case CLINFER_COLOR_MATRIX_FCC:
      *kr = 0.30;
      *kb = 0.11;
      return;
    case CLINFER_COLOR_MATRIX_BT601:
    default:
      *kr = 0.299;
      *kb = 0.114;
      return;
  }
}

static void
setup_yuv (ClinferPreprocessHost * self, const ClinferFrameInfo * info)
{
  gdouble kr, kb, kg;

  matrix_kr_kb (info->matrix, &kr, &kb);
  kg = 1.0 - kr - kb;
  if (info->full_range) {
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

#ifdef CLINFER_HAVE_PREPROCESS_AVX2
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
setup_packed_nhwc (ClinferPreprocessHost * self)
{
  static const gint lane_column[3][2] = { {0, 1}, {2, 4}, {5, 6} };
  const ClinferPreprocessConfig *cfg = &self->config;
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
simd_prefetch_lines (const ClinferPreprocessHost * self)
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
setup_simd (ClinferPreprocessHost * self)
{
#ifdef CLINFER_HAVE_PREPROCESS_AVX2
  const ClinferPreprocessConfig *cfg = &self->config;
  const ClinferPreprocessGeometry *g = &self->geometry;
  gint w = cfg->width, frame_w = g->frame_width, u, end, c;
  gboolean yuv = self->family == FAMILY_NV12 || self->family == FAMILY_I420;
  gint cps = self->family == FAMILY_NV12 ? 2 : 1;
  gint64 row_bytes = (gint64) frame_w * self->pixel_stride;
  gint64 chroma_bytes = (gint64) ((frame_w + 1) / 2) * cps;

  /* Turned frames read their rows backwards: the portable rows. */
  if (cfg->channels != 3 || self->isa < CLINFER_CPU_ISA_AVX2
      || cfg->rotate_180)
    return;
  self->x_offset = g_new0 (gint32, w);
  self->c_offset = g_new0 (gint32, w);
  self->x_weight = g_new0 (gfloat, w);
  self->c_weight = g_new0 (gfloat, w);
  end = g->dst_x;
  for (u = g->dst_x; u < g->dst_x + g->dst_w; u++) {
    const ClinferPreprocessTap *t = &self->xtaps[u];
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

/* The geometry of the resize methods (public: decoders map boxes back
 * with it). */
void
clinfer_preprocess_geometry_init (ClinferPreprocessGeometry * g,
    int frame_width, int frame_height, int model_width, int model_height,
    ClinferResizeMethod method)
{
  double sx = (double) model_width / frame_width;
  double sy = (double) model_height / frame_height;
  double s;

  g->frame_width = frame_width;
  g->frame_height = frame_height;
  g->model_width = model_width;
  g->model_height = model_height;
  g->src_x = g->src_y = 0;
  g->src_w = frame_width;
  g->src_h = frame_height;
  g->dst_x = g->dst_y = 0;
  g->dst_w = model_width;
  g->dst_h = model_height;

  switch (method) {
    case CLINFER_RESIZE_LETTERBOX:
      /* Whole pixels of padding, so the picture starts on a pixel edge. */
      s = MIN (sx, sy);
      g->dst_w = CLAMP ((int) lround (frame_width * s), 1, model_width);
      g->dst_h = CLAMP ((int) lround (frame_height * s), 1, model_height);
      g->dst_x = (model_width - g->dst_w) / 2;
      g->dst_y = (model_height - g->dst_h) / 2;
      break;
    case CLINFER_RESIZE_FIT_HEIGHT:
      g->dst_w = (int) MIN (clinfer_preprocess_fit_height_width (frame_width,
              frame_height, model_height), model_width);
      break;
    case CLINFER_RESIZE_CROP:
      s = MAX (sx, sy);
      g->src_w = MIN (model_width / s, (double) frame_width);
      g->src_h = MIN (model_height / s, (double) frame_height);
      g->src_x = (frame_width - g->src_w) / 2;
      g->src_y = (frame_height - g->src_h) / 2;
      break;
    case CLINFER_RESIZE_STRETCH:
    default:
      break;
  }
}

gint64
clinfer_preprocess_fit_height_width (gint64 frame_width, gint64 frame_height,
    gint64 model_height)
{
  /* ceil, as PaddleOCR and RapidOCR size a text line; the epsilon keeps
   * an exact ratio from rounding up. */
  double w = ceil ((double) frame_width * model_height
      / MAX (frame_height, 1) - 1e-9);

  return (gint64) MAX (w, 1.0);
}

void
clinfer_preprocess_geometry_model_to_frame (const ClinferPreprocessGeometry * g,
    double mx, double my, double * fx, double * fy)
{
  *fx = g->src_x + (mx - g->dst_x) * g->src_w / g->dst_w;
  *fy = g->src_y + (my - g->dst_y) * g->src_h / g->dst_h;
}

/* Byte offsets of R, G, B and bytes per pixel of the packed RGB
 * formats, in ClinferPixelFormat order. */
static const struct
{
  gint comp[3], pixel_stride;
} packed_formats[] = {
  [CLINFER_PIXEL_FORMAT_RGB] = {{0, 1, 2}, 3},
  [CLINFER_PIXEL_FORMAT_BGR] = {{2, 1, 0}, 3},
  [CLINFER_PIXEL_FORMAT_RGBX] = {{0, 1, 2}, 4},
  [CLINFER_PIXEL_FORMAT_BGRX] = {{2, 1, 0}, 4},
  [CLINFER_PIXEL_FORMAT_XRGB] = {{1, 2, 3}, 4},
  [CLINFER_PIXEL_FORMAT_XBGR] = {{3, 2, 1}, 4},
  [CLINFER_PIXEL_FORMAT_RGBA] = {{0, 1, 2}, 4},
  [CLINFER_PIXEL_FORMAT_BGRA] = {{2, 1, 0}, 4},
  [CLINFER_PIXEL_FORMAT_ARGB] = {{1, 2, 3}, 4},
  [CLINFER_PIXEL_FORMAT_ABGR] = {{3, 2, 1}, 4},
};

int
clinfer_pixel_format_n_planes (ClinferPixelFormat format)
{
  switch (format) {
    case CLINFER_PIXEL_FORMAT_NV12:
      return 2;
    case CLINFER_PIXEL_FORMAT_I420:
      return 3;
    default:
      return 1;
  }
}

/* Bytes of one row of plane @plane and the plane's rows. */
static void
plane_extent (const ClinferFrameInfo * info, int plane, gsize * row_bytes,
    gint * rows)
{
  gsize w = (gsize) info->width, half_w = (w + 1) / 2;

  *rows = plane == 0 ? info->height : (info->height + 1) / 2;
  switch (info->format) {
    case CLINFER_PIXEL_FORMAT_GRAY8:
      *row_bytes = w;
      break;
    case CLINFER_PIXEL_FORMAT_NV12:
      *row_bytes = plane == 0 ? w : half_w * 2;
      break;
    case CLINFER_PIXEL_FORMAT_I420:
      *row_bytes = plane == 0 ? w : half_w;
      break;
    default:
      *row_bytes = w * packed_formats[info->format].pixel_stride;
      break;
  }
}

gsize
clinfer_frame_plane_size (const ClinferFrameInfo * info, int plane,
    int stride)
{
  gsize row_bytes;
  gint rows;

  plane_extent (info, plane, &row_bytes, &rows);
  return (gsize) stride * (gsize) (rows - 1) + row_bytes;
}

gboolean
clinfer_frame_check (const ClinferFrameInfo * info, const ClinferFrame * frame,
    gboolean host, GError ** error)
{
  gint n = clinfer_pixel_format_n_planes (info->format), p, rows;
  gsize row_bytes;

  for (p = 0; p < n; p++) {
    plane_extent (info, p, &row_bytes, &rows);
    if (frame->data[p] == NULL && (host || frame->remote[p] == NULL)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "frame plane %d: no %s", p, host ? "host data (this "
          "pre-processing reads host memory only)" : "data or remote tensor");
      return FALSE;
    }
    if (frame->stride[p] <= 0 || (gsize) frame->stride[p] < row_bytes) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "frame plane %d: stride %d is less than a row (%" G_GSIZE_FORMAT
          " bytes)", p, frame->stride[p], row_bytes);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
check_config (const ClinferFrameInfo * info,
    const ClinferPreprocessConfig * config, GError ** error)
{
  const gchar *what = NULL;
  gint c;

  if ((guint) info->format > CLINFER_PIXEL_FORMAT_I420)
    what = "frame format: not a ClinferPixelFormat";
  else if (info->width < 1 || info->height < 1 || info->width > MAX_SIDE
      || info->height > MAX_SIDE)
    what = "frame size: expected 1 to 32768 pixels a side";
  else if (config->width < 1 || config->height < 1
      || config->width > MAX_SIDE || config->height > MAX_SIDE)
    what = "model input size: expected 1 to 32768 pixels a side";
  else if (config->channels != 1 && config->channels != 3)
    what = "channels: expected 1 or 3";
  else if (config->type != CLINFER_TYPE_F32 && config->type != CLINFER_TYPE_F16
      && config->type != CLINFER_TYPE_U8)
    what = "type: expected f32, f16 or u8";
  else if ((guint) config->layout > CLINFER_LAYOUT_NHWC)
    what = "layout: expected NCHW or NHWC";
  else if ((guint) config->resize > CLINFER_RESIZE_FIT_HEIGHT)
    what = "resize: not a ClinferResizeMethod";
  for (c = 0; what == NULL && c < config->channels; c++)
    if (config->scale[c] == 0.f || !isfinite (config->scale[c])
        || !isfinite (config->mean[c]))
      what = "mean/scale: expected finite values and a scale other than 0";
  if (what == NULL)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "pre-processing %dx%d frames into %dx%dx%d: %s", info->width,
      info->height, config->channels, config->height, config->width, what);
  return FALSE;
}

ClinferPreprocessHost *
clinfer_preprocess_host_new (const ClinferFrameInfo * info,
    const ClinferPreprocessConfig * config, ClinferCpuIsa isa,
    GError ** error)
{
  ClinferPreprocessHost *self;
  const ClinferPreprocessGeometry *g;
  gint c;

  if (!check_config (info, config, error))
    return NULL;
  self = g_new0 (ClinferPreprocessHost, 1);
  self->frame = *info;
  self->config = *config;
  self->isa = MIN (isa, CLINFER_CPU_ISA_AVX2);
  clinfer_preprocess_geometry_init (&self->geometry, info->width,
      info->height, config->width, config->height, config->resize);
  g = &self->geometry;

  switch (info->format) {
    case CLINFER_PIXEL_FORMAT_GRAY8:
      /* comp_offset all 0: the AVX2 rows read it as packed RGB. */
      self->family = FAMILY_GRAY;
      self->pixel_stride = 1;
      break;
    case CLINFER_PIXEL_FORMAT_NV12:
      self->family = FAMILY_NV12;
      self->pixel_stride = 1;   /* of the Y plane */
      setup_yuv (self, info);
      break;
    case CLINFER_PIXEL_FORMAT_I420:
      self->family = FAMILY_I420;
      self->pixel_stride = 1;
      setup_yuv (self, info);
      break;
    default:
      self->family = FAMILY_PACKED_RGB;
      for (c = 0; c < 3; c++)
        self->comp_offset[c] = packed_formats[info->format].comp[c];
      self->pixel_stride = packed_formats[info->format].pixel_stride;
      break;
  }

  self->xtaps = make_taps (config->width, g->dst_x, g->dst_w, g->src_x,
      g->src_w, g->frame_width, config->rotate_180);
  self->ytaps = make_taps (config->height, g->dst_y, g->dst_h, g->src_y,
      g->src_h, g->frame_height, config->rotate_180);
  /* Component k (R, G, B) feeds model channel k, or 2 - k when the model
   * wants B, G, R. */
  for (c = 0; c < 3; c++) {
    gint ch = config->channels == 3 && config->reverse_channels ? 2 - c : c;

    if (ch >= config->channels)
      ch = 0;
    self->mean[c] = config->mean[ch];
    self->inv_scale[c] = 1.0f / config->scale[ch];
    self->pad[c] = config->resize == CLINFER_RESIZE_FIT_HEIGHT
        ? self->mean[c] : 0.f;
    self->channel_offset[c] = config->layout == CLINFER_LAYOUT_NCHW
        ? (gsize) ch * config->width * config->height : (gsize) ch;
  }
  self->pixel_step = config->layout == CLINFER_LAYOUT_NCHW ? 1
      : (gsize) config->channels;
  setup_simd (self);
  if (!self->use_simd)
    self->isa = CLINFER_CPU_ISA_GENERIC;
  return self;
}

void
clinfer_preprocess_input_shape (const ClinferPreprocessConfig * c,
    ClinferShape * shape)
{
  gboolean nchw = c->layout == CLINFER_LAYOUT_NCHW;

  shape->rank = 4;
  shape->dims[0] = 1;
  shape->dims[1] = nchw ? c->channels : c->height;
  shape->dims[2] = nchw ? c->height : c->width;
  shape->dims[3] = nchw ? c->width : c->channels;
}

gsize
clinfer_preprocess_item_bytes (const ClinferPreprocessConfig * c)
{
  return (gsize) c->width * c->height * c->channels
      * clinfer_element_type_size (c->type);
}

gboolean
clinfer_preprocess_host_has_avx2 (void)
{
#ifdef CLINFER_HAVE_PREPROCESS_AVX2
  return clinfer_cpu_isa_detect () >= CLINFER_CPU_ISA_AVX2;
#else
  return FALSE;
#endif
}

void
clinfer_preprocess_host_free (ClinferPreprocessHost * self)
{
  if (self == NULL)
    return;
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
fetch_samples (const ClinferPreprocessHost * self, ClinferFrameFamily family,
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
finish_yuv (const ClinferPreprocessHost * self, gfloat px[3])
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
fetch_gray (const ClinferPreprocessHost * self, ClinferFrameFamily family,
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

static void
get_rows (const ClinferPreprocessHost * self, const ClinferFrame * frame,
    const ClinferPreprocessTap * ty, Rows * r)
{
  const guint8 *plane0 = frame->data[0];
  gsize stride0 = (gsize) frame->stride[0];
  gint k, y;

  for (k = 0; k < 2; k++) {
    y = k == 0 ? ty->i0 : ty->i1;
    r->p[k] = plane0 + (gsize) y * stride0;
    if (self->family == FAMILY_NV12) {
      r->u[k] = frame->data[1] + (gsize) (y / 2) * frame->stride[1];
      r->v[k] = r->u[k] + 1;
    } else if (self->family == FAMILY_I420) {
      r->u[k] = frame->data[1] + (gsize) (y / 2) * frame->stride[1];
      r->v[k] = frame->data[2] + (gsize) (y / 2) * frame->stride[2];
    } else {
      r->u[k] = r->v[k] = NULL;
    }
  }
}

/* One model row; @family and @type are constants in each caller, so the
 * compiler makes one loop per format family and element type. */
static G_ALWAYS_INLINE inline void
process_row_family (const ClinferPreprocessHost * self,
    const ClinferFrame * frame, gint v, gpointer data, gint u_begin,
    gint u_end, ClinferFrameFamily family, ClinferElementType type)
{
  const ClinferPreprocessConfig *cfg = &self->config;
  const ClinferPreprocessTap *ty = &self->ytaps[v];
  gint w = cfg->width, u, k;
  gboolean gray = cfg->channels == 1;
  gsize index = ((gsize) v * w + u_begin) * self->pixel_step;
  Rows rows;

  if (ty->i0 >= 0)
    get_rows (self, frame, ty, &rows);

  for (u = u_begin; u < u_end; u++, index += self->pixel_step) {
    const ClinferPreprocessTap *tx = &self->xtaps[u];
    /* Padding: black, or a pixel at the mean (0 in the model input). */
    gfloat px[3] = { self->pad[0], self->pad[1], self->pad[2] };

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
    /* else: padding */

    if (gray) {
      clinfer_preprocess_store (type, data, index,
          (px[0] - self->mean[0]) * self->inv_scale[0]);
    } else {
      for (k = 0; k < 3; k++)
        clinfer_preprocess_store (type, data, index + self->channel_offset[k],
            (px[k] - self->mean[k]) * self->inv_scale[k]);
    }
  }
}

#define DISPATCH_TYPE(family) \
  switch (self->config.type) { \
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
process_columns (const ClinferPreprocessHost * self,
    const ClinferFrame * frame, gint v, gpointer data, gint u_begin,
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
process_row (const ClinferPreprocessHost * self, const ClinferFrame * frame,
    gint v, gpointer data)
{
  gint w = self->config.width;

#ifdef CLINFER_HAVE_PREPROCESS_AVX2
  if (self->use_simd && self->ytaps[v].i0 >= 0) {
    process_columns (self, frame, v, data, 0, self->simd_begin);
    clinfer_preprocess_avx2_row (self, frame, v, data);
    process_columns (self, frame, v, data, self->simd_end, w);
    return;
  }
#endif
  process_columns (self, frame, v, data, 0, w);
}

static void
process_frame (const ClinferPreprocessHost * self,
    const ClinferFrame * frame, gpointer data)
{
  const ClinferPreprocessConfig *cfg = &self->config;
  gint h = cfg->height, v;
  gint n_threads = cfg->threads > 0 ? cfg->threads : 0;
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

void
clinfer_preprocess_host_run (const ClinferPreprocessHost * self,
    const ClinferFrame * frame, gpointer data)
{
  process_frame (self, frame, data);
}
