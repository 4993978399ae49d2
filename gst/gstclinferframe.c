/* Video frames as the engine's pre-processing reads them (see
 * gstclinferframe.h).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferframe.h"
#ifdef GST_CLINFER_HAVE_OPENCL
#include "gstclinferclmemory.h"
#endif

#include <string.h>

gboolean
gst_clinfer_frame_info_from_video_info (ClinferFrameInfo * fi,
    const GstVideoInfo * vinfo, GError ** error)
{
  static const struct
  {
    GstVideoFormat gst;
    ClinferPixelFormat clinfer;
  } formats[] = {
    {GST_VIDEO_FORMAT_RGB, CLINFER_PIXEL_FORMAT_RGB},
    {GST_VIDEO_FORMAT_BGR, CLINFER_PIXEL_FORMAT_BGR},
    {GST_VIDEO_FORMAT_RGBx, CLINFER_PIXEL_FORMAT_RGBX},
    {GST_VIDEO_FORMAT_BGRx, CLINFER_PIXEL_FORMAT_BGRX},
    {GST_VIDEO_FORMAT_xRGB, CLINFER_PIXEL_FORMAT_XRGB},
    {GST_VIDEO_FORMAT_xBGR, CLINFER_PIXEL_FORMAT_XBGR},
    {GST_VIDEO_FORMAT_RGBA, CLINFER_PIXEL_FORMAT_RGBA},
    {GST_VIDEO_FORMAT_BGRA, CLINFER_PIXEL_FORMAT_BGRA},
    {GST_VIDEO_FORMAT_ARGB, CLINFER_PIXEL_FORMAT_ARGB},
    {GST_VIDEO_FORMAT_ABGR, CLINFER_PIXEL_FORMAT_ABGR},
    {GST_VIDEO_FORMAT_GRAY8, CLINFER_PIXEL_FORMAT_GRAY8},
    {GST_VIDEO_FORMAT_NV12, CLINFER_PIXEL_FORMAT_NV12},
    {GST_VIDEO_FORMAT_I420, CLINFER_PIXEL_FORMAT_I420},
  };
  const GstVideoColorimetry *cm = &GST_VIDEO_INFO_COLORIMETRY (vinfo);
  guint i;

  memset (fi, 0, sizeof (*fi));
  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].gst == GST_VIDEO_INFO_FORMAT (vinfo))
      break;
  if (i == G_N_ELEMENTS (formats)) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
        "video format %s is not supported by the pre-processing (expected "
        "one of %s)", gst_video_format_to_string (GST_VIDEO_INFO_FORMAT
            (vinfo)), GST_CLINFER_PREPROCESS_FORMATS);
    return FALSE;
  }
  fi->format = formats[i].clinfer;
  fi->width = GST_VIDEO_INFO_WIDTH (vinfo);
  fi->height = GST_VIDEO_INFO_HEIGHT (vinfo);
  /* RGB or unknown matrix on a YUV frame: BT.601, as videoconvert does. */
  switch (cm->matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
      fi->matrix = CLINFER_COLOR_MATRIX_BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      fi->matrix = CLINFER_COLOR_MATRIX_BT2020;
      break;
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      fi->matrix = CLINFER_COLOR_MATRIX_SMPTE240M;
      break;
    case GST_VIDEO_COLOR_MATRIX_FCC:
      fi->matrix = CLINFER_COLOR_MATRIX_FCC;
      break;
    default:
      fi->matrix = CLINFER_COLOR_MATRIX_BT601;
      break;
  }
  fi->full_range = cm->range == GST_VIDEO_COLOR_RANGE_0_255;
  return TRUE;
}

#ifdef GST_CLINFER_HAVE_OPENCL
/* The buffer is one memory of the element's allocator in @context's
 * cl_context: its cl_mem is read in place. FALSE without an error when
 * it is not. */
