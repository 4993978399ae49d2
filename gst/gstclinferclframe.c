/* Video frames as remote tensors of an OpenCL context, without copies: the
 * element's own OpenCL memory as it is, other memory wrapped with
 * CL_MEM_USE_HOST_PTR. Also built into the GPU element test, which checks
 * that the driver maps a wrapped frame at its own address.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferclmemory.h"

#include <string.h>

/* cl_mem of remote tensor @t (an OCL_BUFFER one). */
static cl_mem
tensor_mem (ClinferRemoteTensor * t, GError ** error)
{
  return (cl_mem) clinfer_remote_tensor_get_cl_mem (t, error);
}

static ClinferRemoteTensor *
wrap_bytes (ClinferRemoteContext * context, gpointer data, gsize size,
    GError ** error)
{
  ClinferShape shape = { 1, {(int64_t) size} };

  return clinfer_remote_tensor_new_from_host (context, CLINFER_TYPE_U8,
      &shape, NULL, data, NULL, NULL, error);
}

/* The buffer is one memory of the element's allocator in @context's
 * cl_context: its cl_mem is read in place. */
static gboolean
import_cl_memory (GstClinferClFrame * f, ClinferRemoteContext * context,
    GstBuffer * buffer, const GstVideoInfo * info, GError ** error)
{
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  GstClinferClMemory *clm = (GstClinferClMemory *) mem;
  GstVideoMeta *vmeta = gst_buffer_get_video_meta (buffer);
  ClinferShape shape = { 1, {(int64_t) mem->maxsize} };
  gint i;

  f->tensors[0] = clinfer_remote_tensor_new_from_cl_mem (context,
      CLINFER_TYPE_U8, &shape, NULL, clm->mem, error);
  if (f->tensors[0] == NULL || !(f->mem[0] = tensor_mem (f->tensors[0],
              error)))
    return FALSE;
  f->n_planes = GST_VIDEO_INFO_N_PLANES (info);
  for (i = 0; i < f->n_planes; i++) {
    if (i > 0) {
      f->tensors[i] = clinfer_remote_tensor_ref (f->tensors[0]);
      f->mem[i] = f->mem[0];
    }
    f->offset[i] = mem->offset + (vmeta ? vmeta->offset[i]
        : GST_VIDEO_INFO_PLANE_OFFSET (info, i));
    f->stride[i] = vmeta ? vmeta->stride[i] : GST_VIDEO_INFO_PLANE_STRIDE (info,
        i);
  }
  return TRUE;
}

/* Any other memory: mapped for reading; the planes of one memory are one
 * wrapped buffer, planes in separate memories one each. */
static gboolean
import_host_memory (GstClinferClFrame * f, ClinferRemoteContext * context,
    GstBuffer * buffer, const GstVideoInfo * info, GError ** error)
{
  GstVideoFrame *vf = &f->frame;
  guint8 *base;
  gsize size;
  gint i;

  if (!gst_video_frame_map (vf, info, buffer, GST_MAP_READ)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        "could not map the video frame for reading");
    return FALSE;
  }
  f->wrapped = TRUE;
  f->n_planes = GST_VIDEO_FRAME_N_PLANES (vf);
  base = vf->map[0].data;
  size = vf->map[0].size;
  for (i = 0; i < f->n_planes; i++) {
    guint8 *p = GST_VIDEO_FRAME_PLANE_DATA (vf, i);
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gint rows;

    gst_video_format_info_component (vf->info.finfo, i, comp);
    rows = GST_VIDEO_FRAME_COMP_HEIGHT (vf, comp[0]);

    f->stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (vf, i);
    if (gst_buffer_n_memory (buffer) == 1 && p >= base && p < base + size) {
      /* One wrapper for the whole memory, shared by its planes. */
      f->tensors[i] = i > 0 ? clinfer_remote_tensor_ref (f->tensors[0])
          : wrap_bytes (context, base, size, error);
      f->offset[i] = p - base;
    } else {
      f->tensors[i] = wrap_bytes (context, p, (gsize) f->stride[i] * rows,
          error);
      f->offset[i] = 0;
    }
    if (f->tensors[i] == NULL || !(f->mem[i] = tensor_mem (f->tensors[i],
                error)))
      return FALSE;
  }
  return TRUE;
}

gboolean
gst_clinfer_cl_frame_import (GstClinferClFrame * f,
    ClinferRemoteContext * context, GstBuffer * buffer,
    const GstVideoInfo * info, GError ** error)
{
  GVariant *ctx = clinfer_remote_context_get_property (context,
      CLINFER_REMOTE_PROP_OCL_CONTEXT);
  GstMemory *mem;

  memset (f, 0, sizeof (*f));
  if (gst_buffer_n_memory (buffer) == 1) {
    mem = gst_buffer_peek_memory (buffer, 0);
    if (ctx != NULL && gst_memory_is_type (mem, GST_CLINFER_CL_MEMORY_TYPE)
        && (guintptr) ((GstClinferClMemory *) mem)->context
        == (guintptr) g_variant_get_uint64 (ctx)) {
      if (import_cl_memory (f, context, buffer, info, error))
        return TRUE;
      gst_clinfer_cl_frame_release (f);
      return FALSE;
    }
  }
  if (import_host_memory (f, context, buffer, info, error))
    return TRUE;
  gst_clinfer_cl_frame_release (f);
  return FALSE;
}

void
gst_clinfer_cl_frame_release (GstClinferClFrame * f)
{
  gint i;

  /* The wrappers go before the mapping they point into. */
  for (i = 0; i < GST_VIDEO_MAX_PLANES; i++)
    g_clear_pointer (&f->tensors[i], clinfer_remote_tensor_unref);
  if (f->wrapped)
    gst_video_frame_unmap (&f->frame);
  f->wrapped = FALSE;
  f->n_planes = 0;
}
