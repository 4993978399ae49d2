/* clinfer — error domain and codes shared by every part of the engine. */
#pragma once

#include <clinfer/export.h>
#include <glib.h>

G_BEGIN_DECLS

#define CLINFER_ERROR (clinfer_error_quark ())

/**
 * ClinferError:
 * @CLINFER_ERROR_PARSE: a model, config or data file is malformed
 * @CLINFER_ERROR_UNSUPPORTED_OP: no implementation for an op (type, domain, opset)
 * @CLINFER_ERROR_SHAPE_MISMATCH: shapes do not fit together
 * @CLINFER_ERROR_TYPE_MISMATCH: element types do not fit together
 * @CLINFER_ERROR_DEVICE: device selection or device runtime failure
 * @CLINFER_ERROR_IO: a file could not be read or written
 * @CLINFER_ERROR_INVALID_ARGUMENT: an API argument or attribute value is invalid
 * @CLINFER_ERROR_NOT_IMPLEMENTED: a documented feature that is not available yet
 * @CLINFER_ERROR_UNSUPPORTED_VERSION: a format, IR or opset version newer than supported
 * @CLINFER_ERROR_OUT_OF_MEMORY: a tensor or plan needs more memory than the
 *   memory limit (clinfer_compile_config_set_memory_limit()) or the machine has
 *
 * Codes of the %CLINFER_ERROR domain. Messages always name the file,
 * node, input or option concerned and say what was expected.
 */
typedef enum {
  CLINFER_ERROR_PARSE,
  CLINFER_ERROR_UNSUPPORTED_OP,
  CLINFER_ERROR_SHAPE_MISMATCH,
  CLINFER_ERROR_TYPE_MISMATCH,
  CLINFER_ERROR_DEVICE,
  CLINFER_ERROR_IO,
  CLINFER_ERROR_INVALID_ARGUMENT,
  CLINFER_ERROR_NOT_IMPLEMENTED,
  CLINFER_ERROR_UNSUPPORTED_VERSION,
  CLINFER_ERROR_OUT_OF_MEMORY,
} ClinferError;

CLINFER_API GQuark clinfer_error_quark (void);

G_END_DECLS
