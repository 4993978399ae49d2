/* clinfer — helpers shared by the op tests (see op-test-util.h). */
#include "op-test-util.h"
#include <math.h>
#include <string.h>

ClinferGraph *
op_test_graph (int opset)
{
  ClinferGraph *g = clinfer_graph_new ("test", "<op-test>");

  g_hash_table_insert (g->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  return g;
}

ClinferTensor *
op_test_tensor (ClinferElementType type, int rank, const int64_t *dims,
    gconstpointer values)
{
  ClinferShape s = clinfer_shape_make (rank, dims);
  ClinferTensor *t = clinfer_tensor_new (type, &s, NULL);

  g_assert_nonnull (t);
  if (values)
    memcpy (clinfer_tensor_get_data (t), values, clinfer_tensor_get_byte_size (t));
  return t;
}

ClinferTensor *
op_test_f32 (int rank, const int64_t *dims, const float *values)
{
  return op_test_tensor (CLINFER_TYPE_F32, rank, dims, values);
}

ClinferTensor *
op_test_i64 (int rank, const int64_t *dims, const int64_t *values)
{
  return op_test_tensor (CLINFER_TYPE_I64, rank, dims, values);
}

ClinferTensor *
op_test_random (GRand *rand, int rank, const int64_t *dims)
{
  ClinferTensor *t = op_test_f32 (rank, dims, NULL);
  float *p = clinfer_tensor_get_data (t);

  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (t); i++)
    p[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
  return t;
}

ClinferNode *
op_test_constant (ClinferGraph *g, const char *name, ClinferElementType type,
    int rank, const int64_t *dims, gconstpointer values)
{
  g_autoptr (ClinferTensor) t = op_test_tensor (type, rank, dims, values);

  return clinfer_graph_add_constant (g, name, t);
}

ClinferNode *
op_test_input_like (ClinferGraph *g, const char *name, const ClinferTensor *t)
{
  return clinfer_graph_add_input (g, name, clinfer_tensor_get_element_type (t),
      clinfer_tensor_get_shape (t));
}

ClinferNode *
op_test_node (ClinferGraph *g, const char *op_type, const char *domain,
    const char *name, guint n_in, ClinferNode **inputs, guint n_out)
{
  ClinferNode *n = clinfer_graph_add_node (g, op_type, domain, name, n_in, n_out);

  for (guint i = 0; i < n_in; i++)
    n->inputs[i].node = inputs[i];
  return n;
}

gboolean
op_test_prepare (ClinferGraph *g, GError **error)
{
  g_autoptr (GPtrArray) order = NULL;

  if (!clinfer_graph_resolve_ops (g, error))
    return FALSE;
  order = clinfer_graph_topological_order (g, error);
  if (order == NULL)
    return FALSE;
  for (guint i = 0; i < order->len; i++)
    if (!clinfer_node_infer (g_ptr_array_index (order, i), error))
      return FALSE;
  return TRUE;
}

void
op_test_assert_node_error (ClinferGraph *g, const char *name, int code)
{
  GError *err = NULL;

  g_assert_false (op_test_prepare (g, &err));
  g_assert_error (err, CLINFER_ERROR, code);
  if (strstr (err->message, name) == NULL)
    g_test_fail_printf ("error '%s' does not name node '%s'", err->message, name);
  g_error_free (err);
}

ClinferTensor **
op_test_eval (ClinferNode *node, ClinferTensor *const *inputs, GError **error)
{
  ClinferTensor **out = g_new0 (ClinferTensor *, node->n_outputs);

  for (guint i = 0; i < node->n_outputs; i++) {
    out[i] = clinfer_tensor_new (node->outputs[i].type, &node->outputs[i].shape,
        error);
    if (out[i] == NULL)
      goto fail;
  }
  if (node->def->eval (node, inputs, out, error))
    return out;
fail:
  op_test_free_outputs (node, out);
  return NULL;
}

void
op_test_free_outputs (ClinferNode *node, ClinferTensor **outputs)
{
  for (guint i = 0; outputs && i < node->n_outputs; i++)
    if (outputs[i])
      clinfer_tensor_unref (outputs[i]);
  g_free (outputs);
}

ClinferTensor *
op_test_eval_output (ClinferNode *node, ClinferTensor *const *inputs)
{
  GError *err = NULL;
  ClinferTensor **out = op_test_eval (node, inputs, &err), *y;

  g_assert_no_error (err);
  y = clinfer_tensor_ref (out[0]);
  op_test_free_outputs (node, out);
  return y;
}

/* Value of port @ref: a constant, a bound input or an evaluated output. */
static ClinferTensor *
port_value (GHashTable *values, ClinferPortRef ref)
{
  ClinferPortDesc *d;

  if (ref.node == NULL)
    return NULL;
  d = &ref.node->outputs[ref.port];
  return d->value ? d->value : g_hash_table_lookup (values, d);
}

ClinferTensor *
op_test_run_graph (ClinferGraph *g, ClinferTensor *const *inputs, GError **error)
{
  g_autoptr (GHashTable) values = g_hash_table_new_full (NULL, NULL, NULL,
      (GDestroyNotify) clinfer_tensor_unref);
  g_autoptr (GPtrArray) order = clinfer_graph_topological_order (g, error);
  ClinferGraphOutput *o;

  if (order == NULL)
    return NULL;
  for (guint i = 0; i < g->inputs->len; i++) {
    ClinferNode *in = g_ptr_array_index (g->inputs, i);
    g_hash_table_insert (values, &in->outputs[0], clinfer_tensor_ref (inputs[i]));
  }
  for (guint i = 0; i < order->len; i++) {
    ClinferNode *n = g_ptr_array_index (order, i);
    ClinferTensor *in[16] = { NULL }, **out;

    if (n->def->flags & CLINFER_OP_SOURCE)
      continue;
    g_assert_cmpuint (n->n_inputs, <=, G_N_ELEMENTS (in));
    for (guint j = 0; j < n->n_inputs; j++)
      in[j] = port_value (values, n->inputs[j]);
    out = op_test_eval (n, in, error);
    if (out == NULL)
      return NULL;
    for (guint j = 0; j < n->n_outputs; j++)
      g_hash_table_insert (values, &n->outputs[j], g_steal_pointer (&out[j]));
    g_free (out);
  }
  o = &g_array_index (g->outputs, ClinferGraphOutput, 0);
  return clinfer_tensor_ref (port_value (values, o->ref));
}

ClinferModel *
op_test_model (ClinferGraph *g, int opset, GError **error)
{
  ClinferModel *m;

  g_hash_table_insert (g->opsets, g_strdup (""), GINT_TO_POINTER (opset));
  for (guint i = 0; i < g->nodes->len; i++)
    ((ClinferNode *) g_ptr_array_index (g->nodes, i))->opset = opset;
  if (!clinfer_graph_resolve_ops (g, error)) {
    clinfer_graph_free (g);
    return NULL;
  }
  m = g_new0 (ClinferModel, 1);
  m->ref_count = 1;
  m->path = g_strdup (g->origin);
  m->graph = g;
  return m;
}

ClinferCompiled *
op_test_compile (ClinferGraph *g, int opset, GError **error)
{
  g_autoptr (ClinferModel) m = op_test_model (g, opset, error);

  return m ? clinfer_compile (m, NULL, error) : NULL;
}

ClinferRequest *
op_test_run_compiled (ClinferGraph *g, int opset, ClinferTensor *const *inputs,
    guint n_inputs)
{
  GError *err = NULL;
  g_autoptr (ClinferCompiled) c = op_test_compile (g, opset, &err);
  ClinferRequest *r;

  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_no_error (err);
  for (guint i = 0; i < n_inputs; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i, inputs[i], &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  return r;
}

ClinferTensor *
op_test_run_compiled_output (ClinferGraph *g, int opset,
    ClinferTensor *const *inputs, guint n_inputs)
{
  g_autoptr (ClinferRequest) r = op_test_run_compiled (g, opset, inputs,
      n_inputs);
  GError *err = NULL;
  ClinferTensor *y = clinfer_tensor_copy (clinfer_request_get_output (r, 0),
      &err);

  g_assert_no_error (err);
  return y;
}

ClinferTensor *
op_test_run_on (ClinferGraph *g, int opset, const char *device,
    ClinferTensor *x)
{
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  ClinferTensor *out;
  GError *err = NULL;

  m = op_test_model (g, opset, &err);
  g_assert_no_error (err);
  clinfer_compile_config_set_device (cfg, device);
  c = clinfer_compile (m, cfg, &err);
  if (c == NULL && strcmp (device, "CPU") != 0) {
    g_test_message ("%s: %s (not checked)", device, err->message);
    g_clear_error (&err);
    return NULL;
  }
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  g_assert_true (clinfer_request_set_input (r, "x", x, &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  /* A copy: the output is valid only while the request lives. */
  out = clinfer_tensor_copy (clinfer_request_get_output (r, 0), &err);
  g_assert_no_error (err);
  return out;
}

void
op_test_assert_shape (const ClinferTensor *t, int rank, const int64_t *dims)
{
  ClinferShape want = clinfer_shape_make (rank, dims);
  g_autofree char *a = clinfer_shape_to_string (clinfer_tensor_get_shape (t));
  g_autofree char *b = clinfer_shape_to_string (&want);

  g_assert_cmpstr (a, ==, b);
}

void
op_test_assert_close (const ClinferTensor *got, const ClinferTensor *ref,
    const char *what)
{
  int64_t n = clinfer_tensor_get_n_elements (ref);
  double max_ref = 0, max_diff = 0;

  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (got),
          clinfer_tensor_get_shape (ref)));
  for (int64_t i = 0; i < n; i++) {
    double r = clinfer_tensor_get_as_double (ref, i);
    double d = fabs (clinfer_tensor_get_as_double (got, i) - r);
    max_ref = MAX (max_ref, fabs (r));
    max_diff = isnan (d) ? INFINITY : MAX (max_diff, d);
  }
  if (max_diff > 1e-4 * MAX (1.0, max_ref))
    g_test_fail_printf ("%s: max |diff| %g exceeds %g", what, max_diff,
        1e-4 * MAX (1.0, max_ref));
}

void
op_test_check_devices (OpTestBuild build, int form, guint32 seed, int opset,
    ClinferTensor *x, const ClinferTensor *ref)
{
  static const char *const devices[] = { "CPU", "GPU" };

  for (guint d = 0; d < G_N_ELEMENTS (devices); d++) {
    g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
    g_autoptr (ClinferTensor) got = op_test_run_on (build (form, rand), opset,
        devices[d], x);
    if (got)
      op_test_assert_close (got, ref, devices[d]);
  }
}

void
op_test_assert_pass_registered (const char *name, gboolean device_only)
{
  const ClinferPass *p = clinfer_pass_lookup (name);

  g_assert_nonnull (p);
  g_assert_cmpint (p->device_only, ==, device_only);
}

void
op_test_set_conv_attrs (ClinferNode *n, int kh, int kw, int sh, int sw,
    int dh, int dw, int group, const char *auto_pad, const int64_t *pads,
    const char *act)
{
  int64_t k[] = { kh, kw }, s[] = { sh, sw }, d[] = { dh, dw };

  clinfer_node_set_attr (n, "kernel_shape", clinfer_attr_new_ints (k, 2));
  clinfer_node_set_attr (n, "strides", clinfer_attr_new_ints (s, 2));
  clinfer_node_set_attr (n, "dilations", clinfer_attr_new_ints (d, 2));
  clinfer_node_set_attr (n, "group", clinfer_attr_new_int (group));
  if (auto_pad)
    clinfer_node_set_attr (n, "auto_pad", clinfer_attr_new_string (auto_pad));
  else
    clinfer_node_set_attr (n, "pads", clinfer_attr_new_ints (pads, 4));
  if (act == NULL)
    return;
  clinfer_node_set_attr (n, "activation", clinfer_attr_new_string (act));
  if (strcmp (act, "Clip") == 0) {
    clinfer_node_set_attr (n, "activation_min", clinfer_attr_new_float (-0.25f));
    clinfer_node_set_attr (n, "activation_max", clinfer_attr_new_float (0.5f));
  } else if (strcmp (act, "LeakyRelu") == 0) {
    clinfer_node_set_attr (n, "activation_alpha", clinfer_attr_new_float (0.2f));
  }
}

guint
op_test_count_ops (const ClinferGraph *g, const char *op_type)
{
  guint n = 0;

  for (guint i = 0; i < g->nodes->len; i++)
    n += strcmp (((ClinferNode *) g_ptr_array_index (g->nodes, i))->op_type,
        op_type) == 0;
  return n;
}

int64_t
op_test_ulps_apart (float a, float b)
{
  int32_t ia, ib;

  if (a == b)
    return 0;
  if (signbit (a) != signbit (b))
    return G_MAXINT64;
  memcpy (&ia, &a, 4);
  memcpy (&ib, &b, 4);
  return ia > ib ? (int64_t) ia - ib : (int64_t) ib - ia;
}

void
op_test_check_cpu_kernel (ClinferGraph *g, ClinferGraph *ref, int opset,
    ClinferTensor *const *inputs, guint n_in, const char *kernel,
    const char *what)
{
  op_test_check_cpu_kernel_ulps (g, ref, opset, inputs, n_in, kernel, what,
      0);
}

void
op_test_check_cpu_kernel_ulps (ClinferGraph *g, ClinferGraph *ref, int opset,
    ClinferTensor *const *inputs, guint n_in, const char *kernel,
    const char *what, int max_ulps)
{
  g_autoptr (ClinferTensor) want = NULL;
  g_autoptr (ClinferCompileConfig) cfg = clinfer_compile_config_new ();
  g_autoptr (ClinferModel) m = NULL;
  g_autoptr (ClinferCompiled) c = NULL;
  g_autoptr (ClinferRequest) r = NULL;
  const ClinferProfileEntry *e;
  ClinferTensor *got;
  guint n = 0;
  GError *err = NULL;

  g_assert_true (op_test_prepare (ref ? ref : g, &err));
  g_assert_no_error (err);
  want = op_test_run_graph (ref ? ref : g, inputs, &err);
  g_assert_no_error (err);
  if (ref)
    clinfer_graph_free (ref);
  m = op_test_model (g, opset, &err);
  g_assert_no_error (err);
  clinfer_compile_config_set_profiling (cfg, TRUE);
  clinfer_compile_config_set_threads (cfg, 2);
  /* The CPU device's own kernels, not oneDNN's primitives. */
  g_setenv ("CLINFER_CPU_ONEDNN", "0", TRUE);
  c = clinfer_compile (m, cfg, &err);
  g_unsetenv ("CLINFER_CPU_ONEDNN");
  g_assert_no_error (err);
  r = clinfer_compiled_create_request (c, &err);
  for (guint i = 0; i < n_in; i++)
    g_assert_true (clinfer_request_set_input_by_index (r, i, inputs[i], &err));
  g_assert_true (clinfer_request_infer (r, &err));
  g_assert_no_error (err);
  got = clinfer_request_get_output (r, 0);
  g_assert_true (clinfer_shape_equal (clinfer_tensor_get_shape (got),
          clinfer_tensor_get_shape (want)));
  for (int64_t i = 0; i < clinfer_tensor_get_n_elements (want); i++) {
    double a = clinfer_tensor_get_as_double (got, i);
    double b = clinfer_tensor_get_as_double (want, i);
    if (a != b && !(isnan (a) && isnan (b))
        && (max_ulps == 0 || isnan (a) || isnan (b)
            || op_test_ulps_apart ((float) a, (float) b) > max_ulps))
      g_error ("%s: element %" G_GINT64_FORMAT ": %.9g, want %.9g", what, i,
          a, b);
  }
  e = clinfer_request_get_profile (r, &n);
  g_assert_cmpuint (n, >=, 1);
  g_assert_cmpstr (e[n - 1].kernel, ==, kernel);
}
