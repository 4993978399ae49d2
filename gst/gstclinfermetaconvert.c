/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfermetaconvert.c: a frame's results as one JSON object, posted
 * on the bus and/or appended to a file
 */

/**
 * SECTION:element-clinfermetaconvert
 * @title: clinfermetaconvert
 *
 * Writes what the clinfer elements found in each frame as one JSON
 * object: the frame's number, timestamp and size, every
 * #GstVideoRegionOfInterestMeta (box, type, label, confidence, object id,
 * text, key points, classifications) and, with
 * #GstClinferMetaConvert:include-tensors, the output tensors. The object
 * goes into an element message named "clinfer-json" (field `json`) and/or
 * as one line onto #GstClinferMetaConvert:location (JSON Lines). The
 * format is docs/clinfer-json.schema.json. Pixels pass untouched.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=street.mp4 ! decodebin ! videoconvert ! \
 *     clinfer model=yolov8n.onnx decoder=yolo resize-method=letterbox ! clinfertrack ! \
 *     clinfermetaconvert location=results.jsonl post-messages=false ! fakesink
 * ]|
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinfermetaconvert.h"
#include "clinfer/clinfer-tensor-meta.h"

#include <errno.h>
#include <math.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_clinfer_meta_convert_debug);
#define GST_CAT_DEFAULT gst_clinfer_meta_convert_debug

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_POST_MESSAGES,
  PROP_INCLUDE_TENSORS,
};

#define DEFAULT_PROP_LOCATION NULL
#define DEFAULT_PROP_POST_MESSAGES TRUE
#define DEFAULT_PROP_INCLUDE_TENSORS FALSE

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));

#define gst_clinfer_meta_convert_parent_class parent_class
G_DEFINE_TYPE (GstClinferMetaConvert, gst_clinfer_meta_convert,
    GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (clinfermetaconvert, "clinfermetaconvert",
    GST_RANK_NONE, GST_TYPE_CLINFER_META_CONVERT);

static void gst_clinfer_meta_convert_finalize (GObject * object);
static void gst_clinfer_meta_convert_set_property (GObject * object,
    guint prop_id, const GValue * value, GParamSpec * pspec);
static void gst_clinfer_meta_convert_get_property (GObject * object,
    guint prop_id, GValue * value, GParamSpec * pspec);
static gboolean gst_clinfer_meta_convert_start (GstBaseTransform * trans);
static gboolean gst_clinfer_meta_convert_stop (GstBaseTransform * trans);
static gboolean gst_clinfer_meta_convert_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static GstFlowReturn gst_clinfer_meta_convert_transform_ip (GstBaseTransform *
    trans, GstBuffer * buf);

static void
gst_clinfer_meta_convert_class_init (GstClinferMetaConvertClass * klass)
{
  GObjectClass *gobject_class = (GObjectClass *) klass;
  GstElementClass *element_class = (GstElementClass *) klass;
  GstBaseTransformClass *trans_class = (GstBaseTransformClass *) klass;

  GST_DEBUG_CATEGORY_INIT (gst_clinfer_meta_convert_debug,
      "clinfermetaconvert", 0, "clinfer results as JSON");

  gobject_class->finalize = gst_clinfer_meta_convert_finalize;
  gobject_class->set_property = gst_clinfer_meta_convert_set_property;
  gobject_class->get_property = gst_clinfer_meta_convert_get_property;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "File each frame's JSON object is appended to, one line each "
          "(JSON Lines); opened when the element starts. NULL: none",
          DEFAULT_PROP_LOCATION,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post each frame's JSON object on the bus as an element message "
          "\"clinfer-json\" (fields json, pts)", DEFAULT_PROP_POST_MESSAGES,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_INCLUDE_TENSORS,
      g_param_spec_boolean ("include-tensors", "Include tensors",
          "Add the output tensors (the frame's and the regions') with their "
          "values", DEFAULT_PROP_INCLUDE_TENSORS,
          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "clinfer results as JSON", "Filter/Analyzer/Video",
      "Writes each frame's regions of interest, labels, object ids, text "
      "and (optionally) tensors as one JSON object, on the bus and/or to a "
      "file", "clinfer authors <clinfer@example.org>");

  trans_class->start = GST_DEBUG_FUNCPTR (gst_clinfer_meta_convert_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_clinfer_meta_convert_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_clinfer_meta_convert_set_caps);
  trans_class->transform_ip =
      GST_DEBUG_FUNCPTR (gst_clinfer_meta_convert_transform_ip);
}

static void
gst_clinfer_meta_convert_init (GstClinferMetaConvert * self)
{
  self->post_messages = DEFAULT_PROP_POST_MESSAGES;
  self->include_tensors = DEFAULT_PROP_INCLUDE_TENSORS;
  /* Reads the metadata only: the buffer is not made writable. */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}

