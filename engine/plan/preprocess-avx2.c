/* clinfer — pre-processing rows for x86-64 CPUs with AVX2 + FMA: 8 model pixels per
 * register. The two horizontal taps of a column are neighbouring frame
 * pixels (or the second has weight 0), so one 8-byte read at the first tap
 * holds both; 8 columns' reads fill two registers, one byte shuffle per
 * sample (R, G, B or Y, U, V) picks both taps' bytes as 32-bit words, and
 * the bilinear blend, YUV conversion and mean/scale run on 8 floats, stored
 * as 8 contiguous values per NCHW plane or 24 interleaved NHWC values (f32;
 * f16 and u8 value by value). Packed RGB frames into NHWC f32 (BlazeFace
 * and most TFLite-born models) have rows of their own, row_packed_nhwc(),
 * which compute the 24 interleaved values where they are stored instead
 * of transposing 3 x 8 channel values. Compiled with -mavx2 -mfma and
 * only called when the engine's ISA dispatch chose AVX2 (the tables'
 * isa). Same arithmetic as the portable loop of preprocess-host.c (YUV
 * interpolated,
 * then converted), up to rounding. (vpgatherdq for the 8-byte reads was
 * slower on AMD Zen 3: see docs/performance.md.)
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#include "plan/preprocess-host.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* The 8 bytes at row + off[0..7], as columns [0 1 | 4 5] in q[0] and
 * [2 3 | 6 7] in q[1], so that blend_row() gets the columns back in order
 * with one in-lane shuffle. */
static inline void
load_columns (const guint8 * row, const gint32 * off, __m256i q[2])
{
  __m128i c01 = _mm_unpacklo_epi64 (_mm_loadu_si64 (row + off[0]),
      _mm_loadu_si64 (row + off[1]));
  __m128i c23 = _mm_unpacklo_epi64 (_mm_loadu_si64 (row + off[2]),
      _mm_loadu_si64 (row + off[3]));
  __m128i c45 = _mm_unpacklo_epi64 (_mm_loadu_si64 (row + off[4]),
      _mm_loadu_si64 (row + off[5]));
  __m128i c67 = _mm_unpacklo_epi64 (_mm_loadu_si64 (row + off[6]),
      _mm_loadu_si64 (row + off[7]));

  q[0] = _mm256_inserti128_si256 (_mm256_castsi128_si256 (c01), c45, 1);
  q[1] = _mm256_inserti128_si256 (_mm256_castsi128_si256 (c23), c67, 1);
}

/* One sample of 8 columns, horizontally blended: @mask picks, in each
 * 128-bit lane (two columns' 8-byte reads), the sample's byte of the first
 * and of the second tap of each column as 32-bit words
 * [a0 a1 b0 b1]; the two lanes' results interleave back into column
 * order. */
static inline __m256
blend_row (const __m256i q[2], __m256i mask, __m256 fx)
{
  __m256 a = _mm256_castsi256_ps (_mm256_shuffle_epi8 (q[0], mask));
  __m256 b = _mm256_castsi256_ps (_mm256_shuffle_epi8 (q[1], mask));
  __m256 t0 = _mm256_cvtepi32_ps (_mm256_castps_si256 (_mm256_shuffle_ps (a,
              b, _MM_SHUFFLE (2, 0, 2, 0))));
  __m256 t1 = _mm256_cvtepi32_ps (_mm256_castps_si256 (_mm256_shuffle_ps (a,
              b, _MM_SHUFFLE (3, 1, 3, 1))));

  return _mm256_fmadd_ps (fx, _mm256_sub_ps (t1, t0), t0);
}

/* Both rows of one sample, blended vertically. */
static inline __m256
blend (const __m256i top[2], const __m256i bottom[2], __m256i mask,
    __m256 fx, __m256 fy)
{
  __m256 h0 = blend_row (top, mask, fx);
  __m256 h1 = blend_row (bottom, mask, fx);

  return _mm256_fmadd_ps (fy, _mm256_sub_ps (h1, h0), h0);
}

static inline __m256
clamp_255 (__m256 v)
{
  return _mm256_min_ps (_mm256_max_ps (v, _mm256_setzero_ps ()),
      _mm256_set1_ps (255.f));
}

