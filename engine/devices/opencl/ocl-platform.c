/* clinfer — OpenCL platforms and devices: enumeration in ICD order, device
 * selection (GPU, GPU.N, AUTO), the shared runtime objects of a device
 * (context, in-order queue, device facts) and error names. */
#include "devices/opencl/ocl-internal.h"
#include <stdlib.h>
#include <string.h>

const char *
clinfer_ocl_error_name (cl_int err)
{
  switch (err) {
#define E(x) case x: return #x;
    E (CL_SUCCESS) E (CL_DEVICE_NOT_FOUND) E (CL_DEVICE_NOT_AVAILABLE)
    E (CL_COMPILER_NOT_AVAILABLE) E (CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E (CL_OUT_OF_RESOURCES) E (CL_OUT_OF_HOST_MEMORY)
    E (CL_PROFILING_INFO_NOT_AVAILABLE) E (CL_MEM_COPY_OVERLAP)
    E (CL_BUILD_PROGRAM_FAILURE) E (CL_MAP_FAILURE)
    E (CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E (CL_COMPILE_PROGRAM_FAILURE) E (CL_LINK_PROGRAM_FAILURE)
    E (CL_INVALID_VALUE) E (CL_INVALID_DEVICE_TYPE) E (CL_INVALID_PLATFORM)
    E (CL_INVALID_DEVICE) E (CL_INVALID_CONTEXT)
    E (CL_INVALID_QUEUE_PROPERTIES) E (CL_INVALID_COMMAND_QUEUE)
    E (CL_INVALID_HOST_PTR) E (CL_INVALID_MEM_OBJECT)
    E (CL_INVALID_BINARY) E (CL_INVALID_BUILD_OPTIONS)
    E (CL_INVALID_PROGRAM) E (CL_INVALID_PROGRAM_EXECUTABLE)
    E (CL_INVALID_KERNEL_NAME) E (CL_INVALID_KERNEL_DEFINITION)
    E (CL_INVALID_KERNEL) E (CL_INVALID_ARG_INDEX) E (CL_INVALID_ARG_VALUE)
    E (CL_INVALID_ARG_SIZE) E (CL_INVALID_KERNEL_ARGS)
    E (CL_INVALID_WORK_DIMENSION) E (CL_INVALID_WORK_GROUP_SIZE)
    E (CL_INVALID_WORK_ITEM_SIZE) E (CL_INVALID_GLOBAL_OFFSET)
    E (CL_INVALID_EVENT_WAIT_LIST) E (CL_INVALID_EVENT)
    E (CL_INVALID_OPERATION) E (CL_INVALID_BUFFER_SIZE)
    E (CL_INVALID_GLOBAL_WORK_SIZE) E (CL_INVALID_PROPERTY)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
  }
}

gboolean
clinfer_ocl_check (cl_int err, const char *what, GError **error)
{
  if (err == CL_SUCCESS)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE, "%s: %s (%d)", what,
      clinfer_ocl_error_name (err), (int) err);
  return FALSE;
}

void
clinfer_ocl_release_program (gpointer program)
{
  clReleaseProgram (program);
}

void
clinfer_ocl_release_mem (gpointer mem)
{
  clReleaseMemObject (mem);
}

/* ---------------------------------------------------------------- */
/* Enumeration                                                       */

typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  cl_device_type type;
} OclEntry;

/* Every device of every platform, in ICD order. An absent ICD or no
 * platform gives an empty list (logged), never an error. */
static GArray *
enumerate (void)
{
  GArray *out = g_array_new (FALSE, TRUE, sizeof (OclEntry));
  cl_uint n_platforms = 0;
  g_autofree cl_platform_id *platforms = NULL;
  cl_int err = clGetPlatformIDs (0, NULL, &n_platforms);

  if (err != CL_SUCCESS || n_platforms == 0) {
    g_debug ("OpenCL: no platform (%s)", clinfer_ocl_error_name (err));
    return out;
  }
  platforms = g_new0 (cl_platform_id, n_platforms);
  if (clGetPlatformIDs (n_platforms, platforms, NULL) != CL_SUCCESS)
    return out;
  for (cl_uint p = 0; p < n_platforms; p++) {
    cl_uint n = 0;
    g_autofree cl_device_id *devs = NULL;
    if (clGetDeviceIDs (platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n)
        != CL_SUCCESS || n == 0)
      continue;
    devs = g_new0 (cl_device_id, n);
    if (clGetDeviceIDs (platforms[p], CL_DEVICE_TYPE_ALL, n, devs, NULL)
        != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < n; d++) {
      OclEntry e = { platforms[p], devs[d], 0 };
      clGetDeviceInfo (devs[d], CL_DEVICE_TYPE, sizeof (e.type), &e.type, NULL);
      g_array_append_val (out, e);
    }
  }
  return out;
}

