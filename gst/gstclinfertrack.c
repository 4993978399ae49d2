/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfertrack.c: gives regions of interest stable object ids across
 * frames
 */

/**
 * SECTION:element-clinfertrack
 * @title: clinfertrack
 *
 * Follows the #GstVideoRegionOfInterestMeta of a stream from frame to
 * frame and gives each an `object_id` that stays the same while it is the
 * same object: a region is matched to the object of its type it overlaps
 * most (intersection over union at least #GstClinferTrack:iou-threshold,
 * best pairs first), an object unmatched for more than
 * #GstClinferTrack:max-age frames is forgotten, and a region matching
 * none starts a new object. The id goes into a "tracking" parameter
 * structure of the region (field `object_id`, int), and into its
 * "detection" structure when it has one; the region's own `id` is left
 * alone. Pixels pass untouched.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! \
 *     clinfer model=yolov8n.onnx decoder=yolo resize-method=letterbox labels-file=coco.txt ! \
 *     clinfertrack object-class=person max-age=15 ! clinferoverlay ! videoconvert ! autovideosink
 * ]| Detects people and numbers them.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinfertrack.h"
#include "decoders/gstclinferdecoder.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_clinfer_track_debug);
#define GST_CAT_DEFAULT gst_clinfer_track_debug

enum
{
  PROP_0,
  PROP_MAX_AGE,
  PROP_IOU_THRESHOLD,
  PROP_OBJECT_CLASS,
};

#define DEFAULT_PROP_MAX_AGE 5
#define DEFAULT_PROP_IOU_THRESHOLD 0.3f
#define DEFAULT_PROP_OBJECT_CLASS NULL

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));

#define gst_clinfer_track_parent_class parent_class
G_DEFINE_TYPE (GstClinferTrack, gst_clinfer_track, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (clinfertrack, "clinfertrack", GST_RANK_NONE,
    GST_TYPE_CLINFER_TRACK);

static void gst_clinfer_track_finalize (GObject * object);
static void gst_clinfer_track_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_clinfer_track_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static gboolean gst_clinfer_track_start (GstBaseTransform * trans);
static gboolean gst_clinfer_track_stop (GstBaseTransform * trans);
static gboolean gst_clinfer_track_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static GstFlowReturn gst_clinfer_track_transform_ip (GstBaseTransform * trans,
    GstBuffer * buf);

static void
gst_clinfer_track_class_init (GstClinferTrackClass * klass)
{
  GObjectClass *gobject_class = (GObjectClass *) klass;
  GstElementClass *element_class = (GstElementClass *) klass;
  GstBaseTransformClass *trans_class = (GstBaseTransformClass *) klass;

  GST_DEBUG_CATEGORY_INIT (gst_clinfer_track_debug, "clinfertrack", 0,
      "clinfer region tracker");

  gobject_class->finalize = gst_clinfer_track_finalize;
  gobject_class->set_property = gst_clinfer_track_set_property;
  gobject_class->get_property = gst_clinfer_track_get_property;

  g_object_class_install_property (gobject_class, PROP_MAX_AGE,
      g_param_spec_uint ("max-age", "Maximum age",
          "Frames an object may go unseen (occluded, missed by the "
          "detector) and keep its id; after more it is forgotten", 0, 100000,
          DEFAULT_PROP_MAX_AGE,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_float ("iou-threshold", "IoU threshold",
          "Least intersection over union of a region with where an object "
          "was last seen for the region to be that object", 0.0f, 1.0f,
          DEFAULT_PROP_IOU_THRESHOLD,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_OBJECT_CLASS,
      g_param_spec_string ("object-class", "Object class",
          "Only regions of these types (comma-separated, e.g. "
          "\"person,car\"); NULL or empty: every region",
          DEFAULT_PROP_OBJECT_CLASS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "clinfer region tracker", "Filter/Analyzer/Video",
      "Gives regions of interest an object id that stays the same from "
      "frame to frame while they overlap (IoU matching, gaps of max-age "
      "frames)", "clinfer authors <clinfer@example.org>");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_clinfer_track_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_clinfer_track_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_clinfer_track_sink_event);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_clinfer_track_transform_ip);
}

static void
gst_clinfer_track_init (GstClinferTrack * self)
{
  self->max_age = DEFAULT_PROP_MAX_AGE;
  self->iou_threshold = DEFAULT_PROP_IOU_THRESHOLD;
  self->objects = g_array_new (FALSE, FALSE, sizeof (GstClinferTrackObject));
  self->next_id = 1;
  /* In place; buffers are made writable for the metadata only. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_clinfer_track_finalize (GObject * object)
{
  GstClinferTrack *self = GST_CLINFER_TRACK (object);

  g_array_unref (self->objects);
  g_free (self->object_class);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_clinfer_track_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstClinferTrack *self = GST_CLINFER_TRACK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MAX_AGE:
      self->max_age = g_value_get_uint (value);
      break;
    case PROP_IOU_THRESHOLD:
      self->iou_threshold = g_value_get_float (value);
      break;
    case PROP_OBJECT_CLASS:
      g_free (self->object_class);
      self->object_class = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_clinfer_track_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstClinferTrack *self = GST_CLINFER_TRACK (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MAX_AGE:
      g_value_set_uint (value, self->max_age);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_float (value, self->iou_threshold);
      break;
    case PROP_OBJECT_CLASS:
      g_value_set_string (value, self->object_class);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* Forgets every object: a new stream, a seek. */
static void
reset (GstClinferTrack * self)
{
  g_array_set_size (self->objects, 0);
  self->next_id = 1;
}

