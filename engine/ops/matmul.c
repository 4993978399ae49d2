/* clinfer — MatMul (numpy semantics, batch broadcast), Gemm and Einsum,
 * with a blocked, OpenMP-parallel f32 GEMM used by MatMul and Gemm. */
#include "ops/op.h"
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- */
/* Shared helpers                                                    */

static gboolean
matmul_type (ClinferElementType t)
{
  switch (t) {
    case CLINFER_TYPE_F32: case CLINFER_TYPE_F64: case CLINFER_TYPE_F16:
    case CLINFER_TYPE_BF16: case CLINFER_TYPE_I32: case CLINFER_TYPE_I64:
    case CLINFER_TYPE_U32: case CLINFER_TYPE_U64:
      return TRUE;
    default:
      return FALSE;
  }
}

/* All present inputs must be one supported type; it is the output type. */
static gboolean
check_types (const ClinferNode *node, const ClinferValueInfo *in,
    GError **error)
{
  if (!matmul_type (in[0].type)) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_TYPE_MISMATCH,
        "%s: input 0 is %s, expected f32, f64, f16, bf16, i32, i64, u32 or u64",
        clinfer_node_label (node), clinfer_element_type_name (in[0].type));
    return FALSE;
  }
  return clinfer_op_check_same_types (node, in, 1, error);
}

/* ---------------------------------------------------------------- */
/* Blocked f32 GEMM                                                  */

#define PANEL 16             /* columns of B per packed panel */
#define MR 4                 /* rows of A per micro-tile */
#define BLOCK_M 32           /* rows of one work unit */
#define BLOCK_P 8            /* panels of one work unit */

/* One GEMM of a batch: Y[m x n] (row stride ldy) = alpha * A B (+ Y when
 * accumulate). A(i, k) is at a[i * a_rs + k * a_cs]; B is packed. */
typedef struct {
  const float *a;
  int64_t a_rs, a_cs;
  const float *bpack;        /* ceil (n / PANEL) panels of k x PANEL */
  float *y;
  int64_t ldy;
  const float *b;            /* unpacked B (small m): B(k, j) at */
  int64_t b_rs, b_cs;        /* b[k * b_rs + j * b_cs] */
} GemmJob;

typedef struct {
  int64_t m, n, k;
  float alpha;
  gboolean accumulate;
} GemmDims;

/* Packs B (B(k, j) at b[k * b_rs + j * b_cs]) into zero-padded panels. */
static void
pack_b (const float *b, int64_t b_rs, int64_t b_cs, int64_t k, int64_t n,
    float *dst)
{
  int64_t np = (n + PANEL - 1) / PANEL;

#pragma omp parallel for schedule(static) if (k * n > 65536)
  for (int64_t p = 0; p < np; p++) {
    float *d = dst + p * k * PANEL;
    int64_t j0 = p * PANEL, nc = MIN (PANEL, n - j0);
    for (int64_t kk = 0; kk < k; kk++) {
      const float *src = b + kk * b_rs + j0 * b_cs;
      int64_t j = 0;
      if (b_cs == 1)
        for (; j < nc; j++)
          d[kk * PANEL + j] = src[j];
      else
        for (; j < nc; j++)
          d[kk * PANEL + j] = src[j * b_cs];
      for (; j < PANEL; j++)
        d[kk * PANEL + j] = 0.f;
    }
  }
}

/* acc[r][j] = sum_k A(row r, k) * panel(k, j) for MR rows. */
static void
micro_kernel (int64_t k, const float *const *arow, int64_t a_cs,
    const float *bp, float acc[MR][PANEL])
{
  float c0[PANEL] = { 0 }, c1[PANEL] = { 0 }, c2[PANEL] = { 0 },
      c3[PANEL] = { 0 };
  const float *a0 = arow[0], *a1 = arow[1], *a2 = arow[2], *a3 = arow[3];

  for (int64_t kk = 0; kk < k; kk++) {
    const float *b = bp + kk * PANEL;
    float x0 = a0[kk * a_cs], x1 = a1[kk * a_cs], x2 = a2[kk * a_cs],
        x3 = a3[kk * a_cs];
    for (int j = 0; j < PANEL; j++) {
      c0[j] += x0 * b[j];
      c1[j] += x1 * b[j];
      c2[j] += x2 * b[j];
      c3[j] += x3 * b[j];
    }
  }
  memcpy (acc[0], c0, sizeof (c0));
  memcpy (acc[1], c1, sizeof (c1));
  memcpy (acc[2], c2, sizeof (c2));
  memcpy (acc[3], c3, sizeof (c3));
}

/* Rows [i0, i1) x panels [p0, p1) of one job. */
static void
gemm_unit (const GemmDims *g, const GemmJob *job, int64_t i0, int64_t i1,
    int64_t p0, int64_t p1)
{
  float acc[MR][PANEL];

  for (int64_t i = i0; i < i1; i += MR) {
    int rows = (int) MIN (MR, i1 - i);
    const float *arow[MR];
    for (int r = 0; r < MR; r++)
      arow[r] = job->a + (i + MIN (r, rows - 1)) * job->a_rs;
    for (int64_t p = p0; p < p1; p++) {
      int64_t j0 = p * PANEL, nc = MIN (PANEL, g->n - j0);
      micro_kernel (g->k, arow, job->a_cs, job->bpack + p * g->k * PANEL, acc);
      for (int r = 0; r < rows; r++) {
        float *y = job->y + (i + r) * job->ldy + j0;
        if (g->accumulate)
          for (int64_t j = 0; j < nc; j++)
            y[j] += g->alpha * acc[r][j];
        else
          for (int64_t j = 0; j < nc; j++)
            y[j] = g->alpha * acc[r][j];
      }
    }
  }
}

