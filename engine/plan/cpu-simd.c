/* clinfer — the CPU device's inner kernels, written once with GCC vector
 * extensions and compiled once per ISA: meson passes the -m flags and
 * CLINFER_ISA_SUFFIX (generic, avx2, avx512). Contract in cpu-simd.h. */
#include "plan/cpu-simd.h"
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#ifndef CLINFER_ISA_SUFFIX
#error "CLINFER_ISA_SUFFIX must be defined (generic, avx2 or avx512)"
#endif

/* Vector width in floats and GEMM micro-tile rows: the tile of MR x 2
 * vectors of accumulators plus two B vectors and a broadcast must fit the
 * register file (16 registers below AVX-512, 32 with it). */
#if defined(__AVX512F__) && !defined(CLINFER_SIMD_VW8)
#define VW 16
#define MR 12
#elif defined(__AVX2__)
/* Also avx2x32: these 8-float vectors with AVX-512VL's 32 registers. */
#define VW 8
#define MR 6
#else
#define VW 4
#define MR 6
#endif
#define NV 2
#define NR (VW * NV)

typedef float vf __attribute__ ((vector_size (VW * sizeof (float))));
typedef int32_t vi __attribute__ ((vector_size (VW * sizeof (float))));

#define CONCAT3_(a, b, c) a##b##c
#define CONCAT3(a, b, c) CONCAT3_ (a, b, c)
#define ISA(name) CONCAT3 (name, _, CLINFER_ISA_SUFFIX)
#define INLINE static inline __attribute__ ((always_inline))

INLINE vf
vload (const float *p)
{
  vf v;
  memcpy (&v, p, sizeof (v));
  return v;
}

INLINE void
vstore (float *p, vf v)
{
  memcpy (p, &v, sizeof (v));
}

/* A brace list, not 0 + x: adding +0.0 is not an identity (-0.0 + 0.0 is
 * +0.0), so the compiler would keep a scalar add before each broadcast. */
INLINE vf
vbcast (float x)
{
#if VW == 16
  return (vf) { x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
#elif VW == 8
  return (vf) { x, x, x, x, x, x, x, x };
#else
  return (vf) { x, x, x, x };
#endif
}

INLINE vf
vselect (vi mask, vf a, vf b)
{
  return (vf) (((vi) a & mask) | ((vi) b & ~mask));
}

INLINE vf
vmax (vf a, vf b)
{
  return vselect (a > b, a, b);
}

#if VW == 16
#define EVEN_LANES 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define ODD_LANES 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#elif VW == 8
#define EVEN_LANES 0, 2, 4, 6, 8, 10, 12, 14
#define ODD_LANES 1, 3, 5, 7, 9, 11, 13, 15
#else
#define EVEN_LANES 0, 2, 4, 6
#define ODD_LANES 1, 3, 5, 7
#endif

/* The even or odd lanes of the pair (a, b). Clang has no
 * __builtin_shuffle (GCC's, with a mask vector); it takes the constant
 * lane indices as arguments of __builtin_shufflevector instead. Both give
 * the same single permute instruction. */
#ifdef __clang__
#define VSHUFFLE(a, b, lanes) __builtin_shufflevector (a, b, lanes)
#else
#define VSHUFFLE(a, b, lanes) __builtin_shuffle (a, b, (vi) { lanes })
#endif

/* @act is a constant after inlining: each caller gets its own copy. */
INLINE vf
vact (vf v, const ClinferCpuEpilogue *ep, const int act)
{
  switch (act) {
    case CLINFER_ACT_RELU:
      return vmax (v, vbcast (0.f));
    case CLINFER_ACT_CLIP:
      v = vselect (v < vbcast (ep->min), vbcast (ep->min), v);
      return vselect (v > vbcast (ep->max), vbcast (ep->max), v);
    case CLINFER_ACT_LEAKY_RELU:
      return vselect (v >= vbcast (0.f), v, v * vbcast (ep->alpha));
    default:
      return v;
  }
}

INLINE float
sact (float v, const ClinferCpuEpilogue *ep, const int act)
{
  switch (act) {
    case CLINFER_ACT_RELU: return v > 0.f ? v : 0.f;
    case CLINFER_ACT_CLIP: return v < ep->min ? ep->min : (v > ep->max ? ep->max : v);
    case CLINFER_ACT_LEAKY_RELU: return v >= 0.f ? v : v * ep->alpha;
    default: return v;
  }
}

/* Instantiates @impl for each activation, with and without z. */
#define DISPATCH_EPILOGUE(impl, ep, z, ...)                                  \
  do {                                                                       \
    switch ((ep)->act) {                                                     \
      case CLINFER_ACT_RELU:                                                 \
        if (z) impl (__VA_ARGS__, CLINFER_ACT_RELU, 1);                      \
        else impl (__VA_ARGS__, CLINFER_ACT_RELU, 0);                        \
        break;                                                               \
      case CLINFER_ACT_CLIP:                                                 \
        if (z) impl (__VA_ARGS__, CLINFER_ACT_CLIP, 1);                      \
        else impl (__VA_ARGS__, CLINFER_ACT_CLIP, 0);                        \
        break;                                                               \
      case CLINFER_ACT_LEAKY_RELU:                                           \
        if (z) impl (__VA_ARGS__, CLINFER_ACT_LEAKY_RELU, 1);                \
        else impl (__VA_ARGS__, CLINFER_ACT_LEAKY_RELU, 0);                  \
        break;                                                               \
      default:                                                               \
        if (z) impl (__VA_ARGS__, CLINFER_ACT_NONE, 1);                      \
        else impl (__VA_ARGS__, CLINFER_ACT_NONE, 0);                        \
        break;                                                               \
    }                                                                        \
  } while (0)

/* ---------------------------------------------------------------- */
/* GEMM                                                              */

/* Packs @nc columns into ceil (nc / NR) panels of k x NR (zero padded). */
static void
ISA (pack_b) (float *dst, const float *b, ptrdiff_t ldb, int k, int nc)
{
  for (int j0 = 0; j0 < nc; j0 += NR) {
    int n = MIN (NR, nc - j0);
    float *panel = dst + (ptrdiff_t) (j0 / NR) * k * NR;
    for (int kk = 0; kk < k; kk++) {
      const float *src = b + kk * ldb + j0;
      float *d = panel + (ptrdiff_t) kk * NR;
      if (n == NR) {
        memcpy (d, src, NR * sizeof (float));
      } else {
        memcpy (d, src, n * sizeof (float));
        memset (d + n, 0, (NR - n) * sizeof (float));
      }
    }
  }
}

/* Stores one MR x NR tile (@rows and @nc may be partial). */
INLINE void
gemm_store (vf acc[MR][NV], int rows, int nc, float *c, ptrdiff_t ldc,
    const float *z, ptrdiff_t ldz, const ClinferCpuEpilogue *ep,
    const int act, const int has_z)
{
  if (nc >= NR) {
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      if (r >= rows)
        break;
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++) {
        vf s = acc[r][v];
        if (has_z)
          s += vload (z + r * ldz + v * VW);
        vstore (c + r * ldc + v * VW, vact (s, ep, act));
      }
    }
    return;
  }
  /* Constant indices into acc (unrolled, early exit): a variable index
   * would force the whole tile out of registers. */
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++) {
    float tmp[NR];
    if (r >= rows)
      break;
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
      vstore (tmp + v * VW, acc[r][v]);
    for (int j = 0; j < nc; j++)
      c[r * ldc + j] = sact (tmp[j] + (has_z ? z[r * ldz + j] : 0.f), ep, act);
  }
}

/* One MR x NR tile: row kk of B is at @b + kk * NR (packed) or at
 * @b + offs[kk] (indirect: a window of the padded input). */
