/* clinfer — the OpenCL executor: device buffers shared by the planned
 * tensors (whole buffers, no sub-buffers) and one host mirror per request,
 * kernels created once per request, and
 * per inference: inputs bound without copies where possible, steps run on
 * the device or (fallback) on the CPU kernels with copies around them,
 * outputs written to the caller's remote tensors or read back to host.
 *
 * Each slot tracks where its current value is valid (host, device or
 * both); a copy happens only when a step needs the value on the other
 * side, and every copy is counted in ClinferRunIO. */
#include "devices/opencl/ocl-internal.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum { ON_HOST = 1, ON_DEVICE = 2 };

/* A host input wrapped as a CL_MEM_USE_HOST_PTR buffer, kept while the
 * caller binds the same tensor. The wrap holds a reference to @tensor:
 * OpenCL requires the host memory to outlive the buffer (a driver may
 * touch it when the buffer is released). */
typedef struct {
  cl_mem mem;
  ClinferTensor *tensor;
  gpointer ptr;
  gsize bytes;
} HostWrap;

/* The OpenCL objects of one step's launches in one run. */
typedef struct {
  cl_kernel *kernels;        /* per launch */
  cl_mem *scratch;           /* per scratch buffer */
  /* Per launch, per argument (launch j's from base j = the sum of the
   * argument counts before it): the buffer last set as an INPUT or
   * OUTPUT argument, retained (a driver may keep the address it saw), or
   * OCL_UNSET. clSetKernelArg runs only when it changes. */
  cl_mem *bound;
} StepObjects;

#define OCL_UNSET ((cl_mem) (gintptr) -1)

/* A dynamic step as last built (ocl-late.c), for the shapes and parameter
 * values in @key. */
typedef struct {
  char *key;
  OclLateNode *node;
  OclStepImpl *impl;
  StepObjects objs;
} LateStep;

typedef struct {
  ClinferDeviceRun base;
  OclDevice *dev;
  OclPlan *op;
  /* The request's own in-order queue, so the transfers and kernels of
   * requests in flight at once overlap; each inference first waits for
   * what is queued on the context's queue before it (pre-processing,
   * the application's writes). */
  cl_command_queue queue;
  cl_mem *pool;              /* device buffers the arena slots share */
  guint n_pool;
  cl_mem *arena_mems;        /* per slot: its pool buffer (a reference) */
  cl_mem *slot_mem;          /* per slot: buffer of the current value */
  guint8 *state;             /* per slot: ON_HOST | ON_DEVICE */
  ClinferTensor **host;      /* per slot: host tensor (view, const, input) */
  void *host_arena;
  StepObjects *objs;         /* per step (NULL members: not a device step) */
  HostWrap *wraps;           /* per input */
  cl_mem *in_bufs;           /* per input: device copy when not wrapped */
  ClinferTensor **in_host;   /* per input: host copy of a remote input */
  LateStep *late;            /* per step: dynamic steps built at run time */
  cl_mem *dyn_mems;          /* per slot: buffer of a dynamic slot */
  gsize *dyn_bytes;          /* per slot: its size */
  guint n_slots, n_inputs;
} OclRun;

/* Copies have no arguments (args NULL). */
static guint
launch_n_args (const OclLaunch *l)
{
  return l->args ? l->args->len : 0;
}

static guint
n_launch_args (const OclStepImpl *impl)
{
  guint n = 0;

  for (guint j = 0; j < impl->launches->len; j++)
    n += launch_n_args (g_ptr_array_index (impl->launches, j));
  return n;
}

/* Kernels first (their arguments name the buffers), then the buffers. */
static void
release_step_objects (OclStepImpl *impl, StepObjects *o)
{
  for (guint j = 0; impl && o->kernels && j < impl->launches->len; j++)
    if (o->kernels[j])
      clReleaseKernel (o->kernels[j]);
  for (guint j = 0; impl && o->scratch && j < impl->scratch->len; j++)
    if (o->scratch[j])
      clReleaseMemObject (o->scratch[j]);
  for (guint a = 0; impl && o->bound && a < n_launch_args (impl); a++)
    if (o->bound[a] != OCL_UNSET && o->bound[a] != NULL)
      clReleaseMemObject (o->bound[a]);
  g_free (o->kernels);
  g_free (o->scratch);
  g_free (o->bound);
  memset (o, 0, sizeof (*o));
}

static void
late_step_clear (LateStep *l)
{
  release_step_objects (l->impl, &l->objs);
  clinfer_ocl_step_impl_free (l->impl);
  clinfer_ocl_late_node_free (l->node);
  g_free (l->key);
  memset (l, 0, sizeof (*l));
}

/* HostWrap: releases the buffer, then the tensor whose memory it used. */
static void
host_wrap_clear (HostWrap *w)
{
  if (w->mem)
    clReleaseMemObject (w->mem);
  g_clear_pointer (&w->tensor, clinfer_tensor_unref);
  memset (w, 0, sizeof (*w));
}

/* Releases everything the run holds. Order: nothing may still be queued
 * (clFinish), then kernels (they name buffers as arguments), then the
 * buffers, then the host memory that CL_MEM_USE_HOST_PTR buffers used.
 * Each cl_mem pointer below is a reference of its own (retained where it
 * was shared), so the order between them does not matter. */
