/* clinfer — the execution plan: slots (every tensor of a compiled graph
 * and where it lives), steps (nodes in run order with their kernels),
 * memory planning (memplan.c) and the host executor every device shares
 * (host-exec.c, the CPU kernels in cpu-*.c). Built by the runtime
 * (runtime/compiled.c); each device prepares and runs it. The plan knows
 * its device only as an opaque handle. */
#pragma once

#include "core/graph.h"
#include "ops/op.h"
#include "plan/cpu-kernels.h"
#include <clinfer/request.h>

G_BEGIN_DECLS

/* The device a plan was prepared for (engine/devices/device.h). */
typedef struct _ClinferDevice ClinferDevice;

typedef enum {
  CLINFER_SLOT_CONSTANT,     /* value owned by the plan */
  CLINFER_SLOT_INPUT,        /* bound by the request */
  CLINFER_SLOT_ARENA,        /* planned region of the request's arena */
  CLINFER_SLOT_DYNAMIC,      /* shape known only at run time: allocated */
} ClinferSlotKind;

typedef struct {
  ClinferSlotKind kind;
  ClinferElementType type;
  ClinferShape shape;
  ClinferTensor *value;      /* CONSTANT */
  guint input_index;         /* INPUT */
  gsize offset, bytes;       /* ARENA */
  int first_step, last_step; /* liveness, -1 = before the first step */
  gboolean is_output;        /* kept alive to the end */
  /* ARENA, set by a device before planning: this slot lives inside slot
   * @alias_of's region, @alias_offset bytes in (chains allowed). The
   * planner places such a group as one region alive over the union of
   * its members' lifetimes; each member's @offset is then absolute. */
  gboolean aliased;
  guint alias_of;
  gsize alias_offset;
} ClinferSlot;

typedef struct {
  ClinferNode *node;
  guint *in_slots;           /* node->n_inputs entries, G_MAXUINT = absent */
  guint *out_slots;          /* node->n_outputs entries */
  ClinferCpuKernel kernel;   /* CPU kernel (CPU device or fallback);
                              * run == NULL: reference eval */
  gboolean dynamic;          /* re-infer shapes at run time */
  gboolean fallback;         /* the device declined: CPU kernel */
  char *device_kernel;       /* device kernel name for profiles, or NULL */
  char *op_label;            /* e.g. "Conv+Add+Relu" */
  char *shape_label;
} ClinferStep;

typedef struct {
  ClinferGraph *graph;       /* specialised, optimised copy (owned) */
  ClinferShape *input_shapes;  /* the shapes this plan was built for */
  guint n_inputs;
  GArray *slots;             /* ClinferSlot */
  GArray *steps;             /* ClinferStep */
  guint *output_slots;
  guint n_outputs;
  gsize arena_size;
  gsize unplanned_size;
  gsize arena_align;         /* alignment of arena offsets, 0 = 64 */
  gboolean arena_unshared;   /* no two tensors share arena bytes (a
                              * device sets it, then assigns again) */
  /* A second arena layout a device may run the plan with instead (per
   * ARENA slot an offset; the CPU device: every tensor unshared), or
   * NULL; alt_arena_size is its size. */
  gsize *alt_offsets;
  gsize alt_arena_size;
  ClinferDevice *device;     /* device the plan was prepared for (a ref;
                              * the runtime frees the plan through it) */
  gpointer device_data;      /* freed by the device's free_plan */
} ClinferPlan;

/* Assigns arena offsets to ARENA slots by liveness (greedy best fit,
 * largest first; an alias group is placed as one region), or one region
 * after the other with plan->arena_unshared. Sets plan->arena_size and
 * plan->unplanned_size. */
void clinfer_plan_assign_memory (ClinferPlan *plan);
/* Whole-buffer placement, for a device whose tensors each start a buffer
 * (the OpenCL device: no sub-buffers of one arena): every non-empty ARENA
 * slot goes into a buffer no slot alive at the same time uses, largest
 * slots first, each into the smallest such buffer, else a new one (sized
 * by its first, largest, slot). Sets @buffer_of[slot] (G_MAXUINT: none)
 * and returns the buffers' sizes (gsize). */
GArray *clinfer_plan_assign_buffers (const ClinferPlan *plan,
    guint *buffer_of);

/* ---- the host executor (plan/host-exec.c): the CPU kernels of a step,
 * run by the CPU device and by other devices' fallback steps ---- */

/* Picks the CPU kernel of @step (fast kernel or reference eval). */
gboolean clinfer_cpu_step_prepare (ClinferStep *step, ClinferCpuIsa isa,
    const char *device_name, const char *origin, GError **error);
/* TRUE when @node has a CPU implementation at all. */
gboolean clinfer_cpu_node_runnable (const ClinferNode *node);
/* Runs @step on host tensors @slot_tensors (one per plan slot; inputs
 * present, static outputs allocated). Dynamic steps re-infer their output
 * shapes and allocate those outputs in @slot_tensors. */
gboolean clinfer_cpu_step_run (const ClinferPlan *plan, ClinferStep *step,
    ClinferTensor **slot_tensors, const char *origin, GError **error);
/* Appends a profile entry for @step taking @ns. */
void clinfer_profile_record (GArray *profile, const ClinferStep *step,
    gint64 ns);

G_END_DECLS
