/* clinfer — the CPU device's oneDNN fast path (built with -Donednn): which
 * steps of a plan run as oneDNN primitives, the layout of every slot
 * between them, and the per-request state (memory objects, stream,
 * scratch). Used by cpu-device.c only. */
#pragma once

#include "devices/device.h"

G_BEGIN_DECLS

typedef struct _ClinferOnednnPlan ClinferOnednnPlan;
typedef struct _ClinferOnednnRun ClinferOnednnRun;

/* FALSE when the environment variable CLINFER_CPU_ONEDNN is "0" (then
 * every step runs the portable C kernels, for tests and comparisons). */
gboolean clinfer_onednn_enabled (void);

/* Claims the steps of @plan that oneDNN runs, picks the layout of every
 * slot (blocked between claimed steps, plain at boundaries), creates the
 * primitives and reorders the weights; enlarges the blocked slots and
 * re-plans the arena. NULL with @error on a failure, NULL without @error
 * when no step was claimed. Sets the claimed steps' kernel names. */
ClinferOnednnPlan *clinfer_onednn_plan_new (ClinferDevice *device,
    ClinferPlan *plan, const char *origin, GError **error);
void clinfer_onednn_plan_free (ClinferOnednnPlan *oplan);
/* TRUE when step @step of the plan runs on oneDNN. */
gboolean clinfer_onednn_plan_owns_step (const ClinferOnednnPlan *oplan,
    guint step);

/* Per-request state: memory objects bound to @slot_tensors (the arena
 * views and constants; input slots are bound at run time), a stream and
 * the scratch (temporaries of reorders and the primitives' scratchpads). */
ClinferOnednnRun *clinfer_onednn_run_new (ClinferOnednnPlan *oplan,
    ClinferTensor **slot_tensors, GError **error);
void clinfer_onednn_run_free (ClinferOnednnRun *run);
/* Runs step @step (owned by the plan) on @slot_tensors. */
gboolean clinfer_onednn_step_run (ClinferOnednnRun *run, guint step,
    ClinferTensor **slot_tensors, GError **error);

G_END_DECLS
