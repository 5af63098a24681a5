#include "moca/model/eval/attention_report.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>

#include "moca/common/gnuplot.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/eval/protocol.hpp"
#include "moca/model/eval/reconstruct.hpp"

namespace moca::model {

std::string class_label(const data::Windows& w, int row) {
  const int y = w.labels(row);
  if (y < 0) return "";
  if (y < static_cast<int>(w.class_names.size())) return w.class_names[static_cast<size_t>(y)];
  return std::to_string(y);
}

namespace {

nlohmann::json grid_json(const Eigen::MatrixXd& g) {
  nlohmann::json j = nlohmann::json::array();
  for (Eigen::Index c = 0; c < g.rows(); ++c) {
    std::vector<double> r(static_cast<size_t>(g.cols()));
    for (Eigen::Index p = 0; p < g.cols(); ++p) r[static_cast<size_t>(p)] = g(c, p);
    j.push_back(r);
  }
  return j;
}

std::string heat_map_script(const WindowAttention& a, const data::Windows& windows,
                            const std::vector<std::string>& names, const Eigen::MatrixXd& grid,
                            const std::string& signal_csv, const std::string& title,
                            const std::string& png) {
  const int C = a.channels, Lp = windows.length / a.patches;
  double top = -1.0, low = 2.0;  // the visible cells' range
  for (int c = 0; c < C; ++c)
    for (int p = 0; p < a.patches; ++p)
      if (a.visible[static_cast<size_t>(a.token_of(c, p))]) {
        top = std::max(top, grid(c, p));
        low = std::min(low, grid(c, p));
      }
  std::string safe_title = title;  // inside gnuplot's double quotes
  std::replace(safe_title.begin(), safe_title.end(), '"', '\'');
  std::replace(safe_title.begin(), safe_title.end(), '\\', '/');
  std::ostringstream gp;
  gp << "set datafile separator ','\n"
     << "set terminal pngcairo size 1000," << 150 * C + 70 << " font ',9'\n"
     << "set output " << gnuplot_quoted(png) << "\n"
     << "set multiplot layout " << C << ",1 title \"" << safe_title
     << "\\nshade: cls row of the attention rollout (white " << low << ", red " << top
     << "); grey: masked\"\n"
     << "set termoption noenhanced\nset lmargin 10\nset key off\nset xrange [0:"
     << windows.length - 1 << "]\n";
  for (int c = 0; c < C; ++c) {
    gp << "unset object\n";
    int obj = 1;
    for (int p = 0; p < a.patches; ++p) {
      const bool vis = a.visible[static_cast<size_t>(a.token_of(c, p))];
      const double f = vis && top > low ? (grid(c, p) - low) / (top - low) : 0.0;
      // white -> red (#b2182b) from the window's smallest to its largest attention
      const int r = static_cast<int>(255 - f * (255 - 0xb2)),
                g = static_cast<int>(255 - f * (255 - 0x18)),
                b = static_cast<int>(255 - f * (255 - 0x2b));
      char colour[8];
      std::snprintf(colour, sizeof colour, "#%02x%02x%02x", vis ? r : 0xbd, vis ? g : 0xbd,
                    vis ? b : 0xbd);
      gp << "set object " << obj++ << " rect from " << p * Lp - 0.5 << ", graph 0 to "
         << (p + 1) * Lp - 0.5 << ", graph 1 fc rgb '" << colour << "' fs solid noborder behind\n";
    }
    gp << "set ylabel '" << names[static_cast<size_t>(c)] << "'\n"
       << "plot '" << signal_csv << "' every ::1 using 1:" << 2 + c
       << " with lines lc rgb 'black' lw 1.2\n";
  }
  gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace

nlohmann::json write_attention_report(const WindowAttention& a, const data::Windows& windows,
                                      int row, const std::string& prefix, const std::string& title,
                                      bool png) {
  const int n = a.size(), T = a.tokens;
  const std::vector<std::string> names = channel_labels(windows);
  auto live = [&](int i) { return i == 0 || a.visible[static_cast<size_t>(i - 1)]; };
  nlohmann::json j;
  j["files"] = nlohmann::json::array();
  auto add = [&](const std::string& path, const std::string& text) {
    write_output_text(path, text);
    j["files"].push_back(path);
  };
  {
    std::ostringstream csv;
    csv.precision(9);
    csv << "layer,head,query,key,weight\n";
    for (int l = 0; l < a.layers; ++l)
      for (int h = 0; h < a.heads; ++h)
        for (int i = 0; i < n; ++i)
          for (int k = 0; k < n; ++k)
            if (live(i) && live(k))
              csv << l << "," << h << "," << i << "," << k << "," << a.weight(l, h, i, k) << "\n";
    add(prefix + "_attention.csv", csv.str());
  }
  std::vector<Eigen::MatrixXd> means;
  for (int l = 0; l < a.layers; ++l) means.push_back(a.head_mean(l));
  {
    std::ostringstream csv;
    csv.precision(9);
    csv << "token,channel,patch,visible";
    for (int l = 0; l < a.layers; ++l) csv << ",cls_l" << l << ",received_l" << l;
    csv << ",rollout_cls\n";
    const double live_rows =
        1.0 + static_cast<double>(std::count(a.visible.begin(), a.visible.end(), true));
    for (int t = 0; t < T; ++t) {
      const int c = a.stacked ? -1 : t / a.patches, p = a.stacked ? t : t % a.patches;
      csv << t << "," << (a.stacked ? std::string("all") : names[static_cast<size_t>(c)]) << ","
          << p << "," << (a.visible[static_cast<size_t>(t)] ? 1 : 0);
      for (int l = 0; l < a.layers; ++l)
        csv << "," << means[static_cast<size_t>(l)](0, 1 + t) << ","
            << means[static_cast<size_t>(l)].col(1 + t).sum() / live_rows;
      csv << "," << a.rollout(0, 1 + t) << "\n";
    }
    add(prefix + "_tokens.csv", csv.str());
  }
  {
    std::ostringstream csv;
    csv.precision(9);
    csv << "query";
    for (int k = 0; k < n; ++k) csv << ",k" << k;
    csv << "\n";
    for (int i = 0; i < n; ++i) {
      csv << i;
      for (int k = 0; k < n; ++k) csv << "," << a.rollout(i, k);
      csv << "\n";
    }
    add(prefix + "_rollout.csv", csv.str());
  }
  const std::string signal_csv = prefix + "_signal.csv";
  {
    std::ostringstream csv;
    csv.precision(9);
    csv << "t";
    for (const auto& s : names) csv << "," << s;
    csv << "\n";
    for (int t = 0; t < windows.length; ++t) {
      csv << t;
      for (int c = 0; c < windows.channels; ++c)
        csv << "," << windows.x(row, static_cast<Eigen::Index>(c) * windows.length + t);
      csv << "\n";
    }
    add(signal_csv, csv.str());
  }
  const Eigen::MatrixXd rollout_grid = a.on_grid(a.rollout.row(0).transpose());
  j["cls_attention_last_layer"] = grid_json(a.on_grid(means.back().row(0).transpose()));
  j["cls_attention_rollout"] = grid_json(rollout_grid);
  if (png) {
    const std::string script = prefix + ".gp", out = prefix + ".png", tmp = out + ".tmp.png";
    add(script, heat_map_script(a, windows, names, rollout_grid, signal_csv, title, tmp));
    run_gnuplot(script, tmp, out, "moca attention");
    j["files"].push_back(out);
  }
  return j;
}

void AttentionOptions::validate() const {
  if (model.empty()) {
    throw std::invalid_argument("AttentionOptions::model is required (a moca checkpoint)");
  }
  if (windows.empty()) {
    throw std::invalid_argument("AttentionOptions::windows is required (test-window indices)");
  }
  check_ranges(*this);
  runtime.validate();
  data.validate();
}

std::vector<UnusedOption> unused_options(const AttentionOptions& o) {
  if (!o.policy.empty()) return {};
  return {{"AttentionOptions::seed", "only the masks of AttentionOptions::policy use it"}};
}

nlohmann::json attention_reports(const AttentionOptions& o, std::ostream& out, std::ostream& log) {
  o.validate();
  check_writable_folder(o.out_dir, "AttentionOptions::out_dir", true);
  const ModelGeometry geometry = checkpoint_geometry(o.model);
  const data::SplitSelection d =
      data::select_and_split(o.data, log, geometry.length, geometry.sample_rate_hz);
  for (int w : o.windows) {
    if (w < 0 || w >= d.test.size()) {
      throw_invalid("", "AttentionOptions::windows", std::to_string(w),
                    "must be in [0, " + std::to_string(d.test.size()) + ") (the test windows)");
    }
  }
  InferenceOptions inference;
  inference.runtime = o.runtime;
  EncoderInspector inspector(o.model, inference);
  const auto& info = inspector.info();
  std::unique_ptr<masking::MaskPolicy> policy;
  if (!o.policy.empty()) {
    masking::PolicyContext context;
    context.pilot = &d.test;
    policy = masking::make_policy(
        o.policy, masking::make_grid(d.test.channels, d.test.length, info.model.patch_length),
        context);
  }
  create_output_folder(o.out_dir);
  nlohmann::json j;
  j["command"] = "attention";
  j["data"] = d.to_json();
  j["model"] = o.model;
  j["kind"] = info.kind;
  j["layers"] = info.model.depth;
  j["heads"] = info.model.num_heads;
  j["channels"] = channel_labels(d.test);
  j["patches"] = info.model.patches();
  j["patch_length"] = info.model.patch_length;
  j["policy"] = policy ? policy->spec() : "none (every token enters)";
  j["seed"] = o.seed;
  j["definitions"] = {
      {"weights",
       "per layer and head softmax(q k^T / sqrt(head dim)) from an explicit "
       "inspection pass; rows: queries, 0 = cls, 1 + t = grid token t"},
      {"cls", "the cls row (head mean): every moca encoder, MAE or classifier, has a cls token"},
      {"received", "mean over the cls and visible query rows of a token's column (head mean)"},
      {"rollout", "Abnar & Zuidema 2020: product over layers of 0.5 I + 0.5 head-mean"}};
  j["windows"] = nlohmann::json::array();
  const std::string model_name = std::filesystem::path(o.model).stem().string();
  for (int w : o.windows) {
    masking::Mask mask;
    if (policy) mask = masking::window_mask(*policy, o.seed, w, d.test.window(w));
    const WindowAttention a = inspector.attention(d.test, w, policy ? &mask : nullptr);
    const std::string cls = class_label(d.test, w);
    const std::string prefix = o.out_dir + "/window_" + std::to_string(w);
    const std::string title = model_name + " (" + info.kind + "), test window " +
                              std::to_string(w) + (cls.empty() ? "" : " - " + cls);
    nlohmann::json r = write_attention_report(a, d.test, w, prefix, title, o.png);
    r["window"] = w;
    r["label"] = d.test.labels(w);
    r["class"] = cls;
    if (policy) r["mask"] = mask.to_string();
    j["windows"].push_back(r);
    out << "attention: test window " << w << (cls.empty() ? "" : " (" + cls + ")") << ": "
        << a.layers << " layers x " << a.heads << " heads over " << a.size() << " tokens -> "
        << prefix << "_*.csv" << (o.png ? ", .png" : "") << "\n";
  }
  return j;
}

}  // namespace moca::model
