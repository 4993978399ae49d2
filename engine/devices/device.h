/* clinfer — the device seam: the private function-pointer table every
 * device implements (CPU in devices/cpu/cpu-device.c, OpenCL in
 * devices/opencl/), the per-inference I/O a request hands a device, and the
 * internals of remote contexts and remote tensors (devices/remote-tensor.c).
 * The runtime includes this header, never a device's own headers (nor
 * OpenCL's); what it needs of a particular device is an entry of this
 * table, never a comparison of classes.
 *
 * Life cycle (engine/runtime/compiled.c, request.c):
 *   open          per compiled model (or remote context); may share the
 *                 runtime objects of another opened device (@share)
 *   supports_step per step of a new plan; a step the device declines runs
 *                 on the CPU kernels (fallback) when the config allows it
 *   prepare_plan  after the generic plan (slots, steps, memory plan, CPU
 *                 kernels of fallback steps) exists: upload constants,
 *                 build programs and kernels; state in plan->device_data
 *   create_run    per request and plan: buffers, kernel objects
 *   run           per inference: bind inputs, run the steps (fallback
 *                 steps on host copies), hand out outputs
 */
#pragma once

#include "plan/plan.h"
#include "plan/preprocess-host.h"
#include "ops/custom-ops.h"
#include <clinfer/remote-tensor.h>
#include <clinfer/device.h>

G_BEGIN_DECLS

typedef struct _ClinferDeviceClass ClinferDeviceClass;

/* What opening a device takes from the compile config (the runtime
 * fills it in). */
typedef struct {
  int threads;               /* 0: one per core */
  const char *config_file;   /* custom-layer XML, or NULL */
} ClinferDeviceOptions;
typedef struct _ClinferDeviceRun ClinferDeviceRun;
typedef struct _ClinferDevicePreprocess ClinferDevicePreprocess;

/* A device's own frame pre-processing (clinfer/preprocess.h), made by the
 * class entry preprocess_new from the host tables, which it keeps
 * pointing to (the runtime frees them after @free). */
struct _ClinferDevicePreprocess {
  /* Queues the pre-processing of @frame (checked against the tables'
   * frame info) into @input, a remote tensor of the context's
   * (clinfer_preprocess_input_shape(), or a batch of them: @item selects
   * one), holding what it needs of the frame until done; adds the frame
   * bytes moved to the device to *copied. */
  gboolean (*run) (ClinferDevicePreprocess *pp, ClinferRemoteTensor *input,
      guint item, const ClinferFrame *frame, guint64 *copied, GError **error);
  /* Waits for the last run and lets go of its frame. */
  void (*done) (ClinferDevicePreprocess *pp);
  void (*free) (ClinferDevicePreprocess *pp);
};

/**
 * ClinferRunIO:
 *
 * What a request gives one inference and gets back. For model input i
 * exactly one of inputs[i] (host, contiguous) and remote_inputs[i] is set.
 */
typedef struct {
  ClinferTensor *const *inputs;
  ClinferRemoteTensor *const *remote_inputs;
  /* Per output: the caller's remote tensor to write, or NULL. */
  ClinferRemoteTensor *const *remote_outputs;
  /* Per output: the caller's host tensor (contiguous, the output's static
   * type and shape) bound with clinfer_request_set_output(), or NULL. A
   * device that can write the output straight into it does, and returns
   * it in outputs[i]; otherwise the request copies. May be NULL. */
  ClinferTensor *const *bound_outputs;
  /* Filled by run: a new reference per output without a remote tensor,
   * valid until the next inference on the same run. */
  ClinferTensor **outputs;
  /* ClinferProfileEntry per step; NULL when profiling is off. */
  GArray *profile;
  /* Bytes copied between host and device memory, added to by run. */
  guint64 bytes_to_device, bytes_to_host;
} ClinferRunIO;

/* Base of every device's per-request run state (first member). */
struct _ClinferDeviceRun {
  ClinferDevice *device;
  ClinferPlan *plan;
};

struct _ClinferDevice {
  const ClinferDeviceClass *klass;
  gint ref_count;
  char *name;                /* resolved: "CPU", "GPU.0" */
  char *description;         /* one line for logs, e.g. platform: device */
  gsize arena_align;         /* byte alignment of arena offsets (>= 64) */
  int threads;               /* OpenMP threads of CPU kernels */
  ClinferCpuIsa isa;         /* ISA of CPU kernels */
  GHashTable *properties;    /* char* -> GVariant*, remote context props */
};

