/* clinfer — OpenVINO IR frontend internals shared by the reader
 * (ir-reader.c: XML, ports, edges, constants, wiring) and the op
 * translators (ir-ops*.c), plus element type names used by the writer. */
#pragma once

#include "frontend/ir/ir-reader.h"

G_BEGIN_DECLS

/* One <port> of a layer. */
typedef struct {
  guint id;                  /* the port's id attribute */
  ClinferElementType type;   /* UNDEFINED when no precision is given */
  ClinferShape shape;        /* rank -1 when dims are unknown */
  char **names;              /* tensor names (NULL-terminated), may be NULL */
  gboolean described;        /* precision given: type and dims are known */
} IrPort;

/* Where an IR input is read inside the translated nodes. */
typedef struct {
  guint input;               /* position in the layer's input list */
  ClinferNode *node;
  guint index;               /* input index of @node */
} IrSink;

typedef struct _IrLayer IrLayer;
typedef struct _IrReader IrReader;
typedef struct _IrOpDef IrOpDef;

struct _IrLayer {
  gint64 id;
  char *name;
  char *type;                /* as written in the file */
  char *version;             /* "opset8", "clinfer", ... */
  int opset;                 /* N of "opsetN", 0 otherwise */
  int line;                  /* line of <layer> in the XML */
  GHashTable *data;          /* <data> attributes: char* -> char* */
  char *output_names;        /* Result's output_names attribute, or NULL */
  GArray *inputs;            /* IrPort, in file order */
  GArray *outputs;           /* IrPort, in file order */
  IrLayer **src;             /* producer layer of each input */
  guint *src_port;           /* producer output position of each input */
  const IrOpDef *def;
  /* Translation results. */
  ClinferPortRef *out_refs;  /* engine port giving each output */
  GArray *sinks;             /* IrSink */
  ClinferTensor *value;      /* Const layers: the tensor (owned) */
  char *label_;              /* cache of ir_layer_label() */
};

struct _IrReader {
  ClinferGraph *graph;
  const char *origin;        /* file named in messages */
  GBytes *weights;           /* .bin contents, may be NULL */
  const char *bin_path;      /* for messages, may be NULL */
  GPtrArray *layers;         /* IrLayer*, document order (owned) */
  GHashTable *by_id;         /* gint64* id -> IrLayer* */
  GHashTable *tensor_names;  /* names in use in the graph (set) */
};

/* Translates one layer into engine nodes: declares, with ir_sink(), where
 * each IR input is read and, with ir_output(), which engine port gives
 * each IR output. Inputs are wired after every layer is translated. */
typedef gboolean (*IrTranslateFunc) (IrReader *r, IrLayer *l, GError **error);

struct _IrOpDef {
  const char *type;          /* canonical OpenVINO type name */
  int since_opset;           /* first opsetN holding this version */
  int last_opset;            /* last one (inclusive), 0 = up to the newest */
  guint min_inputs, max_inputs;
  guint min_outputs, max_outputs;
  IrTranslateFunc translate;
  const char *onnx_op;       /* for 1:1 translations, else NULL */
  int onnx_opset;
};

/* Op tables, terminated by a NULL type. */
/* The translators of each op family (ir-ops-<family>.c), NULL-terminated. */
extern const IrOpDef clinfer_ir_ops_graph[];
extern const IrOpDef clinfer_ir_ops_eltwise[];
extern const IrOpDef clinfer_ir_ops_conv[];
extern const IrOpDef clinfer_ir_ops_shape[];
extern const IrOpDef clinfer_ir_ops_math[];
extern const IrOpDef clinfer_ir_ops_resize[];
extern const IrOpDef clinfer_ir_ops_index[];
/* Any layer whose version is CLINFER_IR_EXTENSION_OPSET. */
extern const IrOpDef clinfer_ir_extension_op;
/* A layer whose version is not an opset ("opsetN") names an extension
 * (OpenVINO's custom operations): it becomes a node of op type = layer
 * type in domain = version, with the <data> attributes as text, for a
 * custom op of that domain to handle (docs/custom-ops.md). */
