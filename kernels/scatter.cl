/* clinfer OpenCL kernels — index tuples and scatters: GatherND, ScatterND,
 * ScatterElements (and the legacy Scatter). The output of a scatter starts
 * as a device copy of the data; these kernels then write the updates.
 *
 * Built with -DIDX_T=int|long and -DSC_T=<element type as stored> (raw
 * bits: uchar|ushort|uint|ulong when there is no reduction); reductions
 * add -DRED=1..4 (add, mul, max, min) and, for f16, -DSC_HALF (arithmetic
 * in float as the CPU device does), for bool -DSC_BOOL (add/max = or,
 * mul/min = and). Indices out of range are skipped (GatherND writes 0):
 * the CPU device reports them as errors, a kernel cannot. */

#pragma OPENCL FP_CONTRACT OFF

#ifndef RED
#define RED 0
#endif

#ifdef SC_HALF
typedef half sc_elem;
typedef float sc_acc;
#define SC_LOAD(p, i) vload_half ((i), (p))
#define SC_STORE(p, i, v) vstore_half ((v), (i), (p))
#else
typedef SC_T sc_elem;
typedef SC_T sc_acc;
#define SC_LOAD(p, i) ((p)[i])
#define SC_STORE(p, i, v) ((p)[i] = (v))
#endif

inline void
scatter_apply (__global sc_elem *y, long at, __global const sc_elem *u,
    long from)
{
#if RED == 0
  y[at] = u[from];
#else
  sc_acc a = SC_LOAD (y, at), b = SC_LOAD (u, from), r;
#ifdef SC_BOOL
  r = RED == 1 || RED == 3 ? (a || b) : (a && b);
#elif RED == 1
  r = a + b;
#elif RED == 2
  r = a * b;
#elif defined(SC_HALF) && RED == 3
  r = fmax (a, b);
#elif defined(SC_HALF)
  r = fmin (a, b);
#elif RED == 3
  r = a > b ? a : b;
#else
  r = a < b ? a : b;
#endif
  SC_STORE (y, at, r);
#endif
}

/* Element offset in the data of index tuple @i (@last entries, indexing
 * data dims [batch, batch + last) of @dims with element strides @ds), or
 * -1 when an entry is out of range. */
inline long
tuple_offset (__global const IDX_T *idx, long i, int last, int batch,
    const int *dims, const int *ds)
{
  long off = 0;

  for (int k = 0; k < last; k++) {
    long v = idx[i * last + k], dim = dims[batch + k];
    if (v < 0)
      v += dim;
    if (v < 0 || v >= dim)
      return -1;
    off += v * ds[batch + k];
  }
  return off;
}

#if RED == 0
/* GatherND: y[i * slice + j] = x[tuple offset of i + j]; tuples advance by
 * the data's batch stride (@batch_stride) every @per_batch tuples. */
__kernel void
gather_nd (__global const sc_elem *x, __global const IDX_T *idx,
    __global sc_elem *y, int n, int slice, int last, int batch,
    int per_batch, int batch_stride, int8 dims, int8 strides)
{
  int e = get_global_id (0), d[8], s[8];

  if (e >= n)
    return;
  vstore8 (dims, 0, d);
  vstore8 (strides, 0, s);
  int i = e / slice, j = e % slice;
  long off = tuple_offset (idx, i, last, batch, d, s);
  y[e] = off < 0 ? (sc_elem) 0
      : x[(long) (i / per_batch) * batch_stride + off + j];
}
#endif

/* ScatterND without reduction: one work-item per update element. */
__kernel void
scatter_nd (__global const IDX_T *idx, __global const sc_elem *u,
    __global sc_elem *y, int n, int slice, int last, int8 dims, int8 strides)
{
  int e = get_global_id (0), d[8], s[8];

  if (e >= n)
    return;
  vstore8 (dims, 0, d);
  vstore8 (strides, 0, s);
  long off = tuple_offset (idx, e / slice, last, 0, d, s);
  if (off >= 0)
    scatter_apply (y, off + e % slice, u, e);
}

/* ScatterND with a reduction: one work-item per element of a slice, going
 * through the tuples in order, so duplicate tuples combine in the CPU
 * device's order. */
__kernel void
scatter_nd_reduce (__global const IDX_T *idx, __global const sc_elem *u,
    __global sc_elem *y, int n_tuples, int slice, int last, int8 dims,
    int8 strides)
{
  int j = get_global_id (0), d[8], s[8];

  if (j >= slice)
    return;
  vstore8 (dims, 0, d);
  vstore8 (strides, 0, s);
  for (int i = 0; i < n_tuples; i++) {
    long off = tuple_offset (idx, i, last, 0, d, s);
    if (off >= 0)
      scatter_apply (y, off + j, u, (long) i * slice + j);
  }
}

/* ScatterElements: indices (and updates) of @rank dims @idims; one
 * work-item per line along @axis (updates of different lines never meet),
 * in order along the line, as the CPU device applies them. The data has
 * element strides @ds and extent @axis_dim on the axis. */
__kernel void
scatter_elements (__global const IDX_T *idx, __global const sc_elem *u,
    __global sc_elem *y, int n_lines, int rank, int8 idims, int8 ds, int axis,
    int axis_dim)
{
  int line = get_global_id (0), d[8], s[8], inner = 1;

  if (line >= n_lines)
    return;
  vstore8 (idims, 0, d);
  vstore8 (ds, 0, s);
  for (int a = axis + 1; a < rank; a++)
    inner *= d[a];
  int o = line / inner, j = line % inner, len = d[axis];
  /* Data offset of the line without the axis coordinate. */
  long base = 0;
  int rem = o;
  for (int a = axis - 1; a >= 0; a--) {
    base += (long) (rem % d[a]) * s[a];
    rem /= d[a];
  }
  rem = j;
  for (int a = rank - 1; a > axis; a--) {
    base += (long) (rem % d[a]) * s[a];
    rem /= d[a];
  }
  for (int t = 0; t < len; t++) {
    long at = ((long) o * len + t) * inner + j;
    long v = idx[at];
    if (v < 0)
      v += axis_dim;
    if (v >= 0 && v < axis_dim)
      scatter_apply (y, base + v * s[axis], u, at);
  }
}
