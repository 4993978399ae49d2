/* GstClinferTensorMeta: registration, init/free/transform and accessors.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "clinfer-tensor-meta.h"

#include <string.h>

GType
gst_clinfer_tensor_meta_api_get_type (void)
{
  static GType type = 0;
  /* No tags: the tensors describe what the picture shows, so they stay
   * valid through colour conversion and scaling. */
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (&type)) {
    GType _type = gst_meta_api_type_register ("GstClinferTensorMetaAPI", tags);
    g_once_init_leave (&type, _type);
  }
  return type;
}

static gboolean
gst_clinfer_tensor_meta_init (GstMeta * meta, gpointer params,
    GstBuffer * buffer)
{
  GstClinferTensorMeta *tmeta = (GstClinferTensorMeta *) meta;

  tmeta->model_name = NULL;
  tmeta->n_tensors = 0;
  tmeta->tensors = NULL;
  return TRUE;
}

static void
gst_clinfer_tensor_meta_free (GstMeta * meta, GstBuffer * buffer)
{
  GstClinferTensorMeta *tmeta = (GstClinferTensorMeta *) meta;
  guint i;

  for (i = 0; i < tmeta->n_tensors; i++) {
    g_free (tmeta->tensors[i].name);
    g_bytes_unref (tmeta->tensors[i].data);
  }
  g_free (tmeta->tensors);
  g_free (tmeta->model_name);
  tmeta->tensors = NULL;
  tmeta->n_tensors = 0;
  tmeta->model_name = NULL;
}

/* Every transform (copy, scale, ...) keeps the tensors as they are: they
 * are the network's answer for the picture, not pixel data. The tensor
 * bytes are shared (GBytes is refcounted and immutable). */
static gboolean
gst_clinfer_tensor_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * buffer, GQuark type, gpointer data)
{
  GstClinferTensorMeta *smeta = (GstClinferTensorMeta *) meta;
  GstClinferTensorMeta *dmeta;
  guint i;

  dmeta = gst_buffer_add_clinfer_tensor_meta (dest, smeta->model_name);
  if (dmeta == NULL)
    return FALSE;
  for (i = 0; i < smeta->n_tensors; i++) {
    const GstClinferTensor *t = &smeta->tensors[i];

    gst_clinfer_tensor_meta_add_tensor (dmeta, t->name, t->data_type,
        t->n_dims, t->dims, t->data);
  }
  return TRUE;
}

const GstMetaInfo *
gst_clinfer_tensor_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;

  if (g_once_init_enter ((GstMetaInfo **) & info)) {
    const GstMetaInfo *mi = gst_meta_register (GST_CLINFER_TENSOR_META_API_TYPE,
        "GstClinferTensorMeta", sizeof (GstClinferTensorMeta),
        gst_clinfer_tensor_meta_init, gst_clinfer_tensor_meta_free,
        gst_clinfer_tensor_meta_transform);
    g_once_init_leave ((GstMetaInfo **) & info, (GstMetaInfo *) mi);
  }
  return info;
}

GstClinferTensorMeta *
gst_buffer_add_clinfer_tensor_meta (GstBuffer * buffer,
    const gchar * model_name)
{
  GstClinferTensorMeta *meta;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  meta = (GstClinferTensorMeta *) gst_buffer_add_meta (buffer,
      GST_CLINFER_TENSOR_META_INFO, NULL);
  if (meta == NULL)
    return NULL;
  meta->model_name = g_strdup (model_name);
  return meta;
}

gsize
gst_clinfer_tensor_data_type_get_size (GstClinferTensorDataType data_type)
{
  switch (data_type) {
    case GST_CLINFER_TENSOR_DATA_TYPE_U8:
    case GST_CLINFER_TENSOR_DATA_TYPE_I8:
    case GST_CLINFER_TENSOR_DATA_TYPE_BOOL:
      return 1;
    case GST_CLINFER_TENSOR_DATA_TYPE_U16:
    case GST_CLINFER_TENSOR_DATA_TYPE_I16:
    case GST_CLINFER_TENSOR_DATA_TYPE_F16:
    case GST_CLINFER_TENSOR_DATA_TYPE_BF16:
      return 2;
    case GST_CLINFER_TENSOR_DATA_TYPE_F32:
    case GST_CLINFER_TENSOR_DATA_TYPE_I32:
    case GST_CLINFER_TENSOR_DATA_TYPE_U32:
      return 4;
    case GST_CLINFER_TENSOR_DATA_TYPE_I64:
    case GST_CLINFER_TENSOR_DATA_TYPE_U64:
    case GST_CLINFER_TENSOR_DATA_TYPE_F64:
      return 8;
    case GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED:
    default:
      return 0;
  }
}

