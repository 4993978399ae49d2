/* clinfer — ConvTranspose. */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_convtranspose[] = {
  { NULL }
};
