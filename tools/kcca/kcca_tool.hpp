#pragma once
/// \file kcca_tool.hpp
/// The body of the `kcca` tool: kcca::kcca_analysis_files() of two matrices read from CSV
/// (header optional) or NPY files with the same number of rows, printed as text or JSON.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "moca/kcca/analysis.hpp"

namespace moca::tools {

/// Options of the `kcca` tool: the files, the analysis (one field per flag) and the output.
struct KccaToolOptions {
  std::string u_path;              ///< --u: view u (n x d_u), CSV or .npy
  std::string m_path;              ///< --m: view m (n x d_m)
  kcca::AnalysisOptions analysis;  ///< --kernel, --sigma, ..., --seed (defaults: the tool's)
  bool json = false;               ///< --json: JSON on stdout instead of text
  std::string output;              ///< --output FILE: also write the JSON there (atomically)
};

/// Checks that options.output can be written (check_writable), runs
/// kcca::kcca_analysis_files(), then writes text (or JSON with options.json) to `out` and the
/// JSON to options.output if set; the JSON goes to standard output once when both ask for it.
/// Returns 0.
int run_kcca(const KccaToolOptions& options, std::ostream& out);

}  // namespace moca::tools
