/* clinfer — private definitions of the public objects (model, config,
 * compiled model, request) and the execution plan. */
#pragma once

#include <clinfer/clinfer.h>
#include "core/graph.h"
#include "ops/op.h"
#include "core/custom-ops.h"
#include "devices/cpu/cpu-kernels.h"

G_BEGIN_DECLS

/* An opened device and its per-request state (engine/devices/device.h). */
typedef struct _ClinferDevice ClinferDevice;
typedef struct _ClinferDeviceRun ClinferDeviceRun;
typedef struct _ClinferRemoteContext ClinferRemoteContext;

struct _ClinferCompileConfig {
  char *device;
  int threads;
  gboolean allow_fallback;
  gboolean profiling;
  char *config_file;
  GPtrArray *disabled_passes;
  GPtrArray *custom_libs;    /* paths, in the order added */
  ClinferOpSet *custom_ops;  /* custom CPU ops (engine/core/custom-ops.c) */
  ClinferRemoteContext *remote_context;  /* NULL: open config->device */
  guint64 memory_limit;      /* bytes; 0: the machine's physical memory */
};

/* Bytes of physical memory of the machine (sysconf), or 2^40 when
 * unknown: the default memory limit of a compile. */
guint64 clinfer_physical_memory_size (void);

/* A tensor standing for a remote tensor (clinfer_remote_tensor_to_tensor()):
 * no data; @remote is released with @unref when it dies. */
ClinferTensor *clinfer_tensor_new_remote_view (ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, gpointer remote,
    GDestroyNotify unref);
gpointer clinfer_tensor_get_remote_view (const ClinferTensor *tensor);

struct _ClinferModel {
  gint ref_count;
  char *path;
  ClinferGraph *graph;       /* as read; ops resolved */
  ClinferOpSet *ops;         /* extensions its nodes resolved to, or NULL */
  char *config_file;         /* config file whose layers @ops holds, or NULL */
};

/* ---- execution plan (engine/core/compiled.c, memplan.c) ---- */

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
  ClinferDevice *device;     /* device the plan was prepared for (a ref) */
  gpointer device_data;      /* freed by the device's free_plan */
} ClinferPlan;

void clinfer_plan_free (ClinferPlan *plan);
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

struct _ClinferCompiled {
  gint ref_count;
  ClinferModel *model;
  ClinferCompileConfig *config;
  char *device_name;
  ClinferDevice *device;     /* opened for this compiled model */
  ClinferRemoteContext *context;  /* the context it runs on */
  GMutex lock;               /* guards plans */
  GPtrArray *plans;          /* ClinferPlan*, most recent first */
  /* Port info of the model, with dims fixed where the plan fixed them. */
  GArray *inputs, *outputs;  /* ClinferPortInfo */
  ClinferOpSet *ops;         /* the config's and the model's extensions */
};

ClinferPlan *clinfer_compiled_get_plan (ClinferCompiled *compiled,
    const ClinferShape *input_shapes, GError **error);

G_END_DECLS
