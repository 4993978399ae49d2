/* GStreamer
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * gstclinfer.c: runs a neural network on video frames with the clinfer
 * engine and attaches the results to the frames as metadata
 */

/**
 * SECTION:element-clinfer
 * @title: clinfer
 *
 * Runs a neural network (ONNX) on every frame, or every
 * #GstClinfer:inference-interval frames, with the clinfer engine. Pixels
 * pass unchanged; the network's output tensors are attached as
 * #GstClinferTensorMeta and, with a #GstClinfer:decoder, the detections
 * or the class as #GstVideoRegionOfInterestMeta.
 *
 * The frame is pre-processed to the model input: colour conversion
 * (RGB, BGR, xRGB-style, NV12, I420 and GRAY8 frames), bilinear resize per
 * #GstClinfer:resize-method, (pixel - mean) / scale per channel, channel
 * order (#GstClinfer:reverse-channels), NCHW or NHWC layout (from the model
 * input's shape) and f32, f16 or u8 elements.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=face.png ! pngdec ! imagefreeze num-buffers=5 ! videoconvert ! \
 *     clinfer model=face_detection_front_128x128_barracuda.onnx decoder=blazeface silent=false ! \
 *     clinferoverlay ! videoconvert ! pngenc snapshot=true ! filesink location=out.png
 * ]| Finds the faces in a picture, draws them and prints them (with -v).
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! clinfer model=ssd.onnx decoder=ssd \
 *     labels-file=coco.txt threshold=0.6 inference-interval=2 ! clinferoverlay ! \
 *     videoconvert ! autovideosink
 * ]| Detects objects on every other camera frame.
 */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstclinfer.h"
#include "clinfer/clinfer-tensor-meta.h"
#ifdef GST_CLINFER_HAVE_OPENCL
#include "gstclinferclmemory.h"
#else
/* No OpenCL memory is ever proposed then (self->allocator stays NULL). */
#define GST_CLINFER_CL_ALIGN 4095
#endif

#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_clinfer_debug);
#define GST_CAT_DEFAULT gst_clinfer_debug

enum
{
  PROP_0,
  PROP_MODEL,
  PROP_CONFIG_FILE,
  PROP_DEVICE,
  PROP_THREADS,
  PROP_PERFORMANCE_HINT,
  PROP_NIREQ,
  PROP_BATCH_SIZE,
  PROP_BATCH_TIMEOUT,
  PROP_MEMORY_LIMIT,
  PROP_INFERENCE_INTERVAL,
  PROP_MEAN_VALUES,
  PROP_SCALE_VALUES,
  PROP_REVERSE_CHANNELS,
  PROP_RESIZE_METHOD,
  PROP_DECODER,
  PROP_THRESHOLD,
  PROP_IOU_THRESHOLD,
  PROP_LABELS_FILE,
  PROP_INPUT_NAME,
  PROP_INPUT_SHAPE,
  PROP_INFERENCE_REGION,
  PROP_OBJECT_CLASS,
  PROP_TURN_LABEL,
  PROP_MODEL_INSTANCE_ID,
  PROP_CUSTOM_LIB,
  PROP_SILENT,
  PROP_LAST_MESSAGE,
  PROP_BYTES_COPIED,
  N_PROPERTIES
};

#define DEFAULT_PROP_MODEL NULL
#define DEFAULT_PROP_CONFIG_FILE NULL
#define DEFAULT_PROP_DEVICE "AUTO"
#define DEFAULT_PROP_THREADS 0
/* performance-hint "auto": throughput with nireq above 1, else none. */
#define GST_CLINFER_HINT_AUTO 100
#define DEFAULT_PROP_PERFORMANCE_HINT GST_CLINFER_HINT_AUTO
#define DEFAULT_PROP_NIREQ 1
#define MAX_NIREQ 64
#define DEFAULT_PROP_BATCH_SIZE 1
#define MAX_BATCH_SIZE 256
#define DEFAULT_PROP_BATCH_TIMEOUT 50000
#define MAX_BATCH_TIMEOUT (60 * G_USEC_PER_SEC)
#define DEFAULT_PROP_MEMORY_LIMIT 0
#define DEFAULT_PROP_INFERENCE_INTERVAL 1
#define DEFAULT_PROP_MEAN_VALUES NULL
#define DEFAULT_PROP_SCALE_VALUES NULL
#define DEFAULT_PROP_REVERSE_CHANNELS FALSE
#define DEFAULT_PROP_RESIZE_METHOD CLINFER_RESIZE_STRETCH
#define DEFAULT_PROP_DECODER GST_CLINFER_DECODER_NONE
#define DEFAULT_PROP_THRESHOLD 0.5f
#define DEFAULT_PROP_IOU_THRESHOLD 0.45f
#define DEFAULT_PROP_LABELS_FILE NULL
#define DEFAULT_PROP_INPUT_NAME NULL
#define DEFAULT_PROP_INPUT_SHAPE NULL
#define DEFAULT_PROP_INFERENCE_REGION GST_CLINFER_REGION_FULL_FRAME
#define DEFAULT_PROP_OBJECT_CLASS NULL
#define DEFAULT_PROP_TURN_LABEL NULL
/* turn-label: the classification's least confidence (PaddleOCR's
 * cls_thresh). */
#define TURN_CONFIDENCE 0.9
/* Regions inferred in one request when the model's batch is dynamic. */
#define MAX_REGION_BATCH 64
/* The widest input fit-height makes of a dynamic width (a 48-pixel high
 * text line 100 times as long). */
#define MAX_FIT_WIDTH 4800
#define DEFAULT_PROP_MODEL_INSTANCE_ID NULL
#define DEFAULT_PROP_CUSTOM_LIB NULL
#define DEFAULT_PROP_SILENT TRUE

/* Model metadata keys (ONNX metadata_props) read when mean-values or
 * scale-values are not set; the names OpenVINO's Model API uses. */
#define METADATA_MEAN_VALUES "mean_values"
#define METADATA_SCALE_VALUES "scale_values"
/* The character list PaddleOCR writes into its recognisers (ctc labels). */
#define METADATA_CHARACTERS "character"

static GParamSpec *properties[N_PROPERTIES];

#define VIDEO_CAPS GST_VIDEO_CAPS_MAKE (GST_CLINFER_PREPROCESS_FORMATS)

static GstStaticPadTemplate gst_clinfer_sink_template =
GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (VIDEO_CAPS));

static GstStaticPadTemplate gst_clinfer_src_template =
GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS (VIDEO_CAPS));

#define gst_clinfer_parent_class parent_class
G_DEFINE_TYPE (GstClinfer, gst_clinfer, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (clinfer, "clinfer", GST_RANK_NONE,
    GST_TYPE_CLINFER);

static void gst_clinfer_finalize (GObject * object);
static void gst_clinfer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_clinfer_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);

static gboolean gst_clinfer_start (GstBaseTransform * trans);
static gboolean gst_clinfer_stop (GstBaseTransform * trans);
static gboolean gst_clinfer_set_caps (GstBaseTransform * trans,
    GstCaps * incaps, GstCaps * outcaps);
static gboolean gst_clinfer_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);
static GstFlowReturn drain (GstClinfer * self);
static gboolean gst_clinfer_sink_event (GstBaseTransform * trans,
    GstEvent * event);
static GstFlowReturn gst_clinfer_transform_ip (GstBaseTransform * trans,
    GstBuffer * buf);
static gboolean gst_clinfer_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query);

GType
gst_clinfer_resize_method_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {CLINFER_RESIZE_STRETCH,
        "Scale the whole frame to the model input, ignoring the aspect ratio",
        "stretch"},
    {CLINFER_RESIZE_LETTERBOX,
          "Scale the whole frame keeping the aspect ratio, centred, padded "
          "with black", "letterbox"},
    {CLINFER_RESIZE_CROP,
          "Scale keeping the aspect ratio to fill the model input, cutting "
          "out the frame's centre", "crop"},
    {CLINFER_RESIZE_FIT_HEIGHT,
          "Scale to the model's height keeping the aspect ratio, from the "
          "left, the rest 0 in the model input (text recognisers); a "
          "dynamic width becomes the frame's (the region's) at that height",
        "fit-height"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType _type = g_enum_register_static ("GstClinferResizeMethod", values);
    g_once_init_leave (&type, _type);
  }
  return type;
}

GType
gst_clinfer_performance_hint_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CLINFER_HINT_AUTO, "throughput when nireq is above 1, else none",
        "auto"},
    {CLINFER_HINT_NONE, "threads as set, one stream", "none"},
    {CLINFER_HINT_LATENCY, "One inference as fast as possible: one stream, "
          "the thread count measured when the model is compiled (all cores "
          "or one, the faster)", "latency"},
    {CLINFER_HINT_THROUGHPUT, "Most frames per second: the CPU cores split "
          "into streams of one thread (of threads, when set), each running "
          "its own requests; two on the GPU", "throughput"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType _type = g_enum_register_static ("GstClinferPerformanceHint",
        values);
    g_once_init_leave (&type, _type);
  }
  return type;
}

GType
gst_clinfer_inference_region_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CLINFER_REGION_FULL_FRAME, "The model runs on the whole frame",
        "full-frame"},
    {GST_CLINFER_REGION_ROI_LIST, "The model runs on each region-of-interest "
          "meta of the frame (those of object-class), cropped from the frame; "
          "results go onto the region", "roi-list"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType _type = g_enum_register_static ("GstClinferInferenceRegion",
        values);
    g_once_init_leave (&type, _type);
  }
  return type;
}

GType
gst_clinfer_decoder_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CLINFER_DECODER_NONE, "Attach the output tensors only", "none"},
    {GST_CLINFER_DECODER_BLAZEFACE,
        "MediaPipe BlazeFace: \"face\" regions with 6 key points", "blazeface"},
    {GST_CLINFER_DECODER_SSD,
          "[1,1,N,7] detection output (image_id, label, confidence, box)",
        "ssd"},
    {GST_CLINFER_DECODER_CLASSIFICATION,
        "Top-1 class on a whole-frame region", "classification"},
    {GST_CLINFER_DECODER_YOLO,
          "YOLOv5/v7 [1,N,5+C] or YOLOv8/v11 [1,4+C,N] boxes, per-class NMS",
        "yolo"},
    {GST_CLINFER_DECODER_CTC,
          "Text of a recogniser's [1,T,C] output (greedy CTC, labels-file the "
          "characters): a \"text\" structure", "ctc"},
    {GST_CLINFER_DECODER_TEXT_DETECTION,
          "Text lines of a DB detector's [1,1,H,W] probability map (PP-OCR): "
          "\"text\" regions with their rotated box's four corners",
        "text-detection"},
    {0, NULL, NULL},
  };

  if (g_once_init_enter (&type)) {
    GType _type = g_enum_register_static ("GstClinferDecoderType", values);
    g_once_init_leave (&type, _type);
  }
  return type;
}

