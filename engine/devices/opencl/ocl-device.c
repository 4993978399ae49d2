/* clinfer — the OpenCL device (GPU, GPU.N): opening (own or shared
 * runtime objects, custom layers from the config file), which steps it
 * runs, and preparing a plan (kernels built per step, constants uploaded
 * once). The executor is in ocl-run.c. */
#include "devices/opencl/ocl-custom.h"
#include "devices/opencl/ocl-preprocess.h"
#include <omp.h>
#include <string.h>

static ClinferDevice *
device_new (OclCore *core, const ClinferDeviceOptions *options,
    GError **error)
{
  OclDevice *d = g_new0 (OclDevice, 1);
  g_autofree char *desc = clinfer_ocl_core_describe (core);
  int threads = options ? options->threads : 0;
  const char *config_file = options ? options->config_file : NULL;

  clinfer_device_init (&d->base, &clinfer_opencl_device_class, core->name, desc);
  d->core = core;
  /* No arena_align: the device's tensors are whole pool buffers
   * (ocl-run.c); the plan's offsets place only the host mirror. */
  d->base.threads = threads > 0 ? threads : omp_get_num_procs ();
  d->base.isa = clinfer_cpu_isa_detect ();
  g_hash_table_insert (d->base.properties,
      g_strdup (CLINFER_REMOTE_PROP_OCL_CONTEXT),
      g_variant_ref_sink (g_variant_new_uint64 ((guintptr) core->context)));
  g_hash_table_insert (d->base.properties,
      g_strdup (CLINFER_REMOTE_PROP_OCL_QUEUE),
      g_variant_ref_sink (g_variant_new_uint64 ((guintptr) core->queue)));
  if (config_file && !(d->custom = clinfer_ocl_custom_load (config_file, error))) {
    clinfer_device_unref (&d->base);
    return NULL;
  }
  return &d->base;
}

static ClinferDevice *
ocl_open (const char *device, ClinferDevice *share,
    const ClinferDeviceOptions *options, GError **error)
{
  OclCore *core = share ? clinfer_ocl_core_ref (((OclDevice *) share)->core)
      : clinfer_ocl_core_open (device, error);

  return core ? device_new (core, options, error) : NULL;
}

static void
ocl_close (ClinferDevice *device)
{
  OclDevice *d = (OclDevice *) device;

  clinfer_ocl_custom_free (d->custom);
  clinfer_ocl_core_unref (d->core);
  g_free (d);
}

/* Every slot the step touches has a static shape and fits int indexing. */
static gboolean
slots_static (const ClinferPlan *plan, const ClinferStep *st,
    const char **reason)
{
  for (guint j = 0; j < st->node->n_inputs + st->node->n_outputs; j++) {
    gboolean is_in = j < st->node->n_inputs;
    guint si = is_in ? st->in_slots[j] : st->out_slots[j - st->node->n_inputs];
    const ClinferSlot *s;
    if (si == G_MAXUINT)
      continue;
    s = &g_array_index (plan->slots, ClinferSlot, si);
    if (s->kind == CLINFER_SLOT_DYNAMIC || !clinfer_shape_is_static (&s->shape)) {
      *reason = "a shape is known only at run time";
      return FALSE;
    }
    if (!clinfer_ocl_shape_fits (&s->shape)) {
      *reason = "a tensor is too large for 32-bit indexing";
      return FALSE;
    }
  }
  return TRUE;
}

/* CLINFER_OPENCL_DISABLE_OPS=Conv,Transpose keeps those op types off the
 * device (to exercise and measure the CPU fallback). */
static gboolean
disabled_by_env (const ClinferNode *node)
{
  const char *env = g_getenv ("CLINFER_OPENCL_DISABLE_OPS");
  g_auto (GStrv) ops = NULL;

  if (env == NULL || *env == '\0')
    return FALSE;
  ops = g_strsplit (env, ",", -1);
  return g_strv_contains ((const char *const *) ops, node->op_type);
}