/* Runs @n_jobs GEMMs of the same dims, all work units in parallel. */
static void
gemm_run (const GemmDims *g, const GemmJob *jobs, int64_t n_jobs)
{
  int64_t np = (g->n + PANEL - 1) / PANEL;
  int64_t bm = (g->m + BLOCK_M - 1) / BLOCK_M;
  int64_t bp = (np + BLOCK_P - 1) / BLOCK_P;
  int64_t units = n_jobs * bm * bp;
  gboolean par = units > 1 && g->m * g->n * g->k * n_jobs > 32768;

  if (g->m == 0 || g->n == 0)
    return;
#pragma omp parallel for schedule(dynamic, 1) if (par)
  for (int64_t u = 0; u < units; u++) {
    int64_t jb = u / (bm * bp), r = u % (bm * bp);
    int64_t ib = r / bp, pb = r % bp;
    gemm_unit (g, &jobs[jb], ib * BLOCK_M, MIN (g->m, (ib + 1) * BLOCK_M),
        pb * BLOCK_P, MIN (np, (pb + 1) * BLOCK_P));
  }
}

/* ---- small m: no packing, B streamed directly ---- */

#define SMALL_M 4            /* up to this many rows skip packing */
#define SMALL_NB 256         /* columns of one work unit */

static float
dot_f32 (const float *a, int64_t a_s, const float *b, int64_t b_s, int64_t k)
{
  float lane[8] = { 0 }, s = 0.f;
  int64_t kk = 0;

  if (a_s == 1 && b_s == 1)
    for (; kk + 8 <= k; kk += 8)
      for (int l = 0; l < 8; l++)
        lane[l] += a[kk + l] * b[kk + l];
  for (; kk < k; kk++)
    s += a[kk * a_s] * b[kk * b_s];
  for (int l = 0; l < 8; l++)
    s += lane[l];
  return s;
}

static void
gemm_small_unit (const GemmDims *g, const GemmJob *job, int64_t j0, int64_t j1)
{
  float acc[SMALL_NB];
  int64_t nc = j1 - j0;

  for (int64_t i = 0; i < g->m; i++) {
    const float *a = job->a + i * job->a_rs;
    float *y = job->y + i * job->ldy + j0;
    if (job->b_cs == 1) {
      memset (acc, 0, sizeof (acc));
      for (int64_t kk = 0; kk < g->k; kk++) {
        float av = a[kk * job->a_cs];
        const float *b = job->b + kk * job->b_rs + j0;
        for (int64_t j = 0; j < nc; j++)
          acc[j] += av * b[j];
      }
    } else {
      for (int64_t j = 0; j < nc; j++)
        acc[j] = dot_f32 (a, job->a_cs, job->b + (j0 + j) * job->b_cs,
            job->b_rs, g->k);
    }
    for (int64_t j = 0; j < nc; j++)
      y[j] = (g->accumulate ? y[j] : 0.f) + g->alpha * acc[j];
  }
}

static void
gemm_run_small (const GemmDims *g, const GemmJob *jobs, int64_t n_jobs)
{
  int64_t bn = (g->n + SMALL_NB - 1) / SMALL_NB, units = n_jobs * bn;
  gboolean par = units > 1 && g->m * g->n * g->k * n_jobs > 32768;

#pragma omp parallel for schedule(static) if (par)
  for (int64_t u = 0; u < units; u++) {
    int64_t jb = u % bn;
    gemm_small_unit (g, &jobs[u / bn], jb * SMALL_NB,
        MIN (g->n, (jb + 1) * SMALL_NB));
  }
}

/* Packed size in floats of a k x n B. */
static gboolean
pack_size (int64_t k, int64_t n, int64_t count, gsize *out)
{
  int64_t np = (n + PANEL - 1) / PANEL;

  if (k > 0 && np > G_MAXINT64 / PANEL / k / MAX (count, 1))
    return FALSE;
  *out = (gsize) (MAX (count, 1) * MAX (np * k * PANEL, 1));
  return *out <= G_MAXSIZE / sizeof (float);
}