static void
gst_clinfer_class_init (GstClinferClass * klass)
{
  GObjectClass *gobject_class = (GObjectClass *) klass;
  GstElementClass *element_class = (GstElementClass *) klass;
  GstBaseTransformClass *trans_class = (GstBaseTransformClass *) klass;

  GST_DEBUG_CATEGORY_INIT (gst_clinfer_debug, "clinfer", 0,
      "clinfer inference element");

  gobject_class->finalize = gst_clinfer_finalize;
  gobject_class->set_property = gst_clinfer_set_property;
  gobject_class->get_property = gst_clinfer_get_property;

  properties[PROP_MODEL] = g_param_spec_string ("model", "Model",
      "Path of the model file (.onnx). A change while PLAYING takes effect "
      "at the next frame (the model is read and compiled on the streaming "
      "thread then)", DEFAULT_PROP_MODEL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_CONFIG_FILE] = g_param_spec_string ("config-file",
      "Config file",
      "Custom OpenCL layer description (OpenVINO custom-layer XML) for the GPU "
      "device; applied like model", DEFAULT_PROP_CONFIG_FILE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_DEVICE] = g_param_spec_string ("device", "Device",
      "Device the model runs on: CPU, GPU, GPU.N (N-th OpenCL GPU) or AUTO; "
      "applied like model", DEFAULT_PROP_DEVICE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_THREADS] = g_param_spec_uint ("threads", "Threads",
      "CPU threads for inference and pre-processing (0 = one per core); "
      "applied like model", 0, 1024, DEFAULT_PROP_THREADS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_PERFORMANCE_HINT] = g_param_spec_enum ("performance-hint",
      "Performance hint",
      "How the model's threads are used (the engine's performance hint); "
      "threads, when set, overrides the count; applied like model",
      GST_TYPE_CLINFER_PERFORMANCE_HINT, DEFAULT_PROP_PERFORMANCE_HINT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_NIREQ] = g_param_spec_uint ("nireq", "Requests in flight",
      "Frames inferred at once by this element: above 1 the element "
      "pre-processes the next frame while earlier ones infer (on the "
      "compiled model's streams; one request more is kept for it) and "
      "pushes frames in their order, adding nireq - 1 frames of latency; "
      "1 infers each frame before pushing it; applied like model", 1,
      MAX_NIREQ, DEFAULT_PROP_NIREQ,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_BATCH_SIZE] = g_param_spec_uint ("batch-size",
      "Batch size",
      "Frames per inference: above 1, the elements sharing this element's "
      "model-instance-id (one per camera, in one pipeline or several) "
      "pre-process their frames into one batched request, run when it is "
      "full or batch-timeout after its first frame; the model's batch "
      "dimension must be dynamic or batch-size. Without model-instance-id "
      "the element batches its own frames (set nireq to batch-size). "
      "Applied like model", 1, MAX_BATCH_SIZE, DEFAULT_PROP_BATCH_SIZE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_BATCH_TIMEOUT] = g_param_spec_uint64 ("batch-timeout",
      "Batch timeout",
      "Microseconds a batch waits for frames after its first before it runs "
      "part-full, so a camera that stops cannot stall the others; elements "
      "sharing a model-instance-id set the same value. Applied like model",
      0, MAX_BATCH_TIMEOUT, DEFAULT_PROP_BATCH_TIMEOUT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_MEMORY_LIMIT] = g_param_spec_uint64 ("memory-limit",
      "Memory limit",
      "Most bytes one tensor of the model, or all its intermediate tensors "
      "together, may take; a model needing more fails to load with an error "
      "naming the node and the size (0 = the machine's physical memory); "
      "applied like model", 0, G_MAXUINT64, DEFAULT_PROP_MEMORY_LIMIT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_INFERENCE_INTERVAL] = g_param_spec_uint
      ("inference-interval", "Inference interval",
      "Run the model on every N-th frame only (the first, N+1-th, ...); the "
      "other frames pass with no new result metadata", 1, G_MAXUINT,
      DEFAULT_PROP_INFERENCE_INTERVAL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_MEAN_VALUES] = g_param_spec_string ("mean-values",
      "Mean values",
      "Subtracted from each pixel value (0..255) before dividing by "
      "scale-values: comma-separated, one value for every channel or one per "
      "channel in the model's channel order. Unset: the model metadata key "
      "\"" METADATA_MEAN_VALUES "\", else the decoder's model family "
      "(blazeface: 127.5), else 0", DEFAULT_PROP_MEAN_VALUES,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_SCALE_VALUES] = g_param_spec_string ("scale-values",
      "Scale values",
      "Divides each pixel value after subtracting mean-values: "
      "comma-separated, one value or one per channel. Unset: the model "
      "metadata key \"" METADATA_SCALE_VALUES "\", else the decoder's model "
      "family (blazeface: 127.5), else 1", DEFAULT_PROP_SCALE_VALUES,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_REVERSE_CHANNELS] = g_param_spec_boolean
      ("reverse-channels", "Reverse channels",
      "Feed the model B, G, R instead of R, G, B", DEFAULT_PROP_REVERSE_CHANNELS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_RESIZE_METHOD] = g_param_spec_enum ("resize-method",
      "Resize method", "How the frame is fitted to the model input size",
      GST_TYPE_CLINFER_RESIZE_METHOD, DEFAULT_PROP_RESIZE_METHOD,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_DECODER] = g_param_spec_enum ("decoder", "Decoder",
      "Turns the outputs into region of interest metadata",
      GST_TYPE_CLINFER_DECODER_TYPE, DEFAULT_PROP_DECODER,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_THRESHOLD] = g_param_spec_float ("threshold", "Threshold",
      "Minimum confidence of a detection (decoders blazeface, ssd and yolo)",
      0.0f, 1.0f, DEFAULT_PROP_THRESHOLD,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_IOU_THRESHOLD] = g_param_spec_float ("iou-threshold",
      "IoU threshold",
      "Non-maximum suppression of decoder yolo: of two boxes of one class "
      "whose intersection over union is above this, the lower-scored goes",
      0.0f, 1.0f, DEFAULT_PROP_IOU_THRESHOLD,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_LABELS_FILE] = g_param_spec_string ("labels-file",
      "Labels file",
      "Text file with one label per line, line N (from 0) naming class N",
      DEFAULT_PROP_LABELS_FILE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_INPUT_NAME] = g_param_spec_string ("input-name",
      "Input name",
      "Model input fed with the frame (NULL: the first input of rank 4); "
      "other inputs are fed zeros", DEFAULT_PROP_INPUT_NAME,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_INPUT_SHAPE] = g_param_spec_string ("input-shape",
      "Input shape",
      "Dims of the model input fed with frames (input-name, else the first "
      "of rank 4), e.g. \"?x3x48x?\": a dynamic dim given a size, \"?\" "
      "keeping one dynamic; must agree with the model's static dims. "
      "NULL: the model's. Applied like model",
      DEFAULT_PROP_INPUT_SHAPE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_INFERENCE_REGION] = g_param_spec_enum ("inference-region",
      "Inference region",
      "What the model runs on: the whole frame, or each region-of-interest "
      "meta already on the frame (from an element upstream: a detector, "
      "say), cropped from the frame and pre-processed as a frame would be; "
      "results go onto the region (its tensors as \"tensor\" structures, "
      "the decoder's result). Regions run as one batch when the model's "
      "batch dimension is dynamic. Applied like model",
      GST_TYPE_CLINFER_INFERENCE_REGION, DEFAULT_PROP_INFERENCE_REGION,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_TURN_LABEL] = g_param_spec_string ("turn-label",
      "Turn label",
      "With inference-region=roi-list: a region that a classifier upstream "
      "labelled this (a \"classification\" structure, confidence 0.9 or "
      "more) is turned half a turn before inference: \"180\" with PP-OCR's "
      "direction classifier, for text lines upside down. NULL: never",
      DEFAULT_PROP_TURN_LABEL,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_OBJECT_CLASS] = g_param_spec_string ("object-class",
      "Object class",
      "With inference-region=roi-list: only regions of these types "
      "(comma-separated, e.g. \"face,person\"); NULL or empty: every region",
      DEFAULT_PROP_OBJECT_CLASS,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_MODEL_INSTANCE_ID] = g_param_spec_string
      ("model-instance-id", "Model instance id",
      "Elements of the process with the same id and the same model, device, "
      "config-file, custom-lib, threads, performance-hint, memory-limit, "
      "batch-size and batch-timeout share one read and compiled model and "
      "its OpenCL context (each keeps its own inference requests, except "
      "that with batch-size they share batched ones). NULL: not shared",
      DEFAULT_PROP_MODEL_INSTANCE_ID,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_CUSTOM_LIB] = g_param_spec_string ("custom-lib",
      "Custom op libraries",
      "Shared libraries of custom CPU ops (see <clinfer/custom-op.h>), paths "
      "separated by ';', loaded before the model is read so its custom ops "
      "resolve. Elements sharing a model-instance-id must set the same "
      "libraries. Applied like model. NULL: none", DEFAULT_PROP_CUSTOM_LIB,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_SILENT] = g_param_spec_boolean ("silent", "Silent",
      "Do not describe each inference's results in last-message",
      DEFAULT_PROP_SILENT,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  properties[PROP_LAST_MESSAGE] = g_param_spec_string ("last-message",
      "Last message",
      "Results of the last inference (when silent is false), one region per "
      "entry; gst-launch-1.0 -v prints it", NULL,
      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_BYTES_COPIED] = g_param_spec_uint64 ("bytes-copied",
      "Bytes copied",
      "Bytes the last inference copied from host to device memory: the "
      "frame (when a discrete GPU reads host memory) and what the engine's "
      "copy counter saw for the inputs and CPU fallback nodes. 0 on the CPU "
      "device and on OpenCL devices sharing host memory (zero copy)", 0,
      G_MAXUINT64,
      0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata (element_class,
      "clinfer inference", "Filter/Video/Analyzer",
      "Runs a neural network on video frames and attaches its outputs and "
      "decoded regions of interest as metadata",
      "the clinfer authors <https://github.com/clinfer>");
  gst_element_class_add_static_pad_template (element_class,
      &gst_clinfer_sink_template);
  gst_element_class_add_static_pad_template (element_class,
      &gst_clinfer_src_template);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_clinfer_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_clinfer_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_clinfer_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_clinfer_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_clinfer_query);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_clinfer_transform_ip);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_clinfer_propose_allocation);
  trans_class->passthrough_on_same_caps = FALSE;

  gst_type_mark_as_plugin_api (GST_TYPE_CLINFER_RESIZE_METHOD, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CLINFER_DECODER_TYPE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CLINFER_INFERENCE_REGION, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CLINFER_PERFORMANCE_HINT, 0);
}

