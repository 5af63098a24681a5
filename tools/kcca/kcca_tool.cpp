#include "kcca_tool.hpp"

#include <string>

#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "run_cli.hpp"

namespace moca::tools {

int run_kcca(const KccaToolOptions& options, std::ostream& out) {
  check_writable(options.output, "--output");
  nlohmann::json j =
      kcca::to_json(kcca::kcca_analysis_files(options.analysis, options.u_path, options.m_path));
  record_program_options(j);
  if (!options.output.empty()) write_output_text(options.output, j.dump(2) + "\n");
  if (options.json) {
    // --output - has already put the JSON on standard output: once is enough.
    if (!writes_standard_output(options.output)) out << j.dump(2) << "\n";
    return 0;
  }
  out << "kcca: " << j["analysis"].get<std::string>() << " of " << options.u_path << " ("
      << j["inputs"]["d_u"] << " columns) and " << options.m_path << " (" << j["inputs"]["d_m"]
      << " columns), n = " << j["inputs"]["n"] << "\n";
  if (j["analysis"] == "kcca") {
    out << "kernel " << j["settings"]["kernel"].get<std::string>();
    if (j.contains("sigma_u")) out << " sigma_u " << j["sigma_u"] << " sigma_m " << j["sigma_m"];
    out << ", gamma_u " << j["settings"]["gamma_u"] << " gamma_m " << j["settings"]["gamma_m"]
        << ", " << (j["centered"].get<bool>() ? "centred" : "uncentred") << ", method "
        << j["settings"]["method"].get<std::string>();
    if (j["settings"]["method"] != j["solver"])
      out << " (" << j["solver"].get<std::string>() << ")";
    out << ", status " << j["status"].get<std::string>() << "\n";
    if (j.contains("message")) out << "solver: " << j["message"].get<std::string>() << "\n";
    if (j.contains("approximation_bound")) {
      out << "low-rank bound on |rho^2 - rho~^2|: " << j["approximation_bound"] << "\n";
    }
  } else {
    out << "pca " << j["settings"]["pca"] << ", ridge " << j["settings"]["ridge"] << ", p "
        << j["p"] << ", q " << j["q"] << ", null level (Wachter edge) " << j["null_level"] << "\n";
    if (!j["warning"].get<std::string>().empty()) {
      out << "warning: " << j["warning"].get<std::string>() << "\n";
    }
  }
  out << "correlations:";
  for (const auto& v : j["correlations"]) out << " " << format_number(v.get<double>(), 12);
  out << "\n";
  if (j.contains("bootstrap")) {
    out << "95% bootstrap CIs (" << j["bootstrap"]["resamples"] << " resamples):";
    for (const auto& ci : j["bootstrap"]["intervals"]) {
      out << " [" << format_number(ci[0].get<double>(), 12) << ", "
          << format_number(ci[1].get<double>(), 12) << "]";
    }
    out << "\n";
  }
  if (j.contains("permutation")) {
    out << "permutation p-values (" << j["permutation"]["permutations"]
        << " permutations), per component:";
    for (const auto& p : j["permutation"]["p_values"])
      out << " " << format_number(p.get<double>(), 6);
    out << "; step-down (family-wise):";
    for (const auto& p : j["permutation"]["p_values_step_down"]) {
      out << " " << format_number(p.get<double>(), 6);
    }
    out << "\n";
  }
  return 0;
}

}  // namespace moca::tools