gboolean
clinfer_op_gemm_f32 (const ClinferNode *node, int64_t m, int64_t n,
    int64_t k, float alpha, const float *a, int64_t a_rs, int64_t a_cs,
    const float *b, int64_t b_rs, int64_t b_cs, float *y, int64_t ldy,
    gboolean accumulate, GError **error)
{
  GemmDims dims = { m, n, k, alpha, accumulate };
  GemmJob job = { a, a_rs, a_cs, NULL, y, ldy, b, b_rs, b_cs };
  g_autofree float *pack = NULL;
  gsize psize;

  if (m == 0 || n == 0)
    return TRUE;
  if (m <= SMALL_M) {
    gemm_run_small (&dims, &job, 1);
    return TRUE;
  }
  if (!pack_size (k, n, 1, &psize)
      || (pack = g_try_new (float, psize)) == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: cannot allocate the packed B operand", clinfer_node_label (node));
    return FALSE;
  }
  pack_b (b, b_rs, b_cs, k, n, pack);
  job.bpack = pack;
  gemm_run (&dims, &job, 1);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Generic (f64 and integer) GEMM: Y = alpha * A B (+ Y)              */

#define DEFINE_GEMM_REF(NAME, T, ACC)                                        \
static void                                                                  \
NAME (int64_t m, int64_t n, int64_t k, double alpha, const T *a, int64_t a_rs, \
    int64_t a_cs, const T *b, int64_t b_rs, int64_t b_cs, T *y,              \
    gboolean accumulate)                                                     \
{                                                                            \
  _Pragma ("omp parallel for schedule(static) if (m * n * k > 32768)")       \
  for (int64_t i = 0; i < m; i++)                                            \
    for (int64_t j = 0; j < n; j++) {                                        \
      ACC s = 0;                                                             \
      for (int64_t kk = 0; kk < k; kk++)                                     \
        s += (ACC) a[i * a_rs + kk * a_cs] * (ACC) b[kk * b_rs + j * b_cs];   \
      if (alpha != 1.0)                                                      \
        s = (ACC) ((double) s * alpha);                                      \
      y[i * n + j] = accumulate ? (T) (y[i * n + j] + s) : (T) s;            \
    }                                                                        \
}

DEFINE_GEMM_REF (gemm_ref_f64, double, double)
DEFINE_GEMM_REF (gemm_ref_i32, int32_t, int64_t)
DEFINE_GEMM_REF (gemm_ref_i64, int64_t, int64_t)
DEFINE_GEMM_REF (gemm_ref_u32, uint32_t, uint64_t)
DEFINE_GEMM_REF (gemm_ref_u64, uint64_t, uint64_t)

/* One non-f32 GEMM on raw pointers; @type selects the kernel. */
static void
gemm_ref (ClinferElementType type, int64_t m, int64_t n, int64_t k,
    double alpha, gconstpointer a, int64_t a_rs, int64_t a_cs, gconstpointer b,
    int64_t b_rs, int64_t b_cs, gpointer y, gboolean accumulate)
{
  switch (type) {
#define CASE(TY, FN, T) \
    case TY:                                                               \
      FN (m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, y, accumulate);     \
      break;
    CASE (CLINFER_TYPE_F64, gemm_ref_f64, double)
    CASE (CLINFER_TYPE_I32, gemm_ref_i32, int32_t)
    CASE (CLINFER_TYPE_I64, gemm_ref_i64, int64_t)
    CASE (CLINFER_TYPE_U32, gemm_ref_u32, uint32_t)
    CASE (CLINFER_TYPE_U64, gemm_ref_u64, uint64_t)
#undef CASE
    default:
      break;
  }
}

/* ---------------------------------------------------------------- */
/* MatMul                                                            */

/* Batch geometry: A promoted to [.., m, k], B to [.., k, n]. */
typedef struct {
  int64_t m, n, k;
  int n_batch_dims;
  int64_t batch_dims[CLINFER_MAX_RANK];
  int64_t sa[CLINFER_MAX_RANK], sb[CLINFER_MAX_RANK];  /* batch strides */
  int64_t n_batch;
} MmGeom;

/* Output shape of MatMul for @a and @b (dims may be dynamic). */
static gboolean
matmul_shape (const ClinferNode *node, const ClinferShape *a,
    const ClinferShape *b, ClinferShape *out, GError **error)
{
  ClinferShape ba = { 0 }, bb = { 0 }, bo;
  int64_t ka, kb;

  if (a->rank < 1 || b->rank < 1) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: inputs must have rank >= 1, got ranks %d and %d",
        clinfer_node_label (node), a->rank, b->rank);
    return FALSE;
  }
  ka = a->dims[a->rank - 1];
  kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
  if (ka != kb && ka != CLINFER_DIM_DYNAMIC && kb != CLINFER_DIM_DYNAMIC) {
    g_autofree char *sa = clinfer_shape_to_string (a);
    g_autofree char *sb = clinfer_shape_to_string (b);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: inner dimensions differ: A is %s, B is %s (%" G_GINT64_FORMAT
        " vs %" G_GINT64_FORMAT ")", clinfer_node_label (node), sa, sb, ka, kb);
    return FALSE;
  }
  ba.rank = MAX (a->rank - 2, 0);
  memcpy (ba.dims, a->dims, ba.rank * sizeof (int64_t));
  bb.rank = MAX (b->rank - 2, 0);
  memcpy (bb.dims, b->dims, bb.rank * sizeof (int64_t));
  if (!clinfer_shape_broadcast (&ba, &bb, &bo, error)) {
    g_prefix_error (error, "%s: batch dims: ", clinfer_node_label (node));
    return FALSE;
  }
  if (bo.rank + (a->rank > 1) + (b->rank > 1) > CLINFER_MAX_RANK) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: output rank exceeds %d", clinfer_node_label (node),
        CLINFER_MAX_RANK);
    return FALSE;
  }
  *out = bo;
  if (a->rank > 1)
    out->dims[out->rank++] = a->dims[a->rank - 2];
  if (b->rank > 1)
    out->dims[out->rank++] = b->dims[b->rank - 1];
  return TRUE;
}

