/* clinfer — Resize / Upsample geometry shared by the reference (resize.c)
 * and device kernels: per dimension, the input taps of every output index,
 * from the node's attributes, the input shape and the parameter values. */
#pragma once

#include "ops/op.h"

G_BEGIN_DECLS

/* Input taps of one output index along one dim. */
typedef struct {
  int64_t idx[4];            /* input indices (nearest: idx[0] only) */
  float w[4];                /* weights (linear: 2, cubic: 4) */
  gboolean extrap;           /* outside the crop: the extrapolation value */
} ClinferResizeTap;

typedef enum {
  CLINFER_RESIZE_NEAREST,
  CLINFER_RESIZE_LINEAR,
  CLINFER_RESIZE_CUBIC,
} ClinferResizeMode;

typedef struct {
  ClinferResizeMode mode;
  int n_taps;                /* 1, 2 or 4 */
  int rank;
  int64_t out[CLINFER_MAX_RANK];
  /* Per dim, out[d] taps; NULL for a dim that linear or cubic leave
   * unchanged (nearest: never NULL), and for every dim when the output
   * is empty (some out[d] is 0). Applied last dim first. */
  ClinferResizeTap *taps[CLINFER_MAX_RANK];
  float extrapolation;       /* tf_crop_and_resize outside the crop */
  guint64 fill;              /* the same as bits of the element type */
} ClinferResizeGeometry;

/* The geometry of Resize/Upsample @node for input 0 of type @type and
 * shape @in[0].shape and parameter inputs @in[1..] (as for the op's
 * infer; their values must be known). Clear it with
 * clinfer_resize_geometry_clear(). */
gboolean clinfer_resize_geometry (const ClinferNode *node,
    ClinferElementType type, const ClinferValueInfo *in,
    ClinferResizeGeometry *geometry, GError **error);
void clinfer_resize_geometry_clear (ClinferResizeGeometry *geometry);
/* The same for resolved @node on f32 from its port descs: FALSE (no
 * error) when a parameter input is not a constant or the geometry fails. */
gboolean clinfer_resize_const_geometry (const ClinferNode *node,
    ClinferResizeGeometry *geometry);

G_END_DECLS
