/* clinfer — refcounted host tensors and half/bfloat16 conversions. */
#include <clinfer/tensor.h>
#include <clinfer/error.h>
#include "core/tensor-view.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct _ClinferTensor {
  gint ref_count;
  ClinferElementType type;
  ClinferShape shape;
  int64_t strides[CLINFER_MAX_RANK];
  gpointer data;
  gboolean owned;           /* data allocated here (aligned_free) */
  GDestroyNotify destroy;
  gpointer user_data;
  gboolean remote;          /* user_data is a ClinferRemoteTensor, no data */
};

#define CLINFER_TENSOR_ALIGN 64

static gboolean
check_shape (ClinferElementType type, const ClinferShape *shape,
    gsize *bytes, GError **error)
{
  gsize esize = clinfer_element_type_size (type);
  guint64 n;

  if (esize == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot create a tensor of element type %d", (int) type);
    return FALSE;
  }
  if (!clinfer_shape_is_static (shape)) {
    g_autofree char *s = clinfer_shape_to_string (shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot create a tensor of non-static shape %s", s);
    return FALSE;
  }
  if (!clinfer_shape_get_byte_size (shape, type, &n) || n > G_MAXSIZE) {
    g_autofree char *s = clinfer_shape_to_string (shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
        "a tensor of shape %s and type %s is too large (the most is %"
        G_GUINT64_FORMAT " bytes)", s, clinfer_element_type_name (type),
        (guint64) CLINFER_MAX_TENSOR_BYTES);
    return FALSE;
  }
  *bytes = (gsize) n;
  return TRUE;
}

static void
contiguous_strides (ClinferElementType type, const ClinferShape *shape,
    int64_t *strides)
{
  int64_t s = (int64_t) clinfer_element_type_size (type);

  for (int i = shape->rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= MAX (shape->dims[i], 1);
  }
}

ClinferTensor *
clinfer_tensor_new (ClinferElementType type, const ClinferShape *shape,
    GError **error)
{
  ClinferTensor *t;
  gsize bytes, alloc;
  void *mem = NULL;

  if (!check_shape (type, shape, &bytes, error))
    return NULL;
  /* Round up so vector kernels may read a whole last vector. */
  alloc = MAX (bytes, 1);
  if (alloc > G_MAXSIZE - CLINFER_TENSOR_ALIGN) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "tensor of %" G_GSIZE_FORMAT " bytes is too large", bytes);
    return NULL;
  }
  alloc = (alloc + CLINFER_TENSOR_ALIGN - 1) & ~(gsize) (CLINFER_TENSOR_ALIGN - 1);
  if (posix_memalign (&mem, CLINFER_TENSOR_ALIGN, alloc) != 0 || mem == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
        "out of memory allocating a tensor of %" G_GSIZE_FORMAT " bytes", bytes);
    return NULL;
  }
  memset (mem, 0, alloc);
  t = g_new0 (ClinferTensor, 1);
  t->ref_count = 1;
  t->type = type;
  t->shape = *shape;
  t->data = mem;
  t->owned = TRUE;
  contiguous_strides (type, shape, t->strides);
  return t;
}

ClinferTensor *
clinfer_tensor_new_wrapped (ClinferElementType type, const ClinferShape *shape,
    const int64_t *strides, gpointer data, GDestroyNotify destroy,
    gpointer user_data, GError **error)
{
  ClinferTensor *t;
  gsize bytes;

  if (!check_shape (type, shape, &bytes, error))
    return NULL;
  if (data == NULL && bytes > 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "cannot wrap a NULL pointer as a tensor of %" G_GSIZE_FORMAT " bytes",
        bytes);
    return NULL;
  }
  t = g_new0 (ClinferTensor, 1);
  t->ref_count = 1;
  t->type = type;
  t->shape = *shape;
  t->data = data;
  t->destroy = destroy;
  t->user_data = user_data;
  if (strides)
    memcpy (t->strides, strides, sizeof (int64_t) * MAX (shape->rank, 0));
  else
    contiguous_strides (type, shape, t->strides);
  return t;
}

ClinferTensor *
clinfer_tensor_ref (ClinferTensor *tensor)
{
  g_return_val_if_fail (tensor != NULL, NULL);
  g_atomic_int_inc (&tensor->ref_count);
  return tensor;
}