static void
gst_clinfer_init (GstClinfer * self)
{
  self->device = g_strdup (DEFAULT_PROP_DEVICE);
  self->threads = DEFAULT_PROP_THREADS;
  self->performance_hint = DEFAULT_PROP_PERFORMANCE_HINT;
  self->nireq = DEFAULT_PROP_NIREQ;
  self->active_batch_size = 1;
  self->batch_size = DEFAULT_PROP_BATCH_SIZE;
  self->batch_timeout = DEFAULT_PROP_BATCH_TIMEOUT;
  g_queue_init (&self->pending);
  self->memory_limit = DEFAULT_PROP_MEMORY_LIMIT;
  self->inference_interval = DEFAULT_PROP_INFERENCE_INTERVAL;
  self->reverse_channels = DEFAULT_PROP_REVERSE_CHANNELS;
  self->resize_method = DEFAULT_PROP_RESIZE_METHOD;
  self->decoder = DEFAULT_PROP_DECODER;
  self->threshold = DEFAULT_PROP_THRESHOLD;
  self->iou_threshold = DEFAULT_PROP_IOU_THRESHOLD;
  self->silent = DEFAULT_PROP_SILENT;

  /* In place: the frame is only read, metadata is added; the buffer is
   * made writable (metadata only, memory is shared) by the base class. */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), FALSE);
}

static void
gst_clinfer_finalize (GObject * object)
{
  GstClinfer *self = GST_CLINFER (object);

  g_free (self->model_path);
  g_free (self->config_file);
  g_free (self->device);
  g_free (self->mean_values);
  g_free (self->scale_values);
  g_free (self->labels_file);
  g_free (self->input_name);
  g_free (self->input_shape);
  g_free (self->object_class);
  g_free (self->turn_label);
  g_free (self->model_instance_id);
  g_free (self->custom_lib);
  g_free (self->last_message);

  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* Replaces *@field by a copy of the string in @value; TRUE if it changed. */
static gboolean
replace_string (gchar ** field, const GValue * value)
{
  const gchar *s = g_value_get_string (value);

  if (g_strcmp0 (*field, s) == 0)
    return FALSE;
  g_free (*field);
  *field = g_strdup (s);
  return TRUE;
}

static void
gst_clinfer_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstClinfer *self = GST_CLINFER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL:
      self->reload_pending |= replace_string (&self->model_path, value);
      break;
    case PROP_CONFIG_FILE:
      self->reload_pending |= replace_string (&self->config_file, value);
      break;
    case PROP_DEVICE:
      if (g_value_get_string (value) == NULL) {
        self->reload_pending |= g_strcmp0 (self->device, DEFAULT_PROP_DEVICE);
        g_free (self->device);
        self->device = g_strdup (DEFAULT_PROP_DEVICE);
      } else {
        self->reload_pending |= replace_string (&self->device, value);
      }
      break;
    case PROP_THREADS:
      self->reload_pending |= self->threads != g_value_get_uint (value);
      self->threads = g_value_get_uint (value);
      break;
    case PROP_PERFORMANCE_HINT:
      self->reload_pending |= self->performance_hint
          != g_value_get_enum (value);
      self->performance_hint = g_value_get_enum (value);
      break;
    case PROP_NIREQ:
      self->reload_pending |= self->nireq != g_value_get_uint (value);
      self->nireq = g_value_get_uint (value);
      break;
    case PROP_BATCH_SIZE:
      self->reload_pending |= self->batch_size != g_value_get_uint (value);
      self->batch_size = g_value_get_uint (value);
      break;
    case PROP_BATCH_TIMEOUT:
      self->reload_pending |= self->batch_timeout
          != g_value_get_uint64 (value);
      self->batch_timeout = g_value_get_uint64 (value);
      break;
    case PROP_MEMORY_LIMIT:
      self->reload_pending |= self->memory_limit != g_value_get_uint64 (value);
      self->memory_limit = g_value_get_uint64 (value);
      break;
    case PROP_MODEL_INSTANCE_ID:
      self->reload_pending |= replace_string (&self->model_instance_id, value);
      break;
    case PROP_CUSTOM_LIB:
      self->reload_pending |= replace_string (&self->custom_lib, value);
      break;
    case PROP_INFERENCE_INTERVAL:
      self->inference_interval = g_value_get_uint (value);
      break;
    case PROP_MEAN_VALUES:
      self->configure_pending |= replace_string (&self->mean_values, value);
      break;
    case PROP_SCALE_VALUES:
      self->configure_pending |= replace_string (&self->scale_values, value);
      break;
    case PROP_REVERSE_CHANNELS:
      self->reverse_channels = g_value_get_boolean (value);
      self->configure_pending = TRUE;
      break;
    case PROP_RESIZE_METHOD:
      self->resize_method = g_value_get_enum (value);
      self->configure_pending = TRUE;
      break;
    case PROP_DECODER:
      self->decoder = g_value_get_enum (value);
      self->configure_pending = TRUE;
      break;
    case PROP_THRESHOLD:
      self->threshold = g_value_get_float (value);
      break;
    case PROP_IOU_THRESHOLD:
      self->iou_threshold = g_value_get_float (value);
      break;
    case PROP_LABELS_FILE:
      self->configure_pending |= replace_string (&self->labels_file, value);
      break;
    case PROP_INPUT_NAME:
      /* With input-shape, the model is reshaped at that input. */
      if (replace_string (&self->input_name, value)) {
        self->configure_pending = TRUE;
        self->reload_pending |= self->input_shape != NULL;
      }
      break;
    case PROP_INPUT_SHAPE:
      self->reload_pending |= replace_string (&self->input_shape, value);
      break;
    case PROP_INFERENCE_REGION:
      self->reload_pending |= self->inference_region
          != (GstClinferInferenceRegion) g_value_get_enum (value);
      self->inference_region = g_value_get_enum (value);
      break;
    case PROP_OBJECT_CLASS:
      g_free (self->object_class);
      self->object_class = g_value_dup_string (value);
      break;
    case PROP_TURN_LABEL:
      g_free (self->turn_label);
      self->turn_label = g_value_dup_string (value);
      break;
    case PROP_SILENT:
      self->silent = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_clinfer_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstClinfer *self = GST_CLINFER (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODEL:
      g_value_set_string (value, self->model_path);
      break;
    case PROP_CONFIG_FILE:
      g_value_set_string (value, self->config_file);
      break;
    case PROP_DEVICE:
      g_value_set_string (value, self->device);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_PERFORMANCE_HINT:
      g_value_set_enum (value, self->performance_hint);
      break;
    case PROP_NIREQ:
      g_value_set_uint (value, self->nireq);
      break;
    case PROP_BATCH_SIZE:
      g_value_set_uint (value, self->batch_size);
      break;
    case PROP_BATCH_TIMEOUT:
      g_value_set_uint64 (value, self->batch_timeout);
      break;
    case PROP_MEMORY_LIMIT:
      g_value_set_uint64 (value, self->memory_limit);
      break;
    case PROP_INFERENCE_INTERVAL:
      g_value_set_uint (value, self->inference_interval);
      break;
    case PROP_MEAN_VALUES:
      g_value_set_string (value, self->mean_values);
      break;
    case PROP_SCALE_VALUES:
      g_value_set_string (value, self->scale_values);
      break;
    case PROP_REVERSE_CHANNELS:
      g_value_set_boolean (value, self->reverse_channels);
      break;
    case PROP_RESIZE_METHOD:
      g_value_set_enum (value, self->resize_method);
      break;
    case PROP_DECODER:
      g_value_set_enum (value, self->decoder);
      break;
    case PROP_THRESHOLD:
      g_value_set_float (value, self->threshold);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_float (value, self->iou_threshold);
      break;
    case PROP_LABELS_FILE:
      g_value_set_string (value, self->labels_file);
      break;
    case PROP_INPUT_NAME:
      g_value_set_string (value, self->input_name);
      break;
    case PROP_INPUT_SHAPE:
      g_value_set_string (value, self->input_shape);
      break;
    case PROP_INFERENCE_REGION:
      g_value_set_enum (value, self->inference_region);
      break;
    case PROP_OBJECT_CLASS:
      g_value_set_string (value, self->object_class);
      break;
    case PROP_TURN_LABEL:
      g_value_set_string (value, self->turn_label);
      break;
    case PROP_MODEL_INSTANCE_ID:
      g_value_set_string (value, self->model_instance_id);
      break;
    case PROP_CUSTOM_LIB:
      g_value_set_string (value, self->custom_lib);
      break;
    case PROP_SILENT:
      g_value_set_boolean (value, self->silent);
      break;
    case PROP_LAST_MESSAGE:
      g_value_set_string (value, self->last_message);
      break;
    case PROP_BYTES_COPIED:
      g_value_set_uint64 (value, self->bytes_copied);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* Parses "1,2,3" (commas and/or spaces) into 1 or @n_channels values, all
 * of them when one value is given. */
static gboolean
parse_values (const gchar * text, gint n_channels, gfloat values[3],
    GError ** error)
{
  g_auto (GStrv) tokens = g_strsplit_set (text, ", \t", -1);
  gdouble parsed[3];
  gint n = 0, i;

  for (i = 0; tokens[i] != NULL; i++) {
    gchar *end;
    gdouble v;

    if (tokens[i][0] == '\0')
      continue;
    v = g_ascii_strtod (tokens[i], &end);
    if (*end != '\0' || !isfinite (v)) {
      g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
          "'%s' is not a number", tokens[i]);
      return FALSE;
    }
    if (n == 3) {
      n++;
      break;
    }
    parsed[n++] = v;
  }
  if (n != 1 && n != n_channels) {
    g_set_error (error, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "expected 1 or %d comma-separated numbers (the model input has %d "
        "channel%s), got \"%s\"", n_channels, n_channels,
        n_channels == 1 ? "" : "s", text);
    return FALSE;
  }
  for (i = 0; i < 3; i++)
    values[i] = (gfloat) parsed[n == 1 ? 0 : MIN (i, n - 1)];
  return TRUE;
}

/* Model name for the tensor meta: the file name without folder and
 * extension. */
static gchar *
model_name_from_path (const gchar * path)
{
  gchar *base = g_path_get_basename (path);
  gchar *dot = strrchr (base, '.');

  if (dot != NULL && dot != base)
    *dot = '\0';
  return base;
}

/* A frame waiting to be pushed: its inference in flight on @slot, or
 * (@slot NULL) a frame without inference behind such frames. */
typedef struct
{
  GstBuffer *buffer;            /* owned */
  GstClinferSlot *slot;
  guint64 frame_number;
} GstClinferPending;

/* The inference (or its absence) waited for the pre-processing too: the
 * frame it read may go (and with it the mapping's reference to its
 * buffer), and the slot is free. */
static void
slot_release (GstClinferSlot * slot)
{
  clinfer_preprocess_done (slot->preprocess);
  gst_clinfer_frame_unmap (&slot->frame);
  slot->busy = FALSE;
}

/* Ends @slot's inference in flight, if any, and lets go of its frame. */
static void
slot_settle (GstClinfer * self, GstClinferSlot * slot)
{
  if (!slot->busy)
    return;
  if (self->batcher != NULL)
    gst_clinfer_batcher_release (self->batcher, &slot->item);
  else
    clinfer_request_wait (slot->request, NULL);
  slot_release (slot);
}

/* Drops the frames waiting to be pushed (flush, stop): their inferences
 * are waited for, nothing is pushed. */
static void
drop_pending (GstClinfer * self)
{
  GstClinferPending *p;

  while ((p = g_queue_pop_head (&self->pending)) != NULL) {
    if (p->slot != NULL)
      slot_settle (self, p->slot);
    gst_buffer_unref (p->buffer);
    g_free (p);
  }
}

static void
free_slots (GstClinfer * self)
{
  guint i;

  drop_pending (self);
  for (i = 0; i < self->n_slots; i++) {
    GstClinferSlot *slot = &self->slots[i];

    slot_settle (self, slot);
    g_clear_pointer (&slot->preprocess, clinfer_preprocess_free);
    /* The request first: it references the output blocks' tensors. */
    g_clear_pointer (&slot->request, clinfer_request_free);
    g_clear_pointer (&slot->outputs, gst_clinfer_outputs_free);
  }
  g_clear_pointer (&self->slots, g_free);
  self->n_slots = 0;
  /* The shared model's (freed with it). */
  self->batcher = NULL;
}

static void
gst_clinfer_unload (GstClinfer * self)
{
  free_slots (self);
  GST_OBJECT_LOCK (self);
  gst_clear_object (&self->allocator);
  GST_OBJECT_UNLOCK (self);
  g_clear_pointer (&self->shared, gst_clinfer_model_cache_release);
  g_clear_pointer (&self->model_name, g_free);
  g_clear_pointer (&self->labels, g_ptr_array_unref);
  self->configured = FALSE;
  self->active_batch_size = 1;
  self->active_batch_timeout = 0;
  self->active_region = GST_CLINFER_REGION_FULL_FRAME;
}

/* On an OpenCL device: the allocator of OpenCL memory proposed to
 * upstream, in the compiled model's context. */
static void
make_allocator (GstClinfer * self)
{
#ifdef GST_CLINFER_HAVE_OPENCL
  ClinferRemoteContext *context =
      clinfer_compiled_get_remote_context (self->shared->compiled);
  GstAllocator *allocator;
  GError *err = NULL;

  if (context == NULL || clinfer_remote_context_get_property (context,
          CLINFER_REMOTE_PROP_OCL_CONTEXT) == NULL)
    return;
  allocator = gst_clinfer_cl_allocator_new (context, &err);
  if (allocator == NULL) {
    GST_WARNING_OBJECT (self, "no OpenCL memory for upstream: %s",
        err->message);
    g_clear_error (&err);
    return;
  }
  GST_OBJECT_LOCK (self);
  gst_object_replace ((GstObject **) & self->allocator,
      GST_OBJECT_CAST (allocator));
  GST_OBJECT_UNLOCK (self);
  gst_object_unref (allocator);
#endif
}

/* Reads and compiles the model (or takes the shared one) and creates this
 * element's request. Posts an error and returns FALSE on failure. */
static gboolean
gst_clinfer_load (GstClinfer * self)
{
  GstClinferModelSettings settings = { NULL, };
  g_autofree gchar *instance_id = NULL;
  g_autofree gchar *failed_lib = NULL;
  GError *err = NULL;
  gboolean conflict = FALSE;
  GstClinferInferenceRegion region;
  guint n_slots, i;

  GST_OBJECT_LOCK (self);
  settings.model_path = g_strdup (self->model_path);
  /* An empty config-file is the same as none. */
  if (self->config_file != NULL && *self->config_file != '\0')
    settings.config_file = g_strdup (self->config_file);
  settings.device = g_strdup (self->device);
  settings.threads = (gint) self->threads;
  n_slots = self->nireq;
  settings.hint = self->performance_hint == GST_CLINFER_HINT_AUTO
      ? (n_slots > 1 ? CLINFER_HINT_THROUGHPUT : CLINFER_HINT_NONE)
      : (ClinferPerformanceHint) self->performance_hint;
  settings.memory_limit = self->memory_limit;
  settings.batch_size = self->batch_size;
  settings.batch_timeout = self->batch_timeout;
  region = self->inference_region;
  if (self->input_shape != NULL && *self->input_shape != '\0') {
    settings.input_shape = g_strdup (self->input_shape);
    settings.input_name = g_strdup (self->input_name);
  }
  instance_id = g_strdup (self->model_instance_id);
  if (self->custom_lib != NULL && *self->custom_lib != '\0')
    settings.custom_lib = g_strdup (self->custom_lib);
  self->reload_pending = FALSE;
  GST_OBJECT_UNLOCK (self);

  gst_clinfer_unload (self);

  if (settings.model_path == NULL || *settings.model_path == '\0')
    goto no_model;
  if (region == GST_CLINFER_REGION_ROI_LIST && (n_slots > 1
          || settings.batch_size > 1))
    goto regions_in_flight;
  if (!g_file_test (settings.model_path, G_FILE_TEST_IS_REGULAR))
    goto model_not_found;
  if (settings.config_file != NULL
      && !g_file_test (settings.config_file, G_FILE_TEST_IS_REGULAR))
    goto config_not_found;

  self->shared = gst_clinfer_model_cache_acquire (instance_id, &settings,
      &conflict, &failed_lib, &err);
  if (self->shared == NULL && failed_lib != NULL)
    goto custom_lib_failed;
  if (self->shared == NULL)
    goto load_failed;
  if (conflict) {
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("model-instance-id \"%s\" is used by another element with another "
            "model, device, config-file, custom-lib, threads, "
            "performance-hint, memory-limit, batch-size or batch-timeout; "
            "this element reads and compiles its own copy", instance_id),
        (NULL));
  }
  self->max_in_flight = n_slots;
  if (n_slots > 1 && settings.batch_size == 1)
    n_slots++;
  self->slots = g_new0 (GstClinferSlot, n_slots);
  self->n_slots = n_slots;
  if (settings.batch_size > 1 && (instance_id == NULL || conflict)
      && n_slots < settings.batch_size) {
    GST_ELEMENT_WARNING (self, RESOURCE, SETTINGS,
        ("batch-size %u with nireq %u and no model shared with other "
            "elements (model-instance-id): every batch waits batch-timeout "
            "for frames that cannot come; set nireq to %u", settings.batch_size,
            n_slots, settings.batch_size), (NULL));
  }
  for (i = 0; i < n_slots && settings.batch_size == 1; i++) {
    self->slots[i].request =
        clinfer_compiled_create_request (self->shared->compiled, &err);
    if (self->slots[i].request == NULL)
      goto load_failed;
    /* Regions copy their outputs into their structures. */
    if (region == GST_CLINFER_REGION_FULL_FRAME)
      self->slots[i].outputs =
          gst_clinfer_outputs_new (self->shared->compiled);
  }
  self->model_name = model_name_from_path (settings.model_path);
  self->active_batch_size = settings.batch_size;
  self->active_region = region;
  self->active_batch_timeout = settings.batch_timeout;
  make_allocator (self);
  GST_INFO_OBJECT (self, "model %s on device %s, %d stream(s) of %d "
      "thread(s), %u frame(s) in flight, batches of %u",
      settings.model_path,
      clinfer_compiled_get_device_name (self->shared->compiled),
      clinfer_compiled_get_streams (self->shared->compiled),
      clinfer_compiled_get_threads (self->shared->compiled),
      self->max_in_flight, settings.batch_size);
  gst_clinfer_model_settings_clear (&settings);
  return TRUE;

  /* ERRORS */
no_model:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No model file given (property 'model')."), (NULL));
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
regions_in_flight:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("inference-region=roi-list infers each frame's regions before "
            "pushing it: nireq (%u) and batch-size (%u) must be 1 (regions "
            "of one frame are batched by themselves when the model allows).",
            n_slots, settings.batch_size), (NULL));
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
model_not_found:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Model file \"%s\" (property 'model') does not exist or is not a "
            "regular file.", settings.model_path), (NULL));
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
config_not_found:
  {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("Config file \"%s\" (property 'config-file') does not exist or is "
            "not a regular file.", settings.config_file), (NULL));
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
custom_lib_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, INIT,
        ("Could not load custom op library \"%s\" (property 'custom-lib'): "
            "%s", failed_lib, err->message), ("clinfer error code %d",
            err->code));
    g_clear_error (&err);
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
load_failed:
  {
    if (settings.config_file != NULL
        && strstr (err->message, settings.config_file) != NULL) {
      /* The engine's custom-layer loader names the file, line and layer. */
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
          ("Could not use config file \"%s\" (property 'config-file') with "
              "model \"%s\": %s", settings.config_file, settings.model_path,
              err->message), ("clinfer error code %d", err->code));
    } else if (g_error_matches (err, CLINFER_ERROR, CLINFER_ERROR_IO)) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("Could not read model file \"%s\" (property 'model'): %s",
              settings.model_path, err->message), (NULL));
    } else if (g_error_matches (err, CLINFER_ERROR,
            CLINFER_ERROR_OUT_OF_MEMORY)) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Model \"%s\" needs more memory than allowed (property "
              "'memory-limit', default the machine's memory): %s",
              settings.model_path, err->message),
          ("clinfer error code %d", err->code));
    } else {
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
          ("Could not use model \"%s\" on device %s%s%s: %s",
              settings.model_path, settings.device,
              settings.config_file ? " with config file " : "",
              settings.config_file ? settings.config_file : "", err->message),
          ("clinfer error code %d", err->code));
    }
    g_clear_error (&err);
    gst_clinfer_unload (self);
    gst_clinfer_model_settings_clear (&settings);
    return FALSE;
  }
}

