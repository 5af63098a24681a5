#pragma once
/// \file kcca_score.hpp
/// The body of the `kcca_score` tool: masking::score_data() (the data, the windows scored, the
/// scores), then the tables on `out` and the JSON file. main() only parses flags into
/// KccaScoreOptions and calls run_kcca_score().
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/masking/score_data.hpp"

namespace moca::tools {

/// Options of kcca_score: the library's (defaults as documented in docs/masking.md) and the
/// program's outputs.
struct KccaScoreOptions : masking::DataScoreOptions {
  std::string json;  ///< JSON output file; empty = none
};

/// Runs masking::score_data(): prints the tables to `out`, progress and the data source to
/// `log`, writes the JSON file if asked, and returns the JSON document. Throws
/// std::invalid_argument for bad options (exit 2) and std::runtime_error for I/O or numerical
/// failures (exit 1).
nlohmann::json run_kcca_score(const KccaScoreOptions& options, std::ostream& out,
                              std::ostream& log);

}  // namespace moca::tools