const gchar *
gst_clinfer_tensor_data_type_get_name (GstClinferTensorDataType data_type)
{
  switch (data_type) {
    case GST_CLINFER_TENSOR_DATA_TYPE_F32:
      return "f32";
    case GST_CLINFER_TENSOR_DATA_TYPE_U8:
      return "u8";
    case GST_CLINFER_TENSOR_DATA_TYPE_I8:
      return "i8";
    case GST_CLINFER_TENSOR_DATA_TYPE_U16:
      return "u16";
    case GST_CLINFER_TENSOR_DATA_TYPE_I16:
      return "i16";
    case GST_CLINFER_TENSOR_DATA_TYPE_I32:
      return "i32";
    case GST_CLINFER_TENSOR_DATA_TYPE_I64:
      return "i64";
    case GST_CLINFER_TENSOR_DATA_TYPE_BOOL:
      return "bool";
    case GST_CLINFER_TENSOR_DATA_TYPE_F16:
      return "f16";
    case GST_CLINFER_TENSOR_DATA_TYPE_F64:
      return "f64";
    case GST_CLINFER_TENSOR_DATA_TYPE_U32:
      return "u32";
    case GST_CLINFER_TENSOR_DATA_TYPE_U64:
      return "u64";
    case GST_CLINFER_TENSOR_DATA_TYPE_BF16:
      return "bf16";
    case GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED:
    default:
      return "undefined";
  }
}

static gboolean
n_elements_of (guint n_dims, const gint64 * dims, gsize * n)
{
  gsize count = 1;
  guint i;

  for (i = 0; i < n_dims; i++) {
    if (dims[i] < 0)
      return FALSE;
    if (dims[i] > 0 && count > G_MAXSIZE / (gsize) dims[i])
      return FALSE;
    count *= (gsize) dims[i];
  }
  *n = count;
  return TRUE;
}

gboolean
gst_clinfer_tensor_meta_add_tensor (GstClinferTensorMeta * meta,
    const gchar * name, GstClinferTensorDataType data_type, guint n_dims,
    const gint64 * dims, GBytes * data)
{
  gsize elem_size = gst_clinfer_tensor_data_type_get_size (data_type);
  gsize n;
  GstClinferTensor *t;

  g_return_val_if_fail (meta != NULL, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (n_dims == 0 || dims != NULL, FALSE);

  if (n_dims > GST_CLINFER_TENSOR_MAX_DIMS || elem_size == 0)
    return FALSE;
  if (!n_elements_of (n_dims, dims, &n) || n > G_MAXSIZE / elem_size
      || n * elem_size != g_bytes_get_size (data))
    return FALSE;

  meta->tensors = g_renew (GstClinferTensor, meta->tensors,
      meta->n_tensors + 1);
  t = &meta->tensors[meta->n_tensors++];
  memset (t, 0, sizeof (*t));
  t->name = g_strdup (name);
  t->data_type = data_type;
  t->n_dims = n_dims;
  if (n_dims > 0)
    memcpy (t->dims, dims, n_dims * sizeof (gint64));
  t->data = g_bytes_ref (data);
  return TRUE;
}

guint
gst_clinfer_tensor_meta_get_n_tensors (const GstClinferTensorMeta * meta)
{
  g_return_val_if_fail (meta != NULL, 0);
  return meta->n_tensors;
}

const GstClinferTensor *
gst_clinfer_tensor_meta_get_tensor (const GstClinferTensorMeta * meta,
    guint index)
{
  g_return_val_if_fail (meta != NULL, NULL);
  if (index >= meta->n_tensors)
    return NULL;
  return &meta->tensors[index];
}

const GstClinferTensor *
gst_clinfer_tensor_meta_get_tensor_by_name (const GstClinferTensorMeta * meta,
    const gchar * name)
{
  guint i;

  g_return_val_if_fail (meta != NULL, NULL);
  g_return_val_if_fail (name != NULL, NULL);
  for (i = 0; i < meta->n_tensors; i++) {
    if (g_strcmp0 (meta->tensors[i].name, name) == 0)
      return &meta->tensors[i];
  }
  return NULL;
}

gconstpointer
gst_clinfer_tensor_get_data (const GstClinferTensor * tensor, gsize * size)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return g_bytes_get_data (tensor->data, size);
}

gsize
gst_clinfer_tensor_get_n_elements (const GstClinferTensor * tensor)
{
  gsize n = 1;

  g_return_val_if_fail (tensor != NULL, 0);
  if (!n_elements_of (tensor->n_dims, tensor->dims, &n))
    return 0;
  return n;
}

