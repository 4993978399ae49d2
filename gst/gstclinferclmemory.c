/* The OpenCL allocator: GstMemory wrapping a cl_mem of the compiled model's
 * context, mapped through clEnqueueMapBuffer.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferclmemory.h"

#include <string.h>

GST_DEBUG_CATEGORY_EXTERN (gst_clinfer_debug);
#define GST_CAT_DEFAULT gst_clinfer_debug

struct _GstClinferClAllocator
{
  GstAllocator parent;
  ClinferRemoteContext *context;        /* a reference: keeps the handles */
  cl_context cl_context;
  cl_command_queue queue;
};

G_DEFINE_TYPE (GstClinferClAllocator, gst_clinfer_cl_allocator,
    GST_TYPE_ALLOCATOR);

static GstClinferClMemory *
memory_new (GstClinferClAllocator * self, GstMemory * parent, cl_mem mem,
    GstMemoryFlags flags, gsize maxsize, gsize align, gsize offset, gsize size)
{
  GstClinferClMemory *m = g_new0 (GstClinferClMemory, 1);

  gst_memory_init (GST_MEMORY_CAST (m), flags, GST_ALLOCATOR_CAST (self),
      parent, maxsize, align, offset, size);
  clRetainMemObject (mem);
  m->mem = mem;
  m->context = self->cl_context;
  m->queue = self->queue;
  return m;
}

static GstMemory *
gst_clinfer_cl_allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  GstClinferClAllocator *self = GST_CLINFER_CL_ALLOCATOR (allocator);
  gsize maxsize = params->prefix + size + params->padding;
  GstClinferClMemory *m;
  cl_int err = CL_SUCCESS;
  cl_mem mem;

  /* ALLOC_HOST_PTR: host-visible storage the driver aligns itself (PoCL
   * and integrated GPUs map it in place). */
  mem = clCreateBuffer (self->cl_context, CL_MEM_READ_WRITE
      | CL_MEM_ALLOC_HOST_PTR, MAX (maxsize, 1), NULL, &err);
  if (err != CL_SUCCESS) {
    GST_ERROR_OBJECT (self, "clCreateBuffer of %" G_GSIZE_FORMAT " bytes "
        "failed: %d", maxsize, err);
    return NULL;
  }
  m = memory_new (self, NULL, mem, params->flags, maxsize, params->align,
      params->prefix, size);
  clReleaseMemObject (mem);
  return GST_MEMORY_CAST (m);
}

static void
gst_clinfer_cl_allocator_free (GstAllocator * allocator, GstMemory * memory)
{
  GstClinferClMemory *m = (GstClinferClMemory *) memory;

  clReleaseMemObject (m->mem);
  g_free (m);
}

static gpointer
cl_mem_map_full (GstMemory * memory, GstMapInfo * info, gsize maxsize)
{
  GstClinferClMemory *m = (GstClinferClMemory *) memory;
  cl_map_flags flags = 0;
  cl_int err = CL_SUCCESS;
  gpointer p;

  /* A sub-memory shares the parent's cl_mem: maps all of it too. */
  if (info->flags & GST_MAP_READ)
    flags |= CL_MAP_READ;
  if (info->flags & GST_MAP_WRITE)
    flags |= CL_MAP_WRITE;
  p = clEnqueueMapBuffer (m->queue, m->mem, CL_TRUE, flags, 0, maxsize, 0,
      NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    GST_ERROR ("clEnqueueMapBuffer failed: %d", err);
    return NULL;
  }
  return p;
}

static void
cl_mem_unmap_full (GstMemory * memory, GstMapInfo * info)
{
  GstClinferClMemory *m = (GstClinferClMemory *) memory;
  guint8 *p = (guint8 *) info->data - memory->offset;

  clEnqueueUnmapMemObject (m->queue, m->mem, p, 0, NULL, NULL);
  /* Kernels enqueued later on other queues must see the writes. */
  clFinish (m->queue);
}

