/* Pre-processing: geometry of the resize methods and the choice of the
 * implementation for a device.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinferpreprocess.h"

#include <math.h>

void
gst_clinfer_geometry_init (GstClinferGeometry * g, gint frame_width,
    gint frame_height, gint model_width, gint model_height,
    GstClinferResizeMethod method)
{
  gdouble sx = (gdouble) model_width / frame_width;
  gdouble sy = (gdouble) model_height / frame_height;
  gdouble s;

  g->frame_width = frame_width;
  g->frame_height = frame_height;
  g->model_width = model_width;
  g->model_height = model_height;
  g->src_x = g->src_y = 0;
  g->src_w = frame_width;
  g->src_h = frame_height;
  g->dst_x = g->dst_y = 0;
  g->dst_w = model_width;
  g->dst_h = model_height;

  switch (method) {
    case GST_CLINFER_RESIZE_LETTERBOX:
      /* Whole pixels of padding, so the picture starts on a pixel edge. */
      s = MIN (sx, sy);
      g->dst_w = CLAMP ((gint) lround (frame_width * s), 1, model_width);
      g->dst_h = CLAMP ((gint) lround (frame_height * s), 1, model_height);
      g->dst_x = (model_width - g->dst_w) / 2;
      g->dst_y = (model_height - g->dst_h) / 2;
      break;
    case GST_CLINFER_RESIZE_CROP:
      s = MAX (sx, sy);
      g->src_w = MIN (model_width / s, (gdouble) frame_width);
      g->src_h = MIN (model_height / s, (gdouble) frame_height);
      g->src_x = (frame_width - g->src_w) / 2;
      g->src_y = (frame_height - g->src_h) / 2;
      break;
    case GST_CLINFER_RESIZE_STRETCH:
    default:
      break;
  }
}

void
gst_clinfer_geometry_model_to_frame (const GstClinferGeometry * g,
    gdouble mx, gdouble my, gdouble * fx, gdouble * fy)
{
  *fx = g->src_x + (mx - g->dst_x) * g->src_w / g->dst_w;
  *fy = g->src_y + (my - g->dst_y) * g->src_h / g->dst_h;
}

GstClinferPreprocess *
gst_clinfer_preprocess_new (ClinferCompiled * compiled,
    const GstClinferPreprocessConfig * config, GError ** error)
{
  ClinferRemoteContext *context = clinfer_compiled_get_remote_context
      (compiled);

  if (context != NULL && clinfer_remote_context_get_property (context,
          CLINFER_REMOTE_PROP_OCL_CONTEXT) != NULL)
    return gst_clinfer_preprocess_ocl_new (context, config, error);
  return gst_clinfer_preprocess_cpu_new (config, error);
}

gboolean
gst_clinfer_preprocess_bind (GstClinferPreprocess * pp,
    ClinferRequest * request, guint index, GError ** error)
{
  return pp->funcs->bind (pp, request, index, error);
}

gboolean
gst_clinfer_preprocess_run (GstClinferPreprocess * pp, GstBuffer * buffer,
    GError ** error)
{
  return pp->funcs->run (pp, buffer, error);
}

void
gst_clinfer_preprocess_done (GstClinferPreprocess * pp)
{
  if (pp != NULL && pp->funcs->done != NULL)
    pp->funcs->done (pp);
}

void
gst_clinfer_preprocess_free (GstClinferPreprocess * pp)
{
  if (pp != NULL)
    pp->funcs->free (pp);
}

#ifndef GST_CLINFER_HAVE_OPENCL
GstClinferPreprocess *
gst_clinfer_preprocess_ocl_new (ClinferRemoteContext * context,
    const GstClinferPreprocessConfig * config, GError ** error)
{
  g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_NEGOTIATION,
      "the clinfer plugin was built without OpenCL: no pre-processing for "
      "device %s", clinfer_remote_context_get_device_name (context));
  return NULL;
}
#endif