static char *
device_string (cl_device_id dev, cl_device_info what)
{
  size_t n = 0;
  char *s;

  if (clGetDeviceInfo (dev, what, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return g_strdup ("");
  s = g_malloc0 (n + 1);
  clGetDeviceInfo (dev, what, n, s, NULL);
  return g_strstrip (s);
}

static char *
platform_string (cl_platform_id p, cl_platform_info what)
{
  size_t n = 0;
  char *s;

  if (clGetPlatformInfo (p, what, 0, NULL, &n) != CL_SUCCESS || n == 0)
    return g_strdup ("");
  s = g_malloc0 (n + 1);
  clGetPlatformInfo (p, what, n, s, NULL);
  return g_strstrip (s);
}

static const char *
type_name (cl_device_type t)
{
  if (t & CL_DEVICE_TYPE_GPU)
    return "GPU";
  if (t & CL_DEVICE_TYPE_CPU)
    return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR)
    return "ACCELERATOR";
  return "OTHER";
}

static gboolean
has_extension (cl_device_id dev, const char *name)
{
  g_autofree char *ext = device_string (dev, CL_DEVICE_EXTENSIONS);
  g_auto (GStrv) list = g_strsplit (ext, " ", -1);

  return g_strv_contains ((const char *const *) list, name);
}

static gboolean
has_fp16 (cl_device_id dev)
{
  return has_extension (dev, "cl_khr_fp16");
}

gboolean
clinfer_opencl_have_gpu (void)
{
  g_autoptr (GArray) all = enumerate ();

  for (guint i = 0; i < all->len; i++)
    if (g_array_index (all, OclEntry, i).type & CL_DEVICE_TYPE_GPU)
      return TRUE;
  return FALSE;
}

void
clinfer_opencl_list_devices (GPtrArray *out)
{
  g_autoptr (GArray) all = enumerate ();

  for (guint i = 0; i < all->len; i++) {
    OclEntry *e = &g_array_index (all, OclEntry, i);
    ClinferDeviceInfo *info = g_new0 (ClinferDeviceInfo, 1);
    info->name = g_strdup_printf ("GPU.%u", i);
    info->index = (int) i;
    info->device_name = device_string (e->device, CL_DEVICE_NAME);
    info->type = g_strdup (type_name (e->type));
    info->platform = platform_string (e->platform, CL_PLATFORM_NAME);
    info->driver_version = device_string (e->device, CL_DRIVER_VERSION);
    info->fp16 = has_fp16 (e->device);
    g_ptr_array_add (out, info);
  }
}

/* ---------------------------------------------------------------- */
/* The core: shared runtime objects                                  */

/* Index of @dev in the enumeration, or -1. */
static int
index_of (cl_device_id dev)
{
  g_autoptr (GArray) all = enumerate ();

  for (guint i = 0; i < all->len; i++)
    if (g_array_index (all, OclEntry, i).device == dev)
      return (int) i;
  return -1;
}

static gsize
round_pow2 (gsize v)
{
  gsize p = 64;

  while (p < v)
    p <<= 1;
  return p;
}

/* GPU kernel shapes for GPUs and accelerators, CPU ones for CPU
 * implementations; $CLINFER_OPENCL_KERNELS=gpu or cpu forces one (tests
 * run the GPU shapes on PoCL, Intel's CPU runtime and oclgrind). */
static gboolean
gpu_shaped (cl_device_type type)
{
  const char *force = g_getenv ("CLINFER_OPENCL_KERNELS");

  if (g_strcmp0 (force, "gpu") == 0)
    return TRUE;
  if (g_strcmp0 (force, "cpu") == 0)
    return FALSE;
  if (force && *force)
    g_warning ("CLINFER_OPENCL_KERNELS=%s: expected gpu or cpu; ignored",
        force);
  /* oclgrind says GPU, CPU and accelerator at once: the GPU bit wins. */
  return (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) != 0
      || (type & CL_DEVICE_TYPE_CPU) == 0;
}

gboolean
clinfer_ocl_core_can_tile16 (const OclCore *core)
{
  return core->max_work_group >= 256 && core->local_mem >= 4096;
}

/* Reads the device facts into @core (device and platform set). */
static void
core_fill_info (OclCore *core)
{
  cl_bool unified = CL_FALSE;
  cl_uint align_bits = 0;
  size_t wg = 0;

  core->device_name = device_string (core->device, CL_DEVICE_NAME);
  core->driver_version = device_string (core->device, CL_DRIVER_VERSION);
  core->device_version = device_string (core->device, CL_DEVICE_VERSION);
  core->platform_name = platform_string (core->platform, CL_PLATFORM_NAME);
  clGetDeviceInfo (core->device, CL_DEVICE_HOST_UNIFIED_MEMORY,
      sizeof (unified), &unified, NULL);
  clGetDeviceInfo (core->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN,
      sizeof (align_bits), &align_bits, NULL);
  clGetDeviceInfo (core->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
      sizeof (core->max_alloc), &core->max_alloc, NULL);
  clGetDeviceInfo (core->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof (wg),
      &wg, NULL);
  core->max_work_group = wg ? wg : 1;
  clGetDeviceInfo (core->device, CL_DEVICE_TYPE, sizeof (core->type),
      &core->type, NULL);
  clGetDeviceInfo (core->device, CL_DEVICE_LOCAL_MEM_SIZE,
      sizeof (core->local_mem), &core->local_mem, NULL);
  core->gpu_shaped = gpu_shaped (core->type);
  /* CLINFER_OPENCL_DISCRETE=1 treats the device as not sharing host
   * memory (tests: a discrete GPU's copies on PoCL and oclgrind). */
  core->unified_memory = unified == CL_TRUE
      && g_strcmp0 (g_getenv ("CLINFER_OPENCL_DISCRETE"), "1") != 0;
  core->fp16 = has_fp16 (core->device);
  /* CLINFER_OPENCL_DISABLE_FP64=1 hides cl_khr_fp64 (tests: the f64 ops'
   * fallback on a device that has it). */
  core->fp64 = has_extension (core->device, "cl_khr_fp64")
      && g_strcmp0 (g_getenv ("CLINFER_OPENCL_DISABLE_FP64"), "1") != 0;
  core->base_align = round_pow2 (align_bits / 8);
  core->index = index_of (core->device);
  core->name = core->index >= 0 ? g_strdup_printf ("GPU.%d", core->index)
      : g_strdup ("GPU");
  g_mutex_init (&core->lock);
  core->programs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      clinfer_ocl_release_program);
}

