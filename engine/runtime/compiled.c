/* clinfer — compiling a model into a plan: passes, steps and slots,
 * placing each step on the device (or the CPU fallback), memory planning,
 * then the device's own preparation (engine/devices/device.h). */
#include "runtime/runtime.h"
#include "devices/device.h"
#include "passes/passes.h"
#include <string.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_PLANS 8

/* ---------------------------------------------------------------- */
/* Plans                                                             */

static void
plan_free (ClinferPlan *plan)
{
  if (plan == NULL)
    return;
  if (plan->device) {
    if (plan->device->klass->free_plan)
      plan->device->klass->free_plan (plan->device, plan);
    clinfer_device_unref (plan->device);
  }
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    if (st->kernel.free_state)
      st->kernel.free_state (st->kernel.state);
    g_free (st->kernel.name);
    g_free (st->device_kernel);
    g_free (st->in_slots);
    g_free (st->out_slots);
    g_free (st->op_label);
    g_free (st->shape_label);
  }
  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->value)
      clinfer_tensor_unref (s->value);
  }
  g_array_unref (plan->steps);
  g_free (plan->alt_offsets);
  g_array_unref (plan->slots);
  g_free (plan->output_slots);
  g_free (plan->input_shapes);
  clinfer_graph_free (plan->graph);
  g_free (plan);
}

static gboolean
shapes_equal (const ClinferShape *a, const ClinferShape *b, guint n)
{
  for (guint i = 0; i < n; i++)
    if (!clinfer_shape_equal (&a[i], &b[i]))
      return FALSE;
  return TRUE;
}

/* Slot index of every node output, created on first sight. */
static guint
slot_for (ClinferPlan *plan, GHashTable *port_slot, ClinferNode *node,
    guint port, const ClinferCompiled *c)
{
  gpointer key = &node->outputs[port];
  gpointer v;
  ClinferSlot s = { 0 };
  const ClinferPortDesc *d = &node->outputs[port];

  if (g_hash_table_lookup_extended (port_slot, key, NULL, &v))
    return GPOINTER_TO_UINT (v);
  s.type = d->type;
  s.shape = d->shape;
  s.first_step = -1;
  s.last_step = -1;
  if (d->value) {
    s.kind = CLINFER_SLOT_CONSTANT;
    s.value = clinfer_tensor_ref (d->value);
  } else if (strcmp (node->op_type, "Parameter") == 0 && *node->domain == '\0') {
    s.kind = CLINFER_SLOT_INPUT;
    for (guint i = 0; i < plan->graph->inputs->len; i++)
      if (g_ptr_array_index (plan->graph->inputs, i) == node)
        s.input_index = i;
  } else if (clinfer_shape_is_static (&d->shape)
      && clinfer_element_type_size (d->type) > 0
      && d->type != CLINFER_TYPE_STRING) {
    /* String tensors own their char* elements: they get owned tensors
     * (dynamic slots), never arena memory that nobody would free. */
    s.kind = CLINFER_SLOT_ARENA;
    s.bytes = (gsize) clinfer_shape_n_elements (&d->shape)
        * clinfer_element_type_size (d->type);
  } else {
    s.kind = CLINFER_SLOT_DYNAMIC;
  }
  g_array_append_val (plan->slots, s);
  g_hash_table_insert (port_slot, key, GUINT_TO_POINTER (plan->slots->len - 1));
  return plan->slots->len - 1;
}

static gboolean
step_is_dynamic (const ClinferNode *node)
{
  for (guint i = 0; i < node->n_outputs; i++)
    if (!clinfer_shape_is_static (&node->outputs[i].shape)
        || node->outputs[i].type == CLINFER_TYPE_STRING)
      return TRUE;
  return FALSE;
}

static void
mark_use (ClinferPlan *plan, guint slot, int step)
{
  ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, slot);
  if (s->first_step < 0 || step < s->first_step)
    s->first_step = step;
  s->last_step = MAX (s->last_step, step);
}

