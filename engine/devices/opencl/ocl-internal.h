/* clinfer — private definitions of the OpenCL device: the shared runtime
 * objects (platform device, context, queue, program cache), the compiled
 * form of a step (kernel launches with their arguments), and the op
 * factories' builder API. Only engine/devices/opencl/ includes this. */
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "devices/device.h"

G_BEGIN_DECLS

/* Most elements a tensor of the device may have: the kernels index with
 * 32-bit ints (2^30 leaves room for offsets and strides). */
#define CLINFER_OCL_MAX_ELEMENTS (G_MAXINT32 / 2)
/* TRUE when @shape (static) is within CLINFER_OCL_MAX_ELEMENTS. */
static inline gboolean
clinfer_ocl_shape_fits (const ClinferShape *shape)
{
  return clinfer_shape_n_elements (shape) <= CLINFER_OCL_MAX_ELEMENTS;
}

/* The class table's get_program (ocl-remote.c) and add_config_file_ops
 * (ocl-custom-ops.c). */
gpointer clinfer_ocl_remote_program (ClinferRemoteContext *context,
    const char *name, const char *options, GError **error);
gboolean clinfer_ocl_custom_add_ops (const char *config_file, ClinferOpSet *set,
    GError **error);

/* ---- errors (ocl-platform.c) ---- */

const char *clinfer_ocl_error_name (cl_int err);
/* FALSE with CLINFER_ERROR_DEVICE "@what: CL_... (code)" when @err is not
 * CL_SUCCESS. */
gboolean clinfer_ocl_check (cl_int err, const char *what, GError **error);
/* GDestroyNotify wrappers of clReleaseProgram / clReleaseMemObject. */
void clinfer_ocl_release_program (gpointer program);
void clinfer_ocl_release_mem (gpointer mem);

/* ---- the shared runtime objects of one OpenCL device ---- */

typedef struct _OclCore {
  gint ref_count;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;    /* in-order */
  int index;                 /* N of GPU.N; -1 when not enumerated */
  char *name;                /* "GPU.0" */
  char *device_name, *platform_name, *driver_version, *device_version;
  gboolean unified_memory;   /* CL_DEVICE_HOST_UNIFIED_MEMORY */
  gboolean fp16;
  gboolean fp64;             /* cl_khr_fp64 */
  gsize base_align;          /* bytes, power of two, >= 64 */
  cl_ulong max_alloc;
  gsize max_work_group;
  cl_device_type type;       /* CL_DEVICE_TYPE_GPU, _CPU, _ACCELERATOR */
  cl_ulong local_mem;        /* bytes of __local memory per work-group */
  /* Kernel shapes (ocl-platform.c, clinfer_ocl_core_gpu_shaped ()): TRUE
   * on GPUs and accelerators (one or few outputs per work-item, large
   * work-groups, local-memory tiles), FALSE on CPU implementations (many
   * outputs per work-item, small work-groups the compiler vectorises
   * across). $CLINFER_OPENCL_KERNELS=gpu|cpu overrides it. */
  gboolean gpu_shaped;
  GMutex lock;               /* guards @programs */
  GHashTable *programs;      /* "family\noptions" -> cl_program */
} OclCore;

/* Opens "GPU" / "GPU.N". */
OclCore *clinfer_ocl_core_open (const char *device, GError **error);
/* Shares an application's cl_context (first device) or in-order queue. */
OclCore *clinfer_ocl_core_new_from_context (cl_context context, GError **error);
OclCore *clinfer_ocl_core_new_from_queue (cl_command_queue queue, GError **error);
OclCore *clinfer_ocl_core_ref (OclCore *core);
void clinfer_ocl_core_unref (OclCore *core);
/* TRUE when @core has the local memory and work-group size that the
 * 16x16 local-memory tile kernels (conv_1x1_tiled, matmul_tiled) need. */
gboolean clinfer_ocl_core_can_tile16 (const OclCore *core);
/* One line: "GPU.0: <device> (<platform>, driver <version>)". */
char *clinfer_ocl_core_describe (const OclCore *core);

/* ---- programs (ocl-program.c) ---- */

/* Embedded kernel sources (generated from kernels/ at build time). */
typedef struct {
  const char *name;          /* file name without .cl */
  const char *source;
} OclKernelSource;
extern const OclKernelSource clinfer_ocl_kernel_sources[];
const char *clinfer_ocl_kernel_source (const char *family);

