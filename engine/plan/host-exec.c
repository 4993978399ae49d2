/* clinfer — the host executor: the kernel of a step (a fast CPU kernel,
 * cpu-kernels.c, or the op's reference eval) and running it on host
 * tensors. The CPU device runs its steps with it, other devices their
 * fallback steps. */
#include "plan/plan.h"
#include "ops/custom-ops.h"
#include <string.h>

gboolean
clinfer_cpu_node_runnable (const ClinferNode *node)
{
  return node->def->eval != NULL || node->def->eval_alloc != NULL
      || clinfer_cpu_kernel_lookup (node) != NULL;
}

gboolean
clinfer_cpu_step_prepare (ClinferStep *st, ClinferCpuIsa isa,
    const char *device_name, const char *origin, GError **error)
{
  ClinferCpuKernelFactory factory;

  /* A name left by the oneDNN plan for a step it tried and gave back. */
  g_clear_pointer (&st->kernel.name, g_free);
  /* The lookup takes built-in ops only: never a custom op's node. */
  if (!st->dynamic && (factory = clinfer_cpu_kernel_lookup (st->node))) {
    GError *local = NULL;
    if (factory (st->node, isa, &st->kernel, &local))
      return TRUE;
    if (local) {
      clinfer_node_prefix_error (&local, st->node, device_name);
      g_propagate_error (error, local);
      return FALSE;
    }
    g_free (st->kernel.name);
    memset (&st->kernel, 0, sizeof (st->kernel));
  }
  if (st->node->def->eval == NULL && st->node->def->eval_alloc == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_UNSUPPORTED_OP,
        "%s: node %s on %s: no kernel for this op", origin,
        clinfer_node_label (st->node), device_name);
    return FALSE;
  }
  st->kernel.name = g_strdup (clinfer_op_def_is_custom (st->node->def)
      ? "custom" : "reference");
  return TRUE;
}

/* Runs a step whose op allocates outputs of dynamic shape itself
 * (ClinferOpDef.eval_alloc): planned outputs are passed in, the others
 * come back as new tensors that replace the slot's previous one. */
static gboolean
run_eval_alloc (const ClinferPlan *plan, ClinferStep *st,
    ClinferTensor **slot_tensors, ClinferTensor *const *in, GError **error)
{
  ClinferNode *node = st->node;
  ClinferTensor *out[16];
  gboolean ok;

  for (guint j = 0; j < node->n_outputs; j++) {
    guint si = st->out_slots[j];
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);
    out[j] = s->kind == CLINFER_SLOT_ARENA ? slot_tensors[si] : NULL;
  }
  ok = node->def->eval_alloc (node, in, out, error);
  for (guint j = 0; j < node->n_outputs; j++) {
    guint si = st->out_slots[j];
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);
    if (s->kind == CLINFER_SLOT_ARENA)
      continue;
    if (slot_tensors[si])
      clinfer_tensor_unref (slot_tensors[si]);
    slot_tensors[si] = out[j];
  }
  return ok;
}

/* Re-infers a dynamic step's output shapes from the actual inputs and
 * allocates its outputs. */
static gboolean
run_dynamic_shapes (const ClinferPlan *plan, ClinferStep *st,
    ClinferTensor **slot_tensors, const char *origin, GError **error)
{
  ClinferNode *node = st->node;
  g_autofree ClinferValueInfo *in = g_new0 (ClinferValueInfo, MAX (node->n_inputs, 1));
  g_autofree ClinferValueInfo *out = g_new0 (ClinferValueInfo, MAX (node->n_outputs, 1));

  for (guint j = 0; j < node->n_inputs; j++) {
    ClinferTensor *t = st->in_slots[j] == G_MAXUINT ? NULL
        : slot_tensors[st->in_slots[j]];
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
  if (!clinfer_node_infer_checked (node, in, out, error))
    return FALSE;
  for (guint j = 0; j < node->n_outputs; j++) {
    guint si = st->out_slots[j];
    ClinferSlot *s = &g_array_index (plan->slots, ClinferSlot, si);
    if (s->kind == CLINFER_SLOT_ARENA)
      continue;              /* this output had a static shape */
    if (!clinfer_shape_is_static (&out[j].shape)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: node %s: output %u has no concrete shape at run time",
          origin, clinfer_node_label (node), j);
      return FALSE;
    }
    if (slot_tensors[si])
      clinfer_tensor_unref (slot_tensors[si]);
    slot_tensors[si] = clinfer_tensor_new (out[j].type, &out[j].shape, error);
    if (slot_tensors[si] == NULL)
      return FALSE;
  }
  return TRUE;
}

gboolean
clinfer_cpu_step_run (const ClinferPlan *plan, ClinferStep *st,
    ClinferTensor **slot_tensors, const char *origin, GError **error)
{
  ClinferTensor *in[64], *out[16];
  ClinferNode *node = st->node;

  if (node->n_inputs > G_N_ELEMENTS (in) || node->n_outputs > G_N_ELEMENTS (out)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "node %s: too many inputs or outputs", clinfer_node_label (node));
    return FALSE;
  }
  for (guint j = 0; j < node->n_inputs; j++)
    in[j] = st->in_slots[j] == G_MAXUINT ? NULL : slot_tensors[st->in_slots[j]];
  if (node->def->eval_alloc)
    return run_eval_alloc (plan, st, slot_tensors, in, error);
  if (st->dynamic && !run_dynamic_shapes (plan, st, slot_tensors, origin, error))
    return FALSE;
  for (guint j = 0; j < node->n_outputs; j++)
    out[j] = slot_tensors[st->out_slots[j]];
  if (st->kernel.run)
    return st->kernel.run (&st->kernel, node, in, out, error);
  return node->def->eval (node, in, out, error);
}

void
clinfer_profile_record (GArray *profile, const ClinferStep *st, gint64 ns)
{
  ClinferProfileEntry e = {
    .node_name = *st->node->name ? st->node->name : st->node->outputs[0].name,
    .op_type = st->op_label,
    .kernel = st->device_kernel ? st->device_kernel : st->kernel.name,
    .shape = st->shape_label,
    .time_ns = ns,
  };
  g_array_append_val (profile, e);
}