/* Builds steps and slots from the optimised graph in topological order. */
static gboolean
build_steps (ClinferCompiled *c, ClinferPlan *plan, GError **error)
{
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (plan->graph, error);
  g_autoptr (GHashTable) port_slot = g_hash_table_new (NULL, NULL);

  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < plan->graph->inputs->len; i++)
    slot_for (plan, port_slot, g_ptr_array_index (plan->graph->inputs, i), 0, c);
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *node = g_ptr_array_index (order, i);
    ClinferStep st = { 0 };
    int idx = (int) plan->steps->len;
    gboolean all_const = node->n_outputs > 0;

    for (guint j = 0; j < node->n_outputs; j++)
      all_const = all_const && node->outputs[j].value != NULL;
    if ((node->def->flags & CLINFER_OP_SOURCE) || all_const)
      continue;
    st.node = node;
    st.dynamic = step_is_dynamic (node);
    st.in_slots = g_new (guint, MAX (node->n_inputs, 1));
    st.out_slots = g_new (guint, MAX (node->n_outputs, 1));
    for (guint j = 0; j < node->n_inputs; j++) {
      if (node->inputs[j].node == NULL) {
        st.in_slots[j] = G_MAXUINT;
        continue;
      }
      st.in_slots[j] = slot_for (plan, port_slot, node->inputs[j].node,
          node->inputs[j].port, c);
      mark_use (plan, st.in_slots[j], idx);
    }
    for (guint j = 0; j < node->n_outputs; j++) {
      st.out_slots[j] = slot_for (plan, port_slot, node, j, c);
      mark_use (plan, st.out_slots[j], idx);
    }
    st.op_label = g_strdup (node->op_type);
    st.shape_label = node->n_outputs
        ? clinfer_shape_to_string (&node->outputs[0].shape) : g_strdup ("");
    g_array_append_val (plan->steps, st);
  }
  plan->n_outputs = plan->graph->outputs->len;
  plan->output_slots = g_new (guint, MAX (plan->n_outputs, 1));
  for (guint i = 0; i < plan->n_outputs; i++) {
    ClinferGraphOutput *o = &g_array_index (plan->graph->outputs,
        ClinferGraphOutput, i);
    ClinferSlot *s;
    plan->output_slots[i] = slot_for (plan, port_slot, o->ref.node, o->ref.port, c);
    s = &g_array_index (plan->slots, ClinferSlot, plan->output_slots[i]);
    s->is_output = TRUE;
    s->last_step = G_MAXINT;
  }
  return TRUE;
}

/* Puts every step on the device, or on the CPU kernels when the device
 * declines it and fallback is allowed; then picks the CPU kernels of the
 * fallback steps. */
static gboolean
place_steps (ClinferCompiled *c, ClinferPlan *plan, GError **error)
{
  ClinferDevice *dev = c->device;

  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    const char *reason = NULL;

    if (dev->klass->supports_step (dev, plan, st, &reason))
      continue;
    if (!clinfer_cpu_node_runnable (st->node)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
          "%s: node %s on %s: no kernel for this op on the device or the "
          "CPU", c->model->path, clinfer_node_label (st->node), dev->name);
      return FALSE;
    }
    /* Custom CPU ops run on the CPU on every device, fallback or not. */
    if (!c->config->allow_fallback && !clinfer_op_def_is_custom (st->node->def)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
          "%s: node %s on %s: the device cannot run it (%s) and fallback "
          "to the CPU is disabled", c->model->path,
          clinfer_node_label (st->node), dev->name,
          reason ? reason : "not supported");
      return FALSE;
    }
    if (clinfer_op_def_is_custom (st->node->def))
      g_info ("%s: node %s on %s: runs on the host (a custom CPU op): its "
          "inputs and outputs are copied between the device and the host",
          c->model->path, clinfer_node_label (st->node), dev->name);
    else
      g_info ("%s: node %s on %s: runs on the CPU instead (fallback: %s)",
          c->model->path, clinfer_node_label (st->node), dev->name,
          reason ? reason : "not supported");
    st->fallback = TRUE;
    if (!clinfer_cpu_step_prepare (st, dev->isa, dev->name, c->model->path, error))
      return FALSE;
  }
  return TRUE;
}