static gboolean
ocl_supports_step (ClinferDevice *device, const ClinferPlan *plan,
    const ClinferStep *st, const char **reason)
{
  OclDevice *d = (OclDevice *) device;
  const OclOpEntry *e;

  if (disabled_by_env (st->node)) {
    *reason = "disabled by CLINFER_OPENCL_DISABLE_OPS";
    return FALSE;
  }
  if (d->custom && clinfer_ocl_custom_handles (d->custom, st->node)) {
    if (st->dynamic) {
      *reason = "its output shape is known only at run time";
      return FALSE;
    }
    return slots_static (plan, st, reason);
  }
  /* Dynamic steps are built when they run (ocl-late.c), from the actual
   * shapes: their slots may be dynamic. */
  if (!st->dynamic && !slots_static (plan, st, reason))
    return FALSE;
  e = clinfer_ocl_op_lookup (st->node);
  if (e == NULL) {
    *reason = "no OpenCL kernel for this op";
    return FALSE;
  }
  if (st->dynamic && st->node->def->infer == NULL) {
    *reason = "its output shape is known only at run time";
    return FALSE;
  }
  return e->supports (d, st->node, reason);
}

static void
ocl_free_plan (ClinferDevice *device, ClinferPlan *plan)
{
  OclPlan *p = plan->device_data;

  if (p == NULL)
    return;
  for (guint i = 0; i < p->n_steps; i++)
    clinfer_ocl_step_impl_free (p->steps[i]);
  for (guint i = 0; i < p->n_slots; i++)
    if (p->const_mems[i])
      clReleaseMemObject (p->const_mems[i]);
  g_free (p->steps);
  g_free (p->const_mems);
  g_free (p->buffer_of);
  if (p->buffer_sizes)
    g_array_unref (p->buffer_sizes);
  g_free (p);
  plan->device_data = NULL;
}

/* Uploads the constants device steps read. */
static gboolean
upload_constants (OclDevice *d, ClinferPlan *plan, OclPlan *p, GError **error)
{
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    if (st->fallback)
      continue;
    for (guint j = 0; j < st->node->n_inputs; j++) {
      guint si = st->in_slots[j];
      ClinferSlot *s;
      cl_int err = CL_SUCCESS;
      gsize bytes;
      /* Steps built at run time may read any constant. */
      if (si == G_MAXUINT || p->const_mems[si]
          || (p->steps[i] && !OCL_INPUT_USED (p->steps[i], j)))
        continue;
      s = &g_array_index (plan->slots, ClinferSlot, si);
      bytes = s->value ? clinfer_tensor_get_byte_size (s->value) : 0;
      if (s->kind != CLINFER_SLOT_CONSTANT || bytes == 0)
        continue;
      p->const_mems[si] = clCreateBuffer (d->core->context,
          CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
          (void *) clinfer_tensor_get_const_data (s->value), &err);
      if (!clinfer_ocl_check (err, "clCreateBuffer (constant)", error))
        return FALSE;
    }
  }
  return TRUE;
}

static gboolean
build_step (OclDevice *d, ClinferPlan *plan, ClinferStep *st, OclPlan *p,
    guint index, const char *origin, GError **error)
{
  OclBuilder b = { d, plan, st, clinfer_ocl_step_impl_new () };
  gboolean ok;

  p->steps[index] = b.impl;
  if (d->custom && clinfer_ocl_custom_handles (d->custom, st->node))
    ok = clinfer_ocl_custom_build (&b, st->node, error);
  else
    ok = clinfer_ocl_op_lookup (st->node)->build (&b, st->node, error);
  if (!ok) {
    clinfer_node_prefix_error (error, st->node, d->base.name);
    return FALSE;
  }
  clinfer_ocl_step_impl_finish (b.impl);
  st->device_kernel = g_strdup (b.impl->name ? b.impl->name : "ocl:none");
  return TRUE;
}