static void
gst_clinfer_meta_convert_finalize (GObject * object)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (object);

  g_free (self->location);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_clinfer_meta_convert_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_free (self->location);
      self->location = g_value_dup_string (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    case PROP_INCLUDE_TENSORS:
      self->include_tensors = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_clinfer_meta_convert_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, self->location);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_INCLUDE_TENSORS:
      g_value_set_boolean (value, self->include_tensors);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static gboolean
gst_clinfer_meta_convert_start (GstBaseTransform * trans)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (trans);
  g_autofree gchar *location = NULL;

  GST_OBJECT_LOCK (self);
  location = g_strdup (self->location);
  GST_OBJECT_UNLOCK (self);
  self->frame_count = 0;
  self->have_info = FALSE;
  if (location == NULL || *location == '\0')
    return TRUE;
  self->file = fopen (location, "a");
  if (self->file == NULL)
    goto open_failed;
  return TRUE;

  /* ERRORS */
open_failed:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
        ("Could not open \"%s\" (property 'location') for appending: %s",
            location, g_strerror (errno)), (NULL));
    return FALSE;
  }
}

static gboolean
gst_clinfer_meta_convert_stop (GstBaseTransform * trans)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (trans);

  if (self->file != NULL) {
    fclose (self->file);
    self->file = NULL;
  }
  return TRUE;
}

static gboolean
gst_clinfer_meta_convert_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (trans);

  /* Caps with features (memory:...) still give the size. */
  self->have_info = gst_video_info_from_caps (&self->vinfo, incaps);
  return TRUE;
}

/* A GValue of a parameter structure as JSON: numbers, strings, booleans
 * and arrays of them; anything else is left out (NULL). */
static JsonNode *
value_to_json (const GValue * v)
{
  JsonNode *node;
  guint i;

  if (G_VALUE_HOLDS_STRING (v)) {
    if (g_value_get_string (v) == NULL)
      return NULL;
    node = json_node_new (JSON_NODE_VALUE);
    json_node_set_string (node, g_value_get_string (v));
    return node;
  }
  if (G_VALUE_HOLDS_BOOLEAN (v)) {
    node = json_node_new (JSON_NODE_VALUE);
    json_node_set_boolean (node, g_value_get_boolean (v));
    return node;
  }
  if (GST_VALUE_HOLDS_ARRAY (v) || GST_VALUE_HOLDS_LIST (v)) {
    JsonArray *a = json_array_new ();
    guint n = GST_VALUE_HOLDS_ARRAY (v) ? gst_value_array_get_size (v)
        : gst_value_list_get_size (v);

    for (i = 0; i < n; i++) {
      JsonNode *e = value_to_json (GST_VALUE_HOLDS_ARRAY (v)
          ? gst_value_array_get_value (v, i) : gst_value_list_get_value (v,
              i));

      if (e != NULL)
        json_array_add_element (a, e);
    }
    node = json_node_new (JSON_NODE_ARRAY);
    json_node_take_array (node, a);
    return node;
  }
  if (G_VALUE_HOLDS_INT (v) || G_VALUE_HOLDS_UINT (v)
      || G_VALUE_HOLDS_INT64 (v) || G_VALUE_HOLDS_UINT64 (v)) {
    GValue i64 = G_VALUE_INIT;

    g_value_init (&i64, G_TYPE_INT64);
    if (!g_value_transform (v, &i64))
      return NULL;
    node = json_node_new (JSON_NODE_VALUE);
    json_node_set_int (node, g_value_get_int64 (&i64));
    return node;
  }
  if (G_VALUE_HOLDS_DOUBLE (v) || G_VALUE_HOLDS_FLOAT (v)) {
    gdouble d = G_VALUE_HOLDS_DOUBLE (v) ? g_value_get_double (v)
        : g_value_get_float (v);

    /* JSON has no NaN or infinity. */
    if (!isfinite (d))
      return json_node_new (JSON_NODE_NULL);
    node = json_node_new (JSON_NODE_VALUE);
    json_node_set_double (node, d);
    return node;
  }
  return NULL;
}

