/* clinfer — the device seam's shared code: opening a device by name
 * (CPU, GPU, GPU.N, AUTO), reference counting, and the device list. */
#include "devices/device.h"

/* Every device class built in. */
static const ClinferDeviceClass *const device_classes[] = {
  &clinfer_cpu_device_class,
#ifdef CLINFER_HAVE_OPENCL
  &clinfer_opencl_device_class,
#endif
};

void
clinfer_device_init (ClinferDevice *device, const ClinferDeviceClass *klass,
    const char *name, const char *description)
{
  device->klass = klass;
  device->ref_count = 1;
  device->name = g_strdup (name);
  device->description = g_strdup (description);
  device->arena_align = 64;
  device->properties = g_hash_table_new_full (g_str_hash, g_str_equal,
      g_free, (GDestroyNotify) g_variant_unref);
}

ClinferDevice *
clinfer_device_ref (ClinferDevice *device)
{
  g_atomic_int_inc (&device->ref_count);
  return device;
}

void
clinfer_device_unref (ClinferDevice *device)
{
  char *name, *description;
  GHashTable *properties;

  if (device == NULL || !g_atomic_int_dec_and_test (&device->ref_count))
    return;
  /* close() frees the device's own struct; the base fields go after. */
  name = device->name;
  description = device->description;
  properties = device->properties;
  device->klass->close (device);
  g_free (name);
  g_free (description);
  g_hash_table_unref (properties);
}

static gboolean
is_gpu_name (const char *device)
{
  if (g_ascii_strcasecmp (device, "GPU") == 0)
    return TRUE;
  if (g_ascii_strncasecmp (device, "GPU.", 4) != 0 || device[4] == '\0')
    return FALSE;
  for (const char *p = device + 4; *p; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

ClinferDevice *
clinfer_device_open (const char *device, ClinferDevice *share,
    const ClinferDeviceOptions *options, GError **error)
{
  const ClinferDeviceClass *klass = NULL;

  if (device == NULL)
    device = "CPU";
  if (g_ascii_strcasecmp (device, "AUTO") == 0) {
#ifdef CLINFER_HAVE_OPENCL
    /* AUTO: a GPU-type OpenCL device when there is one, else the native
     * CPU device (faster than an OpenCL CPU runtime). */
    device = clinfer_opencl_have_gpu () ? "GPU" : "CPU";
#else
    device = "CPU";
#endif
    g_info ("device AUTO: using %s", device);
  }
  if (g_ascii_strcasecmp (device, "CPU") == 0)
    klass = &clinfer_cpu_device_class;
  else if (is_gpu_name (device)) {
#ifdef CLINFER_HAVE_OPENCL
    klass = &clinfer_opencl_device_class;
#else
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "device '%s': clinfer was built without OpenCL (meson option "
        "-Dopencl=enabled), so there is no GPU device", device);
    return NULL;
#endif
  } else {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "unknown device '%s' (expected CPU, GPU, GPU.N or AUTO)", device);
    return NULL;
  }
  if (share && share->klass != klass)
    share = NULL;
  return klass->open (device, share, options, error);
}

static void
device_info_free (gpointer data)
{
  ClinferDeviceInfo *info = data;

  g_free (info->name);
  g_free (info->device_name);
  g_free (info->type);
  g_free (info->platform);
  g_free (info->driver_version);
  g_free (info);
}

GPtrArray *
clinfer_device_list (void)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (device_info_free);
  ClinferDeviceInfo *cpu = g_new0 (ClinferDeviceInfo, 1);

  cpu->name = g_strdup ("CPU");
  cpu->index = -1;
  cpu->device_name = g_strdup_printf ("native CPU device (%s)",
      clinfer_cpu_isa_name (clinfer_cpu_isa_detect ()));
  cpu->type = g_strdup ("CPU");
  cpu->platform = g_strdup ("native");
  cpu->driver_version = g_strdup ("");
  g_ptr_array_add (out, cpu);
#ifdef CLINFER_HAVE_OPENCL
  clinfer_opencl_list_devices (out);
#endif
  return out;
}

#ifndef CLINFER_HAVE_OPENCL
/* Without OpenCL there is no context to share. */
ClinferRemoteContext *
clinfer_remote_context_new_from_cl_context (gpointer cl_context,
    GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
      "clinfer was built without OpenCL: cannot share a cl_context");
  return NULL;
}

ClinferRemoteContext *
clinfer_remote_context_new_from_cl_queue (gpointer cl_command_queue,
    GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
      "clinfer was built without OpenCL: cannot share a cl_command_queue");
  return NULL;
}
#endif

gboolean
clinfer_device_add_config_file_ops (const char *config_file, ClinferOpSet *set,
    GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (device_classes); i++)
    if (device_classes[i]->add_config_file_ops)
      return device_classes[i]->add_config_file_ops (config_file, set, error);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
      "%s: custom OpenCL kernels need the OpenCL device, and this clinfer "
      "was built without OpenCL", config_file);
  return FALSE;
}
