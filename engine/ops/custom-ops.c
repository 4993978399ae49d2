/* clinfer — custom CPU ops: loading libraries, checking and copying the
 * op structs, and wrapping each op in a ClinferOpDef (prepare = create
 * kernel, infer = the op's shape inference or "like input 0", eval_alloc
 * = compute) so the engine runs them like built-in ops.
 *
 * Ownership: a ClinferOpSet holds refcounted entries; an entry owns its
 * def (for custom ops: a CustomOp with copies of the struct's strings
 * and arrays) and a reference on the library it came from, so a library
 * stays loaded while any config, model or compiled model holds one of
 * its ops. Per-node kernels (NodeData) are freed with their node, before
 * the set that owns the def is released. */
#include "ops/custom-ops.h"
#include <gmodule.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

/* ---------------------------------------------------------------- */
/* Libraries and entries                                             */

typedef struct {
  gint ref;
  GModule *module;
  char *path;
} CustomLib;

static CustomLib *
custom_lib_ref (CustomLib *lib)
{
  if (lib)
    g_atomic_int_inc (&lib->ref);
  return lib;
}

static void
custom_lib_unref (CustomLib *lib)
{
  if (lib == NULL || !g_atomic_int_dec_and_test (&lib->ref))
    return;
  if (lib->module)
    g_module_close (lib->module);
  g_free (lib->path);
  g_free (lib);
}

typedef struct {
  ClinferOpDef def;          /* first member: node->def points here */
  ClinferCustomOp op;        /* the registered struct, pointers below */
  char *name, *domain;
  ClinferCustomPort *inputs, *outputs;
  CustomLib *lib;            /* NULL for ops added from code */
  char *origin;              /* library path, or the caller's name */
  char *note;                /* def.note: "custom op <domain.name> from <origin>" */
} CustomOp;

typedef struct {
  gint ref;
  const ClinferOpDef *def;
  gpointer owner;
  GDestroyNotify destroy;
} SetEntry;

struct _ClinferOpSet {
  gint ref;
  GPtrArray *entries;        /* SetEntry* (refs) */
};

static void
entry_unref (gpointer p)
{
  SetEntry *e = p;

  if (!g_atomic_int_dec_and_test (&e->ref))
    return;
  if (e->destroy)
    e->destroy (e->owner);
  g_free (e);
}

static SetEntry *
entry_ref (SetEntry *e)
{
  g_atomic_int_inc (&e->ref);
  return e;
}

ClinferOpSet *
clinfer_op_set_new (void)
{
  ClinferOpSet *s = g_new0 (ClinferOpSet, 1);

  s->ref = 1;
  s->entries = g_ptr_array_new_with_free_func (entry_unref);
  return s;
}

ClinferOpSet *
clinfer_op_set_ref (ClinferOpSet *set)
{
  g_atomic_int_inc (&set->ref);
  return set;
}

void
clinfer_op_set_unref (ClinferOpSet *set)
{
  if (set == NULL || !g_atomic_int_dec_and_test (&set->ref))
    return;
  g_ptr_array_unref (set->entries);
  g_free (set);
}

ClinferOpSet *
clinfer_op_set_copy (const ClinferOpSet *set)
{
  ClinferOpSet *s = clinfer_op_set_new ();

  for (guint i = 0; set && i < set->entries->len; i++)
    g_ptr_array_add (s->entries, entry_ref (g_ptr_array_index (set->entries, i)));
  return s;
}

guint
clinfer_op_set_get_size (const ClinferOpSet *set)
{
  return set ? set->entries->len : 0;
}

void
clinfer_op_set_truncate (ClinferOpSet *set, guint size)
{
  if (size < set->entries->len)
    g_ptr_array_remove_range (set->entries, size, set->entries->len - size);
}

void
clinfer_op_set_merge (ClinferOpSet *dst, const ClinferOpSet *src)
{
  for (guint i = 0; src && i < src->entries->len; i++) {
    SetEntry *e = g_ptr_array_index (src->entries, i);
    gboolean have = FALSE;
    for (guint j = 0; j < dst->entries->len && !have; j++)
      have = g_ptr_array_index (dst->entries, j) == e;
    if (!have)
      g_ptr_array_add (dst->entries, entry_ref (e));
  }
}

static gboolean
versions_overlap (const ClinferOpDef *a, const ClinferOpDef *b)
{
  int a_end = a->last_version ? a->last_version : G_MAXINT;
  int b_end = b->last_version ? b->last_version : G_MAXINT;

  return a->since_version <= b_end && b->since_version <= a_end;
}

