/* clinfer — ClinferRequest: binds host or remote inputs (and remote
 * outputs), finds the plan for the input shapes and hands one inference to
 * the compiled model's device (engine/devices/device.h), on the caller's
 * thread (infer) or on one of the compiled model's stream workers
 * (start_async, wait). The device's run state is made once per plan, so
 * static plans allocate nothing per inference. */
#include "runtime/runtime.h"
#include "devices/device.h"
#include <string.h>

struct _ClinferRequest {
  ClinferCompiled *compiled;
  ClinferPlan *plan;         /* plan @run was made for */
  ClinferDeviceRun *run;
  ClinferTensor **inputs;    /* bound host tensors (refs), per model input */
  ClinferRemoteTensor **remote_inputs;   /* or bound remote tensors */
  ClinferRemoteTensor **remote_outputs;  /* per output, or NULL */
  ClinferTensor **outputs;   /* refs to the last inference's host outputs */
  ClinferTensor **bound_outputs;  /* caller's host tensors, per output */
  GArray *profile;           /* ClinferProfileEntry */
  gboolean have_outputs;
  guint64 copied_to_device, copied_to_host;
  guint64 copied_bound;      /* bytes copied into bound_outputs */
  /* Asynchronous runs: @busy from start_async until the worker has
   * called @callback; @async_error its result, taken by wait. */
  GMutex lock;
  GCond done;
  gboolean busy;
  GError *async_error;
  ClinferRequestCallback callback;
  gpointer user_data;
};

ClinferRequest *
clinfer_compiled_create_request (ClinferCompiled *compiled, GError **error)
{
  ClinferRequest *r = g_new0 (ClinferRequest, 1);
  guint n_in = MAX (compiled->inputs->len, 1);
  guint n_out = MAX (compiled->outputs->len, 1);

  r->compiled = clinfer_compiled_ref (compiled);
  r->inputs = g_new0 (ClinferTensor *, n_in);
  r->remote_inputs = g_new0 (ClinferRemoteTensor *, n_in);
  r->remote_outputs = g_new0 (ClinferRemoteTensor *, n_out);
  r->outputs = g_new0 (ClinferTensor *, n_out);
  r->bound_outputs = g_new0 (ClinferTensor *, n_out);
  r->profile = g_array_new (FALSE, TRUE, sizeof (ClinferProfileEntry));
  g_mutex_init (&r->lock);
  g_cond_init (&r->done);
  return r;
}

static void
release_outputs (ClinferRequest *r)
{
  for (guint i = 0; i < r->compiled->outputs->len; i++)
    g_clear_pointer (&r->outputs[i], clinfer_tensor_unref);
  r->have_outputs = FALSE;
}

static void
release_run (ClinferRequest *r)
{
  if (r->run)
    r->compiled->device->klass->free_run (r->run);
  r->run = NULL;
  r->plan = NULL;
}

void
clinfer_request_free (ClinferRequest *r)
{
  if (r == NULL)
    return;
  /* An inference in flight still uses everything below. */
  clinfer_request_wait (r, NULL);
  g_mutex_clear (&r->lock);
  g_cond_clear (&r->done);
  release_outputs (r);
  release_run (r);
  for (guint i = 0; i < r->compiled->inputs->len; i++) {
    g_clear_pointer (&r->inputs[i], clinfer_tensor_unref);
    g_clear_pointer (&r->remote_inputs[i], clinfer_remote_tensor_unref);
  }
  for (guint i = 0; i < r->compiled->outputs->len; i++) {
    g_clear_pointer (&r->remote_outputs[i], clinfer_remote_tensor_unref);
    g_clear_pointer (&r->bound_outputs[i], clinfer_tensor_unref);
  }
  g_free (r->bound_outputs);
  g_free (r->inputs);
  g_free (r->remote_inputs);
  g_free (r->remote_outputs);
  g_free (r->outputs);
  g_array_unref (r->profile);
  clinfer_compiled_unref (r->compiled);
  g_free (r);
}

