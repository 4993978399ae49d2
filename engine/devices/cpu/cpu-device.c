/* clinfer — the native CPU device: the host executor's steps
 * (plan/host-exec.c) and the oneDNN fast path over one host arena per
 * request, and host-memory remote tensors (HOST_BUFFER). */
#include "devices/device.h"
#include "plan/chooser.h"
#ifdef CLINFER_HAVE_ONEDNN
#include "devices/cpu/onednn-cpu.h"
#endif
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* One arena layout's memory: the arena, the slot tensors over it and the
 * oneDNN steps' memory objects bound to them. */
typedef struct {
  void *arena;
  ClinferTensor **slot_tensors;  /* per plan slot: view / const / input */
#ifdef CLINFER_HAVE_ONEDNN
  ClinferOnednnRun *onednn;      /* the oneDNN steps' state, or NULL */
#endif
} CpuLayout;

typedef struct {
  ClinferDeviceRun base;
  /* The plan's arena layout and, where the plan has one (alt_offsets), the
   * other; the chooser picks one per request by measured time. */
  CpuLayout layouts[2];
  guint n_layouts;
  ClinferChooser chooser;
  ClinferTensor **mapped;        /* per input: view of a mapped remote */
  /* Per output: TRUE when a C kernel step writes it (oneDNN steps keep
   * their own memory), so a caller's bound tensor can stand in its slot;
   * the slot's arena view is set aside in arena_view meanwhile. */
  gboolean *in_place;
  ClinferTensor **arena_view;
} CpuRun;

/* ---------------------------------------------------------------- */
/* The device                                                        */

static ClinferDevice *
cpu_open (const char *device, ClinferDevice *share,
    const ClinferDeviceOptions *options, GError **error)
{
  ClinferDevice *d;
  int threads = options ? options->threads : 0;
  const char *config_file = options ? options->config_file : NULL;

  /* Custom layers are OpenCL kernels: the native CPU cannot run them, and
   * silently running the built-in op instead would be wrong. */
  if (config_file) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: custom OpenCL kernels (config file) need an OpenCL device "
        "(GPU, GPU.N); the device is CPU", config_file);
    return NULL;
  }
  d = g_new0 (ClinferDevice, 1);
  clinfer_device_init (d, &clinfer_cpu_device_class, "CPU",
      "native CPU device");
  d->threads = threads > 0 ? threads : omp_get_num_procs ();
  d->isa = clinfer_cpu_isa_detect ();
  return d;
}

static void
cpu_close (ClinferDevice *device)
{
  g_free (device);
}

static gboolean
cpu_supports_step (ClinferDevice *device, const ClinferPlan *plan,
    const ClinferStep *step, const char **reason)
{
  *reason = "no kernel";
  return clinfer_cpu_node_runnable (step->node);
}

/* With several threads, whether each tensor gets arena bytes of its own
 * instead of bytes another tensor used earlier in the inference. The
 * threads split most steps the same way every inference, so a cache line
 * of an unshared tensor is written by the same core each time and stays
 * in that core's caches; a shared line is written by one core for one
 * tensor and by the other for the next, and each write first takes the
 * line back from the other core. Where the two cores are far apart (the
 * two vCPUs of a VM on different chiplets: a 360 ns round trip) that is
 * much of the 2-thread time. Unshared tensors need more memory, and once
 * they no longer fit the caches the lost reuse costs more than it saves
 * where the cores are close (BlazeFace 256, 36 MB: 2.30 -> 2.65 ms; it
 * gains 3.12 -> 2.72 ms where they are far apart). So arena_policy ()
 * unshares whole arenas only up to UNSHARED_MAX_MIB (a quarter of a Zen
 * chiplet's L3; sysconf's L3 size is the whole host's in a VM): BlazeFace
 * 128 (4.9 MB) and ocr-cls (5.7 MB), faster in both cases. Larger ones get
 * unshare_largest () and, up to ALT_MAX_MIB unshared, the fully unshared
 * layout as a second one: which is faster changes with the placement
 * while a program runs (ocr-det: 8.1 against 9.1 ms close, 15.3 against
 * 10.8 far), so each request runs the one the chooser (plan/chooser.h)
 * measured faster. CLINFER_CPU_ARENA_SHARED=1 (always share) or 0 (never,
 * whatever the size) gives one layout; =both gives both whatever the size
 * and thread count (for tests). */
