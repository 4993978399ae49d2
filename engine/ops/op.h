/* clinfer — operator definitions and the op registry.
 *
 * Every op is one ClinferOpDef: which (domain, type, opset range) it
 * handles, how many inputs/outputs it takes, how it parses and validates
 * attributes (prepare), how it infers output types and shapes (infer) and
 * its reference semantics on the CPU (eval). The same eval serves constant
 * folding at compile time and is the CPU device's fallback kernel; devices
 * add faster kernels for the same node (engine/devices/<device>/).
 *
 * Adding an op = its ClinferOpDef line in the family's table in
 * engine/ops/<family>.c (and, for a new family, one line in registry.c).
 */
#pragma once

#include "core/graph.h"

G_BEGIN_DECLS

/* Type, shape and (when known) value of one input or output. At compile
 * time @value is set for inputs whose value is a constant; at run time
 * (ops flagged CLINFER_OP_SHAPE_NEEDS_VALUES) it is the actual tensor. */
typedef struct {
  gboolean present;          /* FALSE for an absent optional input */
  ClinferElementType type;
  ClinferShape shape;
  const ClinferTensor *value;
} ClinferValueInfo;

typedef enum {
  /* Output shapes depend on input values that may only be known at run
   * time (Reshape by a computed shape, NonZero, Range, TopK with K input):
   * the executor re-runs infer with the actual tensors before eval. */
  CLINFER_OP_SHAPE_NEEDS_VALUES = 1 << 0,
  /* Never constant-fold (random ops, ops with side effects). */
  CLINFER_OP_NO_FOLD = 1 << 1,
  /* The op is a graph source handled by the executor itself (Parameter,
   * Constant): no eval. */
  CLINFER_OP_SOURCE = 1 << 2,
  /* A custom CPU op (engine/ops/custom-ops.c), possibly named like a
   * built-in op it overrides: never matched as the built-in one. */
  CLINFER_OP_CUSTOM = 1 << 3,
} ClinferOpFlags;

#define CLINFER_VARIADIC G_MAXUINT

struct _ClinferOpDef {
  const char *op_type;
  const char *domain;        /* "" = ai.onnx default domain */
  int since_version;         /* first opset version handled */
  int last_version;          /* last handled (inclusive); 0 = no upper bound */
  guint min_inputs, max_inputs;
  guint min_outputs, max_outputs;
  guint flags;               /* ClinferOpFlags */
  /* Parses and validates attributes once, after the graph is read; may
   * store parsed parameters in node->op_data (freed with free_data).
   * Errors name the node (clinfer_node_label()). May be NULL. */
  gboolean (*prepare) (ClinferNode *node, GError **error);
  GDestroyNotify free_data;
  /* Fills out[i].type and out[i].shape for every output from the inputs
   * (node->n_inputs entries in @in, node->n_outputs in @out, out[] zeroed
   * with rank -1 by the caller). Unknown dims stay CLINFER_DIM_DYNAMIC. */
  gboolean (*infer) (const ClinferNode *node, const ClinferValueInfo *in,
      ClinferValueInfo *out, GError **error);
  /* Reference computation: @inputs are contiguous (NULL when absent),
   * @outputs are allocated, contiguous, of the inferred type and shape.
   * May use OpenMP parallel loops. */
  gboolean (*eval) (const ClinferNode *node, ClinferTensor *const *inputs,
      ClinferTensor *const *outputs, GError **error);
  /* Instead of eval, for ops that decide output shapes while computing
   * (custom ops, engine/ops/custom-ops.c): outputs[i] is the planned
   * tensor when shape inference gave a static shape, else NULL and the op
   * stores a new tensor there (transfer full), also on failure. */
  gboolean (*eval_alloc) (const ClinferNode *node,
      ClinferTensor *const *inputs, ClinferTensor **outputs, GError **error);
  /* Shown after the labels of the def's nodes in messages, e.g. "custom
   * op ns.Op from libops.so"; NULL for built-in ops. */
  const char *note;
};

/* Looks up the def for (domain, op_type) at @opset. NULL when unknown. */
const ClinferOpDef *clinfer_op_lookup (const char *domain, const char *op_type,
    int opset);
/* TRUE when some version of (domain, op_type) is known (for messages
 * distinguishing unknown ops from unsupported opset versions). */
gboolean clinfer_op_is_known (const char *domain, const char *op_type);

