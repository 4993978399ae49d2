/* clinfer — the CPU device's inner kernels: one table per ISA, filled by
 * cpu-simd.c, which meson compiles once per ISA with different -m flags. */
#pragma once

#include "plan/cpu-kernels.h"
#include "ops/conv.h"
#include <stddef.h>

G_BEGIN_DECLS

/* What is applied to each output value after the sum, in this order:
 * + bias (per row), + z (same layout as the output), activation. */
typedef struct {
  ClinferActivation act;
  float min, max, alpha;
} ClinferCpuEpilogue;

/* 2-D convolution geometry of one image and channel group. */
typedef struct {
  int cin_g;                 /* input channels of the group */
  int ih, iw, oh, ow;
  int kh, kw, sh, sw, dh, dw;
  int pt, pl;                /* top and left pads */
} ClinferCpuConvGeom;

/* The geometry of 2-D window @win (cin_g left 0); FALSE when one of its
 * extents is negative or over 2^24 (the kernels index with int). */
gboolean clinfer_cpu_conv_geom_from_window (const ClinferWindow *win,
    ClinferCpuConvGeom *g);

/* Depthwise plane geometry: the input plane is copied into a zero-padded
 * scratch split into sw column phases (phase r holds padded columns r,
 * r + sw, ...), so every tap reads contiguous columns at any stride. */
typedef struct {
  ClinferCpuConvGeom g;
  int hp, pw;                /* padded rows, phase row length */
  int n_taps;                /* kh * kw */
  const int *taps;           /* per tap: offset in scratch from the first
                              * tap's position of output (0, 0) */
  ClinferCpuEpilogue ep;
} ClinferCpuDwArgs;

/* A depthwise conv then a 1x1 conv, fused, on a blocked layout (nChw8c /
 * nChw16c, one image): y = act (pw_b + pw_w . dw_act (dw_b + dw_w * x) + z).
 * Vectors are VW = nr / 2 floats; a block holds block / VW of them. */
typedef struct {
  ClinferCpuConvGeom g;      /* depthwise geometry (cin_g unused, no dilation) */
  int block;                 /* floats per pixel of a channel block */
  int cin;                   /* real depthwise channels: the 1x1 reads these */
  int cin_vec;               /* depthwise vectors: ceil (cin / block) * block / VW */
  int n_out_vec;             /* output vectors: ceil (cout / block) * block / VW */
  const float *dw_w;         /* [cin_vec][kh * kw][VW], padding lanes zero */
  const float *dw_b;         /* [cin_vec * VW], or NULL */
  ClinferCpuEpilogue dw_ep;  /* the depthwise output's activation */
  const float *pw_w;         /* [n_out_vec][cin][VW], padding lanes zero */
  const float *pw_b;         /* [n_out_vec * VW], padding lanes zero */
  ClinferCpuEpilogue ep;     /* after + z */
} ClinferCpuDwPwArgs;

/* Depthwise channels (cin_vec * VW) a dw_pw call takes at most: its
 * per-thread buffer holds a run of pixels of every depthwise channel. */
#define CLINFER_CPU_DWPW_MAX_CIN 512

/* A ConvTranspose to one channel whose kernel equals its stride (the
 * windows do not overlap: each input pixel makes its own kh x kw output
 * patch), from a blocked input to a plain output:
 * y[iy * kh + ky][ix * kw + kx] = bias + sum_c x[c][iy][ix] w[c][ky][kx]. */
typedef struct {
  int block;                 /* floats per pixel of a channel block */
  int cin_vec;               /* input vectors: ceil (cin / block) * block / VW */
  int ih, iw, kh, kw;
  float bias;
  const float *w;            /* [taps rounded up to 4][cin_vec][VW],
                              * padding lanes and taps zero */
} ClinferCpuDeconvArgs;

/* Taps kh * kw and input vectors a deconv_to_one call takes at most. */
#define CLINFER_CPU_DECONV_MAX_TAPS 16
#define CLINFER_CPU_DECONV_MAX_VEC 256

/* A convolution to one output channel (group 1) as dot products: output
 * pixel (oy, ox) is bias + the sum over its window's segments of a run of
 * seg_len contiguous input floats times the segment's packed weights, then
 * the activation. The window's top-left input pixel is at float
 * (oy * sh - pt) * row_floats + (ox * sw - pl) * px_floats of the image;
 * a segment adds seg_off[s] to that.
 * - Blocked input (nChw8c / nChw16c, px_floats = block): a segment is one
 *   tap (ky, kx) of one channel block, seg_len = block.
 * - Plain input (NCHW, px_floats = 1, no dilation along x): a segment is
 *   one kernel row (channel, ky), seg_len = kw; seg_kx is NULL.
 * seg_len is a multiple of the vector width (nr / 2). Segments are sorted
 * by ky: those of ky are [ky_start[ky], ky_start[ky + 1]). Taps in the
 * padding are skipped. */
