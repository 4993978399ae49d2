/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfer.h: the clinfer element (inference on video frames, results
 * as buffer metadata)
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <clinfer/clinfer.h>

#include "decoders/gstclinferdecoder.h"
#include "gstclinfermodelcache.h"
#include "gstclinferbatcher.h"
#include "gstclinferframe.h"
#include "gstclinferoutputs.h"

G_BEGIN_DECLS

#define GST_TYPE_CLINFER (gst_clinfer_get_type ())
G_DECLARE_FINAL_TYPE (GstClinfer, gst_clinfer, GST, CLINFER, GstBaseTransform)

#define GST_TYPE_CLINFER_RESIZE_METHOD (gst_clinfer_resize_method_get_type ())
GType gst_clinfer_resize_method_get_type (void);
#define GST_TYPE_CLINFER_DECODER_TYPE (gst_clinfer_decoder_type_get_type ())
GType gst_clinfer_decoder_type_get_type (void);
#define GST_TYPE_CLINFER_PERFORMANCE_HINT (gst_clinfer_performance_hint_get_type ())
GType gst_clinfer_performance_hint_get_type (void);
#define GST_TYPE_CLINFER_INFERENCE_REGION (gst_clinfer_inference_region_get_type ())
GType gst_clinfer_inference_region_get_type (void);

/**
 * GstClinferInferenceRegion:
 * @GST_CLINFER_REGION_FULL_FRAME: the model runs on the whole frame
 * @GST_CLINFER_REGION_ROI_LIST: on each region-of-interest meta's crop
 */
typedef enum
{
  GST_CLINFER_REGION_FULL_FRAME,
  GST_CLINFER_REGION_ROI_LIST,
} GstClinferInferenceRegion;

/* One request of the element with what runs on it: its pre-processing
 * (input tensor), output blocks, and while an inference is in flight the
 * frame it reads. */
typedef struct
{
  /* Without batches: the slot's own request; with batch-size above 1
   * NULL, and while busy the frame's place in a shared batch. */
  ClinferRequest *request;
  GstClinferBatchItem item;
  ClinferPreprocess *preprocess;
  /* Output storage bound to the request, handed to each frame's meta
   * without a copy; NULL: outputs copied into the meta. */
  GstClinferOutputs *outputs;
  GstClinferMappedFrame frame;
  gboolean busy;                /* an inference started, not finished */
  gint finished;                /* atomic: the async inference ended */
} GstClinferSlot;

struct _GstClinfer
{
  GstBaseTransform parent;

  /* Properties, under the object lock. */
  gchar *model_path;
  gchar *config_file;
  gchar *device;
  guint threads;
  gint performance_hint;        /* ClinferPerformanceHint, or auto */
  guint nireq;
  guint batch_size;
  guint64 batch_timeout;
  guint64 memory_limit;
  guint inference_interval;
  gchar *mean_values;
  gchar *scale_values;
  gboolean reverse_channels;
  ClinferResizeMethod resize_method;
  GstClinferDecoderType decoder;
  gfloat threshold;
  gfloat iou_threshold;
  gchar *labels_file;
  gchar *input_name;
  gchar *input_shape;
  GstClinferInferenceRegion inference_region;
  gchar *object_class;
  gchar *turn_label;
  gchar *model_instance_id;
  gchar *custom_lib;
  gboolean silent;
  gchar *last_message;
  /* Set by property changes while running; the streaming thread applies
   * them before the next frame. */
  gboolean reload_pending;      /* model, device, config-file, ... */
  gboolean configure_pending;   /* pre-processing, decoder, labels */

  /* Streaming state: set up in start(), used by the streaming thread,
   * freed in stop(). */
  GstClinferSharedModel *shared;
  /* batch-size above 1: the shared model's batcher (not owned), set once
   * configured. */
  GstClinferBatcher *batcher;
  /* The loaded model's batch-size and batch-timeout (for LATENCY). */
  guint active_batch_size;
  guint64 active_batch_timeout;
  /* nireq slots, one more with nireq above 1 and no batches (a frame is
   * pre-processed into it as it arrives, then started once fewer than
   * @max_in_flight are running); with more than one, frames wait in
   * @pending (their inference in flight, or behind one) and are pushed in
   * order. */
  GstClinferSlot *slots;
  guint n_slots;
  guint max_in_flight;          /* nireq */
  GQueue pending;               /* GstClinferPending* */
  gchar *model_name;
  GstVideoInfo vinfo;
  gboolean have_caps;
  gboolean configured;
  /* OpenCL memory of the compiled model's context, proposed to upstream
   * (GPU devices only; NULL otherwise). */
  GstAllocator *allocator;
  guint64 bytes_copied;         /* of the last inference, object lock */
  guint input_index;
  /* The frames and the model input as pre-processed (set at configure):
   * inference-region=roi-list makes one pre-processing per region from
   * them. */
  ClinferFrameInfo frame_info;
  ClinferPreprocessConfig pp_config;
  GstClinferInferenceRegion active_region;
  const GstClinferDecoder *decoder_impl;
  GPtrArray *labels;
  guint64 frame_count;
};

GST_ELEMENT_REGISTER_DECLARE (clinfer);

G_END_DECLS
