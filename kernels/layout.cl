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

/* The same gather, 8 consecutive elements of y's rows of @last elements
 * per work-item (dim 0: column / 8, dim 1: row): the row's offset in x is
 * worked out once (rows indexed by @rank dims @dims, strides @xs) and the
 * 8 elements read @ls apart, so a CPU runtime divides 8 times less and
 * stores 8 elements at once. */
__kernel void
gather_rows8 (__global const ELEM *x, __global ELEM *y, int last, int ls,
    int rank, int8 dims, int8 xs, int base)
{
  int j = get_global_id (0) * 8;
  int r = get_global_id (1);
  if (j >= last)
    return;
  int d[8], st[8];
  vstore8 (dims, 0, d);
  vstore8 (xs, 0, st);
  __global const ELEM *src = x + base + strided_offset (r, rank, d, st)
      + (size_t) j * ls;
  __global ELEM *dst = y + (size_t) r * last + j;
  if (j + 8 <= last && ls == 1) {
    vstore8 (vload8 (0, src), 0, dst);
  } else if (j + 8 <= last) {
    ELEM t[8];
    for (int k = 0; k < 8; k++)
      t[k] = src[k * ls];
    vstore8 (vload8 (0, t), 0, dst);
  } else {
    for (int k = 0; k < last - j; k++)
      dst[k] = src[k * ls];
  }
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

/* copy_block with 8 elements per work-item (dim 0: column / 8). */
__kernel void
copy_block8 (__global const ELEM *x, __global ELEM *y, int outer,
    int inner_x, int inner_y, int offset)
{
  int j = get_global_id (0) * 8;
  int o = get_global_id (1);
  if (j >= inner_x || o >= outer)
    return;
  __global const ELEM *src = x + (size_t) o * inner_x + j;
  __global ELEM *dst = y + (size_t) o * inner_y + offset + j;
  if (j + 8 <= inner_x) {
    vstore8 (vload8 (0, src), 0, dst);
  } else {
    for (int k = 0; k < inner_x - j; k++)
      dst[k] = src[k];
  }
}

/* Where: y = cond ? a : b, all three broadcast to y (rank <= 8). */
__kernel void
where_select (__global const uchar *cond, __global const ELEM *a,
    __global const ELEM *b, __global ELEM *y, int n, int rank, int8 dims,
    int8 sc, int8 sa, int8 sb)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s0[8], s1[8], s2[8];
  vstore8 (dims, 0, d);
  vstore8 (sc, 0, s0);
  vstore8 (sa, 0, s1);
  vstore8 (sb, 0, s2);
  y[i] = cond[strided_offset (i, rank, d, s0)]
      ? a[strided_offset (i, rank, d, s1)] : b[strided_offset (i, rank, d, s2)];
}

/* Trilu over the last two dims [rows, cols]: keeps j - i >= k (upper) or
 * j - i <= k (lower), zeroes the rest; k from @kbuf (int64) or 0. */
__kernel void
trilu (__global const ELEM *x, __global const long *kbuf, __global ELEM *y,
    int n, int rows, int cols, int has_k, int upper)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  long k = has_k ? kbuf[0] : 0;
  long c = i % cols, r = (i / cols) % rows;
  int keep = upper ? c - r >= k : c - r <= k;
  y[i] = keep ? x[i] : (ELEM) 0;
}

/* Pad: y of @dims; x of @xdims read at y - @pb. mode 0 constant (@value
 * bits), 1 edge, 2 reflect. */
__kernel void
pad (__global const ELEM *x, __global ELEM *y, int n, int rank, int8 dims,
    int8 xdims, int8 pb, ELEM value, int mode)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], xd[8], p[8];
  vstore8 (dims, 0, d);
  vstore8 (xdims, 0, xd);
  vstore8 (pb, 0, p);
  int rem = i, off = 0, stride = 1;
  for (int k = rank - 1; k >= 0; k--) {
    int c = rem % d[k] - p[k];
    rem /= d[k];
    if (c < 0 || c >= xd[k]) {
      if (mode == 0) {
        y[i] = value;
        return;
      }
      if (mode == 1)
        c = c < 0 ? 0 : xd[k] - 1;
      else {
        int period = 2 * (xd[k] - 1);
        c = period == 0 ? 0 : abs (c) % period;
        c = c >= xd[k] ? period - c : c;
      }
    }
    off += c * stride;
    stride *= xd[k];
  }
  y[i] = x[off];
}

/* Tile: y of @dims reads x at each coordinate modulo x's @xdims. */
__kernel void
tile (__global const ELEM *x, __global ELEM *y, int n, int rank, int8 dims,
    int8 xdims)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], xd[8];
  vstore8 (dims, 0, d);
  vstore8 (xdims, 0, xd);
  int rem = i, off = 0, stride = 1;
  for (int k = rank - 1; k >= 0; k--) {
    int c = rem % d[k];
    rem /= d[k];
    off += (c % xd[k]) * stride;
    stride *= xd[k];
  }
  y[i] = x[off];
}

#ifdef IDX_T
/* Gather along an axis: y [outer, n_idx, inner] from x [outer, axis,
 * inner]; negative indices count from the end (out of range reads 0). */
__kernel void
gather_axis (__global const ELEM *x, __global const IDX_T *idx,
    __global ELEM *y, int n, int n_idx, int axis_dim, int inner)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int in = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx);
  long k = idx[j];
  if (k < 0)
    k += axis_dim;
  y[i] = k >= 0 && k < axis_dim ? x[((long) o * axis_dim + k) * inner + in]
      : (ELEM) 0;
}

/* GatherElements: y has idx's shape @dims; x strides @xs; the @axis
 * coordinate comes from idx. */
__kernel void
gather_elements (__global const ELEM *x, __global const IDX_T *idx,
    __global ELEM *y, int n, int rank, int8 dims, int8 xs, int axis,
    int axis_dim)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s[8];
  vstore8 (dims, 0, d);
  vstore8 (xs, 0, s);
  int rem = i, off = 0;
  for (int k = rank - 1; k >= 0; k--) {
    int c = rem % d[k];
    rem /= d[k];
    if (k == axis) {
      long v = idx[i];
      c = (int) (v < 0 ? v + axis_dim : v);
      if (c < 0 || c >= axis_dim) {
        y[i] = (ELEM) 0;
        return;
      }
    }
    off += c * s[k];
  }
  y[i] = x[off];
}
#endif