static gboolean
ocl_prepare_plan (ClinferDevice *device, ClinferPlan *plan, const char *origin,
    GError **error)
{
  OclDevice *d = (OclDevice *) device;
  OclPlan *p = g_new0 (OclPlan, 1);

  plan->device_data = p;
  p->n_steps = plan->steps->len;
  p->steps = g_new0 (OclStepImpl *, MAX (p->n_steps, 1));
  p->n_slots = plan->slots->len;
  p->const_mems = g_new0 (cl_mem, MAX (p->n_slots, 1));
  p->buffer_of = g_new (guint, MAX (p->n_slots, 1));
  p->buffer_sizes = clinfer_plan_assign_buffers (plan, p->buffer_of);
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    if (st->dynamic && !st->fallback)
      st->device_kernel = g_strdup ("ocl:built at run time");
    else if (!st->fallback && !build_step (d, plan, st, p, i, origin, error))
      return FALSE;
  }
  if (!upload_constants (d, plan, p, error)) {
    g_prefix_error (error, "%s: ", origin);
    return FALSE;
  }
  return TRUE;
}

static gboolean
ocl_handles_op_type (ClinferDevice *device, const char *op_type)
{
  OclDevice *d = (OclDevice *) device;

  return clinfer_ocl_custom_lookup (d->custom, op_type) != NULL;
}

const ClinferDeviceClass clinfer_opencl_device_class = {
  .name = "GPU",
  .open = ocl_open,
  .close = ocl_close,
  .supports_step = ocl_supports_step,
  .prepare_plan = ocl_prepare_plan,
  .free_plan = ocl_free_plan,
  .create_run = clinfer_ocl_create_run,
  .free_run = clinfer_ocl_free_run,
  .run = clinfer_ocl_run,
  .handles_op_type = ocl_handles_op_type,
  .create_remote = clinfer_ocl_create_remote,
  .fuses_eltwise_chains = TRUE,
  .runs_layer_norm_std = TRUE,
  .throughput_streams = 2,
  .get_program = clinfer_ocl_remote_program,
  .add_config_file_ops = clinfer_ocl_custom_add_ops,
  .preprocess_new = clinfer_ocl_preprocess_new,
};

/* ---------------------------------------------------------------- */
/* Public entry points that need OpenCL types                        */

ClinferRemoteContext *
clinfer_remote_context_new_from_cl_context (gpointer cl_context,
    GError **error)
{
  OclCore *core;
  ClinferDevice *dev;
  ClinferRemoteContext *ctx;

  if (cl_context == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "NULL cl_context");
    return NULL;
  }
  if (!(core = clinfer_ocl_core_new_from_context (cl_context, error))
      || !(dev = device_new (core, NULL, error)))
    return NULL;
  ctx = clinfer_remote_context_new_for_device (dev);
  clinfer_device_unref (dev);
  return ctx;
}

ClinferRemoteContext *
clinfer_remote_context_new_from_cl_queue (gpointer cl_command_queue,
    GError **error)
{
  OclCore *core;
  ClinferDevice *dev;
  ClinferRemoteContext *ctx;

  if (cl_command_queue == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "NULL cl_command_queue");
    return NULL;
  }
  if (!(core = clinfer_ocl_core_new_from_queue (cl_command_queue, error))
      || !(dev = device_new (core, NULL, error)))
    return NULL;
  ctx = clinfer_remote_context_new_for_device (dev);
  clinfer_device_unref (dev);
  return ctx;
}

/* ---------------------------------------------------------------- */
/* Op table lookup                                                   */

extern const OclOpEntry clinfer_ocl_ops[];

const OclOpEntry *
clinfer_ocl_op_lookup (const ClinferNode *node)
{
  for (guint i = 0; clinfer_ocl_ops[i].op_type; i++)
    if (clinfer_node_is_builtin_op (node, clinfer_ocl_ops[i].domain,
            clinfer_ocl_ops[i].op_type))
      return &clinfer_ocl_ops[i];
  return NULL;
}
