/* Custom-op libraries that fail to register, one per build flag, for the
 * error tests (tests/custom-op/test-custom-ops.c):
 *   BAD_ABI        an op with ABI version 99
 *   FAIL_REGISTER  the registration function fails with a message
 *   CLASH_BUILTIN  an op named like the built-in Relu in the default domain
 *   NO_OPS         registers nothing
 *   (none)         no registration function at all */
#include <clinfer/custom-op.h>
#include <stdlib.h>

int clinfer_bad_ops_marker (void);

int
clinfer_bad_ops_marker (void)
{
  return 1;
}

#if defined(BAD_ABI) || defined(CLASH_BUILTIN)
static int
identity_compute (void *kernel, ClinferKernelContext *ctx)
{
  return -1;
}

static const ClinferCustomPort any_port[] = {
  { CLINFER_TYPE_UNDEFINED, CLINFER_PORT_REQUIRED },
};

static const ClinferCustomOp op = {
#ifdef BAD_ABI
  .abi_version = 99,
#else
  .abi_version = CLINFER_CUSTOM_OP_ABI_VERSION,
#endif
#ifdef CLASH_BUILTIN
  .name = "Relu",
  .domain = "",
#else
  .name = "Identity2",
  .domain = "com.bad",
#endif
  .n_inputs = 1,
  .inputs = any_port,
  .n_outputs = 1,
  .outputs = any_port,
  .compute = identity_compute,
};

int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  return clinfer_custom_op_registry_add (registry, &op);
}
#elif defined(FAIL_REGISTER)
int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  clinfer_custom_op_registry_set_error (registry, "license check failed");
  return -1;
}
#elif defined(NO_OPS)
int
clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version)
{
  return 0;
}
#endif
