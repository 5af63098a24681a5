#pragma once
// Stand-in for LibTorch's torch/csrc/distributed/autograd/context/context.h, which Debian 12's
// libtorch-dev does not ship although c10d/reducer.hpp includes it (the c10d::Reducer symbols
// are in libtorch_cpu). reducer.hpp only names two types from it: the GradCallback alias
// (checked against its own by a static_assert) and ContextPtr, a shared_ptr member that moca
// never touches; every Reducer member function moca calls is compiled in libtorch. Used only
// when the real header is absent (src/moca/model/CMakeLists.txt), for --grad-sync reducer.
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch::distributed::autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};
using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace torch::distributed::autograd
