/* clinfer — shared by the passes that fold a per-channel affine map
 * y = x * s + t into the Conv before it (conv-affine.c). */
#pragma once

#include "passes/passes.h"
#include "ops/op.h"

G_BEGIN_DECLS

gboolean clinfer_conv_affine_is_conv (const ClinferNode *node);
/* Constant f32 contiguous value of input @i of @node with @n elements
 * (any number when @n < 0), or NULL. */
const ClinferTensor *clinfer_conv_affine_const_f32 (const ClinferNode *node,
    guint i, int64_t n);
/* Output channels M of @conv when its weights and bias are constants and
 * its output feeds one node only, else -1. */
int64_t clinfer_conv_affine_channels (const ClinferGraph *graph,
    const ClinferNode *conv);
/* Output channels M of @conv when BatchNormalization @bn after it can be
 * folded into it (constant parameters of M values, only output 0 used),
 * else -1. */
int64_t clinfer_conv_affine_bn_channels (const ClinferGraph *graph,
    const ClinferNode *conv, const ClinferNode *bn);
/* The batch normalisation of @bn as s and t per channel (its inputs 1-4
 * constant f32 tensors of @m values); shared with batchnorm-to-affine. */
gboolean clinfer_pass_bn_affine (const ClinferNode *bn, int64_t m, double *s,
    double *t, GError **error);
/* Replaces @conv -> @next by one Conv with W * s and b * s + t (@conv's
 * attributes, @next's output name); @what names the new constants. The
 * new Conv, or NULL with @error. */
ClinferNode *clinfer_conv_affine_fuse (ClinferGraph *graph, ClinferNode *conv,
    ClinferNode *next, int64_t m, const double *s, const double *t,
    const char *what, GError **error);

G_END_DECLS