/* (transfer none) The program of kernel family @family (kernels/<family>.cl
 * after kernels/common.cl) built with @options; built once per core, and
 * cached on disk as a binary. */
cl_program clinfer_ocl_program_get (OclCore *core, const char *family,
    const char *options, GError **error);
/* (transfer full) Builds @source with @options (through the disk cache);
 * @label names it in errors (e.g. the custom layer's XML file). */
cl_program clinfer_ocl_program_build (OclCore *core, const char *source,
    const char *options, const char *label, GError **error);

/* Disk cache counters since start (tests: a second compile hits). */
typedef struct {
  guint hits, misses, corrupt, stores;
} OclCacheStats;
void clinfer_ocl_cache_get_stats (OclCacheStats *stats);
/* $CLINFER_CACHE_DIR, else <XDG cache>/clinfer/opencl. */
char *clinfer_ocl_cache_dir (void);

/* ---- compiled steps ---- */

typedef enum {
  OCL_ARG_INPUT,             /* buffer of the step's input port */
  OCL_ARG_OUTPUT,            /* buffer of the step's output port */
  OCL_ARG_MEM,               /* a buffer the step owns (weights, params) */
  OCL_ARG_INT,
  OCL_ARG_FLOAT,
  OCL_ARG_INT4,
  OCL_ARG_INT8,
  OCL_ARG_LOCAL,             /* __local memory of @bytes */
  OCL_ARG_SCRATCH,           /* per-request buffer @port of the step */
  OCL_ARG_RAW,               /* @bytes (<= 32) of @v as they are */
} OclArgKind;

typedef struct {
  OclArgKind kind;
  guint port;
  cl_mem mem;                /* not owned: see OclStepImpl.mems */
  cl_int i;
  cl_float f;
  cl_int v[8];
  gsize bytes;
} OclArg;

typedef enum {
  OCL_LAUNCH_KERNEL,
  OCL_LAUNCH_COPY,           /* clEnqueueCopyBuffer input -> output */
} OclLaunchKind;

typedef struct {
  OclLaunchKind kind;
  cl_program program;        /* not owned (core cache or step) */
  char *kernel_name;
  GArray *args;              /* OclArg */
  cl_uint work_dim;
  size_t gws[3], lws[3];
  gboolean has_lws;
  /* COPY */
  guint src_port, dst_port;
  size_t src_offset, dst_offset, bytes;
  const struct _OclCore *core;  /* not owned: tile0 sizing */
} OclLaunch;

typedef struct {
  char *name;                /* kernel name for profiles */
  GPtrArray *launches;       /* OclLaunch*, in order */
  GPtrArray *mems;           /* cl_mem the step owns */
  GPtrArray *programs;       /* cl_program the step owns (custom kernels) */
  guint64 used_inputs;       /* bit i: input port i is read on the device */
  GArray *scratch;           /* gsize: per-request buffers the step needs */
  /* Output extents that depend on the input values (NonZero, Compress):
   * launches [0, count_launches) write the extent as a cl_int at the start
   * of scratch buffer 0; the executor reads it back (4 bytes, counted),
   * gives it to every dynamic output dim, then runs the other launches. */
  guint count_launches;
} OclStepImpl;

/* TRUE when input @port of @impl is read by a launch (ports >= 64 are
 * assumed read). */
#define OCL_INPUT_USED(impl, port) \
  ((port) >= 64 || ((impl)->used_inputs >> (port)) & 1)

/* ---- the device ---- */

typedef struct _OclCustomLayers OclCustomLayers;

typedef struct {
  ClinferDevice base;
  OclCore *core;
  OclCustomLayers *custom;   /* from the config file, or NULL */
} OclDevice;

/* Per plan: the steps' implementations and the constant buffers. */
typedef struct {
  OclStepImpl **steps;       /* per plan step; NULL for fallback steps */
  guint n_steps;
  cl_mem *const_mems;        /* per plan slot: uploaded constant or NULL */
  guint n_slots;
  /* The device buffers of the ARENA slots (clinfer_plan_assign_buffers ():
   * whole buffers, no sub-buffers; NVIDIA's driver crashed releasing
   * overlapping sub-buffers of one arena, issue #18): per slot its buffer
   * or G_MAXUINT, and the buffers' sizes (gsize). Each run allocates them. */
  guint *buffer_of;
  GArray *buffer_sizes;
} OclPlan;

/* ---- builder API for the op factories (ocl-builder.c) ---- */

