/* clinfer — the CPU device's fast-kernel factory table: one line per
 * (domain, op type) that has a faster kernel than the reference eval. */
#include "plan/cpu-simd.h"
#include <string.h>

static const struct {
  const char *domain;
  const char *op_type;
  ClinferCpuKernelFactory factory;
} factories[] = {
  { "", "Conv", clinfer_cpu_conv_factory },
  { "com.clinfer", "FusedConv", clinfer_cpu_conv_factory },
  { "", "MaxPool", clinfer_cpu_max_pool_factory },
  { "", "Pad", clinfer_cpu_pad_factory },
  { "", "Concat", clinfer_cpu_concat_factory },
  { "", "Slice", clinfer_cpu_slice_factory },
  { "", "LayerNormalization", clinfer_cpu_layer_norm_factory },
};

ClinferCpuKernelFactory
clinfer_cpu_kernel_lookup (const ClinferNode *node)
{
  for (gsize i = 0; i < G_N_ELEMENTS (factories); i++)
    if (clinfer_node_is_builtin_op (node, factories[i].domain,
            factories[i].op_type))
      return factories[i].factory;
  return NULL;
}
