#pragma once
// Helpers shared by the model tests (torch-free declarations; implemented in test_checkpoint.cpp).
#include <string>

#include "moca/data/windows.hpp"

namespace moca_test {

/// True when two MAE checkpoints hold bitwise-identical model parameters and buffers;
/// otherwise `why` names the first difference.
bool same_model_parameters(const std::string& a, const std::string& b, std::string& why);

/// A small synthetic window set (6 channels x 200 samples, 7 classes).
moca::data::Windows small_windows(int n, std::uint64_t seed = 0);

/// Windows from..to-1 of `w` (labels and subjects follow).
moca::data::Windows rows(const moca::data::Windows& w, int from, int to);

/// A fresh temporary path for test files (under the build tree).
std::string temp_path(const std::string& name);

}  // namespace moca_test

namespace moca_test {

/// A cpu-small MAE pre-trained once per test process on small_windows(140, 9) (6 epochs,
/// batch 20, cross masking); returns its checkpoint path.
const std::string& shared_checkpoint();

}  // namespace moca_test
