// kcca: two-view kernel CCA / linear CCA of two matrices. See docs/kcca.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "kcca_tool.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

int main(int argc, char** argv) {
  moca::tools::KccaToolOptions o;
  CLI::App app{
      "kcca: regularised kernel CCA (or linear CCA with --cca) of two views given as matrices "
      "with the same number of rows (CSV with optional header, or .npy)"};
  app.add_option("--u", o.u_path, "view u: n x d_u matrix (.csv or .npy)")->required();
  app.add_option("--m", o.m_path, "view m: n x d_m matrix (.csv or .npy)")->required();
  // every analysis option from its schema row (kcca::AnalysisOptions::schema)
  moca::tools::add_schema_options(&app, o.analysis, moca::kEveryScope,
                                  {{"--center", "!--no-center"}});
  app.get_option("--gamma")->excludes("--gamma-u")->excludes("--gamma-m");
  app.add_flag("--json", o.json, "print JSON instead of text");
  app.add_option("--output", o.output, "also write the JSON result to this file");
  // The rows of the other solver (--pca without --cca, --sigma with it) and of other kernels.
  moca::tools::after_parse(nullptr, [&o, &app] {
    moca::tools::inert_fields(app, moca::kcca::unused_options(o.analysis));
  });
  return moca::tools::run_cli("kcca", app, argc, argv, [&] {
    // --output -: standard output carries the JSON alone, the text goes to stderr.
    return moca::tools::run_kcca(o, moca::tools::report_stream(o.output));
  });
}