const ClinferOpDef *
clinfer_op_set_lookup (const ClinferOpSet *set, const char *domain,
    const char *op_type, int opset)
{
  if (set == NULL)
    return NULL;
  /* Later entries win (a config file's later layer replaces an earlier
   * one). */
  for (guint i = set->entries->len; i-- > 0;) {
    const ClinferOpDef *d = ((SetEntry *) g_ptr_array_index (set->entries, i))->def;
    if (strcmp (d->op_type, op_type) != 0 || (strcmp (d->domain, "*") != 0
            && !clinfer_op_domain_equal (d->domain, domain)))
      continue;
    if (opset == 0 || (opset >= d->since_version
            && (d->last_version == 0 || opset <= d->last_version)))
      return d;
  }
  return NULL;
}

void
clinfer_op_set_add_def (ClinferOpSet *set, const ClinferOpDef *def,
    gpointer owner, GDestroyNotify destroy)
{
  SetEntry *e = g_new0 (SetEntry, 1);

  e->ref = 1;
  e->def = def;
  e->owner = owner;
  e->destroy = destroy;
  g_ptr_array_add (set->entries, e);
}

/* ---------------------------------------------------------------- */
/* Error helpers                                                     */

/* vprintf into a fresh string (NULL format gives an empty message). */
static char *
format_message (const char *format, va_list ap)
{
  return format ? g_strdup_vprintf (format, ap) : g_strdup ("");
}

#define SET_MESSAGE(field, format) G_STMT_START { \
    va_list ap; \
    va_start (ap, format); \
    g_free (field); \
    field = format_message (format, ap); \
    va_end (ap); \
  } G_STMT_END

/* ---------------------------------------------------------------- */
/* Node attributes (create_kernel)                                   */

struct _ClinferKernelInfo {
  const ClinferNode *node;
  char *error;
  int64_t dims[CLINFER_MAX_RANK], strides[CLINFER_MAX_RANK];
};

void
clinfer_kernel_info_set_error (ClinferKernelInfo *info, const char *format, ...)
{
  SET_MESSAGE (info->error, format);
}

int
clinfer_kernel_info_has_attribute (const ClinferKernelInfo *info,
    const char *name)
{
  return name && clinfer_node_get_attr (info->node, name) != NULL;
}

/* The attribute @name, or NULL with the error set. */
static const ClinferAttr *
info_attr (ClinferKernelInfo *info, const char *name)
{
  const ClinferAttr *a = name ? clinfer_node_get_attr (info->node, name) : NULL;

  if (a == NULL)
    clinfer_kernel_info_set_error (info, "attribute '%s' is missing",
        name ? name : "(null)");
  return a;
}

static int
wrong_type (ClinferKernelInfo *info, const char *name, const ClinferAttr *a,
    const char *want)
{
  clinfer_kernel_info_set_error (info, "attribute '%s' is %s, expected %s",
      name, clinfer_attr_type_name (a->type), want);
  return -1;
}

