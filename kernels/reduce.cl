/* clinfer OpenCL kernels — reductions over any set of axes (ReduceSum,
 * Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare) and
 * ArgMax/ArgMin, in float. One work-item per output element: its kept
 * coordinates come from @odims / @os (input strides of the kept dims),
 * the reduced ones from @rdims / @rs. */

#define R_SUM 0
#define R_MEAN 1
#define R_MAX 2
#define R_MIN 3
#define R_PROD 4
#define R_L1 5
#define R_L2 6
#define R_LOGSUM 7
#define R_LOGSUMEXP 8
#define R_SUMSQUARE 9

__kernel void
reduce (__global const data_t *x, __global data_t *y, int n, int orank,
    int8 odims, int8 os, int rrank, int8 rdims, int8 rs, int count, int op)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int od[8], ost[8], rd[8], rst[8];
  vstore8 (odims, 0, od);
  vstore8 (os, 0, ost);
  vstore8 (rdims, 0, rd);
  vstore8 (rs, 0, rst);
  int base = strided_offset (i, orank, od, ost);
  float acc = op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY
      : op == R_PROD ? 1.0f : 0.0f;
  float m = -INFINITY;

  if (op == R_LOGSUMEXP) {
    for (int r = 0; r < count; r++)
      m = fmax (m, LOAD (x, base + strided_offset (r, rrank, rd, rst)));
    if (isinf (m))
      m = 0.0f;
  }
  for (int r = 0; r < count; r++) {
    float v = LOAD (x, base + strided_offset (r, rrank, rd, rst));
    switch (op) {
      case R_MAX: acc = isnan (v) || isnan (acc) ? NAN : fmax (acc, v); break;
      case R_MIN: acc = isnan (v) || isnan (acc) ? NAN : fmin (acc, v); break;
      case R_PROD: acc *= v; break;
      case R_L1: acc += fabs (v); break;
      case R_L2: case R_SUMSQUARE: acc += v * v; break;
      case R_LOGSUMEXP: acc += exp (v - m); break;
      default: acc += v; break;
    }
  }
  switch (op) {
    case R_MEAN: acc = acc / (float) count; break;
    case R_L2: acc = sqrt (acc); break;
    case R_LOGSUM: acc = log (acc); break;
    case R_LOGSUMEXP: acc = log (acc) + m; break;
    default: break;
  }
  STORE (y, i, acc);
}

/* ArgMax (@is_max) / ArgMin along one axis of [outer, n, inner]; the
 * first (or with @last the last) extreme index, as int64. */
__kernel void
arg_extreme (__global const data_t *x, __global long *y, int outer, int n,
    int inner, int is_max, int last)
{
  int i = get_global_id (0);
  if (i >= outer * inner)
    return;
  int o = i / inner, in = i % inner;
  __global const data_t *p = x + (size_t) o * n * inner + in;
  float best = LOAD (p, 0);
  long at = 0;
  for (int k = 1; k < n; k++) {
    float v = LOAD (p, (size_t) k * inner);
    int better = is_max ? (last ? v >= best : v > best)
        : (last ? v <= best : v < best);
    if (better) {
      best = v;
      at = k;
    }
  }
  y[i] = at;
}

#ifdef RED_T
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* The same reductions on f64 and integer tensors (-DRED_T=<stored type>),
 * accumulated as the CPU device does: in double (-DUSE_FP64, where the
 * device has cl_khr_fp64), or for i64/u64 sums, products and extremes in
 * 64-bit integers (-DRED_ACC=long|ulong -DRED_INT_ACC -DRED_LOW=...
 * -DRED_HIGH=...: no NaN, no exp/log/sqrt ops). */
#ifdef RED_INT_ACC
#define R_MAXOP(a, b) max (a, b)
#define R_MINOP(a, b) min (a, b)
#define R_ABS(v) ((v) < 0 ? -(v) : (v))
#else
#define RED_ACC double
#define RED_LOW (-INFINITY)
#define RED_HIGH INFINITY
/* NaN wins and sticks. */
#define R_MAXOP(a, b) (isnan (a) || isnan (b) ? NAN : fmax (a, b))
#define R_MINOP(a, b) (isnan (a) || isnan (b) ? NAN : fmin (a, b))
#define R_ABS(v) fabs (v)
#endif

__kernel void
reduce_typed (__global const RED_T *x, __global RED_T *y, int n, int orank,
    int8 odims, int8 os, int rrank, int8 rdims, int8 rs, int count, int op)
{
  int i = get_global_id (0);
  if (i >= n)
    return;
  int od[8], ost[8], rd[8], rst[8];
  vstore8 (odims, 0, od);
  vstore8 (os, 0, ost);
  vstore8 (rdims, 0, rd);
  vstore8 (rs, 0, rst);
  int base = strided_offset (i, orank, od, ost);
  RED_ACC acc = op == R_MAX ? RED_LOW : op == R_MIN ? RED_HIGH
      : op == R_PROD ? 1 : 0;
#ifndef RED_INT_ACC
  double m = -INFINITY;

  if (op == R_LOGSUMEXP) {
    for (int r = 0; r < count; r++)
      m = fmax (m, (double) x[base + strided_offset (r, rrank, rd, rst)]);
    if (isinf (m))
      m = 0.0;
  }
#endif
  for (int r = 0; r < count; r++) {
    RED_ACC v = x[base + strided_offset (r, rrank, rd, rst)];
    switch (op) {
      case R_MAX: acc = R_MAXOP (acc, v); break;
      case R_MIN: acc = R_MINOP (acc, v); break;
      case R_PROD: acc *= v; break;
      case R_L1: acc += R_ABS (v); break;
      case R_L2: case R_SUMSQUARE: acc += v * v; break;
#ifndef RED_INT_ACC
      case R_LOGSUMEXP: acc += exp (v - m); break;
#endif
      default: acc += v; break;
    }
  }
  switch (op) {
    case R_MEAN: acc = acc / (RED_ACC) count; break;
#ifndef RED_INT_ACC
    case R_L2: acc = sqrt (acc); break;
    case R_LOGSUM: acc = log (acc); break;
    case R_LOGSUMEXP: acc = log (acc) + m; break;
#endif
    default: break;
  }
  y[i] = (RED_T) acc;
}
#endif

#ifdef ARG_T
#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef ARG_FLOAT
#define ARG_ISNAN(v) isnan (v)
#else
#define ARG_ISNAN(v) 0
#endif
/* ArgMax / ArgMin on f64 and integers (-DARG_T=<type>, -DARG_FLOAT for
 * double), compared in that type; a NaN is the extreme (the first one
 * wins), as on the CPU device. */
__kernel void
arg_typed (__global const ARG_T *x, __global long *y, int outer, int n,
    int inner, int is_max, int last)
{
  int i = get_global_id (0);
  if (i >= outer * inner)
    return;
  __global const ARG_T *p = x + (size_t) (i / inner) * n * inner + i % inner;
  ARG_T best = p[0];
  long at = 0;
  for (int k = 1; k < n && !ARG_ISNAN (best); k++) {
    ARG_T v = p[(size_t) k * inner];
    if (ARG_ISNAN (v) || (is_max ? v > best : v < best)
        || (last && v == best)) {
      best = v;
      at = k;
    }
  }
  y[i] = at;
}
#endif
