/* clinfer OpenCL kernels — element-wise binary ops with numpy broadcasting
 * and unary ops (activations, math), computed in float. Op codes are
 * shared with the host (engine/devices/opencl/ocl-eltwise.c). */

#define BIN_ADD 0
#define BIN_SUB 1
#define BIN_MUL 2
#define BIN_DIV 3
#define BIN_POW 4
#define BIN_MAX 5
#define BIN_MIN 6
#define BIN_PRELU 7
#define BIN_MEAN 8

inline float
binary_op (int op, float a, float b)
{
  switch (op) {
    case BIN_ADD: return a + b;
    case BIN_SUB: return a - b;
    case BIN_MUL: return a * b;
    case BIN_DIV: return a / b;
    case BIN_POW: return pow (a, b);
    case BIN_MAX: return isnan (a) || isnan (b) ? NAN : fmax (a, b);
    case BIN_MIN: return isnan (a) || isnan (b) ? NAN : fmin (a, b);
    case BIN_PRELU: return a < 0.0f ? a * b : a;
    case BIN_MEAN: return (a + b) * 0.5f;
    default: return 0.0f;
  }
}

/* Same shape, or @b a single element (b_scalar). */
__kernel void
binary_flat (__global const data_t *a, __global const data_t *b,
    __global data_t *y, int n, int op, int b_scalar, int act, float act_a,
    float act_b)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  float v = binary_op (op, LOAD (a, i), LOAD (b, b_scalar ? 0 : i));
  STORE (y, i, apply_activation (v, act, act_a, act_b));
}

/* Broadcast: y of @dims (rank <= 8); a and b read through element strides
 * (0 on broadcast dims). */
__kernel void
binary_broadcast (__global const data_t *a, __global const data_t *b,
    __global data_t *y, int n, int op, int rank, int8 dims, int8 sa, int8 sb)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (sa, 0, s0);
  vstore8 (sb, 0, s1);
  STORE (y, i, binary_op (op, LOAD (a, strided_offset (i, rank, d, s0)),
          LOAD (b, strided_offset (i, rank, d, s1))));
}

#define UN_RELU 0
#define UN_LEAKY 1
#define UN_ELU 2
#define UN_SELU 3
#define UN_CELU 4
#define UN_THRELU 5
#define UN_SIGMOID 6
#define UN_HSIGMOID 7
#define UN_HSWISH 8
#define UN_TANH 9
#define UN_CLIP 10
#define UN_SOFTPLUS 11
#define UN_SOFTSIGN 12
#define UN_MISH 13
#define UN_ERF 14
#define UN_SHRINK 15
#define UN_SIGN 16
#define UN_ABS 17
#define UN_NEG 18
#define UN_RECIP 19
#define UN_FLOOR 20
#define UN_CEIL 21
#define UN_ROUND 22
#define UN_EXP 23
#define UN_LOG 24
#define UN_SQRT 25
#define UN_SIN 26
#define UN_COS 27
#define UN_TAN 28
#define UN_ASIN 29
#define UN_ACOS 30
#define UN_ATAN 31
#define UN_SINH 32
#define UN_COSH 33
#define UN_ASINH 34
#define UN_ACOSH 35
#define UN_ATANH 36
#define UN_IDENTITY 37

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The unary ops in type T (float; double in the f64 builds). */
#define DEFINE_UNARY_OP(NAME, SOFTPLUS, T)                                   \
inline T                                                                     \
SOFTPLUS (T x)                                                               \
{                                                                            \
  return x > (T) 0 ? x + log1p (exp (-x)) : log1p (exp (x));                 \
}                                                                            \
                                                                             \