/* The passes not to run: the config's and, when the device has custom
 * kernels for op types of @graph, every fusion pass, so the nodes those
 * kernels replace survive compilation. The names are borrowed. */
static GPtrArray *
disabled_passes (ClinferCompiled *c, const ClinferGraph *graph)
{
  GPtrArray *names = g_ptr_array_new ();
  gboolean custom = FALSE;

  for (guint i = 0; i < c->config->disabled_passes->len; i++)
    g_ptr_array_add (names, g_ptr_array_index (c->config->disabled_passes, i));
  for (guint i = 0; c->device->klass->handles_op_type
      && i < graph->nodes->len && !custom; i++)
    custom = c->device->klass->handles_op_type (c->device,
        ((ClinferNode *) g_ptr_array_index (graph->nodes, i))->op_type);
  for (const char *const *n = clinfer_pass_get_names (); custom && *n; n++)
    if (g_str_has_prefix (*n, "fuse-"))
      g_ptr_array_add (names, (gpointer) *n);
  return names;
}

static ClinferPlan *
plan_build (ClinferCompiled *c, const ClinferShape *shapes, GError **error)
{
  ClinferPlan *plan = g_new0 (ClinferPlan, 1);
  g_autoptr (GPtrArray) disabled = disabled_passes (c, c->model->graph);
  ClinferPassContext ctx = { disabled,
    clinfer_graph_get_opset (c->model->graph, "") };
  gint64 t0 = g_get_monotonic_time ();

  ctx.fuse_eltwise_chains = c->device->klass->fuses_eltwise_chains
      || g_strcmp0 (g_getenv ("CLINFER_FUSE_ELTWISE_CHAINS"), "1") == 0;
  ctx.layer_norm_std = c->device->klass->runs_layer_norm_std;
  ctx.gemm_as_matmul = c->device->klass->lowers_gemm_to_matmul;
  ctx.conv1d_as_2d = c->device->klass->lowers_conv1d_to_2d;
  ctx.swish = c->device->klass->runs_swish;
  plan->graph = clinfer_graph_copy (c->model->graph);
  plan->graph->memory_limit = clinfer_compile_config_get_memory_limit (c->config);
  plan->n_inputs = plan->graph->inputs->len;
  plan->input_shapes = g_new0 (ClinferShape, MAX (plan->n_inputs, 1));
  plan->slots = g_array_new (FALSE, TRUE, sizeof (ClinferSlot));
  plan->steps = g_array_new (FALSE, TRUE, sizeof (ClinferStep));
  plan->arena_align = c->device->arena_align;
  for (guint i = 0; i < plan->n_inputs; i++) {
    ClinferNode *n = g_ptr_array_index (plan->graph->inputs, i);
    plan->input_shapes[i] = shapes[i];
    n->outputs[0].shape = shapes[i];
  }
  if (!clinfer_graph_resolve_ops_with (plan->graph, c->ops, error)
      || !clinfer_passes_run (plan->graph, &ctx, error)
      || !build_steps (c, plan, error)
      || !place_steps (c, plan, error)) {
    plan_free (plan);
    return NULL;
  }
  clinfer_plan_assign_memory (plan);
  if (plan->arena_size > plan->graph->memory_limit) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_OUT_OF_MEMORY,
        "%s: the intermediate tensors need %" G_GSIZE_FORMAT " bytes at "
        "once, over the memory limit of %" G_GUINT64_FORMAT " bytes",
        c->model->path, plan->arena_size, plan->graph->memory_limit);
    plan_free (plan);
    return NULL;
  }
  plan->device = clinfer_device_ref (c->device);
  if (!c->device->klass->prepare_plan (c->device, plan, c->model->path, error)) {
    plan_free (plan);
    return NULL;
  }
  g_debug ("%s: plan with %u steps, arena %" G_GSIZE_FORMAT " bytes (%"
      G_GSIZE_FORMAT " without reuse), built in %.1f ms", c->model->path,
      plan->steps->len, plan->arena_size, plan->unplanned_size,
      (g_get_monotonic_time () - t0) / 1000.0);
  return plan;
}

