/* clinfer OpenCL kernels — LayerNormalization over rows of [outer, inner]
 * (the dims from axis on), in float: y = (x - mean) / sqrt (var + eps) *
 * scale + bias, scale and bias broadcast to the normalised dims through
 * element strides over @dims; the optional Mean and InvStdDev outputs
 * (@n_stats of them, f32) get one value per row. */

__kernel void
layer_norm (__global const data_t *x, __global const data_t *scale,
    __global const data_t *bias, __global data_t *y, __global float *mean_out,
    __global float *inv_out, int n_stats, int outer, int inner, float eps,
    int has_bias, int rank, int8 dims, int8 ss, int8 bs)
{
  int o = get_global_id (0);
  if (o >= outer)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (ss, 0, s0);
  vstore8 (bs, 0, s1);
  __global const data_t *xr = x + (size_t) o * inner;
  float mean = 0.0f, var = 0.0f;

  for (int j = 0; j < inner; j++)
    mean += LOAD (xr, j);
  mean /= (float) inner;
  for (int j = 0; j < inner; j++) {
    float v = LOAD (xr, j) - mean;
    var += v * v;
  }
  var /= (float) inner;
  float inv = 1.0f / sqrt (var + eps);
  if (n_stats > 0)
    mean_out[o] = mean;
  if (n_stats > 1)
    inv_out[o] = inv;
  for (int j = 0; j < inner; j++) {
    float v = (LOAD (xr, j) - mean) * inv
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
  float mean = 0.0f, var = 0.0f;

  for (int j = 0; j < plane; j++)
    mean += LOAD (xp, j);
  mean /= (float) plane;
  for (int j = 0; j < plane; j++) {
    float v = LOAD (xp, j) - mean;
    var += v * v;
  }
  var /= (float) plane;
  float k = LOAD (scale, c) / sqrt (var + eps), b = LOAD (bias, c);
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
  float sum = 0.0f;
  for (int q = max (0, c - lo); q <= min (channels - 1, c + hi); q++) {
    float v = LOAD (x, ((size_t) b * channels + q) * inner + k);
    sum += v * v;
  }
  STORE (y, i, LOAD (x, i) / pow (bias + alpha / (float) size * sum, beta));
}
