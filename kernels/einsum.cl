/* clinfer OpenCL kernels — Einsum of up to three operands as one generic
 * kernel: one work-item per output element sums the product of the
 * operands over the summed index space. The host (ocl-einsum.c) lowers
 * the equation to @plan: per output dim, then per summed dim (last
 * fastest), four ints: extent and the element stride of each operand
 * along it (repeated labels add their strides: diagonals; 0 where an
 * operand lacks the label or broadcasts). Built per type:
 * -DT=<element type> -DACC_T=<accumulator>, -DUSE_FP64 for double. */

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void
einsum (__global const T *x0, __global const T *x1, __global const T *x2,
    __global T *y, __constant int *plan, int n_in, int n_out_dims,
    int n_sum_dims, int n, int n_sum)
{
  int o = get_global_id (0);
  if (o >= n)
    return;
  long c0 = 0, c1 = 0, c2 = 0;
  int r = o;
  for (int d = n_out_dims - 1; d >= 0; d--) {
    __constant int *p = plan + 4 * d;
    int v = r % p[0];
    r /= p[0];
    c0 += (long) v * p[1];
    c1 += (long) v * p[2];
    c2 += (long) v * p[3];
  }
  ACC_T acc = 0;
  for (int s = 0; s < n_sum; s++) {
    long d0 = c0, d1 = c1, d2 = c2;
    int q = s;
    for (int d = n_sum_dims - 1; d >= 0; d--) {
      __constant int *p = plan + 4 * (n_out_dims + d);
      int v = q % p[0];
      q /= p[0];
      d0 += (long) v * p[1];
      d1 += (long) v * p[2];
      d2 += (long) v * p[3];
    }
    ACC_T prod = (ACC_T) x0[d0];
    if (n_in > 1)
      prod *= (ACC_T) x1[d1];
    if (n_in > 2)
      prod *= (ACC_T) x2[d2];
    acc += prod;
  }
  y[o] = (T) acc;
}
