#include "moca/embed/map_figure.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "moca/common/error_text.hpp"
#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"

namespace moca::embed {

namespace {

// Tableau's ten colours (matplotlib's default cycle).
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

}  // namespace

MapFigureFiles write_map_figure(const std::vector<MapPanel>& panels, const std::string& prefix,
                                const std::string& title, bool png) {
  const std::string w = "write_map_figure()";
  if (panels.empty()) throw_invalid(w, "no maps to draw");
  std::set<std::string> names;
  for (const auto& p : panels) {
    if (p.coords.cols() != 2 || static_cast<size_t>(p.coords.rows()) != p.classes.size()) {
      throw_invalid(w, "map '" + p.title + "' has " + std::to_string(p.coords.rows()) + " x " +
                           std::to_string(p.coords.cols()) + " coordinates and " +
                           std::to_string(p.classes.size()) + " class names (needs n x 2 and n)");
    }
    names.insert(p.classes.begin(), p.classes.end());
  }
  const std::vector<std::string> classes(names.begin(), names.end());
  MapFigureFiles f;
  f.dat = prefix + ".dat";
  f.script = prefix + ".gp";
  std::ostringstream dat;
  dat.precision(9);
  dat << "# x\ty\t(one block per map and class: index = map * " << classes.size() << " + class)\n";
  std::vector<std::vector<bool>> drawn(panels.size());  // (map, class) blocks with points
  for (size_t m = 0; m < panels.size(); ++m) {
    const MapPanel& p = panels[m];
    for (const auto& cls : classes) {
      dat << "# " << p.title << " / " << cls << "\n";
      bool any = false;
      for (Eigen::Index i = 0; i < p.coords.rows(); ++i) {
        if (p.classes[static_cast<size_t>(i)] != cls) continue;
        dat << p.coords(i, 0) << "\t" << p.coords(i, 1) << "\n";
        any = true;
      }
      if (!any) dat << "NaN\tNaN\n";  // keeps the block (and the index count) for gnuplot
      dat << "\n\n";
      drawn[m].push_back(any);
    }
  }
  write_output_text(f.dat, dat.str());
  const std::string tmp_png = prefix + ".png.tmp.png";
  std::ostringstream gp;
  const size_t n = panels.size();
  gp << "set terminal pngcairo size " << 440 * n + 40 << ",520 font ',9'\n"
     << "set output " << gnuplot_quoted(tmp_png) << "\nset datafile separator '\\t'\n"
     << "set termoption noenhanced\n"
     << "set multiplot layout 1," << n << " title " << gnuplot_quoted(title) << "\n"
     << "set size ratio -1\nset xtics format ''\nset ytics format ''\n"
     << "set key below horizontal\n";
  for (size_t p = 0; p < n; ++p) {
    gp << "set title " << gnuplot_quoted(panels[p].title) << "\n";
    gp << "plot ";
    bool first = true;
    for (size_t k = 0; k < classes.size(); ++k) {
      if (!drawn[p][k]) continue;
      gp << (first ? "" : ", ") << gnuplot_quoted(f.dat) << " index " << p * classes.size() + k
         << " using 1:2 with points pt 7 ps 0.45 lc rgb '" << kPalette[k % 10] << "' title "
         << gnuplot_quoted(classes[k]);
      first = false;
    }
    gp << "\n";
  }
  gp << "unset multiplot\n";
  write_output_text(f.script, gp.str());
  if (!png) return f;
  f.png = prefix + ".png";
  run_gnuplot(f.script, tmp_png, f.png, w);
  return f;
}

}  // namespace moca::embed
