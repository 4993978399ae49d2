/* clinfer — remote contexts and remote tensors: memory that lives
 * on a device (an OpenCL buffer) or host memory presented the same way,
 * bound to requests without copies. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/compiled.h>

G_BEGIN_DECLS

/* Property keys of remote tensors and contexts (OpenVINO's names). */
#define CLINFER_REMOTE_PROP_SHARED_MEM_TYPE "SHARED_MEM_TYPE"
#define CLINFER_REMOTE_PROP_MEM_HANDLE "MEM_HANDLE"    /* cl_mem */
#define CLINFER_REMOTE_PROP_OCL_CONTEXT "OCL_CONTEXT"  /* cl_context */
#define CLINFER_REMOTE_PROP_OCL_QUEUE "OCL_QUEUE"      /* cl_command_queue */
#define CLINFER_REMOTE_PROP_HOST_PTR "HOST_PTR"        /* host address */
/* Values of SHARED_MEM_TYPE. */
#define CLINFER_REMOTE_MEM_OCL_BUFFER "OCL_BUFFER"
#define CLINFER_REMOTE_MEM_HOST_BUFFER "HOST_BUFFER"

/**
 * ClinferRemoteContext:
 *
 * An opened device that remote tensors belong to: for the GPU device an
 * OpenCL context and in-order queue (created by clinfer or the
 * application's own), for the CPU device host memory. Give it to
 * clinfer_compile_config_set_remote_context() to compile on it; every
 * compiled model has one (clinfer_compiled_get_remote_context()).
 * Refcounted, thread-safe.
 *
 * Properties: the GPU device has OCL_CONTEXT and OCL_QUEUE (handles as
 * G_VARIANT_TYPE_UINT64), the CPU device none.
 */
typedef struct _ClinferRemoteContext ClinferRemoteContext;

/* (transfer full) Opens @device ("CPU", "GPU", "GPU.N", "AUTO"). */
CLINFER_API ClinferRemoteContext *clinfer_remote_context_new (const char *device,
    GError **error);
/* (transfer full) Shares the application's cl_context (first device of
 * the context) or cl_command_queue (its device and context; must be
 * in-order). The handle is retained. */
CLINFER_API ClinferRemoteContext *clinfer_remote_context_new_from_cl_context (gpointer cl_context,
    GError **error);
CLINFER_API ClinferRemoteContext *clinfer_remote_context_new_from_cl_queue (gpointer cl_command_queue,
    GError **error);
CLINFER_API ClinferRemoteContext *clinfer_remote_context_ref (ClinferRemoteContext *context);
CLINFER_API void clinfer_remote_context_unref (ClinferRemoteContext *context);
/* "CPU", "GPU.0", ... */
CLINFER_API const char *clinfer_remote_context_get_device_name (const ClinferRemoteContext *context);
/* (transfer none) Property @key, or NULL. */
CLINFER_API GVariant *clinfer_remote_context_get_property (const ClinferRemoteContext *context,
    const char *key);
/* (transfer none) The cl_program of clinfer's embedded OpenCL kernel
 * file @name (kernels/<name>.cl after kernels/common.cl, e.g.
 * "preprocess") built for the context's device with @options (may be
 * NULL), so applications can run clinfer's helper kernels on the
 * context's OCL_QUEUE. Built once per context and cached on disk; valid
 * while the context lives. NULL with CLINFER_ERROR_INVALID_ARGUMENT on a
 * context without OpenCL, CLINFER_ERROR_DEVICE for an unknown @name or a
 * build failure (the build log in the message). */
CLINFER_API gpointer clinfer_remote_context_get_program (ClinferRemoteContext *context,
    const char *name, const char *options, GError **error);

/* Compile on @context (a reference is taken; NULL clears it). The
 * context's device replaces the config's device string. */
CLINFER_API void clinfer_compile_config_set_remote_context (ClinferCompileConfig *config,
    ClinferRemoteContext *context);
/* (transfer none) The context @compiled runs on. */
CLINFER_API ClinferRemoteContext *clinfer_compiled_get_remote_context (const ClinferCompiled *compiled);

/**
 * ClinferRemoteTensor:
 *
 * Element type, static shape, byte strides, the device it belongs to and a
 * property map describing the memory: SHARED_MEM_TYPE ("OCL_BUFFER" or
 * "HOST_BUFFER"), MEM_HANDLE (cl_mem) and OCL_CONTEXT (cl_context) for
 * OpenCL buffers, HOST_PTR where the memory is host memory. Handles are
 * G_VARIANT_TYPE_UINT64 values, strings G_VARIANT_TYPE_STRING.
 *
 * A remote tensor is not a #ClinferTensor: its memory may not be host
 * addressable, so it never hands out a data pointer. Copy with
 * clinfer_remote_tensor_read() / clinfer_remote_tensor_write().
 * Refcounted; the memory is released (or the caller's destroy notify
 * called) when the last reference goes.
 */
typedef struct _ClinferRemoteTensor ClinferRemoteTensor;

/* (transfer full) New device memory of @type and static @shape
 * (contiguous), zero-filled. */
CLINFER_API ClinferRemoteTensor *clinfer_remote_context_create_tensor (ClinferRemoteContext *context,
    ClinferElementType type, const ClinferShape *shape, GError **error);
/* (transfer full) Wraps the application's cl_mem (retained) of the
 * context's cl_context. Its CL_MEM_SIZE must cover the shape and strides
 * (@strides in bytes, NULL = contiguous). GPU contexts only. */
