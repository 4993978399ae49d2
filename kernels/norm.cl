/* clinfer OpenCL kernels — LayerNormalization over rows of [outer, inner]
 * (the dims from axis on), in acc_t: y = (x - mean) / sqrt (var + eps) *
 * scale + bias, scale and bias broadcast to the normalised dims through
 * element strides over @dims; the optional Mean and InvStdDev outputs
 * (@n_stats of them, f32) get one value per row. With @std_form,
 * com.clinfer LayerNormStd: (x - mean) / (sqrt (var * var_scale) + eps). */

/* Computed in acc_t: float, or double in the f64 build (-DNORM_F64, where
 * the device has cl_khr_fp64), which also stores double: data_t is
 * redefined after common.cl's float typedef, and LOAD/STORE index plainly. */
#ifdef NORM_F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define data_t double
typedef double acc_t;
#else
typedef float acc_t;
#endif

__kernel void
layer_norm (__global const data_t *x, __global const data_t *scale,
    __global const data_t *bias, __global data_t *y, __global float *mean_out,
    __global float *inv_out, int n_stats, int outer, int inner, float eps,
    int has_bias, int rank, int8 dims, int8 ss, int8 bs, int std_form,
    float var_scale)
{
  int o = get_global_id (0);
  if (o >= outer)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (ss, 0, s0);
  vstore8 (bs, 0, s1);
  __global const data_t *xr = x + (size_t) o * inner;
  acc_t mean = 0.0f, var = 0.0f;

  for (int j = 0; j < inner; j++)
    mean += LOAD (xr, j);
  mean /= (acc_t) inner;
  for (int j = 0; j < inner; j++) {
    acc_t v = LOAD (xr, j) - mean;
    var += v * v;
  }
  var /= (acc_t) inner;
  acc_t inv = std_form ? 1.0f / (sqrt (var * (acc_t) var_scale) + eps)
      : 1.0f / sqrt (var + eps);
  if (n_stats > 0)
    mean_out[o] = mean;
  if (n_stats > 1)
    inv_out[o] = inv;
  for (int j = 0; j < inner; j++) {
    acc_t v = (LOAD (xr, j) - mean) * inv
        * LOAD (scale, strided_offset (j, rank, d, s0));
    if (has_bias)
      v += LOAD (bias, strided_offset (j, rank, d, s1));
    STORE (y, (size_t) o * inner + j, v);
  }
}

/* InstanceNormalization: one work-item per (n, c) plane of @plane
 * elements, scale and bias per channel. */
__kernel void
instance_norm (__global const data_t *x, __global const data_t *scale,
    __global const data_t *bias, __global data_t *y, int planes, int channels,
    int plane, float eps)
{
  int p = get_global_id (0);
  if (p >= planes)
    return;
  int c = p % channels;
  __global const data_t *xp = x + (size_t) p * plane;
  acc_t mean = 0.0f, var = 0.0f;

  for (int j = 0; j < plane; j++)
    mean += LOAD (xp, j);
  mean /= (acc_t) plane;
  for (int j = 0; j < plane; j++) {
    acc_t v = LOAD (xp, j) - mean;
    var += v * v;
  }
  var /= (acc_t) plane;
  acc_t k = LOAD (scale, c) / sqrt (var + eps), b = LOAD (bias, c);
  for (int j = 0; j < plane; j++)
    STORE (y, (size_t) p * plane + j, (LOAD (xp, j) - mean) * k + b);
}

/* LRN across channels of [n, c, s]: x / (bias + alpha / size * sum of
 * squares over the channel window) ^ beta. */
__kernel void
lrn (__global const data_t *x, __global data_t *y, int n, int channels,
    int inner, int size, float alpha, float beta, float bias)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int k = i % inner, c = (i / inner) % channels, b = i / (inner * channels);
  int lo = (size - 1) / 2, hi = size - 1 - lo;
  acc_t sum = 0.0f;
  for (int q = max (0, c - lo); q <= min (channels - 1, c + hi); q++) {
    acc_t v = LOAD (x, ((size_t) b * channels + q) * inner + k);
    sum += v * v;
  }
  STORE (y, i, LOAD (x, i) / pow (bias + alpha / (acc_t) size * sum, (acc_t) beta));
}

