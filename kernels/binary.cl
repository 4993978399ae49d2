/* clinfer OpenCL kernels — typed binary ops with numpy broadcasting for
 * every numeric type (integer arithmetic, Mod, BitShift, comparisons,
 * logical ops), Not, and Where. Float arithmetic on f32/f16 lives in
 * eltwise.cl; this family is built per type:
 *   -DA_T=<stored input type> -DC_T=<compute type> -DY_T=<stored output>
 *   -DC_FLOAT (float compute), -DA_HALF / -DY_HALF (half storage),
 *   -DC_UNSIGNED (unsigned compute), -DUSE_FP64 (double on either side:
 *   only built where the device has cl_khr_fp64), -DB_T=<exponent type>
 *   -DP_T=<compute type> for Pow of mixed types.
 * Op codes are shared with engine/devices/opencl/ocl-binary.c. */

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifdef A_HALF
#define LOAD_A(p, i) vload_half ((i), (p))
#else
#define LOAD_A(p, i) ((C_T) (p)[i])
#endif
#ifdef Y_HALF
#define STORE_Y(p, i, v) vstore_half ((float) (v), (i), (p))
#else
#define STORE_Y(p, i, v) ((p)[i] = (Y_T) (v))
#endif

#define OP_ADD 0
#define OP_SUB 1
#define OP_MUL 2
#define OP_DIV 3
#define OP_MAX 4
#define OP_MIN 5
#define OP_MOD 6              /* sign of the divisor (Python) */
#define OP_FMOD 7             /* sign of the dividend (C) */
#define OP_EQ 8
#define OP_LT 9
#define OP_GT 10
#define OP_LE 11
#define OP_GE 12
#define OP_AND 13
#define OP_OR 14
#define OP_XOR 15
#define OP_SHL 16
#define OP_SHR 17
#define OP_POW 18
#define OP_PRELU 19

#ifndef C_FLOAT
/* Integer power by squaring; negative exponents as the truncated real
 * result (0 unless the base is 1 or -1). */
inline C_T
int_pow (C_T a, C_T b)
{
  C_T r = 1;
#ifndef C_UNSIGNED
  if (b < 0)
    return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
#endif
  while (b > 0) {
    if (b & 1)
      r *= a;
    a *= a;
    b >>= 1;
  }
  return r;
}
#endif

inline C_T
typed_op (int op, C_T a, C_T b)
{
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
#ifdef C_FLOAT
    case OP_DIV: return a / b;
    case OP_MAX: return isnan (a) || isnan (b) ? NAN : fmax (a, b);
    case OP_MIN: return isnan (a) || isnan (b) ? NAN : fmin (a, b);
    case OP_MOD:
    case OP_FMOD: return fmod (a, b);
    case OP_POW: return pow (a, b);
#else
    case OP_POW: return int_pow (a, b);
    /* Integer division by zero gives 0 instead of trapping. */
    case OP_DIV: return b == 0 ? 0 : a / b;
    case OP_MAX: return a > b ? a : b;
    case OP_MIN: return a < b ? a : b;
    case OP_FMOD: return b == 0 ? 0 : a % b;
    case OP_MOD: {
      C_T r = b == 0 ? 0 : a % b;
#ifndef C_UNSIGNED
      if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
#endif
      return r;
    }
    case OP_SHL: return b >= (C_T) (8 * sizeof (C_T)) ? 0 : a << b;
    case OP_SHR: return b >= (C_T) (8 * sizeof (C_T)) ? 0 : a >> b;
#endif
    case OP_PRELU: return a < 0 ? a * b : a;
    case OP_EQ: return a == b;
    case OP_LT: return a < b;
    case OP_GT: return a > b;
    case OP_LE: return a <= b;
    case OP_GE: return a >= b;
    case OP_AND: return a != 0 && b != 0;
    case OP_OR: return a != 0 || b != 0;
    case OP_XOR: return (a != 0) != (b != 0);
    default: return 0;
  }
}

__kernel void
binary_typed (__global const A_T *a, __global const A_T *b, __global Y_T *y,
    int n, int op, int rank, int8 dims, int8 sa, int8 sb)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (sa, 0, s0);
  vstore8 (sb, 0, s1);
  STORE_Y (y, i, typed_op (op, LOAD_A (a, strided_offset (i, rank, d, s0)),
          LOAD_A (b, strided_offset (i, rank, d, s1))));
}

