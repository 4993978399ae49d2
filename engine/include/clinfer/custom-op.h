/* clinfer — custom CPU operators: the C API a shared library (or an
 * application) uses to add ops the engine does not have.
 *
 * A custom op is a ClinferCustomOp struct: its name and domain, the ports
 * it takes, and callbacks that create a kernel from a node's attributes,
 * optionally infer output shapes, compute, and destroy the kernel. A
 * shared library exports one function,
 *
 *   int clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
 *       uint32_t abi_version);
 *
 * that calls clinfer_custom_op_registry_add() for each op it provides and
 * returns 0 (or -1 after clinfer_custom_op_registry_set_error()). An
 * application without a library adds ops with
 * clinfer_compile_config_add_custom_ops().
 *
 * Life cycle: registration copies the struct and the strings and arrays
 * it points to, so the caller may free them afterwards; the callbacks
 * must stay valid while any model read or compiled with the config is
 * alive (the engine keeps a library loaded for exactly that long).
 * create_kernel runs once per node when a model is read or compiled
 * (possibly more than once for the same node: a model is compiled for
 * each set of input shapes); destroy_kernel frees what it returned.
 *
 * Threading: compute() may be called at the same time from several
 * threads (one per ClinferRequest) with the same kernel, so it must not
 * modify the kernel without its own locking. create_kernel,
 * infer_shapes and destroy_kernel are not called concurrently for the
 * same kernel.
 *
 * Errors: every callback returns 0 on success or -1 after setting a
 * message with the matching *_set_error() function; the engine adds the
 * node and op names and hands the error to the caller (clinfer-run
 * prints it, the GStreamer element posts it). A failed compute leaves
 * the request usable for the next inference.
 *
 * The API is versioned: a library built against ABI version N sets
 * abi_version = CLINFER_CUSTOM_OP_ABI_VERSION in every op; the engine
 * refuses ops of an ABI version it does not know, by name.
 *
 * User guide: docs/custom-ops.md; example: examples/custom-op/.
 */
#pragma once

#include <clinfer/export.h>
#include <stddef.h>
#include <stdint.h>
#include <clinfer/types.h>

G_BEGIN_DECLS

#define CLINFER_CUSTOM_OP_ABI_VERSION 1u

/* Name of the function a custom-op library exports. */
#define CLINFER_CUSTOM_OP_REGISTER_SYMBOL "clinfer_register_custom_ops"

/**
 * ClinferPortKind:
 * @CLINFER_PORT_REQUIRED: the port must be connected
 * @CLINFER_PORT_OPTIONAL: the port may be absent (an empty ONNX input
 *   name, or fewer inputs); compute sees NULL for it
 * @CLINFER_PORT_VARIADIC: only for the last port: it repeats, one or
 *   more times (zero or more when @min_variadic is 0)
 */
typedef enum {
  CLINFER_PORT_REQUIRED = 0,
  CLINFER_PORT_OPTIONAL = 1,
  CLINFER_PORT_VARIADIC = 2,
} ClinferPortKind;

/**
 * ClinferCustomPort:
 * @type: the element type the port takes, or CLINFER_TYPE_UNDEFINED for
 *   any type
 * @kind: required, optional or variadic
 */
typedef struct {
  ClinferElementType type;
  ClinferPortKind kind;
} ClinferCustomPort;

/* Flags of a ClinferCustomOp. */
typedef enum {
  /* The op replaces a built-in op of the same name in the default ONNX
   * domain (and the IR layers clinfer reads as that op, e.g. ReLU for
   * Relu) in every model read with the config, on every device: its
   * nodes run this op's compute, never a built-in kernel, and no compile
   * pass fuses or folds them into other ops (a Relu after a Conv stays a
   * node of its own). Without this flag such a name is a registration
   * error. Constant cannot be overridden (the model readers turn it into
   * tensors). */
  CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN = 1 << 0,
} ClinferCustomOpFlags;

/**
 * ClinferCustomTensor:
 * @type: element type
 * @rank: number of dimensions (0 for a scalar)
 * @dims: @rank extents, outermost first
 * @strides: @rank byte strides (inputs given to compute are contiguous
 *   row-major, so these are the row-major strides)
 * @data: the elements (read-only for inputs)
 *
 * A view of a tensor the engine owns, valid during the callback that
 * received it.
 */