/* Domains @a and @b are one: NULL, "" and "ai.onnx" all name the default
 * ONNX domain. */
gboolean clinfer_op_domain_equal (const char *a, const char *b);

/* TRUE when @node (may be NULL) is the built-in op @op_type of @domain
 * (clinfer_op_domain_equal()), resolved to the built-in def: a node a
 * custom op overrides (CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN) keeps its op
 * type but is not the built-in op. Every pass pattern, fast kernel and
 * device table that picks nodes by op type matches with this, so an
 * overridden op is never fused into, folded or run as the built-in. */
gboolean clinfer_node_is_builtin_op (const ClinferNode *node,
    const char *domain, const char *op_type);
/* FALSE when @node was resolved to a custom op's def. */
gboolean clinfer_node_is_builtin (const ClinferNode *node);

typedef void (*ClinferOpFunc) (const ClinferOpDef *def, gpointer user_data);
/* Calls @func for every registered def, family by family (docs, tests). */
void clinfer_op_foreach (ClinferOpFunc func, gpointer user_data);

/* Resolves node->def for every node of @graph (recursing into subgraph
 * attributes), checks input/output counts and runs prepare. Fails with
 * CLINFER_ERROR_UNSUPPORTED_OP naming the first unknown node. */
gboolean clinfer_graph_resolve_ops (ClinferGraph *graph, GError **error);
typedef struct _ClinferOpSet ClinferOpSet;
/* Same, looking nodes up in @extra (custom ops, custom layers) before the
 * built-in registry. @extra may be NULL. */
gboolean clinfer_graph_resolve_ops_with (ClinferGraph *graph,
    const ClinferOpSet *extra, GError **error);

/* Op family tables, each terminated by an entry with op_type NULL. */
extern const ClinferOpDef clinfer_ops_source[];
extern const ClinferOpDef clinfer_ops_eltwise[];
extern const ClinferOpDef clinfer_ops_conv[];
extern const ClinferOpDef clinfer_ops_pool[];
extern const ClinferOpDef clinfer_ops_shape[];
extern const ClinferOpDef clinfer_ops_fused[];
extern const ClinferOpDef clinfer_ops_eltwise_chain[];
extern const ClinferOpDef clinfer_ops_activation[];
extern const ClinferOpDef clinfer_ops_logic[];
extern const ClinferOpDef clinfer_ops_reduce[];
extern const ClinferOpDef clinfer_ops_softmax[];
extern const ClinferOpDef clinfer_ops_matmul[];
extern const ClinferOpDef clinfer_ops_norm[];
extern const ClinferOpDef clinfer_ops_index[];
extern const ClinferOpDef clinfer_ops_resize[];
extern const ClinferOpDef clinfer_ops_layout[];
extern const ClinferOpDef clinfer_ops_convtranspose[];
extern const ClinferOpDef clinfer_ops_recurrent[];

/* ---- helpers shared by op implementations (ops/op-util.c) ---- */

/* The value of input @i of @node when it is an f32 constant holding
 * exactly one element (a scalar or any shape of size 1). */
gboolean clinfer_op_scalar_f32_input (const ClinferNode *node, guint i,
    float *v);
/* Normalises a possibly negative @axis against @rank; error names node. */
gboolean clinfer_op_normalize_axis (const ClinferNode *node, int64_t axis,
    int rank, int *out, GError **error);
/* Transpose @node's permutation of a rank-@rank input (its perm
 * attribute, reversed dims when absent): output dim i is input dim
 * perm[i]. */
gboolean clinfer_transpose_perm (const ClinferNode *node, int rank,
    int *perm, GError **error);
/* The reduced dims of resolved reduction @node (ReduceSum, ReduceMean,
 * ...) on a rank-@rank input, in @mask: from its axes attribute or the
 * constant value of its axes input. FALSE when the axes input is not a
 * constant or the axes are invalid. */
gboolean clinfer_reduce_const_mask (const ClinferNode *node, int rank,
    gboolean *mask);
/* Reads attribute "axis" (@def when absent) normalised against @rank. */
gboolean clinfer_op_axis_attr (const ClinferNode *node, int64_t def, int rank,
    int *axis, GError **error);
/* Requires in[i] to be present with a known rank; error names node. */
gboolean clinfer_op_require_input (const ClinferNode *node,
    const ClinferValueInfo *in, guint i, GError **error);
