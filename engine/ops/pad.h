/* clinfer — Pad parameters shared by the reference kernel (layout.c), the
 * fold-pad pass and the CPU device's Pad kernel: constant mode or not, the
 * pads and the fill value, when they are known at compile time. */
#pragma once

#include "ops/op.h"

G_BEGIN_DECLS

typedef struct {
  gboolean constant;         /* mode "constant" (else reflect or edge) */
  gboolean edge;             /* mode "edge" */
  int64_t pads[2 * CLINFER_MAX_RANK];  /* begins then ends, per dim */
  double value;              /* the fill of constant mode */
} ClinferPadParams;

/* The parameters of the resolved Pad @node on a rank-@rank input: from
 * its attributes (opset < 11) or the constant values of its pads and
 * constant_value inputs. FALSE when one is not a constant or the pads do
 * not have 2 * @rank entries. */
gboolean clinfer_pad_params (const ClinferNode *node, int rank,
    ClinferPadParams *p);

/* The input index along a dim of @n values (padded by @begin before it)
 * that output index @o reads: -1 for the fill value of constant mode,
 * mirrored without the edge (reflect) or the edge repeated (edge). */
int64_t clinfer_pad_source (const ClinferPadParams *p, int64_t o,
    int64_t begin, int64_t n);

G_END_DECLS
