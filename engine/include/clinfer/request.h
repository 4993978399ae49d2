/* clinfer — inference requests of a compiled model and their profiles. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/compiled.h>

G_BEGIN_DECLS

/**
 * ClinferRequest:
 *
 * One inference at a time: owns its input bindings, intermediate arena
 * and outputs. Run it on the calling thread (clinfer_request_infer()) or
 * on the compiled model's stream workers (clinfer_request_start_async()).
 * Not thread-safe otherwise: one thread drives each request.
 */
typedef struct _ClinferRequest ClinferRequest;

CLINFER_API ClinferRequest *clinfer_compiled_create_request (ClinferCompiled *compiled,
    GError **error);
CLINFER_API void clinfer_request_free (ClinferRequest *request);

/* Binds @tensor (a reference is taken) as input @name. Type must match
 * the input; the shape must fit its static dims. A tensor standing for a
 * remote tensor (clinfer_remote_tensor_to_tensor()) is bound as that
 * remote tensor, in place. */
CLINFER_API gboolean clinfer_request_set_input (ClinferRequest *request, const char *name,
    ClinferTensor *tensor, GError **error);
CLINFER_API gboolean clinfer_request_set_input_by_index (ClinferRequest *request,
    guint index, ClinferTensor *tensor, GError **error);
/* Makes output @index land in @tensor (a reference is taken): a host
 * tensor of the output's element type and static shape, contiguous, into
 * which each inference writes that output (clinfer_request_get_output()
 * then returns @tensor); or a tensor standing for a remote tensor, written
 * on the device without a copy (get_output() then returns NULL for it).
 * NULL unbinds. */
CLINFER_API gboolean clinfer_request_set_output (ClinferRequest *request, guint index,
    ClinferTensor *tensor, GError **error);
CLINFER_API gboolean clinfer_request_set_output_by_name (ClinferRequest *request,
    const char *name, ClinferTensor *tensor, GError **error);
/* Bytes the last inference copied into host tensors bound with
 * clinfer_request_set_output(): 0 for outputs the device wrote straight
 * into them (the CPU device, for outputs its C kernels produce; oneDNN
 * steps and other devices write their own memory, then copied). */
CLINFER_API guint64 clinfer_request_get_bound_output_copy_bytes (ClinferRequest *request);
CLINFER_API gboolean clinfer_request_infer (ClinferRequest *request, GError **error);

/* Called on a stream worker thread when an asynchronous inference ends,
 * @error NULL on success (owned by the request: copy what you keep). The
 * request counts as running until the callback returns: it must not
 * start, wait for or free @request itself; signal another thread, which
 * calls clinfer_request_wait(). */
typedef void (*ClinferRequestCallback) (ClinferRequest *request,
    const GError *error, gpointer user_data);

/* Starts one inference on one of the compiled model's stream workers
 * (clinfer_compiled_get_streams(); the threads are made at the first
 * call) and returns at once. Several requests of one compiled model run
 * at once, one per stream; more wait in line. The bound inputs and
 * outputs must stay untouched until clinfer_request_wait() returns.
 * @callback may be NULL. FALSE with CLINFER_ERROR_INVALID_ARGUMENT when
 * the request is already running. */
CLINFER_API gboolean clinfer_request_start_async (ClinferRequest *request,
    ClinferRequestCallback callback, gpointer user_data, GError **error);
/* Waits for the inference started with clinfer_request_start_async() and
 * gives its result (TRUE at once when none is running). The outputs are
 * then read as after clinfer_request_infer(). clinfer_request_infer()
 * on a running request fails; clinfer_request_free() waits for it. */
CLINFER_API gboolean clinfer_request_wait (ClinferRequest *request,
    GError **error);
/* (transfer none) Output @index of the last successful inference; valid
 * until the next clinfer_request_infer() or free. NULL if none. */
CLINFER_API ClinferTensor *clinfer_request_get_output (ClinferRequest *request, guint index);
CLINFER_API ClinferTensor *clinfer_request_get_output_by_name (ClinferRequest *request,
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
CLINFER_API const ClinferProfileEntry *clinfer_request_get_profile (ClinferRequest *request,
    guint *n_entries);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferRequest, clinfer_request_free)

G_END_DECLS