void
clinfer_ocl_free_run (ClinferDeviceRun *base)
{
  OclRun *r = (OclRun *) base;
  ClinferPlan *plan = base->plan;

  if (r->queue)
    clFinish (r->queue);
  if (r->objs)
    for (guint i = 0; i < plan->steps->len; i++)
      release_step_objects (r->op->steps[i], &r->objs[i]);
  for (guint i = 0; r->late && i < plan->steps->len; i++)
    late_step_clear (&r->late[i]);
  for (guint i = 0; i < r->n_slots; i++) {
    if (r->arena_mems[i])
      clReleaseMemObject (r->arena_mems[i]);
    if (r->dyn_mems[i])
      clReleaseMemObject (r->dyn_mems[i]);
    g_clear_pointer (&r->host[i], clinfer_tensor_unref);
  }
  for (guint i = 0; i < r->n_inputs; i++) {
    host_wrap_clear (&r->wraps[i]);
    if (r->in_bufs[i])
      clReleaseMemObject (r->in_bufs[i]);
    g_clear_pointer (&r->in_host[i], clinfer_tensor_unref);
  }
  for (guint i = 0; i < r->n_pool; i++)
    clReleaseMemObject (r->pool[i]);
  g_free (r->pool);
  free (r->host_arena);
  g_free (r->objs);
  g_free (r->arena_mems);
  g_free (r->slot_mem);
  g_free (r->state);
  g_free (r->host);
  g_free (r->wraps);
  g_free (r->in_bufs);
  g_free (r->in_host);
  g_free (r->late);
  g_free (r->dyn_mems);
  g_free (r->dyn_bytes);
  if (r->queue)
    clReleaseCommandQueue (r->queue);
  g_free (r);
}

/* The device buffers of the arena slots (placed once per plan: OclPlan),
 * and the host mirror at the plan's arena offsets (fallback steps run
 * there). */
static gboolean
create_arenas (OclRun *r, ClinferPlan *plan, GError **error)
{
  OclCore *core = r->dev->core;
  GArray *sizes = r->op->buffer_sizes;
  cl_int err = CL_SUCCESS;
  gboolean ok = TRUE;

  if (plan->arena_size == 0)
    return TRUE;
  if (posix_memalign (&r->host_arena, 64, plan->arena_size) != 0) {
    r->host_arena = NULL;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "out of memory allocating a %" G_GSIZE_FORMAT "-byte arena",
        plan->arena_size);
    return FALSE;
  }
  r->pool = g_new0 (cl_mem, MAX (sizes->len, 1));
  for (guint b = 0; ok && b < sizes->len; b++) {
    r->pool[b] = clCreateBuffer (core->context, CL_MEM_READ_WRITE,
        g_array_index (sizes, gsize, b), NULL, &err);
    ok = clinfer_ocl_check (err, "clCreateBuffer (tensor pool)", error);
    r->n_pool = ok ? b + 1 : b;
  }
  for (guint i = 0; ok && i < r->n_slots; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind != CLINFER_SLOT_ARENA)
      continue;
    r->host[i] = clinfer_tensor_new_wrapped (s->type, &s->shape, NULL,
        (guint8 *) r->host_arena + s->offset, NULL, NULL, error);
    ok = r->host[i] != NULL;
    if (ok && r->op->buffer_of[i] != G_MAXUINT) {
      r->arena_mems[i] = r->pool[r->op->buffer_of[i]];
      clRetainMemObject (r->arena_mems[i]);
    }
  }
  return ok;
}

/* A launch's work-group must fit the kernel's limit on this device
 * (CL_KERNEL_WORK_GROUP_SIZE: the device's, or less for a kernel that
 * needs many registers): said here, by name, rather than as
 * CL_INVALID_WORK_GROUP_SIZE at the first enqueue. */
static gboolean
check_work_group (OclRun *r, const OclLaunch *l, cl_kernel k, GError **error)
{
  size_t limit = 0, want = 1;

  if (!l->has_lws)
    return TRUE;
  for (guint d = 0; d < l->work_dim; d++)
    want *= l->lws[d];
  if (clGetKernelWorkGroupInfo (k, r->dev->core->device,
          CL_KERNEL_WORK_GROUP_SIZE, sizeof (limit), &limit, NULL)
      != CL_SUCCESS || want <= limit)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
      "kernel %s needs work-groups of %" G_GSIZE_FORMAT " work-items; "
      "%s allows %" G_GSIZE_FORMAT " for it (CLINFER_OPENCL_KERNELS=cpu "
      "selects kernels with smaller work-groups)", l->kernel_name, want,
      r->dev->core->device_name, limit);
  return FALSE;
}

/* Scratch buffers and kernel objects per launch of @impl, with their
 * constant arguments set. */
