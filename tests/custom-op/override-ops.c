/* A custom-op library that overrides built-in ops of the default domain
 * (CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN), for the override tests
 * (tests/custom-op/test-custom-ops.c, test-custom-cli.py):
 *   Relu, Tanh, Abs   y = x + 100
 *   Add               y = a + b + 100, b of a's shape, one value per
 *                     channel (dim 1) or a single value
 * Results no built-in op gives, so a test sees which implementation ran. */
#include <clinfer/custom-op.h>
#include <stddef.h>

static size_t
n_elements (const ClinferCustomTensor *t)
{
  size_t n = 1;

  for (int i = 0; i < t->rank; i++)
    n *= (size_t) t->dims[i];
  return n;
}

static int
plus100_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  const float *src = x->data;
  float *y = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, x->dims);
  size_t n = n_elements (x);

  if (y == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    y[i] = src[i] + 100.0f;
  return 0;
}

static int
add_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ClinferCustomTensor *a = clinfer_kernel_context_get_input (ctx, 0);
  const ClinferCustomTensor *b = clinfer_kernel_context_get_input (ctx, 1);
  const float *pa = a->data, *pb = b->data;
  size_t n = n_elements (a), nb = n_elements (b), inner = 1;
  int64_t channels = a->rank >= 2 ? a->dims[1] : 0;
  float *y;

  for (int i = 2; i < a->rank; i++)
    inner *= (size_t) a->dims[i];
  if (nb != n && nb != 1 && (int64_t) nb != channels) {
    clinfer_kernel_context_set_error (ctx, "b has %zu values, expected %zu, "
        "1 or one per channel", nb, n);
    return -1;
  }
  y = clinfer_kernel_context_allocate_output (ctx, 0, a->rank, a->dims);
  if (y == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    size_t j = nb == n ? i : nb == 1 ? 0 : (i / inner) % (size_t) channels;
    y[i] = pa[i] + pb[j] + 100.0f;
  }
  return 0;
}

static const ClinferCustomPort f32_port[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
};

#define OVERRIDE(op_name, n_in, fn) { \
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION, \
  .name = op_name, \
  .domain = "", \
  .flags = CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN, \
  .n_inputs = n_in, .inputs = f32_port, \
  .n_outputs = 1, .outputs = f32_port, \
  .compute = fn, \
}

static const ClinferCustomOp ops[] = {
  OVERRIDE ("Relu", 1, plus100_compute),
  OVERRIDE ("Tanh", 1, plus100_compute),
  OVERRIDE ("Abs", 1, plus100_compute),
  OVERRIDE ("Add", 2, add_compute),
};

int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  for (size_t i = 0; i < sizeof (ops) / sizeof (ops[0]); i++)
    if (clinfer_custom_op_registry_add (registry, &ops[i]) != 0)
      return -1;
  return 0;
}