/* Type and static dims of input @index against @type and @s. */
static gboolean
check_input (ClinferRequest *r, guint index, ClinferElementType type,
    const ClinferShape *s, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferPortInfo info;
  gboolean ok;

  if (!clinfer_model_get_input (c->model, index, &info)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input index %u is out of range (the model has %u inputs)",
        c->model->path, index, clinfer_model_get_n_inputs (c->model));
    return FALSE;
  }
  if (type != info.type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input '%s' expects element type %s, got %s", c->model->path,
        info.name, clinfer_element_type_name (info.type),
        clinfer_element_type_name (type));
    return FALSE;
  }
  ok = info.shape.rank < 0 || info.shape.rank == s->rank;
  for (int i = 0; ok && i < info.shape.rank; i++)
    ok = info.shape.dims[i] < 0 || info.shape.dims[i] == s->dims[i];
  if (!ok) {
    g_autofree char *want = clinfer_shape_to_string (&info.shape);
    g_autofree char *got = clinfer_shape_to_string (s);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: input '%s' expects shape %s, got %s", c->model->path, info.name,
        want, got);
    return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_request_set_input_by_index (ClinferRequest *r, guint index,
    ClinferTensor *tensor, GError **error)
{
  ClinferTensor *bound;
  ClinferRemoteTensor *remote = clinfer_tensor_get_remote (tensor);

  if (remote)
    return clinfer_request_set_remote_input_by_index (r, index, remote, error);
  if (!check_input (r, index, clinfer_tensor_get_element_type (tensor),
          clinfer_tensor_get_shape (tensor), error))
    return FALSE;
  /* Kernels read contiguous memory; a strided input is copied once here. */
  if (clinfer_tensor_is_contiguous (tensor))
    bound = clinfer_tensor_ref (tensor);
  else if (!(bound = clinfer_tensor_copy (tensor, error)))
    return FALSE;
  g_clear_pointer (&r->inputs[index], clinfer_tensor_unref);
  g_clear_pointer (&r->remote_inputs[index], clinfer_remote_tensor_unref);
  r->inputs[index] = bound;
  return TRUE;
}

gboolean
clinfer_request_set_remote_input_by_index (ClinferRequest *r, guint index,
    ClinferRemoteTensor *tensor, GError **error)
{
  if (tensor == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input %u: NULL remote tensor", r->compiled->model->path, index);
    return FALSE;
  }
  if (!check_input (r, index, clinfer_remote_tensor_get_element_type (tensor),
          clinfer_remote_tensor_get_shape (tensor), error))
    return FALSE;
  g_clear_pointer (&r->inputs[index], clinfer_tensor_unref);
  g_clear_pointer (&r->remote_inputs[index], clinfer_remote_tensor_unref);
  r->remote_inputs[index] = clinfer_remote_tensor_ref (tensor);
  return TRUE;
}

/* Index of input @name, or -1 with an error listing the inputs. */
static int
find_input (ClinferRequest *r, const char *name, GError **error)
{
  int idx = clinfer_model_find_input (r->compiled->model, name);

  if (idx < 0) {
    GString *names = g_string_new (NULL);
    for (guint i = 0; i < r->compiled->inputs->len; i++)
      g_string_append_printf (names, "%s'%s'", i ? ", " : "",
          g_array_index (r->compiled->inputs, ClinferPortInfo, i).name);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the model has no input named '%s' (inputs: %s)",
        r->compiled->model->path, name, names->str);
    g_string_free (names, TRUE);
  }
  return idx;
}

gboolean
clinfer_request_set_input (ClinferRequest *r, const char *name,
    ClinferTensor *tensor, GError **error)
{
  int idx = find_input (r, name, error);

  return idx >= 0
      && clinfer_request_set_input_by_index (r, (guint) idx, tensor, error);
}

gboolean
clinfer_request_set_remote_input (ClinferRequest *r, const char *name,
    ClinferRemoteTensor *tensor, GError **error)
{
  int idx = find_input (r, name, error);

  return idx >= 0 && clinfer_request_set_remote_input_by_index (r,
      (guint) idx, tensor, error);
}