#define UNSHARED_MAX_MIB 8
#define ALT_MAX_MIB 128

typedef enum {
  ARENA_SHARED,              /* tensors share bytes by lifetime */
  ARENA_LARGEST_UNSHARED,    /* the largest, up to half the arena, do not */
  ARENA_UNSHARED,            /* no tensor shares bytes */
} ArenaPolicy;

/* The layout for @plan and whether the unshared one is a second choice. */
static ArenaPolicy
arena_policy (ClinferDevice *device, const ClinferPlan *plan,
    gboolean *alt_unshared)
{
  const char *env = g_getenv ("CLINFER_CPU_ARENA_SHARED");
  gsize mib = 1024 * 1024;

  *alt_unshared = FALSE;
  if (env && g_strcmp0 (env, "both") == 0) {
    *alt_unshared = TRUE;
    return device->threads < 2 ? ARENA_SHARED : ARENA_LARGEST_UNSHARED;
  }
  if (env && env[0] != '\0')
    return env[0] == '0' ? ARENA_UNSHARED : ARENA_SHARED;
  if (device->threads < 2)
    return ARENA_SHARED;
  if (plan->unplanned_size <= UNSHARED_MAX_MIB * mib)
    return ARENA_UNSHARED;
  *alt_unshared = plan->unplanned_size <= ALT_MAX_MIB * mib;
  return ARENA_LARGEST_UNSHARED;
}

/* Keeps the fully unshared layout as @plan's alt_offsets, the current
 * one as its layout. */
static void
add_unshared_layout (ClinferPlan *plan)
{
  guint n = plan->slots->len;
  g_autofree gsize *offsets = g_new (gsize, MAX (n, 1));
  gsize arena_size = plan->arena_size, unplanned = plan->unplanned_size;

  for (guint i = 0; i < n; i++)
    offsets[i] = g_array_index (plan->slots, ClinferSlot, i).offset;
  plan->arena_unshared = TRUE;
  clinfer_plan_assign_memory (plan);
  plan->alt_offsets = g_new (gsize, MAX (n, 1));
  for (guint i = 0; i < n; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    plan->alt_offsets[i] = s->offset;
    s->offset = offsets[i];
  }
  plan->alt_arena_size = plan->arena_size;
  plan->arena_size = arena_size;
  plan->unplanned_size = unplanned;
  plan->arena_unshared = FALSE;
}

static int
by_bytes_desc (gconstpointer a, gconstpointer b, gpointer data)
{
  const ClinferPlan *plan = data;
  gsize x = g_array_index (plan->slots, ClinferSlot, *(const guint *) a).bytes;
  gsize y = g_array_index (plan->slots, ClinferSlot, *(const guint *) b).bytes;

  if (x != y)
    return x < y ? 1 : -1;
  return *(const guint *) a < *(const guint *) b ? -1 : 1;
}

/* The larger arenas (2+ threads, over UNSHARED_MAX_MIB): the largest
 * tensors, up to @budget bytes in all, get bytes of their own (a lifetime
 * over the whole inference), the rest share. Half the shared arena's size
 * measured best: BlazeFace 256 at 2 threads 3.18 -> 2.68 ms with the
 * vCPUs far apart, 2.29 -> 2.27 ms with them close (a budget of the whole
 * arena: 2.84 and 2.33 ms). */