/* y *= @s in place (Mean of more than two inputs after the sums). */
#ifdef C_FLOAT
__kernel void
scale_typed (__global Y_T *y, int n, float s)
{
  int i = get_global_id (0);
  if (i < n)
    STORE_Y (y, i, (C_T) LOAD_A (y, i) * (C_T) s);
}
#endif

/* Clip on any numeric type: @lo / @hi hold one element each (absent: no
 * bound). */
__kernel void
clip_typed (__global const A_T *x, __global const A_T *lo,
    __global const A_T *hi, __global Y_T *y, int n, int has_lo, int has_hi)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  C_T v = LOAD_A (x, i);
#ifdef C_FLOAT
  if (isnan (v)) {
    STORE_Y (y, i, v);
    return;
  }
#endif
  if (has_lo && v < LOAD_A (lo, 0))
    v = LOAD_A (lo, 0);
  if (has_hi && v > LOAD_A (hi, 0))
    v = LOAD_A (hi, 0);
  STORE_Y (y, i, v);
}

#ifdef B_T
/* Pow of an A_T base and a B_T exponent computed in P_T, broadcast. */
__kernel void
pow_typed (__global const A_T *a, __global const B_T *b, __global Y_T *y,
    int n, int rank, int8 dims, int8 sa, int8 sb)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (sa, 0, s0);
  vstore8 (sb, 0, s1);
  P_T v = pow ((P_T) LOAD_A (a, strided_offset (i, rank, d, s0)),
      (P_T) b[strided_offset (i, rank, d, s1)]);
  STORE_Y (y, i, v);
}
#endif

/* Dropout-12+ whose training_mode (and ratio) are read at run time: in
 * training, element i is kept when @draws[i] (a uniform 53-bit integer
 * drawn on the host from the seed attribute, the CPU device's sequence)
 * is at least ratio * 2^53, and scaled by 1 / (1 - ratio); the bool mask
 * goes to @mask when @has_mask. Float types only. */
#ifdef C_FLOAT
__kernel void
dropout_train (__global const A_T *x, __global const A_T *ratio,
    __global const uchar *training, __global const ulong *draws,
    __global Y_T *y, __global uchar *mask, int n, int has_ratio,
    int has_mask)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  float r = has_ratio ? (float) LOAD_A (ratio, 0) : 0.5f;
  C_T v = LOAD_A (x, i);
  int keep = 1;
  if (training[0] && r != 0.0f) {
    /* Exact: scaling a float by a power of two. A ratio outside [0, 1]
     * (an error on the CPU device; a kernel cannot report one) is
     * clamped. */
    keep = r >= 1.0f ? 0
        : draws[i] >= (ulong) ceil (fmax (r, 0.0f) * 9007199254740992.0f);
    v = keep ? v * (C_T) (r < 1.0f ? 1.0f / (1.0f - r) : 0.0f) : (C_T) 0;
  }
  STORE_Y (y, i, v);
  if (has_mask)
    mask[i] = keep;
}
#endif

/* Not on bool. */
__kernel void
logical_not (__global const uchar *x, __global uchar *y, int n)
{
  int i = get_global_id (0);
  if (i < n)
    y[i] = !x[i];
}

/* CumSum along the middle axis of [outer, n, inner], optionally exclusive
 * and/or reversed; accumulates in C_T. */
__kernel void
cumsum (__global const A_T *x, __global Y_T *y, int outer, int n, int inner,
    int exclusive, int reverse)
{
  int s = get_global_id (0);
  if (s >= outer * inner)
    return;
  size_t base = (size_t) (s / inner) * n * inner + s % inner;
  C_T acc = 0;
  for (int q = 0; q < n; q++) {
    size_t at = base + (size_t) (reverse ? n - 1 - q : q) * inner;
    C_T v = LOAD_A (x, at);
    if (exclusive) {
      STORE_Y (y, at, acc);
      acc += v;
    } else {
      acc += v;
      STORE_Y (y, at, acc);
    }
  }
}

/* Fills bool @y with true (Dropout's mask outside training). */
__kernel void
fill_true (__global uchar *y, int n)
{
  int i = get_global_id (0);
  if (i < n)
    y[i] = 1;
}
