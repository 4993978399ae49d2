/* clinfer — the CLINFER_ERROR domain and the library version. */
#include <clinfer/error.h>
#include <clinfer/version.h>

G_DEFINE_QUARK (clinfer-error-quark, clinfer_error)

const char *
clinfer_get_version (void)
{
  return CLINFER_VERSION;
}
