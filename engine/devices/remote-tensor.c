/* clinfer — remote contexts and remote tensors: the device-independent
 * part (reference counting, properties, type_check, host copies); each
 * device supplies the memory itself (create_remote, map/unmap). */
#include "devices/device.h"
#include "core/tensor-view.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Contexts                                                          */

ClinferRemoteContext *
clinfer_remote_context_new_for_device (ClinferDevice *device)
{
  ClinferRemoteContext *ctx = g_new0 (ClinferRemoteContext, 1);

  ctx->ref_count = 1;
  ctx->device = clinfer_device_ref (device);
  return ctx;
}

ClinferRemoteContext *
clinfer_remote_context_new (const char *device, GError **error)
{
  ClinferDevice *d = clinfer_device_open (device, NULL, NULL, error);
  ClinferRemoteContext *ctx;

  if (d == NULL)
    return NULL;
  ctx = clinfer_remote_context_new_for_device (d);
  clinfer_device_unref (d);
  return ctx;
}

ClinferRemoteContext *
clinfer_remote_context_ref (ClinferRemoteContext *ctx)
{
  g_atomic_int_inc (&ctx->ref_count);
  return ctx;
}

void
clinfer_remote_context_unref (ClinferRemoteContext *ctx)
{
  if (ctx == NULL || !g_atomic_int_dec_and_test (&ctx->ref_count))
    return;
  clinfer_device_unref (ctx->device);
  g_free (ctx);
}

const char *
clinfer_remote_context_get_device_name (const ClinferRemoteContext *ctx)
{
  return ctx->device->name;
}

GVariant *
clinfer_remote_context_get_property (const ClinferRemoteContext *ctx,
    const char *key)
{
  return g_hash_table_lookup (ctx->device->properties, key);
}

gpointer
clinfer_remote_context_get_program (ClinferRemoteContext *ctx,
    const char *name, const char *options, GError **error)
{
  if (ctx->device->klass->get_program)
    return ctx->device->klass->get_program (ctx, name, options ? options : "",
        error);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "device %s has no OpenCL programs (kernels/%s.cl needs a GPU context)",
      ctx->device->name, name);
  return NULL;
}

ClinferRemoteTensor *
clinfer_remote_context_create_tensor (ClinferRemoteContext *ctx,
    ClinferElementType type, const ClinferShape *shape, GError **error)
{
  return ctx->device->klass->create_remote (ctx, type, shape, NULL, NULL,
      NULL, NULL, NULL, error);
}

/* ---------------------------------------------------------------- */
/* Tensors                                                           */

ClinferRemoteTensor *
clinfer_remote_tensor_alloc (const ClinferRemoteTensorClass *klass,
    ClinferRemoteContext *ctx, ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, GError **error)
{
  gsize esize = clinfer_element_type_size (type);
  ClinferRemoteTensor *t;
  gsize span = esize;

  if (esize == 0 || type == CLINFER_TYPE_STRING) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot create a remote tensor of element type %s",
        clinfer_element_type_name (type));
    return NULL;
  }
  if (shape == NULL || !clinfer_shape_is_static (shape)
      || clinfer_shape_n_elements (shape) < 0) {
    g_autofree char *s = shape ? clinfer_shape_to_string (shape) : NULL;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot create a remote tensor of non-static shape %s", s ? s : "NULL");
    return NULL;
  }
  t = g_new0 (ClinferRemoteTensor, 1);
  t->ref_count = 1;
  t->klass = klass;
  t->context = clinfer_remote_context_ref (ctx);
  t->type = type;
  t->shape = *shape;
  t->properties = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      (GDestroyNotify) g_variant_unref);
  for (int i = shape->rank - 1; i >= 0; i--) {
    t->strides[i] = strides ? strides[i] : (int64_t) span;
    if (!strides)
      span *= (gsize) shape->dims[i];
  }
  if (strides) {
    /* Span: the farthest element's end (strides must be non-negative). */
    gsize last = 0;
    for (int i = 0; i < shape->rank; i++) {
      if (strides[i] < 0) {
        g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
            "remote tensor stride %d is negative (%" G_GINT64_FORMAT ")", i,
            strides[i]);
        clinfer_remote_tensor_unref (t);
        return NULL;
      }
      if (shape->dims[i] > 0)
        last += (gsize) strides[i] * (gsize) (shape->dims[i] - 1);
    }
    span = last + esize;
  }
  t->span = clinfer_shape_n_elements (shape) == 0 ? 0 : span;
  return t;
}

ClinferRemoteTensor *
clinfer_remote_tensor_new_from_cl_mem (ClinferRemoteContext *ctx,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer cl_mem, GError **error)
{
  if (cl_mem == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot wrap a NULL cl_mem as a remote tensor");
    return NULL;
  }
  return ctx->device->klass->create_remote (ctx, type, shape, strides, NULL,
      NULL, NULL, cl_mem, error);
}

