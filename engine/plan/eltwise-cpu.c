/* clinfer — the CPU device's element-wise kernels on plain layouts of any
 * rank (f32), for the steps the oneDNN fast path leaves (its eltwise and
 * binary primitives take 4-D tensors; a transformer's are 3-D):
 * - Add, Sub, Mul, Div with numpy broadcasting. Adjacent dims that
 *   broadcast alike merge (y [1, 54, 256] = a [1, 54, 256] - b [1, 54, 1]
 *   is 54 rows of 256 minus one value each), and each row is one
 *   binary_row () call of the simd table.
 * - Relu, Neg, Abs, Sqrt, Log (a vector log, within a few ulp of logf),
 *   com.clinfer Swish (x / (1 + exp (-x)), a vector exp).
 * - Where (a bool condition, f32 values) with numpy broadcasting of the
 *   three, merged as the binary ops' operands are.
 * - ReduceSum, ReduceMean, ReduceMax and ReduceMin (NaN wins, as in the
 *   reference eval) whose reduced dims are adjacent (after
 *   dropping dims of extent 1): [outer, reduced, inner] sums rows
 *   (inner 1) or adds inner-long rows.
 * Work splits between the threads by rows, or by chunks of a row when
 * there are few. The reference evals (engine/ops) run everything else. */
#include "plan/cpu-simd.h"
#include <omp.h>
#include <string.h>

/* Steps of at least this many output bytes split between the threads. */
#define ELT_SPLIT_BYTES (64 * 1024)
/* The smallest part of a row one thread takes. */
#define ELT_MIN_CHUNK 1024

typedef enum { ELT_BINARY, ELT_UNARY, ELT_REDUCE, ELT_WHERE } EltKind;

typedef struct {
  const ClinferCpuSimd *simd;
  EltKind kind;
  int op;                    /* binary_row () / unary_row () op; ELT_REDUCE:
                              * 0 Sum, 1 Mean, 2 Max, 3 Min */
  ClinferShape in_shape[3];  /* the inputs as prepared */
  guint n_in;
  /* ELT_BINARY, ELT_WHERE: merged dims, innermost last, and each
   * operand's element stride along them (0 where it broadcasts) */
  int nd;
  int64_t dims[CLINFER_MAX_RANK];
  int64_t s[3][CLINFER_MAX_RANK];
  /* ELT_REDUCE: the input as [outer, red, inner] */
  int64_t outer, red, inner;
  int64_t n_out;
} EltState;

static gboolean
is_f32_static (const ClinferPortDesc *d)
{
  return d && d->type == CLINFER_TYPE_F32 && clinfer_shape_is_static (&d->shape);
}

/* Rows of @row_len split into chunks so that @rows * chunks gives every
 * thread work: the chunk length. */
static int64_t
chunk_len (int64_t rows, int64_t row_len, int nt)
{
  int64_t parts;

  if (rows >= nt)
    return row_len;
  parts = MIN ((nt + rows - 1) / rows, MAX (1, row_len / ELT_MIN_CHUNK));
  return (row_len + parts - 1) / parts;
}

/* ---------------------------------------------------------------- */
/* Run                                                               */

/* How run_binary () and run_where () split their output: rows of n
 * (the last merged dim), each in parts of chunk. */
typedef struct {
  int64_t n, rows, chunk, per_row;
  int nt;
} EltSplit;

static EltSplit
elt_split (const EltState *st)
{
  EltSplit sp;

  sp.n = st->dims[st->nd - 1];
  sp.rows = st->n_out / MAX (sp.n, 1);
  sp.nt = st->n_out * 4 >= ELT_SPLIT_BYTES ? omp_get_max_threads () : 1;
  sp.chunk = chunk_len (sp.rows, sp.n, sp.nt);
  sp.per_row = (sp.n + sp.chunk - 1) / sp.chunk;
  return sp;
}

/* The first @n_ops operands' offsets of output row @row, dim by dim from
 * the last outer one. */
static inline void
row_offsets (const EltState *st, int64_t row, int n_ops, int64_t *off)
{
  for (int o = 0; o < n_ops; o++)
    off[o] = 0;
  for (int k = st->nd - 2; k >= 0; k--) {
    int64_t idx = row % st->dims[k];
    row /= st->dims[k];
    for (int o = 0; o < n_ops; o++)
      off[o] += idx * st->s[o][k];
  }
}

