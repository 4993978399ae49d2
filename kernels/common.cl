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

/* Eight inputs row[iw + j * s], j = 0..7, zero outside [0, w): one
 * vector load inside the row for strides 1 and 2. 8-wide kernels fill a
 * whole AVX register per work-item on CPU runtimes (PoCL). */
inline float8
load_row8 (__global const data_t *row, int iw, int s, int w)
{
  if (iw >= 0 && s == 1 && iw + 7 < w)
    return LOAD8 (row, iw);
  if (iw >= 0 && s == 2 && iw + 15 < w) {
    return LOAD16 (row, iw).even;
  }
  float t[8];
  for (int j = 0; j < 8; j++) {
    int i = iw + j * s;
    t[j] = i >= 0 && i < w ? LOAD (row, i) : 0.0f;
  }
  return vload8 (0, t);
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
