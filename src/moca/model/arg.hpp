#pragma once
/// \file arg.hpp
/// MOCA_ARG: torch-style chained options without including torch.
///
/// `MOCA_ARG(int, depth) = 12;` declares a private member `depth_` (default 12), a chained setter
/// `depth(int) -> Self&`, a const getter `depth()` and a mutable getter (for CLI binding), exactly
/// like TORCH_ARG, so option structs read `MocaOptions().embed_dim(192).depth(12)`.

#define MOCA_ARG(T, name)                           \
 public:                                            \
  auto name(const T& new_##name)->decltype(*this) { \
    this->name##_ = new_##name;                     \
    return *this;                                   \
  }                                                 \
  const T& name() const noexcept {                  \
    return this->name##_;                           \
  }                                                 \
  T& name() noexcept {                              \
    return this->name##_;                           \
  }                                                 \
                                                    \
 private:                                           \
  T name##_
