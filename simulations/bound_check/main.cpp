// bound_check: numerical check of the paper's Remark L_MAE = 2c^2 - 2A + xi on a trained
// model. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bound_check.hpp"
#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#include "study_flags.hpp"

int main(int argc, char** argv) {
  moca::sim::BoundCheckOptions o;
  CLI::App app{
      "bound_check: L_MAE = 2c^2 - 2A + xi, |xi| <= eps + 2 sqrt(eps (2c^2 - 2A)), on "
      "normalised outputs of a trained model"};
  moca::sim::add_study_data_flags(&app, o.data, "training-split size (held out: 3/7 of it)");
  moca::tools::add_schema_options(&app, o, moca::kEveryScope);  // BoundCheckOptions::schema
  app.get_option("--checkpoint")->required();
  moca::sim::show_list_default(app, "--policies", o.policies);
  return moca::tools::run_cli("bound_check", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    // the given texts, split as the flag always did (list_flags.hpp)
    o.policies = moca::masking::split_spec_list(moca::sim::join_list(o.policies), "--policies");
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_bound_check(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
