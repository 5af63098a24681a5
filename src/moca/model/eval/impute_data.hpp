#pragma once
/// \file impute_data.hpp
/// `moca impute` as one library call: the imputation tasks (evaluate_imputation) on the first
/// test windows of a data selection, opened at the first checkpoint's geometry.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/model/eval/imputation.hpp"

namespace moca::model {

/// What impute_data() evaluates on which windows.
struct ImputeDataOptions {
  data::DataOptions data;  ///< the windows (their test part; a random 7:3 split by default)
  ImputeOptions impute;
  int max_windows = 0;  ///< the first N test windows; 0 = all

  ImputeDataOptions() { data.split = data::SplitKind::kRandom; }
  /// std::invalid_argument naming the field (`ImputeDataOptions::max_windows`), its value and
  /// the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp): ImputeOptions' and --max-windows.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    ImputeOptions::schema(o.impute, v);
    v(o.max_windows, Option{"ImputeDataOptions", "max_windows", "--max-windows",
                            "first N test windows (0 = all)", Range::at_least(0)});
  }
};

/// The evaluation of one run.
struct ImputeResult {
  nlohmann::json json;  ///< data, windows, seed, MICE settings and the table
  std::string text;     ///< the table as a person reads it, with its heading
};

/// Opens the data (described on `log`), keeps the first test windows and evaluates the tasks.
/// With the default task list and data of one modality group the sensor task (one modality kept)
/// is left out, and `log` says so. std::invalid_argument for bad options or data,
/// std::runtime_error for I/O failures.
ImputeResult impute_data(const ImputeDataOptions& options, std::ostream& log);

}  // namespace moca::model
