#include "torch_test.hpp"  // first: see the note there

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <torch/version.h>

#include "moca/model/checkpoint.hpp"
#include "moca/model/detail/cpu_kernels.hpp"
#include "moca/model/downstream.hpp"
#include "moca/model/pretrain.hpp"
#include "test_support.hpp"

// Golden record of the trainer (issue #16). The constants below were captured from the
// pre-refactor trainer (main at 5731053, before pretrain() and train_classifier() were split into
// TrainState / resume_from / train_step / run_epoch / save_checkpoint and make_param_groups /
// evaluate): an independent earlier version of the same code. "Same results bit for bit" means
// these numbers: every loss is compared exactly (hexadecimal literals), the final parameters by
// an FNV-1a hash of their bytes, the classifiers by their predictions. The run resumes once
// (stop_after_iterations, then resume), so the resume path is covered too. CPU, fp32.
// Set MOCA_PRINT_GOLDEN=1 to print the values a run produces (to re-capture after an intended
// change of the numbers, with the reason in the commit).
// One intra-op thread: the old trainer is deterministic at 2 threads too, but its numbers there
// differ from 1 thread's (two batch shards, other reduction orders), so the record pins 1.
// The record predates the CPU attention kernel (detail/attention.hpp, issue #14), which agrees
// with LibTorch's products to float rounding, not bit for bit; the test switches it off so the
// trainer is compared on the path the record was taken on (the kernel has its own tolerance test).

using namespace moca::model;

