/* clinfer — tensors that stand for a remote tensor (core/tensor.c): the
 * host-side handle clinfer_remote_tensor_to_tensor() returns. */
#pragma once

#include <clinfer/tensor.h>

G_BEGIN_DECLS

/* A tensor standing for a remote tensor (clinfer_remote_tensor_to_tensor()):
 * no data; @remote is released with @unref when it dies. */
ClinferTensor *clinfer_tensor_new_remote_view (ClinferElementType type,
    const ClinferShape *shape, const int64_t *strides, gpointer remote,
    GDestroyNotify unref);
gpointer clinfer_tensor_get_remote_view (const ClinferTensor *tensor);

G_END_DECLS
