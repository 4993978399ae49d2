/* clinfer — custom OpenCL layers (config-file XML in OpenVINO's GPU
 * "custom layer" format): the parsed layer descriptions, the WorkSizes
 * expression language and the JIT define block. Spec:
 * docs/custom-kernels.md. */
#pragma once

#include "devices/opencl/ocl-internal.h"

G_BEGIN_DECLS

/* ---- WorkSizes expressions (ocl-worksize.c) ---- */

typedef struct _OclWsExpr OclWsExpr;

/* Parses one rule ("X*Y", "(B*F+1)/2"): integers, B F Y X (any case),
 * + - * / % with the usual precedence, parentheses; no unary minus. NULL
 * with *why ("unexpected '-' at column 3") on a syntax error. */
OclWsExpr *clinfer_ocl_ws_parse (const char *text, char **why);
/* Evaluates with @vars = B, F, Y, X (truncating division). FALSE with
 * *why on division by zero or overflow. */
gboolean clinfer_ocl_ws_eval (const OclWsExpr *expr, const int64_t vars[4],
    int64_t *value, char **why);
const char *clinfer_ocl_ws_text (const OclWsExpr *expr);
void clinfer_ocl_ws_free (OclWsExpr *expr);

/* ---- layer descriptions (ocl-custom.c) ---- */

typedef enum {
  OCL_FMT_BFYX,
  OCL_FMT_BYXF,
  OCL_FMT_FYXB,
  OCL_FMT_YXFB,
  OCL_FMT_ANY,
} OclFormat;

typedef enum {
  OCL_CUSTOM_INPUT,          /* Tensor type="input" */
  OCL_CUSTOM_OUTPUT,         /* Tensor type="output" */
  OCL_CUSTOM_DATA,           /* Data name="..." */
} OclCustomArgKind;

typedef struct {
  OclCustomArgKind kind;
  int port;                  /* Tensor port-index */
  OclFormat format;
  char *data_name;           /* Data name */
} OclCustomArg;

typedef struct {
  char *name, *type, *param, *def;
} OclCustomDefine;

/* <OutputShape port-index="P" dims="B,F,Y*2,X*2" input="N" type="f32"/>:
 * a clinfer extension giving output P's shape from input N's dims (B F Y
 * X as in WorkSizes dim="input,N": X the last dim, Y the one before...)
 * for ops the engine does not know. Without it an output takes input 0's
 * shape and type. */
typedef struct {
  int port;
  int input;
  ClinferElementType type;   /* UNDEFINED: the input's type */
  OclWsExpr *dims[CLINFER_MAX_RANK];
  guint n_dims;              /* 0: the input's shape */
} OclOutputShape;

typedef struct {
  char *name;
  char *file;                /* the XML file, for messages */
  int line;                  /* line of <CustomLayer> */
  char *entry;               /* kernel function */
  char *source;              /* the Source files, concatenated */
  GPtrArray *defines;        /* OclCustomDefine* in document order */
  GPtrArray *args;           /* OclCustomArg* by arg-index (no gaps) */
  char *options;             /* CompilerOptions, verbatim */
  OclWsExpr *global[3], *local[3];
  guint n_global, n_local;
  int dim_input;             /* -1: variables from output 0; else input N */
  GPtrArray *out_shapes;     /* OclOutputShape* */
} OclCustomLayer;

struct _OclCustomLayers {
  char *path;
  GHashTable *layers;        /* name -> OclCustomLayer* */
};

/* Parses the XML text @text (@path names it in errors; Source files are
 * relative to its directory). */
OclCustomLayers *clinfer_ocl_custom_parse (const char *path, const char *text,
    gsize length, GError **error);
const OclCustomLayer *clinfer_ocl_custom_lookup (const OclCustomLayers *layers,
    const char *name);
/* Output @port's type and shape for a node of @layer with inputs @in
 * (B F Y X from the OutputShape's input); FALSE with an error naming the
 * layer when an input is missing or a rule cannot be evaluated. */
gboolean clinfer_ocl_custom_output_shape (const OclCustomLayer *layer,
    guint port, const ClinferElementType *in_types, const ClinferShape *in_shapes,
    const gboolean *present, guint n_inputs, ClinferElementType *type,
    ClinferShape *shape, GError **error);

/* ---- the JIT define block (ocl-custom-jit.c) ---- */

typedef struct {
  ClinferElementType type;
  ClinferShape shape;
  OclFormat format;
} OclJitTensor;

/* The built-in defines, exactly as the spec lists them: NUM_INPUTS,
 * GLOBAL_WORKSIZE*, LOCAL_WORKSIZE*, then INPUTi_* and OUTPUTi_*. NULL
 * with an error naming @layer for more than 5 dims or an element type
 * without an OpenCL name. */
char *clinfer_ocl_jit_defines (const char *layer, const OclJitTensor *inputs,
    guint n_inputs, const OclJitTensor *outputs, guint n_outputs,
    const size_t *gws, guint n_gws, const size_t *lws, guint n_lws,
    GError **error);
/* The user defines of @layer for @node: "#define NAME VALUE\n" each. */
char *clinfer_ocl_jit_user_defines (const OclCustomLayer *layer,
    const ClinferNode *node);
/* Work sizes of @layer for @node's shapes; FALSE with an error naming the
 * rule. *n_lws is 0 when the layer has no local rules. */
gboolean clinfer_ocl_custom_work_sizes (const OclCustomLayer *layer,
    const ClinferNode *node, size_t *gws, guint *n_gws, size_t *lws,
    guint *n_lws, GError **error);

G_END_DECLS
