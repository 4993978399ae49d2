/* clinfer — unary activations and math functions (Relu .. Atanh, IsNaN,
 * IsInf, Clip) and Dropout; one switch outside each loop. */
#include "ops/op.h"
#include <float.h>
#include <string.h>
#include <math.h>

#define PAR_MIN 32768

typedef enum {
  U_RELU, U_LEAKY, U_ELU, U_SELU, U_CELU, U_THRELU, U_SIGMOID, U_HSIGMOID,
  U_HSWISH, U_TANH, U_CLIP, U_SOFTPLUS, U_SOFTSIGN, U_MISH, U_ERF, U_SHRINK,
  U_SIGN, U_ABS, U_NEG, U_RECIP, U_FLOOR, U_CEIL, U_ROUND, U_EXP, U_LOG,
  U_SQRT, U_SIN, U_COS, U_TAN, U_ASIN, U_ACOS, U_ATAN, U_SINH, U_COSH,
  U_ASINH, U_ACOSH, U_ATANH, U_ISNAN, U_ISINF, U_SWISH,
} UnaryKind;

typedef enum {
  TY_FLOAT,                  /* floating-point types only */
  TY_SIGNED,                 /* floats and signed integers */
  TY_NUMERIC,                /* floats and all integers */
} TypeClass;

typedef struct {
  const char *name;
  UnaryKind kind;
  TypeClass types;
  const char *a_name;        /* float attributes: alpha/beta/... */
  float a_def;
  const char *b_name;
  float b_def;
} UnaryInfo;

static const UnaryInfo unary_table[] = {
  { "Relu", U_RELU, TY_SIGNED },
  { "LeakyRelu", U_LEAKY, TY_FLOAT, "alpha", 0.01f },
  { "Elu", U_ELU, TY_FLOAT, "alpha", 1.f },
  { "Selu", U_SELU, TY_FLOAT, "alpha", 1.67326319217681884765625f,
    "gamma", 1.05070102214813232421875f },
  { "Celu", U_CELU, TY_FLOAT, "alpha", 1.f },
  { "ThresholdedRelu", U_THRELU, TY_FLOAT, "alpha", 1.f },
  { "Sigmoid", U_SIGMOID, TY_FLOAT },
  { "HardSigmoid", U_HSIGMOID, TY_FLOAT, "alpha", 0.2f, "beta", 0.5f },
  { "HardSwish", U_HSWISH, TY_FLOAT },
  /* com.clinfer Swish (pass fuse-swish): x * Sigmoid (x) */
  { "Swish", U_SWISH, TY_FLOAT },
  { "Tanh", U_TANH, TY_FLOAT },
  { "Clip", U_CLIP, TY_NUMERIC, "min", -FLT_MAX, "max", FLT_MAX },
  { "Softplus", U_SOFTPLUS, TY_FLOAT },
  { "Softsign", U_SOFTSIGN, TY_FLOAT },
  { "Mish", U_MISH, TY_FLOAT },
  { "Erf", U_ERF, TY_FLOAT },
  { "Shrink", U_SHRINK, TY_NUMERIC, "bias", 0.f, "lambd", 0.5f },
  { "Sign", U_SIGN, TY_NUMERIC },
  { "Abs", U_ABS, TY_NUMERIC },
  { "Neg", U_NEG, TY_SIGNED },
  { "Reciprocal", U_RECIP, TY_FLOAT },
  { "Floor", U_FLOOR, TY_FLOAT },
  { "Ceil", U_CEIL, TY_FLOAT },
  { "Round", U_ROUND, TY_FLOAT },
  { "Exp", U_EXP, TY_FLOAT },
  { "Log", U_LOG, TY_FLOAT },
  { "Sqrt", U_SQRT, TY_FLOAT },
  { "Sin", U_SIN, TY_FLOAT },
  { "Cos", U_COS, TY_FLOAT },
  { "Tan", U_TAN, TY_FLOAT },
  { "Asin", U_ASIN, TY_FLOAT },
  { "Acos", U_ACOS, TY_FLOAT },
  { "Atan", U_ATAN, TY_FLOAT },
  { "Sinh", U_SINH, TY_FLOAT },
  { "Cosh", U_COSH, TY_FLOAT },
  { "Asinh", U_ASINH, TY_FLOAT },
  { "Acosh", U_ACOSH, TY_FLOAT },
  { "Atanh", U_ATANH, TY_FLOAT },
  { "IsNaN", U_ISNAN, TY_FLOAT },
  { "IsInf", U_ISINF, TY_FLOAT },
};

