/* clinfer — options of compiling a model: device, threads, passes, custom
 * kernels and ops, memory limit. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/types.h>
#include <clinfer/custom-op.h>

G_BEGIN_DECLS

/**
 * ClinferCompileConfig:
 *
 * Options for clinfer_compile(). A plain owned object (new/free/copy).
 * Defaults: device "CPU", threads 0 (= number of cores), fallback allowed,
 * no passes disabled, no config file, no custom libraries.
 */
typedef struct _ClinferCompileConfig ClinferCompileConfig;

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
