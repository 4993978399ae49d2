/* clinfer — the internal graph: nodes, typed attributes, ports and edges.
 *
 * A node's inputs are references to a producer node's output port; its
 * outputs are port descriptions (tensor name, element type, shape and,
 * once known at compile time, a constant value). Graph inputs are nodes of
 * op type "Parameter", constants are nodes of op type "Constant" whose
 * attribute "value" holds the tensor. Both live in the default domain "".
 */
#pragma once

#include <clinfer/tensor.h>
#include <clinfer/error.h>

G_BEGIN_DECLS

typedef struct _ClinferGraph ClinferGraph;
typedef struct _ClinferNode ClinferNode;
typedef struct _ClinferOpDef ClinferOpDef;

typedef enum {
  CLINFER_ATTR_FLOAT,
  CLINFER_ATTR_INT,
  CLINFER_ATTR_STRING,
  CLINFER_ATTR_TENSOR,
  CLINFER_ATTR_GRAPH,
  CLINFER_ATTR_FLOATS,
  CLINFER_ATTR_INTS,
  CLINFER_ATTR_STRINGS,
  CLINFER_ATTR_TENSORS,
  CLINFER_ATTR_GRAPHS,
} ClinferAttrType;

typedef struct {
  ClinferAttrType type;
  union {
    float f;
    int64_t i;
    char *s;
    ClinferTensor *t;
    ClinferGraph *g;
    struct { float *v; gsize n; } floats;
    struct { int64_t *v; gsize n; } ints;
    struct { char **v; gsize n; } strings;
    struct { ClinferTensor **v; gsize n; } tensors;
    struct { ClinferGraph **v; gsize n; } graphs;
  };
} ClinferAttr;

const char *clinfer_attr_type_name (ClinferAttrType type);

/* Reference to output @port of @node; @node NULL = absent optional input. */
typedef struct {
  ClinferNode *node;
  guint port;
} ClinferPortRef;

typedef struct {
  char *name;               /* tensor name, unique in the graph */
  ClinferElementType type;  /* UNDEFINED until inferred */
  ClinferShape shape;       /* rank -1 until inferred */
  ClinferTensor *value;     /* constant value when known at compile time */
  gboolean left_out;        /* the model names no tensor (ONNX ""): unused */
} ClinferPortDesc;

struct _ClinferNode {
  guint id;                 /* unique in the graph, creation order */
  char *name;               /* may be "" in ONNX; use clinfer_node_label() */
  char *op_type;
  char *domain;             /* "" = default ONNX domain */
  int opset;                /* opset version of the node's domain */
  GHashTable *attrs;        /* char* -> ClinferAttr* */
  guint n_inputs;
  ClinferPortRef *inputs;
  guint n_outputs;
  ClinferPortDesc *outputs;
  const ClinferOpDef *def;  /* resolved by clinfer_graph_resolve_ops() */
  gpointer op_data;         /* parsed attributes, owned */
  GDestroyNotify op_data_free;  /* frees op_data (set with def) */
  ClinferGraph *graph;      /* owning graph */
  char *label_;             /* cache of clinfer_node_label() */
  /* Shown after the label, e.g. "custom op ns.Op from libops.so"
   * (borrowed from def; clinfer_node_set_label_note()). */
  const char *label_note;
};

typedef struct {
  ClinferPortRef ref;
  char *name;
} ClinferGraphOutput;

struct _ClinferGraph {
  char *name;
  char *origin;             /* file the graph came from, for messages */
  GPtrArray *nodes;         /* owned ClinferNode*, insertion order */
  GPtrArray *inputs;        /* ClinferNode* (op "Parameter"), not owned */
  GArray *outputs;          /* ClinferGraphOutput */
  GHashTable *opsets;       /* domain (char*) -> GINT_TO_POINTER (version) */
  GHashTable *metadata;     /* char* -> char* */
  ClinferGraph *parent;     /* enclosing graph of a subgraph attribute */
  guint next_id;
  /* Most bytes one tensor may take (shape inference refuses more); 0:
   * CLINFER_MAX_TENSOR_BYTES. Subgraphs use their root's. */
  guint64 memory_limit;
};

ClinferGraph *clinfer_graph_new (const char *name, const char *origin);
/* The root graph's memory_limit, or CLINFER_MAX_TENSOR_BYTES. */
guint64 clinfer_graph_get_memory_limit (const ClinferGraph *graph);
void clinfer_graph_free (ClinferGraph *graph);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferGraph, clinfer_graph_free)

/* Adds a node with @n_inputs absent inputs and @n_outputs outputs whose
 * tensor names are "<node label>:<i>" until set. The graph owns it. */
ClinferNode *clinfer_graph_add_node (ClinferGraph *graph, const char *op_type,
    const char *domain, const char *name, guint n_inputs, guint n_outputs);
/* Adds a Parameter node and registers it as a graph input. */
ClinferNode *clinfer_graph_add_input (ClinferGraph *graph, const char *name,
    ClinferElementType type, const ClinferShape *shape);