ClinferRemoteTensor *
clinfer_remote_tensor_new_from_host (ClinferRemoteContext *ctx,
    ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer data, GDestroyNotify destroy,
    gpointer user_data, GError **error)
{
  if (data == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot wrap a NULL host pointer as a remote tensor");
    return NULL;
  }
  return ctx->device->klass->create_remote (ctx, type, shape, strides, data,
      destroy, user_data, NULL, error);
}

ClinferTensor *
clinfer_remote_tensor_to_tensor (ClinferRemoteTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  return clinfer_tensor_new_remote_view (
      clinfer_remote_tensor_get_element_type (tensor),
      clinfer_remote_tensor_get_shape (tensor),
      clinfer_remote_tensor_get_strides (tensor),
      clinfer_remote_tensor_ref (tensor),
      (GDestroyNotify) clinfer_remote_tensor_unref);
}

ClinferRemoteTensor *
clinfer_tensor_get_remote (const ClinferTensor *tensor)
{
  return clinfer_tensor_get_remote_view (tensor);
}

ClinferRemoteTensor *
clinfer_remote_tensor_ref (ClinferRemoteTensor *t)
{
  g_atomic_int_inc (&t->ref_count);
  return t;
}

void
clinfer_remote_tensor_unref (ClinferRemoteTensor *t)
{
  if (t == NULL || !g_atomic_int_dec_and_test (&t->ref_count))
    return;
  if (t->klass->free_impl)
    t->klass->free_impl (t);
  if (t->destroy)
    t->destroy (t->user_data);
  g_hash_table_unref (t->properties);
  clinfer_remote_context_unref (t->context);
  g_free (t);
}

ClinferElementType
clinfer_remote_tensor_get_element_type (const ClinferRemoteTensor *t)
{
  return t->type;
}

const ClinferShape *
clinfer_remote_tensor_get_shape (const ClinferRemoteTensor *t)
{
  return &t->shape;
}

const int64_t *
clinfer_remote_tensor_get_strides (const ClinferRemoteTensor *t)
{
  return t->strides;
}

gboolean
clinfer_remote_tensor_is_contiguous (const ClinferRemoteTensor *t)
{
  int64_t s = (int64_t) clinfer_element_type_size (t->type);

  for (int i = t->shape.rank - 1; i >= 0; i--) {
    if (t->shape.dims[i] != 1 && t->strides[i] != s)
      return FALSE;
    s *= t->shape.dims[i];
  }
  return TRUE;
}

const char *
clinfer_remote_tensor_get_device_name (const ClinferRemoteTensor *t)
{
  return t->context->device->name;
}

ClinferRemoteContext *
clinfer_remote_tensor_get_context (const ClinferRemoteTensor *t)
{
  return t->context;
}

void
clinfer_remote_tensor_set_property (ClinferRemoteTensor *t, const char *key,
    GVariant *value)
{
  g_hash_table_replace (t->properties, g_strdup (key),
      g_variant_ref_sink (value));
}

GVariant *
clinfer_remote_tensor_get_property (const ClinferRemoteTensor *t,
    const char *key)
{
  return g_hash_table_lookup (t->properties, key);
}

static int
compare_keys (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char **
clinfer_remote_tensor_list_properties (const ClinferRemoteTensor *t)
{
  char **keys = (char **) g_hash_table_get_keys_as_array (t->properties, NULL);
  char **out = g_strdupv (keys);

  g_free (keys);
  qsort (out, g_strv_length (out), sizeof (char *), compare_keys);
  return out;
}

/* Text form of a property value for type_check: strings verbatim, handles
 * and numbers as lower-case hex. */
static char *
value_text (GVariant *v)
{
  if (g_variant_is_of_type (v, G_VARIANT_TYPE_STRING))
    return g_variant_dup_string (v, NULL);
  if (g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64))
    return g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", g_variant_get_uint64 (v));
  return g_variant_print (v, FALSE);
}

static char *
join_allowed (const char *const *values)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; values[i]; i++)
    g_string_append_printf (s, "%s'%s'", i ? ", " : "", values[i]);
  return g_string_free (s, FALSE);
}

gboolean
clinfer_remote_tensor_type_check (const ClinferRemoteTensor *t,
    const ClinferRemotePropertyRule *rules, gsize n_rules, GError **error)
{
  if (t == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "not a remote tensor (NULL)");
    return FALSE;
  }
  for (gsize i = 0; i < n_rules; i++) {
    GVariant *v = g_hash_table_lookup (t->properties, rules[i].key);
    g_autofree char *text = NULL;
    gboolean ok;

    if (v == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "remote tensor on %s has no property %s", t->context->device->name,
          rules[i].key);
      return FALSE;
    }
    if (rules[i].values == NULL || rules[i].values[0] == NULL)
      continue;
    text = value_text (v);
    ok = g_strv_contains (rules[i].values, text);
    if (!ok) {
      g_autofree char *allowed = join_allowed (rules[i].values);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "remote tensor property %s is '%s', expected one of %s",
          rules[i].key, text, allowed);
      return FALSE;
    }
  }
  return TRUE;
}