/* Finds or builds the plan for @shapes (one per input). Thread-safe. */
ClinferPlan *
clinfer_compiled_get_plan (ClinferCompiled *c, const ClinferShape *shapes,
    GError **error)
{
  ClinferPlan *plan = NULL;

  g_mutex_lock (&c->lock);
  for (guint i = 0; i < c->plans->len; i++) {
    ClinferPlan *p = g_ptr_array_index (c->plans, i);
    if (shapes_equal (p->input_shapes, shapes, p->n_inputs)) {
      plan = p;
      break;
    }
  }
  if (plan == NULL) {
    plan = plan_build (c, shapes, error);
    if (plan) {
      /* Old plans stay alive (requests may hold them) until the
       * compiled model dies; the list is capped by refusing to cache
       * more than MAX_PLANS shape sets at the front. */
      g_ptr_array_insert (c->plans, 0, plan);
      if (c->plans->len > MAX_PLANS)
        g_debug ("%s: more than %d input shape sets seen", c->model->path,
            MAX_PLANS);
    }
  }
  g_mutex_unlock (&c->lock);
  return plan;
}

/* ---------------------------------------------------------------- */
/* Compile                                                           */

/* Streams and threads per stream for the device options, before the
 * device is known: throughput splits the host cores into streams of one
 * thread (or of the threads asked for); otherwise one stream with the
 * threads asked for (0: the device's default, one per core), or the cores
 * split over the streams asked for. */
static void
resolve_streams (const ClinferCompileConfig *config, int *streams,
    int *threads)
{
  int cores = (int) g_get_num_processors ();

  if (config->hint == CLINFER_HINT_THROUGHPUT) {
    *threads = config->threads > 0 ? config->threads : 1;
    *streams = config->streams > 0 ? config->streams
        : MAX (1, cores / *threads);
    return;
  }
  *streams = config->streams > 0 ? config->streams : 1;
  *threads = config->threads;
  if (*streams > 1 && *threads == 0)
    *threads = MAX (1, cores / *streams);
}

/* Opens the config's device, or the remote context's, with @threads
 * (per stream). */
static gboolean
open_device (ClinferCompiled *c, const ClinferCompileConfig *config,
    int threads, GError **error)
{
  ClinferRemoteContext *ctx = config->remote_context;
  ClinferDeviceOptions options = { threads, config->config_file };

  if (ctx)
    c->device = ctx->device->klass->open (ctx->device->name, ctx->device,
        &options, error);
  else
    c->device = clinfer_device_open (config->device, NULL, &options, error);
  if (c->device == NULL)
    return FALSE;
  c->device_name = g_strdup (c->device->name);
  c->context = ctx ? clinfer_remote_context_ref (ctx)
      : clinfer_remote_context_new_for_device (c->device);
  return TRUE;
}

static void
ports_from_plan (ClinferCompiled *c, ClinferPlan *plan)
{
  g_array_set_size (c->inputs, 0);
  g_array_set_size (c->outputs, 0);
  for (guint i = 0; i < clinfer_model_get_n_inputs (c->model); i++) {
    ClinferPortInfo info;
    clinfer_model_get_input (c->model, i, &info);
    if (plan)
      info.shape = plan->input_shapes[i];
    g_array_append_val (c->inputs, info);
  }
  for (guint i = 0; i < clinfer_model_get_n_outputs (c->model); i++) {
    ClinferPortInfo info;
    clinfer_model_get_output (c->model, i, &info);
    if (plan) {
      ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot,
          plan->output_slots[i]);
      info.type = s->type;
      info.shape = s->shape;
    }
    g_array_append_val (c->outputs, info);
  }
}