/* Adds a Constant node holding @value (a reference is taken). */
ClinferNode *clinfer_graph_add_constant (ClinferGraph *graph, const char *name,
    ClinferTensor *value);
void clinfer_graph_add_output (ClinferGraph *graph, ClinferPortRef ref,
    const char *name);
/* Removes and frees @node. Callers must have rewired its consumers. */
void clinfer_graph_remove_node (ClinferGraph *graph, ClinferNode *node);
/* Makes every consumer of @from (node inputs and graph outputs) read @to
 * instead. */
void clinfer_graph_replace_uses (ClinferGraph *graph, ClinferPortRef from,
    ClinferPortRef to);
/* Number of node inputs + graph outputs that read @ref. */
guint clinfer_graph_count_uses (const ClinferGraph *graph, ClinferPortRef ref);
/* Deep copy (attributes and constants shared by reference). Port pointers
 * are remapped to the copy. */
ClinferGraph *clinfer_graph_copy (const ClinferGraph *graph);

/* Nodes in an order where every producer precedes its consumers (stable:
 * ties keep insertion order). FALSE with CLINFER_ERROR_PARSE naming one
 * node on a cycle. (transfer container) */
GPtrArray *clinfer_graph_topological_order (const ClinferGraph *graph,
    GError **error);

/* Opset version imported for @domain ("" = ai.onnx), 0 if none. */
int clinfer_graph_get_opset (const ClinferGraph *graph, const char *domain);

/* Node helpers */
void clinfer_node_set_attr (ClinferNode *node, const char *name, ClinferAttr *attr);
/* Copies every attribute of @src onto @dst (tensors and graphs shared by
 * reference, as clinfer_graph_copy() does). */
void clinfer_node_copy_attrs (const ClinferNode *src, ClinferNode *dst);
const ClinferAttr *clinfer_node_get_attr (const ClinferNode *node, const char *name);
void clinfer_attr_free (ClinferAttr *attr);
ClinferAttr *clinfer_attr_new_int (int64_t v);
ClinferAttr *clinfer_attr_new_float (float v);
ClinferAttr *clinfer_attr_new_string (const char *v);
ClinferAttr *clinfer_attr_new_ints (const int64_t *v, gsize n);
ClinferAttr *clinfer_attr_new_floats (const float *v, gsize n);
ClinferAttr *clinfer_attr_new_tensor (ClinferTensor *t);

/* Typed readers. They return @def when the attribute is absent and fail
 * with CLINFER_ERROR_INVALID_ARGUMENT naming the node when it has another
 * type. */
gboolean clinfer_node_attr_int (const ClinferNode *node, const char *name,
    int64_t def, int64_t *out, GError **error);
gboolean clinfer_node_attr_float (const ClinferNode *node, const char *name,
    float def, float *out, GError **error);
/* (transfer none) *out points into the attribute or is @def. */
gboolean clinfer_node_attr_string (const ClinferNode *node, const char *name,
    const char *def, const char **out, GError **error);
/* *n = 0 and *out = NULL when absent. (transfer none) */
gboolean clinfer_node_attr_ints (const ClinferNode *node, const char *name,
    const int64_t **out, gsize *n, GError **error);
gboolean clinfer_node_attr_floats (const ClinferNode *node, const char *name,
    const float **out, gsize *n, GError **error);

/* "Conv 'conv1'" style label for messages (static per node until freed):
 * [<domain>.]<op> '<name>' (or #<id> (output '<name>') for a node without
 * a name), then " (<label_note>)" when the node has one. */
const char *clinfer_node_label (const ClinferNode *node);
/* Sets the note shown after the label (borrowed; NULL for none). */
void clinfer_node_set_label_note (ClinferNode *node, const char *note);

/* Engine errors about a node have one format:
 *
 *   <model>: node <label>[ on <device>]: <what>
 *
 * e.g. "face.onnx: node Conv 'conv1' on GPU.0: clEnqueueNDRangeKernel
 * failed (-5)" or "m.onnx: node ns.Op 'n' (custom op ns.Op from libx.so)
 * on CPU: compute failed: NaN in the input". Ops write "node <label>:
 * <what>" (they know neither model nor device); the layer that knows them
 * calls this, which rewrites *@error into the format: a leading
 * "<model>: " and "[node ]<label>[ on <device>][:]" already there are
 * dropped, so nothing is named twice. @device may be NULL (read and
 * compile-time checks not tied to a device). */
void clinfer_node_prefix_error (GError **error, const ClinferNode *node,
    const char *device);
/* Description of input @i's producer port, or NULL when absent. */
ClinferPortDesc *clinfer_node_input_desc (const ClinferNode *node, guint i);
/* Number of present (non-absent) inputs, counting trailing absent ones
 * out. */
guint clinfer_node_n_present_inputs (const ClinferNode *node);

G_END_DECLS
