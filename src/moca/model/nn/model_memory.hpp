#pragma once
/// \file model_memory.hpp
/// A rough analytic estimate of the memory one pre-training step needs (torch-free), checked
/// before training on the CPU so that an oversized batch is refused with the numbers instead of
/// ending in std::bad_alloc or the OOM killer.
#include "moca/model/model_options.hpp"

namespace moca::model {

/// Bytes of the activations autograd keeps for one MAE step on `batch` windows with `visible`
/// tokens kept per window, fp32, doubled for the backward pass's temporaries. Per transformer
/// block of N tokens, width D, h heads and MLP ratio r: (10 + 2r) N D floats (LayerNorms, q/k/v,
/// attention output and projection, MLP hidden and output) plus 2 h N^2 (scores and softmax);
/// encoder blocks have N = visible + 1, decoder blocks N = T + 1. Parameters and optimizer state
/// are not counted (small beside the activations at the batch sizes that matter). An estimate
/// for refusing hopeless runs, not an exact figure.
double mae_step_activation_bytes(const MocaOptions& options, int batch, int visible);

}  // namespace moca::model