/* Stores 8 pixels of 3 channels (@c0, @c1, @c2: model channels 0, 1, 2) as 24
 * interleaved floats (NHWC). In each 128-bit lane (pixels 0-3, then 4-7)
 * rotated copies of the channels are blended into c0 c1 c2 c0 | c1 c2 c0
 * c1 | c2 c0 c1 c2 (pixels 0, 0, 0, 1 | 1, 1, 2, 2 | 2, 3, 3, 3), then the
 * lanes are put in order. */
static inline void
store_interleaved (gfloat * out, __m256 c0, __m256 c1, __m256 c2)
{
  __m256 a = _mm256_permute_ps (c0, _MM_SHUFFLE (1, 2, 3, 0));
  __m256 b = _mm256_permute_ps (c1, _MM_SHUFFLE (2, 3, 0, 1));
  __m256 c = _mm256_permute_ps (c2, _MM_SHUFFLE (3, 0, 1, 2));
  __m256 x0 = _mm256_blend_ps (_mm256_blend_ps (a, b, 0x22), c, 0x44);
  __m256 x1 = _mm256_blend_ps (_mm256_blend_ps (a, b, 0x99), c, 0x22);
  __m256 x2 = _mm256_blend_ps (_mm256_blend_ps (a, b, 0x44), c, 0x99);

  _mm256_storeu_ps (out, _mm256_permute2f128_ps (x0, x1, 0x20));
  _mm256_storeu_ps (out + 8, _mm256_permute2f128_ps (x2, x0, 0x30));
  _mm256_storeu_ps (out + 16, _mm256_permute2f128_ps (x1, x2, 0x31));
}

/* The frame rows model row @v reads: plane 0 (packed, gray or Y) and, for
 * YUV, the chroma rows of U and V (the same row for NV12). */
typedef struct
{
  const guint8 *p[2], *u[2], *v[2];
} Rows;

static void
get_rows (const ClinferPreprocessHost * self, const ClinferFrame * frame,
    const ClinferPreprocessTap * ty, Rows * r)
{
  gint k;

  for (k = 0; k < 2; k++) {
    gint y = k == 0 ? ty->i0 : ty->i1;
    const guint8 *c1;

    r->p[k] = frame->data[0] + (gsize) y * frame->stride[0];
    r->u[k] = r->v[k] = NULL;
    if (self->family != FAMILY_NV12 && self->family != FAMILY_I420)
      continue;
    c1 = frame->data[1] + (gsize) (y / 2) * frame->stride[1];
    r->u[k] = c1;
    r->v[k] = self->family == FAMILY_NV12 ? c1
        : frame->data[2] + (gsize) (y / 2) * frame->stride[2];
  }
}

/* Asks for the cache lines of frame row @row that the 8 columns from
 * @offset read, so they arrive while this row is being computed: a fixed
 * @n_lines (prefetch_lines, worked out per caps) from the line of the
 * first read, so the loop has no address arithmetic beyond that. Into L2,
 * not L1 (prefetcht1): a frame in memory (a capture driver's DMA, or
 * evicted) is read in runs of two rows, and prefetches into L1 hold its
 * few fill buffers, so the rows' own loads wait; 1280x720 BGRx from a
 * ring of 64 frames took 117 us with T0 and 75-80 us with T1 or T2, one
 * frame in L3 24 then 25 us (AMD Zen 4, preprocess-bench --ring;
 * docs/performance.md). */
static G_ALWAYS_INLINE inline void
prefetch_columns (const guint8 * row, gint32 offset, gint n_lines)
{
  const guint8 *a = row + offset - ((guintptr) (row + offset) & 63);
  gint k;

  for (k = 0; k < n_lines; k++)
    _mm_prefetch ((const char *) (a + 64 * k), _MM_HINT_T1);
}

/* R, G, B (0..255) of 8 columns from @u. Always inlined with a constant
 * @family, so each family gets its own loop. */
