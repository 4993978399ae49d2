/* clinfer OpenCL kernels — Resize / Upsample. The host computes the
 * geometry (engine/ops/resize.h, shared with the CPU reference): per dim,
 * the input taps of every output index.
 *
 * resize_nearest moves raw bits (-DELEM=uchar|ushort|uint|ulong): every
 * element type. resize_pass is one separable linear/cubic pass in float,
 * reading half with -DIN_HALF and writing half with -DOUT_HALF. */

#ifdef ELEM
/* y[i] = x[sum_d map[moff_d + c_d]] over the output coordinates c_d; the
 * map holds input offsets (index * stride), negative where the coordinate
 * is extrapolated (tf_crop_and_resize): then y[i] = fill. */
__kernel void
resize_nearest (__global const ELEM *x, __global ELEM *y,
    __global const int *map, int n, int rank, int8 dims, int8 moff,
    ELEM fill)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], mo[8];
  vstore8 (dims, 0, d);
  vstore8 (moff, 0, mo);
  int rem = i, off = 0, ex = 0;
  for (int k = rank - 1; k >= 0; k--) {
    int m = map[mo[k] + rem % d[k]];
    rem /= d[k];
    ex |= m < 0;
    off += m;
  }
  y[i] = ex ? fill : x[off];
}
#endif

#ifdef IN_HALF
#define IN_T half
#define LOAD_IN(p, i) vload_half ((i), (p))
#else
#define IN_T float
#define LOAD_IN(p, i) ((p)[i])
#endif
#ifdef OUT_HALF
#define OUT_T half
#define STORE_OUT(p, i, v) vstore_half ((v), (i), (p))
#else
#define OUT_T float
#define STORE_OUT(p, i, v) ((p)[i] = (v))
#endif

/* x [outer, n_in, inner] -> y [outer, n_out, inner]:
 * y[o, j, k] = sum_t w[j].t * x[o, idx[j].t, k] over @n_taps taps, in tap
 * order as the reference; idx[j].x < 0 marks an extrapolated index. */
__kernel void
resize_pass (__global const IN_T *x, __global OUT_T *y,
    __global const int4 *idx, __global const float4 *w, int n, int n_in,
    int n_out, int inner, int n_taps, float fill)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int k = i % inner, t = i / inner;
  int j = t % n_out, o = t / n_out;
  int4 id = idx[j];
  float4 c = w[j];
  float acc = fill;
  if (id.x >= 0) {
    size_t base = (size_t) o * n_in * inner + k;
    acc = 0.0f;
    acc += c.x * LOAD_IN (x, base + (size_t) id.x * inner);
    acc += c.y * LOAD_IN (x, base + (size_t) id.y * inner);
    if (n_taps == 4) {
      acc += c.z * LOAD_IN (x, base + (size_t) id.z * inner);
      acc += c.w * LOAD_IN (x, base + (size_t) id.w * inner);
    }
  }
  STORE_OUT (y, i, acc);
}