static void
unshare_largest (ClinferPlan *plan, gsize budget)
{
  g_autoptr (GArray) order = g_array_new (FALSE, FALSE, sizeof (guint));
  gsize used = 0;

  for (guint i = 0; i < plan->slots->len; i++) {
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind == CLINFER_SLOT_ARENA && !s->aliased)
      g_array_append_val (order, i);
  }
  g_array_sort_with_data (order, by_bytes_desc, plan);
  for (guint k = 0; k < order->len; k++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot,
        g_array_index (order, guint, k));
    if (used + s->bytes > budget)
      continue;
    used += s->bytes;
    s->first_step = -1;
    s->last_step = G_MAXINT;
  }
}

/* A view step leaves its input's bytes as they are: the output aliases
 * them (no copy) when both live in the arena and neither is a graph
 * output (an output may be the caller's own tensor at run time). */
static gboolean
view_alias_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const void *x = clinfer_tensor_get_const_data (inputs[0]);
  void *y = clinfer_tensor_get_data (outputs[0]);

  /* Always the same bytes in the arena; a copy is left for safety. */
  if (x != y)
    memcpy (y, x, clinfer_tensor_get_byte_size (outputs[0]));
  return TRUE;
}

static gboolean
is_view_op (const ClinferNode *node)
{
  static const char *const views[] = { "Reshape", "Squeeze", "Unsqueeze",
    "Flatten", "Identity" };

  for (gsize i = 0; i < G_N_ELEMENTS (views); i++)
    if (clinfer_node_is_builtin_op (node, "", views[i]))
      return TRUE;
  return FALSE;
}

/* Aliases the outputs of the C kernels' view steps (Reshape, Squeeze,
 * Unsqueeze, Flatten, Identity) into their inputs; TRUE when any. */
static gboolean
alias_views (ClinferPlan *plan)
{
  gboolean any = FALSE;

  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    ClinferSlot *x, *y;
#ifdef CLINFER_HAVE_ONEDNN
    if (clinfer_onednn_plan_owns_step (plan->device_data, i))
      continue;
#endif
    if (st->dynamic || !is_view_op (st->node) || st->node->n_outputs != 1
        || st->in_slots[0] == G_MAXUINT || st->in_slots[0] == st->out_slots[0])
      continue;
    x = &g_array_index (plan->slots, ClinferSlot, st->in_slots[0]);
    y = &g_array_index (plan->slots, ClinferSlot, st->out_slots[0]);
    if (x->kind != CLINFER_SLOT_ARENA || y->kind != CLINFER_SLOT_ARENA
        || x->is_output || y->is_output || y->aliased || x->type != y->type
        || y->bytes > x->bytes)
      continue;
    y->aliased = TRUE;
    y->alias_of = st->in_slots[0];
    y->alias_offset = 0;
    g_free (st->kernel.name);
    if (st->kernel.free_state)
      st->kernel.free_state (st->kernel.state);
    memset (&st->kernel, 0, sizeof (st->kernel));
    st->kernel.name = g_strdup ("alias");
    st->kernel.run = view_alias_run;
    any = TRUE;
  }
  return any;
}

/* oneDNN claims the steps it runs first (and lays out their slots); the
 * C kernels take the rest. */
