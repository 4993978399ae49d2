/* clinfer — the CPU device's fast MaxPool: 2x2 windows of stride 2
 * without padding on f32 NCHW (what BlazeFace-style nets use); other
 * configurations run the reference eval. */
#include "plan/cpu-simd.h"
#include <omp.h>

typedef struct {
  const ClinferCpuSimd *simd;
  ClinferShape x_shape;
  int ih, iw, oh, ow;
  int64_t planes;
} PoolState;

static gboolean
pool_run (ClinferCpuKernel *kernel, const ClinferNode *node,
    ClinferTensor *const *inputs, ClinferTensor *const *outputs,
    GError **error)
{
  const PoolState *st = kernel->state;
  const float *x = clinfer_tensor_get_const_data (inputs[0]);
  float *y = clinfer_tensor_get_data (outputs[0]);
  int64_t in_plane = (int64_t) st->ih * st->iw, out_plane = (int64_t) st->oh * st->ow;

  if (!clinfer_cpu_kernel_check_shape (kernel, node, "input", inputs[0],
          &st->x_shape, error))
    return FALSE;
#pragma omp parallel for schedule (static) if (st->planes * out_plane > 16384)
  for (int64_t p = 0; p < st->planes; p++)
    st->simd->max_pool_2x2 (x + p * in_plane, st->ih, st->iw, y + p * out_plane,
        st->oh, st->ow);
  return TRUE;
}

gboolean
clinfer_cpu_max_pool_factory (const ClinferNode *node, ClinferCpuIsa isa,
    ClinferCpuKernel *kernel, GError **error)
{
  ClinferPortDesc *xd = clinfer_node_input_desc (node, 0);
  ClinferWindowAttrs attrs;
  ClinferWindow win;
  PoolState *st;

  if (xd == NULL || node->n_outputs != 1 || xd->type != CLINFER_TYPE_F32
      || xd->shape.rank != 4 || !clinfer_shape_is_static (&xd->shape)
      || xd->shape.dims[2] > G_MAXINT || xd->shape.dims[3] > G_MAXINT)
    return FALSE;
  if (!clinfer_window_attrs_parse (node, TRUE, &attrs, error)
      || !clinfer_window_resolve (node, &attrs, 2, xd->shape.dims + 2, NULL,
          &win, error))
    return FALSE;
  for (int i = 0; i < 2; i++)
    if (win.kernel[i] != 2 || win.stride[i] != 2 || win.dilation[i] != 1
        || win.pad_begin[i] != 0 || win.pad_end[i] != 0
        || win.out[i] * 2 > win.in[i])
      return FALSE;
  st = g_new0 (PoolState, 1);
  st->simd = clinfer_cpu_simd_get (isa);
  st->x_shape = xd->shape;
  st->ih = win.in[0];
  st->iw = win.in[1];
  st->oh = win.out[0];
  st->ow = win.out[1];
  st->planes = xd->shape.dims[0] * xd->shape.dims[1];
  kernel->name = g_strdup_printf ("max_pool_2x2_%s", st->simd->isa_name);
  kernel->state = st;
  kernel->free_state = g_free;
  kernel->run = pool_run;
  return TRUE;
}