/* Reads a 1-D integer tensor (i32/i64) into a newly allocated array. */
gboolean clinfer_op_read_int_list (const ClinferNode *node,
    const ClinferTensor *t, const char *what, int64_t **out, gsize *n,
    GError **error);
/* A list of one entry per dimension (@what: "sizes", "repeats"...) has
 * @n entries for an input of rank @rank. */
gboolean clinfer_op_check_list_len (const ClinferNode *node, const char *what,
    gsize n, int rank, GError **error);
/* Y [m x n] (row stride @ldy) = @alpha A B (+ Y when @accumulate) in f32,
 * on the reference evals' blocked GEMM (threads for large ones): A (i, k)
 * at a[i * a_rs + k * a_cs], B (k, j) at b[k * b_rs + j * b_cs]. FALSE,
 * naming @node, when B's packed copy cannot be allocated. */
gboolean clinfer_op_gemm_f32 (const ClinferNode *node, int64_t m, int64_t n,
    int64_t k, float alpha, const float *a, int64_t a_rs, int64_t a_cs,
    const float *b, int64_t b_rs, int64_t b_cs, float *y, int64_t ldy,
    gboolean accumulate, GError **error);
/* What a fast recurrent kernel needs to know of an RNN, GRU or LSTM node
 * (its attributes, parsed by the op's prepare ()). */
typedef enum {
  CLINFER_RECURRENT_RNN, CLINFER_RECURRENT_GRU, CLINFER_RECURRENT_LSTM,
} ClinferRecurrentKind;

/* The spec's activation functions, with their alpha and beta. */
typedef enum {
  CLINFER_REC_ACT_RELU, CLINFER_REC_ACT_TANH, CLINFER_REC_ACT_SIGMOID,
  CLINFER_REC_ACT_AFFINE, CLINFER_REC_ACT_LEAKY_RELU,
  CLINFER_REC_ACT_THRESHOLDED_RELU, CLINFER_REC_ACT_SCALED_TANH,
  CLINFER_REC_ACT_HARD_SIGMOID, CLINFER_REC_ACT_ELU, CLINFER_REC_ACT_SOFTSIGN,
  CLINFER_REC_ACT_SOFTPLUS,
} ClinferRecurrentActKind;

typedef struct {
  ClinferRecurrentActKind kind;
  float alpha, beta;
} ClinferRecurrentAct;

typedef struct {
  ClinferRecurrentKind kind;
  int n_gates;                /* gate blocks in W and R: 1, 3 or 4 */
  int n_dirs;                 /* 1 or 2 (bidirectional) */
  gboolean reverse;           /* one direction, "reverse" */
  int64_t hidden;             /* hidden_size, 0 when absent */
  int64_t layout;
  float clip;                 /* 0: none */
  gboolean linear_before_reset, input_forget;
  /* Each direction's activations: f (RNN's only one; GRU's z and r;
   * LSTM's i, o and f), g (the GRU and LSTM candidate) and h (LSTM's
   * output); the op's defaults where the node names none. */
  ClinferRecurrentAct act[2][3];
} ClinferRecurrentInfo;

/* FALSE when @node is not a prepared RNN, GRU or LSTM node. */
gboolean clinfer_op_recurrent_info (const ClinferNode *node,
    ClinferRecurrentInfo *info);
/* y[i] = @act (x[i]) for i < @n, as the reference eval computes it (@x
 * and @y may be the same). */
void clinfer_op_recurrent_act_row (const ClinferRecurrentAct *act,
    const float *x, float *y, gsize n);
/* FALSE, naming @node, unless every sequence_lens entry of the @batch is
 * 0 to @seq. */
gboolean clinfer_op_recurrent_check_lens (const ClinferNode *node,
    const int32_t *lens, int64_t batch, int64_t seq, GError **error);
/* Row-major strides in elements for @shape. */
void clinfer_shape_elem_strides (const ClinferShape *shape, int64_t *strides);
/* Extents of @s before, at and after @axis: the [outer, dim, inner] view
 * (dim is 1 for a scalar). */
void clinfer_shape_split_axis (const ClinferShape *s, int axis,
    int64_t *outer, int64_t *dim, int64_t *inner);

/* Input @i's data at eval, or NULL when the node has no such input or
 * leaves it out. */