static gboolean
create_step_objects (OclRun *r, OclStepImpl *impl, StepObjects *o,
    GError **error)
{
  cl_mem **scratch = &o->scratch;
  cl_kernel **kernels = &o->kernels;
  guint n_args = n_launch_args (impl);
  cl_int err = CL_SUCCESS;

  o->bound = g_new (cl_mem, MAX (n_args, 1));
  for (guint a = 0; a < n_args; a++)
    o->bound[a] = OCL_UNSET;
  *scratch = g_new0 (cl_mem, MAX (impl->scratch->len, 1));
  for (guint j = 0; j < impl->scratch->len && err == CL_SUCCESS; j++)
    (*scratch)[j] = clCreateBuffer (r->dev->core->context,
        CL_MEM_READ_WRITE, g_array_index (impl->scratch, gsize, j), NULL, &err);
  if (!clinfer_ocl_check (err, "clCreateBuffer (scratch)", error))
    return FALSE;
  *kernels = g_new0 (cl_kernel, MAX (impl->launches->len, 1));
  for (guint j = 0; j < impl->launches->len; j++) {
    OclLaunch *l = g_ptr_array_index (impl->launches, j);
    cl_kernel k;
    if (l->kind != OCL_LAUNCH_KERNEL)
      continue;
    k = (*kernels)[j] = clCreateKernel (l->program, l->kernel_name, &err);
    if (!clinfer_ocl_check (err, l->kernel_name, error)
        || !check_work_group (r, l, k, error))
      return FALSE;
    for (guint a = 0; a < l->args->len && err == CL_SUCCESS; a++) {
      OclArg *arg = &g_array_index (l->args, OclArg, a);
      switch (arg->kind) {
        case OCL_ARG_MEM: err = clSetKernelArg (k, a, sizeof (cl_mem), &arg->mem); break;
        case OCL_ARG_INT: err = clSetKernelArg (k, a, sizeof (cl_int), &arg->i); break;
        case OCL_ARG_FLOAT: err = clSetKernelArg (k, a, sizeof (cl_float), &arg->f); break;
        case OCL_ARG_INT4: err = clSetKernelArg (k, a, sizeof (cl_int4), arg->v); break;
        case OCL_ARG_INT8: err = clSetKernelArg (k, a, sizeof (cl_int8), arg->v); break;
        case OCL_ARG_RAW: err = clSetKernelArg (k, a, arg->bytes, arg->v); break;
        case OCL_ARG_LOCAL: err = clSetKernelArg (k, a, arg->bytes, NULL); break;
        case OCL_ARG_SCRATCH:
          err = clSetKernelArg (k, a, sizeof (cl_mem), &(*scratch)[arg->port]);
          break;
        default: break;
      }
    }
    if (!clinfer_ocl_check (err, l->kernel_name, error)) {
      g_prefix_error (error, "clSetKernelArg: ");
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
create_kernels (OclRun *r, ClinferPlan *plan, GError **error)
{
  r->objs = g_new0 (StepObjects, MAX (plan->steps->len, 1));
  r->late = g_new0 (LateStep, MAX (plan->steps->len, 1));
  for (guint i = 0; i < plan->steps->len; i++)
    if (r->op->steps[i] && !create_step_objects (r, r->op->steps[i],
            &r->objs[i], error))
      return FALSE;
  return TRUE;
}

ClinferDeviceRun *
clinfer_ocl_create_run (ClinferDevice *device, ClinferPlan *plan,
    GError **error)
{
  OclRun *r = g_new0 (OclRun, 1);

  r->base.device = device;
  r->base.plan = plan;
  r->dev = (OclDevice *) device;
  r->op = plan->device_data;
  r->n_slots = plan->slots->len;
  r->n_inputs = plan->n_inputs;
  r->arena_mems = g_new0 (cl_mem, MAX (r->n_slots, 1));
  r->slot_mem = g_new0 (cl_mem, MAX (r->n_slots, 1));
  r->state = g_new0 (guint8, MAX (r->n_slots, 1));
  r->host = g_new0 (ClinferTensor *, MAX (r->n_slots, 1));
  r->wraps = g_new0 (HostWrap, MAX (r->n_inputs, 1));
  r->in_bufs = g_new0 (cl_mem, MAX (r->n_inputs, 1));
  r->in_host = g_new0 (ClinferTensor *, MAX (r->n_inputs, 1));
  r->dyn_mems = g_new0 (cl_mem, MAX (r->n_slots, 1));
  r->dyn_bytes = g_new0 (gsize, MAX (r->n_slots, 1));
  {
    cl_int err = CL_SUCCESS;

    r->queue = clCreateCommandQueue (r->dev->core->context,
        r->dev->core->device, 0, &err);
    if (!clinfer_ocl_check (err, "clCreateCommandQueue (request)", error)) {
      r->queue = NULL;
      g_prefix_error (error, "%s: %s: ", plan->graph->origin, device->name);
      clinfer_ocl_free_run (&r->base);
      return NULL;
    }
  }
  for (guint i = 0; i < r->n_slots; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind == CLINFER_SLOT_CONSTANT)
      r->host[i] = clinfer_tensor_ref (s->value);
  }
  if (!create_arenas (r, plan, error) || !create_kernels (r, plan, error)) {
    g_prefix_error (error, "%s: %s: ", plan->graph->origin, device->name);
    clinfer_ocl_free_run (&r->base);
    return NULL;
  }
  return &r->base;
}

/* ---------------------------------------------------------------- */
/* Moving values between host and device                             */

static gsize
slot_bytes (const ClinferTensor *t)
{
  return t ? clinfer_tensor_get_byte_size (t) : 0;
}

/* The buffer of dynamic slot @si, grown to @bytes when smaller. */
static cl_mem
dynamic_mem (OclRun *r, guint si, gsize bytes, GError **error)
{
  cl_int err = CL_SUCCESS;

  if (r->dyn_mems[si] && r->dyn_bytes[si] >= bytes)
    return r->dyn_mems[si];
  if (r->dyn_mems[si])
    clReleaseMemObject (r->dyn_mems[si]);
  r->dyn_bytes[si] = 0;
  r->dyn_mems[si] = clCreateBuffer (r->dev->core->context, CL_MEM_READ_WRITE,
      MAX (bytes, 4), NULL, &err);
  if (!clinfer_ocl_check (err, "clCreateBuffer (dynamic tensor)", error)) {
    r->dyn_mems[si] = NULL;
    return NULL;
  }
  r->dyn_bytes[si] = bytes;
  return r->dyn_mems[si];
}

static gboolean
ensure_device (OclRun *r, guint si, ClinferRunIO *io, GError **error)
{
  ClinferSlot *s = &g_array_index (r->base.plan->slots, ClinferSlot, si);
  gsize bytes = slot_bytes (r->host[si]);
  cl_int err = CL_SUCCESS;

  if (r->state[si] & ON_DEVICE || bytes == 0)
    return TRUE;
  if (r->slot_mem[si] == NULL && s->kind == CLINFER_SLOT_INPUT) {
    guint k = s->input_index;
    if (r->in_bufs[k] == NULL)
      r->in_bufs[k] = clCreateBuffer (r->dev->core->context, CL_MEM_READ_WRITE,
          bytes, NULL, &err);
    if (!clinfer_ocl_check (err, "clCreateBuffer (input)", error))
      return FALSE;
    r->slot_mem[si] = r->in_bufs[k];
  }
  if (r->slot_mem[si] == NULL && s->kind == CLINFER_SLOT_DYNAMIC
      && !(r->slot_mem[si] = dynamic_mem (r, si, bytes, error)))
    return FALSE;
  if (r->slot_mem[si] == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "internal: slot %u has no device buffer", si);
    return FALSE;
  }
  /* A bound input stays untouched until the inference's final wait: no
   * need to block. Anything else may be host arena memory that the next
   * fallback step overwrites. */
  err = clEnqueueWriteBuffer (r->queue, r->slot_mem[si],
      s->kind == CLINFER_SLOT_INPUT ? CL_FALSE : CL_TRUE, 0,
      bytes, clinfer_tensor_get_const_data (r->host[si]), 0, NULL, NULL);
  if (!clinfer_ocl_check (err, "clEnqueueWriteBuffer", error))
    return FALSE;
  io->bytes_to_device += bytes;
  r->state[si] |= ON_DEVICE;
  return TRUE;
}

/* The run's own host tensor for input slot @si (a remote input read
 * through the host, or downloaded for a fallback step). */
static gboolean
input_host_tensor (OclRun *r, guint si, GError **error)
{
  ClinferSlot *s = &g_array_index (r->base.plan->slots, ClinferSlot, si);
  guint k = s->input_index;
  const ClinferShape *shape = &r->base.plan->input_shapes[k];

  if (r->in_host[k] == NULL
      || !clinfer_shape_equal (clinfer_tensor_get_shape (r->in_host[k]), shape)) {
    g_clear_pointer (&r->in_host[k], clinfer_tensor_unref);
    if (!(r->in_host[k] = clinfer_tensor_new (s->type, shape, error)))
      return FALSE;
  }
  if (r->host[si] != r->in_host[k]) {
    g_clear_pointer (&r->host[si], clinfer_tensor_unref);
    r->host[si] = clinfer_tensor_ref (r->in_host[k]);
  }
  return TRUE;
}

/* Brings slot @si's value to the host. With @blocking FALSE the read is
 * only queued: the caller waits (clFinish) before anyone reads it. */
static gboolean
ensure_host_full (OclRun *r, guint si, gboolean blocking, ClinferRunIO *io,
    GError **error)
{
  cl_int err;
  gsize bytes;

  if (r->state[si] & ON_HOST)
    return TRUE;
  if (r->host[si] == NULL && !input_host_tensor (r, si, error))
    return FALSE;
  bytes = slot_bytes (r->host[si]);
  if (bytes > 0) {
    err = clEnqueueReadBuffer (r->queue, r->slot_mem[si],
        blocking ? CL_TRUE : CL_FALSE, 0, bytes,
        clinfer_tensor_get_data (r->host[si]), 0, NULL, NULL);
    if (!clinfer_ocl_check (err, "clEnqueueReadBuffer", error))
      return FALSE;
    io->bytes_to_host += bytes;
  }
  r->state[si] |= ON_HOST;
  return TRUE;
}

static gboolean
ensure_host (OclRun *r, guint si, ClinferRunIO *io, GError **error)
{
  return ensure_host_full (r, si, TRUE, io, error);
}

/* ---------------------------------------------------------------- */
/* Inputs and outputs                                                */

static void
set_host (OclRun *r, guint si, ClinferTensor *t)
{
  if (r->host[si] == t)
    return;
  if (r->host[si])
    clinfer_tensor_unref (r->host[si]);
  r->host[si] = t ? clinfer_tensor_ref (t) : NULL;
}

/* Host memory @p of @bytes as the device buffer of input @k: a
 * CL_MEM_USE_HOST_PTR buffer, re-synchronised by map/unmap when the same
 * memory comes again. Copies nothing on unified-memory devices. */
static cl_mem
wrap_host (OclRun *r, guint k, ClinferTensor *t, ClinferRunIO *io,
    GError **error)
{
  OclCore *core = r->dev->core;
  HostWrap *w = &r->wraps[k];
  gpointer p = clinfer_tensor_get_data (t);
  gsize bytes = slot_bytes (t);
  cl_int err = CL_SUCCESS;

  if (w->mem && (w->tensor != t || w->ptr != p || w->bytes != bytes))
    host_wrap_clear (w);
  if (w->mem == NULL) {
    w->mem = clCreateBuffer (core->context, CL_MEM_READ_ONLY
        | CL_MEM_USE_HOST_PTR, bytes, p, &err);
    if (!clinfer_ocl_check (err, "clCreateBuffer (CL_MEM_USE_HOST_PTR input)",
            error)) {
      w->mem = NULL;
      return NULL;
    }
    w->tensor = clinfer_tensor_ref (t);
    w->ptr = p;
    w->bytes = bytes;
  } else {
    /* Not blocking: the pointer is not used, the unmap after it in the
     * in-order queue is what makes the device see the host's bytes. */
    void *m = clEnqueueMapBuffer (r->queue, w->mem, CL_FALSE,
        CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes, 0, NULL, NULL, &err);
    if (!clinfer_ocl_check (err, "clEnqueueMapBuffer (input)", error))
      return NULL;
    err = clEnqueueUnmapMemObject (r->queue, w->mem, m, 0, NULL, NULL);
    if (!clinfer_ocl_check (err, "clEnqueueUnmapMemObject (input)", error))
      return NULL;
  }
  return w->mem;
}

static gboolean
bind_input (OclRun *r, guint si, guint k, ClinferRunIO *io, GError **error)
{
  ClinferRemoteTensor *rt = io->remote_inputs[k];
  ClinferTensor *t = io->inputs[k];
  cl_mem mem;

  r->slot_mem[si] = NULL;
  set_host (r, si, NULL);
  if (rt && (mem = clinfer_ocl_remote_mem (rt, r->dev->core))
      && clinfer_remote_tensor_is_contiguous (rt)) {
    r->slot_mem[si] = mem;        /* the caller's buffer, no copy */
    r->state[si] = ON_DEVICE;
    return TRUE;
  }
  if (rt && !(rt->host && clinfer_remote_tensor_is_contiguous (rt))) {
    /* Another context, or strided: read through the host (counted when
     * the memory is not host memory). */
    if (!input_host_tensor (r, si, error)
        || !clinfer_remote_tensor_read_counted (rt, r->host[si],
            &io->bytes_to_host, error))
      return FALSE;
    r->state[si] = ON_HOST;
    return TRUE;
  }
  if (rt) {
    /* The wrapper keeps @rt (and so its host memory) alive. */
    t = clinfer_tensor_new_wrapped (rt->type, &rt->shape, NULL, rt->host,
        (GDestroyNotify) clinfer_remote_tensor_unref,
        clinfer_remote_tensor_ref (rt), error);
    if (t == NULL) {
      clinfer_remote_tensor_unref (rt);
      return FALSE;
    }
    set_host (r, si, t);
    clinfer_tensor_unref (t);
  } else
    set_host (r, si, t);
  r->state[si] = ON_HOST;
  /* A discrete device copies the bytes either way: into the run's own
   * input buffer, queued without blocking (ensure_device ()). Unified
   * memory reads the caller's memory in place. */
  if (slot_bytes (r->host[si]) == 0 || !r->dev->core->unified_memory)
    return TRUE;
  r->slot_mem[si] = wrap_host (r, k, r->host[si], io, error);
  if (r->slot_mem[si] == NULL)
    return FALSE;
  r->state[si] |= ON_DEVICE;
  return TRUE;
}

/* Remote outputs of this context are written in place: their buffer
 * replaces the arena slot's for this inference. */
static void
bind_outputs (OclRun *r, ClinferRunIO *io)
{
  ClinferPlan *plan = r->base.plan;

  for (guint i = 0; i < plan->n_outputs; i++) {
    guint si = plan->output_slots[i];
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);
    ClinferRemoteTensor *rt = io->remote_outputs[i];
    cl_mem mem = rt ? clinfer_ocl_remote_mem (rt, r->dev->core) : NULL;
    if (mem && s->kind == CLINFER_SLOT_ARENA && s->bytes > 0
        && r->slot_mem[si] == r->arena_mems[si]
        && clinfer_remote_tensor_is_contiguous (rt)
        && clinfer_shape_equal (&rt->shape, &s->shape))
      r->slot_mem[si] = mem;
  }
}