/* Index of the model input fed with frames: input-name, else the first
 * input of rank 4, else input 0. -1 when input-name is unknown. */
static gint
find_video_input (ClinferCompiled * compiled, const gchar * name)
{
  guint i, n = clinfer_compiled_get_n_inputs (compiled);

  if (name != NULL)
    return clinfer_compiled_find_input (compiled, name);
  for (i = 0; i < n; i++) {
    ClinferPortInfo info;

    if (clinfer_compiled_get_input (compiled, i, &info)
        && info.shape.rank == 4)
      return (gint) i;
  }
  return n > 0 ? 0 : -1;
}

/* resize-method=fit-height into a dynamic width: the picture's width at
 * the model's height, at most MAX_FIT_WIDTH. */
static gint64
fit_height_width (gint64 width, gint64 height, gint64 model_height)
{
  return MIN (clinfer_preprocess_fit_height_width (width, height,
          model_height), MAX_FIT_WIDTH);
}

/* Works out layout, channels and size of the model input from its shape
 * (batch @batch or dynamic; channels of 3 or 1 at position 1: NCHW, at
 * the end: NHWC); dynamic height/width take the frame's. */
static gboolean
input_geometry (const ClinferPortInfo * info, const GstVideoInfo * vinfo,
    const GstClinferDecoder * decoder, gint64 batch,
    ClinferPreprocessConfig * cfg)
{
  const int64_t *d = info->shape.dims;
  gint64 c, h, w;

  if (info->shape.rank != 4 || (d[0] != batch && d[0] != CLINFER_DIM_DYNAMIC))
    return FALSE;
  if (d[1] == 3 || d[1] == 1) {
    cfg->layout = CLINFER_LAYOUT_NCHW;
    c = d[1];
    h = d[2];
    w = d[3];
  } else if (d[3] == 3 || d[3] == 1) {
    cfg->layout = CLINFER_LAYOUT_NHWC;
    c = d[3];
    h = d[1];
    w = d[2];
  } else {
    return FALSE;
  }
  if (h == CLINFER_DIM_DYNAMIC && w == CLINFER_DIM_DYNAMIC && decoder != NULL
      && decoder->model_size != NULL)
    decoder->model_size (GST_VIDEO_INFO_WIDTH (vinfo),
        GST_VIDEO_INFO_HEIGHT (vinfo), &w, &h);
  if (h == CLINFER_DIM_DYNAMIC)
    h = GST_VIDEO_INFO_HEIGHT (vinfo);
  if (w == CLINFER_DIM_DYNAMIC && cfg->resize == CLINFER_RESIZE_FIT_HEIGHT)
    w = fit_height_width (GST_VIDEO_INFO_WIDTH (vinfo),
        GST_VIDEO_INFO_HEIGHT (vinfo), h);
  else if (w == CLINFER_DIM_DYNAMIC)
    w = GST_VIDEO_INFO_WIDTH (vinfo);
  if (h < 1 || w < 1 || h > G_MAXINT / 4 || w > G_MAXINT / 4)
    return FALSE;
  cfg->channels = (gint) c;
  cfg->height = (gint) h;
  cfg->width = (gint) w;
  return TRUE;
}

