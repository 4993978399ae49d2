/* Private to the CPU pre-processing (gstclinferpreprocesscpu.c), its
 * AVX2 rows (gstclinferpreprocessavx2.c) and the OpenCL path
 * (gstclinferpreprocessocl.c), which uploads the same tables so both
 * devices compute the same values.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include "gstclinferpreprocess.h"

G_BEGIN_DECLS

typedef enum
{
  FAMILY_PACKED_RGB,
  FAMILY_GRAY,
  FAMILY_NV12,
  FAMILY_I420,
} FormatFamily;

/* One bilinear tap along an axis: source indices and the weight of i1;
 * i0 < 0 marks a padding pixel (letterbox). */
typedef struct
{
  gint i0, i1;
  gfloat f;
} Tap;

typedef struct
{
  GstClinferPreprocess parent;
  ClinferTensor *input;         /* the model input, bound by bind */

  FormatFamily family;
  gint comp_offset[3];          /* packed RGB: byte offsets of R, G, B */
  gint pixel_stride;
  /* YUV to RGB: R = y + rv * v, G = y + gu * u + gv * v, B = y + bu * u,
   * with y = (Y - y_offset) * y_scale and u/v = (U/V - 128) * c_scale. */
  gfloat y_offset, y_scale, c_scale, rv, gu, gv, bu;
  Tap *xtaps, *ytaps;
  /* Per R, G, B component (gray: component 0): the offset of its model
   * channel in the tensor, and that channel's mean and 1 / scale. Indexing
   * by component keeps the inner loop free of run-time channel lookups. */
  gsize channel_offset[3];
  gsize pixel_step;             /* elements between neighbouring pixels */
  gfloat mean[3], inv_scale[3];

  /* SIMD rows (3-channel models on x86-64 with AVX2 + FMA): model columns
   * [simd_begin, simd_end), a multiple of 8 of them, go through
   * gst_clinfer_preprocess_avx2_row(); the rest, padding included, through
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
  /* Packed RGB frames into NHWC f32 (gst_clinfer_preprocess_avx2_row()
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
} GstClinferPreprocessCpu;

/* TRUE when this machine (and CLINFER_CPU_ISA, as for the engine) allows
 * the AVX2 rows. */
gboolean gst_clinfer_preprocess_avx2_available (void);
/* Model row @v, columns [simd_begin, simd_end), into @data. */
void gst_clinfer_preprocess_avx2_row (const GstClinferPreprocessCpu * self,
    const GstVideoFrame * frame, gint v, gpointer data);

G_END_DECLS
