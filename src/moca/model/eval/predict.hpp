#pragma once
/// \file predict.hpp
/// `moca predict` as one library call: a kept classifier (linprobe/finetune --save-model) applied
/// to every window of a data selection, prepared as its training windows were (the checkpoint's
/// rate and length, its input channels by name or by position). Labels are optional; where the
/// data has them the metrics of `moca metrics` follow.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// What predict_data() applies to what.
struct PredictOptions {
  data::DataOptions data;  ///< the windows (all of them: no split)
  std::string model;       ///< the classifier checkpoint (required)
  bool proba = false;      ///< one probability column per class in the CSV
  ChannelMatch match_channels = ChannelMatch::kName;
  RuntimeOptions runtime;  ///< (the programs' runtime flag group)
  /// std::invalid_argument naming the field (`PredictOptions::model`) and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* P = "PredictOptions";
    v(o.model, Option{P, "model", "--model", "classifier checkpoint (--save-model)"});
    v(o.proba, Option{P, "proba", "--proba", "one probability column per class"});
    v(o.match_channels,
      Option{P, "match_channels", "--match-channels",
             "name (the classifier's input channels by name) | position (the data's channel i is "
             "the classifier's input channel i)"},
      kChannelMatchNames);
  }
};

/// The predictions of one run.
struct Prediction {
  /// window,subject,predicted[,truth][,p_<class>...], one row per window (fields quoted where
  /// they hold a comma, quote or line break).
  std::string csv;
  /// The run: model, data, windows, classes, input channels, notes, predicted counts, and the
  /// metrics where the data has labels.
  nlohmann::json json;
  /// What a person reads: the windows and model, then the confusion table and the metrics, or
  /// "no labels".
  std::string report;
};

/// Opens the data at the classifier's rate and length (described on `log`), prepares and predicts
/// every window. Notes on the preparation go to `log` ("predict: ..."). std::invalid_argument for
/// bad options or data that do not fit the classifier, std::runtime_error for I/O failures.
Prediction predict_data(const PredictOptions& options, std::ostream& log);

}  // namespace moca::model