/* IR attributes are text: parse a number from a string attribute. */
static gboolean
parse_int_text (const char *s, int64_t *v)
{
  char *end;
  gint64 x;

  if (s == NULL || *s == '\0')
    return FALSE;
  errno = 0;
  x = g_ascii_strtoll (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return FALSE;
  *v = x;
  return TRUE;
}

static gboolean
parse_float_text (const char *s, float *v)
{
  char *end;
  double x;

  if (s == NULL || *s == '\0')
    return FALSE;
  errno = 0;
  x = g_ascii_strtod (s, &end);
  if (errno != 0 || *end != '\0')
    return FALSE;
  *v = (float) x;
  return TRUE;
}

int
clinfer_kernel_info_get_int (ClinferKernelInfo *info, const char *name,
    int64_t *value)
{
  const ClinferAttr *a = info_attr (info, name);

  if (a == NULL)
    return -1;
  if (a->type == CLINFER_ATTR_INT) {
    *value = a->i;
    return 0;
  }
  if (a->type == CLINFER_ATTR_STRING && parse_int_text (a->s, value))
    return 0;
  return wrong_type (info, name, a, "an int");
}

int
clinfer_kernel_info_get_float (ClinferKernelInfo *info, const char *name,
    float *value)
{
  const ClinferAttr *a = info_attr (info, name);

  if (a == NULL)
    return -1;
  if (a->type == CLINFER_ATTR_FLOAT) {
    *value = a->f;
    return 0;
  }
  if (a->type == CLINFER_ATTR_INT) {
    *value = (float) a->i;
    return 0;
  }
  if (a->type == CLINFER_ATTR_STRING && parse_float_text (a->s, value))
    return 0;
  return wrong_type (info, name, a, "a float");
}

int
clinfer_kernel_info_get_string (ClinferKernelInfo *info, const char *name,
    char *buffer, size_t *size)
{
  const ClinferAttr *a = info_attr (info, name);
  size_t need;

  if (a == NULL)
    return -1;
  if (size == NULL) {
    clinfer_kernel_info_set_error (info, "attribute '%s': size is NULL", name);
    return -1;
  }
  if (a->type != CLINFER_ATTR_STRING)
    return wrong_type (info, name, a, "a string");
  need = strlen (a->s) + 1;
  if (buffer == NULL) {
    *size = need;
    return 0;
  }
  if (*size < need) {
    clinfer_kernel_info_set_error (info, "attribute '%s' needs %zu bytes, "
        "the buffer has %zu", name, need, *size);
    return -1;
  }
  memcpy (buffer, a->s, need);
  *size = need;
  return 0;
}

/* Splits IR list text "1,2,3" (also spaces) into tokens. */
static char **
split_list_text (const char *s, gsize *n)
{
  char **tok = g_strsplit_set (s, ", ", -1);
  gsize k = 0;

  for (gsize i = 0; tok[i]; i++) {
    if (*tok[i] == '\0') {
      g_free (tok[i]);
      continue;
    }
    tok[k++] = tok[i];
  }
  tok[k] = NULL;
  *n = k;
  return tok;
}

/* get_ints / get_floats: the size protocol over an int or float list
 * attribute, or IR list text. */
static int
get_list (ClinferKernelInfo *info, const char *name, gboolean floats,
    void *values, size_t *n)
{
  const ClinferAttr *a = info_attr (info, name);
  const char *want = floats ? "a list of floats" : "a list of ints";
  g_auto (GStrv) tok = NULL;
  gsize count;

  if (a == NULL)
    return -1;
  if (n == NULL) {
    clinfer_kernel_info_set_error (info, "attribute '%s': n is NULL", name);
    return -1;
  }
  if (a->type == (floats ? CLINFER_ATTR_FLOATS : CLINFER_ATTR_INTS))
    count = floats ? a->floats.n : a->ints.n;
  else if (a->type == CLINFER_ATTR_STRING)
    tok = split_list_text (a->s, &count);
  else
    return wrong_type (info, name, a, want);
  if (values == NULL) {
    *n = count;
    return 0;
  }
  if (*n < count) {
    clinfer_kernel_info_set_error (info, "attribute '%s' has %zu values, "
        "the buffer %zu", name, (size_t) count, *n);
    return -1;
  }
  for (gsize i = 0; i < count; i++) {
    gboolean ok = TRUE;
    if (floats && tok)
      ok = parse_float_text (tok[i], (float *) values + i);
    else if (floats)
      ((float *) values)[i] = a->floats.v[i];
    else if (tok)
      ok = parse_int_text (tok[i], (int64_t *) values + i);
    else
      ((int64_t *) values)[i] = a->ints.v[i];
    if (!ok)
      return wrong_type (info, name, a, want);
  }
  *n = count;
  return 0;
}

int
clinfer_kernel_info_get_ints (ClinferKernelInfo *info, const char *name,
    int64_t *values, size_t *n)
{
  return get_list (info, name, FALSE, values, n);
}

int
clinfer_kernel_info_get_floats (ClinferKernelInfo *info, const char *name,
    float *values, size_t *n)
{
  return get_list (info, name, TRUE, values, n);
}

/* Fills @view for @t with dims/strides stored in @dims/@strides. */
static void
view_tensor (const ClinferTensor *t, ClinferCustomTensor *view, int64_t *dims,
    int64_t *strides)
{
  const ClinferShape *s = clinfer_tensor_get_shape (t);

  memcpy (dims, s->dims, sizeof (int64_t) * (gsize) MAX (s->rank, 0));
  memcpy (strides, clinfer_tensor_get_strides (t),
      sizeof (int64_t) * (gsize) MAX (s->rank, 0));
  view->type = clinfer_tensor_get_element_type (t);
  view->rank = s->rank;
  view->dims = dims;
  view->strides = strides;
  view->data = clinfer_tensor_get_const_data (t);
}

int
clinfer_kernel_info_get_tensor (ClinferKernelInfo *info, const char *name,
    ClinferCustomTensor *tensor)
{
  const ClinferAttr *a = info_attr (info, name);

  if (a == NULL)
    return -1;
  if (a->type != CLINFER_ATTR_TENSOR)
    return wrong_type (info, name, a, "a tensor");
  view_tensor (a->t, tensor, info->dims, info->strides);
  return 0;
}

const char *
clinfer_kernel_info_get_node_name (const ClinferKernelInfo *info)
{
  return info->node->name;
}

size_t
clinfer_kernel_info_get_n_inputs (const ClinferKernelInfo *info)
{
  return info->node->n_inputs;
}

size_t
clinfer_kernel_info_get_n_outputs (const ClinferKernelInfo *info)
{
  return info->node->n_outputs;
}

ClinferElementType
clinfer_kernel_info_get_input_type (const ClinferKernelInfo *info, size_t index)
{
  const ClinferPortDesc *d;

  if (index >= info->node->n_inputs)
    return CLINFER_TYPE_UNDEFINED;
  d = clinfer_node_input_desc (info->node, (guint) index);
  return d ? d->type : CLINFER_TYPE_UNDEFINED;
}

/* ---------------------------------------------------------------- */
/* The op def callbacks                                              */

typedef struct {
  const CustomOp *cop;
  void *kernel;
} NodeData;

/* Port limits of one compute call (those of the CPU executor). */
#define CUSTOM_MAX_INPUTS 64
#define CUSTOM_MAX_OUTPUTS 16

static void
node_data_free (gpointer p)
{
  NodeData *d = p;

  if (d->cop->op.destroy_kernel && d->kernel)
    d->cop->op.destroy_kernel (d->kernel);
  g_free (d);
}

static const CustomOp *
node_op (const ClinferNode *node)
{
  return (const CustomOp *) node->def;
}

/* "node <label>: <callback> failed: <message>"; the label carries the
 * def's note ("custom op ns.Name from libfoo.so") and the layer that
 * knows the model and the device completes the format
 * (clinfer_node_prefix_error()). */
static void
set_node_error (const ClinferNode *node, const char *what, const char *msg,
    GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "node %s: %s failed: %s", clinfer_node_label (node), what,
      msg && *msg ? msg : "no message given");
}

