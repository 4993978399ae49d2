/* clinfer — a depthwise conv and the 1x1 conv reading it, run as one step
 * of the oneDNN fast path by clinfer's own blocked kernel
 * (ClinferCpuSimd.dw_pw_blocked): the depthwise output of a few pixels
 * stays in a per-thread L1 buffer instead of a whole tensor written and
 * read back. oneDNN 2.6 only fuses the other order (a 1x1 then a
 * depthwise, post-op dw), which MobileNet-style blocks with a residual
 * around (depthwise, 1x1) pairs (BlazeFace) cannot use. */
#include "devices/cpu/onednn-internal.h"
#include "ops/conv.h"
#include <string.h>
#include <unistd.h>

/* -1: CLINFER_CPU_DWPW unset (decide per pair), else 0 or 1. */
static int
dwpw_override (void)
{
  const char *v = g_getenv ("CLINFER_CPU_DWPW");

  if (v == NULL || v[0] == '\0')
    return -1;
  return strcmp (v, "0") != 0;
}

gboolean
clinfer_onednn_dwpw_enabled (ClinferCpuIsa isa, int threads)
{
  int o = dwpw_override ();

  /* Measured against oneDNN's two primitives (docs/performance.md): with
   * one thread it pays with AVX2 only; with more it pays with both
   * blocked kernels, because the fused step splits the rows between the
   * threads once for both convs where oneDNN's depthwise and 1x1 split
   * theirs differently (half the depthwise output changes cores) and
   * each adds a fork and a join. Elsewhere on request
   * (CLINFER_CPU_DWPW=1). */
  if (o >= 0)
    return o == 1;
  return isa == CLINFER_CPU_ISA_AVX2
      || (threads > 1 && isa >= CLINFER_CPU_ISA_AVX2);
}

static gboolean
worth_fusing (int threads, gsize dw_out_bytes)
{
  long l2 = -1;

  /* With one thread the fusion pays where the depthwise output would not
   * stay in the L2 cache between the two convs: smaller pairs run faster
   * as oneDNN's own primitives (jit_dw + jit_1x1 at BlazeFace's 64x64
   * and smaller). With more threads it pays at every size (see above). */
  if (dwpw_override () == 1 || threads > 1)
    return TRUE;
#ifdef _SC_LEVEL2_CACHE_SIZE
  l2 = sysconf (_SC_LEVEL2_CACHE_SIZE);
#endif
  if (l2 <= 0)
    l2 = 512 * 1024;
  return dw_out_bytes > (gsize) l2;
}

/* The 2-D window of conv @node, FALSE when it is not 2-D, dilated or
 * out of int range. */
static gboolean
conv_window_2d (const ClinferNode *node, ClinferWindow *win)
{
  ClinferPortDesc *x = clinfer_node_input_desc (node, 0);
  ClinferPortDesc *w = clinfer_node_input_desc (node, 1);

  if (!clinfer_conv_window (node, &x->shape, &w->shape, win, NULL)
      || win->n != 2)
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (win->dilation[i] != 1 || win->in[i] > 65536 || win->out[i] > 65536
        || win->kernel[i] > 16 || win->stride[i] > 16
        || win->pad_begin[i] >= win->kernel[i])
      return FALSE;
  return TRUE;
}

static gboolean
supported_act (ClinferActivation act)
{
  return act == CLINFER_ACT_NONE || act == CLINFER_ACT_RELU
      || act == CLINFER_ACT_CLIP || act == CLINFER_ACT_LEAKY_RELU;
}

gboolean
clinfer_onednn_dwpw_accepts (const ClinferOnednnPlan *oplan,
    const ClinferStep *dw, const ClinferStep *pw)
{
  const ClinferConvParams *pd = dw->node->op_data, *pp = pw->node->op_data;
  ClinferPortDesc *x = clinfer_node_input_desc (dw->node, 0);
  ClinferPortDesc *wd = clinfer_node_input_desc (dw->node, 1);
  ClinferPortDesc *wp = clinfer_node_input_desc (pw->node, 1);
  const ClinferShape *y = &pw->node->outputs[0].shape;
  const ClinferCpuSimd *simd = clinfer_cpu_simd_get (oplan->isa);
  int64_t block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  int64_t c = x->shape.dims[1];
  ClinferWindow win;

  if (pd == NULL || pp == NULL
      || !clinfer_onednn_dwpw_enabled (oplan->isa, oplan->threads)
      || block % (simd->nr / 2) != 0)
    return FALSE;
  /* Depthwise: one channel per group, no residual. */
  if (x->shape.dims[0] != 1 || pd->group != c || wd->shape.dims[0] != c
      || wd->shape.dims[1] != 1 || !supported_act (pd->act)
      || (dw->node->n_inputs > 3 && dw->node->inputs[3].node != NULL)
      || !conv_window_2d (dw->node, &win)
      || (c + block - 1) / block * block > CLINFER_CPU_DWPW_MAX_CIN)
    return FALSE;
  /* Pointwise: 1x1, stride 1, no pads, one group, over every channel. */
  if (pp->group != 1 || wp->shape.dims[1] != c || wp->shape.dims[2] != 1
      || wp->shape.dims[3] != 1 || !supported_act (pp->act)
      || !conv_window_2d (pw->node, &win))
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (win.stride[i] != 1 || win.pad_begin[i] != 0 || win.pad_end[i] != 0)
      return FALSE;
  return y->dims[1] == wp->shape.dims[0]
      && worth_fusing (oplan->threads, (gsize) (c + block - 1) / block
          * block * win.out[0] * win.out[1] * sizeof (float));
}

static void
epilogue (const ClinferConvParams *p, ClinferCpuEpilogue *ep)
{
  ep->act = p->act;
  ep->min = p->act_min;
  ep->max = p->act_max;
  ep->alpha = p->act_alpha;
}