static gboolean
infer_matmul (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !check_types (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  if (in[0].shape.rank < 0 || in[1].shape.rank < 0)
    return TRUE;
  return matmul_shape (node, &in[0].shape, &in[1].shape, &out[0].shape, error);
}

static void
mm_geom (const ClinferShape *a, const ClinferShape *b, MmGeom *g)
{
  int nb = MAX (a->rank, b->rank) - 2;
  int64_t sa = 1, sb = 1;

  memset (g, 0, sizeof (*g));
  g->m = a->rank > 1 ? a->dims[a->rank - 2] : 1;
  g->k = a->dims[a->rank - 1];
  g->n = b->rank > 1 ? b->dims[b->rank - 1] : 1;
  g->n_batch_dims = MAX (nb, 0);
  g->n_batch = 1;
  for (int i = g->n_batch_dims - 1; i >= 0; i--) {
    int ia = i - (g->n_batch_dims - (a->rank - 2));
    int ib = i - (g->n_batch_dims - (b->rank - 2));
    int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
    g->batch_dims[i] = MAX (da, db);
    if (da == 0 || db == 0)
      g->batch_dims[i] = 0;
    g->sa[i] = da == 1 ? 0 : sa;
    g->sb[i] = db == 1 ? 0 : sb;
    sa *= da;
    sb *= db;
    g->n_batch *= g->batch_dims[i];
  }
}

/* Batch @bi's matrix indices in A and B. */
static void
mm_batch (const MmGeom *g, int64_t bi, int64_t *ia, int64_t *ib)
{
  *ia = 0;
  *ib = 0;
  for (int d = g->n_batch_dims - 1; d >= 0; d--) {
    int64_t i = bi % g->batch_dims[d];
    bi /= g->batch_dims[d];
    *ia += i * g->sa[d];
    *ib += i * g->sb[d];
  }
}

static gboolean
matmul_f32 (const ClinferNode *node, const MmGeom *g, const float *a,
    const float *b, float *y, GError **error)
{
  int64_t nb_b = 1;
  gsize psize;
  g_autofree float *pack = NULL;
  g_autofree GemmJob *jobs = NULL;
  GemmDims dims = { g->m, g->n, g->k, 1.f, FALSE };

  if (g->m <= SMALL_M) {
    if ((jobs = g_try_new0 (GemmJob, MAX (g->n_batch, 1))) == NULL) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
          "%s: out of memory", clinfer_node_label (node));
      return FALSE;
    }
    for (int64_t bi = 0; bi < g->n_batch; bi++) {
      int64_t ia, ib;
      mm_batch (g, bi, &ia, &ib);
      jobs[bi] = (GemmJob) { a + ia * g->m * g->k, g->k, 1, NULL,
        y + bi * g->m * g->n, g->n, b + ib * g->k * g->n, g->n, 1 };
    }
    gemm_run_small (&dims, jobs, g->n_batch);
    return TRUE;
  }
  for (int d = 0; d < g->n_batch_dims; d++)
    if (g->sb[d])
      nb_b *= g->batch_dims[d];
  if (!pack_size (g->k, g->n, nb_b, &psize)
      || (pack = g_try_new (float, psize)) == NULL
      || (jobs = g_try_new0 (GemmJob, MAX (g->n_batch, 1))) == NULL) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: cannot allocate the packed B operand", clinfer_node_label (node));
    return FALSE;
  }
  /* B matrices are packed once each (broadcast ones are shared). */
  for (int64_t i = 0; i < nb_b; i++)
    pack_b (b + i * g->k * g->n, g->n, 1, g->k, g->n,
        pack + i * ((g->n + PANEL - 1) / PANEL) * g->k * PANEL);
  for (int64_t bi = 0; bi < g->n_batch; bi++) {
    int64_t ia, ib;
    mm_batch (g, bi, &ia, &ib);
    jobs[bi].a = a + ia * g->m * g->k;
    jobs[bi].a_rs = g->k;
    jobs[bi].a_cs = 1;
    jobs[bi].bpack = pack + ib * ((g->n + PANEL - 1) / PANEL) * g->k * PANEL;
    jobs[bi].y = y + bi * g->m * g->n;
    jobs[bi].ldy = g->n;
  }
  gemm_run (&dims, jobs, g->n_batch);
  return TRUE;
}

static gboolean
eval_matmul (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  gsize es = clinfer_element_type_size (t);
  const guint8 *a, *b;
  guint8 *y;
  MmGeom g;

  if (clinfer_op_type_is_half (t))
    return clinfer_op_eval_via_f32 (node, in, out, eval_matmul, error);
  mm_geom (clinfer_tensor_get_shape (in[0]), clinfer_tensor_get_shape (in[1]),
      &g);
  if (g.n_batch == 0 || g.m == 0 || g.n == 0)
    return TRUE;
  a = clinfer_tensor_get_const_data (in[0]);
  b = clinfer_tensor_get_const_data (in[1]);
  y = clinfer_tensor_get_data (out[0]);
  if (t == CLINFER_TYPE_F32)
    return matmul_f32 (node, &g, (const float *) a, (const float *) b,
        (float *) y, error);
  for (int64_t bi = 0; bi < g.n_batch; bi++) {
    int64_t ia, ib;
    mm_batch (&g, bi, &ia, &ib);
    gemm_ref (t, g.m, g.n, g.k, 1.0, a + ia * g.m * g.k * es, g.k, 1,
        b + ib * g.k * g.n * es, g.n, 1, y + bi * g.m * g.n * es, FALSE);
  }
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Gemm                                                              */

typedef struct {
  float alpha, beta;
  gboolean trans_a, trans_b;
} GemmData;

static gboolean
prepare_gemm (ClinferNode *node, GError **error)
{
  g_autofree GemmData *d = g_new0 (GemmData, 1);
  int64_t ta = 0, tb = 0;

  if (!clinfer_node_attr_float (node, "alpha", 1.f, &d->alpha, error)
      || !clinfer_node_attr_float (node, "beta", 1.f, &d->beta, error)
      || !clinfer_node_attr_int (node, "transA", 0, &ta, error)
      || !clinfer_node_attr_int (node, "transB", 0, &tb, error))
    return FALSE;
  /* The legacy (opset < 7) "broadcast" attribute only allowed what
   * unidirectional broadcasting allows now: it is accepted and ignored. */
  if (node->opset > 0 && node->opset < 11
      && clinfer_node_n_present_inputs (node) < 3) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
        "%s: input C is required before opset 11", clinfer_node_label (node));
    return FALSE;
  }
  d->trans_a = ta != 0;
  d->trans_b = tb != 0;
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* C must broadcast to [m, n] one way (its dims 1 or equal, rank <= 2). */
static gboolean
check_gemm_c (const ClinferNode *node, const ClinferShape *c, int64_t m,
    int64_t n, GError **error)
{
  int64_t want[2] = { m, n };
  gboolean ok = c->rank <= 2;

  for (int i = 0; ok && i < c->rank; i++) {
    int64_t cd = c->dims[i], w = want[2 - c->rank + i];
    ok = cd == 1 || cd == w || cd == CLINFER_DIM_DYNAMIC
        || w == CLINFER_DIM_DYNAMIC;
  }
  if (!ok) {
    g_autofree char *s = clinfer_shape_to_string (c);
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: C of shape %s does not broadcast to the %" G_GINT64_FORMAT "x%"
        G_GINT64_FORMAT " output", clinfer_node_label (node), s, m, n);
  }
  return ok;
}