static const UnaryInfo clip_inputs_info = { "Clip", U_CLIP, TY_NUMERIC };

typedef struct {
  UnaryKind kind;
  TypeClass types;
  float a, b;                /* parsed float attributes */
  gboolean inf_neg, inf_pos; /* IsInf */
} UnaryData;

static gboolean
prepare_unary (ClinferNode *node, GError **error)
{
  g_autofree UnaryData *d = g_new0 (UnaryData, 1);
  const UnaryInfo *info = NULL;
  int64_t neg = 1, pos = 1;

  for (gsize i = 0; i < G_N_ELEMENTS (unary_table); i++)
    if (strcmp (node->op_type, unary_table[i].name) == 0)
      info = &unary_table[i];
  if (info == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
        "%s: not a unary op", clinfer_node_label (node));
    return FALSE;
  }
  d->kind = info->kind;
  d->types = info->types;
  d->a = info->a_def;
  d->b = info->b_def;
  /* Clip-11+ takes its bounds as inputs. */
  if (d->kind == U_CLIP && node->opset >= 11)
    info = &clip_inputs_info;
  if ((info->a_name && !clinfer_node_attr_float (node, info->a_name,
              info->a_def, &d->a, error))
      || (info->b_name && !clinfer_node_attr_float (node, info->b_name,
              info->b_def, &d->b, error))
      || (d->kind == U_ISINF && (!clinfer_node_attr_int (node,
                  "detect_negative", 1, &neg, error)
              || !clinfer_node_attr_int (node, "detect_positive", 1, &pos,
                  error))))
    return FALSE;
  if (d->kind == U_CELU && d->a == 0.f) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'alpha' must not be 0", clinfer_node_label (node));
    return FALSE;
  }
  d->inf_neg = neg != 0;
  d->inf_pos = pos != 0;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
unary_type_ok (const UnaryData *d, ClinferElementType t)
{
  if (clinfer_element_type_is_float (t))
    return TRUE;
  if (d->kind == U_ISNAN || d->kind == U_ISINF)
    return FALSE;
  if (clinfer_op_type_is_signed_int (t))
    return d->types != TY_FLOAT;
  return clinfer_op_type_is_unsigned_int (t) && d->types == TY_NUMERIC;
}

static gboolean
infer_unary (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const UnaryData *d = node->op_data;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (!unary_type_ok (d, in[0].type))
    return clinfer_op_unsupported_type (node, in[0].type, error);
  for (guint i = 1; i < node->n_inputs; i++) {
    if (!in[i].present)
      continue;
    if (in[i].type != in[0].type) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
          "%s: input %u is %s but input 0 is %s", clinfer_node_label (node), i,
          clinfer_element_type_name (in[i].type),
          clinfer_element_type_name (in[0].type));
      return FALSE;
    }
    if (in[i].shape.rank > 1 || (in[i].shape.rank == 1 && in[i].shape.dims[0] > 1)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input %u must be a scalar", clinfer_node_label (node), i);
      return FALSE;
    }
  }
  out[0].type = (d->kind == U_ISNAN || d->kind == U_ISINF) ? CLINFER_TYPE_BOOL
      : in[0].type;
  out[0].shape = in[0].shape;
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Float kernels (f32 and f64)                                       */

#define CHUNK 16384

/* Plain loops over locals (OpenMP splits the tensor into chunks around
 * them, so they vectorise). */
#define UN_LOOP(T, TO, EXPR)                                                 \
  do {                                                                       \
    for (int64_t i = 0; i < n; i++) {                                        \
      T x = p[i];                                                            \
      q[i] = (TO) (EXPR);                                                    \
    }                                                                        \
  } while (0)

