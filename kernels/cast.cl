/* clinfer OpenCL kernels — Cast between numeric types and bool. Built per
 * pair: -DSRC_T/-DDST_T (stored types), -DSRC_HALF/-DDST_HALF for half
 * storage, -DDST_BOOL (non-zero -> 1), -DUSE_FP64 (double on either side).
 * Float to integer truncates toward zero (as C and ONNX Runtime). */

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void
cast (__global const SRC_T *x, __global DST_T *y, int n)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
#ifdef SRC_HALF
  float v = vload_half (i, x);
#else
  SRC_T v = x[i];
#endif
#if defined (DST_BOOL)
  y[i] = v != 0;
#elif defined (DST_HALF)
  vstore_half ((float) v, i, y);
#else
  y[i] = (DST_T) v;
#endif
}