static OclCore *
core_new (cl_platform_id platform, cl_device_id device)
{
  OclCore *core = g_new0 (OclCore, 1);

  core->ref_count = 1;
  core->platform = platform;
  core->device = device;
  core_fill_info (core);
  return core;
}

/* Context and in-order queue of a core made by clinfer. */
static gboolean
core_create_objects (OclCore *core, GError **error)
{
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = { CL_CONTEXT_PLATFORM,
    (cl_context_properties) core->platform, 0 };

  core->context = clCreateContext (props, 1, &core->device, NULL, NULL, &err);
  if (!clinfer_ocl_check (err, "clCreateContext", error))
    return FALSE;
  core->queue = clCreateCommandQueue (core->context, core->device, 0, &err);
  return clinfer_ocl_check (err, "clCreateCommandQueue", error);
}

/* Which enumerated device "GPU" / "GPU.N" means. */
static gboolean
select_device (GArray *all, const char *device, guint *index, GError **error)
{
  if (all->len == 0) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "device '%s': no OpenCL platform or device found (is an OpenCL ICD "
        "such as pocl-opencl-icd installed?)", device);
    return FALSE;
  }
  if (g_ascii_strcasecmp (device, "GPU") == 0) {
    *index = 0;
    for (guint i = 0; i < all->len; i++)
      if (g_array_index (all, OclEntry, i).type & CL_DEVICE_TYPE_GPU) {
        *index = i;
        return TRUE;
      }
    g_info ("device GPU: no GPU-type OpenCL device, using GPU.0 (%s)",
        type_name (g_array_index (all, OclEntry, 0).type));
    return TRUE;
  }
  *index = (guint) g_ascii_strtoull (device + 4, NULL, 10);
  if (*index >= all->len) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "device '%s': there are only %u OpenCL devices (GPU.0 to GPU.%u)",
        device, all->len, all->len - 1);
    return FALSE;
  }
  return TRUE;
}