static gboolean
cpu_prepare_plan (ClinferDevice *device, ClinferPlan *plan, const char *origin,
    GError **error)
{
  gboolean alt_unshared;
#ifdef CLINFER_HAVE_ONEDNN
  GError *local = NULL;
  if (clinfer_onednn_enabled ()) {
    /* oneDNN sizes a primitive's thread team when it creates it: create
     * them under the thread count they will run with. */
    int saved = omp_get_max_threads ();
    omp_set_num_threads (device->threads);
    plan->device_data = clinfer_onednn_plan_new (device, plan, origin, &local);
    omp_set_num_threads (saved);
    if (local) {
      g_propagate_error (error, local);
      return FALSE;
    }
  }
#endif
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
#ifdef CLINFER_HAVE_ONEDNN
    if (clinfer_onednn_plan_owns_step (plan->device_data, i))
      continue;
#endif
    if (!clinfer_cpu_step_prepare (st, device->isa, device->name, origin,
            error))
      return FALSE;
  }
  if (alias_views (plan))
    clinfer_plan_assign_memory (plan);
  switch (arena_policy (device, plan, &alt_unshared)) {
    case ARENA_UNSHARED:
      plan->arena_unshared = TRUE;
      clinfer_plan_assign_memory (plan);
      break;
    case ARENA_LARGEST_UNSHARED:
      unshare_largest (plan, plan->arena_size / 2);
      clinfer_plan_assign_memory (plan);
      break;
    case ARENA_SHARED:
      break;
  }
  if (alt_unshared)
    add_unshared_layout (plan);
  return TRUE;
}

static void
cpu_free_plan (ClinferDevice *device, ClinferPlan *plan)
{
#ifdef CLINFER_HAVE_ONEDNN
  g_clear_pointer ((ClinferOnednnPlan **) &plan->device_data,
      clinfer_onednn_plan_free);
#endif
}

static void
layout_clear (CpuLayout *l, const ClinferPlan *plan)
{
  for (guint i = 0; l->slot_tensors && i < plan->slots->len; i++)
    g_clear_pointer (&l->slot_tensors[i], clinfer_tensor_unref);
#ifdef CLINFER_HAVE_ONEDNN
  g_clear_pointer (&l->onednn, clinfer_onednn_run_free);
#endif
  g_clear_pointer (&l->slot_tensors, g_free);
  g_clear_pointer (&l->arena, free);
}

static void
cpu_free_run (ClinferDeviceRun *base)
{
  CpuRun *run = (CpuRun *) base;

  for (guint k = 0; k < G_N_ELEMENTS (run->layouts); k++)
    layout_clear (&run->layouts[k], base->plan);
  for (guint i = 0; i < base->plan->n_inputs; i++)
    g_clear_pointer (&run->mapped[i], clinfer_tensor_unref);
  g_free (run->mapped);
  g_free (run->in_place);
  g_free (run->arena_view);
  g_free (run);
}

/* Marks the outputs in arena slots written by a C kernel step. */
static void
find_in_place_outputs (CpuRun *run)
{
  const ClinferPlan *plan = run->base.plan;

  for (guint i = 0; i < plan->steps->len; i++) {
    const ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
#ifdef CLINFER_HAVE_ONEDNN
    if (run->layouts[0].onednn
        && clinfer_onednn_plan_owns_step (plan->device_data, i))
      continue;
#endif
    for (guint j = 0; j < st->node->n_outputs; j++)
      for (guint k = 0; k < plan->n_outputs; k++)
        if (plan->output_slots[k] == st->out_slots[j])
          run->in_place[k] = g_array_index (plan->slots, ClinferSlot,
              st->out_slots[j]).kind == CLINFER_SLOT_ARENA;
  }
}

/* A layout's arena (@size bytes), slot views at @offsets (NULL: the
 * plan's own) and oneDNN memory objects, made once. */
static gboolean
layout_init (CpuLayout *l, ClinferPlan *plan, gsize size,
    const gsize *offsets, GError **error)
{
  l->slot_tensors = g_new0 (ClinferTensor *, MAX (plan->slots->len, 1));
  if (size > 0 && posix_memalign (&l->arena, 64, size) != 0) {
    l->arena = NULL;
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "out of memory allocating a %" G_GSIZE_FORMAT "-byte arena", size);
    return FALSE;
  }
  /* CLINFER_CPU_ARENA_NAN=1: a new arena starts as NaN bit patterns, so a
   * step that reads what no step wrote shows in the outputs (the tests
   * set it; glibc's MALLOC_PERTURB_ does the same for malloc). */
  if (l->arena && g_getenv ("CLINFER_CPU_ARENA_NAN"))
    memset (l->arena, 0xff, size);
  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind == CLINFER_SLOT_CONSTANT)
      l->slot_tensors[i] = clinfer_tensor_ref (s->value);
    else if (s->kind == CLINFER_SLOT_ARENA) {
      gsize offset = offsets ? offsets[i] : s->offset;
      l->slot_tensors[i] = clinfer_tensor_new_wrapped (s->type, &s->shape,
          NULL, (guint8 *) l->arena + offset, NULL, NULL, error);
      if (l->slot_tensors[i] == NULL)
        return FALSE;
    }
  }
