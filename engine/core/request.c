/* clinfer — ClinferRequest: binds inputs, runs a plan's steps on the CPU
 * and hands out outputs. Nothing is allocated per inference for static
 * plans: slot tensors are views into the request's arena, made once. */
#include "core/internal.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct _ClinferRequest {
  ClinferCompiled *compiled;
  ClinferPlan *plan;         /* plan the views below were made for */
  ClinferTensor **inputs;    /* bound tensors (refs), per model input */
  ClinferTensor **slot_tensors;  /* per plan slot: view / const / input */
  guint n_slot_tensors;
  void *arena;
  gsize arena_bytes;
  ClinferTensor **outputs;   /* refs to the last inference's outputs */
  GArray *profile;           /* ClinferProfileEntry */
  gboolean have_outputs;
};

ClinferRequest *
clinfer_compiled_create_request (ClinferCompiled *compiled, GError **error)
{
  ClinferRequest *r = g_new0 (ClinferRequest, 1);

  r->compiled = clinfer_compiled_ref (compiled);
  r->inputs = g_new0 (ClinferTensor *, MAX (compiled->inputs->len, 1));
  r->outputs = g_new0 (ClinferTensor *, MAX (compiled->outputs->len, 1));
  r->profile = g_array_new (FALSE, TRUE, sizeof (ClinferProfileEntry));
  return r;
}

static void
release_views (ClinferRequest *r)
{
  for (guint i = 0; i < r->n_slot_tensors; i++)
    if (r->slot_tensors[i])
      clinfer_tensor_unref (r->slot_tensors[i]);
  g_clear_pointer (&r->slot_tensors, g_free);
  r->n_slot_tensors = 0;
}

static void
release_outputs (ClinferRequest *r)
{
  for (guint i = 0; i < r->compiled->outputs->len; i++)
    g_clear_pointer (&r->outputs[i], clinfer_tensor_unref);
  r->have_outputs = FALSE;
}

void
clinfer_request_free (ClinferRequest *r)
{
  if (r == NULL)
    return;
  release_outputs (r);
  release_views (r);
  for (guint i = 0; i < r->compiled->inputs->len; i++)
    if (r->inputs[i])
      clinfer_tensor_unref (r->inputs[i]);
  free (r->arena);
  g_free (r->inputs);
  g_free (r->outputs);
  g_array_unref (r->profile);
  clinfer_compiled_unref (r->compiled);
  g_free (r);
}

gboolean
clinfer_request_set_input_by_index (ClinferRequest *r, guint index,
    ClinferTensor *tensor, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferPortInfo info;
  const ClinferShape *s;
  gboolean ok;

  if (!clinfer_model_get_input (c->model, index, &info)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input index %u is out of range (the model has %u inputs)",
        c->model->path, index, clinfer_model_get_n_inputs (c->model));
    return FALSE;
  }
  if (clinfer_tensor_get_element_type (tensor) != info.type) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input '%s' expects element type %s, got %s", c->model->path,
        info.name, clinfer_element_type_name (info.type),
        clinfer_element_type_name (clinfer_tensor_get_element_type (tensor)));
    return FALSE;
  }
  s = clinfer_tensor_get_shape (tensor);
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
  if (r->inputs[index])
    clinfer_tensor_unref (r->inputs[index]);
  /* Kernels read contiguous memory; a strided input is copied once here. */
  if (clinfer_tensor_is_contiguous (tensor))
    r->inputs[index] = clinfer_tensor_ref (tensor);
  else if (!(r->inputs[index] = clinfer_tensor_copy (tensor, error)))
    return FALSE;
  return TRUE;
}

gboolean
clinfer_request_set_input (ClinferRequest *r, const char *name,
    ClinferTensor *tensor, GError **error)
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
    return FALSE;
  }
  return clinfer_request_set_input_by_index (r, (guint) idx, tensor, error);
}

/* Makes the arena and the slot views for @plan (once per plan). */
static gboolean
prepare_views (ClinferRequest *r, ClinferPlan *plan, GError **error)
{
  if (r->plan == plan)
    return TRUE;
  release_views (r);
  if (r->arena_bytes < plan->arena_size) {
    free (r->arena);
    r->arena = NULL;
    if (posix_memalign (&r->arena, 64, plan->arena_size) != 0) {
      r->arena = NULL;
      r->arena_bytes = 0;
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "out of memory allocating a %" G_GSIZE_FORMAT "-byte arena",
          plan->arena_size);
      return FALSE;
    }
    r->arena_bytes = plan->arena_size;
  }
  r->n_slot_tensors = plan->slots->len;
  r->slot_tensors = g_new0 (ClinferTensor *, MAX (plan->slots->len, 1));
  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind == CLINFER_SLOT_CONSTANT)
      r->slot_tensors[i] = clinfer_tensor_ref (s->value);
    else if (s->kind == CLINFER_SLOT_ARENA) {
      r->slot_tensors[i] = clinfer_tensor_new_wrapped (s->type, &s->shape, NULL,
          (guint8 *) r->arena + s->offset, NULL, NULL, error);
      if (r->slot_tensors[i] == NULL)
        return FALSE;
    }
  }
  r->plan = plan;
  return TRUE;
}

/* Re-infers a dynamic step's output shapes from the actual inputs and
 * allocates its outputs. */
