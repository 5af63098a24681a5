#pragma once
// Helpers shared by the model tests (torch-free declarations; implemented in test_checkpoint.cpp).
#include <cstdlib>
#include <string>

#include "moca/data/windows.hpp"
#include "moca/model/model_options.hpp"

namespace moca_test {

/// A micro MAE (6 x 40 windows, patches of 4: 60 tokens; encoder 32 wide, 2 blocks of 4 heads;
/// decoder 16 wide, 1 block of 2 heads) for tests that train or compare steps in seconds.
inline moca::model::MocaOptions micro_mae(
    moca::model::TokenLayout layout = moca::model::TokenLayout::kModality) {
  moca::model::MocaOptions o;
  o.channels = 6;
  o.length = 40;
  o.patch_length = 4;
  o.layout = layout;
  o.embed_dim = 32;
  o.depth = 2;
  o.num_heads = 4;
  o.decoder_embed_dim = 16;
  o.decoder_depth = 1;
  o.decoder_num_heads = 2;
  return o;
}

/// True when two MAE checkpoints hold bitwise-identical model parameters and buffers;
/// otherwise `why` names the first difference.
bool same_model_parameters(const std::string& a, const std::string& b, std::string& why);

/// A small synthetic window set (6 channels x 200 samples, 7 classes).
moca::data::Windows small_windows(int n, std::uint64_t seed = 0);

/// Windows from..to-1 of `w` (labels and subjects follow).
moca::data::Windows rows(const moca::data::Windows& w, int from, int to);

/// A fresh temporary path for test files (under the build tree, or $MOCA_TEST_TMPDIR).
std::string temp_path(const std::string& name);

/// Whether oneDNN's f32 GEMM runs its AVX-512 kernels here, which give an element of C the same
/// bits whatever the extent of the row (column) block it is computed in, so that sgemm_rm's cut
/// into one block per thread is bit-identical across thread counts (the earlier CI machines and
/// an AMD Zen 4 in issue 37). Its AVX2 kernels choose their blocking and tail panels by the
/// call's extent: on an AVX2 CPU (AMD EPYC of this project's VM, 2026-11-27) a product cut
/// into 2 or 3 blocks differs from one call in the last bits of a few thousand elements, so
/// there results across thread counts agree to rounding only (docs/model.md). A cap through
/// ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA counts as AVX2.
inline bool onednn_blocks_bit_stable() {
  if (std::getenv("ONEDNN_MAX_CPU_ISA") != nullptr || std::getenv("DNNL_MAX_CPU_ISA") != nullptr) {
    return false;
  }
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

}  // namespace moca_test

namespace moca_test {

/// A cpu-small MAE pre-trained once per test process on small_windows(140, 9) (6 epochs,
/// batch 20, cross masking); returns its checkpoint path.
const std::string& shared_checkpoint();

}  // namespace moca_test
