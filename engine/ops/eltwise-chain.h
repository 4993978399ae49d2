/* clinfer — com.clinfer EltwiseChain: element-wise ops applied one after
 * the other to one tensor, in one pass (engine/passes/fuse-eltwise-chain.c
 * makes them for devices that want them; the OpenCL device runs the chain
 * as one kernel, kernels/eltwise.cl ew_chain).
 *
 * Inputs: x (the chained value) and up to 3 more tensors of x's type and
 * shape. Output: x's type and shape. Attributes (one entry per op, at most
 * CLINFER_CHAIN_MAX_OPS):
 *   ops       op codes (ClinferChainOp)
 *   operands  binary ops: 1..3 = that input is the other operand, 0 = the
 *             constant a; + CLINFER_CHAIN_REVERSED when the operand comes
 *             first (t - v, t / v); unary ops: 0
 *   a, b      constants: Clip min/max, LeakyRelu alpha, HardSigmoid
 *             alpha/beta, a binary op's constant operand (a)
 * The op codes are also the cases of ew_chain in kernels/eltwise.cl. */
#pragma once
#include "ops/op.h"

G_BEGIN_DECLS

#define CLINFER_CHAIN_MAX_OPS 8
#define CLINFER_CHAIN_MAX_INPUTS 4
#define CLINFER_CHAIN_REVERSED 16

typedef enum {
  CLINFER_CHAIN_ADD = 0,
  CLINFER_CHAIN_SUB,
  CLINFER_CHAIN_MUL,
  CLINFER_CHAIN_DIV,
  CLINFER_CHAIN_MAX,
  CLINFER_CHAIN_MIN,
  CLINFER_CHAIN_RELU,        /* first unary op */
  CLINFER_CHAIN_CLIP,
  CLINFER_CHAIN_SIGMOID,
  CLINFER_CHAIN_TANH,
  CLINFER_CHAIN_LEAKY_RELU,
  CLINFER_CHAIN_HARD_SIGMOID,
  CLINFER_CHAIN_HARD_SWISH,
  CLINFER_CHAIN_EXP,
  CLINFER_CHAIN_NEG,
  CLINFER_CHAIN_ABS,
  CLINFER_CHAIN_SQRT,
  CLINFER_CHAIN_N_OPS
} ClinferChainOp;

/* The parsed attributes (node->op_data of an EltwiseChain). */
typedef struct {
  guint n_ops;
  int op[CLINFER_CHAIN_MAX_OPS];
  int operand[CLINFER_CHAIN_MAX_OPS];
  float a[CLINFER_CHAIN_MAX_OPS], b[CLINFER_CHAIN_MAX_OPS];
} ClinferChain;

/* TRUE for the two-operand codes (ADD .. MIN). */
#define CLINFER_CHAIN_IS_BINARY(op) ((op) < CLINFER_CHAIN_RELU)

/* Op code of the ONNX op @op_type as a chain link, or -1. */
int clinfer_chain_op_from_type (const char *op_type);

G_END_DECLS