typedef struct {
  ClinferElementType type;
  int rank;
  const int64_t *dims;
  const int64_t *strides;
  const void *data;
} ClinferCustomTensor;

typedef struct _ClinferCustomOpRegistry ClinferCustomOpRegistry;
typedef struct _ClinferKernelInfo ClinferKernelInfo;
typedef struct _ClinferShapeContext ClinferShapeContext;
typedef struct _ClinferKernelContext ClinferKernelContext;
typedef struct _ClinferCustomOp ClinferCustomOp;

/**
 * ClinferCustomOp:
 * @abi_version: CLINFER_CUSTOM_OP_ABI_VERSION
 * @name: op type as it appears in the model (ONNX op_type, IR layer type)
 * @domain: ONNX domain ("" = the default domain, only with
 *   CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN); for IR layers, the layer's
 *   `version` attribute (e.g. "extension")
 * @since_version: first opset version of @domain handled (0 = any)
 * @last_version: last one, inclusive (0 = no upper bound)
 * @flags: ClinferCustomOpFlags
 * @n_inputs, @inputs: input ports
 * @min_variadic: fewest repetitions of a variadic last input
 * @n_outputs, @outputs: output ports
 * @create_kernel: reads the node's attributes through @info and returns
 *   the op's per-node state in *@kernel (may be NULL). 0 or -1.
 * @infer_shapes: (optional) sets each output's type and shape from the
 *   inputs; without it every output takes input 0's shape, and the
 *   element type its output port declares (input 0's type when the port
 *   says CLINFER_TYPE_UNDEFINED).
 *   Dims unknown until run time are CLINFER_DIM_DYNAMIC. 0 or -1.
 * @compute: runs the op: reads inputs and allocates outputs through
 *   @ctx. 0 or -1.
 * @destroy_kernel: (optional) frees what create_kernel returned.
 * @user_data: passed to create_kernel and infer_shapes through the op.
 */
struct _ClinferCustomOp {
  uint32_t abi_version;
  const char *name;
  const char *domain;
  int since_version;
  int last_version;
  uint32_t flags;
  size_t n_inputs;
  const ClinferCustomPort *inputs;
  size_t min_variadic;
  size_t n_outputs;
  const ClinferCustomPort *outputs;
  int (*create_kernel) (const ClinferCustomOp *op, ClinferKernelInfo *info,
      void **kernel);
  int (*infer_shapes) (const ClinferCustomOp *op, void *kernel,
      ClinferShapeContext *ctx);
  int (*compute) (void *kernel, ClinferKernelContext *ctx);
  void (*destroy_kernel) (void *kernel);
  void *user_data;
};

/* The signature of the registration function a library exports. */
typedef int (*ClinferRegisterCustomOpsFunc) (ClinferCustomOpRegistry *registry,
    uint32_t abi_version);

/* The function a custom-op library defines (and exports): the engine
 * passes the ABI version it implements. Declared here so the compiler
 * checks the library's definition. */
CLINFER_API int clinfer_register_custom_ops (ClinferCustomOpRegistry *registry,
    uint32_t abi_version);

/* ---- registration ---- */

/* Adds @op (copied). -1 with the registry's error set when the struct is
 * malformed, its ABI version unknown, or the name clashes with a built-in
 * op or an op already registered in the same domain. */
CLINFER_API int clinfer_custom_op_registry_add (ClinferCustomOpRegistry *registry,
    const ClinferCustomOp *op);
/* printf-style message for a registration function that fails. */
CLINFER_API void clinfer_custom_op_registry_set_error (ClinferCustomOpRegistry *registry,
    const char *format, ...) G_GNUC_PRINTF (2, 3);

/* ---- node attributes, in create_kernel ----
 * Each getter returns 0, or -1 with the error set on @info (missing
 * attribute, or one of another type), so create_kernel can return -1
 * directly. For IR layers, whose attributes are text, numbers are parsed
 * from the text. */

CLINFER_API int clinfer_kernel_info_has_attribute (const ClinferKernelInfo *info,
    const char *name);
CLINFER_API int clinfer_kernel_info_get_int (ClinferKernelInfo *info, const char *name,
    int64_t *value);
CLINFER_API int clinfer_kernel_info_get_float (ClinferKernelInfo *info, const char *name,
    float *value);