struct _ClinferDeviceClass {
  const char *name;          /* "CPU", "GPU" */
  /* Opens @device ("CPU", "GPU", "GPU.N"; "AUTO" is resolved by core)
   * with @options (may be NULL: the defaults). With @share, uses @share's runtime objects
   * (same class) instead of creating new ones. */
  ClinferDevice *(*open) (const char *device, ClinferDevice *share,
      const ClinferDeviceOptions *options, GError **error);
  void (*close) (ClinferDevice *device);
  /* TRUE when the device runs @step itself; FALSE with *reason (static
   * or device-owned text) otherwise. */
  gboolean (*supports_step) (ClinferDevice *device, const ClinferPlan *plan,
      const ClinferStep *step, const char **reason);
  gboolean (*prepare_plan) (ClinferDevice *device, ClinferPlan *plan,
      const char *origin, GError **error);
  void (*free_plan) (ClinferDevice *device, ClinferPlan *plan);
  ClinferDeviceRun *(*create_run) (ClinferDevice *device, ClinferPlan *plan,
      GError **error);
  void (*free_run) (ClinferDeviceRun *run);
  gboolean (*run) (ClinferDeviceRun *run, ClinferRunIO *io, GError **error);
  /* TRUE when the device replaces op type @op_type by its own (custom)
   * kernel; the fusion passes then leave the graph alone. May be NULL. */
  gboolean (*handles_op_type) (ClinferDevice *device, const char *op_type);
  /* Remote tensors on this device: new memory (@host NULL, @handle NULL),
   * wrapped host memory (@host) or a wrapped native handle (@handle). */
  ClinferRemoteTensor *(*create_remote) (ClinferRemoteContext *context,
      ClinferElementType type, const ClinferShape *shape,
      const int64_t *strides, gpointer host, GDestroyNotify destroy,
      gpointer user_data, gpointer handle, GError **error);
  /* The compile pass fuse-eltwise-chain runs for this device: it runs a
   * com.clinfer EltwiseChain in one kernel (cheaper than a launch per
   * node). */
  gboolean fuses_eltwise_chains;
  /* The device runs com.clinfer LayerNormStd in a kernel of its own (not
   * as a host fallback step): the fuse-layernorm pass makes them. */
  gboolean runs_layer_norm_std;
  /* The device has no Gemm kernel but fast MatMul (+ bias Add) ones: the
   * gemm-to-matmul pass rewrites Gemm nodes. */
  gboolean lowers_gemm_to_matmul;
  /* The device's fast convolutions are 2-D: the conv1d-to-2d pass
   * rewrites 1-D ones. */
  gboolean lowers_conv1d_to_2d;
  /* The device runs com.clinfer Swish (x * Sigmoid (x)) in a kernel of
   * its own: the fuse-swish pass makes them. */
  gboolean runs_swish;
  /* Streams of the throughput hint: 0 for a device whose kernels run on
   * the host cores (they are split into streams, threads per stream);
   * N > 0 for a device with its own processors (N requests in flight). */
  int throughput_streams;
  /* clinfer_remote_context_get_program(): the built OpenCL program
   * (cl_program) of kernels/@name.cl for @options on @context's device.
   * NULL: the device has no OpenCL programs. */
  gpointer (*get_program) (ClinferRemoteContext *context, const char *name,
      const char *options, GError **error);
  /* clinfer_device_add_config_file_ops() for the custom kernels this
   * device class runs (the OpenCL custom-layer XML). May be NULL. */
  gboolean (*add_config_file_ops) (const char *config_file, ClinferOpSet *set,
      GError **error);
  /* clinfer_preprocess_new() on a model compiled on @context: the
   * device's pre-processing of frames described by @tables. NULL entry:
   * the host rows (plan/preprocess-host.c) write a host tensor. */
  ClinferDevicePreprocess *(*preprocess_new) (ClinferRemoteContext *context,
      const ClinferPreprocessHost *tables, GError **error);
};

/* Base initialisation for a device's open(). */
void clinfer_device_init (ClinferDevice *device, const ClinferDeviceClass *klass,
    const char *name, const char *description);