/* A tensor as {model, name, type, dims, data}. */
static JsonObject *
tensor_to_json (const gchar * model, const gchar * name, const gchar * type,
    guint n_dims, const gint64 * dims, const GstClinferTensor * values)
{
  JsonObject *o = json_object_new ();
  JsonArray *a = json_array_new ();
  gsize i, n;

  if (model != NULL)
    json_object_set_string_member (o, "model", model);
  json_object_set_string_member (o, "name", name ? name : "");
  json_object_set_string_member (o, "type", type);
  for (i = 0; i < n_dims; i++)
    json_array_add_int_element (a, dims[i]);
  json_object_set_array_member (o, "dims", a);
  a = json_array_new ();
  n = gst_clinfer_tensor_get_n_elements (values);
  for (i = 0; i < n; i++) {
    gdouble v = gst_clinfer_tensor_get_value (values, i);

    if (isfinite (v))
      json_array_add_double_element (a, v);
    else
      json_array_add_null_element (a);
  }
  json_object_set_array_member (o, "data", a);
  return o;
}

/* A region's "tensor" structure (inference-region=roi-list) as JSON. */
static JsonObject *
region_tensor_to_json (const GstStructure * s)
{
  const GValue *dims_v = gst_structure_get_value (s, "dims");
  GstClinferTensor t = { 0, };
  g_autoptr (GBytes) bytes = NULL;
  gint64 dims[GST_CLINFER_TENSOR_MAX_DIMS];
  const gchar *type = gst_structure_get_string (s, "type");
  guint i, n = dims_v != NULL ? gst_value_array_get_size (dims_v) : 0;

  if (type == NULL || n > GST_CLINFER_TENSOR_MAX_DIMS
      || !gst_structure_get (s, "data", G_TYPE_BYTES, &bytes, NULL))
    return NULL;
  for (i = 0; i < n; i++)
    dims[i] = g_value_get_int64 (gst_value_array_get_value (dims_v, i));
  /* Through the tensor accessors: any element type as doubles. */
  t.data_type = gst_clinfer_tensor_data_type_from_name (type);
  if (t.data_type == GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED)
    return NULL;
  t.n_dims = n;
  memcpy (t.dims, dims, n * sizeof (gint64));
  t.data = bytes;
  return tensor_to_json (gst_structure_get_string (s, "model"),
      gst_structure_get_string (s, "name"), type, n, dims, &t);
}

/* Copies the fields of @s listed in @fields that @o does not have yet. */
static void
copy_fields (JsonObject * o, const GstStructure * s,
    const gchar * const *fields)
{
  guint i;

  for (i = 0; fields[i] != NULL; i++) {
    const GValue *v = gst_structure_get_value (s, fields[i]);
    JsonNode *node;

    if (v == NULL || json_object_has_member (o, fields[i]))
      continue;
    node = value_to_json (v);
    if (node != NULL)
      json_object_set_member (o, fields[i], node);
  }
}

static JsonObject *
region_to_json (GstVideoRegionOfInterestMeta * roi, gboolean tensors)
{
  static const gchar *const detection_fields[] = { "label", "label_id",
    "confidence", "object_id", "keypoints", "points", NULL
  };
  static const gchar *const class_fields[] = { "label", "label_id",
    "confidence", NULL
  };
  JsonObject *o = json_object_new ();
  JsonArray *classes = json_array_new (), *region_tensors = json_array_new ();
  GList *l;

  json_object_set_int_member (o, "id", roi->id);
  json_object_set_int_member (o, "parent_id", roi->parent_id);
  json_object_set_string_member (o, "type",
      g_quark_to_string (roi->roi_type));
  json_object_set_int_member (o, "x", roi->x);
  json_object_set_int_member (o, "y", roi->y);
  json_object_set_int_member (o, "w", roi->w);
  json_object_set_int_member (o, "h", roi->h);
  for (l = roi->params; l != NULL; l = l->next) {
    const GstStructure *s = l->data;

    if (gst_structure_has_name (s, "detection")) {
      copy_fields (o, s, detection_fields);
    } else if (gst_structure_has_name (s, "classification")) {
      JsonObject *c = json_object_new ();

      copy_fields (c, s, class_fields);
      json_array_add_object_element (classes, c);
    } else if (gst_structure_has_name (s, "tracking")) {
      const GValue *v = gst_structure_get_value (s, "object_id");

      if (v != NULL && !json_object_has_member (o, "object_id"))
        json_object_set_member (o, "object_id", value_to_json (v));
    } else if (gst_structure_has_name (s, "text")) {
      const GValue *v = gst_structure_get_value (s, "confidence");

      copy_fields (o, s, (const gchar *[]) {
          "text", NULL});
      /* Beside the region's own (a text detector's) confidence. */
      if (v != NULL && !json_object_has_member (o, "text_confidence"))
        json_object_set_member (o, "text_confidence", value_to_json (v));
    } else if (tensors && gst_structure_has_name (s, "tensor")) {
      JsonObject *t = region_tensor_to_json (s);

      if (t != NULL)
        json_array_add_object_element (region_tensors, t);
    }
  }
  /* A region without a detection of its own takes its first
   * classification's label and confidence. */
  if (json_array_get_length (classes) > 0) {
    if (!json_object_has_member (o, "label")) {
      JsonObject *c = json_array_get_object_element (classes, 0);
      GList *members = json_object_get_members (c), *m;

      for (m = members; m != NULL; m = m->next)
        json_object_set_member (o, m->data, json_node_copy
            (json_object_get_member (c, m->data)));
      g_list_free (members);
    }
    json_object_set_array_member (o, "classifications", classes);
  } else {
    json_array_unref (classes);
  }
  if (json_array_get_length (region_tensors) > 0)
    json_object_set_array_member (o, "tensors", region_tensors);
  else
    json_array_unref (region_tensors);
  return o;
}

