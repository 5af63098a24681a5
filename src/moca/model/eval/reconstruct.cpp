#include "moca/model/eval/reconstruct.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/io/checkpoint.hpp"

namespace moca::model {

void ReconstructOptions::validate() const {
  if (checkpoint.empty()) {
    throw_invalid("ReconstructOptions::validate()", "checkpoint is required");
  }
  check_ranges(*this);  // the rows' ranges (schema): window
  if (out.empty() || out.find('\'') != std::string::npos || out.find('"') != std::string::npos) {
    throw_invalid("", "ReconstructOptions::out", "'" + out + "'",
                  "must be a non-empty path without quotes");
  }
  inference.runtime.validate();
}

std::vector<std::string> channel_labels(const data::Windows& w) {
  std::vector<std::string> names = w.channel_names;
  for (int c = static_cast<int>(names.size()); c < w.channels; ++c)
    names.push_back("ch" + std::to_string(c));
  return names;
}

namespace {

using Imputed = std::vector<std::pair<std::string, data::RowMatrixXf>>;

// The CSV t, <ch>, <ch>_rec, <ch>_masked, ... of window 0 of `one`, then per baseline
// <ch>_<baseline> of every channel; fills r's masked-sample errors.
std::string reconstruction_csv(const data::Windows& one, const data::RowMatrixXf& rec,
                               const Imputed& baselines, int patch_length,
                               const std::vector<std::string>& names, ReconstructResult& r) {
  const int C = one.channels, L = one.length;
  std::ostringstream csv;
  csv << "t";
  for (const auto& n : names) csv << "," << n << "," << n << "_rec," << n << "_masked";
  for (const auto& b : baselines)
    for (const auto& n : names) csv << "," << n << "_" << b.first;
  csv << "\n";
  csv.precision(9);
  double abs_sum = 0.0, sq_sum = 0.0;
  for (int t = 0; t < L; ++t) {
    csv << t;
    for (int c = 0; c < C; ++c) {
      const Eigen::Index col = static_cast<Eigen::Index>(c) * L + t;
      const bool masked = r.mask.masked(c, t / patch_length);
      csv << "," << one.x(0, col) << "," << rec(0, col) << "," << (masked ? 1 : 0);
      if (masked) {
        const double d = static_cast<double>(rec(0, col)) - one.x(0, col);
        abs_sum += std::abs(d);
        sq_sum += d * d;
        ++r.masked_samples;
      }
    }
    for (const auto& b : baselines)
      for (int c = 0; c < C; ++c) csv << "," << b.second(0, static_cast<Eigen::Index>(c) * L + t);
    csv << "\n";
  }
  if (r.masked_samples > 0) {
    r.mae_masked = abs_sum / r.masked_samples;
    r.mse_masked = sq_sum / r.masked_samples;
  }
  return csv.str();
}

// Colours of the baselines' curves (linear, nearest, MICE).
constexpr const char* kBaselineColours[] = {"#1f77b4", "#2ca02c", "#ff7f0e"};

// gnuplot: one panel per channel, masked patches shaded, original black, reconstruction red,
// the baselines (columns after the 3 C model columns) in kBaselineColours.
std::string gnuplot_script(const ReconstructResult& r, const masking::Grid& grid, int length,
                           const std::vector<std::string>& names, const std::string& title,
                           const std::string& png) {
  const int C = grid.channels, Lp = grid.patch_length;
  std::string legend = "shaded = masked, black = original, red = reconstruction";
  for (size_t b = 0; b < r.baselines.size(); ++b) {
    legend += std::string(", ") +
              (b == 0   ? "blue"
               : b == 1 ? "green"
                        : "orange") +
              " = " + r.baselines[b].first;
  }
  std::ostringstream gp;
  gp << "set datafile separator ','\n"
     << "set terminal pngcairo size 1000," << 170 * C + 60 << " font ',9'\n"
     << "set output " << gnuplot_quoted(png) << "\n"
     << "set multiplot layout " << C << ",1 title '" << title << " (" << legend << ")'\n"
     << "set termoption noenhanced\nset lmargin 10\nset key off\nset xrange [0:" << length - 1
     << "]\n";
  for (int c = 0; c < C; ++c) {
    gp << "unset object\n";
    int obj = 1;
    for (int p = 0; p < grid.patches; ++p) {
      if (r.mask.masked(c, p)) {
        gp << "set object " << obj++ << " rect from " << p * Lp - 0.5 << ", graph 0 to "
           << (p + 1) * Lp - 0.5 << ", graph 1 fc rgb '#d9d9d9' fs solid noborder behind\n";
      }
    }
    gp << "set ylabel '" << names[static_cast<size_t>(c)] << "'\n"
       << "plot " << gnuplot_quoted(r.csv) << " every ::1 using 1:" << 2 + 3 * c
       << " with lines lc rgb 'black' lw 1.2";
    for (size_t b = 0; b < r.baselines.size() && b < 3; ++b) {
      gp << ", '' every ::1 using 1:" << 2 + 3 * C + static_cast<int>(b) * C + c
         << " with lines lc rgb '" << kBaselineColours[b] << "' lw 0.9 dt 2";
    }
    gp << ", '' every ::1 using 1:" << 3 + 3 * c << " with lines lc rgb '#d62728' lw 1.2\n";
  }
  gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace

ReconstructResult reconstruct_window(const ReconstructOptions& o, const data::Windows& windows,
                                     std::ostream& log) {
  o.validate();
  windows.validate("reconstruct_window(): windows");
  if (o.window >= windows.size()) {
    throw_invalid("reconstruct_window()", "window (" + std::to_string(o.window) + ") must be < " +
                                              std::to_string(windows.size()) +
                                              " (the number of windows)");
  }
  const CheckpointInfo info = read_checkpoint_info(o.checkpoint);
  const masking::Grid grid =
      masking::make_grid(windows.channels, windows.length, info.model.patch_length);
  masking::PolicyContext context;
  context.pilot = &windows;  // the data's modality groups
  const auto policy = masking::make_policy(o.policy, grid, context);
  data::Windows one = windows.subset({o.window});
  Rng rng(derive_seed(o.seed, static_cast<std::uint64_t>(o.window)));
  ReconstructResult r;
  r.mask = policy->sample(rng, one.window(0));
  const data::RowMatrixXf rec = reconstruct_with_model(o.checkpoint, one, {r.mask}, o.inference);
  Imputed baselines;
  if (o.baselines) {
    // Over the whole set, window i masked by Rng(derive_seed(seed, i)) as this window is, so the
    // pooled statistics (channel means, MICE's regressions) come from the set, as in the table.
    std::vector<masking::Mask> masks;
    for (int i = 0; i < windows.size(); ++i) {
      Rng ri(derive_seed(o.seed, static_cast<std::uint64_t>(i)));
      masks.push_back(i == o.window ? r.mask : policy->sample(ri, windows.window(i)));
    }
    MiceOptions mice = o.mice;
    mice.seed = o.seed;
    const Imputed all = {{"linear", impute_linear(windows, masks, grid)},
                         {"nearest", impute_nearest(windows, masks, grid)},
                         {"mice", impute_mice(windows, masks, grid, mice)}};
    for (const auto& [name, x] : all) {
      baselines.push_back({name, x.row(o.window)});
      r.baselines.push_back({name, imputation_error(one, baselines.back().second, {r.mask}, grid)});
    }
  }

  const std::vector<std::string> names = channel_labels(windows);
  r.csv = o.out + ".csv";
  write_output_text(r.csv, reconstruction_csv(one, rec, baselines, grid.patch_length, names, r));
  log << "window " << o.window << ", policy " << policy->spec() << ", mask:\n"
      << r.mask.to_string() << "\nmasked samples " << r.masked_samples << ": MAE " << r.mae_masked
      << ", MSE " << r.mse_masked << "\n";
  for (const auto& b : r.baselines)
    log << b.first << ": MAE " << b.second.mae << ", MSE " << b.second.mse << "\n";
  log << "wrote " << r.csv << "\n";
  if (!o.png) return r;

  r.png = o.out + ".png";
  r.script = o.out + ".gp";
  const std::string tmp_png = r.png + ".tmp.png";
  const std::string title = "window " + std::to_string(o.window) + " - " + policy->spec();
  write_output_text(r.script, gnuplot_script(r, grid, windows.length, names, title, tmp_png));
  run_gnuplot(r.script, tmp_png, r.png, "reconstruct_window()");
  log << "wrote " << r.png << "\n";
  return r;
}

}  // namespace moca::model
