/* clinfer — custom OpenCL layers from the config-file XML (placeholder
 * until the loader lands: every config file is refused). */
#include "devices/opencl/ocl-internal.h"

OclCustomLayers *
clinfer_ocl_custom_load (const char *path, GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
      "%s: custom OpenCL kernels (config file) are not implemented yet", path);
  return NULL;
}

void
clinfer_ocl_custom_free (OclCustomLayers *layers)
{
}

gboolean
clinfer_ocl_custom_handles (const OclCustomLayers *layers,
    const ClinferNode *node)
{
  return FALSE;
}

gboolean
clinfer_ocl_custom_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  return FALSE;
}