static void
run_binary (const EltState *st, const float *a, const float *b, float *y)
{
  EltSplit sp = elt_split (st);
  int ia = st->s[0][st->nd - 1] != 0, ib = st->s[1][st->nd - 1] != 0;

#pragma omp parallel for schedule (static) if (sp.nt > 1)
  for (int64_t u = 0; u < sp.rows * sp.per_row; u++) {
    int64_t row = u / sp.per_row, i0 = u % sp.per_row * sp.chunk, off[2];

    row_offsets (st, row, 2, off);
    st->simd->binary_row (st->op, a + off[0] + (ia ? i0 : 0), ia,
        b + off[1] + (ib ? i0 : 0), ib, y + row * sp.n + i0,
        MIN (sp.chunk, sp.n - i0));
  }
}

/* y = c ? a : b, split as run_binary () splits. */
static void
run_where (const EltState *st, const guint8 *c, const float *a,
    const float *b, float *y)
{
  EltSplit sp = elt_split (st);
  int64_t ic = st->s[0][st->nd - 1] != 0, ia = st->s[1][st->nd - 1] != 0;
  int64_t ib = st->s[2][st->nd - 1] != 0;

#pragma omp parallel for schedule (static) if (sp.nt > 1)
  for (int64_t u = 0; u < sp.rows * sp.per_row; u++) {
    int64_t row = u / sp.per_row, i0 = u % sp.per_row * sp.chunk, off[3];
    int64_t len = MIN (sp.chunk, sp.n - i0);
    const guint8 *cr;
    const float *ar, *br;
    float *yr = y + row * sp.n + i0;

    row_offsets (st, row, 3, off);
    cr = c + off[0] + ic * i0;
    ar = a + off[1] + ia * i0;
    br = b + off[2] + ib * i0;
    for (int64_t j = 0; j < len; j++)
      yr[j] = cr[j * ic] ? ar[j * ia] : br[j * ib];
  }
}

static void
run_unary (const EltState *st, const float *x, float *y)
{
  int nt = st->n_out * 4 >= ELT_SPLIT_BYTES ? omp_get_max_threads () : 1;
  int64_t chunk = chunk_len (1, st->n_out, nt);
  int64_t parts = (st->n_out + chunk - 1) / chunk;

#pragma omp parallel for schedule (static) if (nt > 1)
  for (int64_t p = 0; p < parts; p++)
    st->simd->unary_row (st->op, x + p * chunk, y + p * chunk,
        MIN (chunk, st->n_out - p * chunk));
}

static void
run_reduce (const EltState *st, const float *x, float *y)
{
  const ClinferCpuSimd *s = st->simd;
  int nt = st->n_out * st->red * 4 >= ELT_SPLIT_BYTES
      ? omp_get_max_threads () : 1;
  float count = (float) st->red;

  if (st->inner == 1 && st->red < 16 && st->op < 2) {
    /* Short rows (basic-pitch sums pairs: 53,148 rows of 2): in order
     * here, a row_sum () call each would cost more than its adds. */
    if (st->red == 2 && st->op == 0) {
      /* pairs, in a form the compiler vectorises */
#pragma omp parallel for schedule (static) if (nt > 1)
      for (int64_t o = 0; o < st->outer; o++)
        y[o] = x[2 * o] + x[2 * o + 1];
      return;
    }
#pragma omp parallel for schedule (static) if (nt > 1)
    for (int64_t o = 0; o < st->outer; o++) {
      const float *xo = x + o * st->red;
      float v = xo[0];
      for (int64_t r = 1; r < st->red; r++)
        v += xo[r];
      y[o] = st->op == 1 ? v / count : v;
    }
    return;
  }
  if (st->inner == 1) {
#pragma omp parallel for schedule (static) if (nt > 1)
    for (int64_t o = 0; o < st->outer; o++) {
      float v = st->op >= 2 ? s->row_extreme (x + o * st->red, st->red,
          st->op == 3) : s->row_sum (x + o * st->red, st->red);
      y[o] = st->op == 1 ? v / count : v;
    }
    return;
  }
  {
    int64_t chunk = chunk_len (st->outer, st->inner, nt);
    int64_t per_row = (st->inner + chunk - 1) / chunk;

#pragma omp parallel for schedule (static) if (nt > 1)
    for (int64_t u = 0; u < st->outer * per_row; u++) {
      int64_t o = u / per_row, i0 = u % per_row * chunk;
      int64_t len = MIN (chunk, st->inner - i0);
      const float *xo = x + o * st->red * st->inner + i0;
      float *yo = y + o * st->inner + i0;

      memcpy (yo, xo, len * sizeof (float));
      for (int64_t r = 1; r < st->red; r++)
        if (st->op >= 2)
          s->extreme_row (yo, xo + r * st->inner, len, st->op == 3);
        else
          s->add_row (yo, xo + r * st->inner, len);
      if (st->op == 1)
        s->binary_row (3, yo, 1, &count, 0, yo, len);
    }
  }
}

