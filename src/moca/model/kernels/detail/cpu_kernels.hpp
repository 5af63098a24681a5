#pragma once
/// \file cpu_kernels.hpp
/// Internal (src/moca/model, the model tests and bench_model_step): the one switch over all of
/// moca's own CPU kernels in the trainer: the attention kernel (attention.hpp), the fused Linear
/// layers (linear.hpp) and the one-pass AdamW step (adamw.hpp). Each has its own switch too.

namespace moca::model::detail {

/// Off: LibTorch's layers and optimiser everywhere (the trainer's golden record, taken before the
/// kernels existed, and bench_model_step --kernels libtorch|both). Default on; process-wide.
void set_cpu_kernels_enabled(bool enabled);

}  // namespace moca::model::detail