typedef struct {
  OclDevice *dev;
  const ClinferPlan *plan;
  const ClinferStep *step;
  OclStepImpl *impl;
} OclBuilder;

/* A launch's global size @g0 x @g1 x @g2 rounded up to 16x16 work-groups
 * (the tiled kernels: conv_1x1_tiled, matmul_tiled; they bounds-check). */
void clinfer_ocl_launch_tiles16 (OclLaunch *l, size_t g0, size_t g1,
    size_t g2);
/* A launch of kernel @kernel from family @family built with @options
 * (e.g. "-DDATA_F16"); appended to the step. */
OclLaunch *clinfer_ocl_launch_new (OclBuilder *b, const char *family,
    const char *options, const char *kernel, GError **error);
/* A launch of @kernel of an already built (owned) program. */
OclLaunch *clinfer_ocl_launch_new_for_program (OclBuilder *b,
    cl_program program, const char *kernel);
void clinfer_ocl_arg_input (OclLaunch *l, guint port);
void clinfer_ocl_arg_output (OclLaunch *l, guint port);
void clinfer_ocl_arg_int (OclLaunch *l, int v);
void clinfer_ocl_arg_float (OclLaunch *l, float v);
void clinfer_ocl_arg_int4 (OclLaunch *l, int a, int b, int c, int d);
/* Up to 8 ints (the rest 0). */
void clinfer_ocl_arg_int8 (OclLaunch *l, const int *v, guint n);
void clinfer_ocl_arg_local (OclLaunch *l, gsize bytes);
/* A by-value argument of @size bytes (at most 32), e.g. a long or an
 * element of the kernel's ELEM type. */
void clinfer_ocl_arg_raw (OclLaunch *l, const void *data, gsize size);
/* A per-request buffer of @bytes for the step; returns its index for
 * clinfer_ocl_arg_scratch(). */
guint clinfer_ocl_scratch_new (OclBuilder *b, gsize bytes);
void clinfer_ocl_arg_scratch (OclLaunch *l, guint index);
/* Appends an INPUT, OUTPUT or SCRATCH argument (@kind) of @index. */
void clinfer_ocl_arg_buffer (OclLaunch *l, OclArgKind kind, guint index);
/* A gather_strided launch (kernels/layout.cl) of @type elements from
 * buffer (@src_kind, @src) into contiguous (@dst_kind, @dst) of @dims,
 * reading src at @base + sum idx_d * @xs_d (elements). */
gboolean clinfer_ocl_gather_new (OclBuilder *b, ClinferElementType type,
    OclArgKind src_kind, guint src, OclArgKind dst_kind, guint dst,
    const ClinferShape *dims, const int64_t *xs, int64_t base, GError **error);
/* Uploads @bytes of @data as a read-only buffer owned by the step. */
gboolean clinfer_ocl_arg_data (OclBuilder *b, OclLaunch *l, const void *data,
    gsize bytes, GError **error);
void clinfer_ocl_launch_set_global (OclLaunch *l, guint dims, size_t g0,
    size_t g1, size_t g2);
void clinfer_ocl_launch_set_local (OclLaunch *l, size_t l0, size_t l1,
    size_t l2);
/* Work-groups of @tile work-items along dimension 0 (the global size
 * rounded up: the kernel must bounds-check it); CPU runtimes vectorise
 * across a work-group. With GPU kernel shapes, at least 64 (two warps /
 * one wavefront) unless the global size is smaller. Call after
 * set_global. */
void clinfer_ocl_launch_tile0 (OclLaunch *l, size_t tile);
/* A device-side copy of @bytes from input @src_port to output @dst_port. */
void clinfer_ocl_copy_new (OclBuilder *b, guint src_port, gsize src_offset,
    guint dst_port, gsize dst_offset, gsize bytes);
OclStepImpl *clinfer_ocl_step_impl_new (void);
/* Sets impl->used_inputs from the launches. */
void clinfer_ocl_step_impl_finish (OclStepImpl *impl);
void clinfer_ocl_step_impl_free (OclStepImpl *impl);

/* Helpers for factories. */
const ClinferShape *clinfer_ocl_in_shape (const OclBuilder *b, guint port);
ClinferElementType clinfer_ocl_in_type (const ClinferNode *node, guint port);
/* "-DDATA_F16" for f16, "" for f32. */
const char *clinfer_ocl_data_options (ClinferElementType type);
/* "-DELEM=uint" style options moving elements of @type as raw bits. */
const char *clinfer_ocl_elem_options (ClinferElementType type);
/* OpenCL C name of @type as stored ("float", "half", "long", "uchar" for
 * bool...), or NULL (strings, bf16). */