static gboolean
gst_clinfer_track_start (GstBaseTransform * trans)
{
  reset (GST_CLINFER_TRACK (trans));
  return TRUE;
}

static gboolean
gst_clinfer_track_stop (GstBaseTransform * trans)
{
  reset (GST_CLINFER_TRACK (trans));
  return TRUE;
}

static gboolean
gst_clinfer_track_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstClinferTrack *self = GST_CLINFER_TRACK (trans);

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP
      || GST_EVENT_TYPE (event) == GST_EVENT_STREAM_START)
    reset (self);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* A candidate pairing of region @r with object @o. */
typedef struct
{
  gdouble iou;
  guint r, o;
} Pair;

static gint
compare_pairs (gconstpointer a, gconstpointer b)
{
  const Pair *x = a, *y = b;

  if (x->iou != y->iou)
    return x->iou < y->iou ? 1 : -1;
  /* Ties: older objects (lower ids) and earlier regions first, so the
   * result does not depend on the sort. */
  if (x->o != y->o)
    return x->o < y->o ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

/* Puts @object_id into @roi's "tracking" structure, and its "detection"
 * one when there is one. */
static void
set_object_id (GstVideoRegionOfInterestMeta * roi, gint object_id)
{
  GstStructure *s = gst_video_region_of_interest_meta_get_param (roi,
      "tracking");

  if (s == NULL)
    gst_video_region_of_interest_meta_add_param (roi,
        gst_structure_new ("tracking", "object_id", G_TYPE_INT, object_id,
            NULL));
  else
    gst_structure_set (s, "object_id", G_TYPE_INT, object_id, NULL);
  s = gst_video_region_of_interest_meta_get_param (roi, "detection");
  if (s != NULL)
    gst_structure_set (s, "object_id", G_TYPE_INT, object_id, NULL);
}

static GstFlowReturn
gst_clinfer_track_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstClinferTrack *self = GST_CLINFER_TRACK (trans);
  g_autoptr (GPtrArray) rois = g_ptr_array_new ();
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (Pair));
  g_autofree gint *object_of = NULL;
  g_autofree gboolean *seen = NULL;
  g_auto (GStrv) classes = NULL;
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  gfloat iou_threshold;
  guint max_age, r, o, i, n_objects;

  GST_OBJECT_LOCK (self);
  max_age = self->max_age;
  iou_threshold = self->iou_threshold;
  if (self->object_class != NULL && *self->object_class != '\0')
    classes = g_strsplit (self->object_class, ",", -1);
  GST_OBJECT_UNLOCK (self);

  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    if (gst_clinfer_roi_type_wanted (roi, classes))
      g_ptr_array_add (rois, roi);
  }

  /* Every overlapping (region, object of its type) pair, best first;
   * each region and object taken once. */
  n_objects = self->objects->len;
  for (r = 0; r < rois->len; r++) {
    GstVideoRegionOfInterestMeta *m = g_ptr_array_index (rois, r);

    for (o = 0; o < n_objects; o++) {
      GstClinferTrackObject *obj = &g_array_index (self->objects,
          GstClinferTrackObject, o);
      Pair p;

      if (obj->roi_type != m->roi_type)
        continue;
      p.iou = gst_clinfer_box_iou (m->x, m->y, (gdouble) m->x + m->w,
          (gdouble) m->y + m->h, obj->x0, obj->y0, obj->x1, obj->y1);
      p.r = r;
      p.o = o;
      if (p.iou > 0 && p.iou >= iou_threshold)
        g_array_append_val (pairs, p);
    }
  }
  g_array_sort (pairs, compare_pairs);
  object_of = g_new (gint, MAX (rois->len, 1));
  seen = g_new0 (gboolean, MAX (n_objects, 1));
  for (r = 0; r < rois->len; r++)
    object_of[r] = -1;
  for (i = 0; i < pairs->len; i++) {
    Pair *p = &g_array_index (pairs, Pair, i);

    if (object_of[p->r] < 0 && !seen[p->o]) {
      object_of[p->r] = (gint) p->o;
      seen[p->o] = TRUE;
    }
  }

  /* Matched objects move; new regions start objects. */
  for (r = 0; r < rois->len; r++) {
    GstVideoRegionOfInterestMeta *m = g_ptr_array_index (rois, r);
    GstClinferTrackObject *obj, fresh;

    if (object_of[r] >= 0) {
      obj = &g_array_index (self->objects, GstClinferTrackObject,
          object_of[r]);
    } else {
      fresh.object_id = self->next_id;
      self->next_id = self->next_id == G_MAXINT ? 1 : self->next_id + 1;
      fresh.roi_type = m->roi_type;
      g_array_append_val (self->objects, fresh);
      obj = &g_array_index (self->objects, GstClinferTrackObject,
          self->objects->len - 1);
      GST_LOG_OBJECT (self, "new object %d (%s)", obj->object_id,
          g_quark_to_string (m->roi_type));
    }
    obj->x0 = m->x;
    obj->y0 = m->y;
    obj->x1 = (gdouble) m->x + m->w;
    obj->y1 = (gdouble) m->y + m->h;
    obj->missed = 0;
    set_object_id (m, obj->object_id);
  }
  /* Objects not seen age, and go after max-age frames. */
  for (o = n_objects; o-- > 0;) {
    GstClinferTrackObject *obj = &g_array_index (self->objects,
        GstClinferTrackObject, o);

    if (seen[o])
      continue;
    if (++obj->missed > max_age) {
      GST_LOG_OBJECT (self, "object %d gone", obj->object_id);
      g_array_remove_index (self->objects, o);
    }
  }
  return GST_FLOW_OK;
}