INLINE void
gemm_tile (int k, const float *a, const float *bias, const float *b,
    const int *offs, vf acc[MR][NV], const int indirect, const int mr)
{
#pragma GCC unroll 16
  for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
      acc[r][v] = vbcast (bias[r]);
  for (int kk = 0; kk < k; kk++, a += mr) {
    const float *bp = indirect ? b + offs[kk] : b + (ptrdiff_t) kk * NR;
    vf b0 = vload (bp), b1 = vload (bp + VW);
#pragma GCC unroll 16
    for (int r = 0; r < mr; r++) {
      vf av = vbcast (a[r]);
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
}

/* Row panels outer, column tiles inner: the output is written in long
 * contiguous runs per row, and B (packed or a window of the padded input)
 * stays in L1/L2 across panels. */
INLINE void
gemm_impl (int m, int k, const float *a, const float *bias, const float *b,
    const int *offs, int nc, float *c, ptrdiff_t ldc, const float *z,
    ptrdiff_t ldz, const ClinferCpuEpilogue *ep, const int indirect,
    const int act, const int has_z, const int mr)
{
  for (int p0 = 0; p0 < m; p0 += mr) {
    const float *ap = a + (ptrdiff_t) (p0 / mr) * k * mr;
    int rows = MIN (mr, m - p0);

    for (int j0 = 0; j0 < nc; j0 += NR) {
      const float *bp = indirect ? b + j0 : b + (ptrdiff_t) (j0 / NR) * k * NR;
      vf acc[MR][NV];

      gemm_tile (k, ap, bias + p0, bp, offs, acc, indirect, mr);
      gemm_store (acc, rows, nc - j0, c + p0 * ldc + j0, ldc,
          has_z ? z + p0 * ldz + j0 : NULL, ldz, ep, act, has_z);
    }
  }
}

INLINE void
gemm_packed (int m, int k, const float *a, const float *bias, const float *b,
    int nc, float *c, ptrdiff_t ldc, const float *z, ptrdiff_t ldz,
    const ClinferCpuEpilogue *ep, const int act, const int has_z)
{
  gemm_impl (m, k, a, bias, b, NULL, nc, c, ldc, z, ldz, ep, 0, act, has_z,
      MR);
}

INLINE void
gemm_offsets (int m, int k, const float *a, const float *bias, const float *b,
    const int *offs, int nc, float *c, ptrdiff_t ldc, const float *z,
    ptrdiff_t ldz, const ClinferCpuEpilogue *ep, const int act,
    const int has_z)
{
  gemm_impl (m, k, a, bias, b, offs, nc, c, ldc, z, ldz, ep, 1, act, has_z,
      MR);
}

static void
ISA (gemm) (int m, int k, const float *a, const float *bias, const float *b,
    int nc, float *c, ptrdiff_t ldc, const float *z, ptrdiff_t ldz,
    const ClinferCpuEpilogue *ep)
{
  DISPATCH_EPILOGUE (gemm_packed, ep, z, m, k, a, bias, b, nc, c, ldc, z, ldz,
      ep);
}

static void
ISA (gemm_indirect) (int m, int k, const float *a, const float *bias,
    const float *b, const int *offs, int nc, float *c, ptrdiff_t ldc,
    const float *z, ptrdiff_t ldz, const ClinferCpuEpilogue *ep)
{
  DISPATCH_EPILOGUE (gemm_offsets, ep, z, m, k, a, bias, b, offs, nc, c, ldc,
      z, ldz, ep);
}

/* gemm () without an activation or with a Relu, on A packed in panels of
 * @mr rows (MR / 2 to MR, clinfer_cpu_gemm_mr ()): a row count that MR
 * does not divide wastes less (40 rows: 4 panels of 10 instead of 12 +
 * 12 + 12 + 4 of 12, a sixth of the multiply-adds on zeros). The Relu is
 * instantiated with @z only (a MatMul's bias comes as a broadcast z):
 * @relu without @z is ignored. */
#define GEMM_ROWS(mr_)                                                       \
  case mr_:                                                                  \
    if (z && relu)                                                           \
      gemm_impl (m, k, a, bias, b, NULL, nc, c, ldc, z, ldz, &ep, 0,         \
          CLINFER_ACT_RELU, 1, mr_);                                         \
    else if (z)                                                              \
      gemm_impl (m, k, a, bias, b, NULL, nc, c, ldc, z, ldz, &ep, 0,         \
          CLINFER_ACT_NONE, 1, mr_);                                         \
    else                                                                     \
      gemm_impl (m, k, a, bias, b, NULL, nc, c, ldc, z, ldz, &ep, 0,         \
          CLINFER_ACT_NONE, 0, mr_);                                         \
    break

static void
ISA (gemm_rows) (int mr, int m, int k, const float *a, const float *bias,
    const float *b, int nc, float *c, ptrdiff_t ldc, const float *z,
    ptrdiff_t ldz, int relu)
{
  ClinferCpuEpilogue ep = { z && relu ? CLINFER_ACT_RELU : CLINFER_ACT_NONE,
    0.f, 0.f, 0.f };

  switch (mr) {
    GEMM_ROWS (3);
    GEMM_ROWS (4);
    GEMM_ROWS (5);
    GEMM_ROWS (6);
#if MR > 6
    GEMM_ROWS (7);
    GEMM_ROWS (8);
    GEMM_ROWS (9);
    GEMM_ROWS (10);
    GEMM_ROWS (11);
    GEMM_ROWS (12);
#endif
    default:
      if (z && relu)
        gemm_packed (m, k, a, bias, b, nc, c, ldc, z, ldz, &ep,
            CLINFER_ACT_RELU, 1);
      else
        gemm_packed (m, k, a, bias, b, nc, c, ldc, z, ldz, &ep,
            CLINFER_ACT_NONE, z != NULL);
      break;
  }
}

/* ---------------------------------------------------------------- */
/* Depthwise                                                         */

/* Inline copies: rows are short (tens of floats) on small planes, where
 * a libc call per row costs more than the copy. */
INLINE void
copy_floats (float *d, const float *s, int n)
{
  int i = 0;

  for (; i + VW <= n; i += VW)
    vstore (d + i, vload (s + i));
  for (; i < n; i++)
    d[i] = s[i];
}

INLINE void
zero_floats (float *d, int n)
{
  int i = 0;

  for (; i + VW <= n; i += VW)
    vstore (d + i, vbcast (0.f));
  for (; i < n; i++)
    d[i] = 0.f;
}

/* Range [lo, hi) of phase-@r indices i whose input column i * sw + r - pl
 * lies inside the row (computed once per plane: divisions are slow). */
static void
phase_range (const ClinferCpuConvGeom *g, int pw, int r, int *lo, int *hi)
{
  int l = g->pl - r <= 0 ? 0 : (g->pl - r + g->sw - 1) / g->sw;
  int h = g->iw + g->pl - r <= 0 ? 0 : (g->iw + g->pl - r - 1) / g->sw + 1;

  *lo = MIN (l, pw);
  *hi = CLAMP (h, *lo, pw);
}

/* Phase @r of one padded row: d[i] = input column i * sw + r - pl, or 0. */
INLINE void
pad_row_phase (float *d, const float *row, const ClinferCpuConvGeom *g,
    int pw, int r, int lo, int hi)
{
  zero_floats (d, lo);
  if (g->sw == 1)
    copy_floats (d + lo, row + lo - g->pl, hi - lo);
  else
    for (int i = lo; i < hi; i++)
      d[i] = row[i * g->sw + r - g->pl];
  zero_floats (d + hi, pw - hi);
}

/* Stride 2: both phases of a padded row in one pass, pairs of vectors
 * split into even and odd lanes where they lie inside the input row. */
static void
pad_row_s2 (float *d0, float *d1, const float *row, const ClinferCpuConvGeom *g,
    int pw)
{
  const int pl = g->pl, iw = g->iw;
  int i = 0, vlo = MIN ((pl + 1) / 2, pw);

  for (; i < vlo; i++) {
    int x = 2 * i - pl;
    d0[i] = x >= 0 && x < iw ? row[x] : 0.f;
    d1[i] = x + 1 >= 0 && x + 1 < iw ? row[x + 1] : 0.f;
  }
  for (; i + VW <= pw && 2 * (i + VW) - pl <= iw; i += VW) {
    vf a = vload (row + 2 * i - pl), b = vload (row + 2 * i - pl + VW);
    vstore (d0 + i, VSHUFFLE (a, b, EVEN_LANES));
    vstore (d1 + i, VSHUFFLE (a, b, ODD_LANES));
  }
  for (; i < pw; i++) {
    int x = 2 * i - pl;
    d0[i] = x >= 0 && x < iw ? row[x] : 0.f;
    d1[i] = x + 1 >= 0 && x + 1 < iw ? row[x + 1] : 0.f;
  }
}

/* Copies input plane @src into the zero-padded, phase-split layout of
 * cpu-simd.h: phase r, padded row y at dst + (r * hp + y) * pw. */
static void
ISA (pad_plane) (const ClinferCpuConvGeom *g, int hp, int pw, const float *src,
    float *dst)
{
  int lo[8], hi[8];
  const int phased = g->sw <= 8;

  for (int r = 0; r < g->sw && phased; r++)
    phase_range (g, pw, r, &lo[r], &hi[r]);
  for (int y = 0; y < hp; y++) {
    int iy = y - g->pt;
    const float *row = src + (ptrdiff_t) iy * g->iw;

    if (iy < 0 || iy >= g->ih) {
      for (int r = 0; r < g->sw; r++)
        zero_floats (dst + ((ptrdiff_t) r * hp + y) * pw, pw);
    } else if (g->sw == 2) {
      pad_row_s2 (dst + (ptrdiff_t) y * pw, dst + ((ptrdiff_t) hp + y) * pw,
          row, g, pw);
    } else {
      for (int r = 0; r < g->sw; r++) {
        int l, h;
        if (phased) {
          l = lo[r];
          h = hi[r];
        } else {
          phase_range (g, pw, r, &l, &h);
        }
        pad_row_phase (dst + ((ptrdiff_t) r * hp + y) * pw, row, g, pw, r, l, h);
      }
    }
  }
}

/* Bias was the accumulator's start; adds z and applies the activation
 * (a branch per vector, outside the tap loop). */
INLINE void
dw_store (float *d, vf v, const float *z, const ClinferCpuEpilogue *ep)
{
  if (z)
    v += vload (z);
  switch (ep->act) {
    case CLINFER_ACT_RELU: v = vact (v, ep, CLINFER_ACT_RELU); break;
    case CLINFER_ACT_CLIP: v = vact (v, ep, CLINFER_ACT_CLIP); break;
    case CLINFER_ACT_LEAKY_RELU: v = vact (v, ep, CLINFER_ACT_LEAKY_RELU); break;
    default: break;
  }
  vstore (d, v);
}

/* @rb output rows x @cb vectors from output (oy, ox): rb * cb <= 8
 * independent accumulators keep both FMA pipes busy despite the latency
 * of the chain over the taps. @nt: tap count known at compile time (0:
 * a->n_taps). */
INLINE void
dw_block (const ClinferCpuDwArgs *a, const float *w, float bias,
    const float *scratch, const float *z, float *dst, int oy, int ox,
    const int nt, const int rb, const int cb)
{
  const int n_taps = nt ? nt : a->n_taps, ow = a->g.ow;
  const ptrdiff_t rs = (ptrdiff_t) a->g.sh * a->pw;
  const float *p0 = scratch + oy * rs + ox;
  vf acc[8];

#pragma GCC unroll 8
  for (int i = 0; i < rb * cb; i++)
    acc[i] = vbcast (bias);
#pragma GCC unroll 25
  for (int t = 0; t < n_taps; t++) {
    const float *p = p0 + a->taps[t];
    vf wt = vbcast (w[t]);
#pragma GCC unroll 8
    for (int r = 0; r < rb; r++)
#pragma GCC unroll 8
      for (int c = 0; c < cb; c++)
        acc[r * cb + c] += wt * vload (p + r * rs + c * VW);
  }
#pragma GCC unroll 8
  for (int r = 0; r < rb; r++)
#pragma GCC unroll 8
    for (int c = 0; c < cb; c++) {
      ptrdiff_t o = (ptrdiff_t) (oy + r) * ow + ox + c * VW;
      dw_store (dst + o, acc[r * cb + c], z ? z + o : NULL, &a->ep);
    }
}

/* Rows [oy, oy + rb) (rb == 1 for leftover rows): blocks of cb vectors,
 * then single vectors. */
INLINE void
dw_rows (const ClinferCpuDwArgs *a, const float *w, float bias,
    const float *scratch, const float *z, float *dst, int oy, int nv,
    const int nt, const int rb, const int cb)
{
  int v = 0;

  for (; v + cb <= nv; v += cb)
    dw_block (a, w, bias, scratch, z, dst, oy, v * VW, nt, rb, cb);
  for (; v < nv; v++)
    dw_block (a, w, bias, scratch, z, dst, oy, v * VW, nt, rb, 1);
}

/* Output rows in groups of rb, with rb * cb = 8 chosen from the width. */
INLINE void
dw_plane (const ClinferCpuDwArgs *a, const float *w, float bias,
    const float *scratch, const float *z, float *dst, const int nt)
{
  const ClinferCpuConvGeom *g = &a->g;
  const int nv = g->ow / VW;
  int oy = 0;

  if (nv >= 8) {
    for (; oy < g->oh; oy++)
      dw_rows (a, w, bias, scratch, z, dst, oy, nv, nt, 1, 8);
  } else if (nv >= 4) {
    for (; oy + 2 <= g->oh; oy += 2)
      dw_rows (a, w, bias, scratch, z, dst, oy, nv, nt, 2, 4);
  } else if (nv >= 2) {
    for (; oy + 4 <= g->oh; oy += 4)
      dw_rows (a, w, bias, scratch, z, dst, oy, nv, nt, 4, 2);
  } else if (nv >= 1) {
    for (; oy + 8 <= g->oh; oy += 8)
      dw_rows (a, w, bias, scratch, z, dst, oy, nv, nt, 8, 1);
  }
  for (; oy < g->oh; oy++)
    dw_rows (a, w, bias, scratch, z, dst, oy, nv, nt, 1, 4);
}

/* Columns past the last whole vector of each row. */
static void
dw_tail (const ClinferCpuDwArgs *a, const float *w, float bias,
    const float *scratch, const float *z, float *dst)
{
  const ClinferCpuConvGeom *g = &a->g;

  for (int oy = 0; oy < g->oh; oy++) {
    const float *base = scratch + (ptrdiff_t) oy * g->sh * a->pw;
    for (int ox = g->ow - g->ow % VW; ox < g->ow; ox++) {
      ptrdiff_t o = (ptrdiff_t) oy * g->ow + ox;
      float acc = bias;
      for (int t = 0; t < a->n_taps; t++)
        acc += w[t] * base[a->taps[t] + ox];
      dst[o] = sact (acc + (z ? z[o] : 0.f), &a->ep, a->ep.act);
    }
  }
}

static void
ISA (depthwise) (const ClinferCpuDwArgs *a, const float *src, const float *w,
    float bias, const float *z, float *dst, float *scratch)
{
  ISA (pad_plane) (&a->g, a->hp, a->pw, src, scratch);
  /* 3x3 and 5x5 get their tap loops unrolled. */
  if (a->n_taps == 9)
    dw_plane (a, w, bias, scratch, z, dst, 9);
  else if (a->n_taps == 25)
    dw_plane (a, w, bias, scratch, z, dst, 25);
  else
    dw_plane (a, w, bias, scratch, z, dst, 0);
  dw_tail (a, w, bias, scratch, z, dst);
}

/* ---------------------------------------------------------------- */
/* Max pooling                                                       */

static void
ISA (max_pool_2x2) (const float *src, int ih, int iw, float *dst, int oh,
    int ow)
{
  for (int oy = 0; oy < oh; oy++) {
    const float *r0 = src + (ptrdiff_t) 2 * oy * iw, *r1 = r0 + iw;
    float *d = dst + (ptrdiff_t) oy * ow;
    int ox = 0;

    for (; ox + VW <= ow; ox += VW) {
      vf m0 = vmax (vload (r0 + 2 * ox), vload (r1 + 2 * ox));
      vf m1 = vmax (vload (r0 + 2 * ox + VW), vload (r1 + 2 * ox + VW));
      vstore (d + ox, vmax (VSHUFFLE (m0, m1, EVEN_LANES),
              VSHUFFLE (m0, m1, ODD_LANES)));
    }
    for (; ox < ow; ox++) {
      float a = MAX (r0[2 * ox], r0[2 * ox + 1]);
      float b = MAX (r1[2 * ox], r1[2 * ox + 1]);
      d[ox] = MAX (a, b);
    }
  }
}

/* The taps [*k0, *k1) of a window of @k taps @dil apart starting at @i0
 * that fall inside [0, @n). */
static inline void
window_taps (int i0, int dil, int k, int n, int *k0, int *k1)
{
  *k0 = i0 < 0 ? (-i0 + dil - 1) / dil : 0;
  *k1 = n - 1 - i0 < 0 ? 0 : MIN (k, (n - 1 - i0) / dil + 1);
  if (*k1 < *k0)
    *k1 = *k0;
}

/* Max pooling of rows [oy0, oy1) with a large stride-1 window (YOLO's SPP:
 * 5x5, 9x9 and 13x13), separably: the horizontal maxima of every input row
 * the band reads (into @hm), then the vertical maxima of kh of them:
 * kh + kw loads an output instead of kh * kw. */
static void
max_pool_separable (const ClinferCpuConvGeom *g, int block, const float *src,
    float *dst, int oy0, int oy1, float *hm)
{
  const ptrdiff_t row = (ptrdiff_t) g->iw * block;
  const ptrdiff_t hrow = (ptrdiff_t) g->ow * block;
  int iy_first = oy0 - g->pt, n_rows = oy1 - oy0 + g->kh - 1;

  for (int r = 0; r < n_rows; r++) {
    int iy = iy_first + r;
    if (iy < 0 || iy >= g->ih)
      continue;                 /* in the padding: never read below */
    for (int ox = 0; ox < g->ow; ox++) {
      int ix0 = ox * g->sw - g->pl, kx0, kx1;
      const float *s = src + iy * row + (ptrdiff_t) ix0 * block;

      window_taps (ix0, 1, g->kw, g->iw, &kx0, &kx1);
      for (int v = 0; v < block; v += VW) {
        vf m = vbcast (-INFINITY);
        for (int kx = kx0; kx < kx1; kx++)
          m = vmax (m, vload (s + (ptrdiff_t) kx * block + v));
        vstore (hm + r * hrow + (ptrdiff_t) ox * block + v, m);
      }
    }
  }
  for (int oy = oy0; oy < oy1; oy++) {
    int ky0, ky1;
    float *d = dst + (ptrdiff_t) oy * hrow;

    window_taps (oy - g->pt, 1, g->kh, g->ih, &ky0, &ky1);
    for (ptrdiff_t o = 0; o < hrow; o += VW) {
      vf m = vbcast (-INFINITY);
      for (int ky = ky0; ky < ky1; ky++)
        m = vmax (m, vload (hm + (oy - oy0 + ky) * hrow + o));
      vstore (d + o, m);
    }
  }
}

static void
ISA (max_pool_blocked) (const ClinferCpuConvGeom *g, int block,
    const float *src, float *dst, int oy0, int oy1)
{
  const ptrdiff_t row = (ptrdiff_t) g->iw * block;

  /* The common 2x2 stride-2 window inside the plane: four loads a vector. */
  if (g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && g->dh == 1
      && g->dw == 1 && g->pt == 0 && g->pl == 0 && 2 * g->oh <= g->ih
      && 2 * g->ow <= g->iw) {
    for (int oy = oy0; oy < oy1; oy++) {
      const float *r0 = src + 2 * oy * row, *r1 = r0 + row;
      float *d = dst + (ptrdiff_t) oy * g->ow * block;
      for (int ox = 0; ox < g->ow; ox++)
        for (int v = 0; v < block; v += VW) {
          ptrdiff_t o = (ptrdiff_t) 2 * ox * block + v;
          vstore (d + (ptrdiff_t) ox * block + v,
              vmax (vmax (vload (r0 + o), vload (r0 + o + block)),
                  vmax (vload (r1 + o), vload (r1 + o + block))));
        }
    }
    return;
  }
  if (g->sh == 1 && g->dh == 1 && g->dw == 1 && g->kh * g->kw >= 16) {
    float *hm = g_try_new (float, (gsize) (oy1 - oy0 + g->kh - 1) * g->ow
        * block);
    if (hm) {
      max_pool_separable (g, block, src, dst, oy0, oy1, hm);
      g_free (hm);
      return;
    }
  }
  for (int oy = oy0; oy < oy1; oy++)
    for (int ox = 0; ox < g->ow; ox++)
      for (int v = 0; v < block; v += VW) {
        vf m = vbcast (-INFINITY);
        for (int ky = 0; ky < g->kh; ky++) {
          int iy = oy * g->sh - g->pt + ky * g->dh;
          if (iy < 0 || iy >= g->ih)
            continue;
          for (int kx = 0; kx < g->kw; kx++) {
            int ix = ox * g->sw - g->pl + kx * g->dw;
            if (ix >= 0 && ix < g->iw)
              m = vmax (m, vload (src + iy * row + (ptrdiff_t) ix * block + v));
          }
        }
        vstore (dst + ((ptrdiff_t) oy * g->ow + ox) * block + v, m);
      }
}


/* ---------------------------------------------------------------- */
/* Depthwise then 1x1 on blocked layouts                             */

/* 1x1 tile sizes: OV output vectors x PT pixels of accumulators, plus OV
 * weight vectors and a broadcast, within the register file (PT2 and PT1
 * pixels for the tiles of 2 and 1 vectors). Depthwise: PX pixels at once,
 * each an independent sum, with the nine 3x3 weights in registers. */
#if VW == 16
#define DWPW_OV 4
#define DWPW_PT 6
#define DWPW_PT2 12
#define DWPW_PT1 16
#define DWPW_PX 8
#elif defined(__AVX512VL__)
/* 8-float vectors in 32 registers: BlazeFace's 24 channels are 3 output
 * vectors, 3 x 8 pixels of accumulators. */
#define DWPW_OV 3
#define DWPW_PT 8
#define DWPW_PT2 12
#define DWPW_PT1 16
#define DWPW_PX 6
#else
#define DWPW_OV 3
#define DWPW_PT 4
#define DWPW_PT2 6
#define DWPW_PT1 8
#define DWPW_PX 5
#endif
/* The accumulator array's pixel extent: the largest PT. */
#define DWPW_PT_MAX DWPW_PT1
/* The per-thread buffer: at least DWPW_PT_MAX pixels of every depthwise
 * channel (16 KB with AVX2, so it stays in L1 between the two halves). */
#define DWPW_BUF (CLINFER_CPU_DWPW_MAX_CIN * DWPW_PT_MAX)

/* Depthwise of row @oy, pixels [ox0, ox0 + n), every channel vector,
 * into buf[p * cs + cv * VW]. @nt is 9 for 3x3 (taps unrolled, weights in
 * registers), else 0. */
INLINE void
dwpw_depthwise (const ClinferCpuDwPwArgs *a, const float *x, int oy, int ox0,
    int n, float *buf, int cs, int lo, int hi, const int nt, const int act,
    const int dense)
{
  const ClinferCpuConvGeom *g = &a->g;
  const int taps = nt ? nt : g->kh * g->kw;
  /* @dense: one vector a block and stride 1, as constants, so the four
   * pixels' taps share loads (pixel j's tap k is pixel j + 1's k - 1). */
  const int blk = dense ? VW : a->block;
  const ptrdiff_t plane = (ptrdiff_t) g->ih * g->iw * blk;
  const ptrdiff_t step = dense ? VW : (ptrdiff_t) g->sw * a->block;
  const int iy0 = oy * g->sh - g->pt;
  /* 3x3: rows outside the image read row 0 with zero weights, so the
   * inside pixels run 36 multiply-adds without a branch. */
  ptrdiff_t roff[3] = { 0, 0, 0 };

  if (nt == 9)
    for (int ky = 0; ky < 3; ky++) {
      int iy = iy0 + ky;
      roff[ky] = iy >= 0 && iy < g->ih ? (ptrdiff_t) iy * g->iw * blk : 0;
    }
  for (int cv = 0; cv < a->cin_vec; cv++) {
    const float *xc = x + (ptrdiff_t) (cv * VW / blk) * plane
        + (cv * VW) % blk;
    const float *w = a->dw_w + (ptrdiff_t) cv * taps * VW;
    vf b = a->dw_b ? vload (a->dw_b + cv * VW) : vbcast (0.f);
    vf wr[9];
    int ox = ox0;

    for (int t = 0; t < 9; t++) {
      int iy = iy0 + t / 3;
      wr[t] = nt == 9 && iy >= 0 && iy < g->ih ? vload (w + t * VW)
          : vbcast (0.f);
    }
    while (ox < ox0 + n) {
      if (nt == 9 && ox >= lo && ox + DWPW_PX <= hi
          && ox + DWPW_PX <= ox0 + n) {
        /* DWPW_PX inside pixels: as many independent sums as the
         * multiply-add latency needs, the nine weights in registers. */
        const float *c = xc + ((ptrdiff_t) ox * g->sw - g->pl) * blk;
        const float *rows[3] = { c + roff[0], c + roff[1], c + roff[2] };
        vf acc[DWPW_PX];
        float *d = buf + (ptrdiff_t) (ox - ox0) * cs + cv * VW;
#pragma GCC unroll 8
        for (int j = 0; j < DWPW_PX; j++)
          acc[j] = b;
#pragma GCC unroll 3
        for (int ky = 0; ky < 3; ky++)
#pragma GCC unroll 3
          for (int kx = 0; kx < 3; kx++)
#pragma GCC unroll 8
            for (int j = 0; j < DWPW_PX; j++)
              acc[j] += vload (rows[ky] + kx * blk + j * step) * wr[ky * 3 + kx];
#pragma GCC unroll 8
        for (int j = 0; j < DWPW_PX; j++)
          vstore (d + j * cs, vact (acc[j], &a->dw_ep, act));
        ox += DWPW_PX;
      } else {
        /* One pixel with bounds checks (edges, other windows). */
        vf acc = b;
        for (int ky = 0; ky < g->kh; ky++) {
          int iy = iy0 + ky;
          if (iy < 0 || iy >= g->ih)
            continue;
          for (int kx = 0; kx < g->kw; kx++) {
            int ix = ox * g->sw - g->pl + kx;
            if (ix < 0 || ix >= g->iw)
              continue;
            acc += vload (xc + ((ptrdiff_t) iy * g->iw + ix) * blk)
                * vload (w + (ky * g->kw + kx) * VW);
          }
        }
        vstore (buf + (ptrdiff_t) (ox - ox0) * cs + cv * VW,
            vact (acc, &a->dw_ep, act));
        ox++;
      }
    }
  }
}

/* 1x1 of @pt pixels (at most PT) for output vectors [ov0, ov0 + OV). */
INLINE void
dwpw_pointwise_tile (const ClinferCpuDwPwArgs *a, const float *buf, int cs,
    int pt, int ov0, const float *z, float *y, ptrdiff_t pix,
    ptrdiff_t oplane, const int OV, const int PT, const int act,
    const int has_z)
{
  /* Sized by the constants (OV, PT are at most these): a variable
   * length array would live in memory. */
  vf acc[DWPW_OV][DWPW_PT_MAX];
  const float *w[DWPW_OV];

#pragma GCC unroll 4
  for (int i = 0; i < OV; i++) {
    vf b = vload (a->pw_b + (ov0 + i) * VW);
    w[i] = a->pw_w + (ptrdiff_t) (ov0 + i) * a->cin * VW;
#pragma GCC unroll 16
    for (int j = 0; j < PT; j++)
      acc[i][j] = b;
  }
  for (int ci = 0; ci < a->cin; ci++) {
    vf wv[DWPW_OV];
#pragma GCC unroll 4
    for (int i = 0; i < OV; i++)
      wv[i] = vload (w[i] + ci * VW);
#pragma GCC unroll 16
    for (int j = 0; j < PT; j++) {
      vf bc = vbcast (buf[j * cs + ci]);
#pragma GCC unroll 4
      for (int i = 0; i < OV; i++)
        acc[i][j] += wv[i] * bc;
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < OV; i++) {
    int ov = ov0 + i;
    ptrdiff_t o = (ptrdiff_t) (ov * VW / a->block) * oplane
        + pix * a->block + (ov * VW) % a->block;
#pragma GCC unroll 16
    for (int j = 0; j < PT; j++) {
      vf s = acc[i][j];
      if (j >= pt)
        break;
      if (has_z)
        s += vload (z + o + (ptrdiff_t) j * a->block);
      vstore (y + o + (ptrdiff_t) j * a->block, vact (s, &a->ep, act));
    }
  }
}

/* The 1x1 over @n buffered pixels starting at pixel index @pix, in
 * groups of output vectors: DWPW_OV at a time (PT pixels), a last 4 as
 * 2 + 2 and a last 2 or 1 with more pixels, so every tile keeps about
 * the same number of accumulators. */
INLINE void
dwpw_pointwise (const ClinferCpuDwPwArgs *a, const float *buf, int cs, int n,
    const float *z, float *y, ptrdiff_t pix, ptrdiff_t oplane, const int act,
    const int has_z)
{
  int ov = 0;

  while (ov < a->n_out_vec) {
    int left = a->n_out_vec - ov;
    if (left >= DWPW_OV && left != DWPW_OV + 1) {
      for (int p = 0; p < n; p += DWPW_PT)
        dwpw_pointwise_tile (a, buf + (ptrdiff_t) p * cs, cs,
            MIN (DWPW_PT, n - p), ov, z, y, pix + p, oplane, DWPW_OV, DWPW_PT,
            act, has_z);
      ov += DWPW_OV;
    } else if (left >= 2) {
      for (int p = 0; p < n; p += DWPW_PT2)
        dwpw_pointwise_tile (a, buf + (ptrdiff_t) p * cs, cs,
            MIN (DWPW_PT2, n - p), ov, z, y, pix + p, oplane, 2, DWPW_PT2,
            act, has_z);
      ov += 2;
    } else {
      for (int p = 0; p < n; p += DWPW_PT1)
        dwpw_pointwise_tile (a, buf + (ptrdiff_t) p * cs, cs,
            MIN (DWPW_PT1, n - p), ov, z, y, pix + p, oplane, 1, DWPW_PT1,
            act, has_z);
      ov += 1;
    }
  }
}

INLINE void
dwpw_rows (const ClinferCpuDwPwArgs *a, const float *x, const float *z,
    float *y, int oy0, int oy1, const int nt, const int dw_act,
    const int act, const int has_z)
{
  const int dense = a->block == VW && a->g.sw == 1;
  const ClinferCpuConvGeom *g = &a->g;
  float buf[DWPW_BUF] __attribute__ ((aligned (64)));
  const int cs = a->cin_vec * VW;
  const int chunk = MAX (DWPW_PT_MAX, DWPW_BUF / cs / DWPW_PT_MAX * DWPW_PT_MAX);
  const ptrdiff_t oplane = (ptrdiff_t) g->oh * g->ow * a->block;
  /* Output columns whose window lies inside the row. */
  int lo = (g->pl + g->sw - 1) / g->sw;
  int hi = g->iw + g->pl - g->kw < 0 ? 0 : (g->iw + g->pl - g->kw) / g->sw + 1;

  lo = MIN (lo, g->ow);
  hi = CLAMP (hi, lo, g->ow);
  for (int oy = oy0; oy < oy1; oy++)
    for (int ox0 = 0; ox0 < g->ow; ox0 += chunk) {
      int n = MIN (chunk, g->ow - ox0);
      if (dense)
        dwpw_depthwise (a, x, oy, ox0, n, buf, cs, lo, hi, nt, dw_act, 1);
      else
        dwpw_depthwise (a, x, oy, ox0, n, buf, cs, lo, hi, nt, dw_act, 0);
      dwpw_pointwise (a, buf, cs, n, z, y, (ptrdiff_t) oy * g->ow + ox0,
          oplane, act, has_z);
    }
}

#define DWPW_DW(a, x, z, y, oy0, oy1, act_, has_z_)                          \
  do {                                                                       \
    if ((a)->g.kh == 3 && (a)->g.kw == 3                                     \
        && (a)->dw_ep.act == CLINFER_ACT_NONE)                               \
      dwpw_rows (a, x, z, y, oy0, oy1, 9, CLINFER_ACT_NONE, act_, has_z_);   \
    else if ((a)->g.kh == 3 && (a)->g.kw == 3)                               \
      dwpw_rows (a, x, z, y, oy0, oy1, 9, (a)->dw_ep.act, act_, has_z_);     \
    else                                                                     \
      dwpw_rows (a, x, z, y, oy0, oy1, 0, (a)->dw_ep.act, act_, has_z_);     \
  } while (0)

static void
ISA (dw_pw_blocked) (const ClinferCpuDwPwArgs *a, const float *x,
    const float *z, float *y, int oy0, int oy1)
{
  DISPATCH_EPILOGUE (DWPW_DW, &a->ep, z, a, x, z, y, oy0, oy1);
}

/* ---------------------------------------------------------------- */
/* ConvTranspose to one channel, kernel = stride                     */

#if VW >= 8
/* Horizontal sums over 8-float vectors. pairs8 (a, b) adds neighbouring
 * lanes: [a0+a1, a2+a3, b0+b1, b2+b3, a4+a5, a6+a7, b4+b5, b6+b7]; twice
 * over four vectors it leaves lane j the sum of the low half of vector j
 * and lane j + 4 that of its high half. (GCC's and clang's shuffle
 * builtins differ.) */
typedef float vf8 __attribute__ ((vector_size (8 * sizeof (float))));
#ifdef __clang__
#define SHUFFLE8(a, b, ...) __builtin_shufflevector (a, b, __VA_ARGS__)
#else
typedef int32_t vi8 __attribute__ ((vector_size (8 * sizeof (int32_t))));
#define SHUFFLE8(a, b, ...) __builtin_shuffle (a, b, (vi8) { __VA_ARGS__ })
#endif

INLINE vf8
pairs8 (vf8 a, vf8 b)
{
  return SHUFFLE8 (a, b, 0, 2, 8, 10, 4, 6, 12, 14)
      + SHUFFLE8 (a, b, 1, 3, 9, 11, 5, 7, 13, 15);
}

/* @v's lanes folded to 8 (16 lanes: the two halves added). */
INLINE vf8
fold8 (vf v)
{
  vf8 lo;

  memcpy (&lo, &v, sizeof (lo));
#if VW == 16
  {
    vf8 hi;
    memcpy (&hi, (const char *) &v + sizeof (lo), sizeof (hi));
    lo += hi;
  }
#endif
  return lo;
}
#endif

/* The sums of the lanes of t[0..3]: [sum t0, sum t1, sum t2, sum t3]. */
INLINE void
hsum4 (const vf t[4], float out[4])
{
#if VW >= 8
  vf8 h = pairs8 (pairs8 (fold8 (t[0]), fold8 (t[1])),
      pairs8 (fold8 (t[2]), fold8 (t[3])));

  for (int j = 0; j < 4; j++)
    out[j] = h[j] + h[j + 4];
#else
  for (int j = 0; j < 4; j++) {
    float s = 0.f;
    for (int l = 0; l < VW; l++)
      s += t[j][l];
    out[j] = s;
  }
#endif
}

/* The 4-tap dot products of one input pixel at @px (blocked, vector v at
 * px + voff[v]) into r[0..3]. */
INLINE void
deconv_pixel4 (const ClinferCpuDeconvArgs *a, const float *px,
    const ptrdiff_t *voff, const float *w, float r[4])
{
  const ptrdiff_t ts = (ptrdiff_t) a->cin_vec * VW;
  vf t[4] = { vbcast (0.f), vbcast (0.f), vbcast (0.f), vbcast (0.f) };

  for (int v = 0; v < a->cin_vec; v++, w += VW) {
    vf xv = vload (px + voff[v]);
    t[0] += xv * vload (w);
    t[1] += xv * vload (w + ts);
    t[2] += xv * vload (w + 2 * ts);
    t[3] += xv * vload (w + 3 * ts);
  }
  hsum4 (t, r);
}

static void
ISA (deconv_to_one) (const ClinferCpuDeconvArgs *a, const float *x, float *y,
    int iy0, int iy1)
{
  const int taps = a->kh * a->kw, ow = a->iw * a->kw;
  const ptrdiff_t plane = (ptrdiff_t) a->ih * a->iw * a->block;
  ptrdiff_t voff[CLINFER_CPU_DECONV_MAX_VEC];

  /* Vector v of a pixel: its block's plane, its lanes in the block. */
  for (int v = 0; v < a->cin_vec; v++)
    voff[v] = (ptrdiff_t) (v * VW / a->block) * plane + (v * VW) % a->block;
  for (int iy = iy0; iy < iy1; iy++)
    for (int ix = 0; ix < a->iw; ix++) {
      const float *px = x + ((ptrdiff_t) iy * a->iw + ix) * a->block;
      float r[CLINFER_CPU_DECONV_MAX_TAPS + 3];
      for (int j0 = 0; j0 < taps; j0 += 4)
        deconv_pixel4 (a, px, voff, a->w + (ptrdiff_t) j0 * a->cin_vec * VW,
            r + j0);
      for (int ky = 0; ky < a->kh; ky++)
        for (int kx = 0; kx < a->kw; kx++)
          y[((ptrdiff_t) iy * a->kh + ky) * ow + (ptrdiff_t) ix * a->kw + kx] =
              r[ky * a->kw + kx] + a->bias;
    }
}

/* ---------------------------------------------------------------- */
/* Conv to one output channel: dot products (ClinferCpuConvOneArgs)  */

/* Output pixels a conv_to_one group computes at once: one weight vector
 * load serves C1_P input loads and multiply-adds. */
#define C1_P 8

/* The sums of the lanes of t[0..7] into out[0..7]. */
INLINE void
hsum8 (const vf t[C1_P], float out[C1_P])
{
#if VW >= 8
  vf8 lo = pairs8 (pairs8 (fold8 (t[0]), fold8 (t[1])),
      pairs8 (fold8 (t[2]), fold8 (t[3])));
  vf8 hi = pairs8 (pairs8 (fold8 (t[4]), fold8 (t[5])),
      pairs8 (fold8 (t[6]), fold8 (t[7])));
  /* The halves of the two groups of four added. */
  vf8 r = SHUFFLE8 (lo, hi, 0, 1, 2, 3, 8, 9, 10, 11)
      + SHUFFLE8 (lo, hi, 4, 5, 6, 7, 12, 13, 14, 15);

  memcpy (out, &r, sizeof (r));
#else
  vf s[4];

  for (int j = 0; j < 4; j++)
    s[j] = t[j];
  hsum4 (s, out);
  for (int j = 0; j < 4; j++)
    s[j] = t[j + 4];
  hsum4 (s, out + 4);
#endif
}

/* C1_P adjacent interior pixels (no tap in the padding along x) from
 * segments [s0, s1): pixel p's window starts at x + base + p * ps. */
INLINE void
conv1_group (const ClinferCpuConvOneArgs *a, const float *x, ptrdiff_t base,
    ptrdiff_t ps, int s0, int s1, float out[C1_P])
{
  const float *w = a->w + (ptrdiff_t) s0 * a->seg_len;
  const int nv = a->seg_len / VW;
  vf acc[C1_P];

  for (int p = 0; p < C1_P; p++)
    acc[p] = vbcast (0.f);
  for (int sg = s0; sg < s1; sg++) {
    const float *xs = x + base + a->seg_off[sg];
    for (int v = 0; v < nv; v++, w += VW) {
      vf wv = vload (w);
      for (int p = 0; p < C1_P; p++)
        acc[p] += vload (xs + p * ps + v * VW) * wv;
    }
  }
  hsum8 (acc, out);
}

/* One interior pixel. */
INLINE float
conv1_pixel (const ClinferCpuConvOneArgs *a, const float *x, ptrdiff_t base,
    int s0, int s1)
{
  const float *w = a->w + (ptrdiff_t) s0 * a->seg_len;
  const int nv = a->seg_len / VW;
  vf acc = vbcast (0.f);
  float s = 0.f;

  for (int sg = s0; sg < s1; sg++) {
    const float *xs = x + base + a->seg_off[sg];
    for (int v = 0; v < nv; v++, w += VW)
      acc += vload (xs + v * VW) * vload (w);
  }
  for (int l = 0; l < VW; l++)
    s += acc[l];
  return s;
}

/* A pixel with taps in the padding along x: input column ix0 is its
 * window's first; blocked segments are skipped whole, plain ones read
 * float by float. */
static float
conv1_edge (const ClinferCpuConvOneArgs *a, const float *x, ptrdiff_t base,
    int ix0, int s0, int s1)
{
  const ClinferCpuConvGeom *g = &a->g;
  float s = 0.f;

  for (int sg = s0; sg < s1; sg++) {
    const float *w = a->w + (ptrdiff_t) sg * a->seg_len;
    if (a->seg_kx) {
      int ix = ix0 + a->seg_kx[sg] * g->dw;
      if (ix < 0 || ix >= g->iw)
        continue;
      for (int j = 0; j < a->seg_len; j++)
        s += x[base + a->seg_off[sg] + j] * w[j];
    } else {
      for (int j = 0; j < a->seg_len; j++)
        if (ix0 + j >= 0 && ix0 + j < g->iw)
          s += x[base + a->seg_off[sg] + j] * w[j];
    }
  }
  return s;
}

static void
ISA (conv_to_one) (const ClinferCpuConvOneArgs *a, const float *x, float *y,
    int oy, int ox0, int ox1)
{
  const ClinferCpuConvGeom *g = &a->g;
  const int iy0 = oy * g->sh - g->pt, span = (g->kw - 1) * g->dw + 1;
  const ptrdiff_t ps = (ptrdiff_t) g->sw * a->px_floats;
  const ptrdiff_t row = (ptrdiff_t) iy0 * a->row_floats;
  int ky0 = 0, ky1 = g->kh, s0, s1, xa, xb, ox = ox0;

  /* Kernel rows inside the input, then the columns whose whole window is
   * inside it: [xa, xb). */
  while (ky0 < ky1 && iy0 + ky0 * g->dh < 0)
    ky0++;
  while (ky1 > ky0 && iy0 + (ky1 - 1) * g->dh >= g->ih)
    ky1--;
  s0 = a->ky_start[ky0];
  s1 = a->ky_start[ky1];
  xa = (g->pl + g->sw - 1) / g->sw;
  xb = g->iw - span + g->pl < 0 ? 0 : (g->iw - span + g->pl) / g->sw + 1;
  xa = CLAMP (xa, ox0, ox1);
  xb = CLAMP (xb, xa, ox1);
#define C1_BASE(o) (row + ((ptrdiff_t) (o) * g->sw - g->pl) * a->px_floats)
  for (; ox < xa; ox++)
    y[ox] = sact (a->bias + conv1_edge (a, x, C1_BASE (ox),
            ox * g->sw - g->pl, s0, s1), &a->ep, a->ep.act);
  for (; ox + C1_P <= xb; ox += C1_P) {
    float r[C1_P];
    conv1_group (a, x, C1_BASE (ox), ps, s0, s1, r);
    for (int p = 0; p < C1_P; p++)
      y[ox + p] = sact (a->bias + r[p], &a->ep, a->ep.act);
  }
  for (; ox < xb; ox++)
    y[ox] = sact (a->bias + conv1_pixel (a, x, C1_BASE (ox), s0, s1), &a->ep,
        a->ep.act);
  for (; ox < ox1; ox++)
    y[ox] = sact (a->bias + conv1_edge (a, x, C1_BASE (ox),
            ox * g->sw - g->pl, s0, s1), &a->ep, a->ep.act);
#undef C1_BASE
}

/* ---------------------------------------------------------------- */
/* Per-channel binary ops on blocked layouts                         */

#define PER_CHANNEL(op)                                                      \
  for (int64_t p = 0; p < np; p++)                                           \
    for (int v = 0; v < nv; v++)                                             \
      vstore (y + p * block + v * VW,                                        \
          vload (x + p * block + v * VW) op cv[v])

static void
ISA (per_channel) (int op, const float *x, const float *c, float *y,
    int64_t np, int block)
{
  vf cv[64 / VW];
  int nv = MIN (block, 64) / VW;

  for (int v = 0; v < nv; v++)
    cv[v] = vload (c + v * VW);
  switch (op) {
    case 0: PER_CHANNEL (+); break;
    case 1: PER_CHANNEL (-); break;
    case 2: PER_CHANNEL (*); break;
    default: PER_CHANNEL (/); break;
  }
}

static void
ISA (per_channel_affine) (const float *x, const float *a, const float *b,
    float *y, int64_t np, int block, int relu)
{
  vf av[64 / VW], bv[64 / VW];
  int nv = MIN (block, 64) / VW;

  for (int v = 0; v < nv; v++) {
    av[v] = vload (a + v * VW);
    bv[v] = vload (b + v * VW);
  }
  for (int64_t p = 0; p < np; p++)
    for (int v = 0; v < nv; v++) {
      vf r = vload (x + p * block + v * VW) * av[v] + bv[v];
      vstore (y + p * block + v * VW, relu ? vmax (r, vbcast (0.f)) : r);
    }
}

static void
ISA (upsample_add_row) (const float *x, const float *z, float *y, int ow,
    int fw, int block)
{
  int nv = MIN (block, 64) / VW;

  for (int o0 = 0, i = 0; o0 < ow; o0 += fw, i++) {
    vf xv[64 / VW];
    int n = MIN (fw, ow - o0);
    for (int v = 0; v < nv; v++)
      xv[v] = vload (x + (ptrdiff_t) i * block + v * VW);
    for (int f = 0; f < n; f++)
      for (int v = 0; v < nv; v++) {
        ptrdiff_t o = (ptrdiff_t) (o0 + f) * block + v * VW;
        vstore (y + o, xv[v] + vload (z + o));
      }
  }
}

/* ---------------------------------------------------------------- */
/* Element-wise rows on plain layouts (plan/eltwise-cpu.c)           */

#define BIN_LOOP(expr)                                                       \
  do {                                                                       \
    for (; i + VW <= n; i += VW) {                                           \
      vf av = sa ? vload (a + i) : vbcast (a[0]);                            \
      vf bv = sb ? vload (b + i) : vbcast (b[0]);                            \
      vstore (y + i, expr);                                                  \
    }                                                                        \
  } while (0)

/* One (op, broadcast pattern) pair per copy: sa and sb are constants
 * after inlining. */
INLINE void
binary_row_impl (int op, const float *a, const int sa, const float *b,
    const int sb, float *y, int64_t n)
{
  int64_t i = 0;

  switch (op) {
    case 0: BIN_LOOP (av + bv); break;
    case 1: BIN_LOOP (av - bv); break;
    case 2: BIN_LOOP (av * bv); break;
    default: BIN_LOOP (av / bv); break;
  }
  for (; i < n; i++) {
    float x = a[sa ? i : 0], z = b[sb ? i : 0];
    y[i] = op == 0 ? x + z : op == 1 ? x - z : op == 2 ? x * z : x / z;
  }
}
#undef BIN_LOOP

static void
ISA (binary_row) (int op, const float *a, int sa, const float *b, int sb,
    float *y, int64_t n)
{
  if (sa && sb)
    binary_row_impl (op, a, 1, b, 1, y, n);
  else if (sa)
    binary_row_impl (op, a, 1, b, 0, y, n);
  else if (sb)
    binary_row_impl (op, a, 0, b, 1, y, n);
  else
    binary_row_impl (op, a, 0, b, 0, y, n);
}

/* log (x): x = m 2^e with m in [sqrt (1/2), sqrt (2)), Cephes logf's
 * polynomial on m - 1 (e ln 2 in two parts); subnormals scaled by 2^23
 * first. log (0) is -inf, log of a negative number or NaN is NaN, log
 * (inf) inf. Within a few ulp of logf. */
INLINE vf
vlog (vf x)
{
  vi tiny = x < vbcast (1.17549435e-38f);
  vf xs = vselect (tiny, x * vbcast (8388608.f), x);
  vi bits = (vi) xs, lo;
  vi e = ((bits >> 23) & 0xff) - 126 - (tiny & 23);
  vf m = (vf) ((bits & 0x007fffff) | 0x3f000000), fe, z, y, r;

  lo = m < vbcast (0.707106781186547524f);
  e = e + lo;                          /* lo is -1 where true */
  m = vselect (lo, m + m, m) - vbcast (1.f);
  fe = __builtin_convertvector (e, vf);
  z = m * m;
  y = vbcast (7.0376836292e-2f);
  y = y * m + vbcast (-1.1514610310e-1f);
  y = y * m + vbcast (1.1676998740e-1f);
  y = y * m + vbcast (-1.2420140846e-1f);
  y = y * m + vbcast (1.4249322787e-1f);
  y = y * m + vbcast (-1.6668057665e-1f);
  y = y * m + vbcast (2.0000714765e-1f);
  y = y * m + vbcast (-2.4999993993e-1f);
  y = y * m + vbcast (3.3333331174e-1f);
  y = y * m * z;
  y = y + fe * vbcast (-2.12194440e-4f);
  y = y - vbcast (0.5f) * z;
  r = m + y + fe * vbcast (0.693359375f);
  r = vselect (x == vbcast (0.f), vbcast (-INFINITY), r);
  r = vselect (x == vbcast (INFINITY), vbcast (INFINITY), r);
  return vselect ((x < vbcast (0.f)) | (x != x), vbcast (NAN), r);
}

/* The square root of each lane, rounded as sqrtf: one instruction on
 * x86 (GCC's vector extensions have none; a sqrtf per lane was 0.077 ms
 * on basic-pitch's 53,148 values). */
INLINE vf
vsqrt (vf v)
{
#if VW == 16 && defined(__AVX512F__)
  return (vf) _mm512_sqrt_ps ((__m512) v);
#elif VW == 8 && defined(__AVX__)
  return (vf) _mm256_sqrt_ps ((__m256) v);
#elif VW == 4 && defined(__SSE2__)
  return (vf) _mm_sqrt_ps ((__m128) v);
#else
  for (int l = 0; l < VW; l++)
    v[l] = sqrtf (v[l]);
  return v;
#endif
}

/* exp (x): x / ln 2 rounded to n (the magic number leaves it in the low
 * mantissa bits), Cephes expf's polynomial on the remainder, times 2^n.
 * The argument is clamped to [-87.3, 88.3] so that 2^n stays a normal
 * number; NaN stays NaN. */
INLINE vf
vexp (vf x)
{
  const vf magic = vbcast (12582912.f);     /* 1.5 * 2^23 */
  vf t, n, z, p;
  vi e;

  x = vselect (x > vbcast (88.3f), vbcast (88.3f), x);
  x = vselect (x < vbcast (-87.3f), vbcast (-87.3f), x);
  t = x * vbcast (1.44269504088896341f) + magic;
  n = t - magic;
  e = ((vi) t - (vi) magic + 127) << 23;
  x = x - n * vbcast (0.693359375f) - n * vbcast (-2.12194440e-4f);
  z = x * x;
  p = vbcast (1.9875691500e-4f);
  p = p * x + vbcast (1.3981999507e-3f);
  p = p * x + vbcast (8.3334519073e-3f);
  p = p * x + vbcast (4.1665795894e-2f);
  p = p * x + vbcast (1.6666665459e-1f);
  p = p * x + vbcast (5.0000001201e-1f);
  p = p * z + x + vbcast (1.f);
  return p * (vf) e;
}

/* 1 / (1 + exp (-x)), exp's argument clamped as the reference evals'
 * Sigmoid clamps it (so x * vsigmoid (x) is -inf at -inf, as their Mul
 * (x, Sigmoid (x)) is). */
INLINE vf
vsigmoid (vf x)
{
  return vbcast (1.f) / (vbcast (1.f) + vexp (-x));
}

/* tanh (x): below |x| 0.625 Cephes tanhf's odd polynomial, above it
 * 1 - 2 / (exp (2 |x|) + 1) with x's sign (vexp () saturates, giving 1
 * for large |x|); NaN stays NaN. */
INLINE vf
vtanh (vf x)
{
  vf ax = (vf) ((vi) x & 0x7fffffff), z = x * x, p, big;

  p = vbcast (-5.70498872745e-3f);
  p = p * z + vbcast (2.06390887954e-2f);
  p = p * z + vbcast (-5.37397155531e-2f);
  p = p * z + vbcast (1.33314422036e-1f);
  p = p * z + vbcast (-3.33332819422e-1f);
  p = p * z * x + x;
  big = vbcast (1.f) - vbcast (2.f) / (vexp (ax + ax) + vbcast (1.f));
  big = (vf) ((vi) big | ((vi) x & (vi) vbcast (-0.f)));
  return vselect (ax < vbcast (0.625f), p, big);
}

INLINE vf
unary_vec (vf v, const int op)
{
  switch (op) {
    case 0: return vselect (v > vbcast (0.f), v, vbcast (0.f));
    case 1: return -v;
    case 2: return (vf) ((vi) v & 0x7fffffff);
    case 4: return vlog (v);
    case 5: return vsigmoid (v);
    case 6: return vtanh (v);
    case 7: return v * vsigmoid (v);
    default: return vsqrt (v);
  }
}

INLINE float
unary_scalar (float v, const int op)
{
  switch (op) {
    case 0: return v > 0.f ? v : 0.f;
    case 1: return -v;
    case 2: return fabsf (v);
    case 4: return logf (v);
    /* exp's argument clamped as vexp () clamps it */
    case 5: return 1.f / (1.f + expf (MIN (-v, 88.3f)));
    case 6: return tanhf (v);
    case 7: return v / (1.f + expf (MIN (-v, 88.3f)));
    default: return sqrtf (v);
  }
}

/* One loop per op (the switch outside it): the loop bodies of the
 * longer functions (exp, a division) then overlap across iterations. */
INLINE void
unary_loop (const float *x, float *y, int64_t n, const int op)
{
  int64_t i = 0;

  for (; i + 2 * VW <= n; i += 2 * VW) {
    vf a = unary_vec (vload (x + i), op);
    vf b = unary_vec (vload (x + i + VW), op);
    vstore (y + i, a);
    vstore (y + i + VW, b);
  }
  for (; i + VW <= n; i += VW)
    vstore (y + i, unary_vec (vload (x + i), op));
  for (; i < n; i++)
    y[i] = unary_scalar (x[i], op);
}

static void
ISA (unary_row) (int op, const float *x, float *y, int64_t n)
{
  switch (op) {
    case 0: unary_loop (x, y, n, 0); break;
    case 1: unary_loop (x, y, n, 1); break;
    case 2: unary_loop (x, y, n, 2); break;
    case 4: unary_loop (x, y, n, 4); break;
    case 5: unary_loop (x, y, n, 5); break;
    case 6: unary_loop (x, y, n, 6); break;
    case 7: unary_loop (x, y, n, 7); break;
    default: unary_loop (x, y, n, 3); break;
  }
}

/* GEMV_P panels of B at a time: 2 * GEMV_P accumulators in flight. */
#define GEMV_P 4

INLINE void
gemv_panels (int k, const float *a, const float *b, int nc, const float *c0,
    float *c, const int np)
{
  vf acc[GEMV_P][NV];
  const float *bp[GEMV_P];

#pragma GCC unroll 4
  for (int p = 0; p < np; p++) {
    bp[p] = b + (ptrdiff_t) p * k * NR;
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
      acc[p][v] = vbcast (0.f);
  }
  for (int kk = 0; kk < k; kk++) {
    vf av = vbcast (a[kk]);
#pragma GCC unroll 4
    for (int p = 0; p < np; p++)
#pragma GCC unroll 4
      for (int v = 0; v < NV; v++)
        acc[p][v] += av * vload (bp[p] + (ptrdiff_t) kk * NR + v * VW);
  }
#pragma GCC unroll 4
  for (int p = 0; p < np; p++) {
    float tmp[NR];
    int n = MIN (NR, nc - p * NR);
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++)
      vstore (tmp + v * VW, acc[p][v]);
    for (int j = 0; j < n; j++)
      c[p * NR + j] = tmp[j] + (c0 ? c0[p * NR + j] : 0.f);
  }
}

static void
ISA (gemv) (int k, const float *a, const float *b, int nc, const float *c0,
    float *c)
{
  int np = (nc + NR - 1) / NR, p = 0;

  for (; p + GEMV_P <= np; p += GEMV_P)
    gemv_panels (k, a, b + (ptrdiff_t) p * k * NR, nc - p * NR,
        c0 ? c0 + p * NR : NULL, c + p * NR, GEMV_P);
  for (; p < np; p++)
    gemv_panels (k, a, b + (ptrdiff_t) p * k * NR, nc - p * NR,
        c0 ? c0 + p * NR : NULL, c + p * NR, 1);
}

static float
ISA (row_sum) (const float *x, int64_t n)
{
  vf acc[4] = { vbcast (0.f), vbcast (0.f), vbcast (0.f), vbcast (0.f) };
  int64_t i = 0;
  float s = 0.f, r[4];

  for (; i + 4 * VW <= n; i += 4 * VW)
    for (int j = 0; j < 4; j++)
      acc[j] += vload (x + i + j * VW);
  for (; i + VW <= n; i += VW)
    acc[0] += vload (x + i);
  hsum4 (acc, r);
  s = (r[0] + r[1]) + (r[2] + r[3]);
  for (; i < n; i++)
    s += x[i];
  return s;
}

static void
ISA (add_row) (float *acc, const float *x, int64_t n)
{
  int64_t i = 0;

  for (; i + VW <= n; i += VW)
    vstore (acc + i, vload (acc + i) + vload (x + i));
  for (; i < n; i++)
    acc[i] += x[i];
}

/* ---------------------------------------------------------------- */
/* Softmax, a part of each row at a time                             */

static float
ISA (row_max) (const float *x, int64_t n)
{
  vf m = vbcast (-INFINITY);
  float r = -INFINITY;
  int64_t i = 0;

  for (; i + VW <= n; i += VW)
    m = vmax (m, vload (x + i));
  for (int l = 0; l < VW; l++)
    r = m[l] > r ? m[l] : r;
  for (; i < n; i++)
    r = x[i] > r ? x[i] : r;
  return r;
}

/* The largest (@min: smallest) of @n > 0 floats; NaN when one is NaN
 * (ReduceMax / ReduceMin: NaN wins, as in numpy). */
static float
ISA (row_extreme) (const float *x, int64_t n, int min)
{
  vf m = vbcast (min ? INFINITY : -INFINITY);
  vi nan = (vi) vbcast (0.f);
  float r = min ? INFINITY : -INFINITY;
  gboolean any_nan = FALSE;
  int64_t i = 0;

  for (; i + VW <= n; i += VW) {
    vf v = vload (x + i);
    m = vselect (min ? v < m : v > m, v, m);
    nan |= v != v;
  }
  for (int l = 0; l < VW; l++) {
    r = (min ? m[l] < r : m[l] > r) ? m[l] : r;
    any_nan |= nan[l] != 0;
  }
  for (; i < n; i++) {
    r = (min ? x[i] < r : x[i] > r) ? x[i] : r;
    any_nan |= x[i] != x[i];
  }
  return any_nan ? NAN : r;
}

/* acc[i] = max (acc[i], x[i]) (@min: min) for i < @n, a NaN in either
 * sticking. */
static void
ISA (extreme_row) (float *acc, const float *x, int64_t n, int min)
{
  int64_t i = 0;

  for (; i + VW <= n; i += VW) {
    vf a = vload (acc + i), v = vload (x + i);
    vi take = ((min ? v < a : v > a) | (v != v)) & (a == a);
    vstore (acc + i, vselect (take, v, a));
  }
  for (; i < n; i++)
    if (acc[i] == acc[i] && ((min ? x[i] < acc[i] : x[i] > acc[i])
            || x[i] != x[i]))
      acc[i] = x[i];
}

static float
ISA (exp_sum) (const float *x, float *y, int64_t n, float m)
{
  vf acc = vbcast (0.f), vm = vbcast (m);
  float r = 0.f;
  int64_t i = 0;

  for (; i + VW <= n; i += VW) {
    vf v = vexp (vload (x + i) - vm);
    vstore (y + i, v);
    acc += v;
  }
  for (int l = 0; l < VW; l++)
    r += acc[l];
  for (; i < n; i++) {
    y[i] = expf (x[i] - m);
    r += y[i];
  }
  return r;
}

static void
ISA (scale) (float *y, int64_t n, float s)
{
  vf vs = vbcast (s);
  int64_t i = 0;

  for (; i + VW <= n; i += VW)
    vstore (y + i, vload (y + i) * vs);
  for (; i < n; i++)
    y[i] *= s;
}

/* ---------------------------------------------------------------- */

const ClinferCpuSimd ISA (clinfer_cpu_simd) = {
  G_STRINGIFY (CLINFER_ISA_SUFFIX), MR, NR,
  ISA (pack_b), ISA (pad_plane), ISA (gemm), ISA (gemm_indirect),
  ISA (gemm_rows),
  ISA (depthwise), ISA (max_pool_2x2), ISA (max_pool_blocked),
  ISA (dw_pw_blocked), ISA (deconv_to_one), ISA (conv_to_one),
  ISA (per_channel),
  ISA (per_channel_affine), ISA (upsample_add_row),
  ISA (row_max), ISA (exp_sum), ISA (scale),
  ISA (binary_row), ISA (unary_row), ISA (gemv), ISA (row_sum), ISA (add_row),
  ISA (row_extreme), ISA (extreme_row),
};

#ifdef CLINFER_CPU_SIMD_DISPATCH
/* Built into the generic variant only: it links against the others. */
#ifdef CLINFER_CPU_SIMD_X86
extern const ClinferCpuSimd clinfer_cpu_simd_avx2;
extern const ClinferCpuSimd clinfer_cpu_simd_avx2x32;
extern const ClinferCpuSimd clinfer_cpu_simd_avx512;
#endif

int
clinfer_cpu_gemm_mr (const ClinferCpuSimd *simd, int m)
{
  int best = simd->mr;

  for (int r = simd->mr; r >= simd->mr / 2 && r >= 1; r--)
    if ((m + r - 1) / r * r < (m + best - 1) / best * best)
      best = r;
  return best;
}

const ClinferCpuSimd *
clinfer_cpu_simd_get (ClinferCpuIsa isa)
{
#ifdef CLINFER_CPU_SIMD_X86
  if (isa == CLINFER_CPU_ISA_AVX512)
    return &clinfer_cpu_simd_avx512;
  /* 8-float vectors on an AVX-512 machine (8-channel blocks there): the
   * AVX2 kernels compiled with AVX-512VL's 32 registers, unless
   * CLINFER_CPU_ISA caps the machine at AVX2. */
  if (isa == CLINFER_CPU_ISA_AVX2
      && clinfer_cpu_isa_detect () >= CLINFER_CPU_ISA_AVX512)
    return &clinfer_cpu_simd_avx2x32;
  if (isa == CLINFER_CPU_ISA_AVX2)
    return &clinfer_cpu_simd_avx2;
#endif
  return &ISA (clinfer_cpu_simd);
}
#endif
