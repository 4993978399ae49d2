/* clinfer OpenCL kernels — definitions every kernel family starts with.
 *
 * Float kernels are built twice: plain (f32 tensors) and with -DDATA_F16
 * (f16 tensors stored as half). Arithmetic is always in float: half is
 * only loaded and stored (vload_half / vstore_half), so devices without
 * cl_khr_fp16 run f16 models too. Layout kernels move raw bits: built with
 * -DELEM=uchar|ushort|uint|ulong for the element size. */

#ifdef DATA_F16
typedef half data_t;
#define LOAD(p, i) vload_half ((i), (p))
#define STORE(p, i, v) vstore_half ((v), (i), (p))
/* Four consecutive elements from element @i (any alignment). */
#define LOAD4(p, i) vload_half4 (0, (p) + (i))
#define STORE4(p, i, v) vstore_half4 ((v), 0, (p) + (i))
#define LOAD8(p, i) vload_half8 (0, (p) + (i))
#define STORE8(p, i, v) vstore_half8 ((v), 0, (p) + (i))
#define LOAD16(p, i) vload_half16 (0, (p) + (i))
#else
typedef float data_t;
#define LOAD(p, i) ((p)[i])
#define STORE(p, i, v) ((p)[i] = (v))
#define LOAD4(p, i) vload4 (0, (p) + (i))
#define STORE4(p, i, v) vstore4 ((v), 0, (p) + (i))
#define LOAD8(p, i) vload8 (0, (p) + (i))
#define STORE8(p, i, v) vstore8 ((v), 0, (p) + (i))
#define LOAD16(p, i) vload16 (0, (p) + (i))
#endif

/* Activation codes shared with the host (ocl-conv.c, ocl-eltwise.c). */
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_CLIP 2
#define ACT_LEAKY_RELU 3

inline float
apply_activation (float x, int act, float a, float b)
{
  switch (act) {
    case ACT_RELU: return x > 0.0f ? x : 0.0f;
    case ACT_CLIP: return x < a ? a : (x > b ? b : x);
    case ACT_LEAKY_RELU: return x >= 0.0f ? x : a * x;
    default: return x;
  }
}

inline float4
apply_activation4 (float4 x, int act, float a, float b)
{
  switch (act) {
    case ACT_RELU: return fmax (x, (float4) 0.0f);
    case ACT_CLIP: return fmin (fmax (x, (float4) a), (float4) b);
    case ACT_LEAKY_RELU: return select (a * x, x, x >= (float4) 0.0f);
    default: return x;
  }
}

/* Element offset of flat index @i of a tensor of @rank dims @dims, read
 * through element strides @strides (0 for broadcast dims). */
inline int
strided_offset (int i, int rank, const int *dims, const int *strides)
{
  int off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    int c = i % dims[d];
    i /= dims[d];
    off += c * strides[d];
  }
  return off;
}

/* row[i], row[i + 2], ... row[i + 14]: two 8-wide loads (a 16-wide one
 * returns float16, which AVX2 code passes through memory). */
inline float8
load_even8 (__global const data_t *row, int i)
{
  return (float8) (LOAD8 (row, i).even, LOAD8 (row, i + 8).even);
}

/* Eight inputs row[iw + j * s], j = 0..7, zero outside [0, w): one
 * vector load inside the row for strides 1 and 2. 8-wide kernels fill a
 * whole AVX register per work-item on CPU runtimes (PoCL). */
inline float8
load_row8 (__global const data_t *row, int iw, int s, int w)
{
  if (iw >= 0 && s == 1 && iw + 7 < w)
    return LOAD8 (row, iw);
  if (iw >= 0 && s == 2 && iw + 15 < w)
    return load_even8 (row, iw);
  /* At the row edges: eight loads at clamped positions, then zeros
   * outside the row; no branch per element and no private array (CPU
   * compilers kept one in memory). */
  int8 i = (int8) (iw) + (int8) (0, 1, 2, 3, 4, 5, 6, 7) * s;
  int8 c = max (min (i, (int8) (w - 1)), (int8) (0));
  float8 v = (float8) (LOAD (row, c.s0), LOAD (row, c.s1), LOAD (row, c.s2),
      LOAD (row, c.s3), LOAD (row, c.s4), LOAD (row, c.s5), LOAD (row, c.s6),
      LOAD (row, c.s7));
  return select ((float8) 0.0f, v, i >= 0 && i < w);
}

/* load_row8 for a row inside a buffer that holds @before elements before
 * the row's start and @after from it: where the 8 (stride 1) or 16
 * (stride 2) elements from @iw lie in the buffer, one vector load with
 * the lanes outside [0, w) zeroed; scalar loads only at the buffer's
 * ends. */
inline float8
load_row8_masked (__global const data_t *row, int iw, int s, int w,
    long before, long after)
{
  if (s <= 2 && iw >= -before && iw + 8 * s <= after) {
    float8 v = s == 1 ? LOAD8 (row, iw) : load_even8 (row, iw);
    int8 i = (int8) (iw) + (int8) (0, 1, 2, 3, 4, 5, 6, 7) * s;
    return select ((float8) 0.0f, v, i >= 0 && i < w);
  }
  return load_row8 (row, iw, s, w);
}

inline float8
apply_activation8 (float8 v, int act, float a, float b)
{
  switch (act) {
    case ACT_RELU: return fmax (v, (float8) 0.0f);
    case ACT_CLIP: return fmin (fmax (v, (float8) a), (float8) b);
    case ACT_LEAKY_RELU: return select (a * v, v, v >= (float8) 0.0f);
    default: return v;
  }
}