typedef struct {
  ClinferCpuConvGeom g;      /* cin_g unused */
  int n_seg, seg_len;
  int px_floats;
  ptrdiff_t row_floats;
  const ptrdiff_t *seg_off;
  const int *seg_kx;         /* blocked: the segment's kx */
  const int *ky_start;       /* kh + 1 values */
  const float *w;            /* [n_seg][seg_len] */
  float bias;
  ClinferCpuEpilogue ep;
} ClinferCpuConvOneArgs;

typedef struct {
  const char *isa_name;
  int mr, nr;                /* GEMM micro-tile: rows of A, columns of B */
  /* Packs @nc columns of @k rows of @b (row stride @ldb) into
   * ceil (nc / nr) panels of k x nr floats (zero padded). */
  void (*pack_b) (float *dst, const float *b, ptrdiff_t ldb, int k, int nc);
  /* Copies input plane @src ([ih, iw]) into @dst zero-padded and split into
   * sw column phases: phase r, padded row y (input row y - pt) at
   * dst + (r * hp + y) * pw, element i = input column i * sw + r - pl. */
  void (*pad_plane) (const ClinferCpuConvGeom *g, int hp, int pw,
      const float *src, float *dst);
  /* C[m x nc] = A[m x k] * B[k x nc] with the epilogue. @a holds
   * ceil (m / mr) panels of k x mr (zero padded), @bias m rounded up to mr
   * values, @b the panels of pack_b; @z may be NULL. */
  void (*gemm) (int m, int k, const float *a, const float *bias,
      const float *b, int nc, float *c, ptrdiff_t ldc, const float *z,
      ptrdiff_t ldz, const ClinferCpuEpilogue *ep);
  /* Same with B[kk][j] = b[offs[kk] + j] (an implicit im2col over padded
   * planes; may read up to nr - 1 floats past the last column). */
  void (*gemm_indirect) (int m, int k, const float *a, const float *bias,
      const float *b, const int *offs, int nc, float *c, ptrdiff_t ldc,
      const float *z, ptrdiff_t ldz, const ClinferCpuEpilogue *ep);
  /* gemm () on A packed in panels of @mr rows, gemm_mr (m) of them (any
   * other @mr is taken as the table's mr), without an activation or, when
   * @relu and @z is given, with a Relu after adding z. */
  void (*gemm_rows) (int mr, int m, int k, const float *a, const float *bias,
      const float *b, int nc, float *c, ptrdiff_t ldc, const float *z,
      ptrdiff_t ldz, int relu);
  /* One depthwise output plane; @scratch holds sw * hp * pw floats. */
  void (*depthwise) (const ClinferCpuDwArgs *a, const float *src,
      const float *w, float bias, const float *z, float *dst, float *scratch);
  /* 2x2 stride-2 max pooling of one plane without padding. */
  void (*max_pool_2x2) (const float *src, int ih, int iw, float *dst, int oh,
      int ow);
  /* Max pooling of output rows [oy0, oy1) of one channel block of a
   * blocked layout (nChw8c / nChw16c: @block floats per pixel) with any
   * window (cin_g unused); padded cells are skipped. @block is a multiple
   * of the vector width (nr / 2). */
  void (*max_pool_blocked) (const ClinferCpuConvGeom *g, int block,
      const float *src, float *dst, int oy0, int oy1);
  /* Output rows [oy0, oy1) of a fused depthwise + 1x1 conv (see
   * ClinferCpuDwPwArgs); @z (y's layout) may be NULL. The depthwise
   * output never leaves the thread's stack buffer. */
  void (*dw_pw_blocked) (const ClinferCpuDwPwArgs *a, const float *x,
      const float *z, float *y, int oy0, int oy1);
  /* Input rows [iy0, iy1) of a ClinferCpuDeconvArgs deconv: @x blocked,
   * @y the plain output plane. */
  void (*deconv_to_one) (const ClinferCpuDeconvArgs *a, const float *x,
      float *y, int iy0, int iy1);
  /* Output pixels [ox0, ox1) of row @oy of a ClinferCpuConvOneArgs conv:
   * @x the image's input, @y its plain output plane. */
  void (*conv_to_one) (const ClinferCpuConvOneArgs *a, const float *x,
      float *y, int oy, int ox0, int ox1);
  /* y = x op c over @np pixels of one channel block (@block floats a
   * pixel, a multiple of nr / 2, at most 64; @c one value per lane); @op
   * 0 +, 1 -, 2 *, 3 /. @y may be @x. */
  void (*per_channel) (int op, const float *x, const float *c, float *y,
      int64_t np, int block);
  /* y = x * a + b per lane over @np pixels of one channel block (@a, @b
   * one value per lane), then max (y, 0) when @relu. @y may be @x. */
  void (*per_channel_affine) (const float *x, const float *a, const float *b,
      float *y, int64_t np, int block, int relu);
  /* One output row of y = up (x) + z on a blocked layout: y and z hold
   * @ow pixels, x ceil (ow / fw) (output pixel o reads x's o / fw), each
   * @block floats (a multiple of nr / 2, at most 64). */
  void (*upsample_add_row) (const float *x, const float *z, float *y, int ow,
      int fw, int block);
  /* Softmax of a row in parts: the largest of @n floats; y = exp (x - m)
   * (a vector exp, within a few ulp of expf) and their sum; y *= s. */
  float (*row_max) (const float *x, int64_t n);
  float (*exp_sum) (const float *x, float *y, int64_t n, float m);
  void (*scale) (float *y, int64_t n, float s);
  /* y[i] = a[i * sa] op b[i * sb] for i < @n (@sa, @sb 0 or 1: a
   * broadcast scalar or a row); @op 0 +, 1 -, 2 *, 3 /. @y may be @a or
   * @b. */
  void (*binary_row) (int op, const float *a, int sa, const float *b, int sb,
      float *y, int64_t n);
  /* y = f (x) over @n floats; @op 0 Relu (x > 0 ? x : 0), 1 Neg, 2 Abs,
   * 3 Sqrt, 4 Log (a vector log within a few ulp of logf), 5 Sigmoid
   * (1 / (1 + exp (-x))), 6 Tanh, 7 Swish (x / (1 + exp (-x))) (these
   * three within a few ulp of the libm formulas). @y may be @x. */
  void (*unary_row) (int op, const float *x, float *y, int64_t n);
  /* c[j] = c0[j] + sum_kk a[kk] B[kk][j] for j < @nc (c0[j] taken as 0
   * when @c0 is NULL): a row vector by @k rows of B in pack_b ()'s panels,
   * four panels at a time (each read once, in order). @c may be @c0. */
  void (*gemv) (int k, const float *a, const float *b, int nc,
      const float *c0, float *c);
  /* The sum of @n floats (in lanes, then across them). */
  float (*row_sum) (const float *x, int64_t n);
  /* acc[i] += x[i] for i < @n. */
  void (*add_row) (float *acc, const float *x, int64_t n);
  /* The largest of @n > 0 floats (@min: the smallest), NaN when one is
   * NaN; acc[i] = max (acc[i], x[i]) (@min: min), NaN sticking. */
  float (*row_extreme) (const float *x, int64_t n, int min);
  void (*extreme_row) (float *acc, const float *x, int64_t n, int min);
} ClinferCpuSimd;

/* The panel rows gemm_rows () should use for @m rows with @simd: from
 * mr / 2 to mr, the fewest computed rows (ceil (m / r) * r), the largest r
 * on ties. */
int clinfer_cpu_gemm_mr (const ClinferCpuSimd *simd, int m);
/* The row-major [@m][@k] matrix @x as gemm_rows () reads A: panels of @mr
 * rows, each @k columns of @mr values, the last panel zero padded, at
 * @a (ceil (m / mr) * mr * k floats). */
void clinfer_cpu_pack_a (const float *x, int m, int k, int mr, float *a);

/* The kernels of @isa (the generic table when @isa is not built in). */
const ClinferCpuSimd *clinfer_cpu_simd_get (ClinferCpuIsa isa);

/* Factories (conv-cpu.c, norm-cpu.c, pool-cpu.c, pad-cpu.c, copy-cpu.c,
 * eltwise-cpu.c, resize-cpu.c, recurrent-cpu.c). */
gboolean clinfer_cpu_conv_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_layer_norm_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_pad_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_concat_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_split_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_slice_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_resize_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_transpose_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_eltwise_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_max_pool_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);
gboolean clinfer_cpu_recurrent_factory (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);

G_END_DECLS
