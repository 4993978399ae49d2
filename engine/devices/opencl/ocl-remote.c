/* clinfer — OpenCL buffer remote tensors (SHARED_MEM_TYPE OCL_BUFFER):
 * engine-allocated, wrapping an application's cl_mem (size checked with
 * CL_MEM_SIZE), or wrapping host memory with CL_MEM_USE_HOST_PTR. Host
 * access maps the buffer; on unified-memory devices that copies nothing. */
#include "devices/opencl/ocl-internal.h"

typedef struct {
  cl_mem mem;
  OclCore *core;             /* a reference: queue for map/unmap */
} OclRemote;

static gpointer
ocl_map (ClinferRemoteTensor *t, gboolean write, guint64 *copied,
    GError **error)
{
  OclRemote *impl = t->impl;
  cl_map_flags flags = !write ? CL_MAP_READ
      : clinfer_remote_tensor_is_contiguous (t) ? CL_MAP_WRITE_INVALIDATE_REGION
      : CL_MAP_WRITE;
  cl_int err = CL_SUCCESS;
  void *p = clEnqueueMapBuffer (impl->core->queue, impl->mem, CL_TRUE, flags,
      0, MAX (t->span, 1), 0, NULL, NULL, &err);

  if (!clinfer_ocl_check (err, "clEnqueueMapBuffer (remote tensor)", error))
    return NULL;
  if (!impl->core->unified_memory && flags != CL_MAP_WRITE_INVALIDATE_REGION)
    *copied += t->span;
  return p;
}

static void
ocl_unmap (ClinferRemoteTensor *t, gpointer ptr, gboolean write,
    guint64 *copied)
{
  OclRemote *impl = t->impl;

  clEnqueueUnmapMemObject (impl->core->queue, impl->mem, ptr, 0, NULL, NULL);
  clFinish (impl->core->queue);
  if (write && !impl->core->unified_memory)
    *copied += t->span;
}

static void
ocl_free_impl (ClinferRemoteTensor *t)
{
  OclRemote *impl = t->impl;

  if (impl == NULL)
    return;
  if (impl->mem)
    clReleaseMemObject (impl->mem);
  clinfer_ocl_core_unref (impl->core);
  g_free (impl);
  t->impl = NULL;
}

static const ClinferRemoteTensorClass ocl_tensor_class = {
  .mem_type = CLINFER_REMOTE_MEM_OCL_BUFFER,
  .map = ocl_map,
  .unmap = ocl_unmap,
  .free_impl = ocl_free_impl,
};

cl_mem
clinfer_ocl_remote_mem (const ClinferRemoteTensor *t, const OclCore *core)
{
  const OclRemote *impl = t->impl;

  if (t->klass != &ocl_tensor_class || impl->core->context != core->context)
    return NULL;
  return impl->mem;
}

/* Checks an application cl_mem against the context and the bytes needed. */
static gboolean
check_handle (OclCore *core, cl_mem mem, gsize span, GError **error)
{
  cl_context ctx = NULL;
  size_t size = 0;
  cl_int err = clGetMemObjectInfo (mem, CL_MEM_CONTEXT, sizeof (ctx), &ctx,
      NULL);

  if (err == CL_SUCCESS)
    err = clGetMemObjectInfo (mem, CL_MEM_SIZE, sizeof (size), &size, NULL);
  if (!clinfer_ocl_check (err, "cl_mem: clGetMemObjectInfo", error))
    return FALSE;
  if (ctx != core->context) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cl_mem belongs to another cl_context than the remote context's "
        "(%s); create the context from the application's cl_context",
        core->name);
    return FALSE;
  }
  if (size < span) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cl_mem holds %" G_GSIZE_FORMAT " bytes (CL_MEM_SIZE) but the shape "
        "and strides need %" G_GSIZE_FORMAT, (gsize) size, span);
    return FALSE;
  }
  return TRUE;
}

/* New zero-filled memory (host-allocatable so maps are cheap). */
static cl_mem
alloc_mem (OclCore *core, gsize span, GError **error)
{
  cl_int err = CL_SUCCESS;
  cl_uint zero = 0;
  cl_mem mem = clCreateBuffer (core->context, CL_MEM_READ_WRITE
      | CL_MEM_ALLOC_HOST_PTR, MAX (span, 4), NULL, &err);

  if (!clinfer_ocl_check (err, "clCreateBuffer (remote tensor)", error))
    return NULL;
  /* A 4-byte pattern needs a size that is a multiple of 4; else bytes. */
  span = MAX (span, 4);
  err = clEnqueueFillBuffer (core->queue, mem, &zero, span % 4 ? 1 : 4, 0,
      span, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    err = clFinish (core->queue);
  if (!clinfer_ocl_check (err, "clEnqueueFillBuffer (remote tensor)", error)) {
    clReleaseMemObject (mem);
    return NULL;
  }
  return mem;
}

ClinferRemoteTensor *
clinfer_ocl_create_remote (ClinferRemoteContext *context,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer host, GDestroyNotify destroy,
    gpointer user_data, gpointer handle, GError **error)
{
  OclCore *core = ((OclDevice *) context->device)->core;
  ClinferRemoteTensor *t = clinfer_remote_tensor_alloc (&ocl_tensor_class,
      context, type, shape, strides, error);
  OclRemote *impl;
  cl_int err = CL_SUCCESS;

  if (t == NULL)
    return NULL;
  impl = t->impl = g_new0 (OclRemote, 1);
  impl->core = clinfer_ocl_core_ref (core);
  if (handle) {
    if (!check_handle (core, handle, t->span, error)) {
      clinfer_remote_tensor_unref (t);
      return NULL;
    }
    clRetainMemObject (handle);
    impl->mem = handle;
  } else if (host) {
    impl->mem = clCreateBuffer (core->context, CL_MEM_READ_WRITE
        | CL_MEM_USE_HOST_PTR, MAX (t->span, 1), host, &err);
    if (!clinfer_ocl_check (err, "clCreateBuffer (CL_MEM_USE_HOST_PTR)", error)) {
      clinfer_remote_tensor_unref (t);
      return NULL;
    }
    t->host = host;
  } else if (!(impl->mem = alloc_mem (core, t->span, error))) {
    clinfer_remote_tensor_unref (t);
    return NULL;
  }
  /* Set last: a failed wrap must not call the caller's destroy notify. */
  t->destroy = destroy;
  t->user_data = user_data;
  clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_SHARED_MEM_TYPE,
      g_variant_new_string (CLINFER_REMOTE_MEM_OCL_BUFFER));
  clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_MEM_HANDLE,
      g_variant_new_uint64 ((guintptr) impl->mem));
  clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_OCL_CONTEXT,
      g_variant_new_uint64 ((guintptr) core->context));
  if (host)
    clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_HOST_PTR,
        g_variant_new_uint64 ((guintptr) host));
  return t;
}

gpointer
clinfer_ocl_remote_program (ClinferRemoteContext *context, const char *name,
    const char *options, GError **error)
{
  return clinfer_ocl_program_get (((OclDevice *) context->device)->core, name,
      options, error);
}
