/* clinfer — the builder the OpenCL op factories fill a step with: kernel
 * launches (program, kernel name, arguments, work sizes) and device-side
 * copies, plus small helpers shared by the factories. */
#include "devices/opencl/ocl-internal.h"
#include "ops/broadcast.h"
#include <string.h>

static void
launch_free (gpointer data)
{
  OclLaunch *l = data;

  g_free (l->kernel_name);
  if (l->args)
    g_array_unref (l->args);
  g_free (l);
}

OclStepImpl *
clinfer_ocl_step_impl_new (void)
{
  OclStepImpl *impl = g_new0 (OclStepImpl, 1);

  impl->launches = g_ptr_array_new_with_free_func (launch_free);
  impl->mems = g_ptr_array_new_with_free_func (clinfer_ocl_release_mem);
  impl->programs = g_ptr_array_new_with_free_func (clinfer_ocl_release_program);
  impl->scratch = g_array_new (FALSE, FALSE, sizeof (gsize));
  return impl;
}

void
clinfer_ocl_step_impl_free (OclStepImpl *impl)
{
  if (impl == NULL)
    return;
  g_ptr_array_unref (impl->launches);
  g_ptr_array_unref (impl->mems);
  g_ptr_array_unref (impl->programs);
  g_array_unref (impl->scratch);
  g_free (impl->name);
  g_free (impl);
}

void
clinfer_ocl_step_impl_finish (OclStepImpl *impl)
{
  impl->used_inputs = 0;
  for (guint i = 0; i < impl->launches->len; i++) {
    OclLaunch *l = g_ptr_array_index (impl->launches, i);
    if (l->kind == OCL_LAUNCH_COPY && l->src_port < 64)
      impl->used_inputs |= G_GUINT64_CONSTANT (1) << l->src_port;
    for (guint a = 0; l->args && a < l->args->len; a++) {
      OclArg *arg = &g_array_index (l->args, OclArg, a);
      if (arg->kind == OCL_ARG_INPUT && arg->port < 64)
        impl->used_inputs |= G_GUINT64_CONSTANT (1) << arg->port;
    }
  }
}

static OclLaunch *
launch_append (OclBuilder *b, cl_program program, const char *kernel)
{
  OclLaunch *l = g_new0 (OclLaunch, 1);

  l->kind = OCL_LAUNCH_KERNEL;
  l->program = program;
  l->kernel_name = g_strdup (kernel);
  l->args = g_array_new (FALSE, TRUE, sizeof (OclArg));
  l->work_dim = 1;
  l->gws[0] = l->gws[1] = l->gws[2] = 1;
  l->core = b->dev->core;
  g_ptr_array_add (b->impl->launches, l);
  if (b->impl->name == NULL)
    b->impl->name = g_strdup_printf ("ocl:%s", kernel);
  return l;
}

OclLaunch *
clinfer_ocl_launch_new (OclBuilder *b, const char *family, const char *options,
    const char *kernel, GError **error)
{
  cl_program prog = clinfer_ocl_program_get (b->dev->core, family, options,
      error);

  return prog ? launch_append (b, prog, kernel) : NULL;
}

OclLaunch *
clinfer_ocl_launch_new_for_program (OclBuilder *b, cl_program program,
    const char *kernel)
{
  g_ptr_array_add (b->impl->programs, program);
  return launch_append (b, program, kernel);
}

static OclArg *
arg_append (OclLaunch *l, OclArgKind kind)
{
  OclArg a = { 0 };

  a.kind = kind;
  g_array_append_val (l->args, a);
  return &g_array_index (l->args, OclArg, l->args->len - 1);
}

void
clinfer_ocl_arg_input (OclLaunch *l, guint port)
{
  arg_append (l, OCL_ARG_INPUT)->port = port;
}

void
clinfer_ocl_arg_output (OclLaunch *l, guint port)
{
  arg_append (l, OCL_ARG_OUTPUT)->port = port;
}

void
clinfer_ocl_arg_int (OclLaunch *l, int v)
{
  arg_append (l, OCL_ARG_INT)->i = v;
}