/* Zero-filled tensors for the inputs other than the video one, dynamic
 * dims taken as 1. */
static gboolean
bind_other_inputs (GstClinfer * self, ClinferRequest * request,
    GError ** error)
{
  ClinferCompiled *compiled = self->shared->compiled;
  guint i, n = clinfer_compiled_get_n_inputs (compiled);

  for (i = 0; i < n; i++) {
    g_autoptr (ClinferTensor) t = NULL;
    ClinferPortInfo info;
    gint k;

    if (i == self->input_index || !clinfer_compiled_get_input (compiled, i,
            &info))
      continue;
    for (k = 0; k < info.shape.rank; k++) {
      if (info.shape.dims[k] < 0)
        info.shape.dims[k] = 1;
    }
    GST_INFO_OBJECT (self, "model input %s is fed zeros", info.name);
    t = clinfer_tensor_new (info.type, &info.shape, error);
    if (t == NULL
        || !clinfer_request_set_input_by_index (request, i, t, error))
      return FALSE;
  }
  return TRUE;
}

/* Sets up pre-processing, the input tensor, labels and the decoder for the
 * current model and caps. Posts an error and returns FALSE on failure. */
static gboolean
gst_clinfer_configure (GstClinfer * self)
{
  ClinferCompiled *compiled = self->shared->compiled;
  ClinferPreprocessConfig cfg;
  ClinferFrameInfo frame_info;
  guint i;
  g_autofree gchar *input_name = NULL, *mean = NULL, *scale = NULL;
  g_autofree gchar *labels_file = NULL;
  g_autofree gchar *shape_text = NULL;
  const gchar *meta_mean, *meta_scale, *meta_labels;
  ClinferPortInfo info;
  GstClinferDecoderType decoder;
  GError *err = NULL;
  gint index;

  memset (&cfg, 0, sizeof (cfg));
  GST_OBJECT_LOCK (self);
  input_name = g_strdup (self->input_name);
  mean = g_strdup (self->mean_values);
  scale = g_strdup (self->scale_values);
  labels_file = g_strdup (self->labels_file);
  decoder = self->decoder;
  cfg.resize = self->resize_method;
  cfg.reverse_channels = self->reverse_channels;
  cfg.threads = (gint) self->threads;
  self->configure_pending = FALSE;
  GST_OBJECT_UNLOCK (self);

  self->configured = FALSE;
  for (i = 0; i < self->n_slots; i++)
    g_clear_pointer (&self->slots[i].preprocess, clinfer_preprocess_free);
  g_clear_pointer (&self->labels, g_ptr_array_unref);

  /* The host rows use the model's threads per stream: with streams, the
   * streaming thread alone (a parallel region's idle threads would spin
   * on the cores the streams infer on). When the inferences run on stream
   * workers (nireq above 1, batches) the rows overlap them: one thread, or
   * the streaming thread's OpenMP team and a worker's would together ask
   * for more threads than cores, and libgomp then stops spinning in both
   * (BlazeFace 128 at 2 threads, nireq=2, performance-hint=none: 3.0 ms a
   * frame, against 0.95 with one thread for the rows, on 2 cores). */
  if (cfg.threads == 0)
    cfg.threads = clinfer_compiled_get_threads (compiled);
  if (self->n_slots > 1 || self->shared->settings.batch_size > 1)
    cfg.threads = 1;
  index = find_video_input (compiled, input_name);
  if (index < 0)
    goto no_such_input;
  self->input_index = (guint) index;
  clinfer_compiled_get_input (compiled, self->input_index, &info);
  self->decoder_impl = gst_clinfer_decoder_get (decoder);
  if (!input_geometry (&info, &self->vinfo, self->decoder_impl,
          self->shared->settings.batch_size, &cfg))
    goto not_video_input;
  cfg.type = info.type;
  if (cfg.type != CLINFER_TYPE_F32 && cfg.type != CLINFER_TYPE_F16
      && cfg.type != CLINFER_TYPE_U8)
    goto unsupported_type;

  /* Normalisation: property, else model metadata, else decoder family. */
  cfg.mean[0] = cfg.mean[1] = cfg.mean[2] = 0.f;
  cfg.scale[0] = cfg.scale[1] = cfg.scale[2] = 1.f;
  meta_mean = clinfer_model_get_metadata (self->shared->model,
      METADATA_MEAN_VALUES);
  meta_scale = clinfer_model_get_metadata (self->shared->model,
      METADATA_SCALE_VALUES);
  if (self->decoder_impl != NULL && self->decoder_impl->has_norm) {
    memcpy (cfg.mean, self->decoder_impl->mean, sizeof (cfg.mean));
    memcpy (cfg.scale, self->decoder_impl->scale, sizeof (cfg.scale));
  }
  /* An empty string is the same as unset. */
  if (mean != NULL && *mean == '\0')
    g_clear_pointer (&mean, g_free);
  if (scale != NULL && *scale == '\0')
    g_clear_pointer (&scale, g_free);
  if (mean == NULL && meta_mean != NULL)
    mean = g_strdup (meta_mean);
  if (scale == NULL && meta_scale != NULL)
    scale = g_strdup (meta_scale);
  if (mean != NULL && !parse_values (mean, cfg.channels, cfg.mean, &err))
    goto bad_mean;
  if (scale != NULL && !parse_values (scale, cfg.channels, cfg.scale, &err))
    goto bad_scale;
  if (cfg.scale[0] == 0.f || cfg.scale[1] == 0.f || cfg.scale[2] == 0.f)
    goto zero_scale;
  GST_INFO_OBJECT (self, "input %s: %dx%dx%d %s %s, mean %g,%g,%g scale "
      "%g,%g,%g", info.name, cfg.channels, cfg.height, cfg.width,
      cfg.layout == CLINFER_LAYOUT_NCHW ? "NCHW" : "NHWC",
      clinfer_element_type_name (cfg.type), cfg.mean[0], cfg.mean[1],
      cfg.mean[2], cfg.scale[0], cfg.scale[1], cfg.scale[2]);

  if (labels_file != NULL && *labels_file != '\0') {
    self->labels = gst_clinfer_labels_read (labels_file, &err);
    if (self->labels == NULL)
      goto bad_labels;
  } else if ((meta_labels = clinfer_model_get_metadata (self->shared->model,
              METADATA_CHARACTERS)) != NULL) {
    /* PaddleOCR's exports carry their character list. */
    self->labels = gst_clinfer_labels_parse (meta_labels,
        "the model's metadata \"" METADATA_CHARACTERS "\"", &err);
    if (self->labels == NULL)
      goto bad_model_labels;
    GST_INFO_OBJECT (self, "%u labels from the model's metadata \"%s\"",
        self->labels->len, METADATA_CHARACTERS);
  }
  /* With batch-size above 1 the outputs' first dim counts the frames of
   * a batch (a batch-1 model made batch-size, clinfer_model_set_batch ()):
   * the decoder then checks its frame's slice, on the first frame, as it
   * does for a dynamic batch. */
  if (self->decoder_impl != NULL && self->decoder_impl->check != NULL
      && self->shared->settings.batch_size == 1
      && !self->decoder_impl->check (compiled, &err))
    goto bad_decoder;

  if (!gst_clinfer_frame_info_from_video_info (&frame_info, &self->vinfo,
          &err))
    goto preprocess_failed;
  self->frame_info = frame_info;
  self->pp_config = cfg;
  if (self->shared->settings.batch_size > 1) {
    /* Each frame goes into a shared batch, not the slot's request. */
    self->batcher = gst_clinfer_model_cache_get_batcher (self->shared,
        self->input_index, &err);
    if (self->batcher == NULL)
      goto bind_failed;
  }
  for (i = 0; i < self->n_slots; i++) {
    GstClinferSlot *slot = &self->slots[i];

    slot->preprocess = clinfer_preprocess_new (compiled, &frame_info, &cfg,
        &err);
    if (slot->preprocess == NULL)
      goto preprocess_failed;
    if (self->batcher == NULL
        && (!clinfer_preprocess_bind (slot->preprocess, slot->request,
                self->input_index, &err)
            || !bind_other_inputs (self, slot->request, &err)))
      goto bind_failed;
  }
  GST_INFO_OBJECT (self, "pre-processing on %s: %s",
      clinfer_compiled_get_device_name (compiled),
      clinfer_preprocess_get_description (self->slots[0].preprocess));

  self->configured = TRUE;
  return TRUE;

  /* ERRORS */
no_such_input:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Model \"%s\" has no input named \"%s\" (property 'input-name').",
            self->shared->settings.model_path, input_name), (NULL));
    return FALSE;
  }
not_video_input:
  {
    shape_text = clinfer_shape_to_string (&info.shape);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Model input \"%s\" of shape %s cannot be fed from video: expected "
            "rank 4, batch %u (batch-size) or dynamic, 1 or 3 channels in "
            "NCHW or NHWC layout.", info.name, shape_text,
            self->shared->settings.batch_size), ("model %s",
            self->shared->settings.model_path));
    return FALSE;
  }
unsupported_type:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Model input \"%s\" has element type %s; frames can be fed as f32, "
            "f16 or u8 only.", info.name,
            clinfer_element_type_name (info.type)), (NULL));
    return FALSE;
  }
bad_mean:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid mean-values: %s", err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
bad_scale:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid scale-values: %s", err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
zero_scale:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid scale-values \"%s\": a scale of 0 divides by zero.", scale),
        (NULL));
    return FALSE;
  }
bad_labels:
  {
    if (g_error_matches (err, G_FILE_ERROR, G_FILE_ERROR_INVAL))
      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("Could not use labels file \"%s\" (property 'labels-file'): %s",
              labels_file, err->message), (NULL));
    else
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("Could not read labels file \"%s\" (property 'labels-file'): %s",
              labels_file, err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
bad_model_labels:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Model \"%s\" has labels that cannot be used: %s",
            self->shared->settings.model_path, err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
bad_decoder:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Model \"%s\" does not fit the decoder: %s",
            self->shared->settings.model_path, err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
preprocess_failed:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Cannot pre-process these frames: %s", err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
bind_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Cannot feed model \"%s\": %s", self->shared->settings.model_path,
            err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
}

