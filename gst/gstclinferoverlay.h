/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinferoverlay.h: draws regions of interest on video frames
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>

G_BEGIN_DECLS

#define GST_TYPE_CLINFER_OVERLAY (gst_clinfer_overlay_get_type ())
G_DECLARE_FINAL_TYPE (GstClinferOverlay, gst_clinfer_overlay, GST,
    CLINFER_OVERLAY, GstVideoFilter)

struct _GstClinferOverlay
{
  GstVideoFilter parent;

  /* Properties, under the object lock. */
  guint line_width;
  guint box_color;
  gboolean draw_labels;
  gboolean draw_keypoints;
  gdouble font_size;
};

GST_ELEMENT_REGISTER_DECLARE (clinferoverlay);

G_END_DECLS
