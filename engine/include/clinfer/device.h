/* clinfer — the devices clinfer can compile for. */
#pragma once

#include <clinfer/export.h>
#include <clinfer/types.h>

G_BEGIN_DECLS

/**
 * ClinferDeviceInfo:
 * @name: name to pass as device: "CPU" (the native CPU device) or "GPU.N"
 * @index: N of "GPU.N" (OpenCL devices across platforms in ICD order);
 *   -1 for the native CPU device
 * @device_name: the device's own name (CL_DEVICE_NAME), e.g. "Intel(R) UHD"
 * @type: "CPU", "GPU", "ACCELERATOR" or "OTHER"
 * @platform: platform name ("native" for the CPU device)
 * @driver_version: CL_DRIVER_VERSION ("" for the CPU device)
 * @fp16: the device computes in half precision (cl_khr_fp16); f16 tensors
 *   are stored as half and computed in f32 either way
 *
 * One device clinfer can compile for. Listed by clinfer_device_list().
 */
typedef struct {
  char *name;
  int index;
  char *device_name;
  char *type;
  char *platform;
  char *driver_version;
  gboolean fp16;
} ClinferDeviceInfo;

/* (transfer full) The native CPU device first, then every OpenCL device
 * (none when clinfer was built without OpenCL or no platform exists).
 * Free with g_ptr_array_unref(). Never fails: OpenCL errors are logged. */
CLINFER_API GPtrArray *clinfer_device_list (void);

G_END_DECLS
