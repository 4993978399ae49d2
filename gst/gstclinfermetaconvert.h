/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfermetaconvert.h: a frame's results as one JSON object, posted
 * on the bus and/or appended to a file
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <stdio.h>

G_BEGIN_DECLS

#define GST_TYPE_CLINFER_META_CONVERT (gst_clinfer_meta_convert_get_type ())
G_DECLARE_FINAL_TYPE (GstClinferMetaConvert, gst_clinfer_meta_convert, GST,
    CLINFER_META_CONVERT, GstBaseTransform)

struct _GstClinferMetaConvert
{
  GstBaseTransform parent;

  /* Properties, under the object lock. */
  gchar *location;
  gboolean post_messages;
  gboolean include_tensors;

  /* Streaming state. */
  FILE *file;
  GstVideoInfo vinfo;
  gboolean have_info;
  guint64 frame_count;
};

GST_ELEMENT_REGISTER_DECLARE (clinfermetaconvert);

G_END_DECLS
