/* clinfer OpenCL tests — what the GPU device asks of the OpenCL driver.
 *
 * This program defines the OpenCL entry points the engine calls and
 * exports them (export_dynamic), so libclinfer's calls resolve here first;
 * each one is counted and forwarded to the ICD loader (dlsym RTLD_NEXT).
 * The tests then check, on whatever OpenCL implementation runs them:
 *   - steady state: an inference of a static plan is its launches plus
 *     one clFinish: no clCreate*, clBuild*, clSetKernelArg, and no
 *     blocking read, write or map (issue #18, item 5);
 *   - a new input buffer re-sets only the arguments that read it;
 *   - ownership: no sub-buffers, and every cl_mem created or retained is
 *     released exactly once by the time the objects are freed, whichever
 *     of the request and the compiled model goes first (the teardown
 *     crash on NVIDIA's driver, issue #18, item 1).
 * Exit status 77 (skipped) without an OpenCL device. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <string.h>
#include "opencl-test-util.h"

typedef struct {
  guint create_buffer, create_sub_buffer, retain_mem, release_mem;
  guint create_kernel, set_kernel_arg, build_program, create_program;
  guint nd_range, copy_buffer, finish, wait_events;
  guint read_blocking, read_queued, write_blocking, write_queued;
  guint map_blocking, map_queued, unmap;
} Counts;

static Counts counts;

/* The loader's entry point @name, looked up once. */
#define REAL(type, name) \
  static type real_##name; \
  if (real_##name == NULL) \
    real_##name = (type) dlsym (RTLD_NEXT, #name); \
  g_assert_nonnull (real_##name)

typedef cl_mem (CL_API_CALL *CreateBufferFn) (cl_context, cl_mem_flags, size_t,
    void *, cl_int *);
CL_API_ENTRY cl_mem CL_API_CALL
clCreateBuffer (cl_context context, cl_mem_flags flags, size_t size,
    void *host_ptr, cl_int *errcode_ret)
{
  REAL (CreateBufferFn, clCreateBuffer);
  cl_int err;
  cl_mem m = real_clCreateBuffer (context, flags, size, host_ptr, &err);
  if (err == CL_SUCCESS)
    counts.create_buffer++;
  if (errcode_ret)
    *errcode_ret = err;
  return m;
}

typedef cl_mem (CL_API_CALL *CreateSubBufferFn) (cl_mem, cl_mem_flags,
    cl_buffer_create_type, const void *, cl_int *);
CL_API_ENTRY cl_mem CL_API_CALL
clCreateSubBuffer (cl_mem buffer, cl_mem_flags flags,
    cl_buffer_create_type type, const void *info, cl_int *errcode_ret)
{
  REAL (CreateSubBufferFn, clCreateSubBuffer);
  cl_int err;
  cl_mem m = real_clCreateSubBuffer (buffer, flags, type, info, &err);
  if (err == CL_SUCCESS)
    counts.create_sub_buffer++;
  if (errcode_ret)
    *errcode_ret = err;
  return m;
}

typedef cl_int (CL_API_CALL *MemFn) (cl_mem);
CL_API_ENTRY cl_int CL_API_CALL
clRetainMemObject (cl_mem mem)
{
  REAL (MemFn, clRetainMemObject);
  counts.retain_mem++;
  return real_clRetainMemObject (mem);
}

CL_API_ENTRY cl_int CL_API_CALL
clReleaseMemObject (cl_mem mem)
{
  REAL (MemFn, clReleaseMemObject);
  counts.release_mem++;
  return real_clReleaseMemObject (mem);
}

typedef cl_kernel (CL_API_CALL *CreateKernelFn) (cl_program, const char *,
    cl_int *);
CL_API_ENTRY cl_kernel CL_API_CALL
clCreateKernel (cl_program program, const char *name, cl_int *errcode_ret)
{
  REAL (CreateKernelFn, clCreateKernel);
  counts.create_kernel++;
  return real_clCreateKernel (program, name, errcode_ret);
}

typedef cl_int (CL_API_CALL *SetKernelArgFn) (cl_kernel, cl_uint, size_t,
    const void *);
CL_API_ENTRY cl_int CL_API_CALL
clSetKernelArg (cl_kernel kernel, cl_uint index, size_t size,
    const void *value)
{
  REAL (SetKernelArgFn, clSetKernelArg);
  counts.set_kernel_arg++;
  return real_clSetKernelArg (kernel, index, size, value);
}

typedef cl_int (CL_API_CALL *BuildProgramFn) (cl_program, cl_uint,
    const cl_device_id *, const char *,
    void (CL_CALLBACK *) (cl_program, void *), void *);
CL_API_ENTRY cl_int CL_API_CALL
clBuildProgram (cl_program program, cl_uint n, const cl_device_id *devices,
    const char *options, void (CL_CALLBACK *notify) (cl_program, void *),
    void *data)
{
  REAL (BuildProgramFn, clBuildProgram);
  counts.build_program++;
  return real_clBuildProgram (program, n, devices, options, notify, data);
}

typedef cl_program (CL_API_CALL *CreateProgramWithSourceFn) (cl_context,
    cl_uint, const char **, const size_t *, cl_int *);
CL_API_ENTRY cl_program CL_API_CALL
clCreateProgramWithSource (cl_context context, cl_uint count,
    const char **strings, const size_t *lengths, cl_int *errcode_ret)
{
  REAL (CreateProgramWithSourceFn, clCreateProgramWithSource);
  counts.create_program++;
  return real_clCreateProgramWithSource (context, count, strings, lengths,
      errcode_ret);
}

typedef cl_program (CL_API_CALL *CreateProgramWithBinaryFn) (cl_context,
    cl_uint, const cl_device_id *, const size_t *, const unsigned char **,
    cl_int *, cl_int *);
CL_API_ENTRY cl_program CL_API_CALL
clCreateProgramWithBinary (cl_context context, cl_uint n,
    const cl_device_id *devices, const size_t *lengths,
    const unsigned char **binaries, cl_int *status, cl_int *errcode_ret)
{
  REAL (CreateProgramWithBinaryFn, clCreateProgramWithBinary);
  counts.create_program++;
  return real_clCreateProgramWithBinary (context, n, devices, lengths,
      binaries, status, errcode_ret);
}

typedef cl_int (CL_API_CALL *NDRangeFn) (cl_command_queue, cl_kernel, cl_uint,
    const size_t *, const size_t *, const size_t *, cl_uint, const cl_event *,
    cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clEnqueueNDRangeKernel (cl_command_queue q, cl_kernel k, cl_uint dim,
    const size_t *offset, const size_t *global, const size_t *local,
    cl_uint n_wait, const cl_event *wait, cl_event *event)
{
  REAL (NDRangeFn, clEnqueueNDRangeKernel);
  counts.nd_range++;
  return real_clEnqueueNDRangeKernel (q, k, dim, offset, global, local, n_wait,
      wait, event);
}

typedef cl_int (CL_API_CALL *CopyBufferFn) (cl_command_queue, cl_mem, cl_mem,
    size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clEnqueueCopyBuffer (cl_command_queue q, cl_mem src, cl_mem dst,
    size_t src_offset, size_t dst_offset, size_t size, cl_uint n_wait,
    const cl_event *wait, cl_event *event)
{
  REAL (CopyBufferFn, clEnqueueCopyBuffer);
  counts.copy_buffer++;
  return real_clEnqueueCopyBuffer (q, src, dst, src_offset, dst_offset, size,
      n_wait, wait, event);
}

typedef cl_int (CL_API_CALL *FinishFn) (cl_command_queue);
CL_API_ENTRY cl_int CL_API_CALL
clFinish (cl_command_queue q)
{
  REAL (FinishFn, clFinish);
  counts.finish++;
  return real_clFinish (q);
}

typedef cl_int (CL_API_CALL *WaitForEventsFn) (cl_uint, const cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clWaitForEvents (cl_uint n, const cl_event *events)
{
  REAL (WaitForEventsFn, clWaitForEvents);
  counts.wait_events++;
  return real_clWaitForEvents (n, events);
}

typedef cl_int (CL_API_CALL *ReadBufferFn) (cl_command_queue, cl_mem, cl_bool,
    size_t, size_t, void *, cl_uint, const cl_event *, cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clEnqueueReadBuffer (cl_command_queue q, cl_mem mem, cl_bool blocking,
    size_t offset, size_t size, void *ptr, cl_uint n_wait,
    const cl_event *wait, cl_event *event)
{
  REAL (ReadBufferFn, clEnqueueReadBuffer);
  if (blocking)
    counts.read_blocking++;
  else
    counts.read_queued++;
  return real_clEnqueueReadBuffer (q, mem, blocking, offset, size, ptr,
      n_wait, wait, event);
}

typedef cl_int (CL_API_CALL *WriteBufferFn) (cl_command_queue, cl_mem, cl_bool,
    size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clEnqueueWriteBuffer (cl_command_queue q, cl_mem mem, cl_bool blocking,
    size_t offset, size_t size, const void *ptr, cl_uint n_wait,
    const cl_event *wait, cl_event *event)
{
  REAL (WriteBufferFn, clEnqueueWriteBuffer);
  if (blocking)
    counts.write_blocking++;
  else
    counts.write_queued++;
  return real_clEnqueueWriteBuffer (q, mem, blocking, offset, size, ptr,
      n_wait, wait, event);
}

typedef void *(CL_API_CALL *MapBufferFn) (cl_command_queue, cl_mem, cl_bool,
    cl_map_flags, size_t, size_t, cl_uint, const cl_event *, cl_event *,
    cl_int *);
CL_API_ENTRY void *CL_API_CALL
clEnqueueMapBuffer (cl_command_queue q, cl_mem mem, cl_bool blocking,
    cl_map_flags flags, size_t offset, size_t size, cl_uint n_wait,
    const cl_event *wait, cl_event *event, cl_int *errcode_ret)
{
  REAL (MapBufferFn, clEnqueueMapBuffer);
  if (blocking)
    counts.map_blocking++;
  else
    counts.map_queued++;
  return real_clEnqueueMapBuffer (q, mem, blocking, flags, offset, size,
      n_wait, wait, event, errcode_ret);
}

typedef cl_int (CL_API_CALL *UnmapFn) (cl_command_queue, cl_mem, void *,
    cl_uint, const cl_event *, cl_event *);
CL_API_ENTRY cl_int CL_API_CALL
clEnqueueUnmapMemObject (cl_command_queue q, cl_mem mem, void *ptr,
    cl_uint n_wait, const cl_event *wait, cl_event *event)
{
  REAL (UnmapFn, clEnqueueUnmapMemObject);
  counts.unmap++;
  return real_clEnqueueUnmapMemObject (q, mem, ptr, n_wait, wait, event);
}

/* ---------------------------------------------------------------- */

#define N_RUNS 5

static Counts
diff (const Counts *after, const Counts *before)
{
  Counts d;
  const guint *a = (const guint *) after, *b = (const guint *) before;
  guint *o = (guint *) &d;

  for (gsize i = 0; i < sizeof (Counts) / sizeof (guint); i++)
    o[i] = a[i] - b[i];
  return d;
}

static void
print_counts (const char *what, const Counts *c)
{
  g_test_message ("%s: create_buffer=%u sub_buffer=%u retain=%u release=%u "
      "create_kernel=%u set_arg=%u build=%u create_program=%u nd_range=%u "
      "copy=%u finish=%u wait=%u read=%u/%u write=%u/%u map=%u/%u unmap=%u "
      "(blocking/queued)", what, c->create_buffer, c->create_sub_buffer,
      c->retain_mem, c->release_mem, c->create_kernel, c->set_kernel_arg,
      c->build_program, c->create_program, c->nd_range, c->copy_buffer,
      c->finish, c->wait_events, c->read_blocking, c->read_queued,
      c->write_blocking, c->write_queued, c->map_blocking, c->map_queued,
      c->unmap);
}

/* What no steady-state inference may call. */
static void
assert_no_host_work (const Counts *d)
{
  g_assert_cmpuint (d->create_buffer, ==, 0);
  g_assert_cmpuint (d->create_sub_buffer, ==, 0);
  g_assert_cmpuint (d->create_kernel, ==, 0);
  g_assert_cmpuint (d->build_program, ==, 0);
  g_assert_cmpuint (d->create_program, ==, 0);
  g_assert_cmpuint (d->read_blocking, ==, 0);
  g_assert_cmpuint (d->write_blocking, ==, 0);
  g_assert_cmpuint (d->map_blocking, ==, 0);
  g_assert_cmpuint (d->wait_events, ==, 0);
  /* One wait per inference. */
  g_assert_cmpuint (d->finish, ==, N_RUNS);
  /* The plan's launches, the same number each time. */
  g_assert_cmpuint (d->nd_range, >, 0);
  g_assert_cmpuint (d->nd_range % N_RUNS, ==, 0);
}

/* A remote tensor of @compiled's context holding @host. */
static ClinferRemoteTensor *
remote_copy (ClinferCompiled *compiled, ClinferTensor *host)
{
  g_autoptr (GError) err = NULL;
  ClinferRemoteTensor *t = clinfer_remote_context_create_tensor (
      clinfer_compiled_get_remote_context (compiled),
      clinfer_tensor_get_element_type (host), clinfer_tensor_get_shape (host),
      &err);

  g_assert_no_error (err);
  g_assert_true (clinfer_remote_tensor_write (t, host, &err));
  g_assert_no_error (err);
  return t;
}

static void
infer_n (ClinferRequest *r, guint n)
{
  g_autoptr (GError) err = NULL;

  for (guint i = 0; i < n; i++) {
    g_assert_true (clinfer_request_infer (r, &err));
    g_assert_no_error (err);
  }
}

/* BlazeFace 128 on the GPU device, input in a remote tensor of the
 * device's context, outputs read back to the host. */
static void
test_steady_state_remote (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) c = test_compile (path, "GPU", FALSE);
  g_autoptr (ClinferRemoteTensor) rin = remote_copy (c, input);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  ClinferTensor *view = clinfer_remote_tensor_to_tensor (rin);
  Counts before, d;

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, view, &err));
  g_assert_no_error (err);
  clinfer_tensor_unref (view);
  infer_n (r, 2);
  before = counts;
  infer_n (r, N_RUNS);
  d = diff (&counts, &before);
  print_counts ("5 inferences, remote input", &d);
  assert_no_host_work (&d);
  g_assert_cmpuint (d.set_kernel_arg, ==, 0);
  g_assert_cmpuint (d.map_queued + d.unmap + d.write_queued, ==, 0);
  /* The outputs, queued before the one wait. */
  g_assert_cmpuint (d.read_queued, ==,
      N_RUNS * clinfer_compiled_get_n_outputs (c));
  g_assert_cmpuint (d.retain_mem, ==, 0);
  g_assert_cmpuint (d.release_mem, ==, 0);
}

/* The same with the input a host tensor: at most a queued write (discrete
 * devices) or a queued map/unmap (unified memory) of it. */
static void
test_steady_state_host (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) c = test_compile (path, "GPU", FALSE);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  Counts before, d;

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, input, &err));
  infer_n (r, 2);
  before = counts;
  infer_n (r, N_RUNS);
  d = diff (&counts, &before);
  print_counts ("5 inferences, host input", &d);
  assert_no_host_work (&d);
  g_assert_cmpuint (d.set_kernel_arg, ==, 0);
  g_assert_cmpuint (d.write_queued + d.map_queued, ==, N_RUNS);
  g_assert_cmpuint (d.unmap, ==, d.map_queued);
}

/* Two input buffers in turn: only the arguments that read the input are
 * set again, and each set buffer is held (retained) while bound. */
static void
test_new_input_buffer (void)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  g_autoptr (ClinferCompiled) c = test_compile (path, "GPU", FALSE);
  g_autoptr (ClinferRemoteTensor) a = remote_copy (c, input);
  g_autoptr (ClinferRemoteTensor) b = remote_copy (c, input);
  g_autoptr (GError) err = NULL;
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, &err);
  g_autoptr (ClinferTensor) va = clinfer_remote_tensor_to_tensor (a);
  g_autoptr (ClinferTensor) vb = clinfer_remote_tensor_to_tensor (b);
  Counts before, d;
  guint per_switch;

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, va, &err));
  infer_n (r, 1);
  g_assert_true (clinfer_request_set_input_by_index (r, 0, vb, &err));
  before = counts;
  infer_n (r, 1);
  d = diff (&counts, &before);
  print_counts ("new input buffer", &d);
  per_switch = d.set_kernel_arg;
  g_assert_cmpuint (per_switch, >, 0);
  /* BlazeFace's input is read by its first step only. */
  g_assert_cmpuint (per_switch, <=, 2);
  g_assert_cmpuint (d.retain_mem, ==, per_switch);
  g_assert_cmpuint (d.create_buffer + d.create_kernel, ==, 0);
  /* Back to the first: the same number again. */
  g_assert_true (clinfer_request_set_input_by_index (r, 0, va, &err));
  before = counts;
  infer_n (r, 1);
  d = diff (&counts, &before);
  g_assert_cmpuint (d.set_kernel_arg, ==, per_switch);
}