CLINFER_API ClinferRemoteTensor *clinfer_remote_tensor_new_from_cl_mem (ClinferRemoteContext *context,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer cl_mem, GError **error);
/* (transfer full) Wraps host memory without copying: on a GPU context as
 * an OpenCL buffer with CL_MEM_USE_HOST_PTR, on the CPU context as a
 * HOST_BUFFER. @destroy (may be NULL) gets @user_data when the tensor
 * dies. */
CLINFER_API ClinferRemoteTensor *clinfer_remote_tensor_new_from_host (ClinferRemoteContext *context,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer data, GDestroyNotify destroy,
    gpointer user_data, GError **error);
CLINFER_API ClinferRemoteTensor *clinfer_remote_tensor_ref (ClinferRemoteTensor *tensor);
CLINFER_API void clinfer_remote_tensor_unref (ClinferRemoteTensor *tensor);

CLINFER_API ClinferElementType clinfer_remote_tensor_get_element_type (const ClinferRemoteTensor *tensor);
CLINFER_API const ClinferShape *clinfer_remote_tensor_get_shape (const ClinferRemoteTensor *tensor);
CLINFER_API const int64_t *clinfer_remote_tensor_get_strides (const ClinferRemoteTensor *tensor);
CLINFER_API gboolean clinfer_remote_tensor_is_contiguous (const ClinferRemoteTensor *tensor);
CLINFER_API const char *clinfer_remote_tensor_get_device_name (const ClinferRemoteTensor *tensor);
/* (transfer none) The context the tensor belongs to. */
CLINFER_API ClinferRemoteContext *clinfer_remote_tensor_get_context (const ClinferRemoteTensor *tensor);
/* (transfer none) Property @key, or NULL when the tensor has none. */
CLINFER_API GVariant *clinfer_remote_tensor_get_property (const ClinferRemoteTensor *tensor,
    const char *key);
/* (transfer full) NULL-terminated property keys, sorted. */
CLINFER_API char **clinfer_remote_tensor_list_properties (const ClinferRemoteTensor *tensor);

/**
 * ClinferRemotePropertyRule:
 * @key: property that must be present
 * @values: NULL-terminated allowed values as text (strings verbatim,
 *   handles as "0x..." in lower-case hex); NULL or empty = any value
 */
typedef struct {
  const char *key;
  const char *const *values;
} ClinferRemotePropertyRule;

/* TRUE when @tensor is a remote tensor (not NULL) with every rule's key
 * and an allowed value; otherwise FALSE with
 * CLINFER_ERROR_INVALID_ARGUMENT saying which key is missing or which
 * value was found and which were allowed. */
CLINFER_API gboolean clinfer_remote_tensor_type_check (const ClinferRemoteTensor *tensor,
    const ClinferRemotePropertyRule *rules, gsize n_rules, GError **error);
/* Typed wrapper: the cl_mem of an OCL_BUFFER tensor (type_check first). */
CLINFER_API gpointer clinfer_remote_tensor_get_cl_mem (const ClinferRemoteTensor *tensor,
    GError **error);

/* Copies between the tensor and host tensor @host (same type and shape;
 * @host may be strided). Blocking. */
CLINFER_API gboolean clinfer_remote_tensor_read (ClinferRemoteTensor *tensor,
    ClinferTensor *host, GError **error);
CLINFER_API gboolean clinfer_remote_tensor_write (ClinferRemoteTensor *tensor,
    const ClinferTensor *host, GError **error);

/* (transfer full) A #ClinferTensor standing for @tensor (a reference is
 * taken), so the request's ordinary clinfer_request_set_input() and
 * clinfer_request_set_output() bind it, without a copy, like
 * clinfer_request_set_remote_input() / _output(). It has @tensor's type,
 * shape and strides but no host data: clinfer_tensor_get_data() returns
 * NULL and clinfer_tensor_copy() fails. */
CLINFER_API ClinferTensor *clinfer_remote_tensor_to_tensor (ClinferRemoteTensor *tensor);
/* (transfer none) The remote tensor @tensor stands for, or NULL for a
 * host tensor. */
CLINFER_API ClinferRemoteTensor *clinfer_tensor_get_remote (const ClinferTensor *tensor);

/* ---- requests ---- */

/* Binds remote tensor @tensor (a reference is taken) as input @name;
 * replaces a host tensor bound before and vice versa. The element type
 * and shape rules are those of clinfer_request_set_input(). On the
 * device that owns the memory it is used in place (no copy); otherwise
 * it is read through the host (counted as copies). */
CLINFER_API gboolean clinfer_request_set_remote_input (ClinferRequest *request,
    const char *name, ClinferRemoteTensor *tensor, GError **error);
CLINFER_API gboolean clinfer_request_set_remote_input_by_index (ClinferRequest *request,
    guint index, ClinferRemoteTensor *tensor, GError **error);
/* Makes output @index be written into @tensor (type and shape must be
 * the output's); clinfer_request_get_output() then returns NULL for it.
 * NULL unbinds. */
CLINFER_API gboolean clinfer_request_set_remote_output (ClinferRequest *request,
    guint index, ClinferRemoteTensor *tensor, GError **error);

/* Bytes the last inference copied host -> device and device -> host
 * (inputs, fallback nodes, outputs). Either pointer may be NULL. */
CLINFER_API void clinfer_request_get_copy_stats (ClinferRequest *request,
    guint64 *host_to_device, guint64 *device_to_host);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferRemoteContext, clinfer_remote_context_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferRemoteTensor, clinfer_remote_tensor_unref)

G_END_DECLS