/* Size protocol: with @buffer NULL, *@size receives the bytes needed
 * including the terminating NUL; otherwise *@size is the buffer's size on
 * input (-1 with an error when too small) and the bytes written on
 * output. */
CLINFER_API int clinfer_kernel_info_get_string (ClinferKernelInfo *info, const char *name,
    char *buffer, size_t *size);
/* Same protocol in elements: @values NULL queries *@n. */
CLINFER_API int clinfer_kernel_info_get_ints (ClinferKernelInfo *info, const char *name,
    int64_t *values, size_t *n);
CLINFER_API int clinfer_kernel_info_get_floats (ClinferKernelInfo *info, const char *name,
    float *values, size_t *n);
/* A tensor attribute, viewed in place; valid until create_kernel returns
 * (copy what the kernel keeps). */
CLINFER_API int clinfer_kernel_info_get_tensor (ClinferKernelInfo *info, const char *name,
    ClinferCustomTensor *tensor);
CLINFER_API const char *clinfer_kernel_info_get_node_name (const ClinferKernelInfo *info);
CLINFER_API size_t clinfer_kernel_info_get_n_inputs (const ClinferKernelInfo *info);
CLINFER_API size_t clinfer_kernel_info_get_n_outputs (const ClinferKernelInfo *info);
/* Element type of input @index as the model declares it (UNDEFINED when
 * not known before shape inference or absent). */
CLINFER_API ClinferElementType clinfer_kernel_info_get_input_type (const ClinferKernelInfo *info,
    size_t index);
CLINFER_API void clinfer_kernel_info_set_error (ClinferKernelInfo *info,
    const char *format, ...) G_GNUC_PRINTF (2, 3);

/* ---- shape inference, in infer_shapes ---- */

CLINFER_API size_t clinfer_shape_context_get_n_inputs (const ClinferShapeContext *ctx);
/* FALSE-like 0 when input @index is absent; otherwise 1, with its type
 * and rank (-1: unknown) and up to CLINFER_MAX_RANK dims (may be
 * CLINFER_DIM_DYNAMIC). */
CLINFER_API int clinfer_shape_context_get_input (const ClinferShapeContext *ctx,
    size_t index, ClinferElementType *type, int *rank, int64_t *dims);
/* The value of input @index when it is a constant known at compile time
 * (or at run time for a re-inference); NULL otherwise. */
CLINFER_API const ClinferCustomTensor *clinfer_shape_context_get_input_value (ClinferShapeContext *ctx,
    size_t index);
CLINFER_API size_t clinfer_shape_context_get_n_outputs (const ClinferShapeContext *ctx);
/* Sets output @index; @rank -1 for an unknown rank. -1 on a bad index or
 * rank. */
CLINFER_API int clinfer_shape_context_set_output (ClinferShapeContext *ctx, size_t index,
    ClinferElementType type, int rank, const int64_t *dims);
CLINFER_API void clinfer_shape_context_set_error (ClinferShapeContext *ctx,
    const char *format, ...) G_GNUC_PRINTF (2, 3);

/* ---- compute ---- */

CLINFER_API size_t clinfer_kernel_context_get_n_inputs (const ClinferKernelContext *ctx);
/* Input @index, or NULL when the optional input is absent or @index is
 * out of range. */
CLINFER_API const ClinferCustomTensor *clinfer_kernel_context_get_input (ClinferKernelContext *ctx,
    size_t index);
CLINFER_API size_t clinfer_kernel_context_get_n_outputs (const ClinferKernelContext *ctx);
/* Element type output @index will have (from shape inference). */
CLINFER_API ClinferElementType clinfer_kernel_context_get_output_type (const ClinferKernelContext *ctx,
    size_t index);
/* Allocates output @index with the shape decided now and returns its
 * data (not initialised), or NULL with the context's error set: bad index,
 * a second call for the same output, or a shape that contradicts the
 * static shape inference gave. The memory belongs to the engine. */
CLINFER_API void *clinfer_kernel_context_allocate_output (ClinferKernelContext *ctx,
    size_t index, int rank, const int64_t *dims);
/* Threads the caller's compiled model was configured with (>= 1). */
CLINFER_API int clinfer_kernel_context_get_n_threads (const ClinferKernelContext *ctx);
CLINFER_API void clinfer_kernel_context_set_error (ClinferKernelContext *ctx,
    const char *format, ...) G_GNUC_PRINTF (2, 3);

G_END_DECLS