/* f32 Sigmoid and Tanh avoid libm so they vectorise: a Cephes expf
 * polynomial (about 1 ulp) whose 2^n scale comes from the bits of the
 * rounding magic number. Each block first clamps the exp argument into a
 * buffer (a clamp feeding arithmetic in the same loop is not if-converted
 * under -ftrapping-math), then evaluates. NaN propagates. */
#define SUB 1024

static inline float
clamp_exp_arg (float x)
{
  x = x < -87.3f ? -87.3f : x;
  return x > 88.3f ? 88.3f : x;
}

/* exp (@x) for @x in [-87.3, 88.3] (or NaN). */
static inline float
vexpf (float x)
{
  float t = x * 1.44269504088896341f + 12582912.f, n, r, y, s;
  uint32_t tb, e;

  memcpy (&tb, &t, sizeof (tb));
  n = t - 12582912.f;
  r = x - n * 0.693359375f + n * 2.12194440e-4f;
  y = 1.9875691500E-4f;
  y = y * r + 1.3981999507E-3f;
  y = y * r + 8.3334519073E-3f;
  y = y * r + 4.1665795894E-2f;
  y = y * r + 1.6666665459E-1f;
  y = y * r + 5.0000001201E-1f;
  y = y * r * r + r + 1.f;
  e = (tb - 0x4B400000u + 127u) << 23;
  memcpy (&s, &e, sizeof (s));
  return y * s;
}

/* 1 / (1 + exp (-x)) (Sigmoid), or x times it (Swish: the fused node
 * gives what the Mul (x, Sigmoid (x)) it replaces gave, -inf at -inf
 * too) when @times_x; @q may be @p. */
static void
sigmoid_f32 (const float *p, float *q, int64_t n, gboolean times_x)
{
  float t[SUB];

  for (int64_t i0 = 0; i0 < n; i0 += SUB) {
    int64_t m = MIN (SUB, n - i0);
    for (int64_t i = 0; i < m; i++)
      t[i] = clamp_exp_arg (-p[i0 + i]);
    for (int64_t i = 0; i < m; i++)
      q[i0 + i] = (times_x ? p[i0 + i] : 1.f) * (1.f / (1.f + vexpf (t[i])));
  }
}

/* (c ? a : b) through the bits: no branch for the compiler to sink the
 * computation of a or b into. */
static inline float
bit_select (int c, float a, float b)
{
  uint32_t ua, ub, m = 0u - (uint32_t) c, r;
  float f;

  memcpy (&ua, &a, sizeof (ua));
  memcpy (&ub, &b, sizeof (ub));
  r = (ua & m) | (ub & ~m);
  memcpy (&f, &r, sizeof (f));
  return f;
}

/* Odd polynomial near 0 (Cephes tanhf), 1 - 2 / (exp (2|x|) + 1) beyond. */
static void
tanh_f32 (const float *p, float *q, int64_t n)
{
  float t[SUB];

  for (int64_t i0 = 0; i0 < n; i0 += SUB) {
    int64_t m = MIN (SUB, n - i0);
    for (int64_t i = 0; i < m; i++)
      t[i] = clamp_exp_arg (2.f * fabsf (p[i0 + i]));
    for (int64_t i = 0; i < m; i++) {
      float x = p[i0 + i], ax = fabsf (x), z = x * x, small, big;
      small = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z
                      - 5.37397155531E-2f) * z + 1.33314422036E-1f) * z
              - 3.33332819422E-1f) * z * ax + ax;
      big = 1.f - 2.f / (vexpf (t[i]) + 1.f);
      q[i0 + i] = copysignf (bit_select (ax >= 0.625f, big, small), x);
    }
  }
}