void
clinfer_ocl_arg_float (OclLaunch *l, float v)
{
  arg_append (l, OCL_ARG_FLOAT)->f = v;
}

void
clinfer_ocl_arg_int4 (OclLaunch *l, int a, int b, int c, int d)
{
  OclArg *arg = arg_append (l, OCL_ARG_INT4);

  arg->v[0] = a;
  arg->v[1] = b;
  arg->v[2] = c;
  arg->v[3] = d;
}

void
clinfer_ocl_arg_int8 (OclLaunch *l, const int *v, guint n)
{
  OclArg *arg = arg_append (l, OCL_ARG_INT8);

  for (guint i = 0; i < MIN (n, 8); i++)
    arg->v[i] = v[i];
}

void
clinfer_ocl_arg_local (OclLaunch *l, gsize bytes)
{
  arg_append (l, OCL_ARG_LOCAL)->bytes = bytes;
}

void
clinfer_ocl_arg_raw (OclLaunch *l, const void *data, gsize size)
{
  OclArg *arg = arg_append (l, OCL_ARG_RAW);

  arg->bytes = MIN (size, sizeof (arg->v));
  memcpy (arg->v, data, arg->bytes);
}

guint
clinfer_ocl_scratch_new (OclBuilder *b, gsize bytes)
{
  bytes = MAX (bytes, 4);
  g_array_append_val (b->impl->scratch, bytes);
  return b->impl->scratch->len - 1;
}

void
clinfer_ocl_arg_scratch (OclLaunch *l, guint index)
{
  arg_append (l, OCL_ARG_SCRATCH)->port = index;
}

void
clinfer_ocl_arg_buffer (OclLaunch *l, OclArgKind kind, guint index)
{
  arg_append (l, kind)->port = index;
}

gboolean
clinfer_ocl_arg_data (OclBuilder *b, OclLaunch *l, const void *data,
    gsize bytes, GError **error)
{
  cl_int err = CL_SUCCESS;
  cl_mem mem = clCreateBuffer (b->dev->core->context,
      CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, MAX (bytes, 4),
      (void *) data, &err);

  if (!clinfer_ocl_check (err, "clCreateBuffer (kernel parameters)", error))
    return FALSE;
  g_ptr_array_add (b->impl->mems, mem);
  arg_append (l, OCL_ARG_MEM)->mem = mem;
  return TRUE;
}

void
clinfer_ocl_launch_set_global (OclLaunch *l, guint dims, size_t g0, size_t g1,
    size_t g2)
{
  l->work_dim = dims;
  l->gws[0] = g0;
  l->gws[1] = g1;
  l->gws[2] = g2;
}

void
clinfer_ocl_launch_set_local (OclLaunch *l, size_t l0, size_t l1, size_t l2)
{
  l->has_lws = TRUE;
  l->lws[0] = l0;
  l->lws[1] = l1;
  l->lws[2] = l2;
}

void
clinfer_ocl_launch_tile0 (OclLaunch *l, size_t tile)
{
  if (l->core->gpu_shaped)
    tile = MAX (tile, 64);
  /* A device with small work-groups: the largest power of two it takes. */
  while (tile > 1 && tile > l->core->max_work_group)
    tile /= 2;
  if (l->gws[0] <= tile / 2)
    return;
  l->gws[0] = (l->gws[0] + tile - 1) / tile * tile;
  clinfer_ocl_launch_set_local (l, tile, 1, 1);
}

void
clinfer_ocl_launch_tiles16 (OclLaunch *l, size_t g0, size_t g1, size_t g2)
{
  clinfer_ocl_launch_set_global (l, 3, (g0 + 15) / 16 * 16,
      (g1 + 15) / 16 * 16, g2);
  clinfer_ocl_launch_set_local (l, 16, 16, 1);
}

void
clinfer_ocl_copy_new (OclBuilder *b, guint src_port, gsize src_offset,
    guint dst_port, gsize dst_offset, gsize bytes)
{
  OclLaunch *l = g_new0 (OclLaunch, 1);

  l->kind = OCL_LAUNCH_COPY;
  l->src_port = src_port;
  l->dst_port = dst_port;
  l->src_offset = src_offset;
  l->dst_offset = dst_offset;
  l->bytes = bytes;
  g_ptr_array_add (b->impl->launches, l);
  if (b->impl->name == NULL)
    b->impl->name = g_strdup ("ocl:copy");
}