static gboolean
infer_gemm (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const GemmData *d = node->op_data;
  const ClinferShape *a = &in[0].shape, *b = &in[1].shape;
  int64_t m, n, ka, kb;

  if (!clinfer_op_require_input (node, in, 0, error)
      || !clinfer_op_require_input (node, in, 1, error)
      || !check_types (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  if (a->rank < 0 || b->rank < 0)
    return TRUE;
  if (a->rank != 2 || b->rank != 2) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: A and B must be 2-D, got ranks %d and %d",
        clinfer_node_label (node), a->rank, b->rank);
    return FALSE;
  }
  m = a->dims[d->trans_a ? 1 : 0];
  ka = a->dims[d->trans_a ? 0 : 1];
  kb = b->dims[d->trans_b ? 1 : 0];
  n = b->dims[d->trans_b ? 0 : 1];
  if (ka != kb && ka != CLINFER_DIM_DYNAMIC && kb != CLINFER_DIM_DYNAMIC) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
        "%s: inner dimensions differ: %" G_GINT64_FORMAT " (A%s) vs %"
        G_GINT64_FORMAT " (B%s)", clinfer_node_label (node), ka,
        d->trans_a ? "^T" : "", kb, d->trans_b ? "^T" : "");
    return FALSE;
  }
  if (node->n_inputs > 2 && in[2].present && in[2].shape.rank >= 0
      && !check_gemm_c (node, &in[2].shape, m, n, error))
    return FALSE;
  out[0].shape.rank = 2;
  out[0].shape.dims[0] = m;
  out[0].shape.dims[1] = n;
  return TRUE;
}

/* Y = beta * C broadcast to [m, n] (in the output's type). */
static void
gemm_fill_c (const ClinferTensor *c, float beta, ClinferTensor *y, int64_t m,
    int64_t n)
{
  const ClinferShape *cs = clinfer_tensor_get_shape (c);
  ClinferElementType t = clinfer_tensor_get_element_type (y);
  int64_t rs = cs->rank == 2 && cs->dims[0] != 1 ? cs->dims[1] : 0;
  int64_t cstep = cs->rank >= 1 && cs->dims[cs->rank - 1] != 1 ? 1 : 0;
  gpointer yd = clinfer_tensor_get_data (y);

  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t src = i * rs + j * cstep;
      if (t == CLINFER_TYPE_F32)
        ((float *) yd)[i * n + j] = beta
            * ((const float *) clinfer_tensor_get_const_data (c))[src];
      else if (t == CLINFER_TYPE_F64)
        ((double *) yd)[i * n + j] = beta
            * ((const double *) clinfer_tensor_get_const_data (c))[src];
      else {
        double v = beta * clinfer_tensor_get_as_double (c, src);
        switch (t) {
          case CLINFER_TYPE_I32:
            ((int32_t *) yd)[i * n + j] = (int32_t) v;
            break;
          case CLINFER_TYPE_U32:
            ((uint32_t *) yd)[i * n + j] = (uint32_t) v;
            break;
          case CLINFER_TYPE_U64:
            ((uint64_t *) yd)[i * n + j] = (uint64_t) v;
            break;
          default:
            ((int64_t *) yd)[i * n + j] = beta == 1.f
                ? clinfer_tensor_get_as_int64 (c, src) : (int64_t) v;
            break;
        }
      }
    }
}

static gboolean
eval_gemm (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  const GemmData *d = node->op_data;
  ClinferElementType t = clinfer_tensor_get_element_type (in[0]);
  const ClinferShape *as = clinfer_tensor_get_shape (in[0]);
  const ClinferShape *bs = clinfer_tensor_get_shape (in[1]);
  const ClinferTensor *c = node->n_inputs > 2 ? in[2] : NULL;
  int64_t m = as->dims[d->trans_a ? 1 : 0], k = as->dims[d->trans_a ? 0 : 1];
  int64_t n = bs->dims[d->trans_b ? 0 : 1];
  int64_t a_rs = d->trans_a ? 1 : k, a_cs = d->trans_a ? m : 1;
  int64_t b_rs = d->trans_b ? 1 : n, b_cs = d->trans_b ? k : 1;
  gboolean acc = c != NULL && d->beta != 0.f;

  if (clinfer_op_type_is_half (t))
    return clinfer_op_eval_via_f32 (node, in, out, eval_gemm, error);
  if (m == 0 || n == 0)
    return TRUE;
  if (acc)
    gemm_fill_c (c, d->beta, out[0], m, n);
  if (t == CLINFER_TYPE_F32)
    return clinfer_op_gemm_f32 (node, m, n, k, d->alpha,
        clinfer_tensor_get_const_data (in[0]), a_rs, a_cs,
        clinfer_tensor_get_const_data (in[1]), b_rs, b_cs,
        clinfer_tensor_get_data (out[0]), n, acc, error);
  gemm_ref (t, m, n, k, d->alpha, clinfer_tensor_get_const_data (in[0]), a_rs,
      a_cs, clinfer_tensor_get_const_data (in[1]), b_rs, b_cs,
      clinfer_tensor_get_data (out[0]), acc);
  return TRUE;
}

