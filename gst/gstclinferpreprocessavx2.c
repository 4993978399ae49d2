/* Pre-processing rows for x86-64 CPUs with AVX2 + FMA: one model pixel per
 * step, its four bilinear taps each loaded as one 32-bit word (a whole
 * packed pixel) or as Y, U, V bytes, widened to four floats and blended in
 * one SSE register. Compiled with -mavx2 -mfma and only called after
 * gst_clinfer_preprocess_avx2_available() said yes. Same arithmetic as the
 * portable loop of gstclinferpreprocesscpu.c (YUV interpolated, then
 * converted), up to rounding. (Gathering 8
 * pixels with vpgatherdd was no faster: gathers are slow on AMD cores.)
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferpreprocesscpu.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* Bytes p[0..3] as four floats. */
static inline __m128
load_bytes (const guint8 * p)
{
  gint32 word;

  memcpy (&word, p, sizeof (word));
  return _mm_cvtepi32_ps (_mm_cvtepu8_epi32 (_mm_cvtsi32_si128 (word)));
}

static inline __m128
lerp (__m128 a, __m128 b, __m128 t, __m128 t1)
{
  return _mm_fmadd_ps (b, t, _mm_mul_ps (a, t1));
}

typedef struct
{
  __m128 offset, scale;         /* (Y, U, V) -> y, u, v */
  __m128 from_u, from_v;        /* (R, G, B) contributions of u and v */
  __m128 max;
} YuvCoeffs;

/* Bytes Y, U, V as lanes 0..2 of four floats. */
static inline __m128
yuv_samples (guint8 y, guint8 u, guint8 v)
{
  return _mm_cvtepi32_ps (_mm_cvtepu8_epi32 (_mm_cvtsi32_si128 (y
              | (u << 8) | (v << 16))));
}

/* R, G, B (lanes 0..2) of interpolated Y, U, V samples (lanes 0..2). */
static inline __m128
yuv_to_rgb (const YuvCoeffs * k, __m128 yuv)
{
  __m128 rgb;

  yuv = _mm_mul_ps (_mm_sub_ps (yuv, k->offset), k->scale);
  rgb = _mm_shuffle_ps (yuv, yuv, _MM_SHUFFLE (3, 0, 0, 0));
  rgb = _mm_fmadd_ps (_mm_shuffle_ps (yuv, yuv, _MM_SHUFFLE (1, 1, 1, 1)),
      k->from_u, rgb);
  rgb = _mm_fmadd_ps (_mm_shuffle_ps (yuv, yuv, _MM_SHUFFLE (2, 2, 2, 2)),
      k->from_v, rgb);
  return _mm_min_ps (_mm_max_ps (rgb, _mm_setzero_ps ()), k->max);
}

static inline void
store_value (ClinferElementType type, gpointer data, gsize index,
    gfloat value)
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

