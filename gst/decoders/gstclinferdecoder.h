/* Decoders: turn a model's output tensors, as the element attached them in
 * a GstClinferTensorMeta, into standard GstVideoRegionOfInterestMeta on the
 * frame. They read only the meta (and, to check a model's outputs once, the
 * compiled model's port info), so one could run in an element of its own.
 * One table entry per decoder (gstclinferdecoder.c); adding one (e.g. yolo)
 * = a new enum value, a file here with its check/decode functions and a
 * line in the table.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/video/video.h>
#include <clinfer/clinfer.h>

#include "clinfer/clinfer-tensor-meta.h"
#include <clinfer/clinfer.h>

G_BEGIN_DECLS

/**
 * GstClinferDecoderType:
 * @GST_CLINFER_DECODER_NONE: attach the output tensors only
 * @GST_CLINFER_DECODER_BLAZEFACE: MediaPipe BlazeFace face detection
 * @GST_CLINFER_DECODER_SSD: [1,1,N,7] detection output (DetectionOutput)
 * @GST_CLINFER_DECODER_CLASSIFICATION: top-1 class of a classifier
 * @GST_CLINFER_DECODER_YOLO: YOLOv5/v7 or YOLOv8/v11 detection output
 * @GST_CLINFER_DECODER_CTC: greedy CTC text of a text recogniser
 * @GST_CLINFER_DECODER_TEXT_DETECTION: DB text probability map (PP-OCR)
 */
typedef enum
{
  GST_CLINFER_DECODER_NONE,
  GST_CLINFER_DECODER_BLAZEFACE,
  GST_CLINFER_DECODER_SSD,
  GST_CLINFER_DECODER_CLASSIFICATION,
  GST_CLINFER_DECODER_YOLO,
  GST_CLINFER_DECODER_CTC,
  GST_CLINFER_DECODER_TEXT_DETECTION,
} GstClinferDecoderType;

/* Everything a decoder needs for one frame. */
typedef struct
{
  GstBuffer *buffer;            /* writable; gets the ROI metas */
  const ClinferPreprocessGeometry *geometry;
  /* The outputs of this frame's inference (the meta the element attached,
   * not an upstream element's) */
  const GstClinferTensorMeta *meta;
  gfloat threshold;
  gfloat iou_threshold;         /* NMS: a lower-scored box overlapping more goes */
  GPtrArray *labels;            /* may be NULL */
  /* inference-region=roi-list: the region the model ran on (a crop of
   * the frame from (origin_x, origin_y), the geometry's frame): results
   * of one region go onto it, new regions are placed in the frame and
   * get it as parent. NULL for a whole frame. */
  GstVideoRegionOfInterestMeta *roi;
  gint origin_x, origin_y;
} GstClinferDecodeContext;

typedef struct
{
  GstClinferDecoderType type;
  const gchar *name;
  /* Normalisation of the model family, used when neither the properties
   * nor the model metadata give one (has_norm FALSE: none). */
  gboolean has_norm;
  gfloat mean[3], scale[3];     /* per model channel */
  /* For a model input of dynamic height and width: the size to use for a
   * @frame_width x @frame_height frame (NULL: the frame's). */
  void (*model_size) (gint frame_width, gint frame_height, gint64 * width,
      gint64 * height);
  /* Checks the outputs (static shapes only) once the model is compiled,
   * so a mismatch is reported before the first frame; may be NULL. */
  gboolean (*check) (ClinferCompiled * compiled, GError ** error);
  gboolean (*decode) (const GstClinferDecodeContext * ctx, GError ** error);
} GstClinferDecoder;

/* (transfer none) NULL for GST_CLINFER_DECODER_NONE. */
const GstClinferDecoder *gst_clinfer_decoder_get (GstClinferDecoderType type);

/* Helpers for decoders. */
/* The shape of @tensor as an engine shape (for shape checks shared with
 * the compile-time check()). */