static GstMemory *
cl_mem_share (GstMemory * memory, gssize offset, gssize size)
{
  GstClinferClMemory *m = (GstClinferClMemory *) memory;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;
  return GST_MEMORY_CAST (memory_new (GST_CLINFER_CL_ALLOCATOR
          (memory->allocator), parent, m->mem,
          GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY,
          memory->maxsize, memory->align, memory->offset + offset, size));
}

static GstMemory *
cl_mem_copy (GstMemory * memory, gssize offset, gssize size)
{
  GstAllocationParams params = { 0, memory->align, 0, 0, };
  GstMapInfo in, out;
  GstMemory *copy;

  if (size == -1)
    size = memory->size > (gsize) offset ? memory->size - offset : 0;
  copy = gst_allocator_alloc (memory->allocator, size, &params);
  if (copy == NULL)
    return NULL;
  if (!gst_memory_map (memory, &in, GST_MAP_READ)) {
    gst_memory_unref (copy);
    return NULL;
  }
  if (!gst_memory_map (copy, &out, GST_MAP_WRITE)) {
    gst_memory_unmap (memory, &in);
    gst_memory_unref (copy);
    return NULL;
  }
  memcpy (out.data, in.data + offset, size);
  gst_memory_unmap (copy, &out);
  gst_memory_unmap (memory, &in);
  return copy;
}

static void
gst_clinfer_cl_allocator_finalize (GObject * object)
{
  GstClinferClAllocator *self = GST_CLINFER_CL_ALLOCATOR (object);

  g_clear_pointer (&self->context, clinfer_remote_context_unref);
  G_OBJECT_CLASS (gst_clinfer_cl_allocator_parent_class)->finalize (object);
}

static void
gst_clinfer_cl_allocator_class_init (GstClinferClAllocatorClass * klass)
{
  GstAllocatorClass *allocator_class = (GstAllocatorClass *) klass;

  G_OBJECT_CLASS (klass)->finalize = gst_clinfer_cl_allocator_finalize;
  allocator_class->alloc = gst_clinfer_cl_allocator_alloc;
  allocator_class->free = gst_clinfer_cl_allocator_free;
}

static void
gst_clinfer_cl_allocator_init (GstClinferClAllocator * self)
{
  GstAllocator *allocator = GST_ALLOCATOR_CAST (self);

  allocator->mem_type = GST_CLINFER_CL_MEMORY_TYPE;
  allocator->mem_map_full = cl_mem_map_full;
  allocator->mem_unmap_full = cl_mem_unmap_full;
  allocator->mem_share = cl_mem_share;
  allocator->mem_copy = cl_mem_copy;
  GST_OBJECT_FLAG_SET (self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

/* An OpenCL handle property (G_VARIANT_TYPE_UINT64) of @context, or NULL. */
static gpointer
context_handle (ClinferRemoteContext * context, const gchar * key)
{
  GVariant *v = clinfer_remote_context_get_property (context, key);

  if (v == NULL || !g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
    return NULL;
  return (gpointer) (guintptr) g_variant_get_uint64 (v);
}

GstAllocator *
gst_clinfer_cl_allocator_new (ClinferRemoteContext * context, GError ** error)
{
  GstClinferClAllocator *self;
  cl_context ctx = context_handle (context, CLINFER_REMOTE_PROP_OCL_CONTEXT);
  cl_command_queue queue = context_handle (context,
      CLINFER_REMOTE_PROP_OCL_QUEUE);

  if (ctx == NULL || queue == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "device %s has no OpenCL context",
        clinfer_remote_context_get_device_name (context));
    return NULL;
  }
  self = g_object_new (GST_TYPE_CLINFER_CL_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->context = clinfer_remote_context_ref (context);
  self->cl_context = ctx;
  self->queue = queue;
  return GST_ALLOCATOR_CAST (self);
}
