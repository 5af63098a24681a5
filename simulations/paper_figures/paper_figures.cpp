#include "paper_figures.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/gnuplot.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/masking/make_policy.hpp"
#include "study_data.hpp"

namespace moca::sim {

void PaperFiguresOptions::validate() const {
  if (results.empty()) {
    throw std::invalid_argument("PaperFiguresOptions::results is empty");
  }
}

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char ch : s) q += (ch == '"' ? '\'' : ch);
  return q + "\"";
}

struct Figures {
  std::string dir;  // <results>/figures
  bool png;
  json made = json::array();
  std::ostream& log;

  void emit(const std::string& name, const std::string& dat, const std::string& script) {
    const std::string base = dir + "/" + name;
    write_output_text(base + ".dat", dat);
    std::string gp = "set terminal pngcairo size 900,560 font 'DejaVu Sans,10'\nset output " +
                     gnuplot_quoted(base + ".png") + "\nset datafile separator '\\t'\n" + script;
    write_output_text(base + ".gp", gp);
    if (png) {
      const int status = run_gnuplot_script(base + ".gp");
      if (status != 0) {
        throw std::runtime_error("paper_figures: gnuplot failed on " + base + ".gp (status " +
                                 std::to_string(status) + ")");
      }
      made.push_back("figures/" + name + ".png");
      log << "paper_figures: " << base << ".png\n";
    }
  }
};

void sigma1_by_scheme(Figures& f, const json& j) {
  std::ostringstream dat;
  dat << "# label\tscore\tci_low\tci_high\tpaper\n";
  int rows = 0;
  for (const auto& r : j.at("results")) {
    for (const auto& s : r.at("schemes")) {
      const std::string scheme = s.at("scheme");
      double paper = -1;
      if (r.at("part") == "all" && scheme == "cross") paper = 0.925;
      if (r.at("part") == "all" && scheme == "sync") paper = 0.835;
      dat << r.at("features").get<std::string>() << " " << r.at("part").get<std::string>() << " "
          << scheme << "\t" << s.at("score").get<double>() << "\t" << s.at("ci")[0].get<double>()
          << "\t" << s.at("ci")[1].get<double>() << "\t";
      if (paper > 0) {
        dat << paper;
      } else {
        dat << "NaN";
      }
      dat << "\n";
      ++rows;
    }
  }
  if (rows == 0) throw std::runtime_error("paper_figures: simulation_study.json has no scores");
  f.emit(
      "sigma1_by_scheme", dat.str(),
      "set title 'sigma_1(Gamma) by masking scheme (mean over mask draws, 95% CI)'\n"
      "set ylabel 'sigma_1'\nset yrange [0:1.05]\nset xtics rotate by -35\nset grid ytics\n"
      "set key below\nset style fill solid 0.5\nset boxwidth 0.6\n"
      "plot " +
          gnuplot_quoted(f.dir + "/sigma1_by_scheme.dat") +
          " using 0:2:xtic(1) with boxes title 'measured', "
          "'' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle, "
          "'' using 0:5 with points pt 7 ps 1.5 lc rgb 'red' title 'paper (encoder features)'\n");
}

void sigma1_vs_ratio(Figures& f, const json& j) {
  if (!j.contains("ratio_sweep") || j.at("ratio_sweep").empty()) return;
  // One block per (features, scheme), separated by two blank lines for gnuplot's index.
  std::vector<std::string> keys;
  std::map<std::string, std::string> blocks;
  for (const auto& e : j.at("ratio_sweep")) {
    const std::string key =
        e.at("features").get<std::string>() + " " + e.at("scheme").get<std::string>();
    if (!blocks.count(key)) keys.push_back(key);
    std::ostringstream row;
    row << e.at("ratio").get<double>() << "\t" << e.at("score").get<double>() << "\t"
        << e.at("ci")[0].get<double>() << "\t" << e.at("ci")[1].get<double>() << "\n";
    blocks[key] += row.str();
  }
  std::ostringstream dat, plot;
  dat << "# blocks: " << keys.size() << "; columns: ratio\tscore\tci_low\tci_high\n";
  plot << "set title 'sigma_1(Gamma) vs mask ratio'\nset xlabel 'mask ratio'\n"
          "set ylabel 'sigma_1'\nset grid\nset key bottom left\nplot ";
  for (size_t k = 0; k < keys.size(); ++k) {
    dat << "# " << keys[k] << "\n" << blocks[keys[k]] << "\n\n";
    plot << (k ? ", " : "") << gnuplot_quoted(f.dir + "/sigma1_vs_ratio.dat") << " index " << k
         << " using 1:2:3:4 with yerrorlines title " << quote(keys[k]);
  }
  plot << "\n";
  f.emit("sigma1_vs_ratio", dat.str(), plot.str());
}

