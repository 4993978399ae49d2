/* Pre-processing from a video frame to a model input tensor: the geometry
 * shared with the decoders, and a small interface with one implementation
 * per device (a threaded CPU path; on OpenCL devices one kernel reading
 * the frame as a remote tensor).
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/video/video.h>
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/**
 * GstClinferResizeMethod:
 * @GST_CLINFER_RESIZE_STRETCH: scale the whole frame to the model size,
 *   ignoring the aspect ratio
 * @GST_CLINFER_RESIZE_LETTERBOX: scale the whole frame keeping its aspect
 *   ratio, centred, and pad the rest with black
 * @GST_CLINFER_RESIZE_CROP: scale keeping the aspect ratio so the model
 *   input is filled, cutting the frame's centre out
 */
typedef enum
{
  GST_CLINFER_RESIZE_STRETCH,
  GST_CLINFER_RESIZE_LETTERBOX,
  GST_CLINFER_RESIZE_CROP,
} GstClinferResizeMethod;

typedef enum
{
  GST_CLINFER_LAYOUT_NCHW,
  GST_CLINFER_LAYOUT_NHWC,
} GstClinferLayout;

/* Where the frame lands in the model input. The rectangle (src_x, src_y,
 * src_w, src_h) of the frame, in frame pixels, is scaled onto the rectangle
 * (dst_x, dst_y, dst_w, dst_h) of the model input, in model pixels; model
 * pixels outside it are padding (letterbox). */
typedef struct
{
  gint frame_width, frame_height;
  gint model_width, model_height;
  gdouble src_x, src_y, src_w, src_h;
  gint dst_x, dst_y, dst_w, dst_h;
} GstClinferGeometry;

void gst_clinfer_geometry_init (GstClinferGeometry * geometry,
    gint frame_width, gint frame_height, gint model_width, gint model_height,
    GstClinferResizeMethod method);
/* Maps a point in model pixels (0..model_width, continuous) to frame
 * pixels, undoing the letterbox or crop. */
void gst_clinfer_geometry_model_to_frame (const GstClinferGeometry * geometry,
    gdouble mx, gdouble my, gdouble * fx, gdouble * fy);

/* What the model input wants, worked out from the model's input port, the
 * element's properties and the negotiated caps. */
typedef struct
{
  GstVideoInfo vinfo;
  GstClinferResizeMethod resize_method;
  GstClinferLayout layout;
  ClinferElementType type;      /* F32, F16 or U8 */
  gint width, height, channels; /* model input; channels 1 or 3 */
  gfloat mean[3], scale[3];     /* per model channel */
  gboolean reverse_channels;    /* model channel 0 is blue */
  gint n_threads;               /* 0: OpenMP's default */
} GstClinferPreprocessConfig;

typedef struct _GstClinferPreprocess GstClinferPreprocess;

/* One implementation (device). @bind creates the model input tensor the
 * implementation writes (a host tensor on the CPU, a remote tensor in the
 * compiled model's OpenCL context on the GPU) and binds it as input
 * @index of @request. @run fills it from @buffer, a frame of
 * config.vinfo; it runs on the streaming thread and must not allocate
 * beyond what a zero-copy import of the frame needs. */
typedef struct
{
  const gchar *name;
  gboolean (*bind) (GstClinferPreprocess * pp, ClinferRequest * request,
      guint index, GError ** error);
  gboolean (*run) (GstClinferPreprocess * pp, GstBuffer * buffer,
      GError ** error);
  void (*free) (GstClinferPreprocess * pp);
  /* Optional: the last run's work is over; what it kept of the frame
   * (a mapping, wrappers) may go. NULL when run keeps nothing. */
  void (*done) (GstClinferPreprocess * pp);
} GstClinferPreprocessFuncs;

struct _GstClinferPreprocess
{
  const GstClinferPreprocessFuncs *funcs;
  GstClinferPreprocessConfig config;
  GstClinferGeometry geometry;
  /* Frame bytes the last run copied to reach the device (0 when the
   * frame was read in place). */
  guint64 bytes_copied;
};

/* Video formats every implementation reads. */
#define GST_CLINFER_PREPROCESS_FORMATS \
  "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR, NV12, I420, GRAY8 }"

/* (transfer full) Picks the implementation for the device @compiled runs
 * on (the OpenCL kernel when its remote context is an OpenCL one, else the
 * CPU path) and prepares its tables. */
GstClinferPreprocess *gst_clinfer_preprocess_new (ClinferCompiled * compiled,
    const GstClinferPreprocessConfig * config, GError ** error);
gboolean gst_clinfer_preprocess_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error);
gboolean gst_clinfer_preprocess_run (GstClinferPreprocess * pp,
    GstBuffer * buffer, GError ** error);
/* Ends the last run: call it once the inference that reads the
 * pre-processed input has finished (the OpenCL implementation only
 * queues its kernel and keeps the frame mapped until then, so a frame
 * costs one wait, the inference's). A later run, and free, end a run
 * that was not ended. */
void gst_clinfer_preprocess_done (GstClinferPreprocess * pp);
void gst_clinfer_preprocess_free (GstClinferPreprocess * pp);

/* The CPU implementation (gstclinferpreprocesscpu.c). */
GstClinferPreprocess *gst_clinfer_preprocess_cpu_new (const GstClinferPreprocessConfig * config,
    GError ** error);
/* The OpenCL implementation (gstclinferpreprocessocl.c; NULL with an
 * error when the plugin was built without OpenCL). */
GstClinferPreprocess *gst_clinfer_preprocess_ocl_new (ClinferRemoteContext * context,
    const GstClinferPreprocessConfig * config, GError ** error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstClinferPreprocess, gst_clinfer_preprocess_free)

G_END_DECLS
