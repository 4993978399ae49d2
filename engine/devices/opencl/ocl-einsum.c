/* clinfer — OpenCL Einsum (kernels/einsum.cl): the equation is lowered at
 * compile time into a table of extents and per-operand strides for one
 * generic kernel (up to three operands, ellipsis broadcasting, repeated
 * labels as diagonals, implicit outputs as numpy). */
#include "devices/opencl/ocl-internal.h"
#include <string.h>

#define EIN_MAX_OPERANDS 3
#define EIN_MAX_IDS (CLINFER_MAX_RANK + 52)   /* ellipsis dims + letters */

typedef struct {
  int n;                     /* letters */
  char l[CLINFER_MAX_RANK];
  int ell;                   /* position of "...", -1 without */
} EinTerm;

typedef struct {
  guint n_in;
  EinTerm in[EIN_MAX_OPERANDS];
  EinTerm out;
  gboolean explicit_out;
} EinEquation;

static gboolean
ein_error (const ClinferNode *node, const char *why, GError **error)
{
  const char *eq = NULL;

  clinfer_node_attr_string (node, "equation", "", &eq, NULL);
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: equation '%s': %s", clinfer_node_label (node), eq ? eq : "", why);
  return FALSE;
}

static gboolean
ein_term (const ClinferNode *node, const char *s, const char *end, EinTerm *t,
    GError **error)
{
  memset (t, 0, sizeof (*t));
  t->ell = -1;
  for (; s < end; s++) {
    if (*s == '.') {
      if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->ell >= 0)
        return ein_error (node, "misplaced '.' (one '...' per term)", error);
      t->ell = t->n;
      s += 2;
    } else if (!g_ascii_isalpha (*s) || t->n >= CLINFER_MAX_RANK) {
      return ein_error (node, "labels must be letters, at most 8 per term",
          error);
    } else {
      t->l[t->n++] = *s;
    }
  }
  return TRUE;
}

/* Parses the "equation" attribute (spaces ignored). */
static gboolean
ein_parse (const ClinferNode *node, EinEquation *e, GError **error)
{
  const char *raw = NULL, *s, *lhs_end, *arrow;
  g_autofree char *eq = NULL;
  int j = 0;

  memset (e, 0, sizeof (*e));
  if (!clinfer_node_attr_string (node, "equation", NULL, &raw, error))
    return FALSE;
  if (raw == NULL)
    return ein_error (node, "attribute 'equation' is required", error);
  eq = g_strdup (raw);
  for (int i = 0; eq[i]; i++)
    if (!g_ascii_isspace (eq[i]))
      eq[j++] = eq[i];
  eq[j] = '\0';
  if (node->n_inputs < 1 || node->n_inputs > EIN_MAX_OPERANDS)
    return ein_error (node, "1 to 3 operands expected", error);
  arrow = strstr (eq, "->");
  lhs_end = arrow ? arrow : eq + strlen (eq);
  s = eq;
  for (guint i = 0; i < node->n_inputs; i++) {
    const char *c = memchr (s, ',', lhs_end - s);
    const char *end = c ? c : lhs_end;
    if ((i + 1 < node->n_inputs) != (c != NULL))
      return ein_error (node, "the number of terms differs from the number "
          "of inputs", error);
    if (!ein_term (node, s, end, &e->in[i], error))
      return FALSE;
    s = end + 1;
  }
  e->n_in = node->n_inputs;
  e->explicit_out = arrow != NULL;
  if (arrow && (strstr (arrow + 2, "->") || strchr (arrow + 2, ',')))
    return ein_error (node, "one output term expected", error);
  return !arrow || ein_term (node, arrow + 2, arrow + strlen (arrow), &e->out,
      error);
}

static int
ein_letter_id (int ell_rank, char c)
{
  return ell_rank + (g_ascii_islower (c) ? c - 'a' : 26 + c - 'A');
}

/* The id of each of the @rank dims of term @t. */
static void
ein_ids (const EinTerm *t, int ell_rank, int rank, int *ids)
{
  int er = t->ell >= 0 ? rank - t->n : 0, pos = 0;

  for (int k = 0; k <= t->n; k++) {
    if (k == t->ell)
      for (int x = 0; x < er; x++)
        ids[pos++] = ell_rank - er + x;
    if (k < t->n)
      ids[pos++] = ein_letter_id (ell_rank, t->l[k]);
  }
}

/* Numpy's implicit output: the ellipsis, then letters used once, sorted. */
static void
ein_implicit_out (const EinEquation *e, EinTerm *out)
{
  int count[128] = { 0 };

  memset (out, 0, sizeof (*out));
  out->ell = -1;
  for (guint i = 0; i < e->n_in; i++) {
    if (e->in[i].ell >= 0)
      out->ell = 0;
    for (int k = 0; k < e->in[i].n; k++)
      count[(guchar) e->in[i].l[k]]++;
  }
  for (int c = 0; c < 128 && out->n < CLINFER_MAX_RANK; c++)
    if (count[c] == 1)
      out->l[out->n++] = (char) c;
}

/* The kernel's table (4 ints per output dim, then per summed dim) for the
 * input shapes of @b; *n_sum is the size of the summed space. */
