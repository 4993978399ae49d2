/* clinfer — a custom layer as a step: checks the node against the
 * layer's Buffers, builds JIT defines + user defines + sources with the
 * layer's CompilerOptions (through the program cache), and launches the
 * entry with its arguments in arg-index order; inputs and outputs whose
 * Tensor format is not BFYX (or ANY) are reordered through per-request
 * scratch buffers. */
#include "devices/opencl/ocl-custom.h"
#include <string.h>

static gboolean
build_error (GError **error, const OclCustomLayer *l, const ClinferNode *node,
    const char *fmt, ...) G_GNUC_PRINTF (4, 5);

static gboolean
build_error (GError **error, const OclCustomLayer *l, const ClinferNode *node,
    const char *fmt, ...)
{
  g_autofree char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s:%d: custom layer '%s' for node %s: %s", l->file, l->line, l->name,
      clinfer_node_label (node), msg);
  return FALSE;
}

/* Every Tensor port exists on the node. */
static gboolean
check_ports (const OclCustomLayer *l, const ClinferNode *node, GError **error)
{
  for (guint i = 0; i < l->args->len; i++) {
    const OclCustomArg *a = g_ptr_array_index (l->args, i);
    if (a->kind == OCL_CUSTOM_INPUT && ((guint) a->port >= node->n_inputs
            || node->inputs[a->port].node == NULL))
      return build_error (error, l, node, "Tensor arg-index %u: port-index %d "
          "is beyond the node's %u inputs", i, a->port,
          clinfer_node_n_present_inputs (node));
    if (a->kind == OCL_CUSTOM_OUTPUT && (guint) a->port >= node->n_outputs)
      return build_error (error, l, node, "Tensor arg-index %u: port-index %d "
          "is beyond the node's %u outputs", i, a->port, node->n_outputs);
  }
  return TRUE;
}

/* Format the layer gives port @port of @kind (BFYX when no Tensor). */
static OclFormat
port_format (const OclCustomLayer *l, OclCustomArgKind kind, int port)
{
  for (guint i = 0; i < l->args->len; i++) {
    const OclCustomArg *a = g_ptr_array_index (l->args, i);
    if (a->kind == kind && a->port == port)
      return a->format == OCL_FMT_ANY ? OCL_FMT_BFYX : a->format;
  }
  return OCL_FMT_BFYX;
}

static char *
kernel_source (const OclCustomLayer *l, const ClinferNode *node,
    const size_t *gws, guint n_gws, const size_t *lws, guint n_lws,
    GError **error)
{
  guint n_in = clinfer_node_n_present_inputs (node);
  g_autofree OclJitTensor *in = g_new0 (OclJitTensor, MAX (n_in, 1));
  g_autofree OclJitTensor *out = g_new0 (OclJitTensor, MAX (node->n_outputs, 1));
  g_autofree char *jit = NULL, *user = NULL;

  for (guint i = 0; i < n_in; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d == NULL) {
      build_error (error, l, node, "input %u is absent", i);
      return NULL;
    }
    in[i] = (OclJitTensor) { d->type, d->shape,
      port_format (l, OCL_CUSTOM_INPUT, i) };
  }
  for (guint i = 0; i < node->n_outputs; i++)
    out[i] = (OclJitTensor) { node->outputs[i].type, node->outputs[i].shape,
      port_format (l, OCL_CUSTOM_OUTPUT, i) };
  jit = clinfer_ocl_jit_defines (l->name, in, n_in, out, node->n_outputs, gws,
      n_gws, lws, n_lws, error);
  if (jit == NULL)
    return NULL;
  user = clinfer_ocl_jit_user_defines (l, node);
  return g_strconcat (jit, user, l->source, NULL);
}

/* Logical b, f, y, x order of each format (outer to inner). */
static const int format_order[4][4] = {
  { 0, 1, 2, 3 },            /* BFYX */
  { 0, 2, 3, 1 },            /* BYXF */
  { 1, 2, 3, 0 },            /* FYXB */
  { 2, 3, 1, 0 },            /* YXFB */
};

/* Reorder between the plain (BFYX) tensor of @shape and @fmt: @to_fmt
 * reads plain @src and writes @fmt order into @dst, else the reverse. */
static gboolean
reorder (OclBuilder *b, const ClinferShape *shape, ClinferElementType type,
    OclFormat fmt, gboolean to_fmt, OclArgKind src_kind, guint src,
    OclArgKind dst_kind, guint dst, GError **error)
{
  int64_t d[4], plain[4], fstride[4], xs[4];
  const int *order = format_order[fmt];
  ClinferShape dims = { 4, { 0 } };

  for (int i = 0; i < 4; i++)
    d[i] = i < shape->rank ? shape->dims[i] : 1;
  plain[3] = 1;
  for (int i = 2; i >= 0; i--)
    plain[i] = plain[i + 1] * d[i + 1];
  /* Stride of each logical dim inside the @fmt layout. */
  for (int k = 3, acc = 1; k >= 0; k--) {
    fstride[order[k]] = acc;
    acc *= (int) d[order[k]];
  }
  for (int i = 0; i < 4; i++) {
    dims.dims[i] = to_fmt ? d[order[i]] : d[i];
    xs[i] = to_fmt ? plain[order[i]] : fstride[i];
  }
  return clinfer_ocl_gather_new (b, type, src_kind, src, dst_kind, dst, &dims,
      xs, 0, error);
}

