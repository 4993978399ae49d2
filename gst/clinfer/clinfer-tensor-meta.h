/* GstClinferTensorMeta: the output tensors of a network run on a video frame,
 * attached to the frame's GstBuffer by the clinfer element.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 *
 * Applications read it with:
 *
 *   #include <gst/clinfer/clinfer-tensor-meta.h>
 *   // pkg-config --cflags --libs gstreamer-clinfer-1.0
 *
 *   GstClinferTensorMeta *meta = gst_buffer_get_clinfer_tensor_meta (buffer);
 *   const GstClinferTensor *t = gst_clinfer_tensor_meta_get_tensor (meta, 0);
 *   gsize size;
 *   const gfloat *data = gst_clinfer_tensor_get_data (t, &size);
 *
 * This header does not need the clinfer engine: the meta library only
 * depends on GStreamer core.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/**
 * GstClinferTensorDataType:
 *
 * Element type of a tensor. The values are ONNX's TensorProto.DataType
 * (and clinfer's ClinferElementType), so they can be compared with both.
 */
typedef enum {
  GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED = 0,
  GST_CLINFER_TENSOR_DATA_TYPE_F32 = 1,
  GST_CLINFER_TENSOR_DATA_TYPE_U8 = 2,
  GST_CLINFER_TENSOR_DATA_TYPE_I8 = 3,
  GST_CLINFER_TENSOR_DATA_TYPE_U16 = 4,
  GST_CLINFER_TENSOR_DATA_TYPE_I16 = 5,
  GST_CLINFER_TENSOR_DATA_TYPE_I32 = 6,
  GST_CLINFER_TENSOR_DATA_TYPE_I64 = 7,
  GST_CLINFER_TENSOR_DATA_TYPE_BOOL = 9,
  GST_CLINFER_TENSOR_DATA_TYPE_F16 = 10,
  GST_CLINFER_TENSOR_DATA_TYPE_F64 = 11,
  GST_CLINFER_TENSOR_DATA_TYPE_U32 = 12,
  GST_CLINFER_TENSOR_DATA_TYPE_U64 = 13,
  GST_CLINFER_TENSOR_DATA_TYPE_BF16 = 16,
} GstClinferTensorDataType;

#define GST_CLINFER_TENSOR_MAX_DIMS 8

/**
 * GstClinferTensor:
 * @name: the output's name in the model (e.g. "Identity:0")
 * @data_type: element type of @data
 * @n_dims: number of dimensions (0 for a scalar)
 * @dims: extents, outermost first; only the first @n_dims are used
 * @data: the elements, row-major and contiguous (n elements * element size
 *   bytes), in host byte order
 *
 * One output tensor. Owned by its #GstClinferTensorMeta; read-only.
 */
typedef struct {
  gchar *name;
  GstClinferTensorDataType data_type;
  guint n_dims;
  gint64 dims[GST_CLINFER_TENSOR_MAX_DIMS];
  GBytes *data;
} GstClinferTensor;

/**
 * GstClinferTensorMeta:
 * @meta: parent #GstMeta
 * @model_name: the model the tensors come from (file name of the model
 *   without its folder and extension, e.g. "face_detection_front_128x128_barracuda")
 * @n_tensors: number of tensors
 * @tensors: (array length=n_tensors): the model's outputs, in the model's
 *   output order
 *
 * Every output of one inference on the buffer's frame. The meta has no
 * tags: elements that copy untagged metas (queue, tee, videoconvert,
 * videoscale, most filters) keep it, since the tensors describe the
 * picture's content, not its pixels.
 */
typedef struct {
  GstMeta meta;

  gchar *model_name;
  guint n_tensors;
  GstClinferTensor *tensors;
} GstClinferTensorMeta;

GType gst_clinfer_tensor_meta_api_get_type (void);
#define GST_CLINFER_TENSOR_META_API_TYPE (gst_clinfer_tensor_meta_api_get_type ())

const GstMetaInfo *gst_clinfer_tensor_meta_get_info (void);
#define GST_CLINFER_TENSOR_META_INFO (gst_clinfer_tensor_meta_get_info ())