/* Most milliseconds the latency hint's all-core inference may take for
 * one thread to be tried as well: above it, threads pay for themselves. */
#define LATENCY_TRY_ONE_THREAD_MS 20.0

/* Median milliseconds of a few inferences of @c on zero inputs (static
 * shapes): one untimed, then up to 7 or 100 ms, at least 3. */
static gboolean
measure_latency (ClinferCompiled *c, double *ms, GError **error)
{
  g_autoptr (ClinferRequest) r = clinfer_compiled_create_request (c, error);
  double times[7];
  gint64 start;
  int n = 0;

  if (r == NULL)
    return FALSE;
  for (guint i = 0; i < c->inputs->len; i++) {
    const ClinferPortInfo *info = &g_array_index (c->inputs, ClinferPortInfo,
        i);
    g_autoptr (ClinferTensor) t = clinfer_tensor_new (info->type, &info->shape,
        error);

    if (t == NULL || !clinfer_request_set_input_by_index (r, i, t, error))
      return FALSE;
  }
  if (!clinfer_request_infer (r, error))
    return FALSE;
  start = g_get_monotonic_time ();
  while (n < 7 && (n < 3 || g_get_monotonic_time () - start < 100000)) {
    gint64 t0 = g_get_monotonic_time ();

    if (!clinfer_request_infer (r, error))
      return FALSE;
    times[n++] = (g_get_monotonic_time () - t0) / 1000.0;
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
      double x = times[j];
      times[j] = times[j - 1];
      times[j - 1] = x;
    }
  *ms = times[n / 2];
  return TRUE;
}

/* The latency hint on a device running kernels on the host cores: @c
 * (all cores) against the same model compiled for one thread, the faster
 * kept (one thread on a tie), so more threads never make a model slower.
 * Small models only (LATENCY_TRY_ONE_THREAD_MS). Returns the one kept,
 * consuming @c. */
static ClinferCompiled *compile_here (ClinferModel *model,
    const ClinferCompileConfig *config, GError **error);

static ClinferCompiled *
choose_latency_threads (ClinferCompiled *c, GError **error)
{
  g_autoptr (ClinferCompileConfig) one = NULL;
  ClinferCompiled *c1;
  double ms_all, ms_one;

  if (!measure_latency (c, &ms_all, error)) {
    clinfer_compiled_unref (c);
    return NULL;
  }
  if (ms_all > LATENCY_TRY_ONE_THREAD_MS)
    return c;
  one = clinfer_compile_config_copy (c->config);
  one->hint = CLINFER_HINT_NONE;
  one->threads = 1;
  c1 = compile_here (c->model, one, error);
  if (c1 == NULL || !measure_latency (c1, &ms_one, error)) {
    clinfer_compiled_unref (c1);
    clinfer_compiled_unref (c);
    return NULL;
  }
  g_info ("%s: latency hint: %d threads %.3f ms, 1 thread %.3f ms: using %s",
      c->model->path, c->threads, ms_all, ms_one,
      ms_one <= ms_all ? "1 thread" : "all");
  if (ms_one > ms_all) {
    clinfer_compiled_unref (c1);
    return c;
  }
  c1->config->hint = CLINFER_HINT_LATENCY;
  clinfer_compiled_unref (c);
  return c1;
}

