#pragma once
/// \file study_training.hpp
/// The pre-training the torch studies (policy_study, paper_experiments) run.
/// Header-only: it needs the model layer (moca::model), which only those studies link.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "moca/model/eval/imputation.hpp"
#include "moca/model/train/pretrain.hpp"

namespace moca::sim {

/// Pre-training options of one study run with `policy`: the study's rows of PretrainOptions
/// (`study`: model::kStudyScope and the others it sets), batch_size capped at `train_windows`, on
/// the CPU without a progress bar. The caller sets the checkpoint, the seed and the threads.
inline model::PretrainOptions study_pretrain_options(const model::PretrainOptions& study,
                                                     const std::string& policy, int train_windows) {
  model::PretrainOptions po = study;
  po.policy = policy;
  po.batch_size = std::min(po.batch_size, train_windows);
  po.runtime.device = model::Device::kCpu;
  po.progress = false;
  return po;
}

/// A policy spec as a file or folder name: letters, digits and '.' kept, everything else '_'
/// ("cross:ratio=0.7" -> "cross_ratio_0.7").
inline std::string safe_name(const std::string& spec) {
  std::string s;
  for (char ch : spec) s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.') ? ch : '_';
  return s;
}

/// The held-out reconstruction error of a checkpoint over the samples `masks` hide, on the CPU
/// with `threads` threads (model::masked_reconstruction_error).
inline model::ImputationError heldout_error(const std::string& checkpoint,
                                            const data::Windows& windows,
                                            const std::vector<masking::Mask>& masks, int threads) {
  model::InferenceOptions io;
  io.runtime.device = model::Device::kCpu;
  io.runtime.threads = threads;
  return model::masked_reconstruction_error(checkpoint, windows, masks, io);
}

}  // namespace moca::sim