/* MF (T, exp) is expf for float, exp for double. */
#define MF(T, f) MF_##T (f)
#define MF_float(fn) fn##f
#define MF_double(fn) fn
#define FABS_float fabsf
#define FABS_double fabs
#define SIGMOID_float sigmoid_f32 (p, q, n, FALSE)
#define SIGMOID_double UN_LOOP (double, double, 1.0 / (1.0 + exp (-x)))
#define SWISH_float sigmoid_f32 (p, q, n, TRUE)
#define SWISH_double UN_LOOP (double, double, x * (1.0 / (1.0 + exp (-x))))
#define TANH_float tanh_f32 (p, q, n)
#define TANH_double UN_LOOP (double, double, tanh (x))

/* Two unconditional selects (if-convertible, so the loops vectorise);
 * NaN passes through. */
static inline float
clamp_float (float v, float lo, float hi)
{
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

static inline double
clamp_double (double v, double lo, double hi)
{
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

#define CLAMP01(T, v) clamp_##T (v, zero, one)

#define UN_F(T)                                                              \
  static void                                                                \
  unary_range_##T (UnaryKind kind, T a, T b, const T *p, T *q, int64_t n,    \
      T lo, T hi)                                                            \
  {                                                                          \
    const T zero = 0, one = 1;                                               \
                                                                             \
    switch (kind) {                                                          \
      case U_RELU: UN_LOOP (T, T, x > zero ? x : zero); break;               \
      case U_LEAKY: UN_LOOP (T, T, x >= zero ? x : a * x); break;            \
      case U_ELU: UN_LOOP (T, T, x >= zero ? x : a * MF (T, expm1) (x)); break; \
      case U_SELU:                                                           \
        UN_LOOP (T, T, x > zero ? b * x : b * a * MF (T, expm1) (x)); break; \
      case U_CELU: UN_LOOP (T, T, x > zero ? x : a * MF (T, expm1) (x / a)); break; \
      case U_THRELU: UN_LOOP (T, T, x > a ? x : zero); break;                \
      case U_SIGMOID: SIGMOID_##T; break;                                    \
      case U_HSIGMOID: UN_LOOP (T, T, CLAMP01 (T, a * x + b)); break;        \
      case U_HSWISH: UN_LOOP (T, T, x * CLAMP01 (T, x / (T) 6 + (T) 0.5)); break; \
      case U_SWISH: SWISH_##T; break;                                        \
      case U_TANH: TANH_##T; break;                                          \
      case U_CLIP: UN_LOOP (T, T, clamp_##T (x, lo, hi)); break;             \
      case U_SOFTPLUS: UN_LOOP (T, T, SOFTPLUS (T, x)); break;               \
      case U_SOFTSIGN: UN_LOOP (T, T, x / (one + FABS_##T (x))); break;      \
      case U_MISH: UN_LOOP (T, T, x * MF (T, tanh) (SOFTPLUS (T, x))); break; \
      case U_ERF: UN_LOOP (T, T, MF (T, erf) (x)); break;                    \
      case U_SHRINK: UN_LOOP (T, T, x < -b ? x + a : (x > b ? x - a : zero)); break; \
      case U_SIGN: UN_LOOP (T, T, x > zero ? one : (x < zero ? -one : x)); break; \
      case U_ABS: UN_LOOP (T, T, FABS_##T (x)); break;                       \
      case U_NEG: UN_LOOP (T, T, -x); break;                                 \
      case U_RECIP: UN_LOOP (T, T, one / x); break;                          \
      case U_FLOOR: UN_LOOP (T, T, MF (T, floor) (x)); break;                \
      case U_CEIL: UN_LOOP (T, T, MF (T, ceil) (x)); break;                  \
      case U_ROUND: UN_LOOP (T, T, MF (T, nearbyint) (x)); break;            \
      case U_EXP: UN_LOOP (T, T, MF (T, exp) (x)); break;                    \
      case U_LOG: UN_LOOP (T, T, MF (T, log) (x)); break;                    \
      case U_SQRT: UN_LOOP (T, T, MF (T, sqrt) (x)); break;                  \
      case U_SIN: UN_LOOP (T, T, MF (T, sin) (x)); break;                    \
      case U_COS: UN_LOOP (T, T, MF (T, cos) (x)); break;                    \
      case U_TAN: UN_LOOP (T, T, MF (T, tan) (x)); break;                    \
      case U_ASIN: UN_LOOP (T, T, MF (T, asin) (x)); break;                  \
      case U_ACOS: UN_LOOP (T, T, MF (T, acos) (x)); break;                  \
      case U_ATAN: UN_LOOP (T, T, MF (T, atan) (x)); break;                  \
      case U_SINH: UN_LOOP (T, T, MF (T, sinh) (x)); break;                  \
      case U_COSH: UN_LOOP (T, T, MF (T, cosh) (x)); break;                  \
      case U_ASINH: UN_LOOP (T, T, MF (T, asinh) (x)); break;                \
      case U_ACOSH: UN_LOOP (T, T, MF (T, acosh) (x)); break;                \
      case U_ATANH: UN_LOOP (T, T, MF (T, atanh) (x)); break;                \
      case U_ISNAN: case U_ISINF: break;                                     \
    }                                                                        \
  }                                                                          \
                                                                             \
  static void                                                                \
  unary_##T (const UnaryData *d, const T *p, T *q, int64_t n, T lo, T hi)    \
  {                                                                          \
    int64_t chunks = (n + CHUNK - 1) / CHUNK;                                \
                                                                             \
    _Pragma ("omp parallel for schedule(static) if (n > PAR_MIN)")           \
    for (int64_t c = 0; c < chunks; c++)                                     \
      unary_range_##T (d->kind, (T) d->a, (T) d->b, p + c * CHUNK,           \
          q + c * CHUNK, MIN (CHUNK, n - c * CHUNK), lo, hi);                \
  }

/* Overflow-free log (1 + exp (x)). */
#define SOFTPLUS(T, x) ((x) > zero ? (x) + MF (T, log1p) (MF (T, exp) (-(x))) \
    : MF (T, log1p) (MF (T, exp) (x)))

UN_F (float)
UN_F (double)

/* IsNaN / IsInf on f32 or f64 values, bool output. */
#define UN_CLASSIFY(T)                                                       \
  static void                                                                \
  classify_##T (const UnaryData *d, const T *p, uint8_t *q, int64_t n)       \
  {                                                                          \
    if (d->kind == U_ISNAN) {                                                \
      for (int64_t i = 0; i < n; i++)                                        \
        q[i] = isnan (p[i]) ? 1 : 0;                                         \
    } else {                                                                 \
      for (int64_t i = 0; i < n; i++)                                        \
        q[i] = isinf (p[i]) && (p[i] > 0 ? d->inf_pos : d->inf_neg);         \
    }                                                                        \
  }

UN_CLASSIFY (float)
UN_CLASSIFY (double)

/* ---------------------------------------------------------------- */
/* Integer kernels: Relu, Clip, Shrink, Sign, Abs, Neg               */

#define UN_INT(T, K, TMIN, TMAX)                                             \
  static void                                                                \
  unary_int_##T (const UnaryData *d, const T *p, T *q, int64_t n, int64_t lo64, \
      int64_t hi64, gboolean has_lo, gboolean has_hi)                        \
  {                                                                          \
    const T lo = (double) lo64 <= (double) TMIN ? TMIN : (T) lo64;           \
    const T hi = (double) hi64 >= (double) TMAX ? TMAX : (T) hi64;           \
    const T bias = (T) d->a, lambd = (T) d->b;                               \
                                                                             \
    switch (d->kind) {                                                       \
      case U_RELU: UN_LOOP (T, T, x > 0 ? x : 0); break;                     \
      case U_CLIP:                                                           \
        UN_LOOP (T, T, has_lo && x < lo ? lo : (has_hi && x > hi ? hi : x)); \
        break;                                                               \
      case U_SHRINK:                                                         \
        UN_LOOP (T, T, SHRINK_##K (T, x)); break;                            \
      case U_SIGN: UN_LOOP (T, T, SIGN_##K (x)); break;                      \
      case U_ABS: UN_LOOP (T, T, ABS_##K (T, x)); break;                     \
      case U_NEG: UN_LOOP (T, T, (T) (0 - (uint64_t) x)); break;             \
      default: break;                                                        \
    }                                                                        \
  }

#define SIGN_S(x) ((x) > 0 ? 1 : ((x) < 0 ? -1 : 0))
#define SIGN_U(x) ((x) > 0 ? 1 : 0)
#define ABS_S(T, x) ((x) < 0 ? (T) (0 - (uint64_t) (x)) : (x))
#define ABS_U(T, x) (x)
#define SHRINK_S(T, x) ((int64_t) (x) < -(int64_t) lambd ? (T) ((x) + bias) \
    : ((x) > lambd ? (T) ((x) - bias) : (T) 0))
#define SHRINK_U(T, x) ((x) > lambd ? (T) ((x) - bias) : (T) 0)

UN_INT (int8_t, S, INT8_MIN, INT8_MAX)
UN_INT (int16_t, S, INT16_MIN, INT16_MAX)
UN_INT (int32_t, S, INT32_MIN, INT32_MAX)
UN_INT (int64_t, S, INT64_MIN, INT64_MAX)
UN_INT (uint8_t, U, 0, UINT8_MAX)
UN_INT (uint16_t, U, 0, UINT16_MAX)
UN_INT (uint32_t, U, 0, UINT32_MAX)
UN_INT (uint64_t, U, 0, UINT64_MAX)

/* ---------------------------------------------------------------- */
/* Eval                                                              */

/* Clip bounds: attributes before opset 11, optional scalar inputs since. */
static void
clip_bounds (const ClinferNode *node, const UnaryData *d,
    ClinferTensor *const *in, double *lo, double *hi, gboolean *has_lo,
    gboolean *has_hi)
{
  *lo = d->a;
  *hi = d->b;
  *has_lo = *has_hi = node->opset < 11;
  if (node->opset < 11)
    return;
  *lo = -INFINITY;
  *hi = INFINITY;
  if (node->n_inputs > 1 && in[1] && clinfer_tensor_get_n_elements (in[1]) > 0) {
    *lo = clinfer_tensor_get_as_double (in[1], 0);
    *has_lo = TRUE;
  }
  if (node->n_inputs > 2 && in[2] && clinfer_tensor_get_n_elements (in[2]) > 0) {
    *hi = clinfer_tensor_get_as_double (in[2], 0);
    *has_hi = TRUE;
  }
}

/* Integer Clip bounds read exactly (int64 values do not fit a double). */
static void
clip_int_bounds (const ClinferNode *node, const UnaryData *d,
    ClinferTensor *const *in, int64_t *lo, int64_t *hi)
{
  *lo = d->a <= (float) G_MININT64 ? G_MININT64 : (int64_t) d->a;
  *hi = d->b >= (float) G_MAXINT64 ? G_MAXINT64 : (int64_t) d->b;
  if (node->opset >= 11 && node->n_inputs > 1 && in[1]
      && clinfer_tensor_get_n_elements (in[1]) > 0)
    *lo = clinfer_tensor_get_as_int64 (in[1], 0);
  if (node->opset >= 11 && node->n_inputs > 2 && in[2]
      && clinfer_tensor_get_n_elements (in[2]) > 0)
    *hi = clinfer_tensor_get_as_int64 (in[2], 0);
}

static gboolean
eval_unary_int (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *y, GError **error)
{
  const UnaryData *d = node->op_data;
  int64_t n = clinfer_tensor_get_n_elements (in[0]), lo, hi;
  double dlo, dhi;
  gboolean has_lo, has_hi;
  const void *p = clinfer_tensor_get_const_data (in[0]);
  void *q = clinfer_tensor_get_data (y);

  clip_bounds (node, d, in, &dlo, &dhi, &has_lo, &has_hi);
  clip_int_bounds (node, d, in, &lo, &hi);
#define INT_CASE(E, T) \
    case E: unary_int_##T (d, p, q, n, lo, hi, has_lo, has_hi); break
  switch (clinfer_tensor_get_element_type (in[0])) {
    INT_CASE (CLINFER_TYPE_I8, int8_t);
    INT_CASE (CLINFER_TYPE_I16, int16_t);
    INT_CASE (CLINFER_TYPE_I32, int32_t);
    INT_CASE (CLINFER_TYPE_I64, int64_t);
    INT_CASE (CLINFER_TYPE_U8, uint8_t);
    INT_CASE (CLINFER_TYPE_U16, uint16_t);
    INT_CASE (CLINFER_TYPE_U32, uint32_t);
    INT_CASE (CLINFER_TYPE_U64, uint64_t);
    default:
      return clinfer_op_unsupported_type (node,
          clinfer_tensor_get_element_type (in[0]), error);
  }
  return TRUE;
}

static gboolean
eval_unary (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const UnaryData *d = node->op_data;
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]);
  const void *p = clinfer_tensor_get_const_data (in[0]);
  void *q = clinfer_tensor_get_data (out[0]);
  gboolean classify = d->kind == U_ISNAN || d->kind == U_ISINF;
  gboolean has_lo, has_hi;
  double lo, hi;

  clip_bounds (node, d, in, &lo, &hi, &has_lo, &has_hi);
  if (t == CLINFER_TYPE_F32 && classify)
    classify_float (d, p, q, n);
  else if (t == CLINFER_TYPE_F32)
    unary_float (d, p, q, n, (float) lo, (float) hi);
  else if (t == CLINFER_TYPE_F64 && classify)
    classify_double (d, p, q, n);
  else if (t == CLINFER_TYPE_F64)
    unary_double (d, p, q, n, lo, hi);
  else if (clinfer_op_type_is_half (t))   /* f16/bf16 through f32 */
    return clinfer_op_eval_via_f32 (node, in, out, eval_unary, error);
  else
    return eval_unary_int (node, in, out[0], error);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Dropout: identity at inference; random masking in training mode   */

typedef struct {
  float ratio;               /* attribute (opset < 12) */
  gboolean has_seed;
  int64_t seed;
} DropoutData;

static gboolean
prepare_dropout (ClinferNode *node, GError **error)
{
  g_autofree DropoutData *d = g_new0 (DropoutData, 1);

  if (!clinfer_node_attr_float (node, "ratio", 0.5f, &d->ratio, error)
      || !clinfer_node_attr_int (node, "seed", 0, &d->seed, error))
    return FALSE;
  d->has_seed = clinfer_node_get_attr (node, "seed") != NULL;
  if (!(d->ratio >= 0.f && d->ratio < 1.f)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: attribute 'ratio' must be in [0, 1), got %g",
        clinfer_node_label (node), d->ratio);
    return FALSE;
  }
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_dropout (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (!clinfer_element_type_is_float (in[0].type)
      || (node->n_inputs > 1 && in[1].present
          && !clinfer_element_type_is_float (in[1].type))
      || (node->n_inputs > 2 && in[2].present
          && in[2].type != CLINFER_TYPE_BOOL)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: expected a floating-point data input, a floating-point ratio "
        "and a bool training_mode", clinfer_node_label (node));
    return FALSE;
  }
  out[0].type = in[0].type;
  out[0].shape = in[0].shape;
  if (node->n_outputs > 1) {
    out[1].type = node->opset >= 10 ? CLINFER_TYPE_BOOL : in[0].type;
    out[1].shape = in[0].shape;
  }
  return TRUE;
}

/* A double in [0, 1) from two MT19937 words the way numpy's
 * random_sample() builds it: with the seed attribute (numpy.random.seed
 * semantics, the same MT19937 init as GRand) the ONNX reference's masks
 * are reproduced. */
static double
uniform53 (GRand *rand)
{
  guint32 a = g_rand_int (rand) >> 5, b = g_rand_int (rand) >> 6;

  return (a * 67108864.0 + b) / 9007199254740992.0;
}

static gboolean
eval_dropout (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const DropoutData *d = node->op_data;
  ClinferTensor *mask = node->n_outputs > 1 ? out[1] : NULL;
  int64_t n = clinfer_tensor_get_n_elements (in[0]);
  gboolean training = node->opset >= 12 && node->n_inputs > 2 && in[2]
      && clinfer_tensor_get_n_elements (in[2]) > 0
      && clinfer_tensor_get_as_int64 (in[2], 0) != 0;
  double ratio = node->opset >= 12 ? 0.5 : d->ratio, scale;
  g_autoptr (GRand) rand = NULL;

  if (node->opset >= 12 && node->n_inputs > 1 && in[1]
      && clinfer_tensor_get_n_elements (in[1]) > 0)
    ratio = clinfer_tensor_get_as_double (in[1], 0);
  if (training && !(ratio >= 0 && ratio <= 1)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: ratio must be in [0, 1], got %g", clinfer_node_label (node), ratio);
    return FALSE;
  }
  if (!training || ratio == 0) {
    memcpy (clinfer_tensor_get_data (out[0]), clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_byte_size (in[0]));
    for (int64_t i = 0; mask && i < n; i++)
      clinfer_op_store_double (mask, i, 1.0);
    return TRUE;
  }
  rand = d->has_seed ? g_rand_new_with_seed ((guint32) d->seed) : g_rand_new ();
  scale = ratio < 1 ? 1.0 / (1.0 - ratio) : 0.0;
  for (int64_t i = 0; i < n; i++) {
    gboolean keep = uniform53 (rand) >= ratio;
    double v = keep ? clinfer_tensor_get_as_double (in[0], i) * scale : 0.0;
    clinfer_op_store_double (out[0], i, v);
    if (mask)
      clinfer_op_store_double (mask, i, keep);
  }
  return TRUE;
}

#define UNARY(name, since, max_in) \
  { name, "", since, 0, 1, max_in, 1, 1, 0, prepare_unary, g_free, \
    infer_unary, eval_unary }

const ClinferOpDef clinfer_ops_activation[] = {
  UNARY ("Relu", 1, 1),
  UNARY ("LeakyRelu", 1, 1),
  UNARY ("Elu", 1, 1),
  UNARY ("Selu", 1, 1),
  UNARY ("Celu", 12, 1),
  UNARY ("ThresholdedRelu", 10, 1),
  UNARY ("Sigmoid", 1, 1),
  UNARY ("HardSigmoid", 1, 1),
  UNARY ("HardSwish", 14, 1),
  UNARY ("Tanh", 1, 1),
  UNARY ("Clip", 1, 3),
  UNARY ("Softplus", 1, 1),
  UNARY ("Softsign", 1, 1),
  UNARY ("Mish", 18, 1),
  UNARY ("Erf", 9, 1),
  UNARY ("Shrink", 9, 1),
  UNARY ("Sign", 9, 1),
  UNARY ("Abs", 1, 1),
  UNARY ("Neg", 1, 1),
  UNARY ("Reciprocal", 1, 1),
  UNARY ("Floor", 1, 1),
  UNARY ("Ceil", 1, 1),
  UNARY ("Round", 11, 1),
  UNARY ("Exp", 1, 1),
  UNARY ("Log", 1, 1),
  UNARY ("Sqrt", 1, 1),
  UNARY ("Sin", 7, 1),
  UNARY ("Cos", 7, 1),
  UNARY ("Tan", 7, 1),
  UNARY ("Asin", 7, 1),
  UNARY ("Acos", 7, 1),
  UNARY ("Atan", 7, 1),
  UNARY ("Sinh", 9, 1),
  UNARY ("Cosh", 9, 1),
  UNARY ("Asinh", 9, 1),
  UNARY ("Acosh", 9, 1),
  UNARY ("Atanh", 9, 1),
  UNARY ("IsNaN", 9, 1),
  UNARY ("IsInf", 10, 1),
  { "Swish", "com.clinfer", 1, 0, 1, 1, 1, 1, 0, prepare_unary, g_free,
    infer_unary, eval_unary },
  /* Dropout-12+ reads ratio/training_mode inputs: training is random. */
  { "Dropout", "", 1, 11, 1, 1, 1, 2, 0, prepare_dropout, g_free,
    infer_dropout, eval_dropout },
  { "Dropout", "", 12, 0, 1, 3, 1, 2, CLINFER_OP_NO_FOLD, prepare_dropout,
    g_free, infer_dropout, eval_dropout },
  { NULL }
};