/* The port of the op that the node's input or output @i is. */
static const ClinferCustomPort *
op_port (const ClinferCustomPort *ports, size_t n, guint i)
{
  return n ? &ports[MIN ((size_t) i, n - 1)] : NULL;
}

/* A required port the model leaves out (an empty name) would reach
 * compute as NULL, or an output nobody reads: refuse it by name. */
static gboolean
check_ports_present (const ClinferNode *node, const CustomOp *cop,
    GError **error)
{
  for (guint i = 0; i < node->n_inputs; i++) {
    const ClinferCustomPort *p = op_port (cop->op.inputs, cop->op.n_inputs, i);
    if (node->inputs[i].node == NULL && p && p->kind != CLINFER_PORT_OPTIONAL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "node %s: input %u is left out (empty name), but the op requires "
          "it", clinfer_node_label (node), i);
      return FALSE;
    }
  }
  for (guint i = 0; i < node->n_outputs; i++) {
    const ClinferCustomPort *p = op_port (cop->op.outputs, cop->op.n_outputs, i);
    if (node->outputs[i].left_out && p && p->kind != CLINFER_PORT_OPTIONAL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "node %s: output %u is left out (empty name), but the op requires "
          "it", clinfer_node_label (node), i);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
custom_prepare (ClinferNode *node, GError **error)
{
  const CustomOp *cop = node_op (node);
  ClinferKernelInfo info = { node, NULL, { 0 }, { 0 } };
  void *kernel = NULL;
  NodeData *d;

  if (!check_ports_present (node, cop, error))
    return FALSE;
  if (cop->op.create_kernel
      && cop->op.create_kernel (&cop->op, &info, &kernel) != 0) {
    set_node_error (node, "create_kernel", info.error, error);
    g_free (info.error);
    return FALSE;
  }
  g_free (info.error);
  d = g_new0 (NodeData, 1);
  d->cop = cop;
  d->kernel = kernel;
  node->op_data = d;
  return TRUE;
}

struct _ClinferShapeContext {
  const ClinferNode *node;
  const ClinferValueInfo *in;
  ClinferValueInfo *out;
  gboolean *set;
  char *error;
  ClinferCustomTensor value;
  int64_t dims[CLINFER_MAX_RANK], strides[CLINFER_MAX_RANK];
};

size_t
clinfer_shape_context_get_n_inputs (const ClinferShapeContext *ctx)
{
  return ctx->node->n_inputs;
}

int
clinfer_shape_context_get_input (const ClinferShapeContext *ctx, size_t index,
    ClinferElementType *type, int *rank, int64_t *dims)
{
  const ClinferValueInfo *v;

  if (index >= ctx->node->n_inputs || !ctx->in[index].present)
    return 0;
  v = &ctx->in[index];
  if (type)
    *type = v->type;
  if (rank)
    *rank = v->shape.rank;
  if (dims && v->shape.rank > 0)
    memcpy (dims, v->shape.dims, sizeof (int64_t) * (gsize) v->shape.rank);
  return 1;
}

const ClinferCustomTensor *
clinfer_shape_context_get_input_value (ClinferShapeContext *ctx, size_t index)
{
  if (index >= ctx->node->n_inputs || !ctx->in[index].present
      || ctx->in[index].value == NULL)
    return NULL;
  view_tensor (ctx->in[index].value, &ctx->value, ctx->dims, ctx->strides);
  return &ctx->value;
}

size_t
clinfer_shape_context_get_n_outputs (const ClinferShapeContext *ctx)
{
  return ctx->node->n_outputs;
}

void
clinfer_shape_context_set_error (ClinferShapeContext *ctx, const char *format, ...)
{
  SET_MESSAGE (ctx->error, format);
}

int
clinfer_shape_context_set_output (ClinferShapeContext *ctx, size_t index,
    ClinferElementType type, int rank, const int64_t *dims)
{
  if (index >= ctx->node->n_outputs) {
    clinfer_shape_context_set_error (ctx, "output %zu does not exist (the node "
        "has %u)", index, ctx->node->n_outputs);
    return -1;
  }
  if (rank < -1 || rank > CLINFER_MAX_RANK || (rank > 0 && dims == NULL)) {
    clinfer_shape_context_set_error (ctx, "output %zu: rank %d is not "
        "supported (0 to %d, or -1 for unknown)", index, rank, CLINFER_MAX_RANK);
    return -1;
  }
  if (clinfer_element_type_size (type) == 0) {
    clinfer_shape_context_set_error (ctx, "output %zu: invalid element type %d",
        index, (int) type);
    return -1;
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0 && dims[i] != CLINFER_DIM_DYNAMIC) {
      clinfer_shape_context_set_error (ctx, "output %zu: dim %d is %" G_GINT64_FORMAT,
          index, i, dims[i]);
      return -1;
    }
  ctx->out[index].type = type;
  ctx->out[index].shape = rank < 0 ? clinfer_shape_unknown ()
      : clinfer_shape_make (rank, dims);
  ctx->set[index] = TRUE;
  return 0;
}

static gboolean
check_input_types (const ClinferNode *node, const ClinferValueInfo *in,
    GError **error)
{
  const CustomOp *cop = node_op (node);

  for (guint i = 0; i < node->n_inputs && cop->op.n_inputs > 0; i++) {
    size_t p = MIN ((size_t) i, cop->op.n_inputs - 1);
    ClinferElementType want = cop->op.inputs[p].type;
    if (!in[i].present || want == CLINFER_TYPE_UNDEFINED
        || in[i].type == CLINFER_TYPE_UNDEFINED || in[i].type == want)
      continue;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "node %s: input %u is %s, the op takes %s",
        clinfer_node_label (node), i,
        clinfer_element_type_name (in[i].type), clinfer_element_type_name (want));
    return FALSE;
  }
  return TRUE;
}

