/* Pre-processing from a video frame to a model input tensor: the geometry
 * shared with the decoders, and a small interface with one implementation
 * per device (CPU today; an OpenCL kernel reading the frame as a remote
 * tensor plugs in behind the same calls).
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

/* One implementation (device). @run fills @input, a tensor of the model
 * input's type and shape, from @frame; it runs on the streaming thread and
 * must not allocate. */
typedef struct
{
  const gchar *name;
  gboolean (*run) (GstClinferPreprocess * pp, const GstVideoFrame * frame,
      ClinferTensor * input, GError ** error);
  void (*free) (GstClinferPreprocess * pp);
} GstClinferPreprocessFuncs;

struct _GstClinferPreprocess
{
  const GstClinferPreprocessFuncs *funcs;
  GstClinferPreprocessConfig config;
  GstClinferGeometry geometry;
};

/* Video formats every implementation reads. */
#define GST_CLINFER_PREPROCESS_FORMATS \
  "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR, NV12, I420, GRAY8 }"

/* (transfer full) Picks the implementation for @device (the compiled
 * model's device name) and prepares its tables. */
GstClinferPreprocess *gst_clinfer_preprocess_new (const gchar * device,
    const GstClinferPreprocessConfig * config, GError ** error);
gboolean gst_clinfer_preprocess_run (GstClinferPreprocess * pp,
    const GstVideoFrame * frame, ClinferTensor * input, GError ** error);
void gst_clinfer_preprocess_free (GstClinferPreprocess * pp);

/* The CPU implementation (gstclinferpreprocesscpu.c). */
GstClinferPreprocess *gst_clinfer_preprocess_cpu_new (const GstClinferPreprocessConfig * config,
    GError ** error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstClinferPreprocess, gst_clinfer_preprocess_free)

G_END_DECLS