#ifdef CLINFER_HAVE_ONEDNN
  if (plan->device_data) {
    l->onednn = clinfer_onednn_run_new (plan->device_data, l->slot_tensors,
        error);
    if (l->onednn == NULL)
      return FALSE;
  }
#endif
  return TRUE;
}

/* The layouts and the per-output state for @plan, made once. */
static ClinferDeviceRun *
cpu_create_run (ClinferDevice *device, ClinferPlan *plan, GError **error)
{
  CpuRun *run = g_new0 (CpuRun, 1);

  run->base.device = device;
  run->base.plan = plan;
  run->mapped = g_new0 (ClinferTensor *, MAX (plan->n_inputs, 1));
  run->in_place = g_new0 (gboolean, MAX (plan->n_outputs, 1));
  run->arena_view = g_new0 (ClinferTensor *, MAX (plan->n_outputs, 1));
  run->n_layouts = plan->alt_offsets ? 2 : 1;
  if (!layout_init (&run->layouts[0], plan, plan->arena_size, NULL, error)
      || (plan->alt_offsets && !layout_init (&run->layouts[1], plan,
              plan->alt_arena_size, plan->alt_offsets, error))) {
    cpu_free_run (&run->base);
    return NULL;
  }
  clinfer_chooser_init (&run->chooser, run->n_layouts);
  find_in_place_outputs (run);
  return &run->base;
}

static void
set_slot (ClinferTensor **slot, ClinferTensor *t)
{
  if (*slot == t)
    return;
  if (*slot)
    clinfer_tensor_unref (*slot);
  *slot = clinfer_tensor_ref (t);
}

/* Host copy of remote input @r (contiguous); the map counts the bytes it
 * moves from device memory. */
static ClinferTensor *
map_remote_input (ClinferRemoteTensor *r, ClinferRunIO *io, GError **error)
{
  ClinferTensor *copy = clinfer_tensor_new (r->type, &r->shape, error);

  if (copy && !clinfer_remote_tensor_read_counted (r, copy, &io->bytes_to_host,
          error))
    g_clear_pointer (&copy, clinfer_tensor_unref);
  return copy;
}

/* Writes host tensor @t into the caller's remote output @r. */
static gboolean
write_remote_output (ClinferRemoteTensor *r, ClinferTensor *t,
    ClinferRunIO *io, GError **error)
{
  if (!clinfer_shape_equal (&r->shape, clinfer_tensor_get_shape (t))) {
    g_autofree char *want = clinfer_shape_to_string (clinfer_tensor_get_shape (t));
    g_autofree char *got = clinfer_shape_to_string (&r->shape);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "output of shape %s does not fit the remote tensor of shape %s",
        want, got);
    return FALSE;
  }
  return clinfer_remote_tensor_write_counted (r, t, &io->bytes_to_device, error);
}

static gboolean
bind_inputs (CpuRun *run, CpuLayout *l, ClinferRunIO *io, GError **error)
{
  const ClinferPlan *plan = run->base.plan;

  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    guint k = s->input_index;
    if (s->kind != CLINFER_SLOT_INPUT)
      continue;
    if (io->inputs[k]) {
      set_slot (&l->slot_tensors[i], io->inputs[k]);
      continue;
    }
    g_clear_pointer (&run->mapped[k], clinfer_tensor_unref);
    run->mapped[k] = map_remote_input (io->remote_inputs[k], io, error);
    if (run->mapped[k] == NULL)
      return FALSE;
    set_slot (&l->slot_tensors[i], run->mapped[k]);
  }
  return TRUE;
}