void
clinfer_tensor_unref (ClinferTensor *tensor)
{
  if (tensor == NULL || !g_atomic_int_dec_and_test (&tensor->ref_count))
    return;
  if (tensor->owned) {
    if (tensor->type == CLINFER_TYPE_STRING) {
      char **s = tensor->data;
      int64_t n = clinfer_shape_n_elements (&tensor->shape);
      for (int64_t i = 0; i < n; i++)
        g_free (s[i]);
    }
    free (tensor->data);
  }
  if (tensor->destroy)
    tensor->destroy (tensor->user_data);
  g_free (tensor);
}

ClinferElementType
clinfer_tensor_get_element_type (const ClinferTensor *tensor)
{
  return tensor->type;
}

const ClinferShape *
clinfer_tensor_get_shape (const ClinferTensor *tensor)
{
  return &tensor->shape;
}

const int64_t *
clinfer_tensor_get_strides (const ClinferTensor *tensor)
{
  return tensor->strides;
}

gpointer
clinfer_tensor_get_data (ClinferTensor *tensor)
{
  return tensor->data;
}

gconstpointer
clinfer_tensor_get_const_data (const ClinferTensor *tensor)
{
  return tensor->data;
}

int64_t
clinfer_tensor_get_n_elements (const ClinferTensor *tensor)
{
  return clinfer_shape_n_elements (&tensor->shape);
}

gsize
clinfer_tensor_get_byte_size (const ClinferTensor *tensor)
{
  return (gsize) clinfer_shape_n_elements (&tensor->shape)
      * clinfer_element_type_size (tensor->type);
}

gboolean
clinfer_tensor_is_contiguous (const ClinferTensor *tensor)
{
  int64_t expect[CLINFER_MAX_RANK];

  contiguous_strides (tensor->type, &tensor->shape, expect);
  for (int i = 0; i < tensor->shape.rank; i++)
    if (tensor->shape.dims[i] > 1 && expect[i] != tensor->strides[i])
      return FALSE;
  return TRUE;
}

/* Byte offset of row-major element @i. */
static int64_t
element_offset (const ClinferTensor *t, int64_t i)
{
  int64_t off = 0;

  for (int d = t->shape.rank - 1; d >= 0; d--) {
    int64_t dim = t->shape.dims[d];
    if (dim > 0) {
      off += (i % dim) * t->strides[d];
      i /= dim;
    }
  }
  return off;
}

ClinferTensor *
clinfer_tensor_new_remote_view (ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, gpointer remote,
    GDestroyNotify unref)
{
  ClinferTensor *t = g_new0 (ClinferTensor, 1);

  t->ref_count = 1;
  t->type = type;
  t->shape = *shape;
  if (shape->rank > 0)
    memcpy (t->strides, strides, sizeof (int64_t) * (gsize) shape->rank);
  t->remote = TRUE;
  t->user_data = remote;
  t->destroy = unref;
  return t;
}

gpointer
clinfer_tensor_get_remote_view (const ClinferTensor *tensor)
{
  return tensor && tensor->remote ? tensor->user_data : NULL;
}

ClinferTensor *
clinfer_tensor_copy (const ClinferTensor *src, GError **error)
{
  ClinferTensor *dst;
  gsize esize = clinfer_element_type_size (src->type);
  int64_t n = clinfer_shape_n_elements (&src->shape);

  if (src->remote) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "a remote tensor has no host data to copy (use "
        "clinfer_remote_tensor_read())");
    return NULL;
  }
  dst = clinfer_tensor_new (src->type, &src->shape, error);
  if (dst == NULL)
    return NULL;
  if (src->type == CLINFER_TYPE_STRING) {
    char **d = dst->data;
    for (int64_t i = 0; i < n; i++) {
      char *const *s = (char *const *) ((const guint8 *) src->data
          + element_offset (src, i));
      d[i] = g_strdup (*s);
    }
  } else if (clinfer_tensor_is_contiguous (src)) {
    if (n > 0)
      memcpy (dst->data, src->data, (gsize) n * esize);
  } else {
    for (int64_t i = 0; i < n; i++)
      memcpy ((guint8 *) dst->data + i * esize,
          (const guint8 *) src->data + element_offset (src, i), esize);
  }
  return dst;
}

