/* clinfer — private definitions of the runtime's public objects: model,
 * compile config and compiled model (the request is private to
 * runtime/request.c). */
#pragma once

#include <clinfer/clinfer.h>
#include "plan/plan.h"
#include "ops/custom-ops.h"

G_BEGIN_DECLS

struct _ClinferCompileConfig {
  char *device;
  int threads;
  int streams;               /* 0: from the hint */
  ClinferPerformanceHint hint;
  gboolean allow_fallback;
  gboolean profiling;
  char *config_file;
  GPtrArray *disabled_passes;
  GPtrArray *custom_libs;    /* paths, in the order added */
  ClinferOpSet *custom_ops;  /* custom CPU ops (engine/ops/custom-ops.c) */
  ClinferRemoteContext *remote_context;  /* NULL: open config->device */
  guint64 memory_limit;      /* bytes; 0: the machine's physical memory */
};

/* Bytes of physical memory of the machine (sysconf), or 2^40 when
 * unknown: the default memory limit of a compile. */
guint64 clinfer_physical_memory_size (void);

struct _ClinferModel {
  gint ref_count;
  char *path;
  ClinferGraph *graph;       /* as read; ops resolved */
  ClinferOpSet *ops;         /* extensions its nodes resolved to, or NULL */
  char *config_file;         /* config file whose layers @ops holds, or NULL */
};

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
  int streams, threads;      /* resolved: streams, threads per stream */
  GMutex pool_lock;          /* guards @pool's creation */
  GThreadPool *pool;         /* @streams workers of async requests */
};

/* Runs @request's inference on one of @compiled's stream workers
 * (created at the first call); runtime/request.c's async worker. */
gboolean clinfer_compiled_push_async (ClinferCompiled *compiled,
    ClinferRequest *request, GError **error);
/* The async worker's body (runtime/request.c). */
void clinfer_request_run_async (ClinferRequest *request);

ClinferPlan *clinfer_compiled_get_plan (ClinferCompiled *compiled,
    const ClinferShape *input_shapes, GError **error);

G_END_DECLS