static gboolean
elt_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const EltState *st = kernel->state;
  float *y = clinfer_tensor_get_data (outputs[0]);

  for (guint i = 0; i < st->n_in; i++)
    if (!clinfer_cpu_kernel_check_shape (kernel, node, i == 0 ? "input"
            : i == 1 ? "input 1" : "input 2", inputs[i], &st->in_shape[i],
            error))
      return FALSE;
  if (st->n_out == 0)
    return TRUE;
  switch (st->kind) {
    case ELT_BINARY:
      run_binary (st, clinfer_tensor_get_const_data (inputs[0]),
          clinfer_tensor_get_const_data (inputs[1]), y);
      break;
    case ELT_UNARY:
      run_unary (st, clinfer_tensor_get_const_data (inputs[0]), y);
      break;
    case ELT_REDUCE:
      run_reduce (st, clinfer_tensor_get_const_data (inputs[0]), y);
      break;
    case ELT_WHERE:
      run_where (st, clinfer_tensor_get_const_data (inputs[0]),
          clinfer_tensor_get_const_data (inputs[1]),
          clinfer_tensor_get_const_data (inputs[2]), y);
      break;
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Preparation                                                       */

/* Merges @y's dims into st->dims where the @n operands @ops (right-
 * aligned, each broadcasting to @y) broadcast alike, with their strides
 * in st->s; FALSE when one does not broadcast to @y. */
static gboolean
merge_operands (EltState *st, int n, const ClinferShape *const *ops,
    const ClinferShape *y)
{
  gboolean f[3][CLINFER_MAX_RANK];
  int nd = 0;

  for (int i = 0; i < y->rank; i++) {
    int64_t yd = y->dims[i];
    gboolean h[3], same = nd > 0;

    for (int o = 0; o < n; o++) {
      int k = i - (y->rank - ops[o]->rank);
      int64_t d = k >= 0 ? ops[o]->dims[k] : 1;
      h[o] = d == yd;
      if (!h[o] && d != 1)
        return FALSE;
      same = same && f[o][nd - 1] == h[o];
    }
    if (yd == 1)
      continue;
    if (same) {
      st->dims[nd - 1] *= yd;
      continue;
    }
    st->dims[nd] = yd;
    for (int o = 0; o < n; o++)
      f[o][nd] = h[o];
    nd++;
  }
  if (nd == 0) {
    st->dims[0] = 1;
    for (int o = 0; o < n; o++)
      f[o][0] = TRUE;
    nd = 1;
  }
  st->nd = nd;
  for (int o = 0; o < n; o++)
    for (int64_t k = nd - 1, p = 1; k >= 0; k--) {
      st->s[o][k] = f[o][k] ? p : 0;
      p *= f[o][k] ? st->dims[k] : 1;
    }
  return TRUE;
}

/* [outer, red, inner] of @x with reduced dims @mask, FALSE when the
 * reduced dims (of extent over 1) are not adjacent. */
static gboolean
merge_reduce (EltState *st, const ClinferShape *x, const gboolean *mask)
{
  int phase = 0;             /* 0 outer, 1 reduced, 2 inner */

  st->outer = st->red = st->inner = 1;
  for (int i = 0; i < x->rank; i++) {
    if (x->dims[i] == 1)
      continue;
    if (mask[i]) {
      if (phase == 2)
        return FALSE;
      phase = 1;
      st->red *= x->dims[i];
    } else if (phase == 0) {
      st->outer *= x->dims[i];
    } else {
      phase = 2;
      st->inner *= x->dims[i];
    }
  }
  return TRUE;
}

static const char *const binary_ops[] = { "Add", "Sub", "Mul", "Div" };
static const char *const unary_ops[] = { "Relu", "Neg", "Abs", "Sqrt",
  "Log" };
static const char *const reduce_ops[] = { "ReduceSum", "ReduceMean",
  "ReduceMax", "ReduceMin" };

/* The kind and op of @node, FALSE when it has no kernel here. */
static gboolean
node_kind (const ClinferNode *node, EltKind *kind, int *op)
{
  for (int i = 0; i < (int) G_N_ELEMENTS (binary_ops); i++)
    if (clinfer_node_is_builtin_op (node, "", binary_ops[i])) {
      *kind = ELT_BINARY;
      *op = i;
      /* Before opset 7: "broadcast" and "axis" say how b aligns. */
      return node->n_inputs == 2
          && clinfer_node_get_attr (node, "broadcast") == NULL;
    }
  for (int i = 0; i < (int) G_N_ELEMENTS (unary_ops); i++)
    if (clinfer_node_is_builtin_op (node, "", unary_ops[i])) {
      *kind = ELT_UNARY;
      *op = i;
      return TRUE;
    }
  if (clinfer_node_is_builtin_op (node, "com.clinfer", "Swish")) {
    *kind = ELT_UNARY;
    *op = 7;                 /* unary_row ()'s Swish */
    return TRUE;
  }
  if (clinfer_node_is_builtin_op (node, "", "Where")) {
    *kind = ELT_WHERE;
    *op = 0;
    return node->n_inputs == 3;
  }
  *kind = ELT_REDUCE;
  for (int i = 0; i < (int) G_N_ELEMENTS (reduce_ops); i++)
    if (clinfer_node_is_builtin_op (node, "", reduce_ops[i])) {
      *op = i;
      return TRUE;
    }
  return FALSE;
}

gboolean
clinfer_cpu_eltwise_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  static const char *const kind_names[] = { "binary_rows", "unary_rows",
    "reduce_rows", "where_rows" };
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  const ClinferPortDesc *y = &node->outputs[0];
  g_autofree EltState *st = g_new0 (EltState, 1);
  gboolean mask[CLINFER_MAX_RANK];

  /* Where's condition is bool; every other input is f32. */
  if (!node_kind (node, &st->kind, &st->op) || node->n_outputs != 1
      || y->type != CLINFER_TYPE_F32 || !clinfer_shape_is_static (&y->shape)
      || x == NULL || !clinfer_shape_is_static (&x->shape)
      || x->type != (st->kind == ELT_WHERE ? CLINFER_TYPE_BOOL
          : CLINFER_TYPE_F32))
    return FALSE;
  st->in_shape[0] = x->shape;
  st->n_in = 1;
  st->n_out = clinfer_shape_n_elements (&y->shape);
  switch (st->kind) {
    case ELT_BINARY:
    case ELT_WHERE: {
      /* Constant operands are read like activations. */
      const ClinferShape *ops[3] = { &x->shape, NULL, NULL };
      guint n = st->kind == ELT_WHERE ? 3 : 2;
      for (guint i = 1; i < n; i++) {
        ClinferPortDesc *d = clinfer_node_input_desc (node, i);
        if (!is_f32_static (d))
          return FALSE;
        st->in_shape[i] = d->shape;
        ops[i] = &st->in_shape[i];
      }
      if (!merge_operands (st, n, ops, &y->shape))
        return FALSE;
      st->n_in = n;
      break;
    }
    case ELT_UNARY:
      if (!clinfer_shape_equal (&x->shape, &y->shape))
        return FALSE;
      break;
    case ELT_REDUCE:
      if (!clinfer_reduce_const_mask (node, x->shape.rank, mask)
          || !merge_reduce (st, &x->shape, mask)
          || st->outer * st->inner != st->n_out || st->red == 0)
        return FALSE;
      break;
  }
  st->simd = clinfer_cpu_simd_get (isa);
  kernel->name = g_strdup_printf ("%s_%s", kind_names[st->kind],
      st->simd->isa_name);
  kernel->state = g_steal_pointer (&st);
  kernel->free_state = g_free;
  kernel->run = elt_run;
  return TRUE;
}
