/* clinfer — options of compiling a model: device, threads, passes, custom
 * kernels and ops, memory limit. */
#pragma once

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

ClinferCompileConfig *clinfer_compile_config_new (void);
ClinferCompileConfig *clinfer_compile_config_copy (const ClinferCompileConfig *config);
void clinfer_compile_config_free (ClinferCompileConfig *config);

/* "CPU", "GPU", "GPU.N" or "AUTO" (checked at compile time). */
void clinfer_compile_config_set_device (ClinferCompileConfig *config,
    const char *device);
const char *clinfer_compile_config_get_device (const ClinferCompileConfig *config);
/* 0 = number of cores. */
void clinfer_compile_config_set_threads (ClinferCompileConfig *config,
    int threads);
int clinfer_compile_config_get_threads (const ClinferCompileConfig *config);
/* Disables the compile pass @name (see clinfer_pass_get_names()).
 * FALSE with CLINFER_ERROR_INVALID_ARGUMENT for an unknown name. */
gboolean clinfer_compile_config_disable_pass (ClinferCompileConfig *config,
    const char *name, GError **error);
gboolean clinfer_compile_config_is_pass_disabled (const ClinferCompileConfig *config,
    const char *name);
/* When FALSE, a node the chosen device cannot run fails the compile
 * instead of falling back to the CPU device. */
void clinfer_compile_config_set_allow_fallback (ClinferCompileConfig *config,
    gboolean allow);
gboolean clinfer_compile_config_get_allow_fallback (const ClinferCompileConfig *config);
/* Custom OpenCL layer XML (OpenVINO custom-layer format). */
void clinfer_compile_config_set_config_file (ClinferCompileConfig *config,
    const char *path);
const char *clinfer_compile_config_get_config_file (const ClinferCompileConfig *config);
/* Loads the shared library of custom CPU ops at @path (with GModule) and
 * calls its registration function (see <clinfer/custom-op.h>). The ops
 * then apply to models read with clinfer_model_read_with_config() and
 * compiled with this config. FALSE with an error naming @path when the
 * library is missing, lacks the function, has a wrong ABI version, its
 * registration fails or an op name clashes. */
gboolean clinfer_compile_config_add_custom_lib (ClinferCompileConfig *config,
    const char *path, GError **error);
/* Adds custom ops from code (each struct is copied). Same checks. */
gboolean clinfer_compile_config_add_custom_ops (ClinferCompileConfig *config,
    const ClinferCustomOp *const *ops, guint n_ops, GError **error);
/* Number of custom ops the config holds. */
guint clinfer_compile_config_get_n_custom_ops (const ClinferCompileConfig *config);
/* Per-node timing in requests (small overhead per node). */
void clinfer_compile_config_set_profiling (ClinferCompileConfig *config,
    gboolean enable);

/* The most bytes one tensor of the model, or all its intermediate tensors
 * together, may take; and the most one constant folding may create (the
 * smaller of this and 16 MiB). A model that needs more fails to compile
 * with CLINFER_ERROR_OUT_OF_MEMORY naming the node and the size, before
 * anything is allocated. 0 (the default) means the machine's physical
 * memory. get_memory_limit() returns the limit in effect. */
void clinfer_compile_config_set_memory_limit (ClinferCompileConfig *config,
    guint64 bytes);
guint64 clinfer_compile_config_get_memory_limit (
    const ClinferCompileConfig *config);

/* NULL-terminated list of the compile passes in the order they run. */
const char *const *clinfer_pass_get_names (void);
/* One-line description of pass @name, or NULL for an unknown name. */
const char *clinfer_pass_get_description (const char *name);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferCompileConfig, clinfer_compile_config_free)

G_END_DECLS