static gboolean
run_dynamic_shapes (ClinferRequest *r, ClinferStep *st, GError **error)
{
  ClinferNode *node = st->node;
  g_autofree ClinferValueInfo *in = g_new0 (ClinferValueInfo, MAX (node->n_inputs, 1));
  g_autofree ClinferValueInfo *out = g_new0 (ClinferValueInfo, MAX (node->n_outputs, 1));

  for (guint j = 0; j < node->n_inputs; j++) {
    ClinferTensor *t = st->in_slots[j] == G_MAXUINT ? NULL
        : r->slot_tensors[st->in_slots[j]];
    in[j].present = t != NULL;
    if (t) {
      in[j].type = clinfer_tensor_get_element_type (t);
      in[j].shape = *clinfer_tensor_get_shape (t);
      in[j].value = t;
    } else
      in[j].shape = clinfer_shape_unknown ();
  }
  for (guint j = 0; j < node->n_outputs; j++)
    out[j].shape = clinfer_shape_unknown ();
  if (!node->def->infer (node, in, out, error))
    return FALSE;
  for (guint j = 0; j < node->n_outputs; j++) {
    guint si = st->out_slots[j];
    ClinferSlot *s = &g_array_index (r->plan->slots, ClinferSlot, si);
    if (s->kind == CLINFER_SLOT_ARENA)
      continue;              /* this output had a static shape */
    if (!clinfer_shape_is_static (&out[j].shape)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: node %s: output %u has no concrete shape at run time",
          r->compiled->model->path, clinfer_node_label (node), j);
      return FALSE;
    }
    if (r->slot_tensors[si])
      clinfer_tensor_unref (r->slot_tensors[si]);
    r->slot_tensors[si] = clinfer_tensor_new (out[j].type, &out[j].shape, error);
    if (r->slot_tensors[si] == NULL)
      return FALSE;
  }
  return TRUE;
}

static gboolean
run_step (ClinferRequest *r, ClinferStep *st, GError **error)
{
  ClinferTensor *in[64], *out[16];
  ClinferNode *node = st->node;

  if (node->n_inputs > G_N_ELEMENTS (in) || node->n_outputs > G_N_ELEMENTS (out)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "node %s has too many inputs or outputs", clinfer_node_label (node));
    return FALSE;
  }
  if (st->dynamic && !run_dynamic_shapes (r, st, error))
    return FALSE;
  for (guint j = 0; j < node->n_inputs; j++)
    in[j] = st->in_slots[j] == G_MAXUINT ? NULL : r->slot_tensors[st->in_slots[j]];
  for (guint j = 0; j < node->n_outputs; j++)
    out[j] = r->slot_tensors[st->out_slots[j]];
  if (st->kernel.run)
    return st->kernel.run (&st->kernel, node, in, out, error);
  return node->def->eval (node, in, out, error);
}

static void
record_profile (ClinferRequest *r, ClinferStep *st, gint64 ns)
{
  ClinferProfileEntry e = {
    .node_name = *st->node->name ? st->node->name : st->node->outputs[0].name,
    .op_type = st->op_label,
    .kernel = st->kernel.name,
    .shape = st->shape_label,
    .time_ns = ns,
  };
  g_array_append_val (r->profile, e);
}

static gboolean
plan_matches (const ClinferPlan *plan, const ClinferShape *shapes)
{
  for (guint i = 0; i < plan->n_inputs; i++)
    if (!clinfer_shape_equal (&plan->input_shapes[i], &shapes[i]))
      return FALSE;
  return TRUE;
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

static gboolean
bind_inputs (ClinferRequest *r, ClinferShape *shapes, GError **error)
{
  ClinferCompiled *c = r->compiled;

  for (guint i = 0; i < c->inputs->len; i++) {
    if (r->inputs[i] == NULL) {
      ClinferPortInfo info = g_array_index (c->inputs, ClinferPortInfo, i);
      g_autofree char *s = clinfer_shape_to_string (&info.shape);
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: input '%s' (%s %s) is not set", c->model->path, info.name,
          clinfer_element_type_name (info.type), s);
      return FALSE;
    }
    shapes[i] = *clinfer_tensor_get_shape (r->inputs[i]);
  }
  return TRUE;
}

gboolean
clinfer_request_infer (ClinferRequest *r, GError **error)
{
  ClinferCompiled *c = r->compiled;
  ClinferShape shapes[64];
  g_autofree ClinferShape *heap = NULL;
  ClinferShape *sh = shapes;
  ClinferPlan *plan;
  gboolean profiling = c->config->profiling;

  if (c->inputs->len > G_N_ELEMENTS (shapes))
    sh = heap = g_new0 (ClinferShape, c->inputs->len);
  release_outputs (r);
  if (!bind_inputs (r, sh, error))
    return FALSE;
  plan = r->plan && plan_matches (r->plan, sh) ? r->plan
      : clinfer_compiled_get_plan (c, sh, error);
  if (plan == NULL || !prepare_views (r, plan, error))
    return FALSE;
  for (guint i = 0; i < plan->slots->len; i++) {
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, i);
    if (s->kind == CLINFER_SLOT_INPUT)
      set_slot (&r->slot_tensors[i], r->inputs[s->input_index]);
  }
  omp_set_num_threads (c->threads);
  g_array_set_size (r->profile, 0);
  for (guint i = 0; i < plan->steps->len; i++) {
    ClinferStep *st = &g_array_index (plan->steps, ClinferStep, i);
    gint64 t0 = profiling ? g_get_monotonic_time () : 0;
    if (!run_step (r, st, error))
      return FALSE;
    if (profiling)
      record_profile (r, st, (g_get_monotonic_time () - t0) * 1000);
  }
  for (guint i = 0; i < plan->n_outputs; i++)
    r->outputs[i] = clinfer_tensor_ref (r->slot_tensors[plan->output_slots[i]]);
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