static gboolean
bind_all (OclRun *r, ClinferRunIO *io, GError **error)
{
  ClinferPlan *plan = r->base.plan;

  for (guint i = 0; i < r->n_slots; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    switch (s->kind) {
      case CLINFER_SLOT_CONSTANT:
        r->slot_mem[i] = r->op->const_mems[i];
        r->state[i] = ON_HOST | (r->slot_mem[i] ? ON_DEVICE : 0);
        break;
      case CLINFER_SLOT_ARENA:
        r->slot_mem[i] = r->arena_mems[i];
        r->state[i] = 0;
        break;
      case CLINFER_SLOT_DYNAMIC:
        r->slot_mem[i] = NULL;
        r->state[i] = ON_HOST;
        break;
      case CLINFER_SLOT_INPUT:
        if (!bind_input (r, i, s->input_index, io, error))
          return FALSE;
        break;
    }
  }
  bind_outputs (r, io);
  return TRUE;
}

static gboolean
write_output (OclRun *r, guint i, ClinferRunIO *io, GError **error)
{
  ClinferPlan *plan = r->base.plan;
  guint si = plan->output_slots[i];
  ClinferRemoteTensor *rt = io->remote_outputs[i];
  cl_mem mem = rt ? clinfer_ocl_remote_mem (rt, r->dev->core) : NULL;

  if (rt == NULL) {
    /* Queued: clinfer_ocl_run () waits once after the last output. */
    if (!ensure_host_full (r, si, FALSE, io, error))
      return FALSE;
    io->outputs[i] = clinfer_tensor_ref (r->host[si]);
    return TRUE;
  }
  if (mem && r->slot_mem[si] == mem) {
    /* Written in place; a fallback step left it on the host. */
    return ensure_device (r, si, io, error);
  }
  if (mem && clinfer_remote_tensor_is_contiguous (rt) && rt->span > 0
      && rt->span == slot_bytes (r->host[si])) {
    cl_int err;
    if (!ensure_device (r, si, io, error))
      return FALSE;
    err = clEnqueueCopyBuffer (r->queue, r->slot_mem[si], mem, 0, 0,
        rt->span, 0, NULL, NULL);
    return clinfer_ocl_check (err, "clEnqueueCopyBuffer (output)", error);
  }
  if (!ensure_host (r, si, io, error))
    return FALSE;
  return clinfer_remote_tensor_write_counted (rt, r->host[si],
      &io->bytes_to_device, error);
}