/* BatchNormalization whose statistics are read on the device (inputs of
 * the graph, or the batch statistics of training mode): over
 * [batch, channels, inner], y = (x - mean[c]) * scale[c] / sqrt (var[c] +
 * eps) + bias[c]. */
__kernel void
bn_apply (__global const data_t *x, __global const data_t *scale,
    __global const data_t *bias, __global const data_t *mean,
    __global const data_t *var, __global data_t *y, int n, int channels,
    int inner, float eps)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int c = (i / inner) % channels;
  acc_t k = LOAD (scale, c) / sqrt (LOAD (var, c) + eps);
  STORE (y, i, (LOAD (x, i) - LOAD (mean, c)) * k + LOAD (bias, c));
}

/* Training mode: batch mean and (population) variance per channel into
 * @bmean / @bvar, and the running statistics rmean * momentum + batch *
 * (1 - momentum) into @out_mean / @out_var when @has_out says so (bit 0:
 * mean, bit 1: var). One work-item per channel, two passes. */
__kernel void
bn_stats (__global const data_t *x, __global const data_t *rmean,
    __global const data_t *rvar, __global data_t *bmean,
    __global data_t *bvar, __global data_t *out_mean,
    __global data_t *out_var, int batch, int channels, int inner,
    float momentum, int has_out)
{
  int c = get_global_id (0);
  if (c >= channels)
    return;
  acc_t m = 0.0f, v = 0.0f;
  int count = batch * inner;
  for (int b = 0; b < batch; b++)
    for (int k = 0; k < inner; k++)
      m += LOAD (x, ((size_t) b * channels + c) * inner + k);
  m /= (acc_t) max (count, 1);
  for (int b = 0; b < batch; b++)
    for (int k = 0; k < inner; k++) {
      acc_t t = LOAD (x, ((size_t) b * channels + c) * inner + k) - m;
      v += t * t;
    }
  v /= (acc_t) max (count, 1);
  STORE (bmean, c, m);
  STORE (bvar, c, v);
  if (has_out & 1)
    STORE (out_mean, c, LOAD (rmean, c) * momentum + m * (1.0f - momentum));
  if (has_out & 2)
    STORE (out_var, c, LOAD (rvar, c) * momentum + v * (1.0f - momentum));
}

/* MeanVarianceNormalization: y = (x - mean) / (std + 1e-9) over the
 * reduced dims, one work-item per kept position (the index scheme of
 * reduce.cl: kept dims @odims / @os, reduced dims @rdims / @rs, as input
 * strides); three passes over the group. */
__kernel void
mvn (__global const data_t *x, __global data_t *y, int n, int orank,
    int8 odims, int8 os, int rrank, int8 rdims, int8 rs, int count)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int od[8], ost[8], rd[8], rst[8];
  vstore8 (odims, 0, od);
  vstore8 (os, 0, ost);
  vstore8 (rdims, 0, rd);
  vstore8 (rs, 0, rst);
  int base = strided_offset (i, orank, od, ost);
  acc_t mean = 0.0f, var = 0.0f;
  for (int r = 0; r < count; r++)
    mean += LOAD (x, base + strided_offset (r, rrank, rd, rst));
  mean /= (acc_t) count;
  for (int r = 0; r < count; r++) {
    acc_t t = LOAD (x, base + strided_offset (r, rrank, rd, rst)) - mean;
    var += t * t;
  }
  acc_t den = sqrt (var / (acc_t) count) + 1e-9f;
  for (int r = 0; r < count; r++) {
    int at = base + strided_offset (r, rrank, rd, rst);
    STORE (y, at, (LOAD (x, at) - mean) / den);
  }
}

/* LpNormalization (p = 1 or 2) along the middle axis of [outer, n,
 * inner]: one work-item per (outer, inner) column. */
__kernel void
lp_norm (__global const data_t *x, __global data_t *y, int outer, int n,
    int inner, int p)
{
  int s = get_global_id (0);
  if (s >= outer * inner)
    return;
  size_t base = (size_t) (s / inner) * n * inner + s % inner;
  acc_t norm = 0.0f;
  for (int k = 0; k < n; k++) {
    acc_t v = LOAD (x, base + (size_t) k * inner);
    norm += p == 1 ? fabs (v) : v * v;
  }
  if (p == 2)
    norm = sqrt (norm);
  for (int k = 0; k < n; k++) {
    size_t at = base + (size_t) k * inner;
    STORE (y, at, LOAD (x, at) / norm);
  }
}