gboolean
clinfer_onednn_dwpw_build (ClinferOnednnPlan *oplan, OnednnStep *s,
    const ClinferStep *pw, const ClinferStep *dw, GError **error)
{
  const ClinferNode *dn = dw->node, *pn = pw->node;
  ClinferPortDesc *x = clinfer_node_input_desc (dn, 0);
  ClinferPortDesc *wd = clinfer_node_input_desc (dn, 1);
  ClinferPortDesc *bd = clinfer_node_input_desc (dn, 2);
  ClinferPortDesc *wp = clinfer_node_input_desc (pn, 1);
  ClinferPortDesc *bp = clinfer_node_input_desc (pn, 2);
  gboolean has_z = pn->n_inputs > 3 && pn->inputs[3].node != NULL;
  const ClinferShape *y = &pn->outputs[0].shape;
  ClinferCpuDwPwArgs *a = &s->dwpw;
  ClinferCpuConvGeom *g = &a->g;
  ClinferWindow win;
  dnnl_memory_desc_t src_md, dst_md;
  int vw, c, co, taps;
  gsize n_dw_w, n_dw_b, n_pw_w, n_pw_b, end = 0;
  float *mem;
  const float *w;

  if (!conv_window_2d (dn, &win))
    return FALSE;
  s->simd = clinfer_cpu_simd_get (oplan->isa);
  s->block = oplan->block_tag == dnnl_nChw16c ? 16 : 8;
  vw = s->simd->nr / 2;
  c = (int) x->shape.dims[1];
  co = (int) y->dims[1];
  /* conv_window_2d () bounded every extent and took dilation 1 only. */
  clinfer_cpu_conv_geom_from_window (&win, g);
  if (y->dims[2] != g->oh || y->dims[3] != g->ow)
    return FALSE;
  taps = g->kh * g->kw;
  a->block = (int) s->block;
  a->cin = c;
  a->cin_vec = (int) ((c + s->block - 1) / s->block * s->block / vw);
  a->n_out_vec = (int) ((co + s->block - 1) / s->block * s->block / vw);
  epilogue (dn->op_data, &a->dw_ep);
  epilogue (pn->op_data, &a->ep);

  /* One allocation: depthwise weights and bias, then the 1x1's, each
   * vector-major with zero padding lanes. */
  n_dw_w = (gsize) a->cin_vec * taps * vw;
  n_dw_b = bd ? (gsize) a->cin_vec * vw : 0;
  n_pw_w = (gsize) a->n_out_vec * c * vw;
  n_pw_b = (gsize) a->n_out_vec * vw;
  mem = g_aligned_alloc0 (n_dw_w + n_dw_b + n_pw_w + n_pw_b, sizeof (float),
      64);
  s->weights_data = mem;
  w = clinfer_tensor_get_const_data (wd->value);
  for (int ch = 0; ch < c; ch++)
    for (int t = 0; t < taps; t++)
      mem[(gsize) (ch / vw) * taps * vw + (gsize) t * vw + ch % vw] =
          w[(gsize) ch * taps + t];
  a->dw_w = mem;
  mem += n_dw_w;
  a->dw_b = NULL;
  if (bd) {
    memcpy (mem, clinfer_tensor_get_const_data (bd->value), c * sizeof (float));
    a->dw_b = mem;
    mem += n_dw_b;
  }
  w = clinfer_tensor_get_const_data (wp->value);
  for (int o = 0; o < co; o++)
    for (int ch = 0; ch < c; ch++)
      mem[(gsize) (o / vw) * c * vw + (gsize) ch * vw + o % vw] =
          w[(gsize) o * c + ch];
  a->pw_w = mem;
  mem += n_pw_w;
  if (bp)
    memcpy (mem, clinfer_tensor_get_const_data (bp->value), co * sizeof (float));
  a->pw_b = mem;

  /* x is the depthwise's input; y and z the 1x1's. A blocked md of C
   * channels holds whole blocks (the padding lanes zero), the bytes the
   * kernel reads and writes; a blocked slot's channel-padded view is the
   * same bytes (clinfer_onednn_operand_init). */
  clinfer_onednn_md_4d (&x->shape, oplan->block_tag, &src_md);
  clinfer_onednn_md_4d (y, oplan->block_tag, &dst_md);
  s->z_input = 3;
  if (!clinfer_onednn_operand_init (oplan, &s->src, dw->in_slots[0], &src_md,
          FALSE, &end, error)
      || (has_z && !clinfer_onednn_operand_init (oplan, &s->z,
              pw->in_slots[3], &dst_md, FALSE, &end, error))
      || !clinfer_onednn_operand_init (oplan, &s->dst, s->out_slot, &dst_md,
          TRUE, &end, error))
    return FALSE;
  s->scratch_bytes = end;
  g_free (pw->kernel.name);
  ((ClinferStep *) pw)->kernel.name = g_strdup_printf (
      "onednn-layout:dw%dx%d+1x1_nChw%dc_%s", g->kh, g->kw, (int) s->block,
      s->simd->isa_name);
  return TRUE;
}

void
clinfer_onednn_dwpw_run (const OnednnStep *s, const float *x, const float *z,
    float *y)
{
  const ClinferCpuDwPwArgs *a = &s->dwpw;
  int oh = a->g.oh;
  /* Bands of rows, a few per thread: the threads split the image. */
  int rows = MAX (1, oh / 16);
  int bands = (oh + rows - 1) / rows;

#pragma omp parallel for schedule (static) if (bands > 1)
  for (int b = 0; b < bands; b++)
    s->simd->dw_pw_blocked (a, x, z, y, b * rows, MIN (oh, (b + 1) * rows));
}
