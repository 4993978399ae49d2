/* clinfer OpenCL kernels — moving elements without arithmetic: strided
 * gather (Transpose, Slice, Expand, Split), strided scatter (Concat).
 * Built with -DELEM=uchar|ushort|uint|ulong: elements move as raw bits, so
 * every element type works. Dims and strides (in elements) are int8, rank
 * at most 8; a broadcast dim has stride 0. */

/* y[i] = x[base + sum_d idx_d(i) * xs_d], y contiguous of @dims. */
__kernel void
gather_strided (__global const ELEM *x, __global ELEM *y, int n, int rank,
    int8 dims, int8 xs, int base)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], st[8];
  vstore8 (dims, 0, d);
  vstore8 (xs, 0, st);
  y[i] = x[base + strided_offset (i, rank, d, st)];
}

/* y[base + sum_d idx_d(i) * ys_d] = x[i], x contiguous of @dims. */
__kernel void
scatter_strided (__global const ELEM *x, __global ELEM *y, int n, int rank,
    int8 dims, int8 ys, int base)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], st[8];
  vstore8 (dims, 0, d);
  vstore8 (ys, 0, st);
  y[base + strided_offset (i, rank, d, st)] = x[i];
}

/* Concat of contiguous blocks: x is [outer, inner_x], written at column
 * @offset of y's [outer, inner_y]. */
__kernel void
copy_block (__global const ELEM *x, __global ELEM *y, int outer, int inner_x,
    int inner_y, int offset)
{
  int j = get_global_id (0);
  int o = get_global_id (1);
  if (j >= inner_x || o >= outer)
    return;
  y[(size_t) o * inner_y + offset + j] = x[(size_t) o * inner_x + j];
}