gpointer
clinfer_remote_tensor_get_cl_mem (const ClinferRemoteTensor *t, GError **error)
{
  static const char *const kind[] = { CLINFER_REMOTE_MEM_OCL_BUFFER, NULL };
  const ClinferRemotePropertyRule rules[] = {
    { CLINFER_REMOTE_PROP_SHARED_MEM_TYPE, kind },
    { CLINFER_REMOTE_PROP_MEM_HANDLE, NULL },
  };
  GVariant *v;

  if (!clinfer_remote_tensor_type_check (t, rules, G_N_ELEMENTS (rules), error))
    return NULL;
  v = g_hash_table_lookup (t->properties, CLINFER_REMOTE_PROP_MEM_HANDLE);
  if (!g_variant_is_of_type (v, G_VARIANT_TYPE_UINT64)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "remote tensor property %s is not a handle",
        CLINFER_REMOTE_PROP_MEM_HANDLE);
    return NULL;
  }
  return (gpointer) (guintptr) g_variant_get_uint64 (v);
}

/* ---------------------------------------------------------------- */
/* Host copies                                                       */

void
clinfer_copy_strided (guint8 *dst, const int64_t *dst_strides,
    const guint8 *src, const int64_t *src_strides, const ClinferShape *shape,
    gsize esize)
{
  int64_t n = clinfer_shape_n_elements (shape);
  int64_t idx[CLINFER_MAX_RANK] = { 0 };
  int rank = shape->rank;
  gboolean same = TRUE;
  int64_t s = (int64_t) esize;

  /* Both contiguous: one memcpy. */
  for (int i = rank - 1; i >= 0; i--) {
    if (shape->dims[i] != 1 && (dst_strides[i] != s || src_strides[i] != s))
      same = FALSE;
    s *= shape->dims[i];
  }
  if (same) {
    memcpy (dst, src, (gsize) n * esize);
    return;
  }
  for (int64_t e = 0; e < n; e++) {
    int64_t so = 0, d = 0;
    for (int i = 0; i < rank; i++) {
      so += idx[i] * src_strides[i];
      d += idx[i] * dst_strides[i];
    }
    memcpy (dst + d, src + so, esize);
    for (int i = rank - 1; i >= 0; i--) {
      if (++idx[i] < shape->dims[i])
        break;
      idx[i] = 0;
    }
  }
}

static gboolean
check_host_match (const ClinferRemoteTensor *t, const ClinferTensor *host,
    GError **error)
{
  if (clinfer_tensor_get_element_type (host) != t->type
      || !clinfer_shape_equal (clinfer_tensor_get_shape (host), &t->shape)) {
    g_autofree char *a = clinfer_shape_to_string (&t->shape);
    g_autofree char *b = clinfer_shape_to_string (clinfer_tensor_get_shape (host));
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "remote tensor (%s %s) and host tensor (%s %s) differ",
        clinfer_element_type_name (t->type), a,
        clinfer_element_type_name (clinfer_tensor_get_element_type (host)), b);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_remote_tensor_read_counted (ClinferRemoteTensor *t, ClinferTensor *host,
    guint64 *copied, GError **error)
{
  gpointer p;

  if (!check_host_match (t, host, error))
    return FALSE;
  if (t->span == 0)
    return TRUE;
  if (!(p = t->klass->map (t, FALSE, copied, error)))
    return FALSE;
  clinfer_copy_strided (clinfer_tensor_get_data (host),
      clinfer_tensor_get_strides (host), p, t->strides, &t->shape,
      clinfer_element_type_size (t->type));
  t->klass->unmap (t, p, FALSE, copied);
  return TRUE;
}

gboolean
clinfer_remote_tensor_write_counted (ClinferRemoteTensor *t,
    const ClinferTensor *host, guint64 *copied, GError **error)
{
  gpointer p;

  if (!check_host_match (t, host, error))
    return FALSE;
  if (t->span == 0)
    return TRUE;
  if (!(p = t->klass->map (t, TRUE, copied, error)))
    return FALSE;
  clinfer_copy_strided (p, t->strides, clinfer_tensor_get_const_data (host),
      clinfer_tensor_get_strides (host), &t->shape,
      clinfer_element_type_size (t->type));
  t->klass->unmap (t, p, TRUE, copied);
  return TRUE;
}

gboolean
clinfer_remote_tensor_read (ClinferRemoteTensor *t, ClinferTensor *host,
    GError **error)
{
  guint64 copied = 0;

  return clinfer_remote_tensor_read_counted (t, host, &copied, error);
}

gboolean
clinfer_remote_tensor_write (ClinferRemoteTensor *t, const ClinferTensor *host,
    GError **error)
{
  guint64 copied = 0;

  return clinfer_remote_tensor_write_counted (t, host, &copied, error);
}
