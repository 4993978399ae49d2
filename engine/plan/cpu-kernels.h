/* clinfer — the CPU device's fast kernels: ISA dispatch and the kernel
 * factory table. Nodes without a fast kernel run their op's reference
 * eval (engine/ops). */
#pragma once

#include "ops/op.h"

G_BEGIN_DECLS

typedef enum {
  CLINFER_CPU_ISA_GENERIC = 0,  /* portable C, compiler's baseline */
  CLINFER_CPU_ISA_AVX2 = 1,     /* AVX2 + FMA */
  CLINFER_CPU_ISA_AVX512 = 2,   /* AVX-512 F/BW/VL/DQ */
} ClinferCpuIsa;

/* Widest ISA this machine runs, capped by the environment variable
 * CLINFER_CPU_ISA=generic|avx2|avx512 (for tests of every path). */
ClinferCpuIsa clinfer_cpu_isa_detect (void);
/* TRUE when the machine can run @isa. */
gboolean clinfer_cpu_isa_supported (ClinferCpuIsa isa);
const char *clinfer_cpu_isa_name (ClinferCpuIsa isa);
/* TRUE on CPUs whose AVX-512 has no more FMA throughput than AVX2 (the
 * 512-bit operations split in two: AMD Zen 4). */
gboolean clinfer_cpu_avx512_half_rate (void);

typedef struct _ClinferCpuKernel ClinferCpuKernel;
struct _ClinferCpuKernel {
  char *name;                   /* shown by --profile, e.g. "conv1x1_gemm_avx2" */
  gpointer state;               /* prepared at compile time (packed weights) */
  GDestroyNotify free_state;
  /* Same contract as ClinferOpDef.eval; inputs contiguous, outputs
   * allocated with the planned shape. No allocation in here. */
  gboolean (*run) (ClinferCpuKernel *kernel, const ClinferNode *node,
      ClinferTensor *const *inputs, ClinferTensor *const *outputs,
      GError **error);
};

/* Creates a fast kernel for @node (shapes inferred; constant inputs have
 * their value in the port desc). Returns FALSE without setting @error when
 * it does not apply (the reference eval is used); FALSE with @error on a
 * real failure. */
typedef gboolean (*ClinferCpuKernelFactory) (const ClinferNode *node,
    ClinferCpuIsa isa, ClinferCpuKernel *kernel, GError **error);

/* TRUE when tensor @t (the node's @what: "input", "output", "input 1")
 * has the shape @want the kernel was prepared for; else FALSE with an
 * error naming the node, the kernel and both shapes. */
gboolean clinfer_cpu_kernel_check_shape (const ClinferCpuKernel *kernel,
    const ClinferNode *node, const char *what, const ClinferTensor *t,
    const ClinferShape *want, GError **error);

/* Fast kernel factory for @node's op, or NULL. */
ClinferCpuKernelFactory clinfer_cpu_kernel_lookup (const ClinferNode *node);

G_END_DECLS