gboolean
clinfer_request_set_remote_output (ClinferRequest *r, guint index,
    ClinferRemoteTensor *tensor, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferPortInfo info;

  if (!clinfer_compiled_get_output (c, index, &info)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: output index %u is out of range (the model has %u outputs)",
        c->model->path, index, c->outputs->len);
    return FALSE;
  }
  if (tensor && clinfer_remote_tensor_get_element_type (tensor) != info.type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: output '%s' has element type %s, the remote tensor %s",
        c->model->path, info.name, clinfer_element_type_name (info.type),
        clinfer_element_type_name (clinfer_remote_tensor_get_element_type (tensor)));
    return FALSE;
  }
  /* Dynamic output shapes are checked by the device at run time. */
  if (tensor && clinfer_shape_is_static (&info.shape)
      && !clinfer_shape_equal (&info.shape, clinfer_remote_tensor_get_shape (tensor))) {
    g_autofree char *want = clinfer_shape_to_string (&info.shape);
    g_autofree char *got = clinfer_shape_to_string (clinfer_remote_tensor_get_shape (tensor));
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: output '%s' has shape %s, the remote tensor %s", c->model->path,
        info.name, want, got);
    return FALSE;
  }
  if (tensor)
    clinfer_remote_tensor_ref (tensor);
  g_clear_pointer (&r->remote_outputs[index], clinfer_remote_tensor_unref);
  g_clear_pointer (&r->bound_outputs[index], clinfer_tensor_unref);
  r->remote_outputs[index] = tensor;
  return TRUE;
}

gboolean
clinfer_request_set_output (ClinferRequest *r, guint index,
    ClinferTensor *tensor, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferRemoteTensor *remote = tensor ? clinfer_tensor_get_remote (tensor) : NULL;
  ClinferPortInfo info;

  if (tensor == NULL || remote)
    return clinfer_request_set_remote_output (r, index, remote, error);
  if (!clinfer_compiled_get_output (c, index, &info)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: output index %u is out of range (the model has %u outputs)",
        c->model->path, index, c->outputs->len);
    return FALSE;
  }
  if (clinfer_tensor_get_element_type (tensor) != info.type
      || info.type == CLINFER_TYPE_STRING) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: output '%s' has element type %s, the tensor %s", c->model->path,
        info.name, clinfer_element_type_name (info.type),
        clinfer_element_type_name (clinfer_tensor_get_element_type (tensor)));
    return FALSE;
  }
  if (!clinfer_shape_is_static (&info.shape)
      || !clinfer_shape_equal (&info.shape, clinfer_tensor_get_shape (tensor))
      || !clinfer_tensor_is_contiguous (tensor)) {
    g_autofree char *want = clinfer_shape_to_string (&info.shape);
    g_autofree char *got = clinfer_shape_to_string (clinfer_tensor_get_shape (tensor));
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: output '%s' has shape %s, the tensor %s%s (a bound host output "
        "needs the output's static shape, contiguous)", c->model->path,
        info.name, want, got, clinfer_tensor_is_contiguous (tensor) ? ""
        : ", strided");
    return FALSE;
  }
  g_clear_pointer (&r->remote_outputs[index], clinfer_remote_tensor_unref);
  g_clear_pointer (&r->bound_outputs[index], clinfer_tensor_unref);
  r->bound_outputs[index] = clinfer_tensor_ref (tensor);
  return TRUE;
}

gboolean
clinfer_request_set_output_by_name (ClinferRequest *r, const char *name,
    ClinferTensor *tensor, GError **error)
{
  for (guint i = 0; i < r->compiled->model->graph->outputs->len; i++) {
    ClinferGraphOutput *o = &g_array_index (r->compiled->model->graph->outputs,
        ClinferGraphOutput, i);
    if (g_strcmp0 (o->name, name) == 0)
      return clinfer_request_set_output (r, i, tensor, error);
  }
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: the model has no output named '%s'", r->compiled->model->path, name);
  return FALSE;
}

