/* clinfer — NumPy .npy files as tensors (the CLIs' input/output format). */
#pragma once

#include <clinfer/export.h>
#include <clinfer/tensor.h>

G_BEGIN_DECLS

/* (transfer full) Reads a .npy file (format versions 1-3, little-endian,
 * C order; f16/f32/f64, i8..i64, u8..u64, bool). Errors name @path and
 * say what was found. */
CLINFER_API ClinferTensor *clinfer_npy_read (const char *path, GError **error);
/* Same, from a memory buffer; @origin names it in errors. */
CLINFER_API ClinferTensor *clinfer_npy_parse (const guint8 *data, gsize size,
    const char *origin, GError **error);
/* Writes @tensor as a version 1.0 .npy file (C order). */
CLINFER_API gboolean clinfer_npy_write (const char *path, const ClinferTensor *tensor,
    GError **error);

G_END_DECLS
