/* clinfer — OpenCL MatMul (numpy batch broadcasting, 1-D operands) and
 * Gemm (transA/transB, alpha, beta, C broadcast) on kernels/matmul.cl,
 * f32/f16 computed in float. */
#include "devices/opencl/ocl-internal.h"

static gboolean
float_inputs (const ClinferNode *node, const char **reason)
{
  ClinferElementType t = clinfer_ocl_in_type (node, 0);

  if (!clinfer_ocl_float_type (t)) {
    *reason = "element type is not f32 or f16";
    return FALSE;
  }
  for (guint i = 1; i < node->n_inputs; i++)
    if (node->inputs[i].node && clinfer_ocl_in_type (node, i) != t) {
      *reason = "inputs of mixed element types";
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  int M, N, K, a_sm, a_sk, b_sk, b_sn, c_sm, c_sn, has_c;
  float alpha, beta;
  int brank, bdims[8], ab[8], bb[8];
  int64_t batch;
} MatmulArgs;

static gboolean
launch (OclBuilder *b, const ClinferNode *node, const MatmulArgs *m,
    GError **error)
{
  /* GPU shapes: 16x16 tiles in local memory when the output has whole
   * tiles' worth of rows and columns (a matrix-vector product would leave
   * 15 of 16 work-items idle). */
  gboolean tiled = b->dev->core->gpu_shaped && m->M >= 16 && m->N >= 16
      && clinfer_ocl_core_can_tile16 (b->dev->core);
  OclLaunch *l = clinfer_ocl_launch_new (b, "matmul",
      clinfer_ocl_data_options (clinfer_ocl_in_type (node, 0)),
      tiled ? "matmul_tiled" : "matmul", error);

  if (l == NULL)
    return FALSE;
  clinfer_ocl_arg_input (l, 0);
  clinfer_ocl_arg_input (l, 1);
  clinfer_ocl_arg_input (l, 2);
  clinfer_ocl_arg_output (l, 0);
  clinfer_ocl_arg_int (l, m->M);
  clinfer_ocl_arg_int (l, m->N);
  clinfer_ocl_arg_int (l, m->K);
  clinfer_ocl_arg_int (l, m->a_sm);
  clinfer_ocl_arg_int (l, m->a_sk);
  clinfer_ocl_arg_int (l, m->b_sk);
  clinfer_ocl_arg_int (l, m->b_sn);
  clinfer_ocl_arg_int (l, m->c_sm);
  clinfer_ocl_arg_int (l, m->c_sn);
  clinfer_ocl_arg_int (l, m->has_c);
  clinfer_ocl_arg_float (l, m->alpha);
  clinfer_ocl_arg_float (l, m->beta);
  clinfer_ocl_arg_int (l, MAX (m->brank, 1));
  clinfer_ocl_arg_int8 (l, m->bdims, 8);
  clinfer_ocl_arg_int8 (l, m->ab, 8);
  clinfer_ocl_arg_int8 (l, m->bb, 8);
  if (tiled)
    clinfer_ocl_launch_tiles16 (l, m->N, m->M, m->batch);
  else
    clinfer_ocl_launch_set_global (l, 3, m->N, m->M, m->batch);
  return TRUE;
}

/* ---- MatMul ---- */

gboolean
clinfer_ocl_matmul_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  ClinferPortDesc *a = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *b = clinfer_node_input_desc (node, 1);

  if (a == NULL || b == NULL || a->shape.rank < 1 || b->shape.rank < 1
      || node->outputs[0].shape.rank > 10) {
    *reason = "operand ranks not supported";
    return FALSE;
  }
  return float_inputs (node, reason);
}

/* Batch strides of @op (matrix of @mat elements, batch dims @s[0..r-2])
 * broadcast over the output batch @out. */
static void
batch_strides (const ClinferShape *s, int64_t mat, const ClinferShape *out,
    int *st)
{
  ClinferShape bs = *s;

  bs.rank = MAX (s->rank - 2, 0);
  clinfer_ocl_broadcast_strides (&bs, out, st);
  for (int i = 0; i < out->rank; i++)
    st[i] *= (int) mat;
}

gboolean
clinfer_ocl_matmul_build (OclBuilder *b, const ClinferNode *node,
    GError **error)
{
  const ClinferShape *as = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *bs = clinfer_ocl_in_shape (b, 1);
  MatmulArgs m = { 0 };
  ClinferShape batch = { 0 };
  int64_t K = as->dims[as->rank - 1];

  m.M = as->rank >= 2 ? (int) as->dims[as->rank - 2] : 1;
  m.N = bs->rank >= 2 ? (int) bs->dims[bs->rank - 1] : 1;
  m.K = (int) K;
  m.a_sm = as->rank >= 2 ? (int) K : 0;
  m.a_sk = 1;
  m.b_sk = bs->rank >= 2 ? m.N : 1;
  m.b_sn = bs->rank >= 2 ? 1 : 0;
  m.alpha = 1.f;
  /* Output batch dims: the output shape without its matrix dims. */
  batch = node->outputs[0].shape;
  batch.rank -= (as->rank >= 2) + (bs->rank >= 2);
  if (batch.rank > 8) {
    g_set_error (error, CLINFER_ERROR, CLINFER_ERROR_NOT_IMPLEMENTED,
        "more than 8 batch dims");
    return FALSE;
  }
  m.brank = batch.rank;
  m.batch = MAX (clinfer_shape_n_elements (&batch), 1);
  for (int i = 0; i < 8; i++)
    m.bdims[i] = i < batch.rank ? (int) batch.dims[i] : 1;
  batch_strides (as, (int64_t) m.M * K, &batch, m.ab);
  batch_strides (bs, K * m.N, &batch, m.bb);
  return launch (b, node, &m, error);
}

/* ---- Gemm ---- */

gboolean
clinfer_ocl_gemm_supports (const OclDevice *dev, const ClinferNode *node, const char **reason)
{
  return float_inputs (node, reason);
}

gboolean
clinfer_ocl_gemm_build (OclBuilder *b, const ClinferNode *node, GError **error)
{
  const ClinferShape *as = clinfer_ocl_in_shape (b, 0);
  const ClinferShape *bs = clinfer_ocl_in_shape (b, 1);
  const ClinferShape *out = &node->outputs[0].shape;
  int64_t ta = 0, tb = 0;
  int cs[2] = { 0, 0 };
  MatmulArgs m = { 0 };

  if (!clinfer_node_attr_int (node, "transA", 0, &ta, error)
      || !clinfer_node_attr_int (node, "transB", 0, &tb, error)
      || !clinfer_node_attr_float (node, "alpha", 1.f, &m.alpha, error)
      || !clinfer_node_attr_float (node, "beta", 1.f, &m.beta, error))
    return FALSE;
  m.M = (int) out->dims[0];
  m.N = (int) out->dims[1];
  m.K = (int) (ta ? as->dims[0] : as->dims[1]);
  m.a_sm = ta ? 1 : m.K;
  m.a_sk = ta ? m.M : 1;
  m.b_sk = tb ? 1 : m.N;
  m.b_sn = tb ? m.K : 1;
  (void) bs;
  m.has_c = node->n_inputs > 2 && node->inputs[2].node != NULL;
  if (m.has_c)
    clinfer_ocl_broadcast_strides (clinfer_ocl_in_shape (b, 2), out, cs);
  m.c_sm = cs[0];
  m.c_sn = cs[1];
  m.brank = 1;
  m.batch = 1;
  for (int i = 0; i < 8; i++)
    m.bdims[i] = 1;
  return launch (b, node, &m, error);
}
