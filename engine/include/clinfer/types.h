/* clinfer — element types and shapes. */
#pragma once

#include <clinfer/export.h>
#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/**
 * ClinferElementType:
 *
 * Element type of a tensor. The numeric values follow ONNX's
 * TensorProto.DataType so the ONNX frontend can map them directly.
 */
typedef enum {
  CLINFER_TYPE_UNDEFINED = 0,
  CLINFER_TYPE_F32 = 1,
  CLINFER_TYPE_U8 = 2,
  CLINFER_TYPE_I8 = 3,
  CLINFER_TYPE_U16 = 4,
  CLINFER_TYPE_I16 = 5,
  CLINFER_TYPE_I32 = 6,
  CLINFER_TYPE_I64 = 7,
  CLINFER_TYPE_STRING = 8, /* only carried, never computed */
  CLINFER_TYPE_BOOL = 9,
  CLINFER_TYPE_F16 = 10,
  CLINFER_TYPE_F64 = 11,
  CLINFER_TYPE_U32 = 12,
  CLINFER_TYPE_U64 = 13,
  CLINFER_TYPE_BF16 = 16,
  CLINFER_TYPE_LAST_ = 17,
} ClinferElementType;

/* Size in bytes of one element (sizeof (char *) for STRING); 0 for UNDEFINED
 * or an unknown value. */
CLINFER_API gsize clinfer_element_type_size (ClinferElementType type);
/* Short lower-case name: "f32", "u8", "i64", "bool", ... ("undefined" for
 * anything unknown). */
CLINFER_API const char *clinfer_element_type_name (ClinferElementType type);
/* Inverse of clinfer_element_type_name(); also accepts "float32", "float",
 * "int64", ... Returns CLINFER_TYPE_UNDEFINED when not recognised. */
CLINFER_API ClinferElementType clinfer_element_type_from_name (const char *name);
CLINFER_API gboolean clinfer_element_type_is_float (ClinferElementType type);

#define CLINFER_MAX_RANK 8
#define CLINFER_DIM_DYNAMIC ((int64_t) -1)

/**
 * ClinferShape:
 * @rank: number of dimensions, 0 (scalar) .. CLINFER_MAX_RANK, or -1 when
 *   even the rank is unknown
 * @dims: extents, outermost first; CLINFER_DIM_DYNAMIC for an unknown extent
 *
 * A plain value type: copy it by assignment.
 */
typedef struct {
  int rank;
  int64_t dims[CLINFER_MAX_RANK];
} ClinferShape;

CLINFER_API ClinferShape clinfer_shape_make (int rank, const int64_t *dims);
CLINFER_API ClinferShape clinfer_shape_unknown (void);
CLINFER_API gboolean clinfer_shape_is_static (const ClinferShape *shape);
CLINFER_API gboolean clinfer_shape_equal (const ClinferShape *a, const ClinferShape *b);
/* Number of elements; -1 when a dim is dynamic or the rank unknown, and -1
 * too when the count would overflow int64. */
CLINFER_API int64_t clinfer_shape_n_elements (const ClinferShape *shape);

/* Largest byte size of one tensor (2^48: the products of its dims, of
 * its strides and of any index into it fit int64 with room to spare). */
#define CLINFER_MAX_TENSOR_BYTES (G_GUINT64_CONSTANT (1) << 48)

/* Bytes a contiguous tensor of @shape and @type takes. FALSE when @shape
 * is not static, @type has no fixed size, or the size -- or the outermost
 * stride, counting 0-length dims as 1 -- is over CLINFER_MAX_TENSOR_BYTES.
 * Every other count, stride and offset of such a tensor is then below
 * that bound too. The engine sizes what a model or a caller gives with
 * this, or with GLib's g_uint64_checked_mul() / _add(). */
CLINFER_API gboolean clinfer_shape_get_byte_size (const ClinferShape *shape,
    ClinferElementType type, guint64 *bytes);
/* "1x3x224x224", "scalar" for rank 0, "?" for dynamic dims, "[?]" for
 * unknown rank. Free with g_free(). */
CLINFER_API char *clinfer_shape_to_string (const ClinferShape *shape);
/* Parses "1x3x224x224" (also "1,3,224,224"; "?" or "-1" for dynamic;
 * "scalar" or "" for rank 0). */
CLINFER_API gboolean clinfer_shape_parse (const char *text, ClinferShape *shape,
    GError **error);
/* Numpy broadcasting of @a and @b into @out. Dynamic dims broadcast to
 * dynamic unless the other side fixes them. FALSE with
 * CLINFER_ERROR_SHAPE_MISMATCH when incompatible. */
CLINFER_API gboolean clinfer_shape_broadcast (const ClinferShape *a, const ClinferShape *b,
    ClinferShape *out, GError **error);

G_END_DECLS
