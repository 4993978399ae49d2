/* OpenCL-backed video memory: a GstAllocator whose GstMemory wraps a cl_mem
 * of the compiled model's OpenCL context (offered to upstream in the
 * ALLOCATION query); the pre-processing reads it in place
 * (gstclinferframe.c).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/* GstMemory type name of the allocator's memory. */
#define GST_CLINFER_CL_MEMORY_TYPE "ClinferOpenCLMemory"

/* Alignment (bytes - 1) the element asks upstream for: a page, which lets
 * drivers that pin host memory use a frame in place with
 * CL_MEM_USE_HOST_PTR (Intel wants 4096, others less). */
#define GST_CLINFER_CL_ALIGN 4095

/* The memory: @mem (a reference; a sub-memory shares its parent's) in
 * @context, mapped with clEnqueueMapBuffer on @queue. Created with
 * CL_MEM_ALLOC_HOST_PTR, so on integrated GPUs and CPU devices the map
 * returns the buffer's own storage (no copy). */
typedef struct
{
  GstMemory parent;
  cl_mem mem;
  cl_context context;
  cl_command_queue queue;
} GstClinferClMemory;

#define GST_TYPE_CLINFER_CL_ALLOCATOR (gst_clinfer_cl_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstClinferClAllocator, gst_clinfer_cl_allocator,
    GST, CLINFER_CL_ALLOCATOR, GstAllocator)

/* (transfer full) An allocator of memory in the OpenCL context of
 * @context (which must be a GPU context: NULL with @error otherwise). */
GstAllocator *gst_clinfer_cl_allocator_new (ClinferRemoteContext * context,
    GError ** error);

G_END_DECLS
