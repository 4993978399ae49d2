/* clinfer — the CPU device's LayerNormalization (and com.clinfer
 * LayerNormStd) over the last axis, f32, with constant scale and bias
 * (what fuse-layernorm makes of a written-out layer norm): one pass for the mean, one for the variance, one to
 * write, in float with eight partial sums, instead of the reference
 * eval's double columns. */
#include "plan/cpu-simd.h"
#include <math.h>
#include <omp.h>
#include <string.h>

typedef struct {
  int64_t rows, n;
  float eps;
  gboolean std_form;         /* LayerNormStd: 1 / (sqrt (k var) + eps) */
  float var_scale;           /* its k */
  float *scale, *bias;       /* n each, bias zeros when absent */
} LnState;

static void
ln_state_free (gpointer data)
{
  LnState *st = data;

  g_free (st->scale);
  g_free (st);
}

/* Sum of x (@m NAN) or of (x - m)^2, over eight partial sums. */
static float
row_sum (const float *x, int64_t n, float m)
{
  float p[8] = { 0 };
  int64_t i = 0;
  gboolean sq = !isnan (m);

  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; l++)
      p[l] += sq ? (x[i + l] - m) * (x[i + l] - m) : x[i + l];
  for (; i < n; i++)
    p[0] += sq ? (x[i] - m) * (x[i] - m) : x[i];
  return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}

static gboolean
ln_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const LnState *st = kernel->state;
  const float *x = clinfer_tensor_get_const_data (inputs[0]);
  float *y = clinfer_tensor_get_data (outputs[0]);
  int64_t n = st->n;

  if (clinfer_tensor_get_n_elements (inputs[0]) != st->rows * n) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "node %s: kernel %s got an input of another shape than prepared",
        clinfer_node_label (node), kernel->name);
    return FALSE;
  }
#pragma omp parallel for schedule (static) if (st->rows * n > 65536)
  for (int64_t r = 0; r < st->rows; r++) {
    const float *xr = x + r * n;
    float *yr = y + r * n;
    float mean = row_sum (xr, n, NAN) / (float) n;
    float var = row_sum (xr, n, mean) / (float) n;
    float inv = st->std_form ? 1.f / (sqrtf (var * st->var_scale) + st->eps)
        : 1.f / sqrtf (var + st->eps);
    for (int64_t i = 0; i < n; i++)
      yr[i] = (xr[i] - mean) * inv * st->scale[i] + st->bias[i];
  }
  return TRUE;
}

gboolean
clinfer_cpu_layer_norm_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *s = clinfer_node_input_desc (node, 1);
  ClinferPortDesc *b = node->n_inputs > 2 ? clinfer_node_input_desc (node, 2)
      : NULL;
  gboolean std_form = clinfer_node_is_builtin_op (node, "com.clinfer",
      "LayerNormStd");
  int64_t axis = -1, n, stash = 1;
  float eps = std_form ? 0.f : 1e-5f, var_scale = 1.f;
  LnState *st;

  if (x == NULL || s == NULL || node->n_outputs != 1
      || x->type != CLINFER_TYPE_F32 || x->shape.rank < 1
      || !clinfer_shape_is_static (&x->shape)
      || !clinfer_node_attr_int (node, "axis", -1, &axis, NULL)
      || !clinfer_node_attr_float (node, "epsilon", eps, &eps, NULL)
      || !clinfer_node_attr_float (node, "var_scale", 1.f, &var_scale, NULL)
      || !clinfer_node_attr_int (node, "stash_type", 1, &stash, NULL)
      || stash != CLINFER_TYPE_F32
      || (axis != -1 && axis != x->shape.rank - 1))
    return FALSE;
  n = x->shape.dims[x->shape.rank - 1];
  if (n <= 0 || s->value == NULL || s->type != CLINFER_TYPE_F32
      || clinfer_tensor_get_n_elements (s->value) != n
      || (b && (b->value == NULL || b->type != CLINFER_TYPE_F32
              || clinfer_tensor_get_n_elements (b->value) != n)))
    return FALSE;
  st = g_new0 (LnState, 1);
  st->n = n;
  st->rows = clinfer_shape_n_elements (&x->shape) / n;
  st->eps = eps;
  st->std_form = std_form;
  st->var_scale = var_scale;
  st->scale = g_new0 (float, 2 * n);
  st->bias = st->scale + n;
  memcpy (st->scale, clinfer_tensor_get_const_data (s->value), n * sizeof (float));
  if (b)
    memcpy (st->bias, clinfer_tensor_get_const_data (b->value), n * sizeof (float));
  kernel->name = g_strdup ("layer_norm_rows");
  kernel->state = st;
  kernel->free_state = ln_state_free;
  kernel->run = ln_run;
  return TRUE;
}