const char *clinfer_ocl_c_type (ClinferElementType type);
/* Broadcast element strides (0 on broadcast dims) of @in read as @out,
 * right-aligned, into s[0..out->rank). */
void clinfer_ocl_broadcast_strides (const ClinferShape *in,
    const ClinferShape *out, int *s);
/* The shape input @b broadcasts with against @a under @node's rules
 * (opset < 7: aligned at the "axis" attribute; old PRelu per channel). */
void clinfer_ocl_b_shape (const ClinferNode *node, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *eff);
/* Launches a two-input broadcast kernel (ocl-eltwise.c): a, b, y, n,
 * [op if >= 0,] rank, dims[8], a strides[8], b strides[8]. */
gboolean clinfer_ocl_launch_broadcast2 (OclBuilder *b, const ClinferNode *node,
    const char *program, const char *opts, const char *kernel, int op,
    GError **error);
/* Typed kernels (ocl-binary.c): y *= @s in place in the output's (float)
 * type; Clip of integer and f64 tensors. */
gboolean clinfer_ocl_scale_output (OclBuilder *b, const ClinferNode *node,
    float s, GError **error);
gboolean clinfer_ocl_clip_typed_supports (const OclDevice *dev,
    const ClinferNode *node, const char **reason);
gboolean clinfer_ocl_clip_typed_build (OclBuilder *b, const ClinferNode *node,
    GError **error);
/* Build options of kernels/norm.cl for @type: -DNORM_F64 for f64 (in
 * double), else as clinfer_ocl_data_options() (ocl-reduce.c). */
const char *clinfer_ocl_norm_options (ClinferElementType type);
/* TRUE for f32 and f16 (the types the float kernels take). */
gboolean clinfer_ocl_float_type (ClinferElementType type);
/* Constant value of input @port, or NULL. */
const ClinferTensor *clinfer_ocl_const_input (const ClinferNode *node,
    guint port);
/* Collapses @shape to (outer, axis, inner) around @axis. */
void clinfer_ocl_split_axis (const ClinferShape *shape, int axis,
    int64_t *outer, int64_t *n, int64_t *inner);

/* ---- steps built at run time (ocl-late.c) ---- */

/* TRUE when the value of input @port is known when the step is built: a
 * constant, or any input of a dynamic step (built when it runs, from the
 * actual values). For the factories' supports(). */
gboolean clinfer_ocl_input_known (const ClinferNode *node, guint port);

/* A copy of @node whose inputs have the types, shapes and values of @in
 * (one per input, as for the op's infer) and whose outputs have the shapes
 * inferred from them: what the factories build a dynamic step from. Shares
 * @node's attributes; NULL with @error when inference fails. */
typedef struct _OclLateNode OclLateNode;
OclLateNode *clinfer_ocl_late_node_new (const ClinferNode *node,
    const ClinferValueInfo *in, GError **error);
const ClinferNode *clinfer_ocl_late_node_get (const OclLateNode *late);
void clinfer_ocl_late_node_free (OclLateNode *late);

/* ---- op factories (ocl-ops.c table; one file per family) ---- */

/* FALSE with a reason naming the missing extension when @t is f64 and the
 * device cannot run double kernels (they would not build; ocl-binary.c). */
gboolean clinfer_ocl_fp64_ok (const OclDevice *dev, ClinferElementType t,
    const char **reason);

typedef struct {
  const char *domain;        /* "" = ai.onnx */
  const char *op_type;
  /* TRUE when the family's kernels handle @node (types, attributes);
   * FALSE with a static *reason. */
  gboolean (*supports) (const OclDevice *dev, const ClinferNode *node,
      const char **reason);
  gboolean (*build) (OclBuilder *b, const ClinferNode *node, GError **error);
  /* Steps built at run time (ocl-late.c): bit i set when the value of
   * input i (at most 64 elements) is brought to the host to infer and
   * build the step; 0 = every input but the first. */
  guint64 host_inputs;
} OclOpEntry;

const OclOpEntry *clinfer_ocl_op_lookup (const ClinferNode *node);