static gboolean
tensors_overlap (const ClinferTensor *a, const ClinferTensor *b)
{
  const guint8 *pa = clinfer_tensor_get_const_data (a);
  const guint8 *pb = clinfer_tensor_get_const_data (b);

  return pa && pb && pa < pb + clinfer_tensor_get_byte_size (b)
      && pb < pa + clinfer_tensor_get_byte_size (a);
}

/* TRUE when bound output @i can take its slot: no input's memory and no
 * output already in place overlaps it (the kernels would read what they
 * write), and no earlier output of the same slot took it. */
static gboolean
can_write_in_place (CpuRun *run, ClinferRunIO *io, guint i)
{
  const ClinferPlan *plan = run->base.plan;
  ClinferTensor *t = io->bound_outputs[i];

  for (guint k = 0; k < plan->n_inputs; k++)
    if (io->inputs[k] && tensors_overlap (io->inputs[k], t))
      return FALSE;
  for (guint k = 0; k < i; k++)
    if (run->arena_view[k] && (plan->output_slots[k] == plan->output_slots[i]
            || tensors_overlap (io->bound_outputs[k], t)))
      return FALSE;
  return TRUE;
}

/* Puts the caller's bound host outputs (io->bound_outputs) in the slots
 * of the outputs C kernels write, so that they are written in place. */
static void
swap_in_bound_outputs (CpuRun *run, CpuLayout *l, ClinferRunIO *io)
{
  const ClinferPlan *plan = run->base.plan;

  for (guint i = 0; io->bound_outputs && i < plan->n_outputs; i++) {
    guint si = plan->output_slots[i];
    ClinferTensor *t = io->bound_outputs[i];
    const ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);

    if (t == NULL || !run->in_place[i]
        || s->type != clinfer_tensor_get_element_type (t)
        || !clinfer_shape_equal (&s->shape, clinfer_tensor_get_shape (t))
        || !can_write_in_place (run, io, i))
      continue;
    run->arena_view[i] = l->slot_tensors[si];
    l->slot_tensors[si] = clinfer_tensor_ref (t);
  }
}

static void
swap_out_bound_outputs (CpuRun *run, CpuLayout *l)
{
  const ClinferPlan *plan = run->base.plan;

  for (guint i = 0; i < plan->n_outputs; i++) {
    ClinferTensor **slot = &l->slot_tensors[plan->output_slots[i]];
    if (run->arena_view[i] == NULL)
      continue;
    clinfer_tensor_unref (*slot);
    *slot = run->arena_view[i];
    run->arena_view[i] = NULL;
  }
}

/* The steps, then the outputs (bound ones in place where swapped in). */
static gboolean
run_steps (CpuRun *run, CpuLayout *l, ClinferRunIO *io, GError **error)
{
  ClinferPlan *plan = run->base.plan;
  const char *origin = plan->graph->origin;

  omp_set_num_threads (run->base.device->threads);
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    gint64 t0 = io->profile ? g_get_monotonic_time () : 0;
#ifdef CLINFER_HAVE_ONEDNN
    if (l->onednn && clinfer_onednn_plan_owns_step (plan->device_data, i)) {
      if (!clinfer_onednn_step_run (l->onednn, i, l->slot_tensors, error)) {
        clinfer_node_prefix_error (error, st->node, run->base.device->name);
        return FALSE;
      }
    } else
#endif
    if (!clinfer_cpu_step_run (plan, st, l->slot_tensors, origin, error)) {
      clinfer_node_prefix_error (error, st->node, run->base.device->name);
      return FALSE;
    }
    if (io->profile)
      clinfer_profile_record (io->profile, st,
          (g_get_monotonic_time () - t0) * 1000);
  }
  for (guint i = 0; i < plan->n_outputs; i++) {
    ClinferTensor *t = l->slot_tensors[plan->output_slots[i]];
    if (io->remote_outputs[i]) {
      if (!write_remote_output (io->remote_outputs[i], t, io, error))
        return FALSE;
    } else {
      io->outputs[i] = clinfer_tensor_ref (t);
    }
  }
  return TRUE;
}

