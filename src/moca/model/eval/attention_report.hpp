#pragma once
/// \file attention_report.hpp
/// Files of one window's attention (torch-free): the matrices as CSV, the per-token summaries
/// and a gnuplot heat map laid over the signal (one panel per channel: the time series, each
/// patch shaded by the cls row of the attention rollout, masked patches grey).
#include <nlohmann/json.hpp>
#include <string>

#include "moca/data/windows.hpp"
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

/// The class name of window `row` (its label id when the windows carry no names; "" unlabelled).
std::string class_label(const data::Windows& w, int row);

}  // namespace moca::model
