/* clinfer OpenCL kernels — tensors made from a few parameters: Range,
 * ConstantOfShape (a fill with raw bits) and OneHot.
 *
 * Built with -DELEM=uchar|ushort|uint|ulong for fills and OneHot values;
 * Range with -DRANGE_T=<type as stored> (-DRANGE_HALF for f16: computed in
 * float and stored as half, as the CPU device does); OneHot with
 * -DOH_IDX=<index type as stored> (-DOH_IDX_FLOAT for float indices,
 * which truncate; -DOH_IDX_HALF for f16 ones). */

#pragma OPENCL FP_CONTRACT OFF
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifdef ELEM
__kernel void
fill_bits (__global ELEM *y, int n, ELEM v)
{
  int i = get_global_id (0);

  if (i < n)
    y[i] = v;
}
#endif

#ifdef RANGE_HALF
__kernel void
range_fill (__global half *y, int n, float start, float delta)
{
  int i = get_global_id (0);

  if (i < n)
    vstore_half (start + (float) i * delta, i, y);
}
#elif defined(RANGE_T)
__kernel void
range_fill (__global RANGE_T *y, int n, RANGE_T start, RANGE_T delta)
{
  int i = get_global_id (0);

  if (i < n)
    y[i] = (RANGE_T) (start + (RANGE_T) i * delta);
}
#endif

#ifdef OH_IDX
/* Index @i as a long; floats truncate, NaN never matches. */
inline long
onehot_index (__global const OH_IDX *idx, int i)
{
#if defined(OH_IDX_HALF) || defined(OH_IDX_FLOAT)
#ifdef OH_IDX_HALF
  float v = vload_half (i, idx);
#else
  float v = (float) idx[i];
#endif
  return isnan (v) ? LONG_MIN : (long) clamp (v, -9.2e18f, 9.2e18f);
#else
  return (long) idx[i];
#endif
}

/* y viewed as [outer, depth, inner]; values = [off, on]; negative indices
 * count from the end when @wrap (opset >= 11). */
__kernel void
onehot (__global const OH_IDX *idx, __global const ELEM *values,
    __global ELEM *y, int n, int depth, int inner, int wrap)
{
  int e = get_global_id (0);

  if (e >= n)
    return;
  int j = e % inner, k = (e / inner) % depth, o = e / (inner * depth);
  long v = onehot_index (idx, o * inner + j);
  if (v < 0 && wrap)
    v += depth;
  y[e] = values[v == k ? 1 : 0];
}
#endif