/* Runs the request on the layout the chooser names and tells it the
 * time (with one layout, the chooser always names it and nothing is
 * timed). */
static gboolean
cpu_run (ClinferDeviceRun *base, ClinferRunIO *io, GError **error)
{
  CpuRun *run = (CpuRun *) base;
  guint way = clinfer_chooser_next (&run->chooser);
  CpuLayout *l = &run->layouts[way];
  gint64 t0 = run->n_layouts > 1 ? g_get_monotonic_time () : 0;
  gboolean ok;

  if (!bind_inputs (run, l, io, error))
    return FALSE;
  swap_in_bound_outputs (run, l, io);
  ok = run_steps (run, l, io, error);
  swap_out_bound_outputs (run, l);
  if (ok && run->n_layouts > 1)
    clinfer_chooser_record (&run->chooser, way, g_get_monotonic_time () - t0);
  return ok;
}

/* ---------------------------------------------------------------- */
/* Host-memory remote tensors                                        */

static gpointer
host_map (ClinferRemoteTensor *t, gboolean write, guint64 *copied,
    GError **error)
{
  return t->host;
}

static void
host_unmap (ClinferRemoteTensor *t, gpointer ptr, gboolean write,
    guint64 *copied)
{
}

static void
host_free_impl (ClinferRemoteTensor *t)
{
  /* impl is the memory clinfer allocated (NULL when wrapped). */
  g_aligned_free (t->impl);
}

static const ClinferRemoteTensorClass host_tensor_class = {
  .mem_type = CLINFER_REMOTE_MEM_HOST_BUFFER,
  .map = host_map,
  .unmap = host_unmap,
  .free_impl = host_free_impl,
};

static ClinferRemoteTensor *
cpu_create_remote (ClinferRemoteContext *context, ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, gpointer host,
    GDestroyNotify destroy, gpointer user_data, gpointer handle,
    GError **error)
{
  ClinferRemoteTensor *t;

  if (handle) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "the CPU device has no native memory handles (an OpenCL cl_mem "
        "needs a GPU context)");
    return NULL;
  }
  t = clinfer_remote_tensor_alloc (&host_tensor_class, context, type, shape,
      strides, error);
  if (t == NULL)
    return NULL;
  if (host) {
    t->host = host;
    t->destroy = destroy;
    t->user_data = user_data;
  } else {
    t->impl = t->host = g_aligned_alloc0 (MAX (t->span, 1), 1, 64);
  }
  clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_SHARED_MEM_TYPE,
      g_variant_new_string (CLINFER_REMOTE_MEM_HOST_BUFFER));
  clinfer_remote_tensor_set_property (t, CLINFER_REMOTE_PROP_HOST_PTR,
      g_variant_new_uint64 ((guint64) (guintptr) t->host));
  return t;
}

const ClinferDeviceClass clinfer_cpu_device_class = {
  .name = "CPU",
  .open = cpu_open,
  .close = cpu_close,
  .supports_step = cpu_supports_step,
  .prepare_plan = cpu_prepare_plan,
  .free_plan = cpu_free_plan,
  .create_run = cpu_create_run,
  .free_run = cpu_free_run,
  .run = cpu_run,
  .create_remote = cpu_create_remote,
  .runs_layer_norm_std = TRUE,
  .lowers_gemm_to_matmul = TRUE,
  .lowers_conv1d_to_2d = TRUE,
  .runs_swish = TRUE,
};
