/* Two custom CPU ops for clinfer, in the domain "com.example":
 *
 *   ScaledTanh (x) -> y         y = alpha * tanh (beta * x), element-wise,
 *                               float attributes alpha (default 1) and
 *                               beta (default 1); f32 in, f32 out.
 *   RowTopK (x) -> values, indices
 *                               the k largest values of each row (the last
 *                               axis) in descending order and their
 *                               positions (i64); int attribute k. When a
 *                               row is shorter than k, the outputs have
 *                               the row's length. A NaN in the input is an
 *                               error (to show how compute reports one).
 *
 * Build (see README.md):
 *   cc -shared -fPIC -O2 -o libexample-ops.so example-ops.c \
 *       $(pkg-config --cflags --libs clinfer) -lm
 */
#include <clinfer/custom-op.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- ScaledTanh ---- */

typedef struct {
  float alpha, beta;
} ScaledTanh;

static int
scaled_tanh_create (const ClinferCustomOp *op, ClinferKernelInfo *info,
    void **kernel)
{
  ScaledTanh *k = calloc (1, sizeof (ScaledTanh));

  if (k == NULL) {
    clinfer_kernel_info_set_error (info, "out of memory");
    return -1;
  }
  k->alpha = 1.0f;
  k->beta = 1.0f;
  /* Optional attributes: read them only when present, so a wrong type is
   * still reported. */
  if ((clinfer_kernel_info_has_attribute (info, "alpha")
          && clinfer_kernel_info_get_float (info, "alpha", &k->alpha) != 0)
      || (clinfer_kernel_info_has_attribute (info, "beta")
          && clinfer_kernel_info_get_float (info, "beta", &k->beta) != 0)) {
    free (k);
    return -1;
  }
  *kernel = k;
  return 0;
}

static int
scaled_tanh_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ScaledTanh *k = kernel;
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  const float *src = x->data;
  float *dst;
  int64_t n = 1;

  for (int i = 0; i < x->rank; i++)
    n *= x->dims[i];
  dst = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, x->dims);
  if (dst == NULL)
    return -1;               /* the context holds the error */
  for (int64_t i = 0; i < n; i++)
    dst[i] = k->alpha * tanhf (k->beta * src[i]);
  return 0;
}

static const ClinferCustomPort f32_port[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
};

static const ClinferCustomOp scaled_tanh_op = {
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION,
  .name = "ScaledTanh",
  .domain = "com.example",
  .n_inputs = 1,
  .inputs = f32_port,
  .n_outputs = 1,
  .outputs = f32_port,
  .create_kernel = scaled_tanh_create,
  .compute = scaled_tanh_compute,
  .destroy_kernel = free,
};

/* ---- RowTopK ---- */

typedef struct {
  int64_t k;
} RowTopK;

static int
row_topk_create (const ClinferCustomOp *op, ClinferKernelInfo *info,
    void **kernel)
{
  RowTopK *k;
  int64_t value;

  if (clinfer_kernel_info_get_int (info, "k", &value) != 0)
    return -1;               /* "attribute 'k' is missing" */
  if (value < 1) {
    clinfer_kernel_info_set_error (info, "k must be at least 1, got %lld",
        (long long) value);
    return -1;
  }
  k = calloc (1, sizeof (RowTopK));
  if (k == NULL) {
    clinfer_kernel_info_set_error (info, "out of memory");
    return -1;
  }
  k->k = value;
  *kernel = k;
  return 0;
}

/* values: f32, indices: i64, both the input's shape with the last dim
 * min (k, row length); unknown until run time when the row length is. */
static int
row_topk_infer (const ClinferCustomOp *op, void *kernel,
    ClinferShapeContext *ctx)
{
  const RowTopK *k = kernel;
  ClinferElementType type;
  int rank;
  int64_t dims[CLINFER_MAX_RANK];

  clinfer_shape_context_get_input (ctx, 0, &type, &rank, dims);
  if (rank == 0) {
    clinfer_shape_context_set_error (ctx, "the input is a scalar; RowTopK "
        "needs at least one axis");
    return -1;
  }
  if (rank > 0 && dims[rank - 1] >= 0 && dims[rank - 1] > k->k)
    dims[rank - 1] = k->k;
  if (clinfer_shape_context_set_output (ctx, 0, CLINFER_TYPE_F32, rank, dims) != 0
      || clinfer_shape_context_set_output (ctx, 1, CLINFER_TYPE_I64, rank,
          dims) != 0)
    return -1;
  return 0;
}

static int
row_topk_compute (void *kernel, ClinferKernelContext *ctx)
{
  const RowTopK *k = kernel;
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  const float *src = x->data;
  int64_t dims[CLINFER_MAX_RANK];
  int64_t row = x->dims[x->rank - 1], rows = 1, kk;
  float *values;
  int64_t *indices;

  for (int i = 0; i < x->rank - 1; i++)
    rows *= x->dims[i];
  for (int64_t i = 0; i < rows * row; i++)
    if (isnan (src[i])) {
      clinfer_kernel_context_set_error (ctx, "element %lld of the input is "
          "NaN", (long long) i);
      return -1;
    }
  kk = row < k->k ? row : k->k;
  memcpy (dims, x->dims, sizeof (int64_t) * (size_t) x->rank);
  dims[x->rank - 1] = kk;
  values = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, dims);
  indices = values
      ? clinfer_kernel_context_allocate_output (ctx, 1, x->rank, dims) : NULL;
  if (indices == NULL)
    return -1;
  /* Selection by repeated scans: k is small in practice. Ties keep the
   * lower index first. */
  for (int64_t r = 0; r < rows; r++) {
    const float *in = src + r * row;
    for (int64_t j = 0; j < kk; j++) {
      int64_t best = -1;
      for (int64_t c = 0; c < row; c++) {
        int taken = 0;
        for (int64_t p = 0; p < j && !taken; p++)
          taken = indices[r * kk + p] == c;
        if (!taken && (best < 0 || in[c] > in[best]))
          best = c;
      }
      values[r * kk + j] = in[best];
      indices[r * kk + j] = best;
    }
  }
  return 0;
}

static const ClinferCustomPort topk_outputs[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
  { CLINFER_TYPE_I64, CLINFER_PORT_REQUIRED },
};

static const ClinferCustomOp row_topk_op = {
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION,
  .name = "RowTopK",
  .domain = "com.example",
  .n_inputs = 1,
  .inputs = f32_port,
  .n_outputs = 2,
  .outputs = topk_outputs,
  .create_kernel = row_topk_create,
  .infer_shapes = row_topk_infer,
  .compute = row_topk_compute,
  .destroy_kernel = free,
};

/* ---- the library's entry point ---- */

int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  if (clinfer_custom_op_registry_add (registry, &scaled_tanh_op) != 0
      || clinfer_custom_op_registry_add (registry, &row_topk_op) != 0)
    return -1;
  return 0;
}
