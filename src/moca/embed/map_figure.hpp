#pragma once
/// \file map_figure.hpp
/// Scatter figures of 2-D maps (gnuplot PNG), several maps side by side, points coloured by
/// class name: one colour per class name over all panels (names sorted, a fixed 10-colour
/// palette, then repeated), so the same class has the same colour in every panel.
#include <Eigen/Core>
#include <string>
#include <vector>

namespace moca::embed {

/// One map: its title, its n x 2 coordinates and each point's class name.
struct MapPanel {
  std::string title;
  Eigen::MatrixXd coords;
  std::vector<std::string> classes;
};

/// The files written for a figure.
struct MapFigureFiles {
  std::string dat;     ///< the points, one gnuplot block per (panel, class)
  std::string script;  ///< the gnuplot script (kept so the figure can be restyled)
  std::string png;     ///< empty when png was false
};

/// Writes `<prefix>.dat`, `<prefix>.gp` and (png) `<prefix>.png`, all atomically.
/// std::invalid_argument for no panels, coordinates that are not n x 2 or class lists of
/// another length; std::runtime_error when gnuplot is missing or fails.
MapFigureFiles write_map_figure(const std::vector<MapPanel>& panels, const std::string& prefix,
                                const std::string& title, bool png = true);

}  // namespace moca::embed