void coupling_sweep(Figures& f, const json& j) {
  std::vector<std::string> keys;
  std::map<std::string, std::string> blocks;
  for (const auto& p : j.at("points")) {
    const std::string key =
        p.at("features").get<std::string>() + " " + p.at("part").get<std::string>();
    if (!blocks.count(key)) keys.push_back(key);
    const auto& c = p.at("comparison");
    std::ostringstream row;
    row << p.at("coupling").get<double>() << "\t" << c.at("difference").get<double>() << "\t"
        << c.at("ci")[0].get<double>() << "\t" << c.at("ci")[1].get<double>() << "\n";
    blocks[key] += row.str();
  }
  if (keys.empty()) throw std::runtime_error("paper_figures: coupling_sweep.json has no points");
  std::ostringstream dat, plot;
  dat << "# columns: coupling\tdifference (first - second scheme)\tci_low\tci_high\n";
  plot << "set title 'cross - sync score difference vs cross-modal coupling (95% CI)'\n"
          "set xlabel 'generator coupling c'\nset ylabel 'sigma_1(cross) - sigma_1(sync)'\n"
          "set grid\nset key top left\nset xzeroaxis lt -1\nplot ";
  for (size_t k = 0; k < keys.size(); ++k) {
    dat << "# " << keys[k] << "\n" << blocks[keys[k]] << "\n\n";
    plot << (k ? ", " : "") << gnuplot_quoted(f.dir + "/coupling_sweep.dat") << " index " << k
         << " using 1:2:3:4 with yerrorlines title " << quote(keys[k]);
  }
  plot << "\n";
  f.emit("coupling_sweep", dat.str(), plot.str());
}

void score_vs_loss(Figures& f, const json& j) {
  // policy_study's report.json: per policy, the score of the first feature map the study scored
  // (raw where it scored raw) against the seed means of the held-out outcomes.
  const auto maps = j.at("settings").at("features").get<std::vector<std::string>>();
  const std::string map =
      std::find(maps.begin(), maps.end(), "raw") != maps.end() ? "raw" : maps.at(0);
  std::ostringstream dat;
  dat << "# policy\tscore_" << map << "\town_mse\ttask_mse_mean\tprobe_top1\n";
  for (const auto& r : j.at("policies")) {
    const auto& o = r.at("outcomes");
    dat << r.at("policy").get<std::string>() << "\t"
        << r.at("scores").at(map).at("score").get<double>() << "\t"
        << o.at("own_mse").at("mean").get<double>() << "\t"
        << o.at("task_mse_mean").at("mean").get<double>() << "\t"
        << o.at("probe_top1").at("mean").get<double>() << "\n";
  }
  auto value = [&](const char* outcome) -> std::string {
    for (const auto& c : j.at("correlations")) {
      if (c.at("features") != map || c.at("outcome") != outcome) continue;
      const json& rho = c.at("spearman");  // {"degenerate": true} when an outcome is constant
      if (!rho.contains("value")) return "n/a (constant)";
      std::ostringstream s;
      s.precision(3);
      s << rho.at("value").get<double>();
      return s.str();
    }
    throw std::runtime_error("paper_figures: the report has no " + map + "/" + outcome +
                             " correlation");
  };
  std::ostringstream t;
  t << "Spearman(" << map << " score, own MSE) = " << value("own_mse")
    << ", (score, probe top-1) = " << value("probe_top1");
  const std::string d = gnuplot_quoted(f.dir + "/score_vs_loss.dat");
  f.emit("score_vs_loss", dat.str(),
         "set multiplot layout 1,2 title " + quote(t.str()) +
             "\nset grid\nset xlabel 'policy score E_m[Phi(m)]'\nset ylabel 'held-out MSE (own "
             "policy masks)'\nplot " +
             d + " using 2:3 with points pt 7 notitle, " + d +
             " using 2:3:1 with labels font ',7' offset 0,0.7 notitle\n"
             "set ylabel 'linear-probe accuracy'\nplot " +
             d + " using 2:5 with points pt 7 notitle, " + d +
             " using 2:5:1 with labels font ',7' offset 0,0.7 notitle\nunset multiplot\n");
}

