/* A custom-op library for the element tests (clinfer-async): com.clinfer.test
 * FailIfBright passes its f32 input through and fails the inference, with
 * a message, when the first value is above 0.5, so a test can make one
 * frame's inference fail while others in flight succeed. com.clinfer.test
 * Gate passes its input through once the gate is open: the test, which
 * loads this library too, closes and opens it with
 * clinfer_test_gate_set_closed () and so holds inferences in flight. */
#include <clinfer/custom-op.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static atomic_int gate_closed;

__attribute__ ((visibility ("default"))) void
clinfer_test_gate_set_closed (int closed)
{
  atomic_store (&gate_closed, closed);
}

static int
no_state_create (const ClinferCustomOp *op, ClinferKernelInfo *info,
    void **kernel)
{
  *kernel = NULL;
  return 0;
}

/* Output 0: a copy of f32 input @x. */
static int
copy_input (ClinferKernelContext *ctx, const ClinferCustomTensor *x)
{
  int64_t n = 1;
  float *dst;

  for (int i = 0; i < x->rank; i++)
    n *= x->dims[i];
  dst = clinfer_kernel_context_allocate_output (ctx, 0, x->rank, x->dims);
  if (dst == NULL)
    return -1;
  memcpy (dst, x->data, (size_t) n * sizeof (float));
  return 0;
}

static int
fail_if_bright_compute (void *kernel, ClinferKernelContext *ctx)
{
  const ClinferCustomTensor *x = clinfer_kernel_context_get_input (ctx, 0);
  int64_t n = 1;

  for (int i = 0; i < x->rank; i++)
    n *= x->dims[i];
  if (n > 0 && ((const float *) x->data)[0] > 0.5f) {
    clinfer_kernel_context_set_error (ctx, "the frame is too bright");
    return -1;
  }
  return copy_input (ctx, x);
}

/* Waits (1 ms polls) while the gate is closed, then copies its input. */
static int
gate_compute (void *kernel, ClinferKernelContext *ctx)
{
  const struct timespec poll = { 0, 1000000 };

  while (atomic_load (&gate_closed))
    nanosleep (&poll, NULL);
  return copy_input (ctx, clinfer_kernel_context_get_input (ctx, 0));
}

static const ClinferCustomPort f32_port[] = {
  { CLINFER_TYPE_F32, CLINFER_PORT_REQUIRED },
};

/* Both ops: one f32 input passed through to one output, no state. */
#define PASS_THROUGH_OP(op_name, compute_fn) { \
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION, \
  .name = op_name, \
  .domain = "com.clinfer.test", \
  .n_inputs = 1, \
  .inputs = f32_port, \
  .n_outputs = 1, \
  .outputs = f32_port, \
  .create_kernel = no_state_create, \
  .compute = compute_fn, \
}

static const ClinferCustomOp test_ops[] = {
  PASS_THROUGH_OP ("FailIfBright", fail_if_bright_compute),
  PASS_THROUGH_OP ("Gate", gate_compute),
};

int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  for (size_t i = 0; i < sizeof (test_ops) / sizeof (test_ops[0]); i++) {
    int ret = clinfer_custom_op_registry_add (registry, &test_ops[i]);

    if (ret != 0)
      return ret;
  }
  return 0;
}