static ClinferCompiled *
compile_here (ClinferModel *model, const ClinferCompileConfig *config,
    GError **error)
{
  g_autoptr (ClinferCompileConfig) defaults = NULL;
  ClinferCompiled *c;
  int threads;
  guint n_in = clinfer_model_get_n_inputs (model);
  g_autofree ClinferShape *shapes = g_new0 (ClinferShape, MAX (n_in, 1));
  gboolean all_static = TRUE;

  if (config == NULL)
    config = defaults = clinfer_compile_config_new ();
  c = g_new0 (ClinferCompiled, 1);
  c->ref_count = 1;
  c->model = clinfer_model_ref (model);
  c->config = clinfer_compile_config_copy (config);
  /* Extensions: the config's custom ops and custom layers, then those the
   * model was read with (a config file the model was read with is not
   * parsed again). */
  c->ops = clinfer_op_set_copy (config->custom_ops);
  if (config->config_file
      && g_strcmp0 (config->config_file, model->config_file) != 0
      && !clinfer_device_add_config_file_ops (config->config_file, c->ops, error)) {
    clinfer_compiled_unref (c);
    return NULL;
  }
  clinfer_op_set_merge (c->ops, model->ops);
  g_mutex_init (&c->lock);
  g_mutex_init (&c->pool_lock);
  c->plans = g_ptr_array_new_with_free_func ((GDestroyNotify) plan_free);
  c->inputs = g_array_new (FALSE, TRUE, sizeof (ClinferPortInfo));
  c->outputs = g_array_new (FALSE, TRUE, sizeof (ClinferPortInfo));
  resolve_streams (config, &c->streams, &threads);
  if (!open_device (c, config, threads, error)) {
    clinfer_compiled_unref (c);
    return NULL;
  }
  c->threads = c->device->threads;
  /* A device whose kernels do not run on the host cores has its own
   * number of streams for throughput. */
  if (config->hint == CLINFER_HINT_THROUGHPUT && config->streams == 0
      && c->device->klass->throughput_streams > 0)
    c->streams = c->device->klass->throughput_streams;
  for (guint i = 0; i < n_in; i++) {
    ClinferPortInfo info;
    clinfer_model_get_input (model, i, &info);
    shapes[i] = info.shape;
    all_static = all_static && clinfer_shape_is_static (&info.shape);
  }
  /* With static inputs the plan is built now, so compile errors surface
   * here; otherwise at the first inference with concrete shapes. */
  if (all_static && clinfer_compiled_get_plan (c, shapes, error) == NULL) {
    clinfer_compiled_unref (c);
    return NULL;
  }
  ports_from_plan (c, all_static ? g_ptr_array_index (c->plans, 0) : NULL);
  if (config->hint == CLINFER_HINT_LATENCY && config->threads == 0
      && c->streams == 1 && c->threads > 1 && all_static
      && c->device->klass->throughput_streams == 0)
    return choose_latency_threads (c, error);
  return c;
}

/* libgomp keeps a pool of OpenMP threads per thread that opens a parallel
 * region (the oneDNN reorders, the plan's set-up and the latency hint's
 * trial inferences do), for the life of that thread; once the process
 * has more such threads than cores, libgomp stops spinning in all of them
 * and each parallel region then waits for threads woken from sleep. The
 * element compiles on the application's thread and infers on its
 * streaming thread: with the compile's pool left behind, BlazeFace 128 on
 * two threads took 2.2 ms a frame instead of 0.6 (docs/performance.md).
 * So the compile lets go of the calling thread's pool when it ends
 * (omp_pause_resource_all(): a thread that infers later makes a new one
 * at its next parallel region). */
ClinferCompiled *
clinfer_compile (ClinferModel *model, const ClinferCompileConfig *config,
    GError **error)
{
  ClinferCompiled *c;

  g_return_val_if_fail (model != NULL, NULL);
  c = compile_here (model, config, error);
#ifdef _OPENMP
  omp_pause_resource_all (omp_pause_soft);
#endif
  return c;
}

ClinferCompiled *
clinfer_compiled_ref (ClinferCompiled *compiled)
{
  g_atomic_int_inc (&compiled->ref_count);
  return compiled;
}