static GstClinferTensorDataType
meta_data_type (ClinferElementType type)
{
  /* Both follow ONNX's TensorProto.DataType numbering. */
  return (GstClinferTensorDataType) type;
}

/* Puts every output of the last inference in a tensor meta: the bound
 * output block, or copies. Returns the meta (the decoders read it). */
static GstClinferTensorMeta *
attach_tensor_meta (GstClinfer * self, GstClinferSlot * slot, GstBuffer * buf,
    guint n_outputs)
{
  GstClinferTensorMeta *meta;
  guint i;

  meta = gst_buffer_add_clinfer_tensor_meta (buf, self->model_name);
  for (i = 0; self->batcher != NULL && i < n_outputs; i++) {
    g_autoptr (GBytes) bytes = NULL;
    ClinferElementType type;
    ClinferPortInfo info;
    ClinferShape s;

    /* The frame's slice of the batch's output, batch 1. */
    bytes = gst_clinfer_batcher_get_output (self->batcher, &slot->item, i,
        &s, &type);
    clinfer_compiled_get_output (self->shared->compiled, i, &info);
    if (!gst_clinfer_tensor_meta_add_tensor (meta, info.name,
            meta_data_type (type), (guint) MAX (s.rank, 0), s.dims, bytes))
      GST_WARNING_OBJECT (self, "output %u (%s) cannot be put in the tensor "
          "meta", i, info.name);
  }
  if (self->batcher != NULL)
    return meta;
  if (slot->outputs != NULL) {
    gst_clinfer_outputs_attach (slot->outputs, self->shared->compiled, meta);
    return meta;
  }
  for (i = 0; i < n_outputs; i++) {
    ClinferTensor *t = clinfer_request_get_output (slot->request, i);
    const ClinferShape *s = clinfer_tensor_get_shape (t);
    g_autoptr (GBytes) bytes = NULL;
    ClinferPortInfo info;

    clinfer_compiled_get_output (self->shared->compiled, i, &info);
    bytes = g_bytes_new (clinfer_tensor_get_const_data (t),
        clinfer_tensor_get_byte_size (t));
    if (!gst_clinfer_tensor_meta_add_tensor (meta, info.name,
            meta_data_type (clinfer_tensor_get_element_type (t)),
            (guint) MAX (s->rank, 0), s->dims, bytes))
      GST_WARNING_OBJECT (self, "output %u (%s) cannot be put in the tensor "
          "meta", i, info.name);
  }
  return meta;
}

static gdouble
roi_confidence (GstVideoRegionOfInterestMeta * roi)
{
  GstStructure *p;
  gdouble confidence = 0;

  p = gst_video_region_of_interest_meta_get_param (roi, "detection");
  if (p == NULL)
    p = gst_video_region_of_interest_meta_get_param (roi, "classification");
  if (p != NULL)
    gst_structure_get_double (p, "confidence", &confidence);
  return confidence;
}

static gint
compare_confidence (gconstpointer a, gconstpointer b)
{
  gdouble ca = roi_confidence (*(GstVideoRegionOfInterestMeta **) a);
  gdouble cb = roi_confidence (*(GstVideoRegionOfInterestMeta **) b);

  return ca < cb ? 1 : (ca > cb ? -1 : 0);
}

/* The ROI metas on @buf, (transfer container). */
static GPtrArray *
list_rois (GstBuffer * buf)
{
  GPtrArray *rois = g_ptr_array_new ();
  gpointer state = NULL;
  GstMeta *meta;

  while ((meta = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)))
    g_ptr_array_add (rois, meta);
  return rois;
}

/* One line describing the regions on @buf that are not in @before (those
 * this element added), best first. */
static gchar *
describe_results (GstClinfer * self, GstBuffer * buf, GPtrArray * before,
    guint64 frame_number)
{
  GString *s = g_string_new (NULL);
  GPtrArray *rois = list_rois (buf);
  guint i;

  for (i = rois->len; i-- > 0;) {
    if (g_ptr_array_find (before, g_ptr_array_index (rois, i), NULL))
      g_ptr_array_remove_index (rois, i);
  }
  g_ptr_array_sort (rois, compare_confidence);

  g_string_append_printf (s, "frame %" G_GUINT64_FORMAT " pts %"
      GST_TIME_FORMAT ": %u region%s", frame_number,
      GST_TIME_ARGS (GST_BUFFER_PTS (buf)), rois->len,
      rois->len == 1 ? "" : "s");
  for (i = 0; i < rois->len; i++) {
    GstVideoRegionOfInterestMeta *roi = g_ptr_array_index (rois, i);

    g_string_append_printf (s, "%s %s confidence=%.3f x=%u y=%u w=%u h=%u",
        i == 0 ? ":" : ";", g_quark_to_string (roi->roi_type),
        roi_confidence (roi), roi->x, roi->y, roi->w, roi->h);
  }
  g_ptr_array_unref (rois);
  return g_string_free (s, FALSE);
}

static gboolean
gst_clinfer_start (GstBaseTransform * trans)
{
  GstClinfer *self = GST_CLINFER (trans);

  self->frame_count = 0;
  self->have_caps = FALSE;
  return gst_clinfer_load (self);
}

static gboolean
gst_clinfer_stop (GstBaseTransform * trans)
{
  GstClinfer *self = GST_CLINFER (trans);

  gst_clinfer_unload (self);
  self->have_caps = FALSE;
  GST_OBJECT_LOCK (self);
  g_clear_pointer (&self->last_message, g_free);
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_clinfer_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstClinfer *self = GST_CLINFER (trans);
  GstVideoInfo vinfo;

  if (!gst_video_info_from_caps (&vinfo, incaps))
    goto invalid_caps;
  self->vinfo = vinfo;
  self->have_caps = TRUE;
  if (self->shared == NULL)
    return TRUE;                /* configured once the model is loaded */
  return gst_clinfer_configure (self);

  /* ERRORS */
invalid_caps:
  {
    GST_ERROR_OBJECT (self, "invalid caps %" GST_PTR_FORMAT, incaps);
    return FALSE;
  }
}

/* LATENCY: with nireq above 1 a frame waits for up to nireq - 1 later
 * frames before it is pushed, with batches up to batch-timeout more;
 * DRAIN: the frames in flight are pushed. */
static gboolean
gst_clinfer_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstClinfer *self = GST_CLINFER (trans);
  GstClockTime min, max, extra;
  gboolean live;

  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_DRAIN
      && !g_queue_is_empty (&self->pending))
    drain (self);
  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
          query))
    return FALSE;
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY
      && (self->n_slots > 1 || self->active_batch_size > 1)
      && self->have_caps
      && GST_VIDEO_INFO_FPS_N (&self->vinfo) > 0) {
    gst_query_parse_latency (query, &live, &min, &max);
    extra = gst_util_uint64_scale_int ((self->max_in_flight - 1) * GST_SECOND,
        GST_VIDEO_INFO_FPS_D (&self->vinfo), GST_VIDEO_INFO_FPS_N
        (&self->vinfo));
    /* A frame may wait batch-timeout for the rest of its batch. */
    if (self->active_batch_size > 1)
      extra += self->active_batch_timeout * GST_USECOND;
    GST_DEBUG_OBJECT (self, "%u requests in flight, batches of %u add %"
        GST_TIME_FORMAT, self->max_in_flight, self->active_batch_size,
        GST_TIME_ARGS (extra));
    gst_query_set_latency (query, live, min + extra,
        GST_CLOCK_TIME_IS_VALID (max) ? max + extra : max);
  }
  return TRUE;
}

static gboolean
gst_clinfer_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstClinfer *self = GST_CLINFER (trans);

  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP) {
    /* Frames in flight are dropped; inference-interval counts from the
     * first frame after a flush. */
    drop_pending (self);
    self->frame_count = 0;
  } else if (GST_EVENT_IS_SERIALIZED (event)
      && !g_queue_is_empty (&self->pending)) {
    /* EOS, caps, segments, gaps, ...: after the frames before them. */
    GstFlowReturn ret = drain (self);

    if (ret != GST_FLOW_OK)
      GST_DEBUG_OBJECT (self, "draining before %s: %s",
          GST_EVENT_TYPE_NAME (event), gst_flow_get_name (ret));
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* Makes (@allocator, @params) the first allocation param of @query, the
 * one upstream elements use; the others follow. */
static void
put_first_allocation_param (GstQuery * query, GstAllocator * allocator,
    const GstAllocationParams * params)
{
  guint i, n = gst_query_get_n_allocation_params (query);
  GstAllocator **others = g_newa (GstAllocator *, MAX (n, 1));
  GstAllocationParams *others_params = g_newa (GstAllocationParams,
      MAX (n, 1));

  for (i = 0; i < n; i++)
    gst_query_parse_nth_allocation_param (query, i, &others[i],
        &others_params[i]);
  while (gst_query_get_n_allocation_params (query) > 0)
    gst_query_remove_nth_allocation_param (query, 0);
  gst_query_add_allocation_param (query, allocator, params);
  for (i = 0; i < n; i++) {
    gst_query_add_allocation_param (query, others[i], &others_params[i]);
    if (others[i] != NULL)
      gst_object_unref (others[i]);
  }
}

/* On an OpenCL device, offers upstream a pool of OpenCL memory in the
 * compiled model's context, so frames are written straight into memory the
 * pre-processing kernel reads; any other memory is still read in place
 * (wrapped with CL_MEM_USE_HOST_PTR), best when page aligned, which the
 * allocation params ask for. */
static gboolean
gst_clinfer_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstClinfer *self = GST_CLINFER (trans);
  GstAllocator *allocator = NULL;
  GstAllocationParams params;
  GstBufferPool *pool;
  GstStructure *config;
  GstVideoInfo info;
  GstCaps *caps;
  gboolean need_pool;

  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  GST_OBJECT_LOCK (self);
  if (self->allocator != NULL)
    allocator = gst_object_ref (self->allocator);
  GST_OBJECT_UNLOCK (self);
  if (allocator == NULL)
    return TRUE;

  gst_query_parse_allocation (query, &caps, &need_pool);
  if (caps == NULL || !gst_video_info_from_caps (&info, caps)) {
    gst_object_unref (allocator);
    return TRUE;
  }
  gst_allocation_params_init (&params);
  params.align = GST_CLINFER_CL_ALIGN;
  put_first_allocation_param (query, allocator, &params);
  if (need_pool) {
    pool = gst_video_buffer_pool_new ();
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, info.size, 0, 0);
    gst_buffer_pool_config_set_allocator (config, allocator, &params);
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (gst_buffer_pool_set_config (pool, config))
      gst_query_add_allocation_pool (query, pool, info.size, 0, 0);
    else
      GST_WARNING_OBJECT (self, "OpenCL buffer pool refused its config");
    gst_object_unref (pool);
  }
  GST_DEBUG_OBJECT (self, "proposed OpenCL memory (need pool %d)", need_pool);
  gst_object_unref (allocator);
  return TRUE;
}

/* The results of @slot's finished inference (@ok, or @err, which is
 * consumed) onto @buf: the frame lets go, then the tensor meta, the
 * decoder's regions and last-message. Posts an error on failure. */
