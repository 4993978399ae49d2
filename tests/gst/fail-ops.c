/* A custom-op library for the element tests (clinfer-async): com.clinfer.test
 * FailIfBright passes its f32 input through and fails the inference, with
 * a message, when the first value is above 0.5, so a test can make one
 * frame's inference fail while others in flight succeed. */
#include <clinfer/custom-op.h>
#include <string.h>

static int
fail_if_bright_create (const ClinferCustomOp *op, ClinferKernelInfo *info,
    void **kernel)
{
  *kernel = NULL;
  return 0;
}

static int
fail_if_bright_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  int64_t n = 1;
  float *dst;

  for (int i = 0; i < x->rank; i++)
    n *= x->dims[i];
  if (n > 0 && ((const float *) x->data)[0] > 0.5f) {
    clinfer_kernel_context_set_error (ctx, "the frame is too bright");
    return -1;
  }
  dst = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, x->dims);
  if (dst == NULL)
    return -1;
  memcpy (dst, x->data, (size_t) n * sizeof (float));
  return 0;
}

static const ClinferCustomPort f32_port[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
};

static const ClinferCustomOp fail_if_bright_op = {
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION,
  .name = "FailIfBright",
  .domain = "com.clinfer.test",
  .n_inputs = 1,
  .inputs = f32_port,
  .n_outputs = 1,
  .outputs = f32_port,
  .create_kernel = fail_if_bright_create,
  .compute = fail_if_bright_compute,
};

int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  return clinfer_custom_op_registry_add (registry, &fail_if_bright_op);
}
