// kcca: two-view kernel CCA / linear CCA of two matrices. See docs/kcca.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "enum_option.hpp"
#include "kcca_tool.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  moca::tools::KccaToolOptions o;
  CLI::App app{
      "kcca: regularised kernel CCA (or linear CCA with --cca) of two views given as matrices "
      "with the same number of rows (CSV with optional header, or .npy)"};
  app.add_option("--u", o.u_path, "view u: n x d_u matrix (.csv or .npy)")->required();
  app.add_option("--m", o.m_path, "view m: n x d_m matrix (.csv or .npy)")->required();
  moca::tools::add_enum_option(&app, "--kernel", o.analysis.kernel, moca::kcca::kKernelTypeNames,
                               "linear | rbf | poly | laplacian");
  app.add_option("--sigma", o.analysis.sigma, "bandwidth (> 0) or auto (median heuristic per view)")
      ->capture_default_str();
  app.add_option("--degree", o.analysis.degree, "polynomial degree")->capture_default_str();
  app.add_option("--coef0", o.analysis.coef0, "polynomial offset")->capture_default_str();
  auto* g = app.add_option("--gamma", o.analysis.gamma, "regularisation of both views (> 0)");
  auto* gu = app.add_option("--gamma-u", o.analysis.gamma_u, "regularisation of view u")
                 ->capture_default_str();
  auto* gm = app.add_option("--gamma-m", o.analysis.gamma_m, "regularisation of view m")
                 ->capture_default_str();
  g->excludes(gu)->excludes(gm);
  app.add_flag("--center,!--no-center", o.analysis.center,
               "centre the kernels in feature space (default) or not");
  app.add_option("--components", o.analysis.components, "canonical correlations to report")
      ->capture_default_str();
  moca::tools::add_enum_option(
      &app, "--method", o.analysis.method, moca::kcca::kKccaMethodNames,
      "auto (iterative for few components, else exact) | exact | iterative | lowrank");
  app.add_option("--rank", o.analysis.rank, "rank of the low-rank factors")->capture_default_str();
  app.add_flag("--cca", o.analysis.cca, "linear CCA of the (optionally PCA-reduced) columns");
  app.add_option("--pca", o.analysis.pca, "with --cca: principal components per view (0 = none)")
      ->capture_default_str();
  app.add_option("--ridge", o.analysis.ridge, "with --cca: ridge added to both covariances")
      ->capture_default_str();
  app.add_option("--bootstrap", o.analysis.bootstrap,
                 "bootstrap resamples for a 95% percentile CI of each correlation (0 = none)")
      ->capture_default_str();
  app.add_option("--permutations", o.analysis.permutations,
                 "permutations of view m's rows for each correlation's p-value, per component "
                 "and step-down family-wise (0 = none)")
      ->capture_default_str();
  app.add_option("--seed", o.analysis.seed,
                 "seed (bandwidth subsample, Nystrom, bootstrap, permutations)")
      ->capture_default_str();
  app.add_flag("--json", o.json, "print JSON instead of text");
  app.add_option("--output", o.output, "also write the JSON result to this file");
  // The rows of the other solver (--pca without --cca, --sigma with it) and of other kernels.
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::kcca::unused_options(o.analysis));
  });
  return moca::tools::run_cli("kcca", app, argc, argv, [&] {
    o.recorded_options = moca::tools::config_json(app);
    // --output -: standard output carries the JSON alone, the text goes to stderr.
    return moca::tools::run_kcca(o, moca::tools::report_stream(o.output));
  });
}