static gboolean
custom_infer (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const CustomOp *cop = node_op (node);
  NodeData *d = node->op_data;
  g_autofree gboolean *set = g_new0 (gboolean, MAX (node->n_outputs, 1));
  ClinferShapeContext ctx = { node, in, out, set, NULL, { 0 }, { 0 }, { 0 } };

  if (!check_input_types (node, in, error))
    return FALSE;
  if (cop->op.infer_shapes == NULL) {
    for (guint i = 0; i < node->n_outputs; i++) {
      size_t p = MIN ((size_t) i, cop->op.n_outputs - 1);
      ClinferElementType t = cop->op.outputs[p].type;
      out[i].type = t != CLINFER_TYPE_UNDEFINED ? t : in[0].type;
      out[i].shape = in[0].present ? in[0].shape : clinfer_shape_unknown ();
    }
    return TRUE;
  }
  if (cop->op.infer_shapes (&cop->op, d ? d->kernel : NULL, &ctx) != 0) {
    set_node_error (node, "infer_shapes", ctx.error, error);
    g_free (ctx.error);
    return FALSE;
  }
  g_free (ctx.error);
  for (guint i = 0; i < node->n_outputs; i++)
    if (!set[i]) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "node %s: infer_shapes did not set output %u",
          clinfer_node_label (node), i);
      return FALSE;
    }
  return TRUE;
}

struct _ClinferKernelContext {
  const ClinferNode *node;
  ClinferTensor *const *in;
  ClinferTensor **out;
  gboolean *allocated;
  ClinferCustomTensor *views;
  int64_t *dims, *strides;   /* CLINFER_MAX_RANK per input */
  char *error;
};

size_t
clinfer_kernel_context_get_n_inputs (const ClinferKernelContext *ctx)
{
  return ctx->node->n_inputs;
}

const ClinferCustomTensor *
clinfer_kernel_context_get_input (ClinferKernelContext *ctx, size_t index)
{
  if (index >= ctx->node->n_inputs || ctx->in[index] == NULL)
    return NULL;
  return &ctx->views[index];
}

size_t
clinfer_kernel_context_get_n_outputs (const ClinferKernelContext *ctx)
{
  return ctx->node->n_outputs;
}

ClinferElementType
clinfer_kernel_context_get_output_type (const ClinferKernelContext *ctx,
    size_t index)
{
  return index < ctx->node->n_outputs ? ctx->node->outputs[index].type
      : CLINFER_TYPE_UNDEFINED;
}