static inline const void *
clinfer_op_opt_input_data (const ClinferNode *node, ClinferTensor *const *in,
    guint i)
{
  return node->n_inputs > i && in[i] ? clinfer_tensor_get_const_data (in[i])
      : NULL;
}

/* ---- element types ---- */

static inline gboolean
clinfer_op_type_is_half (ClinferElementType t)
{
  return t == CLINFER_TYPE_F16 || t == CLINFER_TYPE_BF16;
}

static inline gboolean
clinfer_op_type_is_signed_int (ClinferElementType t)
{
  return t == CLINFER_TYPE_I8 || t == CLINFER_TYPE_I16 || t == CLINFER_TYPE_I32
      || t == CLINFER_TYPE_I64;
}

static inline gboolean
clinfer_op_type_is_unsigned_int (ClinferElementType t)
{
  return t == CLINFER_TYPE_U8 || t == CLINFER_TYPE_U16 || t == CLINFER_TYPE_U32
      || t == CLINFER_TYPE_U64;
}

/* Any fixed-size type but bool: the integers and the floats. */
static inline gboolean
clinfer_op_type_is_numeric (ClinferElementType t)
{
  return t != CLINFER_TYPE_UNDEFINED && t != CLINFER_TYPE_STRING
      && t != CLINFER_TYPE_BOOL && clinfer_element_type_size (t) > 0;
}

/* Sets "element type T is not supported" (naming the node) and returns
 * FALSE: the default branch of a type dispatch. */
gboolean clinfer_op_unsupported_type (const ClinferNode *node,
    ClinferElementType t, GError **error);
/* @t is a fixed-size type (not string) that data-moving ops can copy. */
gboolean clinfer_op_check_movable (const ClinferNode *node,
    ClinferElementType t, GError **error);
/* in[i] is i64 or i32; @what names it in the error. */
gboolean clinfer_op_check_int_input (const ClinferNode *node,
    const ClinferValueInfo *in, guint i, const char *what, GError **error);
/* Every present input from @first on has the type of input 0. */
gboolean clinfer_op_check_same_types (const ClinferNode *node,
    const ClinferValueInfo *in, guint first, GError **error);

/* ---- f16 / bf16 through f32 ---- */

/* @n f16 (or bf16, by @t) values to float and back. */
void clinfer_op_half_to_float (ClinferElementType t, const uint16_t *src,
    float *dst, int64_t n);
void clinfer_op_float_to_half (ClinferElementType t, const float *src,
    uint16_t *dst, int64_t n);
/* (transfer full) An f32 copy of the f16/bf16 tensor @t (NULL stays
 * NULL). */
ClinferTensor *clinfer_op_half_to_f32 (const ClinferTensor *t,
    GError **error);
/* Converts the f32 tensor @src into the f16/bf16 tensor @dst (same
 * shape). */
void clinfer_op_f32_to_half (const ClinferTensor *src, ClinferTensor *dst);

typedef gboolean (*ClinferOpEvalFunc) (const ClinferNode *node,
    ClinferTensor *const *in, ClinferTensor *const *out, GError **error);
/* Runs @eval with every f16/bf16 input and output replaced by an f32
 * copy (other tensors are passed as they are) and converts the outputs
 * back: how the reference evals compute the half types. */
gboolean clinfer_op_eval_via_f32 (const ClinferNode *node,
    ClinferTensor *const *in, ClinferTensor *const *out,
    ClinferOpEvalFunc eval, GError **error);

/* Stores @v as element @i of @t converted to its type (floats, integers
 * by a plain C cast, bool as v != 0); other types are left alone. */
void clinfer_op_store_double (ClinferTensor *t, int64_t i, double v);

/* FALSE with CLINFER_ERROR_OUT_OF_MEMORY naming @node and the size when
 * output @index, as @out describes it, would take more than the graph's
 * memory limit (clinfer_graph_get_memory_limit()) or its size overflows;
 * TRUE while its shape is not static yet. Shape inference checks every
 * output with it, and the executors every shape they infer at run time. */
gboolean clinfer_node_check_output_size (const ClinferNode *node, guint index,
    const ClinferValueInfo *out, GError **error);
/* @node's infer on @in into @out, then clinfer_node_check_output_size()
 * on every output: what the executors call for shapes known only at run
 * time. */
gboolean clinfer_node_infer_checked (const ClinferNode *node,
    const ClinferValueInfo *in, ClinferValueInfo *out, GError **error);

G_END_DECLS
