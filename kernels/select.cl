/* clinfer OpenCL kernels — selection by value: NonZero and Compress (count,
 * then write, so the output extent is known before the output is written),
 * TopK (the rank of every element of a row), and CumSum along an axis that
 * is read from device memory.
 *
 * Built with -DELEM=uchar|ushort|uint|ulong (elements moved as raw bits).
 * NonZero and Compress read the tested tensor as ELEM; -DNZ_MASK=... masks
 * out the sign bit of float types so -0.0 counts as zero (NaN does not).
 * Counts live in one int buffer: [0] the total, [1 + c] the count of
 * chunk c of SELECT_CHUNK elements (turned into its first output position
 * by select_scan). -DUSE_FP64 for the f64 CumSum. */

#pragma OPENCL FP_CONTRACT OFF
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define SELECT_CHUNK 256

#ifdef NZ_MASK
#define IS_NZ(v) (((v) & (NZ_MASK)) != 0)
#else
#define IS_NZ(v) ((v) != 0)
#endif

/* counts[1 + c] = number of non-zero elements in chunk c of @x[0, n). */
__kernel void
select_count (__global const ELEM *x, __global int *counts, int n)
{
  int c = get_global_id (0);
  int lo = c * SELECT_CHUNK, hi = min (lo + SELECT_CHUNK, n), k = 0;

  if (lo >= n)
    return;
  for (int i = lo; i < hi; i++)
    k += IS_NZ (x[i]);
  counts[1 + c] = k;
}

/* Exclusive scan of the chunk counts (one work-item: a few thousand chunks
 * at most for the tensors a NonZero sees); counts[0] = the total. */
__kernel void
select_scan (__global int *counts, int n_chunks)
{
  int acc = 0;

  if (get_global_id (0) != 0)
    return;
  for (int c = 0; c < n_chunks; c++) {
    int v = counts[1 + c];
    counts[1 + c] = acc;
    acc += v;
  }
  counts[0] = acc;
}

/* NonZero: y is [rank, total] int64, the coordinates of the non-zero
 * elements in row-major order; a scalar gives one row of zeros. */
__kernel void
nonzero_write (__global const ELEM *x, __global const int *counts,
    __global long *y, int n, int rank, int8 dims)
{
  int c = get_global_id (0);
  int lo = c * SELECT_CHUNK, hi = min (lo + SELECT_CHUNK, n);
  int total = counts[0], k, d[8];

  if (lo >= n)
    return;
  vstore8 (dims, 0, d);
  k = counts[1 + c];
  for (int i = lo; i < hi; i++) {
    int rem = i;
    if (!IS_NZ (x[i]))
      continue;
    if (rank == 0)
      y[k] = 0;
    for (int a = rank - 1; a >= 0; a--) {
      y[(long) a * total + k] = rem % d[a];
      rem /= d[a];
    }
    k++;
  }
}

/* Compress: pos[i] = output position of selected element i, else -1. */
__kernel void
select_positions (__global const ELEM *cond, __global const int *counts,
    __global int *pos, int n)
{
  int c = get_global_id (0);
  int lo = c * SELECT_CHUNK, hi = min (lo + SELECT_CHUNK, n), k;

  if (lo >= n)
    return;
  k = counts[1 + c];
  for (int i = lo; i < hi; i++)
    pos[i] = IS_NZ (cond[i]) ? k++ : -1;
}

/* Compress: x viewed as [outer, dim, inner]; the first @m entries along
 * dim have a position; y is [outer, total, inner]. */
__kernel void
compress_copy (__global const ELEM *x, __global const int *pos,
    __global const int *counts, __global ELEM *y, int n, int dim, int inner,
    int m)
{
  int e = get_global_id (0);

  if (e >= n)
    return;
  int j = e % inner, i = (e / inner) % dim, o = e / (inner * dim);
  if (i >= m || pos[i] < 0)
    return;
  y[((long) o * counts[0] + pos[i]) * inner + j] = x[e];
}

/* ---- TopK ---- */

/* Order-preserving unsigned key of element @i (as the CPU device's:
 * -0.0 ties with +0.0, NaN above every number unless its sign is set). */
inline ulong
topk_key (__global const ELEM *x, long i)
{
#if defined(TK_HALF) || defined(TK_FLOAT)
#ifdef TK_HALF
  float f = vload_half (i, (__global const half *) x);
#else
  float f = as_float (x[i]);
#endif
  if (f == 0.0f)
    f = 0.0f;
  uint b = as_uint (f);
  return (b & 0x80000000u) ? (ulong) ~b : (ulong) (b | 0x80000000u);
#elif defined(TK_SIGNED)
  return (ulong) (long) (TK_SIGNED) x[i] ^ 0x8000000000000000UL;
#else
  return (ulong) x[i];
#endif
}

/* One work-item per element of every row (rows = outer * inner, @dim
 * elements along the axis): its rank is the number of elements before it
 * in the order (key, then lower index first); ranks below @k are written,
 * so the output is sorted whatever the 'sorted' attribute says. */
__kernel void
topk_rank (__global const ELEM *x, __global ELEM *vals, __global long *idxs,
    int rows, int dim, int inner, int k, int largest, int has_idx)
{
  int g = get_global_id (0);

  if (g >= rows * dim)
    return;
  int r = g / dim, e = g % dim, o = r / inner, j = r % inner, rank = 0;
  long base = (long) o * dim * inner + j;
  ulong ke = topk_key (x, base + (long) e * inner);
  if (largest)
    ke = ~ke;
  for (int q = 0; q < dim; q++) {
    ulong kq = topk_key (x, base + (long) q * inner);
    if (largest)
      kq = ~kq;
    rank += kq < ke || (kq == ke && q < e);
  }
  if (rank < k) {
    long at = ((long) o * k + rank) * inner + j;
    vals[at] = x[base + (long) e * inner];
    if (has_idx)
      idxs[at] = e;
  }
}

/* ---- CumSum along a run-time axis ---- */

#ifdef CS_T
#ifdef CS_HALF
#define CS_LOAD(p, i) vload_half ((i), (p))
#define CS_STORE(p, i, v) vstore_half ((v), (i), (p))
#else
#define CS_LOAD(p, i) ((p)[i])
#define CS_STORE(p, i, v) ((p)[i] = (v))
#endif

/* The axis (input of type AXIS_T, one element) is read here: x has @rank
 * dims @dims; an axis out of range leaves y untouched (the CPU device
 * reports it). Work-items past outer * inner return. */
__kernel void
cumsum_axis (__global const CS_T *x, __global const AXIS_T *axis_p,
    __global CS_T *y, int rank, int8 dims, int exclusive, int reverse)
{
  int s = get_global_id (0), d[8], outer = 1, n, inner = 1;
  long axis = axis_p[0];

  vstore8 (dims, 0, d);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return;
  for (int a = 0; a < rank; a++) {
    if (a < axis)
      outer *= d[a];
    else if (a > axis)
      inner *= d[a];
  }
  n = d[axis];
  if (s >= outer * inner)
    return;
  size_t base = (size_t) (s / inner) * n * inner + s % inner;
  CS_ACC acc = 0;
  for (int q = 0; q < n; q++) {
    size_t at = base + (size_t) (reverse ? n - 1 - q : q) * inner;
    CS_ACC v = CS_LOAD (x, at);
    if (exclusive) {
      CS_STORE (y, at, acc);
      acc += v;
    } else {
      acc += v;
      CS_STORE (y, at, acc);
    }
  }
}
#endif
