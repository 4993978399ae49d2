/* Storage of the clinfer element's output tensors: blocks bound as the
 * request's outputs, so the engine writes each frame's outputs straight
 * into the memory the frame's GstClinferTensorMeta then holds, and
 * recycled once downstream drops the meta.
 *
 * Copyright (C) 2025 the clinfer authors
 * SPDX-License-Identifier: Apache-2.0
 */
#pragma once

#include <gst/gst.h>
#include <clinfer/clinfer.h>
#include "clinfer/clinfer-tensor-meta.h"

G_BEGIN_DECLS

typedef struct _GstClinferOutputs GstClinferOutputs;

/* (transfer full) Storage for the outputs of @compiled, or NULL when an
 * input or output has no static shape or an output is not numeric (the
 * element copies the outputs into the meta then). */
GstClinferOutputs *gst_clinfer_outputs_new (ClinferCompiled * compiled);
/* Drops the element's side; blocks still held by metas are freed when
 * their metas go. */
void gst_clinfer_outputs_free (GstClinferOutputs * outputs);
/* Binds a free block (a new one when none is free) as every output of
 * @request, for the next inference. */
gboolean gst_clinfer_outputs_bind (GstClinferOutputs * outputs,
    ClinferRequest * request, GError ** error);
/* Hands the bound block's tensors to @meta (named as the outputs of
 * @compiled), without copying; the next bind takes another block. */
void gst_clinfer_outputs_attach (GstClinferOutputs * outputs,
    ClinferCompiled * compiled, GstClinferTensorMeta * meta);

G_END_DECLS
