/* A custom kernel for the ONNX Relu op: y = max (x, 0) * SCALE.
 * INPUT0_TYPE, OUTPUT0_TYPE and GLOBAL_WORKSIZE come from clinfer's JIT
 * block; SCALE from the <Define> in scaled-relu.xml. */
__kernel void
scaled_relu (__global const INPUT0_TYPE *x, __global OUTPUT0_TYPE *y)
{
  const uint i = get_global_id (0);

  if (i < GLOBAL_WORKSIZE[0])
    y[i] = fmax (x[i], (INPUT0_TYPE) 0) * SCALE;
}