/* ---------------------------------------------------------------- */
/* Einsum                                                            */

#define EIN_MAX_IN 16        /* operands */
#define EIN_MAX_IDS (CLINFER_MAX_RANK + 52)  /* ellipsis dims + letters */
#define EIN_MAX_WORK ((int64_t) 1 << 50)     /* summed terms per output */

/* One term of the equation: letters (as chars) with the ellipsis, when
 * present, at position @ell (-1 when absent). */
typedef struct {
  int n;
  char l[CLINFER_MAX_RANK];
  int ell;
} EinTerm;

typedef struct {
  char *equation;
  guint n_in;
  EinTerm in[EIN_MAX_IN];
  EinTerm out;
  gboolean explicit_out;
} EinsumData;

/* Index space of one evaluation: ellipsis dims are ids 0 .. ell_rank - 1,
 * letters follow. strides[i * EIN_MAX_IDS + id] is input i's element
 * stride along id (summed over repeated letters; 0 when broadcast). */
typedef struct {
  int ell_rank, n_ids, n_out_ids, n_sum_ids;
  int64_t ext[EIN_MAX_IDS];
  int out_ids[EIN_MAX_IDS], sum_ids[EIN_MAX_IDS];
  int64_t strides[EIN_MAX_IN * EIN_MAX_IDS];
  ClinferShape out_shape;
} EinPlan;

static void
einsum_data_free (gpointer p)
{
  EinsumData *d = p;

  if (d)
    g_free (d->equation);
  g_free (d);
}

static gboolean
ein_fail (const ClinferNode *node, const char *eq, const char *why,
    GError **error)
{
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_INVALID_ARGUMENT,
      "%s: invalid equation '%s': %s", clinfer_node_label (node), eq, why);
  return FALSE;
}

/* Parses one term from @s up to @end. */
static gboolean
ein_parse_term (const ClinferNode *node, const char *eq, const char *s,
    const char *end, EinTerm *t, GError **error)
{
  memset (t, 0, sizeof (*t));
  t->ell = -1;
  while (s < end) {
    if (*s == '.') {
      if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->ell >= 0)
        return ein_fail (node, eq, "misplaced '.' (only one '...' per term)",
            error);
      t->ell = t->n;
      s += 3;
      continue;
    }
    if (!g_ascii_isalpha (*s))
      return ein_fail (node, eq, "labels must be letters", error);
    if (t->n >= CLINFER_MAX_RANK)
      return ein_fail (node, eq, "too many labels in one term", error);
    t->l[t->n++] = *s++;
  }
  return TRUE;
}

static gboolean
prepare_einsum (ClinferNode *node, GError **error)
{
  g_autofree EinsumData *d = g_new0 (EinsumData, 1);
  g_autofree char *eq = NULL;
  const char *raw, *arrow, *s, *lhs_end;
  guint n_in = clinfer_node_n_present_inputs (node);
  int j = 0;

  if (!clinfer_node_attr_string (node, "equation", NULL, &raw, error))
    return FALSE;
  if (raw == NULL)
    return ein_fail (node, "", "attribute 'equation' is required", error);
  eq = g_strdup (raw);
  for (int i = 0; eq[i]; i++)  /* drop spaces */
    if (!g_ascii_isspace (eq[i]))
      eq[j++] = eq[i];
  eq[j] = '\0';
  if (n_in > EIN_MAX_IN || n_in != node->n_inputs) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "%s: %u operands (all present, at most %d are supported)",
        clinfer_node_label (node), node->n_inputs, EIN_MAX_IN);
    return FALSE;
  }
  arrow = strstr (eq, "->");
  lhs_end = arrow ? arrow : eq + strlen (eq);
  s = eq;
  for (guint i = 0; i < n_in; i++) {
    const char *e = memchr (s, ',', lhs_end - s);
    if (e == NULL)
      e = lhs_end;
    if ((i + 1 < n_in) != (e < lhs_end))
      return ein_fail (node, raw, "the number of terms differs from the "
          "number of inputs", error);
    if (!ein_parse_term (node, raw, s, e, &d->in[i], error))
      return FALSE;
    s = e + 1;
  }
  d->n_in = n_in;
  d->explicit_out = arrow != NULL;
  if (arrow) {
    if (strstr (arrow + 2, "->") || strchr (arrow + 2, ','))
      return ein_fail (node, raw, "one output term expected", error);
    if (!ein_parse_term (node, raw, arrow + 2, arrow + strlen (arrow), &d->out,
            error))
      return FALSE;
  }
  /* Last: @d is a plain g_free()d struct until op_data owns it. */
  d->equation = g_strdup (raw);
  node->op_data = g_steal_pointer (&d);
  return TRUE;
}

/* Implicit output: ellipsis first, then letters used exactly once, in
 * ASCII order (like numpy). */
static void
ein_implicit_out (const EinsumData *d, EinTerm *out)
{
  int count[128] = { 0 };

  memset (out, 0, sizeof (*out));
  out->ell = -1;
  for (guint i = 0; i < d->n_in; i++) {
    if (d->in[i].ell >= 0)
      out->ell = 0;
    for (int k = 0; k < d->in[i].n; k++)
      count[(guchar) d->in[i].l[k]]++;
  }
  for (int c = 0; c < 128 && out->n < CLINFER_MAX_RANK; c++)
    if (count[c] == 1)
      out->l[out->n++] = (char) c;
}

