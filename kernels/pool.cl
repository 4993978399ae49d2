/* clinfer OpenCL kernels — pooling over NCHW with 1 to 3 spatial dims
 * handled as (D, H, W): MaxPool, AveragePool and the global pools.
 * Work-item (spatial, channel, batch) for windows, one (n, c) plane per
 * work-item for global pools. */

/* Taps of output position @o inside [-pad, in + pad_end): the divisor of
 * count_include_pad (ceil_mode windows may overhang the padded input). */
inline int
padded_taps (int o, int s, int pad, int pad_end, int in, int k, int d)
{
  int start = o * s - pad;
  if (start >= in + pad_end)
    return 0;
  if (start + (k - 1) * d >= in + pad_end)
    return (in + pad_end - 1 - start) / d + 1;
  return k;
}

/* mode 0: max (with the Indices output when @has_idx: flat input index,
 * column-major within the plane with @col_major); 1: average excluding
 * padding; 2: average including it. */
__kernel void
pool_window (__global const data_t *x, __global data_t *y,
    __global long *idx, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int4 pad_end, int mode, int has_idx, int col_major)
{
  int sp = get_global_id (0);
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.x * out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = (sp / out.z) % out.y, od = sp / (out.z * out.y);
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.x * in.y * in.z;
  float acc = mode == 0 ? -INFINITY : 0.0f;
  int count = 0, best = -1;

  for (int kd = 0; kd < k.x; kd++) {
    int id = od * s.x + kd * dl.x - pad.x;
    if (id < 0 || id >= in.x)
      continue;
    for (int kh = 0; kh < k.y; kh++) {
      int ih = oh * s.y + kh * dl.y - pad.y;
      if (ih < 0 || ih >= in.y)
        continue;
      for (int kw = 0; kw < k.z; kw++) {
        int iw = ow * s.z + kw * dl.z - pad.z;
        if (iw < 0 || iw >= in.z)
          continue;
        int at = (id * in.y + ih) * in.z + iw;
        float v = LOAD (xi, at);
        /* Max: the first tap, then strictly greater ones (as the
         * reference: NaN never wins after the first). */
        if (mode != 0)
          acc += v;
        else if (best < 0 || v > acc) {
          acc = v;
          best = col_major ? id + (ih + iw * in.y) * in.x : at;
        }
        count++;
      }
    }
  }
  if (mode == 1)
    acc = count > 0 ? acc / (float) count : 0.0f;
  else if (mode == 2) {
    int cnt = padded_taps (od, s.x, pad.x, pad_end.x, in.x, k.x, dl.x)
        * padded_taps (oh, s.y, pad.y, pad_end.y, in.y, k.y, dl.y)
        * padded_taps (ow, s.z, pad.z, pad_end.z, in.z, k.z, dl.z);
    acc = cnt > 0 ? acc / (float) cnt : 0.0f;
  }
  STORE (y, ((size_t) n * channels + c) * out_sp + sp, acc);
  if (has_idx)
    idx[((size_t) n * channels + c) * out_sp + sp] = best < 0 ? -1
        : ((long) n * channels + c) * in.x * in.y * in.z + best;
}

/* mode 0: max; 1: average. One work-item per (n, c) plane of @plane. */
__kernel void
pool_global (__global const data_t *x, __global data_t *y, int plane,
    int mode)
{
  int i = get_global_id (0);
  __global const data_t *xi = x + (size_t) i * plane;
  float acc = mode == 0 ? -INFINITY : 0.0f;

  for (int j = 0; j < plane; j++) {
    float v = LOAD (xi, j);
    acc = mode == 0 ? fmax (acc, v) : acc + v;
  }
  STORE (y, i, mode == 0 ? acc : acc / (float) plane);
}

/* 2-D MaxPool without Indices whose windows never leave the row (no
 * padding along W): 8 consecutive outputs of a row per work-item (output
 * width a multiple of 8). Max as the reference: the first tap, then
 * strictly greater ones. */