/* ---------------------------------------------------------------- */
/* Steps                                                             */

static gboolean
run_launch (OclRun *r, const ClinferStep *st, OclLaunch *l, cl_kernel k,
    cl_mem *bound, GError **error)
{
  cl_command_queue q = r->queue;
  cl_int err = CL_SUCCESS;

  if (l->kind == OCL_LAUNCH_COPY) {
    if (l->bytes == 0)
      return TRUE;
    err = clEnqueueCopyBuffer (q, r->slot_mem[st->in_slots[l->src_port]],
        r->slot_mem[st->out_slots[l->dst_port]], l->src_offset, l->dst_offset,
        l->bytes, 0, NULL, NULL);
    return clinfer_ocl_check (err, "clEnqueueCopyBuffer", error);
  }
  for (guint j = 0; j < l->work_dim; j++)
    if (l->gws[j] == 0)
      return TRUE;
  for (guint a = 0; a < l->args->len && err == CL_SUCCESS; a++) {
    OclArg *arg = &g_array_index (l->args, OclArg, a);
    cl_mem m = NULL;
    if (arg->kind == OCL_ARG_INPUT)
      m = arg->port < st->node->n_inputs && st->in_slots[arg->port] != G_MAXUINT
          ? r->slot_mem[st->in_slots[arg->port]] : NULL;
    else if (arg->kind == OCL_ARG_OUTPUT)
      m = r->slot_mem[st->out_slots[arg->port]];
    else
      continue;
    if (bound[a] == m)
      continue;
    err = clSetKernelArg (k, a, sizeof (cl_mem), m ? &m : NULL);
    if (err != CL_SUCCESS)
      break;
    if (bound[a] != OCL_UNSET && bound[a] != NULL)
      clReleaseMemObject (bound[a]);
    if (m)
      clRetainMemObject (m);
    bound[a] = m;
  }
  if (err == CL_SUCCESS)
    err = clEnqueueNDRangeKernel (q, k, l->work_dim, NULL, l->gws,
        l->has_lws ? l->lws : NULL, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "kernel %s: %s (%d)", l->kernel_name, clinfer_ocl_error_name (err),
        (int) err);
    return FALSE;
  }
  return TRUE;
}