#define OCL_DECLARE_FAMILY(fam)                                              \
  gboolean clinfer_ocl_##fam##_supports (const OclDevice *dev,              \
      const ClinferNode *node, const char **reason);                         \
  gboolean clinfer_ocl_##fam##_build (OclBuilder *b, const ClinferNode *node,\
      GError **error);

OCL_DECLARE_FAMILY (conv)
OCL_DECLARE_FAMILY (conv_transpose)
OCL_DECLARE_FAMILY (pool)
OCL_DECLARE_FAMILY (global_pool)
OCL_DECLARE_FAMILY (binary)
OCL_DECLARE_FAMILY (unary)
OCL_DECLARE_FAMILY (copy)
OCL_DECLARE_FAMILY (transpose)
OCL_DECLARE_FAMILY (concat)
OCL_DECLARE_FAMILY (slice)
OCL_DECLARE_FAMILY (expand)
OCL_DECLARE_FAMILY (split)
OCL_DECLARE_FAMILY (softmax)
OCL_DECLARE_FAMILY (matmul)
OCL_DECLARE_FAMILY (gemm)
OCL_DECLARE_FAMILY (reduce)
OCL_DECLARE_FAMILY (batchnorm)
OCL_DECLARE_FAMILY (compare)
OCL_DECLARE_FAMILY (logic)
OCL_DECLARE_FAMILY (not)
OCL_DECLARE_FAMILY (where)
OCL_DECLARE_FAMILY (int_binary)
OCL_DECLARE_FAMILY (cast)
OCL_DECLARE_FAMILY (arg)
OCL_DECLARE_FAMILY (layer_norm)
OCL_DECLARE_FAMILY (trilu)
OCL_DECLARE_FAMILY (pad)
OCL_DECLARE_FAMILY (tile)
OCL_DECLARE_FAMILY (gather)
OCL_DECLARE_FAMILY (gather_elements)
OCL_DECLARE_FAMILY (depth_to_space)
OCL_DECLARE_FAMILY (classify)
OCL_DECLARE_FAMILY (instance_norm)
OCL_DECLARE_FAMILY (lrn)
OCL_DECLARE_FAMILY (cumsum)
OCL_DECLARE_FAMILY (resize)
OCL_DECLARE_FAMILY (einsum)
OCL_DECLARE_FAMILY (mvn)
OCL_DECLARE_FAMILY (lp_norm)
OCL_DECLARE_FAMILY (dropout)
OCL_DECLARE_FAMILY (gather_nd)
OCL_DECLARE_FAMILY (scatter_nd)
OCL_DECLARE_FAMILY (scatter_elements)
OCL_DECLARE_FAMILY (nonzero)
OCL_DECLARE_FAMILY (compress)
OCL_DECLARE_FAMILY (topk)
OCL_DECLARE_FAMILY (cumsum_axis)
OCL_DECLARE_FAMILY (range)
OCL_DECLARE_FAMILY (constant_of_shape)
OCL_DECLARE_FAMILY (onehot)
OCL_DECLARE_FAMILY (eltwise_chain)

/* ---- remote tensors (ocl-remote.c) ---- */

ClinferRemoteTensor *clinfer_ocl_create_remote (ClinferRemoteContext *context,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer host, GDestroyNotify destroy,
    gpointer user_data, gpointer handle, GError **error);
/* The cl_mem of @t when it is an OpenCL buffer of @core's context, else
 * NULL. */
cl_mem clinfer_ocl_remote_mem (const ClinferRemoteTensor *t, const OclCore *core);

/* ---- the executor (ocl-run.c) ---- */

ClinferDeviceRun *clinfer_ocl_create_run (ClinferDevice *device,
    ClinferPlan *plan, GError **error);
void clinfer_ocl_free_run (ClinferDeviceRun *run);
gboolean clinfer_ocl_run (ClinferDeviceRun *run, ClinferRunIO *io,
    GError **error);

/* ---- custom layers (ocl-custom.c) ---- */

/* Parses the config file; NULL with an error naming file, layer, item. */
OclCustomLayers *clinfer_ocl_custom_load (const char *path, GError **error);
void clinfer_ocl_custom_free (OclCustomLayers *layers);
/* TRUE when a custom layer handles @node's op type. */
gboolean clinfer_ocl_custom_handles (const OclCustomLayers *layers,
    const ClinferNode *node);
gboolean clinfer_ocl_custom_build (OclBuilder *b, const ClinferNode *node,
    GError **error);

G_END_DECLS
