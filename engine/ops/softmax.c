/* clinfer — Softmax, LogSoftmax, Hardmax: opset < 13 over the input coerced
 * to 2-D at axis (default 1), opset >= 13 over one axis (default -1). */
#include "ops/op.h"
#include <math.h>
#include <string.h>

typedef enum { SM_SOFTMAX, SM_LOG, SM_HARD } SmKind;

typedef struct {
  SmKind kind;
  int64_t axis;
  gboolean coerce_2d;        /* opset < 13 */
} SoftmaxData;

static gboolean
prepare_softmax (ClinferNode *node, GError **error)
{
  g_autofree SoftmaxData *d = g_new0 (SoftmaxData, 1);

  d->kind = strcmp (node->op_type, "LogSoftmax") == 0 ? SM_LOG
      : strcmp (node->op_type, "Hardmax") == 0 ? SM_HARD : SM_SOFTMAX;
  d->coerce_2d = node->opset > 0 && node->opset < 13;
  if (!clinfer_node_attr_int (node, "axis", d->coerce_2d ? 1 : -1, &d->axis,
          error))
    return FALSE;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

static gboolean
infer_softmax (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const SoftmaxData *d = node->op_data;
  ClinferElementType t = in[0].type;
  int axis;

  if (!clinfer_op_require_input (node, in, 0, error))
    return FALSE;
  if (t != CLINFER_TYPE_F32 && t != CLINFER_TYPE_F64
      && !clinfer_op_type_is_half (t)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input is %s, expected a floating-point type",
        clinfer_node_label (node), clinfer_element_type_name (t));
    return FALSE;
  }
  /* Old opsets accept axis == rank (a 2-D view with an empty second dim). */
  if (in[0].shape.rank >= 0 && !(d->coerce_2d && d->axis == in[0].shape.rank)
      && !clinfer_op_normalize_axis (node, d->axis, in[0].shape.rank, &axis,
          error))
    return FALSE;
  out[0].type = t;
  out[0].shape = in[0].shape;
  return TRUE;
}

/* Rows of @n elements @inner apart: [outer, n, inner]. */
typedef struct {
  int64_t outer, n, inner;
} SmGeom;

static gboolean
softmax_geom (const ClinferNode *node, const ClinferShape *s, SmGeom *g,
    GError **error)
{
  const SoftmaxData *d = node->op_data;
  int axis;

  g->outer = 1;
  g->n = 1;
  g->inner = 1;
  if (d->coerce_2d && d->axis == s->rank)
    axis = s->rank;
  else if (!clinfer_op_normalize_axis (node, d->axis, s->rank, &axis, error))
    return FALSE;
  for (int i = 0; i < MIN (axis, s->rank); i++)
    g->outer *= s->dims[i];
  if (d->coerce_2d) {
    for (int i = axis; i < s->rank; i++)
      g->n *= s->dims[i];
  } else if (s->rank > 0) {
    g->n = s->dims[axis];
    for (int i = axis + 1; i < s->rank; i++)
      g->inner *= s->dims[i];
  }
  return TRUE;
}

/* Max-subtracted: exp never overflows; Hardmax marks the first max. */
#define DEFINE_SOFTMAX(NAME, T, EXP, LOG)                                    \
static void                                                                  \
NAME (const SmGeom *g, SmKind kind, const T *x, T *y)                        \
{                                                                            \
  int64_t n = g->n, inner = g->inner;                                        \
  gboolean par_ = g->outer * n * inner > 16384;                              \
  _Pragma ("omp parallel for collapse(2) schedule(static) if (par_)")        \
  for (int64_t o = 0; o < g->outer; o++)                                     \
    for (int64_t i = 0; i < inner; i++) {                                    \
      const T *p = x + o * n * inner + i;                                    \
      T *q = y + o * n * inner + i;                                          \
      T mx = p[0];                                                           \
      int64_t arg = 0;                                                       \
      double sum = 0;                                                        \
      for (int64_t k = 1; k < n; k++)                                        \
        if (p[k * inner] > mx) {                                             \
          mx = p[k * inner];                                                 \
          arg = k;                                                           \
        }                                                                    \
      if (kind == SM_HARD) {                                                 \
        for (int64_t k = 0; k < n; k++)                                      \
          q[k * inner] = k == arg ? (T) 1 : (T) 0;                           \
        continue;                                                            \
      }                                                                      \
      for (int64_t k = 0; k < n; k++) {                                      \
        T e = EXP (p[k * inner] - mx);                                       \
        if (kind == SM_SOFTMAX)                                              \
          q[k * inner] = e;                                                  \
        sum += e;                                                            \
      }                                                                      \
      if (kind == SM_SOFTMAX) {                                              \
        T inv = (T) (1.0 / sum);                                             \
        for (int64_t k = 0; k < n; k++)                                      \
          q[k * inner] *= inv;                                               \
      } else {                                                               \
        T ls = (T) LOG (sum);                                                \
        for (int64_t k = 0; k < n; k++)                                      \
          q[k * inner] = p[k * inner] - mx - ls;                             \
      }                                                                      \
    }                                                                        \
}

DEFINE_SOFTMAX (softmax_f32, float, expf, log)
DEFINE_SOFTMAX (softmax_f64, double, exp, log)

static gboolean
eval_softmax (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const SoftmaxData *d = node->op_data;
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  int64_t n = clinfer_tensor_get_n_elements (in[0]);
  SmGeom g;

  if (!softmax_geom (node, clinfer_tensor_get_shape (in[0]), &g, error))
    return FALSE;
  if (n == 0 || g.n == 0)
    return TRUE;
  if (t == CLINFER_TYPE_F32)
    softmax_f32 (&g, d->kind, clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]));
  else if (t == CLINFER_TYPE_F64)
    softmax_f64 (&g, d->kind, clinfer_tensor_get_const_data (in[0]),
        clinfer_tensor_get_data (out[0]));
  else                       /* f16 / bf16 through f32 */
    return clinfer_op_eval_via_f32 (node, in, out, eval_softmax, error);
  return TRUE;
}

#define SOFTMAX(name) \
  { name, "", 1, 0, 1, 1, 1, 1, 0, prepare_softmax, g_free, infer_softmax, \
    eval_softmax }

const ClinferOpDef clinfer_ops_softmax[] = {
  SOFTMAX ("Softmax"),
  SOFTMAX ("LogSoftmax"),
  SOFTMAX ("Hardmax"),
  { NULL }
};
