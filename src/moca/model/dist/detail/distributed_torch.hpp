#pragma once
/// \file distributed_torch.hpp
/// Internal torch side of distributed.hpp: parameter broadcast and the bucketed gradient
/// all-reduce of the data-parallel training loops. Include only from torch translation units of
/// src/moca/model (and the model tests).
#include <torch/torch.h>

#include <string>
#include <vector>

#include "moca/model/dist/distributed.hpp"

namespace moca::model::detail {

/// The CUDA device of local rank `local_rank` (local_rank modulo the visible devices), made the
/// current device of this process.
torch::Device local_cuda_device(int local_rank);

/// Collective: copies rank 0's parameters and buffers into every rank's `module` (no-op in a
/// world of one).
void broadcast_module(Collective& comm, torch::nn::Module& module);

/// Averages gradients over ranks the way one process would compute them for the global batch:
/// every rank scales its gradients by its weight in the global loss (its share of the global
/// batch, or of the masked patches for a masked-only loss), and the weighted gradients are
/// summed with one all-reduce per bucket of flattened gradients (about `bucket_bytes` each,
/// launched together, waited together). A parameter whose gradient is undefined on every rank
/// stays undefined (so the optimiser skips it, as in one process); undefined elsewhere counts
/// as zero. Scalars (the weighted loss, the stop votes) travel in the same round as doubles.
class GradientReducer {
 public:
  GradientReducer(Collective& comm, std::vector<torch::Tensor> params,
                  std::size_t bucket_bytes = std::size_t{25} << 20);
  /// Collective. Returns the scalars summed over ranks. `what` names the step in errors.
  std::vector<double> reduce(double weight, const std::vector<double>& scalars,
                             const std::string& what);
  /// Seconds spent in reduce() so far (copying in and out included).
  double seconds() const { return seconds_; }
  int buckets() const { return static_cast<int>(buckets_.size()); }

 private:
  Collective& comm_;
  std::vector<torch::Tensor> params_;
  std::vector<std::vector<std::size_t>> buckets_;  ///< parameter indices per bucket
  double seconds_ = 0.0;
};

}  // namespace moca::model::detail