void
gst_clinfer_preprocess_avx2_row (const GstClinferPreprocessCpu * self,
    const GstVideoFrame * frame, gint v, gpointer data)
{
  const GstClinferPreprocessConfig *cfg = &self->parent.config;
  const Tap *ty = &self->ytaps[v];
  const guint8 *plane0 = GST_VIDEO_FRAME_PLANE_DATA (frame, 0);
  gsize stride0 = GST_VIDEO_FRAME_PLANE_STRIDE (frame, 0);
  const guint8 *row[2], *urow[2] = { NULL, NULL }, *vrow[2] = { NULL, NULL };
  gboolean yuv = self->family == FAMILY_NV12 || self->family == FAMILY_I420;
  /* Locals, so that stores into the tensor cannot make the compiler
   * reload them from *self. */
  const ClinferElementType type = cfg->type;
  const gsize step = self->pixel_step;
  const gsize off0 = self->channel_offset[0], off1 = self->channel_offset[1];
  const gsize off2 = self->channel_offset[2];
  const gint32 *x_offset0 = self->x_offset0, *x_offset1 = self->x_offset1;
  const gint32 *c_offset0 = self->c_offset0, *c_offset1 = self->c_offset1;
  const gfloat *x_weight = self->x_weight;
  gfloat *out = data;
  gint lane[3], k, u, end = self->simd_end;
  __m128 fy = _mm_set1_ps (ty->f), fy1 = _mm_set1_ps (1.f - ty->f);
  __m128 mean, inv;
  __m128i perm;
  YuvCoeffs coeffs;
  gsize index;

  for (k = 0; k < 2; k++) {
    gint y = k == 0 ? ty->i0 : ty->i1;

    row[k] = plane0 + (gsize) y * stride0;
    if (yuv) {
      urow[k] = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 1)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (frame, 1);
      vrow[k] = self->family == FAMILY_NV12 ? urow[k] + 1
          : (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, 2)
          + (gsize) (y / 2) * GST_VIDEO_FRAME_PLANE_STRIDE (frame, 2);
    }
  }
  /* Lane of R, G, B in the blended vector: the byte order of packed
   * formats, all lane 0 for GRAY8, R G B for YUV. */
  for (k = 0; k < 3; k++)
    lane[k] = self->family == FAMILY_PACKED_RGB ? self->comp_offset[k]
        : (self->family == FAMILY_GRAY ? 0 : k);
  perm = _mm_setr_epi32 (lane[0], lane[1], lane[2], 3);
  mean = _mm_setr_ps (self->mean[0], self->mean[1], self->mean[2], 0.f);
  inv = _mm_setr_ps (self->inv_scale[0], self->inv_scale[1],
      self->inv_scale[2], 0.f);
  coeffs.offset = _mm_set_ps (0.f, 128.f, 128.f, self->y_offset);
  coeffs.scale = _mm_set_ps (0.f, self->c_scale, self->c_scale, self->y_scale);
  coeffs.from_u = _mm_set_ps (0.f, self->bu, self->gu, 0.f);
  coeffs.from_v = _mm_set_ps (0.f, 0.f, self->gv, self->rv);
  coeffs.max = _mm_set1_ps (255.f);

  index = ((gsize) v * cfg->width + self->simd_begin) * step;
  for (u = self->simd_begin; u < end; u++, index += step) {
    gint32 o0 = x_offset0[u], o1 = x_offset1[u];
    __m128 fx = _mm_set1_ps (x_weight[u]);
    __m128 fx1 = _mm_set1_ps (1.f - x_weight[u]);
    __m128 a, b, c, d, val;
    gfloat r, g, bl;

    if (!yuv) {
      a = load_bytes (row[0] + o0);
      b = load_bytes (row[0] + o1);
      c = load_bytes (row[1] + o0);
      d = load_bytes (row[1] + o1);
    } else {
      gint32 c0 = c_offset0[u], c1 = c_offset1[u];

      a = yuv_samples (row[0][o0], urow[0][c0], vrow[0][c0]);
      b = yuv_samples (row[0][o1], urow[0][c1], vrow[0][c1]);
      c = yuv_samples (row[1][o0], urow[1][c0], vrow[1][c0]);
      d = yuv_samples (row[1][o1], urow[1][c1], vrow[1][c1]);
    }
    val = lerp (lerp (a, b, fx, fx1), lerp (c, d, fx, fx1), fy, fy1);
    if (yuv)
      val = yuv_to_rgb (&coeffs, val);
    /* To R, G, B order, then (x - mean) / scale. */
    val = _mm_mul_ps (_mm_sub_ps (_mm_permutevar_ps (val, perm), mean), inv);
    r = _mm_cvtss_f32 (val);
    g = _mm_cvtss_f32 (_mm_shuffle_ps (val, val, _MM_SHUFFLE (1, 1, 1, 1)));
    bl = _mm_cvtss_f32 (_mm_movehl_ps (val, val));
    if (type == CLINFER_TYPE_F32) {
      out[index + off0] = r;
      out[index + off1] = g;
      out[index + off2] = bl;
    } else {
      store_value (type, data, index + off0, r);
      store_value (type, data, index + off1, g);
      store_value (type, data, index + off2, bl);
    }
  }
}
