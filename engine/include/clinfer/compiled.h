/* clinfer — a model compiled for one device. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/model.h>
#include <clinfer/config.h>

G_BEGIN_DECLS

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

CLINFER_API ClinferCompiled *clinfer_compile (ClinferModel *model,
    const ClinferCompileConfig *config, GError **error);
CLINFER_API ClinferCompiled *clinfer_compiled_ref (ClinferCompiled *compiled);
CLINFER_API void clinfer_compiled_unref (ClinferCompiled *compiled);

/* Name of the device the plan runs on, e.g. "CPU". */
CLINFER_API const char *clinfer_compiled_get_device_name (const ClinferCompiled *compiled);
/* Streams (groups of threads each running its own requests; see
 * ClinferPerformanceHint) and host threads per stream, as resolved. */
CLINFER_API int clinfer_compiled_get_streams (const ClinferCompiled *compiled);
CLINFER_API int clinfer_compiled_get_threads (const ClinferCompiled *compiled);
/* Requests to keep in flight (clinfer_request_start_async()) for the
 * most inferences per second: one per stream. */
CLINFER_API guint clinfer_compiled_get_optimal_requests (const ClinferCompiled *compiled);
CLINFER_API ClinferPerformanceHint clinfer_compiled_get_performance_hint (
    const ClinferCompiled *compiled);
CLINFER_API guint clinfer_compiled_get_n_inputs (const ClinferCompiled *compiled);
CLINFER_API guint clinfer_compiled_get_n_outputs (const ClinferCompiled *compiled);
CLINFER_API gboolean clinfer_compiled_get_input (const ClinferCompiled *compiled,
    guint index, ClinferPortInfo *info);
CLINFER_API gboolean clinfer_compiled_get_output (const ClinferCompiled *compiled,
    guint index, ClinferPortInfo *info);
CLINFER_API int clinfer_compiled_find_input (const ClinferCompiled *compiled, const char *name);
/* Bytes of the intermediate-tensor arena of the current plan (after
 * reuse by liveness), and the bytes the same tensors would take without
 * reuse. 0 before a plan exists (dynamic input shapes not yet seen). */
CLINFER_API gsize clinfer_compiled_get_arena_size (const ClinferCompiled *compiled);
CLINFER_API gsize clinfer_compiled_get_unplanned_size (const ClinferCompiled *compiled);
/* Number of executable nodes in the current plan (after folding and
 * fusion). */
CLINFER_API guint clinfer_compiled_get_n_steps (const ClinferCompiled *compiled);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferCompiled, clinfer_compiled_unref)

G_END_DECLS