namespace {

bool print_golden() {
  return std::getenv("MOCA_PRINT_GOLDEN") != nullptr;
}

void print_values(const char* what, const std::vector<double>& v) {
  if (!print_golden()) return;
  std::printf("%s:", what);
  for (double x : v) std::printf(" %a", x);
  std::printf("\n");
}

std::uint64_t fnv1a(std::uint64_t h, const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;

/// FNV-1a over the bytes of every parameter and buffer of a checkpoint's MAE (named order).
std::uint64_t parameter_hash(const std::string& checkpoint) {
  auto ck = moca::model::detail::open_checkpoint(checkpoint);
  MocaMae m(ck.info.model);
  moca::model::detail::load_module(ck, *m);
  std::uint64_t h = kFnvOffset;
  auto feed = [&](const torch::Tensor& t) {
    const torch::Tensor c = t.to(torch::kCPU).contiguous();
    h = fnv1a(h, c.data_ptr(), c.nbytes());
  };
  for (const auto& p : m->named_parameters()) feed(p.value());
  for (const auto& b : m->named_buffers()) feed(b.value());
  return h;
}

std::uint64_t predictions_hash(const std::vector<int>& predicted) {
  return fnv1a(kFnvOffset, predicted.data(), predicted.size() * sizeof(int));
}

std::vector<double> epoch_losses(const PretrainResult& r) {
  std::vector<double> out;
  for (const auto& e : r.history) out.push_back(e.loss);
  return out;
}

std::vector<double> epoch_losses(const DownstreamResult& r) {
  std::vector<double> out;
  for (const auto& e : r.history) out.push_back(e.at("loss").get<double>());
  return out;
}

moca::data::Windows rows(const moca::data::Windows& w, int from, int to) {
  std::vector<int> r;
  for (int i = from; i < to; ++i) r.push_back(i);
  return w.subset(r);
}

struct Golden {
  std::vector<double> pretrain_losses;
  std::uint64_t pretrain_parameters;
  std::vector<double> probe_losses;
  double probe_accuracy;
  std::uint64_t probe_predictions;
  std::vector<double> finetune_losses;
  double finetune_accuracy;
  std::uint64_t finetune_predictions;
  std::vector<double> scratch_losses;
  std::uint64_t scratch_predictions;
};

// clang-format off
const Golden kGolden{
    /*pretrain_losses=*/{0x1.4b72665555555p+0, 0x1.65f9ad5555555p-2, 0x1.d4e711p-3},
    /*pretrain_parameters=*/0x21e2f1ee4c1448e9ull,
    /*probe_losses=*/{0x1.e6b47f5555555p+0, 0x1.c38d73p+0, 0x1.9b0d9aaaaaaabp+0},
    /*probe_accuracy=*/0x1p-2,
    /*probe_predictions=*/0x4edf1a810ebf394ull,
    /*finetune_losses=*/{0x1.f45b1ap+0, 0x1.f3f2d25555555p+0},
    /*finetune_accuracy=*/0x1p-3,
    /*finetune_predictions=*/0xeebe4e4e51c6c683ull,
    /*scratch_losses=*/{0x1.f734365555555p+0},
    /*scratch_predictions=*/0xda6c5c06c8045883ull};
const char* const kTrainingJson =
    R"({"augment":true,"augment_probability":0.5,"batch_size":8,"beta1":0.9,"beta2":0.95,)"
    R"("epochs":3,"layout":"modality","loss":"all","lr":0.001,"min_lr":1e-05,)"
    R"("norm_pix_loss":false,"patch_length":20,"policy":"cross:ratio=0.75","pos_embed":"2d",)"
    R"("preset":"cpu-small","seed":17,"warmup_epochs":1.0,"weight_decay":0.05})";
// clang-format on

/// The record predates the CPU attention kernel, the one-pass AdamW step and the fused Linear
/// layers: all off while it runs (each has its own tolerance test).
struct LibTorchKernels {
  LibTorchKernels() { moca::model::detail::set_cpu_kernels_enabled(false); }
  ~LibTorchKernels() { moca::model::detail::set_cpu_kernels_enabled(true); }
  LibTorchKernels(const LibTorchKernels&) = delete;
  LibTorchKernels& operator=(const LibTorchKernels&) = delete;
};

/// The record's classifier options: `mode`'s defaults with batch 8, no progress bar, and the
/// given checkpoint (empty for scratch), schedule, seed and intra-op threads.
DownstreamOptions recorded_downstream(DownstreamMode mode, const std::string& checkpoint,
                                      int epochs, double warmup_epochs, std::uint64_t seed,
                                      int threads) {
  auto o = downstream_defaults(mode);
  o.checkpoint = checkpoint;
  o.epochs = epochs;
  o.warmup_epochs = warmup_epochs;
  o.batch_size = 8;
  o.progress = false;
  o.seed = seed;
  o.runtime.threads = threads;
  return o;
}

void run_and_compare() {
  const LibTorchKernels plain;
  const int threads = 1;
  const auto w = moca_test::small_windows(64, 41);
  const auto train = rows(w, 0, 48), test = rows(w, 48, 64);
  std::ostringstream log;

  PretrainOptions p;
  p.preset = "cpu-small";
  p.epochs = 3;
  p.batch_size = 8;
  p.warmup_epochs = 1;
  p.lr = 1e-3;
  p.augment = true;
  p.augment_probability = 0.5;
  p.checkpoint = moca_test::temp_path("golden_" + std::to_string(threads) + ".pt");
  p.checkpoint_every = 2;
  p.progress = false;
  p.seed = 17;
  p.runtime.threads = threads;
  p.stop_after_iterations = 9;  // mid-epoch 2 (6 iterations per epoch)
  const auto first = pretrain(p, train, log);
  REQUIRE(first.interrupted);
  p.stop_after_iterations = -1;
  p.resume = true;
  const auto pre = pretrain(p, train, log);
  REQUIRE(pre.finished);
  CHECK(pre.iterations == 18);
  const auto pre_losses = epoch_losses(pre);
  const std::uint64_t pre_hash = parameter_hash(p.checkpoint);
  const std::string training = read_checkpoint_info(p.checkpoint).meta.at("training").dump();

  const auto lin = recorded_downstream(DownstreamMode::kLinearProbe, p.checkpoint,
                                       /*epochs=*/3, /*warmup_epochs=*/1, /*seed=*/3, threads);
  const auto probe = train_classifier(lin, train, test, log);
  const auto fin = recorded_downstream(DownstreamMode::kFinetune, p.checkpoint,
                                       /*epochs=*/2, /*warmup_epochs=*/1, /*seed=*/4, threads);
  const auto tune = train_classifier(fin, train, test, log);
  auto scr = recorded_downstream(DownstreamMode::kScratch, /*checkpoint=*/"",
                                 /*epochs=*/1, /*warmup_epochs=*/0, /*seed=*/5, threads);
  scr.preset = "cpu-small";
  const auto scratch = train_classifier(scr, train, test, log);

  if (print_golden()) std::printf("threads %d\n", threads);
  print_values("pretrain_losses", pre_losses);
  print_values("probe_losses", epoch_losses(probe));
  print_values("finetune_losses", epoch_losses(tune));
  print_values("scratch_losses", epoch_losses(scratch));
  print_values("accuracies", {probe.test.accuracy, tune.test.accuracy});
  if (print_golden()) {
    std::printf("hashes: 0x%llxull 0x%llxull 0x%llxull 0x%llxull\n",
                static_cast<unsigned long long>(pre_hash),
                static_cast<unsigned long long>(predictions_hash(probe.predicted)),
                static_cast<unsigned long long>(predictions_hash(tune.predicted)),
                static_cast<unsigned long long>(predictions_hash(scratch.predicted)));
    std::printf("training: %s\n", training.c_str());
  }

  CHECK(pre_losses == kGolden.pretrain_losses);
  CHECK(pre_hash == kGolden.pretrain_parameters);
  // The checkpoint records the training options as before (names, not enum values), so
  // checkpoints of either version resume under the other.
  CHECK(training == kTrainingJson);
  CHECK(epoch_losses(probe) == kGolden.probe_losses);
  CHECK(probe.test.accuracy == kGolden.probe_accuracy);
  CHECK(predictions_hash(probe.predicted) == kGolden.probe_predictions);
  CHECK(epoch_losses(tune) == kGolden.finetune_losses);
  CHECK(tune.test.accuracy == kGolden.finetune_accuracy);
  CHECK(predictions_hash(tune.predicted) == kGolden.finetune_predictions);
  CHECK(epoch_losses(scratch) == kGolden.scratch_losses);
  CHECK(predictions_hash(scratch.predicted) == kGolden.scratch_predictions);
}

}  // namespace

// The record's bits come from LibTorch 1.13's CPU kernels (Debian's, over OpenBLAS); another
// LibTorch runs the same trainer with other kernels and reduction orders, so the comparison holds
// only with the version it was taken on (scripts/gpu-check.sh builds against PyTorch 2.x).
constexpr bool kRecordedLibTorch = TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR == 13;

TEST_CASE("golden record: pre-training with a resume, linear probe, fine-tune, scratch" *
          doctest::skip(!kRecordedLibTorch)) {
  run_and_compare();
}