OclCore *
clinfer_ocl_core_open (const char *device, GError **error)
{
  g_autoptr (GArray) all = enumerate ();
  OclEntry *e;
  OclCore *core;
  guint index;

  if (!select_device (all, device, &index, error))
    return NULL;
  e = &g_array_index (all, OclEntry, index);
  core = core_new (e->platform, e->device);
  if (!core_create_objects (core, error)) {
    g_prefix_error (error, "device '%s' (%s): ", device, core->device_name);
    clinfer_ocl_core_unref (core);
    return NULL;
  }
  g_info ("device %s: %s", device, core->device_name);
  return core;
}

OclCore *
clinfer_ocl_core_new_from_context (cl_context context, GError **error)
{
  cl_device_id dev = NULL;
  cl_platform_id platform = NULL;
  OclCore *core;
  cl_int err;

  err = clGetContextInfo (context, CL_CONTEXT_DEVICES, sizeof (dev), &dev, NULL);
  /* CL_INVALID_VALUE: more than one device; the first one is taken. */
  if (err == CL_INVALID_VALUE) {
    cl_uint n = 0;
    g_autofree cl_device_id *devs = NULL;
    clGetContextInfo (context, CL_CONTEXT_NUM_DEVICES, sizeof (n), &n, NULL);
    devs = g_new0 (cl_device_id, MAX (n, 1));
    err = clGetContextInfo (context, CL_CONTEXT_DEVICES,
        sizeof (cl_device_id) * MAX (n, 1), devs, NULL);
    dev = devs[0];
  }
  if (!clinfer_ocl_check (err, "application cl_context: clGetContextInfo", error))
    return NULL;
  err = clGetDeviceInfo (dev, CL_DEVICE_PLATFORM, sizeof (platform), &platform,
      NULL);
  if (!clinfer_ocl_check (err, "clGetDeviceInfo (CL_DEVICE_PLATFORM)", error))
    return NULL;
  core = core_new (platform, dev);
  clRetainContext (context);
  core->context = context;
  core->queue = clCreateCommandQueue (context, dev, 0, &err);
  if (!clinfer_ocl_check (err, "clCreateCommandQueue", error)) {
    clinfer_ocl_core_unref (core);
    return NULL;
  }
  return core;
}

OclCore *
clinfer_ocl_core_new_from_queue (cl_command_queue queue, GError **error)
{
  cl_context context = NULL;
  cl_device_id dev = NULL;
  cl_platform_id platform = NULL;
  cl_command_queue_properties props = 0;
  OclCore *core;
  cl_int err;

  err = clGetCommandQueueInfo (queue, CL_QUEUE_CONTEXT, sizeof (context),
      &context, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo (queue, CL_QUEUE_DEVICE, sizeof (dev), &dev, NULL);
  if (err == CL_SUCCESS)
    err = clGetCommandQueueInfo (queue, CL_QUEUE_PROPERTIES, sizeof (props),
        &props, NULL);
  if (err == CL_SUCCESS)
    err = clGetDeviceInfo (dev, CL_DEVICE_PLATFORM, sizeof (platform),
        &platform, NULL);
  if (!clinfer_ocl_check (err, "application cl_command_queue: clGetCommandQueueInfo",
          error))
    return NULL;
  if (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "application cl_command_queue is out-of-order; clinfer needs an "
        "in-order queue");
    return NULL;
  }
  core = core_new (platform, dev);
  clRetainContext (context);
  clRetainCommandQueue (queue);
  core->context = context;
  core->queue = queue;
  return core;
}

OclCore *
clinfer_ocl_core_ref (OclCore *core)
{
  g_atomic_int_inc (&core->ref_count);
  return core;
}

void
clinfer_ocl_core_unref (OclCore *core)
{
  if (core == NULL || !g_atomic_int_dec_and_test (&core->ref_count))
    return;
  g_hash_table_unref (core->programs);
  g_mutex_clear (&core->lock);
  if (core->queue) {
    clFinish (core->queue);
    clReleaseCommandQueue (core->queue);
  }
  if (core->context)
    clReleaseContext (core->context);
  g_free (core->name);
  g_free (core->device_name);
  g_free (core->platform_name);
  g_free (core->driver_version);
  g_free (core->device_version);
  g_free (core);
}

char *
clinfer_ocl_core_describe (const OclCore *core)
{
  return g_strdup_printf ("%s: %s (%s, driver %s)", core->name,
      core->device_name, core->platform_name, core->driver_version);
}