static G_ALWAYS_INLINE inline void
columns_rgb (const ClinferPreprocessHost * self, ClinferFrameFamily family,
    const Rows * r, const __m256i mask[3], gint u, __m256 fy, __m256 rgb[3])
{
  __m256 fx = _mm256_loadu_ps (self->x_weight + u);
  __m256i top[2], bottom[2];

  load_columns (r->p[0], self->x_offset + u, top);
  load_columns (r->p[1], self->x_offset + u, bottom);
  switch (family) {
    case FAMILY_PACKED_RGB:
      rgb[0] = blend (top, bottom, mask[0], fx, fy);
      rgb[1] = blend (top, bottom, mask[1], fx, fy);
      rgb[2] = blend (top, bottom, mask[2], fx, fy);
      return;
    case FAMILY_GRAY:
      rgb[0] = rgb[1] = rgb[2] = blend (top, bottom, mask[0], fx, fy);
      return;
    case FAMILY_NV12:
    case FAMILY_I420:
    default:{
      __m256 cx = _mm256_loadu_ps (self->c_weight + u);
      __m256 yy, cu, cv;

      yy = blend (top, bottom, mask[0], fx, fy);
      load_columns (r->u[0], self->c_offset + u, top);
      load_columns (r->u[1], self->c_offset + u, bottom);
      cu = blend (top, bottom, mask[1], cx, fy);
      if (family == FAMILY_I420) {
        load_columns (r->v[0], self->c_offset + u, top);
        load_columns (r->v[1], self->c_offset + u, bottom);
      }
      cv = blend (top, bottom, mask[2], cx, fy);
      /* Interpolated Y, U, V to R, G, B, clamped once, as finish_yuv(). */
      yy = _mm256_mul_ps (_mm256_sub_ps (yy, _mm256_set1_ps (self->y_offset)),
          _mm256_set1_ps (self->y_scale));
      cu = _mm256_mul_ps (_mm256_sub_ps (cu, _mm256_set1_ps (128.f)),
          _mm256_set1_ps (self->c_scale));
      cv = _mm256_mul_ps (_mm256_sub_ps (cv, _mm256_set1_ps (128.f)),
          _mm256_set1_ps (self->c_scale));
      rgb[0] = clamp_255 (_mm256_fmadd_ps (_mm256_set1_ps (self->rv), cv, yy));
      rgb[1] = clamp_255 (_mm256_fmadd_ps (_mm256_set1_ps (self->gv), cv,
              _mm256_fmadd_ps (_mm256_set1_ps (self->gu), cu, yy)));
      rgb[2] = clamp_255 (_mm256_fmadd_ps (_mm256_set1_ps (self->bu), cu, yy));
      return;
    }
  }
}

/* Columns [simd_begin, simd_end) of model row @v for frames of @family
 * (a constant in each caller). */
static G_ALWAYS_INLINE inline void
row_family (const ClinferPreprocessHost * self, ClinferFrameFamily family,
    const Rows * rows, const Rows * next, gint v, gpointer data)
{
  const ClinferPreprocessConfig *cfg = &self->config;
  /* Locals, so that stores into the tensor cannot make the compiler
   * reload them from *self. */
  const ClinferElementType type = cfg->type;
  const gsize step = self->pixel_step;
  const gboolean planar_f32 = type == CLINFER_TYPE_F32 && step == 1;
  const gboolean packed_f32 = type == CLINFER_TYPE_F32 && step == 3;
  /* NHWC: channel_offset is the model channel of R, G, B. */
  const gboolean bgr = self->channel_offset[0] == 2;
  const gint end = self->simd_end;
  const gint n_lines = self->prefetch_lines;
  __m256 fy = _mm256_set1_ps (self->ytaps[v].f);
  __m256 inv[3], bias[3];
  __m256i mask[3];
  gfloat *out[3];
  gsize index;
  gint c, u;

  for (c = 0; c < 3; c++) {
    mask[c] = _mm256_loadu_si256 ((const __m256i *) self->simd_mask[c]);
    /* (x - mean) / scale as one FMA: x * inv - mean * inv. */
    inv[c] = _mm256_set1_ps (self->inv_scale[c]);
    bias[c] = _mm256_set1_ps (-self->mean[c] * self->inv_scale[c]);
    out[c] = (gfloat *) data + self->channel_offset[c];
  }

  index = ((gsize) v * cfg->width + self->simd_begin) * step;
  for (u = self->simd_begin; u < end; u += 8, index += 8 * step) {
    __m256 rgb[3];

    if (next != NULL) {
      prefetch_columns (next->p[0], self->x_offset[u], n_lines);
      prefetch_columns (next->p[1], self->x_offset[u], n_lines);
    }
    columns_rgb (self, family, rows, mask, u, fy, rgb);
    for (c = 0; c < 3; c++)
      rgb[c] = _mm256_fmadd_ps (rgb[c], inv[c], bias[c]);
    if (planar_f32) {
      _mm256_storeu_ps (out[0] + index, rgb[0]);
      _mm256_storeu_ps (out[1] + index, rgb[1]);
      _mm256_storeu_ps (out[2] + index, rgb[2]);
    } else if (packed_f32) {
      if (bgr)
        store_interleaved ((gfloat *) data + index, rgb[2], rgb[1], rgb[0]);
      else
        store_interleaved ((gfloat *) data + index, rgb[0], rgb[1], rgb[2]);
    } else {
      /* f16, u8: through a small buffer, value by value. */
      gfloat vals[3][8];
      gint k;

      for (c = 0; c < 3; c++)
        _mm256_storeu_ps (vals[c], rgb[c]);
      for (k = 0; k < 8; k++)
        for (c = 0; c < 3; c++)
          clinfer_preprocess_store (type, data,
              index + k * step + self->channel_offset[c], vals[c][k]);
    }
  }
}

