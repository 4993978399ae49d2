/* clinfer — pre-processing on the host (clinfer/preprocess.h): the tables
 * of one frame format and model input (resize taps, colour matrix,
 * per-channel constants), the portable rows (preprocess-host.c) and the
 * AVX2 ones (preprocess-avx2.c). A device with its own pre-processing
 * (the OpenCL kernel, devices/opencl/ocl-preprocess.c) uploads the same
 * tables, so every device computes the same values.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <clinfer/preprocess.h>
#include "plan/cpu-kernels.h"
#include <math.h>

G_BEGIN_DECLS

typedef enum
{
  FAMILY_PACKED_RGB,
  FAMILY_GRAY,
  FAMILY_NV12,
  FAMILY_I420,
} ClinferFrameFamily;

/* One bilinear tap along an axis: source indices and the weight of i1;
 * i0 < 0 marks a padding pixel (letterbox). */
typedef struct
{
  gint i0, i1;
  gfloat f;
} ClinferPreprocessTap;

typedef struct
{
  ClinferFrameInfo frame;
  ClinferPreprocessConfig config;
  ClinferPreprocessGeometry geometry;
  ClinferCpuIsa isa;            /* of the rows: generic or avx2 */

  ClinferFrameFamily family;
  gint comp_offset[3];          /* packed RGB: byte offsets of R, G, B */
  gint pixel_stride;
  /* YUV to RGB: R = y + rv * v, G = y + gu * u + gv * v, B = y + bu * u,
   * with y = (Y - y_offset) * y_scale and u/v = (U/V - 128) * c_scale. */
  gfloat y_offset, y_scale, c_scale, rv, gu, gv, bu;
  ClinferPreprocessTap *xtaps, *ytaps;
  /* Per R, G, B component (gray: component 0): the offset of its model
   * channel in the tensor, and that channel's mean and 1 / scale. Indexing
   * by component keeps the inner loop free of run-time channel lookups. */
  gsize channel_offset[3];
  gsize pixel_step;             /* elements between neighbouring pixels */
  gfloat mean[3], inv_scale[3];
  /* Component values of a padding pixel: black, or the mean (0 in the
   * model input) for CLINFER_RESIZE_FIT_HEIGHT. */
  gfloat pad[3];

  /* SIMD rows (3-channel models on x86-64 with AVX2 + FMA): model columns
   * [simd_begin, simd_end), a multiple of 8 of them, go through
   * clinfer_preprocess_avx2_row(); the rest, padding included, through
   * the portable loop. Per column: the byte offset of the first horizontal
   * tap in plane 0 and in the chroma plane(s) (8 bytes are read there: the
   * second tap is the next pixel, or has weight 0), and the weight of the
   * second tap in each. Per sample (R, G, B or Y, U, V): the byte shuffle
   * picking its two taps from two columns' 8-byte reads (one 128-bit
   * lane), written out for both lanes. */
  gboolean use_simd;
  gint simd_begin, simd_end;
  gint32 *x_offset, *c_offset;
  gfloat *x_weight, *c_weight;
  guint8 simd_mask[3][32];
  /* Packed RGB frames into NHWC f32 (clinfer_preprocess_avx2_row()
   * then runs its own loop): 8 model pixels are 24 interleaved values in
   * three registers, value j (0..23) being channel j % 3 of pixel j / 3,
   * computed where it is stored, without a transpose. Per register and tap
   * (0: first, 1: second), the byte shuffle picking each value's sample
   * from the register's two 8-byte column reads; per value of a group,
   * 1 / scale and -mean / scale of its channel; per model column and
   * channel, the horizontal weight (x_weight three times). Cleared by the
   * pre-processing benchmark to time the general rows. */
  gboolean packed_nhwc;
  guint8 nhwc_mask[3][2][32];
  gfloat nhwc_inv[24], nhwc_bias[24];
  gfloat *nhwc_weight;
  /* Cache lines of one frame row that 8 columns' reads can touch, at
   * most, wherever the row starts: the AVX2 rows prefetch that many
   * lines of the next model row's frame rows per group of 8 columns. */
  gint prefetch_lines;
} ClinferPreprocessHost;

/* One model input value of element type @type (F32, F16 or U8, rounded
 * and saturated) at @index. */
static G_ALWAYS_INLINE inline void
clinfer_preprocess_store (ClinferElementType type, gpointer data, gsize index,
    gfloat value)
{
  switch (type) {
    case CLINFER_TYPE_F16:
      ((guint16 *) data)[index] = clinfer_float_to_half (value);
      break;
    case CLINFER_TYPE_U8:
      ((guint8 *) data)[index] = (guint8) CLAMP (lrintf (value), 0, 255);
      break;
    case CLINFER_TYPE_F32:
    default:
      ((gfloat *) data)[index] = value;
      break;
  }
}

/* (transfer full) The tables of @frame frames into inputs of @config,
 * for rows of @isa (the AVX2 rows from CLINFER_CPU_ISA_AVX2 on, when
 * built in). NULL with CLINFER_ERROR_INVALID_ARGUMENT naming what does
 * not fit. */
ClinferPreprocessHost *clinfer_preprocess_host_new (const ClinferFrameInfo *frame,
    const ClinferPreprocessConfig *config, ClinferCpuIsa isa, GError **error);
void clinfer_preprocess_host_free (ClinferPreprocessHost *self);
/* The model input of @config: [1, C, H, W] or [1, H, W, C]. */
void clinfer_preprocess_input_shape (const ClinferPreprocessConfig *config,
    ClinferShape *shape);
/* Bytes of one item of that input (one frame's model input). */
gsize clinfer_preprocess_item_bytes (const ClinferPreprocessConfig *config);
/* TRUE when the AVX2 rows are built in and this machine (and
 * CLINFER_CPU_ISA) allows them. */
gboolean clinfer_preprocess_host_has_avx2 (void);
/* Number of planes of @format, and the bytes of plane @plane of a frame
 * of @info whose rows are @stride bytes apart (the last row counted to its
 * last sample only). */
int clinfer_pixel_format_n_planes (ClinferPixelFormat format);
gsize clinfer_frame_plane_size (const ClinferFrameInfo *info, int plane,
    int stride);
/* FALSE with an error naming the plane when @frame lacks host memory
 * for a plane @info needs or a stride is too small for a row. */
gboolean clinfer_frame_check (const ClinferFrameInfo *info,
    const ClinferFrame *frame, gboolean host, GError **error);
/* Fills @data, the model input, from the host planes of @frame. */
void clinfer_preprocess_host_run (const ClinferPreprocessHost *self,
    const ClinferFrame *frame, gpointer data);

/* Model row @v, columns [simd_begin, simd_end), into @data
 * (preprocess-avx2.c, built with -mavx2 -mfma; only called when isa is
 * CLINFER_CPU_ISA_AVX2). */
void clinfer_preprocess_avx2_row (const ClinferPreprocessHost *self,
    const ClinferFrame *frame, gint v, gpointer data);

G_END_DECLS