double
clinfer_tensor_get_as_double (const ClinferTensor *t, int64_t i)
{
  const guint8 *p;

  if (t->data == NULL)
    return NAN;
  p = (const guint8 *) t->data + element_offset (t, i);

  switch (t->type) {
    case CLINFER_TYPE_F32: return *(const float *) p;
    case CLINFER_TYPE_F64: return *(const double *) p;
    case CLINFER_TYPE_F16: return clinfer_half_to_float (*(const uint16_t *) p);
    case CLINFER_TYPE_BF16: return clinfer_bfloat16_to_float (*(const uint16_t *) p);
    case CLINFER_TYPE_U8: return *(const uint8_t *) p;
    case CLINFER_TYPE_I8: return *(const int8_t *) p;
    case CLINFER_TYPE_U16: return *(const uint16_t *) p;
    case CLINFER_TYPE_I16: return *(const int16_t *) p;
    case CLINFER_TYPE_U32: return *(const uint32_t *) p;
    case CLINFER_TYPE_I32: return *(const int32_t *) p;
    case CLINFER_TYPE_U64: return (double) *(const uint64_t *) p;
    case CLINFER_TYPE_I64: return (double) *(const int64_t *) p;
    case CLINFER_TYPE_BOOL: return *(const uint8_t *) p ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t
clinfer_tensor_get_as_int64 (const ClinferTensor *t, int64_t i)
{
  const guint8 *p;

  if (t->data == NULL)
    return 0;
  p = (const guint8 *) t->data + element_offset (t, i);

  switch (t->type) {
    case CLINFER_TYPE_I64: return *(const int64_t *) p;
    case CLINFER_TYPE_U64: return (int64_t) *(const uint64_t *) p;
    case CLINFER_TYPE_I32: return *(const int32_t *) p;
    case CLINFER_TYPE_U32: return *(const uint32_t *) p;
    case CLINFER_TYPE_I16: return *(const int16_t *) p;
    case CLINFER_TYPE_U16: return *(const uint16_t *) p;
    case CLINFER_TYPE_I8: return *(const int8_t *) p;
    case CLINFER_TYPE_U8: return *(const uint8_t *) p;
    case CLINFER_TYPE_BOOL: return *(const uint8_t *) p ? 1 : 0;
    default: {
      double d = clinfer_tensor_get_as_double (t, i);
      if (!(d == d))
        return 0;
      if (d >= 9.2e18)
        return G_MAXINT64;
      if (d <= -9.2e18)
        return G_MININT64;
      return (int64_t) d;
    }
  }
}

float
clinfer_half_to_float (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  float f;

  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      /* subnormal: normalise */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | ((uint32_t) (127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  memcpy (&f, &bits, 4);
  return f;
}

uint16_t
clinfer_float_to_half (float f)
{
  uint32_t x;
  uint32_t sign, mant;
  int32_t exp;

  memcpy (&x, &f, 4);
  sign = (x >> 16) & 0x8000;
  exp = (int32_t) ((x >> 23) & 0xff) - 127 + 15;
  mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)     /* inf / nan */
    return (uint16_t) (sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
  if (exp >= 0x1f)
    return (uint16_t) (sign | 0x7c00);
  if (exp <= 0) {
    uint32_t m, shift, r, half;
    if (exp < -10)
      return (uint16_t) sign;
    m = mant | 0x800000;
    shift = (uint32_t) (14 - exp);
    r = m >> shift;
    half = 1u << (shift - 1);
    /* round to nearest even */
    if ((m & ((half << 1) - 1)) > half || ((m & ((half << 1) - 1)) == half && (r & 1)))
      r++;
    return (uint16_t) (sign | r);
  }
  {
    uint32_t r = ((uint32_t) exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
      r++;                            /* may carry into exponent: fine */
    return (uint16_t) (sign | r);
  }
}

float
clinfer_bfloat16_to_float (uint16_t b)
{
  uint32_t bits = (uint32_t) b << 16;
  float f;
  memcpy (&f, &bits, 4);
  return f;
}

uint16_t
clinfer_float_to_bfloat16 (float f)
{
  uint32_t x;
  memcpy (&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (uint16_t) ((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t) (x >> 16);
}