static int
ein_letter_id (const EinPlan *p, char c)
{
  return p->ell_rank + (g_ascii_islower (c) ? c - 'a' : 26 + c - 'A');
}

/* Merges extent @e into id @id; ellipsis ids (@broadcastable) accept 1
 * against any extent, dynamic extents never conflict. */
static gboolean
ein_set_ext (const ClinferNode *node, EinPlan *p, int id, int64_t e,
    gboolean broadcastable, GError **error)
{
  int64_t *x = &p->ext[id];

  if (*x == -2 || (*x == CLINFER_DIM_DYNAMIC && !(broadcastable && e == 1))
      || (broadcastable && *x == 1 && e != CLINFER_DIM_DYNAMIC)) {
    *x = e;
    return TRUE;
  }
  if (e == CLINFER_DIM_DYNAMIC || e == *x || (broadcastable && e == 1)
      || *x == CLINFER_DIM_DYNAMIC)
    return TRUE;
  g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
      "%s: dims labelled alike disagree (%" G_GINT64_FORMAT " vs %"
      G_GINT64_FORMAT ")", clinfer_node_label (node), *x, e);
  return FALSE;
}

/* Index of each dim of input @i in the id space. */
static void
ein_dim_ids (const EinPlan *p, const EinTerm *t, int rank, int *ids)
{
  int er = t->ell >= 0 ? rank - t->n : 0, pos = 0;

  for (int k = 0; k <= t->n; k++) {
    if (k == t->ell)
      for (int e = 0; e < er; e++)
        ids[pos++] = p->ell_rank - er + e;
    if (k < t->n)
      ids[pos++] = ein_letter_id (p, t->l[k]);
  }
}

static gboolean
ein_check_ranks (const ClinferNode *node, const EinsumData *d,
    const ClinferShape *const *shapes, EinPlan *p, GError **error)
{
  for (guint i = 0; i < d->n_in; i++) {
    const EinTerm *t = &d->in[i];
    int r = shapes[i]->rank;
    if (r < t->n || (t->ell < 0 && r != t->n)) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_SHAPE_MISMATCH,
          "%s: input %u has rank %d, but its term has %d labels%s",
          clinfer_node_label (node), i, r, t->n,
          t->ell >= 0 ? " and '...'" : "");
      return FALSE;
    }
    if (t->ell >= 0)
      p->ell_rank = MAX (p->ell_rank, r - t->n);
  }
  return TRUE;
}

/* Builds the plan for input shapes @shapes (dims may be dynamic). */
static gboolean
ein_plan (const ClinferNode *node, const ClinferShape *const *shapes,
    EinPlan *p, GError **error)
{
  const EinsumData *d = node->op_data;
  EinTerm out;
  gboolean used[EIN_MAX_IDS] = { FALSE }, in_out[EIN_MAX_IDS] = { FALSE };
  int ids[CLINFER_MAX_RANK];

  memset (p, 0, sizeof (*p));
  if (!ein_check_ranks (node, d, shapes, p, error))
    return FALSE;
  p->n_ids = p->ell_rank + 52;
  for (int id = 0; id < p->n_ids; id++)
    p->ext[id] = -2;         /* unset */
  for (guint i = 0; i < d->n_in; i++) {
    int64_t st[CLINFER_MAX_RANK];
    clinfer_shape_elem_strides (shapes[i], st);
    ein_dim_ids (p, &d->in[i], shapes[i]->rank, ids);
    for (int k = 0; k < shapes[i]->rank; k++) {
      int64_t e = shapes[i]->dims[k];
      if (!ein_set_ext (node, p, ids[k], e, ids[k] < p->ell_rank, error))
        return FALSE;
      used[ids[k]] = TRUE;
      if (!(ids[k] < p->ell_rank && e == 1))
        p->strides[i * EIN_MAX_IDS + ids[k]] += st[k];
    }
  }
  for (int id = 0; id < p->ell_rank; id++)
    if (p->ext[id] == -2) {
      p->ext[id] = 1;
      used[id] = TRUE;
    }
  if (d->explicit_out)
    out = d->out;
  else
    ein_implicit_out (d, &out);
  p->n_out_ids = out.n + (out.ell >= 0 ? p->ell_rank : 0);
  if (p->n_out_ids > CLINFER_MAX_RANK)
    return ein_fail (node, d->equation, "the output has too many dims", error);
  ein_dim_ids (p, &out, p->n_out_ids, ids);
  for (int k = 0; k < p->n_out_ids; k++) {
    if (!used[ids[k]] || in_out[ids[k]])
      return ein_fail (node, d->equation, "an output label is repeated or "
          "absent from the inputs", error);
    in_out[ids[k]] = TRUE;
    p->out_ids[k] = ids[k];
    p->out_shape.dims[k] = p->ext[ids[k]];
  }
  p->out_shape.rank = p->n_out_ids;
  for (int id = 0; id < p->n_ids; id++)
    if (used[id] && !in_out[id])
      p->sum_ids[p->n_sum_ids++] = id;
  return TRUE;
}

static gboolean
infer_einsum (const ClinferNode *node, const ClinferValueInfo *in,
    ClinferValueInfo *out, GError **error)
{
  const ClinferShape *shapes[EIN_MAX_IN];
  g_autofree EinPlan *p = g_new0 (EinPlan, 1);

  for (guint i = 0; i < node->n_inputs; i++)
    if (!clinfer_op_require_input (node, in, i, error))
      return FALSE;
  if (!check_types (node, in, error))
    return FALSE;
  out[0].type = in[0].type;
  for (guint i = 0; i < node->n_inputs; i++) {
    if (in[i].shape.rank < 0)
      return TRUE;
    shapes[i] = &in[i].shape;
  }
  if (!ein_plan (node, shapes, p, error))
    return FALSE;
  out[0].shape = p->out_shape;
  return TRUE;
}

