/* clinfer — compiling a model for a device and running inference requests. */
#pragma once

#include <clinfer/model.h>
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

/**
 * ClinferCompiled:
 *
 * A model compiled for one device: passes applied, kernels selected,
 * memory planned. Immutable and shareable between threads; each thread
 * runs its own #ClinferRequest. Refcounted.
 *
 * Compilation is specialised to concrete input shapes. When the model has
 * dynamic input dims, the plan is (re)built for the shapes a request sees
 * at its first inference with those shapes, and kept.
 */
typedef struct _ClinferCompiled ClinferCompiled;

ClinferCompiled *clinfer_compile (ClinferModel *model,
    const ClinferCompileConfig *config, GError **error);
ClinferCompiled *clinfer_compiled_ref (ClinferCompiled *compiled);
void clinfer_compiled_unref (ClinferCompiled *compiled);

/* Name of the device the plan runs on, e.g. "CPU". */
const char *clinfer_compiled_get_device_name (const ClinferCompiled *compiled);
guint clinfer_compiled_get_n_inputs (const ClinferCompiled *compiled);
guint clinfer_compiled_get_n_outputs (const ClinferCompiled *compiled);
gboolean clinfer_compiled_get_input (const ClinferCompiled *compiled,
    guint index, ClinferPortInfo *info);
gboolean clinfer_compiled_get_output (const ClinferCompiled *compiled,
    guint index, ClinferPortInfo *info);
int clinfer_compiled_find_input (const ClinferCompiled *compiled, const char *name);
/* Bytes of the intermediate-tensor arena of the current plan (after
 * reuse by liveness), and the bytes the same tensors would take without
 * reuse. 0 before a plan exists (dynamic input shapes not yet seen). */
gsize clinfer_compiled_get_arena_size (const ClinferCompiled *compiled);
gsize clinfer_compiled_get_unplanned_size (const ClinferCompiled *compiled);
/* Number of executable nodes in the current plan (after folding and
 * fusion). */
guint clinfer_compiled_get_n_steps (const ClinferCompiled *compiled);

/**
 * ClinferRequest:
 *
 * One inference at a time: owns its input bindings, intermediate arena
 * and outputs. Not thread-safe; create one per thread.
 */
typedef struct _ClinferRequest ClinferRequest;

ClinferRequest *clinfer_compiled_create_request (ClinferCompiled *compiled,
    GError **error);
void clinfer_request_free (ClinferRequest *request);

/* Binds @tensor (a reference is taken) as input @name. Type must match
 * the input; the shape must fit its static dims. A tensor standing for a
 * remote tensor (clinfer_remote_tensor_to_tensor()) is bound as that
 * remote tensor, in place. */
gboolean clinfer_request_set_input (ClinferRequest *request, const char *name,
    ClinferTensor *tensor, GError **error);
gboolean clinfer_request_set_input_by_index (ClinferRequest *request,
    guint index, ClinferTensor *tensor, GError **error);
/* Makes output @index land in @tensor (a reference is taken): a host
 * tensor of the output's element type and static shape, contiguous, into
 * which each inference writes that output (clinfer_request_get_output()
 * then returns @tensor); or a tensor standing for a remote tensor, written
 * on the device without a copy (get_output() then returns NULL for it).
 * NULL unbinds. */
gboolean clinfer_request_set_output (ClinferRequest *request, guint index,
    ClinferTensor *tensor, GError **error);
gboolean clinfer_request_set_output_by_name (ClinferRequest *request,
    const char *name, ClinferTensor *tensor, GError **error);
/* Bytes the last inference copied into host tensors bound with
 * clinfer_request_set_output(): 0 for outputs the device wrote straight
 * into them (the CPU device, for outputs its C kernels produce; oneDNN
 * steps and other devices write their own memory, then copied). */
guint64 clinfer_request_get_bound_output_copy_bytes (ClinferRequest *request);
gboolean clinfer_request_infer (ClinferRequest *request, GError **error);
/* (transfer none) Output @index of the last successful inference; valid
 * until the next clinfer_request_infer() or free. NULL if none. */
ClinferTensor *clinfer_request_get_output (ClinferRequest *request, guint index);
ClinferTensor *clinfer_request_get_output_by_name (ClinferRequest *request,
    const char *name);

/**
 * ClinferProfileEntry:
 * @node_name: node (for fused nodes, the first node's name)
 * @op_type: op type as executed (e.g. "Conv+Add+Relu")
 * @kernel: kernel implementation chosen by the device
 * @shape: output shape as text
 * @time_ns: time of the last inference in nanoseconds
 */
typedef struct {
  const char *node_name;
  const char *op_type;
  const char *kernel;
  const char *shape;
  gint64 time_ns;
} ClinferProfileEntry;

/* Per-step timing of the last inference when profiling was enabled in the
 * compile config; *n_entries is 0 otherwise. Owned by the request. */
const ClinferProfileEntry *clinfer_request_get_profile (ClinferRequest *request,
    guint *n_entries);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferCompileConfig, clinfer_compile_config_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferCompiled, clinfer_compiled_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferRequest, clinfer_request_free)

G_END_DECLS
