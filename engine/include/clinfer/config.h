/* clinfer — options of compiling a model: device, threads, streams and
 * the performance hint, passes, custom kernels and ops, memory limit. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/types.h>
#include <clinfer/custom-op.h>

G_BEGIN_DECLS

/**
 * ClinferCompileConfig:
 *
 * Options for clinfer_compile(). A plain owned object (new/free/copy).
 * Defaults: device "CPU", threads 0 (= number of cores), no performance
 * hint, one stream, fallback allowed, no passes disabled, no config file,
 * no custom libraries.
 */
typedef struct _ClinferCompileConfig ClinferCompileConfig;

/**
 * ClinferPerformanceHint:
 * @CLINFER_HINT_NONE: threads and streams as set (defaults: one stream,
 *   one thread per core)
 * @CLINFER_HINT_LATENCY: one request as fast as possible: one stream; on
 *   the CPU device with threads unset and static inputs, the thread count
 *   is measured at compile time (all cores against one thread; the faster
 *   wins), so more threads never make a small model slower
 * @CLINFER_HINT_THROUGHPUT: most inferences per second with several
 *   requests in flight: on the CPU device the cores are split into
 *   streams (one thread each unless threads is set), each running its own
 *   requests; on the GPU device two streams
 *
 * In the spirit of OpenVINO's PERFORMANCE_HINT. Explicit threads and
 * streams override what the hint would choose.
 */
typedef enum {
  CLINFER_HINT_NONE,
  CLINFER_HINT_LATENCY,
  CLINFER_HINT_THROUGHPUT,
} ClinferPerformanceHint;

CLINFER_API ClinferCompileConfig *clinfer_compile_config_new (void);
CLINFER_API ClinferCompileConfig *clinfer_compile_config_copy (const ClinferCompileConfig *config);
CLINFER_API void clinfer_compile_config_free (ClinferCompileConfig *config);

/* "CPU", "GPU", "GPU.N" or "AUTO" (checked at compile time). */
CLINFER_API void clinfer_compile_config_set_device (ClinferCompileConfig *config,
    const char *device);
CLINFER_API const char *clinfer_compile_config_get_device (const ClinferCompileConfig *config);
/* 0 = number of cores. */
CLINFER_API void clinfer_compile_config_set_threads (ClinferCompileConfig *config,
    int threads);
CLINFER_API int clinfer_compile_config_get_threads (const ClinferCompileConfig *config);
CLINFER_API void clinfer_compile_config_set_performance_hint (ClinferCompileConfig *config,
    ClinferPerformanceHint hint);
CLINFER_API ClinferPerformanceHint clinfer_compile_config_get_performance_hint (
    const ClinferCompileConfig *config);
/* "latency", "throughput" or "none" (any case) to a hint; FALSE with
 * CLINFER_ERROR_INVALID_ARGUMENT for other text. */
CLINFER_API gboolean clinfer_performance_hint_from_string (const char *text,
    ClinferPerformanceHint *hint, GError **error);
CLINFER_API const char *clinfer_performance_hint_to_string (ClinferPerformanceHint hint);
/* Streams: groups of the device's threads, each running its own requests
 * (clinfer_request_start_async()); threads then means threads per
 * stream. 0 (the default) = chosen by the hint (one without a hint). */
CLINFER_API void clinfer_compile_config_set_streams (ClinferCompileConfig *config,
    int streams);
CLINFER_API int clinfer_compile_config_get_streams (const ClinferCompileConfig *config);
/* Disables the compile pass @name (see clinfer_pass_get_names()).
 * FALSE with CLINFER_ERROR_INVALID_ARGUMENT for an unknown name. */
CLINFER_API gboolean clinfer_compile_config_disable_pass (ClinferCompileConfig *config,
    const char *name, GError **error);
CLINFER_API gboolean clinfer_compile_config_is_pass_disabled (const ClinferCompileConfig *config,
    const char *name);
/* When FALSE, a node the chosen device cannot run fails the compile
 * instead of falling back to the CPU device. */
CLINFER_API void clinfer_compile_config_set_allow_fallback (ClinferCompileConfig *config,
    gboolean allow);
CLINFER_API gboolean clinfer_compile_config_get_allow_fallback (const ClinferCompileConfig *config);
/* Custom OpenCL layer XML (OpenVINO custom-layer format). */
CLINFER_API void clinfer_compile_config_set_config_file (ClinferCompileConfig *config,
    const char *path);
CLINFER_API const char *clinfer_compile_config_get_config_file (const ClinferCompileConfig *config);
/* Loads the shared library of custom CPU ops at @path (with GModule) and
 * calls its registration function (see <clinfer/custom-op.h>). The ops
 * then apply to models read with clinfer_model_read_with_config() and
 * compiled with this config. FALSE with an error naming @path when the
 * library is missing, lacks the function, has a wrong ABI version, its
 * registration fails or an op name clashes. */
CLINFER_API gboolean clinfer_compile_config_add_custom_lib (ClinferCompileConfig *config,
    const char *path, GError **error);
/* Adds custom ops from code (each struct is copied). Same checks. */
CLINFER_API gboolean clinfer_compile_config_add_custom_ops (ClinferCompileConfig *config,
    const ClinferCustomOp *const *ops, guint n_ops, GError **error);
/* Number of custom ops the config holds. */
CLINFER_API guint clinfer_compile_config_get_n_custom_ops (const ClinferCompileConfig *config);
/* Per-node timing in requests (small overhead per node). */
CLINFER_API void clinfer_compile_config_set_profiling (ClinferCompileConfig *config,
    gboolean enable);

/* The most bytes one tensor of the model, or all its intermediate tensors
 * together, may take; and the most one constant folding may create (the
 * smaller of this and 16 MiB). A model that needs more fails to compile
 * with CLINFER_ERROR_OUT_OF_MEMORY naming the node and the size, before
 * anything is allocated. 0 (the default) means the machine's physical
 * memory. get_memory_limit() returns the limit in effect. */
CLINFER_API void clinfer_compile_config_set_memory_limit (ClinferCompileConfig *config,
    guint64 bytes);
CLINFER_API guint64 clinfer_compile_config_get_memory_limit (
    const ClinferCompileConfig *config);

/* NULL-terminated list of the compile passes in the order they run. */
CLINFER_API const char *const *clinfer_pass_get_names (void);
/* One-line description of pass @name, or NULL for an unknown name. */
CLINFER_API const char *clinfer_pass_get_description (const char *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferCompileConfig, clinfer_compile_config_free)

G_END_DECLS