ClinferShape gst_clinfer_decoder_tensor_shape (const GstClinferTensor * tensor);
/* Attaches @param (transfer full) to the result's region: ctx->roi, or
 * a new region the size of the whole frame named @roi_type. */
void gst_clinfer_decoder_add_frame_result (const GstClinferDecodeContext * ctx,
    const gchar * roi_type, GstStructure * param);
/* TRUE with *@shape when the first output of @compiled has a static
 * shape (the check() functions' case; a dynamic one is checked on the
 * first frame). */
gboolean gst_clinfer_decoder_static_output (ClinferCompiled * compiled,
    ClinferShape * shape);
/* The label for @label_id from labels-file, or NULL. */
const gchar *gst_clinfer_decoder_get_label (const GstClinferDecodeContext * ctx,
    gint label_id);
/* Adds an ROI meta for the box (x0, y0)-(x1, y1) given in model pixels,
 * mapped to frame pixels and clipped to the frame (to the region, moved
 * to its place in the frame, when ctx->roi is set); @param (transfer
 * full, may be NULL) is attached. Returns NULL (and frees @param) when
 * the box is empty after clipping. */
GstVideoRegionOfInterestMeta *gst_clinfer_decoder_add_roi (const GstClinferDecodeContext * ctx,
    const gchar * roi_type, gdouble x0, gdouble y0, gdouble x1, gdouble y1,
    GstStructure * param);

/* Intersection over union of the boxes (ax0, ay0)-(ax1, ay1) and
 * (bx0, by0)-(bx1, by1); 0 when they do not overlap. */
gdouble gst_clinfer_box_iou (gdouble ax0, gdouble ay0, gdouble ax1,
    gdouble ay1, gdouble bx0, gdouble by0, gdouble bx1, gdouble by1);

/* Reads a labels file: one label per line, trailing whitespace removed;
 * G_FILE_ERROR_INVAL naming the line when one is not UTF-8 (labels go
 * into GstStructure strings). (transfer full) */
GPtrArray *gst_clinfer_labels_read (const gchar * path, GError ** error);
/* The same from @text (a model's metadata, say); @origin names it in the
 * error. */
GPtrArray *gst_clinfer_labels_parse (const gchar * text,
    const gchar * origin, GError ** error);

/* Whether @roi's type is one of @classes (an object-class list split at
 * commas; NULL: any). */
gboolean gst_clinfer_roi_type_wanted (const GstVideoRegionOfInterestMeta *
    roi, gchar ** classes);

/* The decoders (one file each). */
gboolean gst_clinfer_blazeface_check (ClinferCompiled * compiled, GError ** error);
gboolean gst_clinfer_blazeface_decode (const GstClinferDecodeContext * ctx,
    GError ** error);
gboolean gst_clinfer_ssd_check (ClinferCompiled * compiled, GError ** error);
gboolean gst_clinfer_ssd_decode (const GstClinferDecodeContext * ctx,
    GError ** error);
gboolean gst_clinfer_classification_check (ClinferCompiled * compiled,
    GError ** error);
gboolean gst_clinfer_classification_decode (const GstClinferDecodeContext * ctx,
    GError ** error);
gboolean gst_clinfer_ctc_check (ClinferCompiled * compiled, GError ** error);
gboolean gst_clinfer_ctc_decode (const GstClinferDecodeContext * ctx,
    GError ** error);
gboolean gst_clinfer_textdet_check (ClinferCompiled * compiled,
    GError ** error);
gboolean gst_clinfer_textdet_decode (const GstClinferDecodeContext * ctx,
    GError ** error);
void gst_clinfer_textdet_model_size (gint frame_width, gint frame_height,
    gint64 * width, gint64 * height);
gboolean gst_clinfer_yolo_check (ClinferCompiled * compiled, GError ** error);
gboolean gst_clinfer_yolo_decode (const GstClinferDecodeContext * ctx,
    GError ** error);

G_END_DECLS
