/* clinfer — which instruction sets the CPU device's kernels may use: the
 * machine's (cpuid) capped by the CLINFER_CPU_ISA environment variable. */
#include "plan/cpu-kernels.h"
#include <string.h>

static gboolean
machine_supports (ClinferCpuIsa isa)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init ();
  switch (isa) {
    case CLINFER_CPU_ISA_GENERIC:
      return TRUE;
    case CLINFER_CPU_ISA_AVX2:
      return __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
    case CLINFER_CPU_ISA_AVX512:
      return __builtin_cpu_supports ("avx512f")
          && __builtin_cpu_supports ("avx512bw")
          && __builtin_cpu_supports ("avx512vl")
          && __builtin_cpu_supports ("avx512dq")
          && __builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma");
    default:
      return FALSE;
  }
#else
  return isa == CLINFER_CPU_ISA_GENERIC;
#endif
}

gboolean
clinfer_cpu_isa_supported (ClinferCpuIsa isa)
{
  return machine_supports (isa);
}

gboolean
clinfer_cpu_avx512_half_rate (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init ();
  /* AMD family 19h (Zen 4) runs a 512-bit operation as two 256-bit halves
   * on its 256-bit units: AVX-512 gives the FMA throughput of AVX2. */
  return __builtin_cpu_is ("amd") && __builtin_cpu_is ("amdfam19h")
      && machine_supports (CLINFER_CPU_ISA_AVX512);
#else
  return FALSE;
#endif
}

const char *
clinfer_cpu_isa_name (ClinferCpuIsa isa)
{
  switch (isa) {
    case CLINFER_CPU_ISA_GENERIC: return "generic";
    case CLINFER_CPU_ISA_AVX2: return "avx2";
    case CLINFER_CPU_ISA_AVX512: return "avx512";
    default: return "unknown";
  }
}

static ClinferCpuIsa
widest_supported (void)
{
  if (machine_supports (CLINFER_CPU_ISA_AVX512))
    return CLINFER_CPU_ISA_AVX512;
  if (machine_supports (CLINFER_CPU_ISA_AVX2))
    return CLINFER_CPU_ISA_AVX2;
  return CLINFER_CPU_ISA_GENERIC;
}

/* Environment override, read once; the warning is given once too. */
static ClinferCpuIsa
detect_once (void)
{
  ClinferCpuIsa best = widest_supported (), want;
  const char *env = g_getenv ("CLINFER_CPU_ISA");

  if (env == NULL || *env == '\0')
    return best;
  if (g_ascii_strcasecmp (env, "generic") == 0)
    want = CLINFER_CPU_ISA_GENERIC;
  else if (g_ascii_strcasecmp (env, "avx2") == 0)
    want = CLINFER_CPU_ISA_AVX2;
  else if (g_ascii_strcasecmp (env, "avx512") == 0)
    want = CLINFER_CPU_ISA_AVX512;
  else {
    g_warning ("CLINFER_CPU_ISA=%s is not one of generic, avx2, avx512; "
        "using %s", env, clinfer_cpu_isa_name (best));
    return best;
  }
  if (want > best) {
    g_warning ("CLINFER_CPU_ISA=%s is not supported by this CPU; using %s",
        env, clinfer_cpu_isa_name (best));
    return best;
  }
  return want;
}

ClinferCpuIsa
clinfer_cpu_isa_detect (void)
{
  static gsize once = 0;
  static ClinferCpuIsa isa;

  if (g_once_init_enter (&once)) {
    isa = detect_once ();
    g_once_init_leave (&once, 1);
  }
  return isa;
}