static GstFlowReturn
finish_frame (GstClinfer * self, GstClinferSlot * slot, GstBuffer * buf,
    guint64 frame_number, gboolean ok, GError * err)
{
  GstClinferDecodeContext ctx;
  GstClinferTensorMeta *tensor_meta;
  g_autoptr (GPtrArray) before = NULL;
  guint64 to_device = 0;
  gboolean silent;
  gfloat threshold, iou_threshold;
  gchar *message;

  slot_release (slot);
  if (!ok) {
    if (self->batcher != NULL)
      gst_clinfer_batcher_release (self->batcher, &slot->item);
    goto infer_failed;
  }

  GST_OBJECT_LOCK (self);
  threshold = self->threshold;
  iou_threshold = self->iou_threshold;
  silent = self->silent;
  GST_OBJECT_UNLOCK (self);

  if (slot->request != NULL)
    clinfer_request_get_copy_stats (slot->request, &to_device, NULL);
  GST_OBJECT_LOCK (self);
  self->bytes_copied = clinfer_preprocess_get_bytes_copied (slot->preprocess)
      + to_device;
  GST_OBJECT_UNLOCK (self);

  tensor_meta = attach_tensor_meta (self, slot, buf,
      clinfer_compiled_get_n_outputs (self->shared->compiled));
  if (self->batcher != NULL)
    gst_clinfer_batcher_release (self->batcher, &slot->item);

  if (self->decoder_impl != NULL) {
    if (!silent)
      before = list_rois (buf);
    memset (&ctx, 0, sizeof (ctx));
    ctx.buffer = buf;
    ctx.geometry = clinfer_preprocess_get_geometry (slot->preprocess);
    ctx.meta = tensor_meta;
    ctx.threshold = threshold;
    ctx.iou_threshold = iou_threshold;
    ctx.labels = self->labels;
    if (!self->decoder_impl->decode (&ctx, &err))
      goto decode_failed;
  }

  if (!silent) {
    if (before == NULL)
      before = g_ptr_array_new ();
    message = describe_results (self, buf, before, frame_number);
    GST_OBJECT_LOCK (self);
    g_free (self->last_message);
    self->last_message = message;
    GST_OBJECT_UNLOCK (self);
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_MESSAGE]);
  }
  return GST_FLOW_OK;

  /* ERRORS */
infer_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Inference with model \"%s\" failed: %s",
            self->shared->settings.model_path, err->message), (NULL));
    g_clear_error (&err);
    return GST_FLOW_ERROR;
  }
decode_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Decoder \"%s\" cannot read the outputs of model \"%s\": %s",
            self->decoder_impl->name, self->shared->settings.model_path,
            err->message), (NULL));
    g_clear_error (&err);
    return GST_FLOW_ERROR;
  }
}

/* Pre-processes @buf into @slot's request (the frame stays mapped until
 * finish_frame()) and binds its output blocks; with batches, into a place
 * in the shared batch, which starts by itself once full or its time is
 * up. Posts an error on failure. */
static gboolean
prepare_frame (GstClinfer * self, GstClinferSlot * slot, GstBuffer * buf)
{
  GError *err = NULL;
  gboolean ok;

  if (!gst_clinfer_frame_map (&slot->frame, clinfer_compiled_get_remote_context
          (self->shared->compiled), buf, &self->vinfo, &err))
    goto preprocess_failed;
  if (self->batcher != NULL)
    ok = gst_clinfer_batcher_submit (self->batcher, slot->preprocess,
        &slot->frame.frame, &slot->item, &err);
  else
    ok = clinfer_preprocess_run (slot->preprocess, &slot->frame.frame, &err);
  if (!ok) {
    gst_clinfer_frame_unmap (&slot->frame);
    goto preprocess_failed;
  }
  slot->busy = TRUE;
  if (slot->outputs != NULL
      && !gst_clinfer_outputs_bind (slot->outputs, slot->request, &err)) {
    finish_frame (self, slot, buf, 0, FALSE, err);
    return FALSE;
  }
  return TRUE;

  /* ERRORS */
preprocess_failed:
  {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Pre-processing failed: %s", err->message), (NULL));
    g_clear_error (&err);
    return FALSE;
  }
}

static void
slot_finished (ClinferRequest * request, const GError * error,
    gpointer user_data)
{
  GstClinferSlot *slot = user_data;

  g_atomic_int_set (&slot->finished, 1);
}

/* Starts @slot's inference (with batches: the batch starts by itself). */
static gboolean
slot_start (GstClinfer * self, GstClinferSlot * slot, GError ** error)
{
  if (self->batcher != NULL)
    return TRUE;
  g_atomic_int_set (&slot->finished, 0);
  return clinfer_request_start_async (slot->request, slot_finished, slot,
      error);
}

static gboolean
slot_is_finished (GstClinfer * self, GstClinferSlot * slot)
{
  if (self->batcher != NULL)
    return gst_clinfer_batcher_is_finished (self->batcher, &slot->item);
  return g_atomic_int_get (&slot->finished);
}

/* Waits for @slot's inference (or batch) and gives its result. */
static gboolean
slot_wait (GstClinfer * self, GstClinferSlot * slot, GError ** error)
{
  if (self->batcher != NULL)
    return gst_clinfer_batcher_wait (self->batcher, &slot->item, error);
  return clinfer_request_wait (slot->request, error);
}

/* Pushes the oldest waiting frame once its inference (if any) has ended:
 * waits for it when @block, else returns GST_FLOW_CUSTOM_SUCCESS when it
 * is still running. */
static GstFlowReturn
push_head (GstClinfer * self, gboolean block)
{
  GstClinferPending *p = g_queue_peek_head (&self->pending);
  GstFlowReturn ret = GST_FLOW_OK;
  GError *err = NULL;
  GstBuffer *buf;
  gboolean ok;

  if (p->slot != NULL && !block && !slot_is_finished (self, p->slot))
    return GST_FLOW_CUSTOM_SUCCESS;
  g_queue_pop_head (&self->pending);
  buf = p->buffer;
  if (p->slot != NULL) {
    ok = slot_wait (self, p->slot, &err);
    ret = finish_frame (self, p->slot, buf, p->frame_number, ok, err);
  }
  g_free (p);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (buf);
    return ret;
  }
  return gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), buf);
}

/* Pushes every waiting frame, in order, waiting for their inferences. */
static GstFlowReturn
drain (GstClinfer * self)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (ret == GST_FLOW_OK && !g_queue_is_empty (&self->pending))
    ret = push_head (self, TRUE);
  if (ret != GST_FLOW_OK)
    drop_pending (self);
  return ret;
}

static GstClinferSlot *
free_slot (GstClinfer * self)
{
  guint i;

  for (i = 0; i < self->n_slots; i++)
    if (!self->slots[i].busy)
      return &self->slots[i];
  return NULL;
}

static guint
n_busy (GstClinfer * self)
{
  guint i, n = 0;

  for (i = 0; i < self->n_slots; i++)
    n += self->slots[i].busy;
  return n;
}

/* nireq > 1: @buf is pre-processed into a free slot, its inference started
 * once fewer than nireq are running (waiting for the oldest frame until
 * then) and @buf waits in line; whatever has ended at the head of the
 * line is pushed. Without batches there is one slot more than nireq, so
 * the pre-processing reads the frame as soon as upstream hands it over,
 * while it is still in the caches, and the wait comes after: with the
 * wait first, the streaming thread slept while other threads evicted the
 * frame it had just been given, and the rows read it from memory (79
 * against 38 us a frame, 4 cameras on 2 cores; docs/performance.md). With
 * batches the frame waits in its batch. */
