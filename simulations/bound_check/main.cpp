// bound_check: numerical check of the paper's Remark L_MAE = 2c^2 - 2A + xi on a trained
// model. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bound_check.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "study_flags.hpp"

int main(int argc, char** argv) {
  moca::sim::BoundCheckOptions o;
  std::string policies = "cross:ratio=0.75,sync:ratio=0.75";
  CLI::App app{
      "bound_check: L_MAE = 2c^2 - 2A + xi, |xi| <= eps + 2 sqrt(eps (2c^2 - 2A)), on "
      "normalised outputs of a trained model"};
  app.add_option("--checkpoint", o.checkpoint, "pre-trained MoCA checkpoint")->required();
  moca::sim::add_study_data_flags(&app, o.data, "training-split size (held out: 3/7 of it)");
  app.add_option("--policies", policies, "comma-separated policy specs")->capture_default_str();
  app.add_option("--c", o.c, "norm of the normalised outputs")->capture_default_str();
  app.add_option("--seed", o.seed, "mask seed")->capture_default_str();
  app.add_option("--threads", o.threads, "threads (0 = default)")->capture_default_str();
  app.add_option("--json", o.json, "write results as JSON to this file");
  return moca::tools::run_cli("bound_check", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    o.policies = moca::masking::split_spec_list(policies, "--policies");
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_bound_check(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
