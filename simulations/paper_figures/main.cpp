// paper_figures: gnuplot PNGs of the reproduction from the studies' JSON files.
#include <CLI/CLI.hpp>
#include <iostream>

#include "paper_figures.hpp"

int main(int argc, char** argv) {
  moca::sim::PaperFiguresOptions o;
  CLI::App app{"paper_figures: gnuplot figures (PNG, with their .dat and .gp) of the results"};
  app.add_option("--results", o.results, "results folder")->capture_default_str();
  bool no_png = false;
  app.add_flag("--no-png", no_png, "write .dat and .gp only");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "paper_figures: " << e.what() << "\n";
    return 2;
  }
  try {
    o.png = !no_png;
    const auto r = moca::sim::run_paper_figures(o, std::cerr);
    std::cout << r.dump(2) << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "paper_figures: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "paper_figures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