/* Brings the inputs @impl reads to the device, then runs its launches
 * [@from, @to). */
static gboolean
run_device_launches (OclRun *r, OclStepImpl *impl, StepObjects *o,
    ClinferStep *st, guint from, guint to, ClinferRunIO *io, GError **error)
{
  guint base = 0;

  for (guint j = 0; j < st->node->n_inputs; j++)
    if (st->in_slots[j] != G_MAXUINT && OCL_INPUT_USED (impl, j)
        && !ensure_device (r, st->in_slots[j], io, error))
      return FALSE;
  for (guint j = 0; j < to; j++) {
    OclLaunch *l = g_ptr_array_index (impl->launches, j);
    if (j >= from && !run_launch (r, st, l, o->kernels[j], o->bound + base,
            error))
      return FALSE;
    base += launch_n_args (l);
  }
  return TRUE;
}

static gboolean
run_device_step (OclRun *r, OclStepImpl *impl, StepObjects *o,
    ClinferStep *st, ClinferRunIO *io, GError **error)
{
  if (!run_device_launches (r, impl, o, st, 0, impl->launches->len, io,
          error))
    return FALSE;
  for (guint j = 0; j < st->node->n_outputs; j++)
    r->state[st->out_slots[j]] = ON_DEVICE;
  return TRUE;
}

