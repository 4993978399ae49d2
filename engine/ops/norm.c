/* clinfer — Normalizations (BatchNormalization, InstanceNormalization, LRN, LpNormalization, MeanVarianceNormalization, LayerNormalization). */
#include "ops/op.h"

const ClinferOpDef clinfer_ops_norm[] = {
  { NULL }
};
