/* clinfer — parsed attributes and sliding-window geometry shared by Conv,
 * FusedConv, the pools (engine/ops) and the CPU device's fast kernels. */
#pragma once

#include "ops/op.h"

G_BEGIN_DECLS

/* Spatial ranks the window ops handle (1-D, 2-D and 3-D). */
#define CLINFER_MAX_SPATIAL 3

typedef enum {
  CLINFER_AUTO_PAD_NOTSET,
  CLINFER_AUTO_PAD_SAME_UPPER,
  CLINFER_AUTO_PAD_SAME_LOWER,
  CLINFER_AUTO_PAD_VALID,
} ClinferAutoPad;

/* Window attributes as written on the node; n_* are 0 when absent. */
typedef struct {
  ClinferAutoPad auto_pad;
  gsize n_kernel, n_strides, n_dilations, n_pads;
  int64_t kernel[CLINFER_MAX_SPATIAL];
  int64_t strides[CLINFER_MAX_SPATIAL];
  int64_t dilations[CLINFER_MAX_SPATIAL];
  int64_t pads[2 * CLINFER_MAX_SPATIAL];  /* begins then ends, as in ONNX */
  gboolean ceil_mode;
} ClinferWindowAttrs;

/* Geometry resolved for concrete input dims (CLINFER_DIM_DYNAMIC where an
 * input dim is unknown; the pads are then 0 for auto_pad SAME). */
typedef struct {
  int n;                     /* spatial rank */
  int64_t in[CLINFER_MAX_SPATIAL];
  int64_t out[CLINFER_MAX_SPATIAL];
  int64_t kernel[CLINFER_MAX_SPATIAL];
  int64_t stride[CLINFER_MAX_SPATIAL];
  int64_t dilation[CLINFER_MAX_SPATIAL];
  int64_t pad_begin[CLINFER_MAX_SPATIAL];
  int64_t pad_end[CLINFER_MAX_SPATIAL];
} ClinferWindow;

/* A window right-aligned into 3 spatial dims (leading unused dims of
 * extent 1, so 1-D runs along W): what the reference kernels loop over. */
typedef struct {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} ClinferWindow3;

/* Activation applied last by FusedConv. */
typedef enum {
  CLINFER_ACT_NONE,
  CLINFER_ACT_RELU,
  CLINFER_ACT_CLIP,
  CLINFER_ACT_LEAKY_RELU,
} ClinferActivation;

/* node->op_data of Conv and FusedConv. */
typedef struct {
  ClinferWindowAttrs win;
  int64_t group;
  ClinferActivation act;
  float act_min, act_max;    /* Clip bounds */
  float act_alpha;           /* LeakyRelu slope */
} ClinferConvParams;

/* Reads auto_pad, kernel_shape, strides, dilations, pads and (when
 * @with_ceil_mode) ceil_mode, checking each value on its own (positive
 * kernel/strides/dilations, non-negative pads, known auto_pad). */
gboolean clinfer_window_attrs_parse (const ClinferNode *node,
    gboolean with_ceil_mode, ClinferWindowAttrs *attrs, GError **error);
/* Reads the ints attribute @name (at most @max_n values, each in
 * @min_value .. 2^30) into @dst; *n = 0 when absent. */
gboolean clinfer_window_read_ints (const ClinferNode *node, const char *name,
    int64_t min_value, gsize max_n, int64_t *dst, gsize *n, GError **error);
/* An attribute of @len values is absent (0) or has @expected values. */
gboolean clinfer_window_check_len (const ClinferNode *node, const char *name,
    gsize len, gsize expected, GError **error);
/* @n spatial dims are supported and the window attributes' lengths fit
 * them. */
gboolean clinfer_window_check_lens (const ClinferNode *node,
    const ClinferWindowAttrs *attrs, int n, GError **error);

/* Resolves the window for @n spatial dims of extents @in (may hold
 * CLINFER_DIM_DYNAMIC). @kernel gives the kernel extents when they come
 * from a weight tensor (NULL: from kernel_shape, which is then required);
 * a dynamic kernel extent gives a dynamic output extent. Checks attribute
 * lengths against @n and that the window fits the padded input. */
gboolean clinfer_window_resolve (const ClinferNode *node,
    const ClinferWindowAttrs *attrs, int n, const int64_t *in,
    const int64_t *kernel, ClinferWindow *win, GError **error);

void clinfer_window_to_3d (const ClinferWindow *win, ClinferWindow3 *w3);

/* Checks a weight's kernel extent *k along spatial dim @i against
 * kernel_shape, which replaces it when dynamic. */
gboolean clinfer_window_weight_kernel (const ClinferNode *node,
    const ClinferWindowAttrs *attrs, int i, int64_t *k, GError **error);

/* Geometry of a Conv/FusedConv node for input shape @x and weight shape
 * @w (ranks already checked by shape inference). */
gboolean clinfer_conv_window (const ClinferNode *node, const ClinferShape *x,
    const ClinferShape *w, ClinferWindow *win, GError **error);

/* Conv and ConvTranspose: attribute group (1 .. G_MAXINT32). */
gboolean clinfer_conv_group_attr (const ClinferNode *node, int64_t *group,
    GError **error);
/* Conv and ConvTranspose: X is f32, f64 or f16 and every other present
 * input has its type. */
gboolean clinfer_conv_check_types (const ClinferNode *node,
    const ClinferValueInfo *in, GError **error);
/* Conv and ConvTranspose: the optional bias in[2] has shape [@m] (@m may
 * be CLINFER_DIM_DYNAMIC). */
gboolean clinfer_conv_check_bias (const ClinferNode *node,
    const ClinferValueInfo *in, int64_t m, GError **error);

static inline float
clinfer_activation_apply (const ClinferConvParams *p, float x)
{
  switch (p->act) {
    case CLINFER_ACT_RELU: return x > 0.f ? x : 0.f;
    case CLINFER_ACT_CLIP: return x < p->act_min ? p->act_min
          : (x > p->act_max ? p->act_max : x);
    case CLINFER_ACT_LEAKY_RELU: return x >= 0.f ? x : p->act_alpha * x;
    default: return x;
  }
}

G_END_DECLS