/* Every cl_mem created or retained is released once, whichever object
 * goes first; no sub-buffers anywhere. */
static void
check_balance (gboolean compiled_first, gboolean remote_input)
{
  g_autofree char *path = test_blazeface_path ();
  g_autoptr (ClinferTensor) input = test_blazeface_input ();
  Counts before = counts, d;
  ClinferCompiled *c = test_compile (path, "GPU", FALSE);
  ClinferRemoteTensor *rin = remote_input ? remote_copy (c, input) : NULL;
  g_autoptr (GError) err = NULL;
  ClinferRequest *r = clinfer_compiled_create_request (c, &err);
  ClinferTensor *view = rin ? clinfer_remote_tensor_to_tensor (rin) : NULL;

  g_assert_no_error (err);
  g_assert_true (clinfer_request_set_input_by_index (r, 0,
          view ? view : input, &err));
  infer_n (r, 3);
  if (compiled_first)
    clinfer_compiled_unref (c);
  else
    clinfer_request_free (r);
  if (view)
    clinfer_tensor_unref (view);
  if (rin)
    clinfer_remote_tensor_unref (rin);
  if (compiled_first)
    clinfer_request_free (r);
  else
    clinfer_compiled_unref (c);
  d = diff (&counts, &before);
  print_counts ("whole life", &d);
  g_assert_cmpuint (d.create_sub_buffer, ==, 0);
  g_assert_cmpuint (d.create_buffer, >, 0);
  g_assert_cmpuint (d.create_buffer + d.retain_mem, ==, d.release_mem);
}

static void
test_balance_request_first (void)
{
  check_balance (FALSE, TRUE);
}

static void
test_balance_compiled_first (void)
{
  check_balance (TRUE, FALSE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!test_have_opencl ()) {
    g_print ("no OpenCL device: skipped\n");
    return TEST_SKIP_STATUS;
  }
  g_test_add_func ("/ocl-calls/steady-state-remote", test_steady_state_remote);
  g_test_add_func ("/ocl-calls/steady-state-host", test_steady_state_host);
  g_test_add_func ("/ocl-calls/new-input-buffer", test_new_input_buffer);
  g_test_add_func ("/ocl-calls/balance-request-first",
      test_balance_request_first);
  g_test_add_func ("/ocl-calls/balance-compiled-first",
      test_balance_compiled_first);
  return g_test_run ();
}
