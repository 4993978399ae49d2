/* clinfer — Slice parameters shared by the reference kernel (shape-ops.c)
 * and device kernels: per input dim, the first index, the step and the
 * length of the slice, from the node's attributes or parameter inputs. */
#pragma once

#include "ops/op.h"

G_BEGIN_DECLS

typedef struct {
  int64_t start[CLINFER_MAX_RANK];
  /* 1 where the slice has at most one element: such a step is never
   * applied (and may be INT64_MIN); any other is within the dim, so
   * step * stride stays within the tensor. */
  int64_t step[CLINFER_MAX_RANK];
  int64_t len[CLINFER_MAX_RANK];
} ClinferSliceParams;

/* The slice of Slice @node over an input of shape @x. @vals[1..4] are
 * the values of inputs starts, ends, axes and steps (opset >= 10; NULL
 * when not known yet, then *@known is FALSE and @sp is not set). */
gboolean clinfer_slice_params (const ClinferNode *node, const ClinferShape *x,
    const ClinferTensor *const *vals, ClinferSliceParams *sp, gboolean *known,
    GError **error);

G_END_DECLS
