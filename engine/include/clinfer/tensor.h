/* clinfer — host tensors: typed, shaped, refcounted blocks of memory. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/types.h>

G_BEGIN_DECLS

/**
 * ClinferTensor:
 *
 * A refcounted host tensor: element type, static shape, byte strides and a
 * data pointer. The memory is either owned (allocated by the tensor, 64-byte
 * aligned, zero-filled) or wrapped (the caller's memory, released through the
 * destroy notify given at wrap time when the last reference goes).
 *
 * Strides are in bytes, outermost first, so a video frame with padded rows
 * maps across directly. Tensors created by the engine are row-major and
 * contiguous.
 */
typedef struct _ClinferTensor ClinferTensor;

/* (transfer full) New zero-filled contiguous tensor. NULL with
 * CLINFER_ERROR_INVALID_ARGUMENT when the shape is not static or the size
 * cannot be allocated. */
CLINFER_API ClinferTensor *clinfer_tensor_new (ClinferElementType type,
    const ClinferShape *shape, GError **error);
/* (transfer full) Wraps caller memory. @strides may be NULL (contiguous).
 * @destroy (may be NULL) is called with @user_data when the tensor dies. */
CLINFER_API ClinferTensor *clinfer_tensor_new_wrapped (ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, gpointer data,
    GDestroyNotify destroy, gpointer user_data, GError **error);
/* (transfer full) Contiguous copy of @src (which may be strided). */
CLINFER_API ClinferTensor *clinfer_tensor_copy (const ClinferTensor *src, GError **error);

CLINFER_API ClinferTensor *clinfer_tensor_ref (ClinferTensor *tensor);
CLINFER_API void clinfer_tensor_unref (ClinferTensor *tensor);

CLINFER_API ClinferElementType clinfer_tensor_get_element_type (const ClinferTensor *tensor);
CLINFER_API const ClinferShape *clinfer_tensor_get_shape (const ClinferTensor *tensor);
/* Byte strides, one per dimension. */
CLINFER_API const int64_t *clinfer_tensor_get_strides (const ClinferTensor *tensor);
CLINFER_API gpointer clinfer_tensor_get_data (ClinferTensor *tensor);
CLINFER_API gconstpointer clinfer_tensor_get_const_data (const ClinferTensor *tensor);
CLINFER_API int64_t clinfer_tensor_get_n_elements (const ClinferTensor *tensor);
/* Bytes covered by the elements when contiguous (n_elements * size). */
CLINFER_API gsize clinfer_tensor_get_byte_size (const ClinferTensor *tensor);
CLINFER_API gboolean clinfer_tensor_is_contiguous (const ClinferTensor *tensor);

/* Element @i (row-major index over the logical shape) converted to double /
 * int64; works for every numeric type and any strides. Handy for tests and
 * for shape ops reading small index tensors. */
CLINFER_API double clinfer_tensor_get_as_double (const ClinferTensor *tensor, int64_t i);
CLINFER_API int64_t clinfer_tensor_get_as_int64 (const ClinferTensor *tensor, int64_t i);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ClinferTensor, clinfer_tensor_unref)

/* IEEE half <-> float conversions used by every f16 path. */
CLINFER_API float clinfer_half_to_float (uint16_t h);
CLINFER_API uint16_t clinfer_float_to_half (float f);
CLINFER_API float clinfer_bfloat16_to_float (uint16_t b);
CLINFER_API uint16_t clinfer_float_to_bfloat16 (float f);

G_END_DECLS
