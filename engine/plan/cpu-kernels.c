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
  { "", "Split", clinfer_cpu_split_factory },
  { "", "Slice", clinfer_cpu_slice_factory },
  { "", "Transpose", clinfer_cpu_transpose_factory },
  { "", "Resize", clinfer_cpu_resize_factory },
  { "", "Upsample", clinfer_cpu_resize_factory },
  { "", "LayerNormalization", clinfer_cpu_layer_norm_factory },
  { "com.clinfer", "LayerNormStd", clinfer_cpu_layer_norm_factory },
  { "", "Add", clinfer_cpu_eltwise_factory },
  { "", "Sub", clinfer_cpu_eltwise_factory },
  { "", "Mul", clinfer_cpu_eltwise_factory },
  { "", "Div", clinfer_cpu_eltwise_factory },
  { "", "Relu", clinfer_cpu_eltwise_factory },
  { "", "Neg", clinfer_cpu_eltwise_factory },
  { "", "Abs", clinfer_cpu_eltwise_factory },
  { "", "Sqrt", clinfer_cpu_eltwise_factory },
  { "", "Log", clinfer_cpu_eltwise_factory },
  { "com.clinfer", "Swish", clinfer_cpu_eltwise_factory },
  { "", "Where", clinfer_cpu_eltwise_factory },
  { "", "ReduceSum", clinfer_cpu_eltwise_factory },
  { "", "ReduceMean", clinfer_cpu_eltwise_factory },
  { "", "ReduceMax", clinfer_cpu_eltwise_factory },
  { "", "ReduceMin", clinfer_cpu_eltwise_factory },
  { "", "RNN", clinfer_cpu_recurrent_factory },
  { "", "GRU", clinfer_cpu_recurrent_factory },
  { "", "LSTM", clinfer_cpu_recurrent_factory },
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

gboolean
clinfer_cpu_kernel_check_shape (const ClinferCpuKernel *kernel,
    const ClinferNode *node, const char *what, const ClinferTensor *t,
    const ClinferShape *want, GError **error)
{
  const ClinferShape *got = clinfer_tensor_get_shape (t);
  g_autofree char *got_s = NULL, *want_s = NULL;

  if (clinfer_shape_equal (got, want))
    return TRUE;
  got_s = clinfer_shape_to_string (got);
  want_s = clinfer_shape_to_string (want);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "node %s: kernel %s was prepared for %s %s, got %s",
      clinfer_node_label (node), kernel->name, what, want_s, got_s);
  return FALSE;
}

void
clinfer_cpu_pack_a (const float *x, int m, int k, int mr, float *a)
{
  for (int r0 = 0; r0 < m; r0 += mr)
    for (int kk = 0; kk < k; kk++)
      for (int r = 0; r < mr; r++)
        a[((gsize) (r0 / mr) * k + kk) * mr + r] = r0 + r < m
            ? x[(gsize) (r0 + r) * k + kk] : 0.f;
}