void
clinfer_compiled_unref (ClinferCompiled *c)
{
  if (c == NULL || !g_atomic_int_dec_and_test (&c->ref_count))
    return;
  /* No request is in flight: each holds a reference. */
  if (c->pool)
    g_thread_pool_free (c->pool, FALSE, TRUE);
  g_mutex_clear (&c->pool_lock);
  g_ptr_array_unref (c->plans);
  g_array_unref (c->inputs);
  g_array_unref (c->outputs);
  g_mutex_clear (&c->lock);
  clinfer_compile_config_free (c->config);
  clinfer_op_set_unref (c->ops);
  clinfer_model_unref (c->model);
  if (c->context)
    clinfer_remote_context_unref (c->context);
  if (c->device)
    clinfer_device_unref (c->device);
  g_free (c->device_name);
  g_free (c);
}

const char *
clinfer_compiled_get_device_name (const ClinferCompiled *c)
{
  return c->device_name;
}

int
clinfer_compiled_get_streams (const ClinferCompiled *c)
{
  return c->streams;
}

int
clinfer_compiled_get_threads (const ClinferCompiled *c)
{
  return c->threads;
}

guint
clinfer_compiled_get_optimal_requests (const ClinferCompiled *c)
{
  /* One in flight per stream keeps every stream busy; with one stream,
   * a second lets the caller prepare the next inference meanwhile. */
  return c->streams > 1 ? (guint) c->streams : 1;
}

ClinferPerformanceHint
clinfer_compiled_get_performance_hint (const ClinferCompiled *c)
{
  return c->config->hint;
}

static void
stream_worker (gpointer data, gpointer user_data)
{
  clinfer_request_run_async (data);
}

gboolean
clinfer_compiled_push_async (ClinferCompiled *c, ClinferRequest *request,
    GError **error)
{
  GError *local = NULL;
  gboolean ok;

  g_mutex_lock (&c->pool_lock);
  if (c->pool == NULL)
    c->pool = g_thread_pool_new (stream_worker, NULL, c->streams, TRUE,
        &local);
  ok = c->pool != NULL && g_thread_pool_push (c->pool, request, &local);
  g_mutex_unlock (&c->pool_lock);
  if (!ok)
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_DEVICE,
        "%s: could not start a stream worker thread: %s", c->model->path,
        local ? local->message : "unknown error");
  g_clear_error (&local);
  return ok;
}

ClinferRemoteContext *
clinfer_compiled_get_remote_context (const ClinferCompiled *c)
{
  return c->context;
}

guint
clinfer_compiled_get_n_inputs (const ClinferCompiled *c)
{
  return c->inputs->len;
}

guint
clinfer_compiled_get_n_outputs (const ClinferCompiled *c)
{
  return c->outputs->len;
}

gboolean
clinfer_compiled_get_input (const ClinferCompiled *c, guint index,
    ClinferPortInfo *info)
{
  if (index >= c->inputs->len)
    return FALSE;
  *info = g_array_index (c->inputs, ClinferPortInfo, index);
  return TRUE;
}

gboolean
clinfer_compiled_get_output (const ClinferCompiled *c, guint index,
    ClinferPortInfo *info)
{
  if (index >= c->outputs->len)
    return FALSE;
  *info = g_array_index (c->outputs, ClinferPortInfo, index);
  return TRUE;
}

int
clinfer_compiled_find_input (const ClinferCompiled *c, const char *name)
{
  return clinfer_model_find_input (c->model, name);
}

static ClinferPlan *
current_plan (const ClinferCompiled *c)
{
  return c->plans->len ? g_ptr_array_index (c->plans, 0) : NULL;
}

gsize
clinfer_compiled_get_arena_size (const ClinferCompiled *c)
{
  ClinferPlan *p = current_plan (c);
  return p ? p->arena_size : 0;
}

gsize
clinfer_compiled_get_unplanned_size (const ClinferCompiled *c)
{
  ClinferPlan *p = current_plan (c);
  return p ? p->unplanned_size : 0;
}

guint
clinfer_compiled_get_n_steps (const ClinferCompiled *c)
{
  ClinferPlan *p = current_plan (c);
  return p ? p->steps->len : 0;
}