/* Input @j of a dynamic step as its op's infer sees it: type, shape and,
 * for small parameter inputs (axes, sizes, scales...), the value, brought
 * to the host (a few bytes). */
static gboolean
late_input (OclRun *r, ClinferStep *st, guint j, guint64 host_inputs,
    ClinferValueInfo *v, GString *key, ClinferRunIO *io, GError **error)
{
  guint si = st->in_slots[j];
  ClinferSlot *s;
  const ClinferShape *shape;
  int64_t n;

  v->shape = clinfer_shape_unknown ();
  if (si == G_MAXUINT) {
    g_string_append (key, "-;");
    return TRUE;
  }
  s = &g_array_index (r->base.plan->slots, ClinferSlot, si);
  v->present = TRUE;
  v->type = s->type;
  if (r->host[si])
    shape = clinfer_tensor_get_shape (r->host[si]);
  else if (s->kind == CLINFER_SLOT_INPUT)
    shape = &r->base.plan->input_shapes[s->input_index];
  else
    shape = &s->shape;
  v->shape = *shape;
  n = clinfer_shape_n_elements (shape);
  for (int d = 0; d < shape->rank; d++)
    g_string_append_printf (key, "%" G_GINT64_FORMAT ",", shape->dims[d]);
  if ((host_inputs ? j < 64 && (host_inputs >> j) & 1 : j > 0)
      && n >= 0 && n <= 64 && clinfer_element_type_size (s->type) > 0
      && s->type != CLINFER_TYPE_STRING) {
    if (!ensure_host (r, si, io, error))
      return FALSE;
    v->value = r->host[si];
    g_string_append_c (key, '=');
    for (gsize b = 0; b < clinfer_tensor_get_byte_size (r->host[si]); b++)
      g_string_append_printf (key, "%02x",
          ((const guint8 *) clinfer_tensor_get_const_data (r->host[si]))[b]);
  }
  g_string_append_c (key, ';');
  return TRUE;
}

/* Builds dynamic step @index for the current inputs unless it was last
 * built for the same shapes and parameter values. */
static gboolean
late_build (OclRun *r, guint index, ClinferStep *st, ClinferRunIO *io,
    GError **error)
{
  LateStep *l = &r->late[index];
  ClinferNode *node = st->node;
  g_autofree ClinferValueInfo *in = g_new0 (ClinferValueInfo, MAX (node->n_inputs, 1));
  g_autoptr (GString) key = g_string_new (NULL);
  ClinferStep step;
  OclBuilder b;
  const OclOpEntry *e = clinfer_ocl_op_lookup (node);
  gboolean ok;

  for (guint j = 0; j < node->n_inputs; j++)
    if (!late_input (r, st, j, e ? e->host_inputs : 0, &in[j], key, io, error))
      return FALSE;
  if (l->key && strcmp (l->key, key->str) == 0)
    return TRUE;
  /* The kernels index with 32-bit ints (as for static steps). */
  for (guint j = 0; j < node->n_inputs; j++)
    if (in[j].present && in[j].shape.rank >= 0
        && !clinfer_ocl_shape_fits (&in[j].shape)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "input %u has %" G_GINT64_FORMAT " elements at run time, more than "
          "the OpenCL kernels' 32-bit indexing takes (2^30)", j,
          clinfer_shape_n_elements (&in[j].shape));
      return FALSE;
    }
  late_step_clear (l);
  if (!(l->node = clinfer_ocl_late_node_new (node, in, error)))
    return FALSE;
  step = *st;
  step.node = (ClinferNode *) clinfer_ocl_late_node_get (l->node);
  b = (OclBuilder) { r->dev, r->base.plan, &step, clinfer_ocl_step_impl_new () };
  l->impl = b.impl;
  ok = e && e->build (&b, step.node, error);
  if (!ok)
    return FALSE;
  /* A value-dependent extent (count_launches) is filled in when it runs. */
  for (guint j = 0; j < node->n_outputs; j++)
    if ((!clinfer_shape_is_static (&step.node->outputs[j].shape)
            && l->impl->count_launches == 0)
        || !clinfer_ocl_shape_fits (&step.node->outputs[j].shape)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "output %u has no concrete shape or is too large at run time", j);
      return FALSE;
    }
  if (!create_step_objects (r, l->impl, &l->objs, error))
    return FALSE;
  clinfer_ocl_step_impl_finish (l->impl);
  l->key = g_string_free (g_steal_pointer (&key), FALSE);
  return TRUE;
}

/* Runs the launches of @l that count a value-dependent output extent and
 * reads it back: 4 bytes device -> host, counted in @io. */
