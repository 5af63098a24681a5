#pragma once
/// \file attention_report.hpp
/// `moca attention` as one library call (attention_reports), and the files of one window's
/// attention (torch-free): the matrices as CSV, the per-token summaries and a gnuplot heat map
/// laid over the signal (one panel per channel: the time series, each patch shaded by the cls row
/// of the attention rollout, masked patches grey).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/inspect.hpp"

namespace moca::model {

/// Writes, all atomically, for window `row` of `windows` with attention `a`:
/// `<prefix>_attention.csv` (layer,head,query,key,weight over the cls and visible tokens; query
/// and key are grid indices, 0 = cls, 1 + t = token t), `<prefix>_tokens.csv` (per grid token:
/// channel, patch, visible, per layer the head-mean cls attention and the mean attention
/// received, then the rollout's cls row), `<prefix>_rollout.csv` ((1 + T) x (1 + T)),
/// `<prefix>_signal.csv` and, with `png`, `<prefix>.gp` and `<prefix>.png`. Returns a JSON
/// summary (files, cls attention of the last layer and of the rollout on the C x P grid).
/// std::runtime_error when gnuplot is missing or fails.
nlohmann::json write_attention_report(const WindowAttention& a, const data::Windows& windows,
                                      int row, const std::string& prefix, const std::string& title,
                                      bool png);

/// What `moca attention` inspects and where it writes it.
struct AttentionOptions {
  data::DataOptions data;             ///< the windows (their test part)
  std::string model;                  ///< MAE or classifier checkpoint (required)
  std::vector<int> windows;           ///< test-window indices (at least one)
  std::string policy;                 ///< empty: every token enters; else one mask per window
  std::uint64_t seed = 0;             ///< masks: window i uses Rng(derive_seed(seed, i))
  std::string out_dir = "attention";  ///< created when missing
  bool png = true;                    ///< render the heat maps (else CSV, JSON and the scripts)
  RuntimeOptions runtime;             ///< (the programs' runtime flag group)
  /// std::invalid_argument naming the field (`AttentionOptions::model`) and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* A = "AttentionOptions";
    v(o.model, Option{A, "model", "--model", "MAE or classifier checkpoint"});
    v(o.windows, Option{A, "windows", "--windows", "test-window indices, comma-separated"});
    v(o.policy,
      Option{A, "policy", "--policy", "mask the windows with this policy (default: no mask)"});
    v(o.seed, Option{A, "seed", "--seed", "masks: window i uses derive_seed(seed, i)"});
    v(o.out_dir, Option{A, "out_dir", "--out", "output folder"});
  }
};

/// The options that the others leave without effect: the seed without a policy.
std::vector<UnusedOption> unused_options(const AttentionOptions& options);

/// Opens the data at the checkpoint's geometry (described on `log`), runs the inspection pass on
/// each chosen test window (masked by the policy when one is given), writes each window's report
/// (write_attention_report: out_dir/window_<i>_*) with a line on `out`, and returns the run's
/// description (the caller writes it as attention.json, with its "options").
/// std::invalid_argument for bad options or data, std::runtime_error for I/O failures.
nlohmann::json attention_reports(const AttentionOptions& options, std::ostream& out,
                                 std::ostream& log);

/// The class name of window `row` (its label id when the windows carry no names; "" unlabelled).
std::string class_label(const data::Windows& w, int row);

}  // namespace moca::model