/* For every output element, sums the product of the operands over all
 * values of the summed ids (odometer, last id fastest). */
#define DEFINE_EINSUM(NAME, T, ACC)                                          \
static void                                                                  \
NAME (const EinPlan *p, guint n_in, const T *const *x, T *y, int64_t n_out,  \
    int64_t n_sum)                                                           \
{                                                                            \
  _Pragma ("omp parallel for schedule(static) if (n_out * n_sum > 32768)")   \
  for (int64_t o = 0; o < n_out; o++) {                                      \
    int64_t cur[EIN_MAX_IN] = { 0 }, idx[EIN_MAX_IDS] = { 0 }, r = o;        \
    ACC acc = 0;                                                             \
    for (int d = p->n_out_ids - 1; d >= 0; d--) {                            \
      int id = p->out_ids[d];                                                \
      int64_t v = r % p->ext[id];                                            \
      r /= p->ext[id];                                                       \
      for (guint i = 0; i < n_in; i++)                                       \
        cur[i] += v * p->strides[i * EIN_MAX_IDS + id];                      \
    }                                                                        \
    while (n_sum > 0) {                                                      \
      ACC prod = 1;                                                          \
      int d;                                                                 \
      for (guint i = 0; i < n_in; i++)                                       \
        prod *= (ACC) x[i][cur[i]];                                          \
      acc += prod;                                                           \
      for (d = p->n_sum_ids - 1; d >= 0; d--) {                              \
        int id = p->sum_ids[d];                                              \
        for (guint i = 0; i < n_in; i++)                                     \
          cur[i] += p->strides[i * EIN_MAX_IDS + id];                        \
        if (++idx[d] < p->ext[id])                                           \
          break;                                                             \
        for (guint i = 0; i < n_in; i++)                                     \
          cur[i] -= p->strides[i * EIN_MAX_IDS + id] * p->ext[id];           \
        idx[d] = 0;                                                          \
      }                                                                      \
      if (d < 0)                                                             \
        break;                                                               \
    }                                                                        \
    y[o] = (T) acc;                                                          \
  }                                                                          \
}

DEFINE_EINSUM (einsum_f32, float, double)
DEFINE_EINSUM (einsum_f64, double, double)
DEFINE_EINSUM (einsum_i32, int32_t, int64_t)
DEFINE_EINSUM (einsum_i64, int64_t, int64_t)
DEFINE_EINSUM (einsum_u32, uint32_t, uint64_t)
DEFINE_EINSUM (einsum_u64, uint64_t, uint64_t)

static gboolean
eval_einsum (const ClinferNode *node, ClinferTensor *const *in,
    ClinferTensor *const *out, GError **error)
{
  ClinferElementType t = clinfer_tensor_get_element_type (out[0]);
  const ClinferShape *shapes[EIN_MAX_IN];
  gconstpointer x[EIN_MAX_IN];
  g_autofree EinPlan *p = g_new0 (EinPlan, 1);
  gpointer y = clinfer_tensor_get_data (out[0]);
  int64_t n_out, n_sum = 1;

  if (clinfer_op_type_is_half (t))
    return clinfer_op_eval_via_f32 (node, in, out, eval_einsum, error);
  for (guint i = 0; i < node->n_inputs; i++) {
    shapes[i] = clinfer_tensor_get_shape (in[i]);
    x[i] = clinfer_tensor_get_const_data (in[i]);
  }
  if (!ein_plan (node, shapes, p, error))
    return FALSE;
  n_out = clinfer_tensor_get_n_elements (out[0]);
  for (int k = 0; k < p->n_sum_ids && n_sum > 0; k++) {
    int64_t e = p->ext[p->sum_ids[k]];
    if (e > 0 && n_sum > EIN_MAX_WORK / e) {
      g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
          "%s: the summation space is too large for the reference Einsum",
          clinfer_node_label (node));
      return FALSE;
    }
    n_sum *= e;
  }
  if (n_out == 0)
    return TRUE;
  switch (t) {
#define CASE(TY, FN, T) \
    case TY:                                                               \
      FN (p, node->n_inputs, (const T *const *) x, y, n_out, n_sum);        \
      break;
    CASE (CLINFER_TYPE_F32, einsum_f32, float)
    CASE (CLINFER_TYPE_F64, einsum_f64, double)
    CASE (CLINFER_TYPE_I32, einsum_i32, int32_t)
    CASE (CLINFER_TYPE_I64, einsum_i64, int64_t)
    CASE (CLINFER_TYPE_U32, einsum_u32, uint32_t)
    CASE (CLINFER_TYPE_U64, einsum_u64, uint64_t)
#undef CASE
    default:
      return clinfer_op_unsupported_type (node, t, error);
  }
  return TRUE;
}

const ClinferOpDef clinfer_ops_matmul[] = {
  { "MatMul", "", 1, 0, 2, 2, 1, 1, 0, NULL, NULL, infer_matmul, eval_matmul },
  { "Gemm", "", 1, 0, 2, 3, 1, 1, 0, prepare_gemm, g_free, infer_gemm,
    eval_gemm },
  { "Einsum", "", 12, 0, 1, CLINFER_VARIADIC, 1, 1, 0, prepare_einsum,
    einsum_data_free, infer_einsum, eval_einsum },
  { NULL }
};