static gboolean
ein_lower (OclBuilder *b, const ClinferNode *node, const EinEquation *e,
    GArray *plan, int *n_out_dims, int *n_sum_dims, int64_t *n_sum,
    GError **error)
{
  int64_t ext[EIN_MAX_IDS], st[EIN_MAX_OPERANDS][EIN_MAX_IDS];
  gboolean used[EIN_MAX_IDS] = { FALSE }, in_out[EIN_MAX_IDS] = { FALSE };
  int ids[CLINFER_MAX_RANK], ell_rank = 0, n_ids;
  EinTerm out;

  memset (st, 0, sizeof (st));
  for (guint i = 0; i < e->n_in; i++) {
    int r = clinfer_ocl_in_shape (b, i)->rank;
    if (r < e->in[i].n || (e->in[i].ell < 0 && r != e->in[i].n))
      return ein_error (node, "an input's rank differs from its term", error);
    if (e->in[i].ell >= 0)
      ell_rank = MAX (ell_rank, r - e->in[i].n);
  }
  n_ids = ell_rank + 52;
  for (int id = 0; id < n_ids; id++)
    ext[id] = id < ell_rank ? 1 : -1;
  for (guint i = 0; i < e->n_in; i++) {
    const ClinferShape *s = clinfer_ocl_in_shape (b, i);
    int64_t acc = 1;
    ein_ids (&e->in[i], ell_rank, s->rank, ids);
    for (int k = s->rank - 1; k >= 0; k--) {
      int id = ids[k];
      int64_t d = s->dims[k];
      gboolean bcast = id < ell_rank && d == 1;
      if (!bcast && ext[id] != -1 && ext[id] != d
          && !(id < ell_rank && ext[id] == 1))
        return ein_error (node, "dims labelled alike disagree", error);
      if (!bcast) {
        ext[id] = d;
        st[i][id] += acc;
      }
      used[id] = TRUE;
      acc *= d;
    }
  }
  if (e->explicit_out)
    out = e->out;
  else
    ein_implicit_out (e, &out);
  *n_out_dims = out.n + (out.ell >= 0 ? ell_rank : 0);
  if (*n_out_dims > CLINFER_MAX_RANK)
    return ein_error (node, "the output has too many dims", error);
  ein_ids (&out, ell_rank, *n_out_dims, ids);
  for (int k = 0; k < *n_out_dims; k++) {
    int row[4] = { (int) ext[ids[k]], (int) st[0][ids[k]],
      (int) st[1][ids[k]], (int) st[2][ids[k]] };
    if (!used[ids[k]] || in_out[ids[k]])
      return ein_error (node, "an output label is repeated or absent from "
          "the inputs", error);
    in_out[ids[k]] = TRUE;
    g_array_append_vals (plan, row, 4);
  }
  *n_sum_dims = 0;
  *n_sum = 1;
  for (int id = 0; id < n_ids; id++)
    if (used[id] && !in_out[id]) {
      int row[4] = { (int) ext[id], (int) st[0][id], (int) st[1][id],
        (int) st[2][id] };
      g_array_append_vals (plan, row, 4);
      (*n_sum_dims)++;
      *n_sum *= ext[id];
    }
  if (*n_sum > G_MAXINT)
    return ein_error (node, "the summed index space is too large", error);
  return TRUE;
}

gboolean
clinfer_ocl_einsum_supports (const OclDevice *dev, const ClinferNode *node,
    const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (node->n_inputs < 1 || node->n_inputs > EIN_MAX_OPERANDS) {
    *reason = "more than three operands";
    return FALSE;
  }
  for (guint i = 0; i < node->n_inputs; i++)
    if (node->inputs[i].node == NULL || clinfer_ocl_in_type (node, i) != t) {
      *reason = "absent operand or operands of mixed element types";
      return FALSE;
    }
  if (t != CLINFER_TYPE_F32 && t != CLINFER_TYPE_F64 && t != CLINFER_TYPE_I32
      && t != CLINFER_TYPE_I64 && t != CLINFER_TYPE_U32
      && t != CLINFER_TYPE_U64) {
    *reason = "element type not supported by the OpenCL kernels";
    return FALSE;
  }
  if (!clinfer_ocl_fp64_ok (dev, t, reason))
    return FALSE;
  return TRUE;
}

gboolean
clinfer_ocl_einsum_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);
  const char *ct = clinfer_ocl_c_type (t);
  g_autoptr (GArray) plan = g_array_new (FALSE, FALSE, sizeof (int));
  int64_t n = clinfer_shape_n_elements (&node->outputs[0].shape), n_sum;
  int n_out_dims, n_sum_dims;
  g_autofree char *opts = NULL;
  EinEquation e;
  OclLaunch *l;

  if (!ein_parse (node, &e, error)
      || !ein_lower (b, node, &e, plan, &n_out_dims, &n_sum_dims, &n_sum,
          error))
    return FALSE;
  /* Integers accumulate in 64 bits, as the CPU device does. */
  opts = g_strdup_printf ("-DT=%s -DACC_T=%s%s", ct,
      t == CLINFER_TYPE_I32 ? "long" : t == CLINFER_TYPE_U32 ? "ulong" : ct,
      t == CLINFER_TYPE_F64 ? " -DUSE_FP64" : "");
  if (!(l = clinfer_ocl_launch_new (b, "einsum", opts, "einsum", error)))
    return FALSE;
  for (guint i = 0; i < EIN_MAX_OPERANDS; i++)
    clinfer_ocl_arg_input (l, i < e.n_in ? i : 0);
  clinfer_ocl_arg_output (l, 0);
  if (!clinfer_ocl_arg_data (b, l, plan->data, plan->len * sizeof (int),
          error))
    return FALSE;
  clinfer_ocl_arg_int (l, (int) e.n_in);
  clinfer_ocl_arg_int (l, n_out_dims);
  clinfer_ocl_arg_int (l, n_sum_dims);
  clinfer_ocl_arg_int (l, (int) n);
  clinfer_ocl_arg_int (l, (int) n_sum);
  clinfer_ocl_launch_set_global (l, 1, n, 1, 1);
  return TRUE;
}
