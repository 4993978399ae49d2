/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfertrack.h: gives regions of interest stable object ids across
 * frames
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_TYPE_CLINFER_TRACK (gst_clinfer_track_get_type ())
G_DECLARE_FINAL_TYPE (GstClinferTrack, gst_clinfer_track, GST, CLINFER_TRACK,
    GstBaseTransform)

/* One object followed from frame to frame. */
typedef struct
{
  gint object_id;
  GQuark roi_type;
  gdouble x0, y0, x1, y1;       /* where it was last seen */
  guint missed;                 /* frames since then */
} GstClinferTrackObject;

struct _GstClinferTrack
{
  GstBaseTransform parent;

  /* Properties, under the object lock. */
  guint max_age;
  gfloat iou_threshold;
  gchar *object_class;

  /* Streaming state. */
  GArray *objects;              /* GstClinferTrackObject */
  gint next_id;
};

GST_ELEMENT_REGISTER_DECLARE (clinfertrack);

G_END_DECLS