void
clinfer_kernel_context_set_error (ClinferKernelContext *ctx, const char *format, ...)
{
  SET_MESSAGE (ctx->error, format);
}

int
clinfer_kernel_context_get_n_threads (const ClinferKernelContext *ctx)
{
  return MAX (omp_get_max_threads (), 1);
}

void *
clinfer_kernel_context_allocate_output (ClinferKernelContext *ctx,
    size_t index, int rank, const int64_t *dims)
{
  ClinferShape shape;
  GError *local = NULL;

  if (index >= ctx->node->n_outputs) {
    clinfer_kernel_context_set_error (ctx, "output %zu does not exist (the "
        "node has %u)", index, ctx->node->n_outputs);
    return NULL;
  }
  if (ctx->allocated[index]) {
    clinfer_kernel_context_set_error (ctx, "output %zu was already allocated",
        index);
    return NULL;
  }
  if (rank < 0 || rank > CLINFER_MAX_RANK || (rank > 0 && dims == NULL)) {
    clinfer_kernel_context_set_error (ctx, "output %zu: rank %d is not "
        "supported (0 to %d)", index, rank, CLINFER_MAX_RANK);
    return NULL;
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0) {
      clinfer_kernel_context_set_error (ctx, "output %zu: dim %d is %"
          G_GINT64_FORMAT, index, i, dims[i]);
      return NULL;
    }
  shape = clinfer_shape_make (rank, dims);
  if (ctx->out[index]) {
    /* Planned memory: the shape was fixed by shape inference. */
    const ClinferShape *want = clinfer_tensor_get_shape (ctx->out[index]);
    if (!clinfer_shape_equal (want, &shape)) {
      g_autofree char *w = clinfer_shape_to_string (want);
      g_autofree char *g = clinfer_shape_to_string (&shape);
      clinfer_kernel_context_set_error (ctx, "output %zu allocated as %s, but "
          "shape inference gave %s", index, g, w);
      return NULL;
    }
  } else {
    ctx->out[index] = clinfer_tensor_new (ctx->node->outputs[index].type,
        &shape, &local);
    if (ctx->out[index] == NULL) {
      clinfer_kernel_context_set_error (ctx, "output %zu: %s", index,
          local->message);
      g_error_free (local);
      return NULL;
    }
  }
  ctx->allocated[index] = TRUE;
  return clinfer_tensor_get_data (ctx->out[index]);
}

static gboolean
custom_eval (const ClinferNode *node, ClinferTensor *const *inputs,
    ClinferTensor **outputs, GError **error)
{
  const CustomOp *cop = node_op (node);
  NodeData *d = node->op_data;
  /* On the stack: nothing is allocated per inference. The CPU executor
   * runs nodes of at most 64 inputs and 16 outputs. */
  gboolean allocated[CUSTOM_MAX_OUTPUTS] = { FALSE };
  ClinferCustomTensor views[CUSTOM_MAX_INPUTS];
  int64_t dims[CUSTOM_MAX_INPUTS * CLINFER_MAX_RANK];
  int64_t strides[CUSTOM_MAX_INPUTS * CLINFER_MAX_RANK];
  ClinferKernelContext ctx = { node, inputs, outputs, allocated, views, dims,
    strides, NULL };
  int rc;

  if (node->n_inputs > CUSTOM_MAX_INPUTS || node->n_outputs > CUSTOM_MAX_OUTPUTS) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "node %s: more than %d inputs or %d outputs",
        clinfer_node_label (node), CUSTOM_MAX_INPUTS,
        CUSTOM_MAX_OUTPUTS);
    return FALSE;
  }
  for (guint i = 0; i < node->n_inputs; i++)
    if (inputs[i])
      view_tensor (inputs[i], &views[i], dims + i * CLINFER_MAX_RANK,
          strides + i * CLINFER_MAX_RANK);
  rc = cop->op.compute (d ? d->kernel : NULL, &ctx);
  if (rc == 0)
    for (guint i = 0; i < node->n_outputs; i++)
      if (!allocated[i]) {
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
            "node %s: compute did not allocate output %u",
            clinfer_node_label (node), i);
        g_free (ctx.error);
        return FALSE;
      }
  if (rc != 0) {
    set_node_error (node, "compute", ctx.error, error);
    g_free (ctx.error);
    return FALSE;
  }
  g_free (ctx.error);
  return TRUE;
}

gboolean
clinfer_op_def_is_custom (const ClinferOpDef *def)
{
  return def != NULL && (def->flags & CLINFER_OP_CUSTOM);
}

/* ---------------------------------------------------------------- */
/* Registration                                                      */

static void
custom_op_free (gpointer p)
{
  CustomOp *c = p;

  g_free (c->name);
  g_free (c->domain);
  g_free (c->inputs);
  g_free (c->outputs);
  g_free (c->origin);
  g_free (c->note);
  custom_lib_unref (c->lib);
  g_free (c);
}