/* The 8 bytes at @p in each 64-bit word: vpbroadcastq from memory is a
 * load alone, no shuffle. */
static inline __m256i
broadcast_column (const guint8 * p)
{
  gint64 x;

  memcpy (&x, p, sizeof (x));
  return _mm256_set1_epi64x (x);
}

/* Packed RGB to NHWC f32: the 8-byte reads of 8 columns of one frame
 * row as the three registers of the packed rows (see setup_packed_nhwc():
 * column pairs (0, 1), (1, 2) | (2, 3), (4, 5) | (5, 6), (6, 7)), put
 * together from broadcast reads by blends, which unlike shuffles run on
 * every vector pipe; then both taps of each of the 24 values blended
 * horizontally: @h[r] holds values 8 r to 8 r + 7 of the group, in
 * output order. */
static inline void
packed_taps (const guint8 * row, const gint32 * off,
    const __m256i mask[3][2], const __m256 fx[3], __m256 h[3])
{
  __m256i b2 = broadcast_column (row + off[2]);
  __m256i b5 = broadcast_column (row + off[5]);
  __m256i q[3];
  gint r;

  /* 32-bit blend masks: 0x3c takes 64-bit words 1 and 2, 0x0c word 1,
   * 0x30 word 2, 0xc0 word 3. */
  q[0] = _mm256_blend_epi32 (_mm256_blend_epi32 (broadcast_column (row
              + off[0]), broadcast_column (row + off[1]), 0x3c), b2, 0xc0);
  q[1] = _mm256_blend_epi32 (_mm256_blend_epi32 (_mm256_blend_epi32 (b2,
              broadcast_column (row + off[3]), 0x0c),
          broadcast_column (row + off[4]), 0x30), b5, 0xc0);
  q[2] = _mm256_blend_epi32 (_mm256_blend_epi32 (b5, broadcast_column (row
              + off[6]), 0x3c), broadcast_column (row + off[7]), 0xc0);
  for (r = 0; r < 3; r++) {
    __m256 t0 = _mm256_cvtepi32_ps (_mm256_shuffle_epi8 (q[r], mask[r][0]));
    __m256 t1 = _mm256_cvtepi32_ps (_mm256_shuffle_epi8 (q[r], mask[r][1]));

    h[r] = _mm256_fmadd_ps (fx[r], _mm256_sub_ps (t1, t0), t0);
  }
}

/* Columns [simd_begin, simd_end) of model row @v, packed RGB frames into
 * NHWC f32: each value computed in its place in the output, so no
 * transpose; the same operations per value as row_family() (horizontal
 * blend, vertical blend, one FMA for mean and scale), hence the same
 * bytes. Always inlined with a constant @n_lines where it is small, so
 * the prefetches unroll. */