void confusions(Figures& f, const json& j) {
  int k = 0;
  for (const auto& r : j.at("rows")) {
    for (const char* part : {"linear_probe", "finetune"}) {
      if (!r.contains(part)) continue;
      const auto& cm = r.at(part).at("confusion");
      std::ostringstream dat;
      dat << "# confusion matrix (row = true class, column = predicted), counts\n";
      for (size_t a = 0; a < cm.size(); ++a) {
        for (size_t b = 0; b < cm[a].size(); ++b) {
          dat << b << "\t" << a << "\t" << cm[a][b].get<long>() << "\n";
        }
        dat << "\n";
      }
      const std::string name = "confusion_" + std::to_string(k++);
      f.emit(name, dat.str(),
             "set title " + quote(r.at("model").get<std::string>() + " - " + part) +
                 "\nset xlabel 'predicted'\nset ylabel 'true'\nset yrange [] reverse\n"
                 "set palette defined (0 'white', 1 'steelblue')\nset xtics 1\nset ytics 1\n"
                 "plot " +
                 gnuplot_quoted(f.dir + "/" + name + ".dat") +
                 " using 1:2:3 with image notitle, '' using "
                 "1:2:3 with labels font ',8' notitle\n");
    }
  }
}

void ablation(Figures& f, const json& j, const std::string& name, const std::string& xlabel) {
  std::ostringstream dat;
  dat << "# value\tlinear_probe_accuracy\tfinetune_accuracy\n";
  for (const auto& r : j.at("rows")) {
    dat << r.at("value").dump() << "\t" << r.at("linear_probe").at("accuracy").get<double>()
        << "\t";
    if (r.contains("finetune")) {
      dat << r.at("finetune").at("accuracy").get<double>();
    } else {
      dat << "NaN";
    }
    dat << "\n";
  }
  f.emit(name, dat.str(),
         "set title " + quote(name + " (CPU scale)") + "\nset xlabel " + quote(xlabel) +
             "\nset ylabel 'top-1 accuracy'\nset grid\nplot " +
             gnuplot_quoted(f.dir + "/" + name + ".dat") +
             " using 1:2 with linespoints pt 7 title 'linear probe', '' using 1:3 with "
             "linespoints pt 5 title 'fine-tune'\n");
}

/// The label-fraction ablation: linear-probe accuracy of cross and sync against the share of
/// labelled training windows (log x).
void label_fraction_figure(Figures& f, const json& j) {
  std::ostringstream dat;
  dat << "# fraction\tcross_lp_accuracy\tsync_lp_accuracy\n";
  for (const auto& r : j.at("rows")) {
    dat << r.at("value").dump() << "\t" << r.at("cross").at("accuracy").get<double>() << "\t"
        << r.at("sync").at("accuracy").get<double>() << "\n";
  }
  const std::string name = "ablation_label_fraction";
  f.emit(name, dat.str(),
         "set title " + quote("label fraction (CPU scale)") +
             "\nset xlabel 'share of labelled training windows'\nset logscale x\n"
             "set ylabel 'top-1 accuracy (linear probe)'\nset grid\nset key bottom right\nplot " +
             gnuplot_quoted(f.dir + "/" + name + ".dat") +
             " using 1:2 with linespoints pt 7 title 'MoCA cross', '' using 1:3 with "
             "linespoints pt 5 title 'MAE sync'\n");
}