/* Checks @op; on failure a message (transfer full) saying what is wrong. */
static char *
check_op (const ClinferCustomOp *op)
{
  if (op == NULL)
    return g_strdup ("the op is NULL");
  if (op->abi_version != CLINFER_CUSTOM_OP_ABI_VERSION)
    return g_strdup_printf ("op '%s': ABI version %u, this clinfer supports "
        "version %u (rebuild the library against this clinfer's "
        "<clinfer/custom-op.h>)", op->name ? op->name : "(null)",
        op->abi_version, CLINFER_CUSTOM_OP_ABI_VERSION);
  if (op->name == NULL || *op->name == '\0')
    return g_strdup ("an op has no name");
  if (op->compute == NULL)
    return g_strdup_printf ("op '%s' has no compute callback", op->name);
  if (op->n_outputs == 0 || op->outputs == NULL)
    return g_strdup_printf ("op '%s' declares no outputs", op->name);
  if (op->n_inputs > 0 && op->inputs == NULL)
    return g_strdup_printf ("op '%s' declares %zu inputs but no port array",
        op->name, op->n_inputs);
  if (op->n_inputs > 1024 || op->n_outputs > 1024)
    return g_strdup_printf ("op '%s': too many ports", op->name);
  for (size_t i = 0; i < op->n_inputs; i++)
    if (op->inputs[i].kind == CLINFER_PORT_VARIADIC && i + 1 != op->n_inputs)
      return g_strdup_printf ("op '%s': input %zu is variadic but only the "
          "last input may be", op->name, i);
  for (size_t i = 0; i < op->n_outputs; i++)
    if (op->outputs[i].kind == CLINFER_PORT_VARIADIC && i + 1 != op->n_outputs)
      return g_strdup_printf ("op '%s': output %zu is variadic but only the "
          "last output may be", op->name, i);
  if (op->last_version != 0 && op->last_version < op->since_version)
    return g_strdup_printf ("op '%s': last_version %d is before since_version %d",
        op->name, op->last_version, op->since_version);
  return NULL;
}

/* min/max port counts from the declared ports. */
static void
port_counts (const ClinferCustomPort *ports, size_t n, size_t min_variadic,
    guint *min, guint *max)
{
  guint lo = 0;

  for (size_t i = 0; i < n; i++) {
    if (ports[i].kind == CLINFER_PORT_REQUIRED)
      lo = (guint) i + 1;
    else if (ports[i].kind == CLINFER_PORT_VARIADIC && min_variadic > 0)
      lo = (guint) (i + min_variadic);
  }
  *min = lo;
  *max = n > 0 && ports[n - 1].kind == CLINFER_PORT_VARIADIC
      ? CLINFER_VARIADIC : (guint) n;
}

static gboolean
add_op (ClinferOpSet *set, const ClinferCustomOp *op, CustomLib *lib,
    const char *origin, GError **error)
{
  g_autofree char *why = check_op (op);
  const char *domain;
  CustomOp *c;

  if (why) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %s", origin, why);
    return FALSE;
  }
  domain = op->domain ? op->domain : "";
  if (clinfer_op_domain_equal (domain, "") && clinfer_op_is_known ("", op->name)
      && !(op->flags & CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: op '%s' in the default domain clashes with the built-in op of "
        "that name (use a domain of your own, or set "
        "CLINFER_CUSTOM_OP_OVERRIDE_BUILTIN to replace the built-in op)",
        origin, op->name);
    return FALSE;
  }
  if (clinfer_op_domain_equal (domain, "")) {
    const ClinferOpDef *builtin = clinfer_op_lookup ("", op->name, 0);
    if (builtin && (builtin->flags & CLINFER_OP_SOURCE)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: op '%s' cannot be overridden: the model readers turn its "
          "nodes into graph inputs and constant tensors, never into steps "
          "that run", origin, op->name);
      return FALSE;
    }
  }
  c = g_new0 (CustomOp, 1);
  c->op = *op;
  c->name = g_strdup (op->name);
  c->domain = g_strdup (domain);
  c->inputs = op->n_inputs
      ? g_memdup2 (op->inputs, op->n_inputs * sizeof (ClinferCustomPort)) : NULL;
  c->outputs = g_memdup2 (op->outputs, op->n_outputs * sizeof (ClinferCustomPort));
  c->op.name = c->name;
  c->op.domain = c->domain;
  c->op.inputs = c->inputs;
  c->op.outputs = c->outputs;
  c->lib = custom_lib_ref (lib);
  c->origin = g_strdup (origin);
  c->def.op_type = c->name;
  c->def.domain = c->domain;
  c->def.since_version = MAX (op->since_version, 0);
  c->def.last_version = op->last_version;
  port_counts (op->inputs, op->n_inputs, op->min_variadic, &c->def.min_inputs,
      &c->def.max_inputs);
  port_counts (op->outputs, op->n_outputs, 1, &c->def.min_outputs,
      &c->def.max_outputs);
  c->def.min_outputs = MAX (c->def.min_outputs, 1);
  c->def.flags = CLINFER_OP_NO_FOLD | CLINFER_OP_CUSTOM;
  c->def.prepare = custom_prepare;
  c->def.free_data = node_data_free;
  c->def.infer = custom_infer;
  c->def.eval_alloc = custom_eval;
  c->note = g_strdup_printf ("custom op %s%s%s from %s", c->domain,
      *c->domain ? "." : "", c->name, origin);
  c->def.note = c->note;
  /* Another custom op of the same name and domain with overlapping
   * versions: say which two. */
  for (guint i = 0; i < set->entries->len; i++) {
    const ClinferOpDef *d = ((SetEntry *) g_ptr_array_index (set->entries, i))->def;
    if (clinfer_op_def_is_custom (d) && strcmp (d->op_type, c->name) == 0
        && clinfer_op_domain_equal (d->domain, c->domain) && versions_overlap (d, &c->def)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: op '%s%s%s' is already registered by %s", origin, c->domain,
          *c->domain ? "." : "", c->name, ((const CustomOp *) d)->origin);
      custom_op_free (c);
      return FALSE;
    }
  }
  clinfer_op_set_add_def (set, &c->def, c, custom_op_free);
  return TRUE;
}