/* Copies each output bound with clinfer_request_set_output() that the
 * device did not write in place into the caller's tensor, which then
 * stands for the output. */
static gboolean
fill_bound_outputs (ClinferRequest *r, GError **error)
{
  for (guint i = 0; i < r->compiled->outputs->len; i++) {
    ClinferTensor *dst = r->bound_outputs[i], *src = r->outputs[i];
    g_autoptr (ClinferTensor) tmp = NULL;
    if (dst == NULL || src == NULL || src == dst)
      continue;
    if (!clinfer_shape_equal (clinfer_tensor_get_shape (src),
            clinfer_tensor_get_shape (dst))) {
      g_autofree char *want =
          clinfer_shape_to_string (clinfer_tensor_get_shape (dst));
      g_autofree char *got =
          clinfer_shape_to_string (clinfer_tensor_get_shape (src));
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: output %u has shape %s for these inputs, the bound tensor %s",
          r->compiled->model->path, i, got, want);
      return FALSE;
    }
    if (!clinfer_tensor_is_contiguous (src)
        && !(src = tmp = clinfer_tensor_copy (src, error)))
      return FALSE;
    memcpy (clinfer_tensor_get_data (dst), clinfer_tensor_get_const_data (src),
        clinfer_tensor_get_byte_size (dst));
    r->copied_bound += clinfer_tensor_get_byte_size (dst);
    clinfer_tensor_unref (r->outputs[i]);
    r->outputs[i] = clinfer_tensor_ref (dst);
  }
  return TRUE;
}

static gboolean
bind_inputs (ClinferRequest *r, ClinferShape *shapes, GError **error)
{
  ClinferCompiled *c = r->compiled;

  for (guint i = 0; i < c->inputs->len; i++) {
    if (r->inputs[i])
      shapes[i] = *clinfer_tensor_get_shape (r->inputs[i]);
    else if (r->remote_inputs[i])
      shapes[i] = *clinfer_remote_tensor_get_shape (r->remote_inputs[i]);
    else {
      ClinferPortInfo info = g_array_index (c->inputs, ClinferPortInfo, i);
      g_autofree char *s = clinfer_shape_to_string (&info.shape);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: input '%s' (%s %s) is not set", c->model->path, info.name,
          clinfer_element_type_name (info.type), s);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
plan_matches (const ClinferPlan *plan, const ClinferShape *shapes)
{
  for (guint i = 0; i < plan->n_inputs; i++)
    if (!clinfer_shape_equal (&plan->input_shapes[i], &shapes[i]))
      return FALSE;
  return TRUE;
}

/* The plan for @shapes with this request's run state made for it. */
static gboolean
use_plan (ClinferRequest *r, const ClinferShape *shapes, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferPlan *plan;

  if (r->plan && plan_matches (r->plan, shapes))
    return TRUE;
  plan = clinfer_compiled_get_plan (c, shapes, error);
  if (plan == NULL)
    return FALSE;
  release_run (r);
  r->run = c->device->klass->create_run (c->device, plan, error);
  if (r->run == NULL)
    return FALSE;
  r->plan = plan;
  return TRUE;
}

static gboolean
is_busy (ClinferRequest *r)
{
  gboolean busy;

  g_mutex_lock (&r->lock);
  busy = r->busy;
  g_mutex_unlock (&r->lock);
  return busy;
}

static gboolean request_infer (ClinferRequest *r, GError **error);

gboolean
clinfer_request_infer (ClinferRequest *r, GError **error)
{
  if (is_busy (r)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the request is running asynchronously; call "
        "clinfer_request_wait() first", r->compiled->model->path);
    return FALSE;
  }
  return request_infer (r, error);
}

gboolean
clinfer_request_start_async (ClinferRequest *r,
    ClinferRequestCallback callback, gpointer user_data, GError **error)
{
  g_mutex_lock (&r->lock);
  if (r->busy) {
    g_mutex_unlock (&r->lock);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: the request is already running; call clinfer_request_wait() "
        "before starting it again", r->compiled->model->path);
    return FALSE;
  }
  r->busy = TRUE;
  g_clear_error (&r->async_error);
  r->callback = callback;
  r->user_data = user_data;
  g_mutex_unlock (&r->lock);
  if (!clinfer_compiled_push_async (r->compiled, r, error)) {
    g_mutex_lock (&r->lock);
    r->busy = FALSE;
    g_cond_broadcast (&r->done);
    g_mutex_unlock (&r->lock);
    return FALSE;
  }
  return TRUE;
}