static gchar *
frame_to_json (GstClinferMetaConvert * self, GstBuffer * buf,
    gboolean tensors)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  JsonObject *frame = json_object_new ();
  JsonArray *regions = json_array_new (), *frame_tensors = json_array_new ();
  JsonNode *root = json_node_new (JSON_NODE_OBJECT);
  GstMeta *meta;
  gpointer state = NULL;
  gchar *text;

  json_object_set_int_member (frame, "frame", (gint64) self->frame_count);
  if (GST_BUFFER_PTS_IS_VALID (buf))
    json_object_set_int_member (frame, "pts", (gint64) GST_BUFFER_PTS (buf));
  else
    json_object_set_null_member (frame, "pts");
  if (self->have_info) {
    json_object_set_int_member (frame, "width",
        GST_VIDEO_INFO_WIDTH (&self->vinfo));
    json_object_set_int_member (frame, "height",
        GST_VIDEO_INFO_HEIGHT (&self->vinfo));
  }
  while ((meta = gst_buffer_iterate_meta (buf, &state)) != NULL) {
    if (meta->info->api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) {
      json_array_add_object_element (regions, region_to_json
          ((GstVideoRegionOfInterestMeta *) meta, tensors));
    } else if (tensors && meta->info->api == GST_CLINFER_TENSOR_META_API_TYPE) {
      GstClinferTensorMeta *tm = (GstClinferTensorMeta *) meta;
      guint i;

      for (i = 0; i < gst_clinfer_tensor_meta_get_n_tensors (tm); i++) {
        const GstClinferTensor *t = gst_clinfer_tensor_meta_get_tensor (tm,
            i);

        json_array_add_object_element (frame_tensors,
            tensor_to_json (tm->model_name, t->name,
                gst_clinfer_tensor_data_type_get_name (t->data_type),
                t->n_dims, t->dims, t));
      }
    }
  }
  json_object_set_array_member (frame, "regions", regions);
  if (tensors)
    json_object_set_array_member (frame, "tensors", frame_tensors);
  else
    json_array_unref (frame_tensors);
  json_node_take_object (root, frame);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  json_node_unref (root);
  return text;
}

static GstFlowReturn
gst_clinfer_meta_convert_transform_ip (GstBaseTransform * trans,
    GstBuffer * buf)
{
  GstClinferMetaConvert *self = GST_CLINFER_META_CONVERT (trans);
  g_autofree gchar *json = NULL;
  gboolean post, tensors;

  GST_OBJECT_LOCK (self);
  post = self->post_messages;
  tensors = self->include_tensors;
  GST_OBJECT_UNLOCK (self);

  json = frame_to_json (self, buf, tensors);
  self->frame_count++;
  if (self->file != NULL) {
    if (fputs (json, self->file) < 0 || fputc ('\n', self->file) == EOF
        || fflush (self->file) != 0)
      goto write_failed;
  }
  if (post) {
    GstStructure *s = gst_structure_new ("clinfer-json", "json",
        G_TYPE_STRING, json, "pts", G_TYPE_UINT64, GST_BUFFER_PTS (buf),
        NULL);

    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self), s));
  }
  return GST_FLOW_OK;

  /* ERRORS */
write_failed:
  {
    gint err = errno;
    g_autofree gchar *location = NULL;

    GST_OBJECT_LOCK (self);
    location = g_strdup (self->location);
    GST_OBJECT_UNLOCK (self);
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write to \"%s\" (property 'location'): %s",
            location, g_strerror (err)), (NULL));
    return GST_FLOW_ERROR;
  }
}