gboolean
clinfer_op_set_add_custom_op (ClinferOpSet *set, const ClinferCustomOp *op,
    const char *origin, GError **error)
{
  return add_op (set, op, NULL, origin, error);
}

struct _ClinferCustomOpRegistry {
  ClinferOpSet *set;
  CustomLib *lib;
  GError *error;             /* first failure of an add */
  char *message;             /* set_error text */
};

int
clinfer_custom_op_registry_add (ClinferCustomOpRegistry *registry,
    const ClinferCustomOp *op)
{
  if (registry == NULL || registry->error)
    return -1;
  return add_op (registry->set, op, registry->lib, registry->lib->path,
      &registry->error) ? 0 : -1;
}

void
clinfer_custom_op_registry_set_error (ClinferCustomOpRegistry *registry,
    const char *format, ...)
{
  if (registry)
    SET_MESSAGE (registry->message, format);
}

gboolean
clinfer_op_set_add_library (ClinferOpSet *set, const char *path, GError **error)
{
  ClinferCustomOpRegistry reg = { 0 };
  ClinferRegisterCustomOpsFunc fn = NULL;
  GModule *module;
  guint before = set->entries->len;
  int rc;

  if (path == NULL || *path == '\0') {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "custom op library: empty path");
    return FALSE;
  }
  if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_IO,
        "%s: custom op library not found", path);
    return FALSE;
  }
  {
    /* dlopen() searches the library path for a bare name: open the file
     * the user named, relative to the working directory. */
    g_autofree char *abs = g_canonicalize_filename (path, NULL);
    module = g_module_open (abs, G_MODULE_BIND_LOCAL);
  }
  if (module == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: cannot load the custom op library: %s", path, g_module_error ());
    return FALSE;
  }
  if (!g_module_symbol (module, CLINFER_CUSTOM_OP_REGISTER_SYMBOL,
          (gpointer *) &fn) || fn == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: not a clinfer custom op library: it does not export %s()", path,
        CLINFER_CUSTOM_OP_REGISTER_SYMBOL);
    g_module_close (module);
    return FALSE;
  }
  reg.set = set;
  reg.lib = g_new0 (CustomLib, 1);
  reg.lib->ref = 1;
  reg.lib->module = module;
  reg.lib->path = g_strdup (path);
  g_info ("loading custom ops from %s", path);
  rc = fn (&reg, CLINFER_CUSTOM_OP_ABI_VERSION);
  if (rc != 0 || reg.error) {
    /* Nothing of a failed registration stays. */
    clinfer_op_set_truncate (set, before);
    if (reg.error)
      g_propagate_error (error, reg.error);
    else
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: %s() failed: %s", path, CLINFER_CUSTOM_OP_REGISTER_SYMBOL,
          reg.message ? reg.message : "no message given");
    g_free (reg.message);
    custom_lib_unref (reg.lib);
    return FALSE;
  }
  g_free (reg.message);
  if (set->entries->len == before) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: %s() registered no op", path, CLINFER_CUSTOM_OP_REGISTER_SYMBOL);
    custom_lib_unref (reg.lib);
    return FALSE;
  }
  custom_lib_unref (reg.lib);  /* the ops hold it now */
  return TRUE;
}
