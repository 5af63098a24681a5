#pragma once
/// \file runtime.hpp
/// Where and how torch computes: device choice and CPU threads (torch-free options).
#include <string>

namespace moca::model {

/// Device and threading of a run. Setting up a run (every training and inference entry point)
/// also tunes glibc's allocator once per process (blocks up to 32 MiB stay in the heap, the
/// heap is not trimmed), which avoids page-faulting fresh memory for every step's tensors.
struct RuntimeOptions {
  /// "auto" (CUDA when available, else CPU), "cpu" or "cuda". Default "auto".
  std::string device = "auto";
  /// Intra-op CPU threads; 0 (default) = the machine's hardware cores. LibTorch as packaged here
  /// starts with 1 thread, so every entry point sets this explicitly. Range 0..1024.
  int threads = 0;
  /// Throws std::invalid_argument naming the field, value and rule.
  void validate() const;
  /// The thread count actually used (threads, or the hardware cores when 0).
  int effective_threads() const;
};

/// True when this LibTorch build sees a CUDA device.
bool cuda_available();

}  // namespace moca::model
