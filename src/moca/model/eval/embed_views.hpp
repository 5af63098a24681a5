#pragma once
/// \file embed_views.hpp
/// `moca embed` as one library call: a checkpoint's encoder features of both views (unmasked
/// and masked) of the test windows under one mask each, written as Z_U.npy, Z_M.npy,
/// labels.npy and masks.txt for the policy scorer or any CCA tool.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/model/eval/imputation.hpp"

namespace moca::model {

/// What embed_views() computes and where it writes it.
struct EmbedOptions {
  data::DataOptions data;  ///< the windows (their test part)
  std::string checkpoint;  ///< the pre-trained MAE (required)
  std::string policy = "cross:ratio=0.75";
  std::uint64_t seed = 0;         ///< masks: window i uses Rng(derive_seed(seed, i))
  std::string out_dir = "embed";  ///< created when missing
  int max_windows = 0;            ///< the first N test windows; 0 = all
  InferenceOptions inference;
  /// Throws std::invalid_argument naming the field (`EmbedOptions::max_windows`), its value and
  /// the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp). `moca embed` declares --checkpoint itself (it
  /// also takes several for --pool/--map).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* E = "EmbedOptions";
    v(o.policy, Option{E, "policy", "--policy", "mask policy spec"});
    v(o.seed, Option{E, "seed", "--seed", "seed of the masks (with the window index)"});
    v(o.out_dir, Option{E, "out_dir", "--out", "output folder"});
    v(o.max_windows, Option{E, "max_windows", "--max-windows", "first N test windows (0 = all)",
                            Range::at_least(0)});
    InferenceOptions::schema(o.inference, v);
  }
};

/// Opens the data at the checkpoint's geometry (described on `log`), draws one mask per test
/// window, writes Z_U.npy, Z_M.npy, labels.npy and masks.txt into out_dir (each atomically) and
/// returns the run's description (the caller writes it as embed.json, with its "options").
/// std::invalid_argument for bad options or data, std::runtime_error for I/O failures.
nlohmann::json embed_views(const EmbedOptions& options, std::ostream& log);

}  // namespace moca::model
