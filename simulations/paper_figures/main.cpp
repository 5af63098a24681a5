// paper_figures: gnuplot PNGs of the reproduction from the studies' JSON files.
#include <CLI/CLI.hpp>
#include <iostream>

#include "paper_figures.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

int main(int argc, char** argv) {
  moca::sim::PaperFiguresOptions o;
  CLI::App app{"paper_figures: gnuplot figures (PNG, with their .dat and .gp) of the results"};
  moca::tools::add_schema_options(&app, o, moca::kEveryScope);  // PaperFiguresOptions::schema
  // (not a row: a row on `png` would be --png,--no-png, another name, help and config key)
  bool no_png = false;
  app.add_flag("--no-png", no_png, "write .dat and .gp only");
  return moca::tools::run_cli("paper_figures", app, argc, argv, [&] {
    o.png = !no_png;
    const auto r = moca::sim::run_paper_figures(o, std::cerr);
    std::cout << r.dump(2) << "\n";
    return 0;
  });
}