/// The input-length ablation: linear-probe accuracy of the cross model against the seconds of
/// input it is probed at (the model's own length marked).
void input_length_figure(Figures& f, const json& j) {
  std::ostringstream dat;
  dat << "# seconds\tlength\tcross_lp_accuracy\n";
  for (const auto& r : j.at("rows")) {
    dat << r.at("value").dump() << "\t" << r.at("length").get<int>() << "\t"
        << r.at("cross").at("accuracy").get<double>() << "\n";
  }
  const std::string name = "ablation_input_length";
  const double own_seconds =
      j.at("model_length").get<double>() / j.at("sample_rate_hz").get<double>();
  f.emit(name, dat.str(),
         "set title " +
             quote("input length (CPU scale; one model, pre-trained at " +
                   format_number(own_seconds) + " s)") +
             "\nset xlabel 'seconds of input'\nset ylabel 'top-1 accuracy (linear probe)'\n"
             "set grid\nset key bottom right\nset arrow from " +
             format_number(own_seconds) + ", graph 0 to " + format_number(own_seconds) +
             ", graph 1 nohead dt 2\nplot " + gnuplot_quoted(f.dir + "/" + name + ".dat") +
             " using 1:3 with linespoints pt 7 title 'MoCA cross'\n");
}

/// The imputation table (imputation.json) as grouped bars: masked-sample MAE per task and method.
void imputation_bars(Figures& f, const json& j) {
  std::vector<std::string> tasks, methods;
  std::map<std::pair<std::string, std::string>, double> mae;
  for (const auto& c : j.at("table").at("cells")) {
    const auto task = c.at("task").get<std::string>(), method = c.at("method").get<std::string>();
    if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) tasks.push_back(task);
    if (std::find(methods.begin(), methods.end(), method) == methods.end()) {
      methods.push_back(method);
    }
    mae[{task, method}] = c.at("applicable").get<bool>() ? c.at("mae").get<double>() : -1.0;
  }
  std::ostringstream dat, plot;
  dat << "# task";
  for (const auto& m : methods) dat << "\t" << quote(m);
  dat << "\n";
  for (const auto& t : tasks) {
    dat << quote(t.substr(0, t.find(':')));
    for (const auto& m : methods) {
      const auto it = mae.find({t, m});
      if (it == mae.end() || it->second < 0) {
        dat << "\tNaN";
      } else {
        dat << "\t" << it->second;
      }
    }
    dat << "\n";
  }
  plot << "set title 'imputation: masked-sample MAE per task (models beside the baselines, same "
          "masks)'\nset ylabel 'MAE'\nset style data histograms\nset style histogram "
          "clustered gap 1\nset style fill solid 0.8 border -1\nset key outside right\n"
          "set grid ytics\nset yrange [0:*]\nplot ";
  for (size_t m = 0; m < methods.size(); ++m) {
    plot << (m ? ", " : "") << gnuplot_quoted(f.dir + "/imputation.dat") << " using " << m + 2
         << (m ? "" : ":xtic(1)") << " title " << quote(methods[m]);
  }
  plot << "\n";
  f.emit("imputation", dat.str(), plot.str());
}