inline T                                                                     \
NAME (int op, T x, T a, T b)                                                 \
{                                                                            \
  switch (op) {                                                              \
    case UN_RELU: return x > (T) 0 ? x : (T) 0;                              \
    case UN_LEAKY: return x >= (T) 0 ? x : a * x;                            \
    case UN_ELU: return x >= (T) 0 ? x : a * expm1 (x);                      \
    case UN_SELU: return x > (T) 0 ? b * x : b * a * expm1 (x);              \
    case UN_CELU: return x > (T) 0 ? x : a * expm1 (x / a);                  \
    case UN_THRELU: return x > a ? x : (T) 0;                                \
    case UN_SIGMOID: return (T) 1 / ((T) 1 + exp (-x));                      \
    case UN_HSIGMOID: return clamp (a * x + b, (T) 0, (T) 1);                \
    case UN_HSWISH: return x * clamp (x / (T) 6 + (T) 0.5, (T) 0, (T) 1);    \
    case UN_TANH: return tanh (x);                                           \
    case UN_CLIP: return isnan (x) ? x : fmin (fmax (x, a), b);              \
    case UN_SOFTPLUS: return SOFTPLUS (x);                                   \
    case UN_SOFTSIGN: return x / ((T) 1 + fabs (x));                         \
    case UN_MISH: return x * tanh (SOFTPLUS (x));                            \
    case UN_ERF: return erf (x);                                             \
    case UN_SHRINK: return x < -b ? x + a : (x > b ? x - a : (T) 0);         \
    case UN_SIGN: return x > (T) 0 ? (T) 1 : (x < (T) 0 ? (T) -1 : x);       \
    case UN_ABS: return fabs (x);                                            \
    case UN_NEG: return -x;                                                  \
    case UN_RECIP: return (T) 1 / x;                                         \
    case UN_FLOOR: return floor (x);                                         \
    case UN_CEIL: return ceil (x);                                           \
    case UN_ROUND: return rint (x);                                          \
    case UN_EXP: return exp (x);                                             \
    case UN_LOG: return log (x);                                             \
    case UN_SQRT: return sqrt (x);                                           \
    case UN_SIN: return sin (x);                                             \
    case UN_COS: return cos (x);                                             \
    case UN_TAN: return tan (x);                                             \
    case UN_ASIN: return asin (x);                                           \
    case UN_ACOS: return acos (x);                                           \
    case UN_ATAN: return atan (x);                                           \
    case UN_SINH: return sinh (x);                                           \
    case UN_COSH: return cosh (x);                                           \
    case UN_ASINH: return asinh (x);                                         \
    case UN_ACOSH: return acosh (x);                                         \
    case UN_ATANH: return atanh (x);                                         \
    default: return x;                                                       \
  }                                                                          \
}

DEFINE_UNARY_OP (unary_op, softplus, float)

__kernel void
unary (__global const data_t *x, __global data_t *y, int n, int op, float a,
    float b)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  STORE (y, i, unary_op (op, LOAD (x, i), a, b));
}

/* com.clinfer EltwiseChain (engine/ops/eltwise-chain.h): up to 8 ops in
 * a row on one value per work-item, the other operands from x1..x3 (same
 * shape as x0) or constants; one launch instead of one per node. The op
 * codes are ClinferChainOp's; @operands as the node's attribute. The
 * switch is uniform across the work-items, so a GPU does not diverge.
 * The operand is picked with if/else: oclgrind computed a reversed tensor
 * operand as 0 through the equivalent nested ?: and & form. */
__kernel void
ew_chain (__global const data_t *x0, __global const data_t *x1,
    __global const data_t *x2, __global const data_t *x3, __global data_t *y,
    int n, int n_ops, int8 ops8, int8 operands8, float8 a8, float8 b8)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int ops[8], operands[8];
  float av[8], bv[8];
  vstore8 (ops8, 0, ops);
  vstore8 (operands8, 0, operands);
  vstore8 (a8, 0, av);
  vstore8 (b8, 0, bv);
  float v = LOAD (x0, i);

  for (int k = 0; k < n_ops; k++) {
    int s = operands[k] % 16;
    float a = av[k], b = bv[k], t = a, p = v, q;
    if (s == 1)
      t = LOAD (x1, i);
    else if (s == 2)
      t = LOAD (x2, i);
    else if (s == 3)
      t = LOAD (x3, i);
    q = t;
    if (operands[k] >= 16) {
      p = t;
      q = v;
    }
    switch (ops[k]) {
      case 0: v = p + q; break;
      case 1: v = p - q; break;
      case 2: v = p * q; break;
      case 3: v = p / q; break;
      case 4: v = isnan (p) || isnan (q) ? NAN : fmax (p, q); break;
      case 5: v = isnan (p) || isnan (q) ? NAN : fmin (p, q); break;
      case 6: v = v > 0.0f ? v : 0.0f; break;
      case 7: v = v < a ? a : (v > b ? b : v); break;
      case 8: v = 1.0f / (1.0f + exp (-v)); break;
      case 9: v = tanh (v); break;
      case 10: v = v >= 0.0f ? v : a * v; break;
      case 11: v = fmax (0.0f, fmin (1.0f, a * v + b)); break;
      case 12: v = v * fmax (0.0f, fmin (1.0f, v / 6.0f + 0.5f)); break;
      case 13: v = exp (v); break;
      case 14: v = -v; break;
      case 15: v = fabs (v); break;
      case 16: v = sqrt (v); break;
      default: break;
    }
  }
  STORE (y, i, v);
}