static G_ALWAYS_INLINE inline void
row_packed_nhwc_lines (const ClinferPreprocessHost * self,
    const Rows * rows, const Rows * next, gint v, gfloat * data, gint n_lines)
{
  const gint end = self->simd_end;
  const gint32 *x_offset = self->x_offset;
  const gfloat *weight = self->nhwc_weight;
  const guint8 *top = rows->p[0], *bottom = rows->p[1];
  /* The last model row prefetches its own rows again: harmless, and the
   * loop needs no test. */
  const guint8 *next_top = next != NULL ? next->p[0] : top;
  const guint8 *next_bottom = next != NULL ? next->p[1] : bottom;
  __m256 fy = _mm256_set1_ps (self->ytaps[v].f);
  __m256 inv[3], bias[3];
  __m256i mask[3][2];
  gfloat *out;
  gint r, u;

  for (r = 0; r < 3; r++) {
    mask[r][0] = _mm256_loadu_si256 ((const __m256i *) self->nhwc_mask[r][0]);
    mask[r][1] = _mm256_loadu_si256 ((const __m256i *) self->nhwc_mask[r][1]);
    inv[r] = _mm256_loadu_ps (self->nhwc_inv + 8 * r);
    bias[r] = _mm256_loadu_ps (self->nhwc_bias + 8 * r);
  }
  out = data + ((gsize) v * self->config.width + self->simd_begin) * 3;
  for (u = self->simd_begin; u < end; u += 8, out += 24) {
    __m256 fx[3], h0[3], h1[3];

    prefetch_columns (next_top, x_offset[u], n_lines);
    prefetch_columns (next_bottom, x_offset[u], n_lines);
    for (r = 0; r < 3; r++)
      fx[r] = _mm256_loadu_ps (weight + 3 * u + 8 * r);
    packed_taps (top, x_offset + u, mask, fx, h0);
    packed_taps (bottom, x_offset + u, mask, fx, h1);
    for (r = 0; r < 3; r++) {
      __m256 p = _mm256_fmadd_ps (fy, _mm256_sub_ps (h1[r], h0[r]), h0[r]);

      _mm256_storeu_ps (out + 8 * r, _mm256_fmadd_ps (p, inv[r], bias[r]));
    }
  }
}

static void
row_packed_nhwc (const ClinferPreprocessHost * self, const Rows * rows,
    const Rows * next, gint v, gfloat * data)
{
  switch (self->prefetch_lines) {
    case 1:
      row_packed_nhwc_lines (self, rows, next, v, data, 1);
      break;
    case 2:
      row_packed_nhwc_lines (self, rows, next, v, data, 2);
      break;
    case 3:
      row_packed_nhwc_lines (self, rows, next, v, data, 3);
      break;
    case 4:
      row_packed_nhwc_lines (self, rows, next, v, data, 4);
      break;
    case 5:
      row_packed_nhwc_lines (self, rows, next, v, data, 5);
      break;
    case 6:
      row_packed_nhwc_lines (self, rows, next, v, data, 6);
      break;
    case 7:
      row_packed_nhwc_lines (self, rows, next, v, data, 7);
      break;
    case 8:
      row_packed_nhwc_lines (self, rows, next, v, data, 8);
      break;
    default:
      row_packed_nhwc_lines (self, rows, next, v, data,
          self->prefetch_lines);
      break;
  }
}

void
clinfer_preprocess_avx2_row (const ClinferPreprocessHost * self,
    const ClinferFrame * frame, gint v, gpointer data)
{
  const ClinferPreprocessTap *next_tap = v + 1 < self->config.height
      ? &self->ytaps[v + 1] : NULL;
  Rows rows, next_rows, *next = NULL;

  get_rows (self, frame, &self->ytaps[v], &rows);
  /* Frames far larger than the model are read from memory, not cache
   * (inference in between evicts them): the next model row's frame rows
   * (plane 0) are prefetched a row ahead. */
  if (next_tap != NULL && next_tap->i0 >= 0) {
    get_rows (self, frame, next_tap, &next_rows);
    next = &next_rows;
  }
  if (self->packed_nhwc) {
    row_packed_nhwc (self, &rows, next, v, data);
    return;
  }
  switch (self->family) {
    case FAMILY_PACKED_RGB:
      row_family (self, FAMILY_PACKED_RGB, &rows, next, v, data);
      break;
    case FAMILY_GRAY:
      row_family (self, FAMILY_GRAY, &rows, next, v, data);
      break;
    case FAMILY_NV12:
      row_family (self, FAMILY_NV12, &rows, next, v, data);
      break;
    case FAMILY_I420:
      row_family (self, FAMILY_I420, &rows, next, v, data);
      break;
  }
}
