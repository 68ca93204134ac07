#include "formats/torchviz/tensor_shape.h"

namespace orrery {

int64_t TensorShape::numel() const {
  int64_t n = 1;
  for (const Dim& d : dims)
    n = saturating_mul(n, d.size);
  return n;
}

int TensorShape::find(Axis axis) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].axis == axis) return static_cast<int>(i);
  return -1;
}

std::string TensorShape::to_string() const {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i].size);
  return text + ")";
}

TensorShape plain_shape(const std::vector<int64_t>& sizes) {
  TensorShape t;
  for (const int64_t size : sizes)
    t.dims.push_back({Axis::Other, size});
  return t;
}

}  // namespace orrery