/* (transfer none) The first tensor meta on @buffer, or NULL. */
#define gst_buffer_get_clinfer_tensor_meta(b) \
  ((GstClinferTensorMeta *) gst_buffer_get_meta ((b), GST_CLINFER_TENSOR_META_API_TYPE))

/**
 * gst_clinfer_buffer_get_tensor_meta:
 * @buffer: a buffer
 *
 * The function behind gst_buffer_get_clinfer_tensor_meta(), for language
 * bindings (GObject introspection: GstClinfer.buffer_get_tensor_meta()).
 *
 * Returns: (transfer none) (nullable): the first tensor meta on @buffer
 */
GstClinferTensorMeta *gst_clinfer_buffer_get_tensor_meta (GstBuffer * buffer);

/* (transfer none) Adds an empty tensor meta for @model_name to the writable
 * @buffer; fill it with gst_clinfer_tensor_meta_add_tensor(). */
GstClinferTensorMeta *gst_buffer_add_clinfer_tensor_meta (GstBuffer * buffer,
    const gchar * model_name);

/* Appends a tensor. @data (transfer none: a reference is taken) must hold
 * exactly the product of @dims elements of @data_type. Returns FALSE, adding
 * nothing, when @n_dims is larger than GST_CLINFER_TENSOR_MAX_DIMS, the type
 * is unknown or the size does not match. */
gboolean gst_clinfer_tensor_meta_add_tensor (GstClinferTensorMeta * meta,
    const gchar * name, GstClinferTensorDataType data_type, guint n_dims,
    const gint64 * dims, GBytes * data);

guint gst_clinfer_tensor_meta_get_n_tensors (const GstClinferTensorMeta * meta);
/* (transfer none) Tensor @index, or NULL when out of range. */
const GstClinferTensor *gst_clinfer_tensor_meta_get_tensor (const GstClinferTensorMeta * meta,
    guint index);
/* (transfer none) The tensor called @name, or NULL. */
const GstClinferTensor *gst_clinfer_tensor_meta_get_tensor_by_name (const GstClinferTensorMeta * meta,
    const gchar * name);

/* (transfer none) The tensor's elements; @size (may be NULL) receives
 * their size in bytes. */
gconstpointer gst_clinfer_tensor_get_data (const GstClinferTensor * tensor,
    gsize * size);
/**
 * gst_clinfer_tensor_get_name:
 * @tensor: a tensor
 *
 * Returns: (transfer none): the output's name in the model
 */
const gchar *gst_clinfer_tensor_get_name (const GstClinferTensor * tensor);
/**
 * gst_clinfer_tensor_get_dims:
 * @tensor: a tensor
 * @n_dims: (out): number of dimensions
 *
 * Returns: (transfer none) (array length=n_dims): the extents, outermost
 *   first
 */
const gint64 *gst_clinfer_tensor_get_dims (const GstClinferTensor * tensor,
    guint * n_dims);
/**
 * gst_clinfer_tensor_get_bytes:
 * @tensor: a tensor
 *
 * Returns: (transfer none): the elements, row-major, in host byte order
 */
GBytes *gst_clinfer_tensor_get_bytes (const GstClinferTensor * tensor);
/* Number of elements (product of the dims; 1 for a scalar). */
gsize gst_clinfer_tensor_get_n_elements (const GstClinferTensor * tensor);
/* Element @index (row-major) as a double: every data type converts (f16 and
 * bf16 widened, integers and bool by value); 0 when @index is out of range. */
gdouble gst_clinfer_tensor_get_value (const GstClinferTensor * tensor,
    gsize index);
/* Size in bytes of one element of @data_type, 0 when unknown. */
gsize gst_clinfer_tensor_data_type_get_size (GstClinferTensorDataType data_type);
/* Short name: "f32", "u8", "f16", ...; "undefined" when unknown. */
const gchar *gst_clinfer_tensor_data_type_get_name (GstClinferTensorDataType data_type);
/* The data type called @name ("f32", ...), or
 * GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED. */
GstClinferTensorDataType gst_clinfer_tensor_data_type_from_name (const gchar * name);

G_END_DECLS
