/* clinfer — MatMul, Gemm, Einsum. */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_matmul[] = {
  { NULL }
};