static GstFlowReturn
infer_async (GstClinfer * self, GstBuffer * buf, guint64 frame_number)
{
  GstClinferSlot *slot;
  GstClinferPending *p;
  GstFlowReturn ret;
  GError *err = NULL;

  while ((slot = free_slot (self)) == NULL) {
    ret = push_head (self, TRUE);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (!prepare_frame (self, slot, buf))
    return GST_FLOW_ERROR;
  while (n_busy (self) > self->max_in_flight) {
    ret = push_head (self, TRUE);
    if (ret != GST_FLOW_OK) {
      slot_release (slot);
      return ret;
    }
  }
  if (!slot_start (self, slot, &err))
    return finish_frame (self, slot, buf, frame_number, FALSE, err);
  p = g_new0 (GstClinferPending, 1);
  p->buffer = gst_buffer_ref (buf);
  p->slot = slot;
  p->frame_number = frame_number;
  g_queue_push_tail (&self->pending, p);
  /* Earlier frames whose inference has ended go now; @buf itself waits
   * for a later call (the base class still holds it: no meta can be
   * added yet). */
  ret = GST_FLOW_OK;
  while (ret == GST_FLOW_OK && g_queue_peek_head (&self->pending) != p)
    ret = push_head (self, FALSE);
  if (ret == GST_FLOW_CUSTOM_SUCCESS)
    ret = GST_FLOW_OK;
  return ret == GST_FLOW_OK ? GST_BASE_TRANSFORM_FLOW_DROPPED : ret;
}

/* One region of a frame to infer: where it is, its pre-processing. */
typedef struct
{
  GstVideoRegionOfInterestMeta *roi;
  gint x, y, w, h;              /* the crop, in frame pixels */
  ClinferFrameInfo info;
  ClinferFrame frame;
  ClinferPreprocess *pp;
} GstClinferRegion;

/* Whether a classification on @roi says @label (turn-label) with enough
 * confidence. */
static gboolean
region_turned (GstVideoRegionOfInterestMeta * roi, const gchar * label)
{
  GList *l;

  for (l = roi->params; label != NULL && l != NULL; l = l->next) {
    const GstStructure *s = l->data;
    gdouble confidence = 0;

    if (gst_structure_has_name (s, "classification")
        && g_strcmp0 (gst_structure_get_string (s, "label"), label) == 0
        && gst_structure_get_double (s, "confidence", &confidence)
        && confidence >= TURN_CONFIDENCE)
      return TRUE;
  }
  return FALSE;
}

/* A region's outputs onto it: each as a "tensor" structure (name, model,
 * type, dims, data; a copy) and through the decoder. @t are the outputs
 * of the region's batch, @item its place there (@batched: the outputs'
 * first dimension is the batch). */
static gboolean
region_results (GstClinfer * self, GstBuffer * buf, GstClinferRegion * r,
    guint item, gboolean batched, GError ** error)
{
  ClinferCompiled *compiled = self->shared->compiled;
  guint i, k, n = clinfer_compiled_get_n_outputs (compiled);
  GstClinferDecodeContext ctx;
  GstClinferTensorMeta *meta;
  GstBuffer *holder = gst_buffer_new ();
  gboolean ok = TRUE;

  /* The decoders read a tensor meta: one on a buffer of its own. */
  meta = gst_buffer_add_clinfer_tensor_meta (holder, self->model_name);
  for (i = 0; i < n; i++) {
    ClinferTensor *t = clinfer_request_get_output (self->slots[0].request, i);
    ClinferShape shape = *clinfer_tensor_get_shape (t);
    gsize size = clinfer_tensor_get_byte_size (t);
    const guint8 *data = clinfer_tensor_get_const_data (t);
    GValue dims = G_VALUE_INIT, dim = G_VALUE_INIT;
    g_autoptr (GBytes) bytes = NULL;
    GstStructure *s;
    ClinferPortInfo info;

    clinfer_compiled_get_output (compiled, i, &info);
    if (batched) {
      /* Checked by the caller: dims[0] is the batch. */
      size /= (gsize) shape.dims[0];
      data += item * size;
      shape.dims[0] = 1;
    }
    bytes = g_bytes_new (data, size);
    gst_clinfer_tensor_meta_add_tensor (meta, info.name,
        meta_data_type (clinfer_tensor_get_element_type (t)),
        (guint) MAX (shape.rank, 0), shape.dims, bytes);
    gst_value_array_init (&dims, shape.rank);
    g_value_init (&dim, G_TYPE_INT64);
    for (k = 0; k < (guint) MAX (shape.rank, 0); k++) {
      g_value_set_int64 (&dim, shape.dims[k]);
      gst_value_array_append_value (&dims, &dim);
    }
    g_value_unset (&dim);
    s = gst_structure_new ("tensor", "name", G_TYPE_STRING, info.name,
        "model", G_TYPE_STRING, self->model_name, "type", G_TYPE_STRING,
        gst_clinfer_tensor_data_type_get_name (meta_data_type
            (clinfer_tensor_get_element_type (t))), "data", G_TYPE_BYTES,
        bytes, NULL);
    gst_structure_take_value (s, "dims", &dims);
    gst_video_region_of_interest_meta_add_param (r->roi, s);
  }
  if (self->decoder_impl != NULL) {
    memset (&ctx, 0, sizeof (ctx));
    ctx.buffer = buf;
    ctx.geometry = clinfer_preprocess_get_geometry (r->pp);
    ctx.meta = meta;
    GST_OBJECT_LOCK (self);
    ctx.threshold = self->threshold;
    ctx.iou_threshold = self->iou_threshold;
    GST_OBJECT_UNLOCK (self);
    ctx.labels = self->labels;
    ctx.roi = r->roi;
    ctx.origin_x = r->x;
    ctx.origin_y = r->y;
    ok = self->decoder_impl->decode (&ctx, error);
  }
  gst_buffer_unref (holder);
  return ok;
}

/* inference-region=roi-list: every wanted region of @buf cropped,
 * pre-processed and inferred (in batches of up to MAX_REGION_BATCH when
 * the model's batch is dynamic, else one by one); results onto the
 * regions. Posts an error on failure. */
static GstFlowReturn
infer_regions (GstClinfer * self, GstBuffer * buf)
{
  ClinferCompiled *compiled = self->shared->compiled;
  GstClinferSlot *slot = &self->slots[0];
  g_auto (GStrv) classes = NULL;
  g_autofree gchar *turn_label = NULL;
  g_autoptr (GArray) regions = NULL;
  GstVideoRegionOfInterestMeta *roi;
  gpointer state = NULL;
  ClinferPortInfo info;
  GError *err = NULL;
  guint group, first, k, n, o;
  gboolean dynamic_batch, fit_width;
  ClinferPreprocessConfig cfg;

  GST_OBJECT_LOCK (self);
  if (self->object_class != NULL && *self->object_class != '\0')
    classes = g_strsplit (self->object_class, ",", -1);
  if (self->turn_label != NULL && *self->turn_label != '\0')
    turn_label = g_strdup (self->turn_label);
  GST_OBJECT_UNLOCK (self);

  /* The regions first: results may add more (a detector on regions). */
  regions = g_array_new (FALSE, TRUE, sizeof (GstClinferRegion));
  while ((roi = (GstVideoRegionOfInterestMeta *)
          gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) != NULL) {
    GstClinferRegion r = { roi, (gint) roi->x, (gint) roi->y, (gint) roi->w,
      (gint) roi->h
    };

    if (gst_clinfer_roi_type_wanted (roi, classes) && roi->w > 0 && roi->h > 0)
      g_array_append_val (regions, r);
  }
  n = regions->len;
  if (n == 0)
    return GST_FLOW_OK;

  clinfer_compiled_get_input (compiled, self->input_index, &info);
  dynamic_batch = info.shape.dims[0] == CLINFER_DIM_DYNAMIC;
  fit_width = self->pp_config.resize == CLINFER_RESIZE_FIT_HEIGHT
      && info.shape.dims[self->pp_config.layout == CLINFER_LAYOUT_NCHW
      ? 3 : 2] == CLINFER_DIM_DYNAMIC;
  group = dynamic_batch ? MAX_REGION_BATCH : 1;
  for (first = 0; first < n; first += group) {
    guint count = MIN (group, n - first), m = 0;
    g_autoptr (ClinferTensor) input = NULL;
    ClinferRemoteTensor *remote_input = NULL;
    gboolean ok = TRUE;

    /* The frame stays mapped (a reference to @buf) until the inference
     * has read it; the results, which add metas, come after. */
    if (!gst_clinfer_frame_map (&slot->frame,
            clinfer_compiled_get_remote_context (compiled), buf,
            &self->vinfo, &err))
      goto preprocess_failed;
    /* The crops (those outside the frame have nothing to read); with
     * fit-height into a dynamic width, the group's width is its widest
     * region's at the model's height (the others padded). */
    cfg = self->pp_config;
    if (fit_width)
      cfg.width = 1;
    for (k = first; k < first + count; k++) {
      GstClinferRegion *r = &g_array_index (regions, GstClinferRegion, k);

      if (!gst_clinfer_frame_crop (&slot->frame, &self->vinfo,
              &self->frame_info, &r->x, &r->y, &r->w, &r->h, &r->info,
              &r->frame))
        r->roi = NULL;
      else if (fit_width)
        cfg.width = MAX (cfg.width, (gint) fit_height_width (r->w, r->h,
                cfg.height));
    }
    /* Each region its own pre-processing (its size), one input. */
    for (k = first; k < first + count && ok; k++) {
      GstClinferRegion *r = &g_array_index (regions, GstClinferRegion, k);

      ClinferPreprocessConfig rcfg = cfg;

      if (r->roi == NULL)
        continue;
      rcfg.rotate_180 = region_turned (r->roi, turn_label);
      r->pp = clinfer_preprocess_new (compiled, &r->info, &rcfg, &err);
      ok = r->pp != NULL && (m > 0
          || clinfer_preprocess_new_batch_input (r->pp, count, &input,
              &remote_input, &err))
          && clinfer_preprocess_run_item (r->pp, &r->frame, input,
          remote_input, m, &err);
      m++;
    }
    if (ok && m > 0) {
      ok = (input != NULL
          ? clinfer_request_set_input_by_index (slot->request,
              self->input_index, input, &err)
          : clinfer_request_set_remote_input_by_index (slot->request,
              self->input_index, remote_input, &err))
          && clinfer_request_infer (slot->request, &err);
    }
    for (k = first; k < first + count; k++)
      clinfer_preprocess_done (g_array_index (regions, GstClinferRegion,
              k).pp);
    gst_clinfer_frame_unmap (&slot->frame);
    for (o = 0; ok && m > 0 && dynamic_batch
        && o < clinfer_compiled_get_n_outputs (compiled); o++) {
      const ClinferShape *shape =
          clinfer_tensor_get_shape (clinfer_request_get_output (slot->request,
              o));

      if (shape->rank < 1 || shape->dims[0] != (gint64) count) {
        g_autofree gchar *text = clinfer_shape_to_string (shape);

        g_set_error (&err, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
            "output %u of a batch of %u regions has shape %s: expected the "
            "batch first", o, count, text);
        ok = FALSE;
      }
    }
    for (k = first, m = 0; ok && k < first + count; k++) {
      GstClinferRegion *r = &g_array_index (regions, GstClinferRegion, k);

      if (r->roi != NULL)
        ok = region_results (self, buf, r, m++, dynamic_batch, &err);
    }
    for (k = first; k < first + count; k++)
      g_clear_pointer (&g_array_index (regions, GstClinferRegion, k).pp,
          clinfer_preprocess_free);
    g_clear_pointer (&remote_input, clinfer_remote_tensor_unref);
    if (!ok)
      goto region_failed;
  }
  return GST_FLOW_OK;

  /* ERRORS */
preprocess_failed:
  {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Pre-processing failed: %s", err->message), (NULL));
    g_clear_error (&err);
    return GST_FLOW_ERROR;
  }
region_failed:
  {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Inference on regions with model \"%s\" failed: %s",
            self->shared->settings.model_path, err->message), (NULL));
    g_clear_error (&err);
    return GST_FLOW_ERROR;
  }
}

static GstFlowReturn
gst_clinfer_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstClinfer *self = GST_CLINFER (trans);
  GstClinferSlot *slot;
  GstClinferPending *p;
  GError *err = NULL;
  gboolean reload, reconfigure, ok;
  GstFlowReturn ret;
  guint64 frame_number;
  guint interval;

  GST_OBJECT_LOCK (self);
  reload = self->reload_pending;
  reconfigure = self->configure_pending;
  interval = self->inference_interval;
  GST_OBJECT_UNLOCK (self);

  if (!self->have_caps)
    goto not_negotiated;
  if (reload || reconfigure || self->shared == NULL || !self->configured) {
    /* Frames in flight finish with the settings they started with. */
    ret = drain (self);
    if (ret != GST_FLOW_OK)
      return ret;
  }
  if (reload || self->shared == NULL) {
    GST_INFO_OBJECT (self, "loading the model again (settings changed)");
    if (!gst_clinfer_load (self))
      return GST_FLOW_ERROR;
    reconfigure = TRUE;
    /* Upstream asks for memory again: the device (and so the memory
     * worth offering) may have changed. */
    gst_base_transform_reconfigure_sink (trans);
  }
  if ((reconfigure || !self->configured) && !gst_clinfer_configure (self))
    return GST_FLOW_ERROR;

  frame_number = self->frame_count++;
  if (frame_number % interval != 0) {
    /* No inference; behind frames in flight it waits its turn. */
    if (g_queue_is_empty (&self->pending))
      return GST_FLOW_OK;
    p = g_new0 (GstClinferPending, 1);
    p->buffer = gst_buffer_ref (buf);
    p->frame_number = frame_number;
    g_queue_push_tail (&self->pending, p);
    return GST_BASE_TRANSFORM_FLOW_DROPPED;
  }
  if (self->active_region == GST_CLINFER_REGION_ROI_LIST)
    return infer_regions (self, buf);
  if (self->n_slots > 1)
    return infer_async (self, buf, frame_number);

  slot = &self->slots[0];
  if (!prepare_frame (self, slot, buf))
    return GST_FLOW_ERROR;
  if (self->batcher != NULL)
    ok = gst_clinfer_batcher_wait (self->batcher, &slot->item, &err);
  else
    ok = clinfer_request_infer (slot->request, &err);
  return finish_frame (self, slot, buf, frame_number, ok, err);

  /* ERRORS */
not_negotiated:
  {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (NULL),
        ("received a buffer before caps"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
}
