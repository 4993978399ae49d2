/* Video frames as the engine's pre-processing reads them
 * (clinfer/preprocess.h): the negotiated GstVideoInfo as a
 * ClinferFrameInfo, and a buffer as a ClinferFrame without a copy — the
 * element's own OpenCL memory as remote tensors of the compiled model's
 * context, any other memory mapped for reading (the engine wraps it on
 * OpenCL devices).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/* Video formats the pre-processing reads. */
#define GST_CLINFER_PREPROCESS_FORMATS \
  "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR, NV12, I420, GRAY8 }"

/* FALSE (with @error) for a format outside GST_CLINFER_PREPROCESS_FORMATS. */
gboolean gst_clinfer_frame_info_from_video_info (ClinferFrameInfo * frame_info,
    const GstVideoInfo * vinfo, GError ** error);

/* One frame handed to the pre-processing: @frame, and what keeps its
 * memory valid until gst_clinfer_frame_unmap(). */
typedef struct
{
  ClinferFrame frame;
  GstVideoFrame vframe;
  gboolean mapped;              /* @vframe is mapped */
  ClinferRemoteTensor *remote;  /* the element's OpenCL memory, or NULL */
} GstClinferMappedFrame;

/* Fills @f from @buffer (video of @info). With @context (the compiled
 * model's, on an OpenCL device), memory of the element's allocator in
 * that context becomes a remote tensor read in place; everything else is
 * mapped for reading. */
gboolean gst_clinfer_frame_map (GstClinferMappedFrame * f,
    ClinferRemoteContext * context, GstBuffer * buffer,
    const GstVideoInfo * info, GError ** error);
void gst_clinfer_frame_unmap (GstClinferMappedFrame * f);

/* The rectangle (*@x, *@y, *@w, *@h) of @f (video of @info), clipped to
 * the frame and, for chroma-subsampled formats, widened to even
 * coordinates: *@crop_info and *@crop describe it as a frame of its own
 * over @f's memory (no copy; valid while @f is mapped). FALSE when
 * nothing of it lies inside the frame. */
gboolean gst_clinfer_frame_crop (const GstClinferMappedFrame * f,
    const GstVideoInfo * info, const ClinferFrameInfo * frame_info,
    gint * x, gint * y, gint * w, gint * h, ClinferFrameInfo * crop_info,
    ClinferFrame * crop);

G_END_DECLS