void
clinfer_request_run_async (ClinferRequest *r)
{
  GError *err = NULL;

  request_infer (r, &err);
  if (r->callback)
    r->callback (r, err, r->user_data);
  g_mutex_lock (&r->lock);
  r->async_error = err;
  r->busy = FALSE;
  g_cond_broadcast (&r->done);
  g_mutex_unlock (&r->lock);
}

gboolean
clinfer_request_wait (ClinferRequest *r, GError **error)
{
  GError *err;

  g_mutex_lock (&r->lock);
  while (r->busy)
    g_cond_wait (&r->done, &r->lock);
  err = r->async_error;
  r->async_error = NULL;
  g_mutex_unlock (&r->lock);
  if (err == NULL)
    return TRUE;
  g_propagate_error (error, err);
  return FALSE;
}

static gboolean
request_infer (ClinferRequest *r, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferShape shapes[64];
  g_autofree ClinferShape *heap = NULL;
  ClinferShape *sh = shapes;
  ClinferRunIO io = { 0 };
  gboolean ok;

  if (c->inputs->len > G_N_ELEMENTS (shapes))
    sh = heap = g_new0 (ClinferShape, c->inputs->len);
  release_outputs (r);
  r->copied_to_device = r->copied_to_host = r->copied_bound = 0;
  if (!bind_inputs (r, sh, error) || !use_plan (r, sh, error))
    return FALSE;
  g_array_set_size (r->profile, 0);
  io.inputs = r->inputs;
  io.remote_inputs = r->remote_inputs;
  io.remote_outputs = r->remote_outputs;
  io.bound_outputs = r->bound_outputs;
  io.outputs = r->outputs;
  io.profile = c->config->profiling ? r->profile : NULL;
  ok = c->device->klass->run (r->run, &io, error);
  r->copied_to_device = io.bytes_to_device;
  r->copied_to_host = io.bytes_to_host;
  if (!ok || !fill_bound_outputs (r, error)) {
    release_outputs (r);
    return FALSE;
  }
  r->have_outputs = TRUE;
  return TRUE;
}

ClinferTensor *
clinfer_request_get_output (ClinferRequest *r, guint index)
{
  if (!r->have_outputs || index >= r->compiled->outputs->len)
    return NULL;
  return r->outputs[index];
}

ClinferTensor *
clinfer_request_get_output_by_name (ClinferRequest *r, const char *name)
{
  for (guint i = 0; i < r->compiled->model->graph->outputs->len; i++) {
    ClinferGraphOutput *o = &g_array_index (r->compiled->model->graph->outputs,
        ClinferGraphOutput, i);
    if (g_strcmp0 (o->name, name) == 0)
      return clinfer_request_get_output (r, i);
  }
  return NULL;
}

const ClinferProfileEntry *
clinfer_request_get_profile (ClinferRequest *r, guint *n_entries)
{
  *n_entries = r->profile->len;
  return (const ClinferProfileEntry *) r->profile->data;
}

guint64
clinfer_request_get_bound_output_copy_bytes (ClinferRequest *r)
{
  return r->copied_bound;
}

void
clinfer_request_get_copy_stats (ClinferRequest *r, guint64 *host_to_device,
    guint64 *device_to_host)
{
  if (host_to_device)
    *host_to_device = r->copied_to_device;
  if (device_to_host)
    *device_to_host = r->copied_to_host;
}