static gboolean
needs_reorder (OclFormat fmt)
{
  return fmt != OCL_FMT_BFYX && fmt != OCL_FMT_ANY;
}

static gsize
port_bytes (const ClinferPortDesc *d)
{
  return (gsize) clinfer_shape_n_elements (&d->shape)
      * clinfer_element_type_size (d->type);
}

/* The constant input or tensor attribute @name of @node. */
static const ClinferTensor *
data_tensor (const ClinferNode *node, const char *name)
{
  const ClinferAttr *a = clinfer_node_get_attr (node, name);

  for (guint i = 0; i < node->n_inputs; i++) {
    ClinferPortDesc *d = clinfer_node_input_desc (node, i);
    if (d && d->value && g_strcmp0 (d->name, name) == 0)
      return d->value;
  }
  return a && a->type == CLINFER_ATTR_TENSOR ? a->t : NULL;
}

/* Input reorders, then the argument list of the entry. */
static gboolean
bind_args (OclBuilder *b, const OclCustomLayer *l, const ClinferNode *node,
    OclArgKind *kinds, guint *index, GError **error)
{
  for (guint i = 0; i < l->args->len; i++) {
    const OclCustomArg *a = g_ptr_array_index (l->args, i);
    const ClinferPortDesc *d = a->kind == OCL_CUSTOM_INPUT
        ? clinfer_node_input_desc (node, a->port)
        : a->kind == OCL_CUSTOM_OUTPUT ? &node->outputs[a->port] : NULL;
    kinds[i] = a->kind == OCL_CUSTOM_INPUT ? OCL_ARG_INPUT : OCL_ARG_OUTPUT;
    index[i] = a->port;
    if (a->kind == OCL_CUSTOM_DATA || !needs_reorder (a->format))
      continue;
    if (d->shape.rank > 4)
      return build_error (error, l, node, "Tensor arg-index %u: format %d "
          "needs at most 4 dims", i, a->format);
    kinds[i] = OCL_ARG_SCRATCH;
    index[i] = clinfer_ocl_scratch_new (b, port_bytes (d));
    if (a->kind == OCL_CUSTOM_INPUT && !reorder (b, &d->shape, d->type,
            a->format, TRUE, OCL_ARG_INPUT, a->port, OCL_ARG_SCRATCH, index[i],
            error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
set_args (OclBuilder *b, OclLaunch *launch, const OclCustomLayer *l,
    const ClinferNode *node, const OclArgKind *kinds, const guint *index,
    GError **error)
{
  for (guint i = 0; i < l->args->len; i++) {
    const OclCustomArg *a = g_ptr_array_index (l->args, i);
    const ClinferTensor *t;
    if (a->kind != OCL_CUSTOM_DATA) {
      clinfer_ocl_arg_buffer (launch, kinds[i], index[i]);
      continue;
    }
    if (!(t = data_tensor (node, a->data_name)))
      return build_error (error, l, node, "Data arg-index %u: the node has no "
          "constant input or tensor attribute named '%s'", i, a->data_name);
    if (!clinfer_ocl_arg_data (b, launch, clinfer_tensor_get_const_data (t),
            clinfer_tensor_get_byte_size (t), error))
      return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_ocl_custom_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const OclCustomLayer *l = clinfer_ocl_custom_lookup (b->dev->custom,
      node->op_type);
  size_t gws[3] = { 1, 1, 1 }, lws[3] = { 1, 1, 1 };
  guint n_gws = 0, n_lws = 0;
  g_autofree char *src = NULL, *label = NULL;
  g_autofree OclArgKind *kinds = g_new0 (OclArgKind, l->args->len);
  g_autofree guint *index = g_new0 (guint, l->args->len);
  cl_program prog;
  OclLaunch *launch;

  if (!check_ports (l, node, error)
      || !clinfer_ocl_custom_work_sizes (l, node, gws, &n_gws, lws, &n_lws, error)
      || !(src = kernel_source (l, node, gws, n_gws, lws, n_lws, error)))
    return FALSE;
  label = g_strdup_printf ("%s:%d: custom layer '%s'", l->file, l->line, l->name);
  if (!(prog = clinfer_ocl_program_build (b->dev->core, src, l->options, label,
              error)) || !bind_args (b, l, node, kinds, index, error)) {
    if (prog)
      clReleaseProgram (prog);
    return FALSE;
  }
  launch = clinfer_ocl_launch_new_for_program (b, prog, l->entry);
  g_free (b->impl->name);
  b->impl->name = g_strdup_printf ("custom:%s", l->name);
  if (!set_args (b, launch, l, node, kinds, index, error))
    return FALSE;
  clinfer_ocl_launch_set_global (launch, n_gws, gws[0], gws[1], gws[2]);
  if (n_lws)
    clinfer_ocl_launch_set_local (launch, lws[0], lws[1], lws[2]);
  for (guint i = 0; i < l->args->len; i++) {
    const OclCustomArg *a = g_ptr_array_index (l->args, i);
    const ClinferPortDesc *d;
    if (a->kind != OCL_CUSTOM_OUTPUT || kinds[i] != OCL_ARG_SCRATCH)
      continue;
    d = &node->outputs[a->port];
    if (!reorder (b, &d->shape, d->type, a->format, FALSE, OCL_ARG_SCRATCH,
            index[i], OCL_ARG_OUTPUT, a->port, error))
      return FALSE;
  }
  return TRUE;
}