/// An example window of the built-in generator (the first walking window of seed 0) on its
/// modality x time-patch grid (Lp = 20), with one cross-modality mask (ratio 0.75, drawn from
/// Rng(derive_seed(0, 0))) shaded: the grid the theory section's policies act on.
void example_window(Figures& f) {
  data::SyntheticOptions so;
  so.windows = 14;
  const data::Windows all = data::generate_synthetic(so);
  int row = 0;
  for (int i = 0; i < all.size(); ++i) {
    if (all.class_names[static_cast<size_t>(all.labels(i))] == "walking") {
      row = i;
      break;
    }
  }
  const data::Windows w = all.subset({row});
  constexpr int kLp = 20;
  const masking::Grid grid = masking::make_grid(w.channels, w.length, kLp);
  masking::PolicyContext context;
  context.pilot = &w;
  Rng rng(derive_seed(0, 0));
  const masking::Mask mask =
      masking::make_policy("cross:ratio=0.75", grid, context)->sample(rng, w.window(0));
  std::ostringstream dat, plot;
  dat << "# t";
  for (const auto& n : w.channel_names) dat << "\t" << n;
  dat << "\t(generator seed 0, window " << row << ", class walking)\n";
  for (int t = 0; t < w.length; ++t) {
    dat << t;
    for (int c = 0; c < w.channels; ++c) dat << "\t" << w.x(0, c * w.length + t);
    dat << "\n";
  }
  plot << "set terminal pngcairo size 900," << 120 * w.channels + 80 << " font 'DejaVu Sans,9'\n"
       << "set output " << gnuplot_quoted(f.dir + "/example_window.png") << "\n"
       << "set multiplot layout " << w.channels << ",1 title 'a synthetic walking window on its "
       << w.channels << " x " << grid.patches
       << " grid of (modality, time patch) tokens (Lp = " << kLp
       << "); grey: one cross-modality mask, ratio 0.75'\n"
       << "set termoption noenhanced\nset key off\nset lmargin 10\nset xrange [0:" << w.length - 1
       << "]\n"
       << "set xtics " << kLp << " format ''\nset grid xtics lt 1 lc rgb '#808080' lw 0.6\n";
  for (int c = 0; c < w.channels; ++c) {
    plot << "unset object\n";
    int obj = 1;
    for (int p = 0; p < grid.patches; ++p) {
      if (!mask.masked(c, p)) continue;
      plot << "set object " << obj++ << " rect from " << p * kLp - 0.5 << ", graph 0 to "
           << (p + 1) * kLp - 0.5 << ", graph 1 fc rgb '#d9d9d9' fs solid noborder behind\n";
    }
    if (c + 1 == w.channels) plot << "set xtics format '%g'\nset xlabel 'sample (50 Hz)'\n";
    plot << "set ylabel " << quote(w.channel_names[static_cast<size_t>(c)]) << "\nplot "
         << gnuplot_quoted(f.dir + "/example_window.dat") << " using 1:" << c + 2
         << " with lines lc rgb 'black' lw 1.1\n";
  }
  plot << "unset multiplot\n";
  f.emit("example_window", dat.str(), plot.str());
}

}  // namespace

nlohmann::json run_paper_figures(const PaperFiguresOptions& options, std::ostream& log) {
  options.validate();
  if (options.png && !gnuplot_available()) {
    throw std::runtime_error("paper_figures: gnuplot not found (install gnuplot-nox, or --no-png)");
  }
  Figures f{options.results + "/figures", options.png, json::array(), log};
  fs::create_directories(f.dir);
  json skipped = json::array();
  auto with = [&](const std::string& file, auto fn) {
    const std::string path = options.results + "/" + file;
    if (!fs::exists(path)) {
      skipped.push_back(file);
      return;
    }
    fn(read_json_file(path));
  };
  try {
    with("simulation_study.json", [&](const json& j) {
      sigma1_by_scheme(f, j);
      sigma1_vs_ratio(f, j);
    });
    with("coupling_sweep.json", [&](const json& j) { coupling_sweep(f, j); });
    with("theory_vs_training/report.json", [&](const json& j) { score_vs_loss(f, j); });
    with("table1.json", [&](const json& j) { confusions(f, j); });
    with("ablation_mask_ratio.json",
         [&](const json& j) { ablation(f, j, "ablation_mask_ratio", "mask ratio"); });
    with("ablation_patch_length.json",
         [&](const json& j) { ablation(f, j, "ablation_patch_length", "patch length Lp"); });
    with("ablation_label_fraction.json", [&](const json& j) { label_fraction_figure(f, j); });
    with("ablation_input_length.json", [&](const json& j) { input_length_figure(f, j); });
    with("imputation.json", [&](const json& j) { imputation_bars(f, j); });
    example_window(f);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("paper_figures: malformed results: ") + e.what());
  }
  return {{"figures", f.made}, {"skipped", skipped}};
}

}  // namespace moca::sim