extern const IrOpDef clinfer_ir_foreign_op;
const IrOpDef *clinfer_ir_op_lookup (const char *type, int opset,
    gboolean *type_known);

/* ---- element types ---- */

/* "f32" style IR element_type and "FP32" style precision, NULL when the
 * type has no IR name. */
const char *clinfer_ir_type_name (ClinferElementType type);
const char *clinfer_ir_precision_name (ClinferElementType type);
/* Either spelling (case-insensitive); UNDEFINED when unknown. */
ClinferElementType clinfer_ir_type_from_name (const char *name);

/* ---- reader helpers for the translators (ir-reader.c) ---- */

/* "layer 12 ('conv1', Convolution-opset1)" for messages. */
const char *ir_layer_label (IrLayer *l);
/* Sets @error prefixed with the file and the layer. */
void ir_set_error (IrReader *r, IrLayer *l, GError **error, int code,
    const char *fmt, ...) G_GNUC_PRINTF (5, 6);

/* A node named after the layer (+ "/@suffix" when not NULL) in the default
 * domain at ONNX @opset. */
ClinferNode *ir_add_node (IrReader *r, IrLayer *l, const char *op_type,
    int opset, guint n_inputs, guint n_outputs, const char *suffix);
/* IR input @input of @l is read by input @index of @node. */
void ir_sink (IrLayer *l, guint input, ClinferNode *node, guint index);
/* IR output @output of @l is port @port of @node; the port takes the IR
 * tensor name when the file gives one. */
void ir_output (IrReader *r, IrLayer *l, guint output, ClinferNode *node,
    guint port);
/* Value of IR input @input when its producer is a Const layer, or a
 * Convert to f32 of one (a decompressed f16 value), else NULL.
 * (transfer none) */
ClinferTensor *ir_input_const (IrReader *r, IrLayer *l, guint input,
    GError **error);
/* Port of IR input @input as declared in the file. */
const IrPort *ir_input_port (IrLayer *l, guint input);
/* Element type and shape of IR input @input: from the port when the file
 * describes it, else from the producer's output port. UNDEFINED / rank -1
 * when unknown. */
ClinferElementType ir_input_type (IrLayer *l, guint input);
ClinferShape ir_input_shape (IrLayer *l, guint input);
/* Adds a Constant node (a reference to @value is taken). */
ClinferNode *ir_add_const (IrReader *r, IrLayer *l, const char *suffix,
    ClinferTensor *value);
ClinferNode *ir_add_const_i64 (IrReader *r, IrLayer *l, const char *suffix,
    const int64_t *v, gsize n, gboolean scalar);
ClinferNode *ir_add_const_f32 (IrReader *r, IrLayer *l, const char *suffix,
    const float *v, gsize n, gboolean scalar);
/* Connects input @index of @node to port 0 of @src. */
void ir_connect (ClinferNode *node, guint index, ClinferNode *src);

/* <data> attribute readers. An absent attribute gives the default (or an
 * error naming it when @required); a malformed one is an error. */
const char *ir_attr_str (IrLayer *l, const char *name, const char *def);
gboolean ir_attr_int (IrReader *r, IrLayer *l, const char *name,
    gboolean required, int64_t def, int64_t *out, GError **error);
gboolean ir_attr_float (IrReader *r, IrLayer *l, const char *name,
    gboolean required, float def, float *out, GError **error);
gboolean ir_attr_bool (IrReader *r, IrLayer *l, const char *name,
    gboolean def, gboolean *out, GError **error);
/* (transfer full) *out NULL and *n 0 when absent and not required; an
 * empty string is an empty list. */
gboolean ir_attr_ints (IrReader *r, IrLayer *l, const char *name,
    gboolean required, int64_t **out, gsize *n, GError **error);
/* Index of @value in @names (NULL-terminated, case-insensitive); error
 * listing the accepted values otherwise. Absent = @def. */
gboolean ir_attr_enum (IrReader *r, IrLayer *l, const char *name,
    const char *const *names, int def, int *out, GError **error);


G_END_DECLS