/* ---------------------------------------------------------------- */
/* Helpers                                                           */

const ClinferShape *
clinfer_ocl_in_shape (const OclBuilder *b, guint port)
{
  ClinferPortDesc *d = clinfer_node_input_desc (b->step->node, port);

  return d ? &d->shape : NULL;
}

ClinferElementType
clinfer_ocl_in_type (const ClinferNode *node, guint port)
{
  ClinferPortDesc *d = port < node->n_inputs
      ? clinfer_node_input_desc (node, port) : NULL;

  return d ? d->type : CLINFER_TYPE_UNDEFINED;
}

const char *
clinfer_ocl_data_options (ClinferElementType type)
{
  return type == CLINFER_TYPE_F16 ? "-DDATA_F16" : "";
}

const char *
clinfer_ocl_elem_options (ClinferElementType type)
{
  switch (clinfer_element_type_size (type)) {
    case 1: return "-DELEM=uchar";
    case 2: return "-DELEM=ushort";
    case 4: return "-DELEM=uint";
    default: return "-DELEM=ulong";
  }
}

const char *
clinfer_ocl_c_type (ClinferElementType type)
{
  switch (type) {
    case CLINFER_TYPE_F32: return "float";
    case CLINFER_TYPE_F16: return "half";
    case CLINFER_TYPE_F64: return "double";
    case CLINFER_TYPE_I8: return "char";
    case CLINFER_TYPE_U8: return "uchar";
    case CLINFER_TYPE_BOOL: return "uchar";
    case CLINFER_TYPE_I16: return "short";
    case CLINFER_TYPE_U16: return "ushort";
    case CLINFER_TYPE_I32: return "int";
    case CLINFER_TYPE_U32: return "uint";
    case CLINFER_TYPE_I64: return "long";
    case CLINFER_TYPE_U64: return "ulong";
    default: return NULL;
  }
}

void
clinfer_ocl_broadcast_strides (const ClinferShape *in, const ClinferShape *out,
    int *s)
{
  int64_t acc = 1;

  for (int i = out->rank - 1; i >= 0; i--) {
    int j = i - (out->rank - in->rank);
    s[i] = j < 0 || in->dims[j] == 1 ? 0 : (int) acc;
    if (j >= 0)
      acc *= in->dims[j];
  }
}

void
clinfer_ocl_b_shape (const ClinferNode *node, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *eff)
{
  ClinferLegacyBcast lb = { 0 };

  *eff = *b;
  if (node->opset <= 0 || node->opset >= 7)
    return;
  /* Opset < 7 PRelu: a 1-D slope is per channel. */
  if (strcmp (node->op_type, "PRelu") == 0 && b->rank == 1 && a->rank >= 2
      && b->dims[0] != 1 && b->dims[0] == a->dims[1]) {
    for (int k = 1; k < a->rank - 1; k++)
      eff->dims[eff->rank++] = 1;
    return;
  }
  if (clinfer_legacy_bcast_parse (node, &lb, NULL))
    clinfer_legacy_bcast_shape (node, &lb, a, b, eff, NULL);
}

gboolean
clinfer_ocl_float_type (ClinferElementType type)
{
  return type == CLINFER_TYPE_F32 || type == CLINFER_TYPE_F16;
}

const ClinferTensor *
clinfer_ocl_const_input (const ClinferNode *node, guint port)
{
  ClinferPortDesc *d = port < node->n_inputs
      ? clinfer_node_input_desc (node, port) : NULL;

  return d ? d->value : NULL;
}

void
clinfer_ocl_split_axis (const ClinferShape *shape, int axis, int64_t *outer,
    int64_t *n, int64_t *inner)
{
  *outer = *inner = 1;
  *n = axis < shape->rank ? shape->dims[axis] : 1;
  for (int i = 0; i < axis && i < shape->rank; i++)
    *outer *= shape->dims[i];
  for (int i = axis + 1; i < shape->rank; i++)
    *inner *= shape->dims[i];
}
