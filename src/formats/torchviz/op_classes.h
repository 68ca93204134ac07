// Classes of autograd functions by what they do to their input's shape, shared by shape inference
// and the kernel model. Names are the forward operators ("Addmm" for "AddmmBackward0").
#pragma once

#include <string>

namespace orrery {

// Reshapes whose target the graph does not keep: View, UnsafeView, ReshapeAlias, Reshape, Flatten.
bool is_reshape(const std::string& op);

// Operators whose output has their (first) input's shape: casts, copies, dropout, element-wise
// functions of one tensor.
bool keeps_shape(const std::string& op);

// Element-wise functions of two or more tensors, which broadcast: Add, Sub, Mul, Div, ...
bool is_binary_elementwise(const std::string& op);

// A linear layer's product: Addmm, Mm, Linear.
bool is_linear(const std::string& op);

// Fused attention (torch.nn.functional.scaled_dot_product_attention on its flash, memory-efficient
// or cuDNN kernels): "ScaledDotProductFlashAttention", "ScaledDotProductEfficientAttention",
// "ScaledDotProductCudnnAttention", "ScaledDotProductFlashAttentionForCpu".
bool is_fused_attention(const std::string& op);

}  // namespace orrery