__kernel void
pool_max8 (__global const data_t *x, __global data_t *y, int channels,
    int4 in, int4 out, int4 k, int4 s, int4 dl, int4 pad)
{
  int sp = get_global_id (0) * 8;
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = sp / out.z;
  __global const data_t *xi = x + ((size_t) n * channels + c) * in.y * in.z;
  float8 acc = (float8) (-INFINITY);
  int first = 1;

  for (int kh = 0; kh < k.y; kh++) {
    int ih = oh * s.y + kh * dl.y - pad.y;
    if (ih < 0 || ih >= in.y)
      continue;
    __global const data_t *row = xi + ih * in.z;
    for (int kw = 0; kw < k.z; kw++) {
      float8 v = load_row8 (row, ow * s.z + kw * dl.z, s.z, in.z);
      acc = first ? v : select (acc, v, v > acc);
      first = 0;
    }
  }
  STORE8 (y, ((size_t) n * channels + c) * out_sp + sp, acc);
}

#ifdef POOL_T
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* MaxPool on other element types (-DPOOL_T=<type>: char, uchar, double),
 * compared in that type; a window without a tap gives -DPOOL_LOWEST.
 * Indices as pool_window. With -DPOOL_FLOAT (double), @mode 1 and 2 are
 * the averages of pool_window, summed in double. */
__kernel void
pool_max_typed (__global const POOL_T *x, __global POOL_T *y,
    __global long *idx, int channels, int4 in, int4 out, int4 k, int4 s,
    int4 dl, int4 pad, int4 pad_end, int mode, int has_idx, int col_major)
{
  int sp = get_global_id (0);
  int c = get_global_id (1);
  int n = get_global_id (2);
  int out_sp = out.x * out.y * out.z;
  if (sp >= out_sp)
    return;
  int ow = sp % out.z, oh = (sp / out.z) % out.y, od = sp / (out.z * out.y);
  __global const POOL_T *xi = x
      + ((size_t) n * channels + c) * in.x * in.y * in.z;
  POOL_T acc = POOL_LOWEST;
  int best = -1, count = 0;
#ifdef POOL_FLOAT
  POOL_T sum = 0;
#endif

  for (int kd = 0; kd < k.x; kd++) {
    int id = od * s.x + kd * dl.x - pad.x;
    if (id < 0 || id >= in.x)
      continue;
    for (int kh = 0; kh < k.y; kh++) {
      int ih = oh * s.y + kh * dl.y - pad.y;
      if (ih < 0 || ih >= in.y)
        continue;
      for (int kw = 0; kw < k.z; kw++) {
        int iw = ow * s.z + kw * dl.z - pad.z;
        if (iw < 0 || iw >= in.z)
          continue;
        int at = (id * in.y + ih) * in.z + iw;
        POOL_T v = xi[at];
#ifdef POOL_FLOAT
        sum += v;
#endif
        count++;
        if (best < 0 || v > acc) {
          acc = v;
          best = col_major ? id + (ih + iw * in.y) * in.x : at;
        }
      }
    }
  }
#ifdef POOL_FLOAT
  if (mode == 1)
    acc = count > 0 ? sum / count : 0;
  else if (mode == 2) {
    int cnt = padded_taps (od, s.x, pad.x, pad_end.x, in.x, k.x, dl.x)
        * padded_taps (oh, s.y, pad.y, pad_end.y, in.y, k.y, dl.y)
        * padded_taps (ow, s.z, pad.z, pad_end.z, in.z, k.z, dl.z);
    acc = cnt > 0 ? sum / cnt : 0;
  }
#endif
  y[((size_t) n * channels + c) * out_sp + sp] = acc;
  if (has_idx)
    idx[((size_t) n * channels + c) * out_sp + sp] = best < 0 ? -1
        : ((long) n * channels + c) * in.x * in.y * in.z + best;
}

/* GlobalMaxPool (mode 0) / GlobalAveragePool (1) in POOL_T. */
__kernel void
pool_global_typed (__global const POOL_T *x, __global POOL_T *y, int plane,
    int mode)
{
  int i = get_global_id (0);
  __global const POOL_T *xi = x + (size_t) i * plane;
  POOL_T acc = mode == 0 ? POOL_LOWEST : 0;

  for (int j = 0; j < plane; j++)
    acc = mode == 0 ? max (acc, xi[j]) : acc + xi[j];
#ifdef POOL_FLOAT
  if (mode == 1)
    acc /= plane;
#endif
  y[i] = acc;
}
#endif