ClinferDevice *clinfer_device_ref (ClinferDevice *device);
void clinfer_device_unref (ClinferDevice *device);
/* Adds an op def to @set for every custom OpenCL layer of @config_file
 * whose name is not a built-in op, so models using such ops can be read
 * and planned: the add_config_file_ops of the first device class that
 * has one (OpenCL: devices/opencl/ocl-custom-ops.c). FALSE with an
 * error naming the file (and layer) when it cannot be loaded, or when
 * no device class takes config files (clinfer built without OpenCL). */
gboolean clinfer_device_add_config_file_ops (const char *config_file,
    ClinferOpSet *set, GError **error);
/* Opens @device ("CPU", "GPU", "GPU.N", "AUTO", any case) through the
 * class that handles it; @share as in open (ignored when of another
 * class). Unknown names fail with CLINFER_ERROR_DEVICE. */
ClinferDevice *clinfer_device_open (const char *device, ClinferDevice *share,
    const ClinferDeviceOptions *options, GError **error);

extern const ClinferDeviceClass clinfer_cpu_device_class;
#ifdef CLINFER_HAVE_OPENCL
extern const ClinferDeviceClass clinfer_opencl_device_class;
/* OpenCL device descriptions for clinfer_device_list(). */
void clinfer_opencl_list_devices (GPtrArray *out);
/* TRUE when some OpenCL platform has a GPU-type device (for AUTO). */
gboolean clinfer_opencl_have_gpu (void);
#endif

/* ---- remote contexts and tensors (engine/devices/remote-tensor.c) ---- */

struct _ClinferRemoteContext {
  gint ref_count;
  ClinferDevice *device;     /* a reference */
};

/* (transfer full) A context on @device (a reference is taken). */
ClinferRemoteContext *clinfer_remote_context_new_for_device (ClinferDevice *device);

typedef struct {
  const char *mem_type;      /* SHARED_MEM_TYPE value */
  /* Host address of the memory's first byte for reading (@write FALSE)
   * or writing; adds to *copied the bytes moved to make it visible. */
  gpointer (*map) (ClinferRemoteTensor *tensor, gboolean write,
      guint64 *copied, GError **error);
  /* Ends a map; adds to *copied the bytes moved back. */
  void (*unmap) (ClinferRemoteTensor *tensor, gpointer ptr, gboolean write,
      guint64 *copied);
  /* Releases @impl. */
  void (*free_impl) (ClinferRemoteTensor *tensor);
} ClinferRemoteTensorClass;

struct _ClinferRemoteTensor {
  gint ref_count;
  const ClinferRemoteTensorClass *klass;
  ClinferRemoteContext *context;   /* a reference */
  ClinferElementType type;
  ClinferShape shape;
  int64_t strides[CLINFER_MAX_RANK];
  gsize span;                /* bytes from the first to past the last element */
  GHashTable *properties;    /* char* -> GVariant* (sunk) */
  gpointer impl;             /* the device's data */
  gpointer host;             /* host address when host memory, else NULL */
  GDestroyNotify destroy;
  gpointer user_data;
};

/* (transfer full) A remote tensor shell (checks type, static shape and
 * strides; computes @span); the device sets impl, host and properties. */
ClinferRemoteTensor *clinfer_remote_tensor_alloc (const ClinferRemoteTensorClass *klass,
    ClinferRemoteContext *context, ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, GError **error);
/* Sets property @key (takes a floating @value). */
void clinfer_remote_tensor_set_property (ClinferRemoteTensor *tensor,
    const char *key, GVariant *value);
/* clinfer_remote_tensor_read() / write() adding the bytes the map moved
 * between device and host memory to *copied. */
gboolean clinfer_remote_tensor_read_counted (ClinferRemoteTensor *tensor,
    ClinferTensor *host, guint64 *copied, GError **error);
gboolean clinfer_remote_tensor_write_counted (ClinferRemoteTensor *tensor,
    const ClinferTensor *host, guint64 *copied, GError **error);
/* Copies @src into @dst, element by element when the byte strides differ
 * (same type and shape; rank <= 8). */
void clinfer_copy_strided (guint8 *dst, const int64_t *dst_strides,
    const guint8 *src, const int64_t *src_strides, const ClinferShape *shape,
    gsize element_size);

G_END_DECLS
