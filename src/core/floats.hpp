// A view of floats that someone else owns: a std::vector, or a host's shared weights. The weight exchange reads
// and writes the weights through it in place, whichever of the two holds them.
#pragma once

#include <cstddef>
#include <vector>

namespace fedavg::core {

class Floats {
 public:
  Floats(float* data, std::size_t size) : data_(data), size_(size) {}
  // Implicit: every std::vector<float> the exchange used to take is such a view of itself.
  Floats(std::vector<float>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT(google-explicit-constructor)

  float* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  float* begin() const { return data_; }
  float* end() const { return data_ + size_; }
  float& operator[](std::size_t i) const { return data_[i]; }

 private:
  float* data_;
  std::size_t size_;
};

}  // namespace fedavg::core