static gboolean
import_cl_memory (GstClinferMappedFrame * f, ClinferRemoteContext * context,
    GstBuffer * buffer, const GstVideoInfo * info, GError ** error)
{
  GVariant *ctx = clinfer_remote_context_get_property (context,
      CLINFER_REMOTE_PROP_OCL_CONTEXT);
  GstMemory *mem;
  GstClinferClMemory *clm;
  GstVideoMeta *vmeta;
  ClinferShape shape = { 1, {0} };
  guint i;

  if (ctx == NULL || gst_buffer_n_memory (buffer) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  clm = (GstClinferClMemory *) mem;
  if (!gst_memory_is_type (mem, GST_CLINFER_CL_MEMORY_TYPE)
      || (guintptr) clm->context != (guintptr) g_variant_get_uint64 (ctx))
    return FALSE;
  vmeta = gst_buffer_get_video_meta (buffer);
  shape.dims[0] = (int64_t) mem->maxsize;
  f->remote = clinfer_remote_tensor_new_from_cl_mem (context,
      CLINFER_TYPE_U8, &shape, NULL, clm->mem, error);
  if (f->remote == NULL)
    return FALSE;
  for (i = 0; i < GST_VIDEO_INFO_N_PLANES (info)
      && i < CLINFER_FRAME_MAX_PLANES; i++) {
    f->frame.remote[i] = f->remote;
    f->frame.offset[i] = mem->offset + (vmeta ? vmeta->offset[i]
        : GST_VIDEO_INFO_PLANE_OFFSET (info, i));
    f->frame.stride[i] = vmeta ? vmeta->stride[i]
        : GST_VIDEO_INFO_PLANE_STRIDE (info, i);
  }
  return TRUE;
}
#endif

gboolean
gst_clinfer_frame_map (GstClinferMappedFrame * f,
    ClinferRemoteContext * context, GstBuffer * buffer,
    const GstVideoInfo * info, GError ** error)
{
  guint i;

  memset (f, 0, sizeof (*f));
#ifdef GST_CLINFER_HAVE_OPENCL
  if (context != NULL) {
    if (import_cl_memory (f, context, buffer, info, error))
      return TRUE;
    if (error != NULL && *error != NULL)
      return FALSE;
  }
#endif
  if (!gst_video_frame_map (&f->vframe, info, buffer, GST_MAP_READ)) {
    g_set_error (error, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        "could not map the video frame for reading");
    return FALSE;
  }
  f->mapped = TRUE;
  for (i = 0; i < GST_VIDEO_FRAME_N_PLANES (&f->vframe)
      && i < CLINFER_FRAME_MAX_PLANES; i++) {
    f->frame.data[i] = GST_VIDEO_FRAME_PLANE_DATA (&f->vframe, i);
    f->frame.stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE (&f->vframe, i);
  }
  return TRUE;
}

void
gst_clinfer_frame_unmap (GstClinferMappedFrame * f)
{
  g_clear_pointer (&f->remote, clinfer_remote_tensor_unref);
  if (f->mapped)
    gst_video_frame_unmap (&f->vframe);
  f->mapped = FALSE;
}

gboolean
gst_clinfer_frame_crop (const GstClinferMappedFrame * f,
    const GstVideoInfo * info, const ClinferFrameInfo * frame_info,
    gint * x, gint * y, gint * w, gint * h, ClinferFrameInfo * crop_info,
    ClinferFrame * crop)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  gint width = GST_VIDEO_INFO_WIDTH (info);
  gint height = GST_VIDEO_INFO_HEIGHT (info);
  gint64 x0 = *x, y0 = *y, x1 = (gint64) * x + *w, y1 = (gint64) * y + *h;
  guint p, c;

  x0 = CLAMP (x0, 0, width);
  y0 = CLAMP (y0, 0, height);
  x1 = CLAMP (x1, 0, width);
  y1 = CLAMP (y1, 0, height);
  if (GST_VIDEO_FORMAT_INFO_IS_YUV (finfo)
      && GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo) > 1) {
    /* 4:2:0: a chroma sample covers 2x2 pixels; the crop starts and ends
     * on one's edge (the frame's last odd pixel may end it). */
    x0 &= ~(gint64) 1;
    y0 &= ~(gint64) 1;
    x1 = MIN (x1 + (x1 & 1), width);
    y1 = MIN (y1 + (y1 & 1), height);
  }
  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  *x = (gint) x0;
  *y = (gint) y0;
  *w = (gint) (x1 - x0);
  *h = (gint) (y1 - y0);

  *crop_info = *frame_info;
  crop_info->width = *w;
  crop_info->height = *h;
  *crop = f->frame;
  for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gsize skip = 0;

    /* The plane's first component says how its pixels are laid out. */
    for (c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
      if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != p)
        continue;
      skip = (gsize) GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, c, *y)
          * f->frame.stride[p]
          + (gsize) GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, c, *x)
          * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
      break;
    }
    if (crop->data[p] != NULL)
      crop->data[p] += skip;
    else
      crop->offset[p] += skip;
  }
  return TRUE;
}
