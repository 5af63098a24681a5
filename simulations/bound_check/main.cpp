// bound_check: numerical check of the paper's Remark L_MAE = 2c^2 - 2A + xi on a trained
// model. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "bound_check.hpp"
#include "data_flags.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  moca::sim::BoundCheckOptions o;
  std::string policies = "cross:ratio=0.75,sync:ratio=0.75";
  CLI::App app{
      "bound_check: L_MAE = 2c^2 - 2A + xi, |xi| <= eps + 2 sqrt(eps (2c^2 - 2A)), on "
      "normalised outputs of a trained model"};
  app.add_option("--checkpoint", o.checkpoint, "pre-trained MoCA checkpoint")->required();
  moca::tools::add_data_flags(&app, o.data.data, o.data.dataset);
  app.add_option("--samples", o.data.samples, "training-split size (held out: 3/7 of it)")
      ->capture_default_str();
  app.add_option("--coupling", o.data.coupling, "generator: cross-modal coupling")
      ->capture_default_str();
  app.add_option("--split-seed", o.data.split_seed, "HAPT: seed of the 7:3 split")
      ->capture_default_str();
  app.add_option("--data-seed", o.data.seed, "generator seed")->capture_default_str();
  app.add_option("--policies", policies, "comma-separated policy specs")->capture_default_str();
  app.add_option("--c", o.c, "norm of the normalised outputs")->capture_default_str();
  app.add_option("--seed", o.seed, "mask seed")->capture_default_str();
  app.add_option("--threads", o.threads, "threads (0 = default)")->capture_default_str();
  app.add_option("--json", o.json, "write results as JSON to this file");
  return moca::tools::run_cli("bound_check", app, argc, argv, [&] {
    o.policies = moca::masking::split_spec_list(policies, "--policies");
    moca::sim::run_bound_check(o, std::cout, std::cerr);
    return 0;
  });
}