static gboolean
run_count (OclRun *r, LateStep *l, ClinferStep *st, int64_t *extent,
    ClinferRunIO *io, GError **error)
{
  cl_int count = 0, err;

  if (!run_device_launches (r, l->impl, &l->objs, st, 0,
          l->impl->count_launches, io, error))
    return FALSE;
  err = clEnqueueReadBuffer (r->queue, l->objs.scratch[0], CL_TRUE, 0,
      sizeof (count), &count, 0, NULL, NULL);
  if (!clinfer_ocl_check (err, "clEnqueueReadBuffer (output extent)", error))
    return FALSE;
  io->bytes_to_host += sizeof (count);
  if (count < 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "internal: the device counted %d output elements", (int) count);
    return FALSE;
  }
  *extent = count;
  return TRUE;
}

/* A dynamic step: built for the actual inputs, outputs in buffers of
 * their actual size. */
static gboolean
run_late_step (OclRun *r, guint index, ClinferStep *st, ClinferRunIO *io,
    GError **error)
{
  ClinferPlan *plan = r->base.plan;
  LateStep *l = &r->late[index];
  const ClinferNode *late;
  int64_t extent = 0;

  if (!late_build (r, index, st, io, error)) {
    late_step_clear (l);
    return FALSE;
  }
  late = clinfer_ocl_late_node_get (l->node);
  if (l->impl->count_launches > 0 && !run_count (r, l, st, &extent, io, error))
    return FALSE;
  for (guint j = 0; j < st->node->n_outputs; j++) {
    guint si = st->out_slots[j];
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);
    const ClinferPortDesc *d = &late->outputs[j];
    ClinferShape shape = d->shape;
    ClinferTensor *t;
    if (s->kind == CLINFER_SLOT_ARENA)
      continue;              /* this output has a static shape */
    for (int k = 0; k < shape.rank; k++)
      if (shape.dims[k] < 0)
        shape.dims[k] = extent;
    t = clinfer_tensor_new (d->type, &shape, error);
    if (t == NULL)
      return FALSE;
    set_host (r, si, t);
    clinfer_tensor_unref (t);
    r->slot_mem[si] = dynamic_mem (r, si, slot_bytes (t), error);
    if (r->slot_mem[si] == NULL)
      return FALSE;
  }
  if (l->impl->count_launches == 0)
    return run_device_step (r, l->impl, &l->objs, st, io, error);
  if (!run_device_launches (r, l->impl, &l->objs, st, l->impl->count_launches,
          l->impl->launches->len, io, error))
    return FALSE;
  for (guint j = 0; j < st->node->n_outputs; j++)
    r->state[st->out_slots[j]] = ON_DEVICE;
  return TRUE;
}

static gboolean
run_fallback_step (OclRun *r, ClinferStep *st, ClinferRunIO *io,
    GError **error)
{
  for (guint j = 0; j < st->node->n_inputs; j++)
    if (st->in_slots[j] != G_MAXUINT
        && !ensure_host (r, st->in_slots[j], io, error))
      return FALSE;
  if (!clinfer_cpu_step_run (r->base.plan, st, r->host,
          r->base.plan->graph->origin, error))
    return FALSE;
  for (guint j = 0; j < st->node->n_outputs; j++)
    r->state[st->out_slots[j]] = ON_HOST;
  return TRUE;
}

/* Makes the request's queue wait for everything queued on the context's
 * queue so far (a marker there, a barrier on ours): the pre-processing
 * kernel that wrote an input, the application's writes. */
static gboolean
wait_for_context_queue (OclRun *r, GError **error)
{
  cl_command_queue ctx_q = r->dev->core->queue;
  cl_event marker = NULL;
  cl_int err;

  err = clFlush (ctx_q);
  if (err == CL_SUCCESS)
    err = clEnqueueMarkerWithWaitList (ctx_q, 0, NULL, &marker);
  if (err == CL_SUCCESS)
    err = clEnqueueBarrierWithWaitList (r->queue, 1, &marker, NULL);
  if (marker != NULL)
    clReleaseEvent (marker);
  return clinfer_ocl_check (err, "ordering after the context's queue",
      error);
}

gboolean
clinfer_ocl_run (ClinferDeviceRun *base, ClinferRunIO *io, GError **error)
{
  OclRun *r = (OclRun *) base;
  ClinferPlan *plan = base->plan;
  cl_command_queue q = r->queue;
  gboolean ok = wait_for_context_queue (r, error) && bind_all (r, io, error);

  if (ok && plan->steps->len > 0)
    omp_set_num_threads (base->device->threads);
  for (guint i = 0; ok && i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    gint64 t0 = io->profile ? g_get_monotonic_time () : 0;
    if (st->fallback)
      ok = run_fallback_step (r, st, io, error);
    else if (st->dynamic)
      ok = run_late_step (r, i, st, io, error);
    else
      ok = run_device_step (r, r->op->steps[i], &r->objs[i], st, io, error);
    if (ok && io->profile) {
      clFinish (q);
      clinfer_profile_record (io->profile, st,
          (g_get_monotonic_time () - t0) * 1000);
    }
    if (!ok)
      clinfer_node_prefix_error (error, st->node, base->device->name);
  }
  for (guint i = 0; ok && i < plan->n_outputs; i++)
    ok = write_output (r, i, io, error);
  /* Remote outputs are complete when infer returns. */
  if (clFinish (q) != CL_SUCCESS && ok) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "%s: %s: clFinish failed", plan->graph->origin, base->device->name);
    ok = FALSE;
  }
  return ok;
}
