#pragma once
/// \file inference_batches.hpp
/// Internal (torch-free): what the inference passes share (imputation_torch.cpp,
/// encoder_features.cpp): the check that windows fit a checkpoint's model, and batches of rows
/// with equal token counts.
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/model/io/checkpoint.hpp"

namespace moca::model::detail {

/// Validates `w` and checks that its window length is the model's; std::invalid_argument
/// starting with `who` otherwise.
void check_fits(const CheckpointInfo& info, const data::Windows& w, const char* who);

/// Row groups with equal visible-token counts (the encoder needs equal counts per batch),
/// each split into chunks of at most `batch` rows.
std::vector<std::vector<int>> batches_by_count(const std::vector<int>& counts, int batch);

}  // namespace moca::model::detail