/* BatchNormalization (inference) folded on the host into y = x * scale[c]
 * + shift[c] over [outer, channels, inner]. */
__kernel void
channel_affine (__global const data_t *x, __global const float *scale,
    __global const float *shift, __global data_t *y, int n, int channels,
    int inner)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int c = (i / inner) % channels;
  STORE (y, i, LOAD (x, i) * scale[c] + shift[c]);
}

/* Clip-11+ with bounds computed at run time: @lo / @hi hold one element
 * each (absent: no bound). */
__kernel void
clip_tensor (__global const data_t *x, __global const data_t *lo,
    __global const data_t *hi, __global data_t *y, int n, int has_lo,
    int has_hi)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  float v = LOAD (x, i);
  if (!isnan (v)) {
    if (has_lo)
      v = fmax (v, LOAD (lo, 0));
    if (has_hi)
      v = fmin (v, LOAD (hi, 0));
  }
  STORE (y, i, v);
}

/* IsNaN (kind 0) and IsInf (kind 1, @neg / @pos select the signs): bool
 * output. */
__kernel void
classify (__global const data_t *x, __global uchar *y, int n, int kind,
    int neg, int pos)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  float v = LOAD (x, i);
  y[i] = kind == 0 ? isnan (v) != 0
      : isinf (v) && (v > 0.0f ? pos : neg);
}

#ifdef EXP_T
/* Pow with an exponent of another element type (EXP_T), broadcast. */
__kernel void
pow_mixed (__global const data_t *a, __global const EXP_T *b,
    __global data_t *y, int n, int rank, int8 dims, int8 sa, int8 sb)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int d[8], s0[8], s1[8];
  vstore8 (dims, 0, d);
  vstore8 (sa, 0, s0);
  vstore8 (sb, 0, s1);
  STORE (y, i, pow (LOAD (a, strided_offset (i, rank, d, s0)),
          (float) b[strided_offset (i, rank, d, s1)]));
}
#endif

#ifdef U_T
#ifdef U_FLOAT
DEFINE_UNARY_OP (unary_op_typed, softplus_typed, U_T)

/* The unary ops on f64 (-DU_T=double -DU_FLOAT -DUSE_FP64), computed in
 * double. */
__kernel void
unary_typed (__global const U_T *x, __global U_T *y, int n, int op, float a,
    float b)
{
  int i = get_global_id (0);
  if (i < n)
    y[i] = unary_op_typed (op, x[i], (U_T) a, (U_T) b);
}

/* IsNaN / IsInf on f64, as classify. */
__kernel void
classify_typed (__global const U_T *x, __global uchar *y, int n, int kind,
    int neg, int pos)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  U_T v = x[i];
  y[i] = kind == 0 ? isnan (v) != 0 : isinf (v) && (v > 0 ? pos : neg);
}
#else
/* Relu, Abs, Neg, Sign and Shrink on integers (-DU_T=<type>, -DU_UNSIGNED
 * for unsigned ones); Shrink's bias @a and lambd @b as integers. Negation
 * wraps as the CPU device's. */
__kernel void
unary_typed (__global const U_T *x, __global U_T *y, int n, int op, float a,
    float b)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  U_T v = x[i], bias = (U_T) a, lambd = (U_T) b, r;
  switch (op) {
    case UN_RELU: r = v > 0 ? v : 0; break;
#ifdef U_UNSIGNED
    case UN_SIGN: r = v > 0 ? 1 : 0; break;
    case UN_ABS: r = v; break;
    case UN_SHRINK: r = v > lambd ? v - bias : 0; break;
#else
    case UN_SIGN: r = v > 0 ? 1 : (v < 0 ? -1 : 0); break;
    case UN_ABS: r = v < 0 ? (U_T) (0 - (ulong) v) : v; break;
    case UN_SHRINK:
      r = (long) v < -(long) lambd ? v + bias : (v > lambd ? v - bias : 0);
      break;
#endif
    case UN_NEG: r = (U_T) (0 - (ulong) v); break;
    default: r = v; break;
  }
  y[i] = r;
}
#endif
#endif