/* IEEE half (f16) or bfloat16 (the top half of an f32) to double. */
static gdouble
half_to_double (guint16 h, gboolean bf16)
{
  guint32 sign, exp, man, bits;
  union { guint32 u; gfloat f; } v;

  if (bf16) {
    v.u = (guint32) h << 16;
    return v.f;
  }
  sign = (guint32) (h >> 15) << 31;
  exp = (h >> 10) & 0x1f;
  man = h & 0x3ff;
  if (exp == 0x1f)
    bits = sign | 0x7f800000u | (man << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (man == 0)
    bits = sign;
  else {
    /* subnormal: man * 2^-24 */
    v.f = (gfloat) man * (1.0f / 16777216.0f);
    return sign ? -v.f : v.f;
  }
  v.u = bits;
  return v.f;
}

gdouble
gst_clinfer_tensor_get_value (const GstClinferTensor * tensor, gsize index)
{
  gsize size = 0, es;
  const guint8 *p;

  g_return_val_if_fail (tensor != NULL, 0);
  p = g_bytes_get_data (tensor->data, &size);
  es = gst_clinfer_tensor_data_type_get_size (tensor->data_type);
  if (es == 0 || index >= size / es)
    return 0;
  p += index * es;
  /* Elements may sit at any byte offset of a GBytes: copy, then convert. */
#define VALUE_OF(ctype) \
  G_STMT_START { ctype v; memcpy (&v, p, sizeof v); return (gdouble) v; } G_STMT_END
  switch (tensor->data_type) {
    case GST_CLINFER_TENSOR_DATA_TYPE_F32:
      VALUE_OF (gfloat);
    case GST_CLINFER_TENSOR_DATA_TYPE_F64:
      VALUE_OF (gdouble);
    case GST_CLINFER_TENSOR_DATA_TYPE_U8:
    case GST_CLINFER_TENSOR_DATA_TYPE_BOOL:
      VALUE_OF (guint8);
    case GST_CLINFER_TENSOR_DATA_TYPE_I8:
      VALUE_OF (gint8);
    case GST_CLINFER_TENSOR_DATA_TYPE_U16:
      VALUE_OF (guint16);
    case GST_CLINFER_TENSOR_DATA_TYPE_I16:
      VALUE_OF (gint16);
    case GST_CLINFER_TENSOR_DATA_TYPE_U32:
      VALUE_OF (guint32);
    case GST_CLINFER_TENSOR_DATA_TYPE_I32:
      VALUE_OF (gint32);
    case GST_CLINFER_TENSOR_DATA_TYPE_U64:
      VALUE_OF (guint64);
    case GST_CLINFER_TENSOR_DATA_TYPE_I64:
      VALUE_OF (gint64);
    case GST_CLINFER_TENSOR_DATA_TYPE_F16:
    case GST_CLINFER_TENSOR_DATA_TYPE_BF16:{
      guint16 h;
      memcpy (&h, p, sizeof h);
      return half_to_double (h,
          tensor->data_type == GST_CLINFER_TENSOR_DATA_TYPE_BF16);
    }
    default:
      return 0;
  }
#undef VALUE_OF
}

GstClinferTensorMeta *
gst_clinfer_buffer_get_tensor_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  return gst_buffer_get_clinfer_tensor_meta (buffer);
}

const gchar *
gst_clinfer_tensor_get_name (const GstClinferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return tensor->name;
}

const gint64 *
gst_clinfer_tensor_get_dims (const GstClinferTensor * tensor, guint * n_dims)
{
  g_return_val_if_fail (tensor != NULL && n_dims != NULL, NULL);
  *n_dims = tensor->n_dims;
  return tensor->dims;
}

GBytes *
gst_clinfer_tensor_get_bytes (const GstClinferTensor * tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return tensor->data;
}

GstClinferTensorDataType
gst_clinfer_tensor_data_type_from_name (const gchar * name)
{
  static const GstClinferTensorDataType known[] = {
    GST_CLINFER_TENSOR_DATA_TYPE_F32, GST_CLINFER_TENSOR_DATA_TYPE_U8,
    GST_CLINFER_TENSOR_DATA_TYPE_I8, GST_CLINFER_TENSOR_DATA_TYPE_U16,
    GST_CLINFER_TENSOR_DATA_TYPE_I16, GST_CLINFER_TENSOR_DATA_TYPE_I32,
    GST_CLINFER_TENSOR_DATA_TYPE_I64, GST_CLINFER_TENSOR_DATA_TYPE_BOOL,
    GST_CLINFER_TENSOR_DATA_TYPE_F16, GST_CLINFER_TENSOR_DATA_TYPE_F64,
    GST_CLINFER_TENSOR_DATA_TYPE_U32, GST_CLINFER_TENSOR_DATA_TYPE_U64,
    GST_CLINFER_TENSOR_DATA_TYPE_BF16,
  };
  guint i;

  for (i = 0; name != NULL && i < G_N_ELEMENTS (known); i++)
    if (strcmp (gst_clinfer_tensor_data_type_get_name (known[i]), name) == 0)
      return known[i];
  return GST_CLINFER_TENSOR_DATA_TYPE_UNDEFINED;
}
