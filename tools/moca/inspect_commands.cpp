#include "inspect_commands.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/embed/map_figure.hpp"
#include "moca/embed/pca_map.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/eval/attention_report.hpp"
#include "moca/model/eval/inspect.hpp"
#include "run_cli.hpp"

namespace moca::tools {

namespace {

void make_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create folder " + dir + ": " + ec.message());
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_output_text(path, j.dump(2) + "\n");
}

void save_matrix(const std::string& path, const Eigen::MatrixXd& m) {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m;
  write_npy(path, {r.rows(), r.cols()}, r.data());
}

std::string stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

}  // namespace

nlohmann::json run_attention(const AttentionCommand& cmd, std::ostream& out, std::ostream& log) {
  if (cmd.model.empty()) throw_invalid("", "--model", "", "is required (a moca checkpoint)");
  if (cmd.windows.empty()) throw_invalid("", "--windows", "", "needs at least one index");
  check_writable_folder(cmd.out_dir, "--out", true);
  const ModelGeometry geometry = checkpoint_geometry(cmd.model);
  const data::SplitSelection d =
      data::select_and_split(cmd.data, log, geometry.length, geometry.sample_rate_hz);
  for (int w : cmd.windows) {
    if (w < 0 || w >= d.test.size()) {
      throw_invalid("", "--windows", std::to_string(w),
                    "must be in [0, " + std::to_string(d.test.size()) + ") (the test windows)");
    }
  }
  model::EncoderInspector inspector(cmd.model, cmd.inference);
  const auto& info = inspector.info();
  std::unique_ptr<masking::MaskPolicy> policy;
  if (!cmd.policy.empty()) {
    masking::PolicyContext context;
    context.pilot = &d.test;
    policy = masking::make_policy(
        cmd.policy, masking::make_grid(d.test.channels, d.test.length, info.model.patch_length),
        context);
  }
  make_folder(cmd.out_dir);
  nlohmann::json j;
  j["command"] = "attention";
  j["data"] = d.to_json();
  j["model"] = cmd.model;
  j["kind"] = info.kind;
  j["layers"] = info.model.depth;
  j["heads"] = info.model.num_heads;
  j["channels"] = model::channel_labels(d.test);
  j["patches"] = info.model.patches();
  j["patch_length"] = info.model.patch_length;
  j["policy"] = policy ? policy->spec() : "none (every token enters)";
  j["seed"] = cmd.seed;
  j["definitions"] = {
      {"weights",
       "per layer and head softmax(q k^T / sqrt(head dim)) from an explicit "
       "inspection pass; rows: queries, 0 = cls, 1 + t = grid token t"},
      {"cls", "the cls row (head mean): every moca encoder, MAE or classifier, has a cls token"},
      {"received", "mean over the cls and visible query rows of a token's column (head mean)"},
      {"rollout", "Abnar & Zuidema 2020: product over layers of 0.5 I + 0.5 head-mean"}};
  j["windows"] = nlohmann::json::array();
  for (int w : cmd.windows) {
    masking::Mask mask;
    if (policy) {
      mask = masking::window_mask(*policy, cmd.seed, w, d.test.window(w));
    }
    const model::WindowAttention a = inspector.attention(d.test, w, policy ? &mask : nullptr);
    const std::string cls = model::class_label(d.test, w);
    const std::string prefix = cmd.out_dir + "/window_" + std::to_string(w);
    const std::string title = stem(cmd.model) + " (" + info.kind + "), test window " +
                              std::to_string(w) + (cls.empty() ? "" : " - " + cls);
    nlohmann::json r = model::write_attention_report(a, d.test, w, prefix, title, cmd.png);
    r["window"] = w;
    r["label"] = d.test.labels(w);
    r["class"] = cls;
    if (policy) r["mask"] = mask.to_string();
    j["windows"].push_back(r);
    out << "attention: test window " << w << (cls.empty() ? "" : " (" + cls + ")") << ": "
        << a.layers << " layers x " << a.heads << " heads over " << a.size() << " tokens -> "
        << prefix << "_*.csv" << (cmd.png ? ", .png" : "") << "\n";
  }
  record_program_options(j);
  write_json_file(cmd.out_dir + "/attention.json", j);
  return j;
}

nlohmann::json run_embed_map(const EmbedMapCommand& cmd, std::ostream& out, std::ostream& log) {
  if (cmd.checkpoints.empty()) throw_invalid("", "--checkpoint", "", "is required");
  if (!cmd.labels.empty() && cmd.labels.size() != cmd.checkpoints.size()) {
    throw_invalid("", "--label", std::to_string(cmd.labels.size()) + " names",
                  "must be one per --checkpoint (" + std::to_string(cmd.checkpoints.size()) + ")");
  }
  if (cmd.map != "" && cmd.map != "umap" && cmd.map != "pca") {
    throw_invalid("", "--map", cmd.map, "must be umap or pca");
  }
  check_writable_folder(cmd.out_dir, "--out", true);
  if (cmd.max_windows < 0) {
    throw_invalid("", "--max-windows", std::to_string(cmd.max_windows), "must be >= 0");
  }
  const model::Pool pool = parse_enum(model::kPoolNames, cmd.pool, "--pool");
  if (cmd.map == "umap") cmd.umap.validate();
  const ModelGeometry geometry = checkpoint_geometry(cmd.checkpoints[0]);
  for (const auto& c : cmd.checkpoints) {
    const ModelGeometry g = checkpoint_geometry(c);
    if (g.length != geometry.length || g.sample_rate_hz != geometry.sample_rate_hz) {
      throw_invalid("", "--checkpoint", c,
                    "must take the windows of the first checkpoint (length " +
                        std::to_string(geometry.length) + " at " +
                        std::to_string(geometry.sample_rate_hz) + " Hz)");
    }
  }
  const data::SplitSelection d =
      data::select_and_split(cmd.data, log, geometry.length, geometry.sample_rate_hz);
  const data::Windows test = data::first_windows(d.test, cmd.max_windows);
  make_folder(cmd.out_dir);
  std::vector<std::string> classes;
  for (int i = 0; i < test.size(); ++i) classes.push_back(model::class_label(test, i));
  std::vector<std::int64_t> labels(test.labels.data(), test.labels.data() + test.size());
  write_npy_int(cmd.out_dir + "/labels.npy", {static_cast<std::int64_t>(labels.size())},
                labels.data());
  write_npy_strings(cmd.out_dir + "/classes.npy", classes);
  nlohmann::json j;
  j["command"] = "embed";
  j["data"] = d.to_json();
  j["pool"] = model::pool_name(pool);
  j["windows"] = test.size();
  j["map"] = cmd.map.empty() ? nlohmann::json(nullptr) : nlohmann::json(cmd.map);
  if (cmd.map == "umap") {
    j["umap"] = {{"neighbors", cmd.umap.neighbors},
                 {"min_dist", cmd.umap.min_dist},
                 {"spread", cmd.umap.spread},
                 {"epochs", cmd.umap.epochs},
                 {"negative_samples", cmd.umap.negative_samples},
                 {"seed", cmd.umap.seed},
                 {"max_points", embed::kUmapMaxPoints},
                 {"knn", "exact (Euclidean)"}};
  }
  j["models"] = nlohmann::json::array();
  std::vector<embed::MapPanel> panels;
  for (size_t m = 0; m < cmd.checkpoints.size(); ++m) {
    const std::string name = cmd.labels.empty() ? stem(cmd.checkpoints[m]) : cmd.labels[m];
    model::EncoderInspector inspector(cmd.checkpoints[m], cmd.inference);
    const Eigen::MatrixXd z = inspector.embed(test, pool);
    save_matrix(cmd.out_dir + "/embedding_" + name + ".npy", z);
    nlohmann::json mj = {{"label", name},
                         {"checkpoint", cmd.checkpoints[m]},
                         {"kind", inspector.info().kind},
                         {"dim", z.cols()},
                         {"embedding", "embedding_" + name + ".npy"}};
    out << "embed: " << name << ": " << test.size() << " windows x " << z.cols() << " ("
        << model::pool_name(pool) << " pooling)";
    if (!cmd.map.empty()) {
      const auto t0 = std::chrono::steady_clock::now();
      const Eigen::MatrixXd y =
          cmd.map == "umap" ? embed::umap_layout(z, cmd.umap) : embed::pca_layout(z, 2);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      save_matrix(cmd.out_dir + "/map_" + name + ".npy", y);
      std::ostringstream csv;
      csv.precision(17);
      csv << "window,subject,label,class,x,y\n";
      for (int i = 0; i < test.size(); ++i) {
        csv << i << "," << test.subjects(i) << "," << test.labels(i) << ","
            << classes[static_cast<size_t>(i)] << "," << y(i, 0) << "," << y(i, 1) << "\n";
      }
      write_output_text(cmd.out_dir + "/map_" + name + ".csv", csv.str());
      mj["map"] = {"map_" + name + ".csv", "map_" + name + ".npy"};
      panels.push_back({name, y, classes});
      mj["map_seconds"] = seconds;
      out << " -> " << cmd.map << " map (" << seconds << " s)";
    }
    out << "\n";
    j["models"].push_back(mj);
  }
  if (!panels.empty()) {
    const std::string title = cmd.map + " of " + model::pool_name(pool) +
                              "-pooled encoder embeddings (" + std::to_string(test.size()) +
                              " test windows)";
    const auto f = embed::write_map_figure(panels, cmd.out_dir + "/map", title, cmd.png);
    j["figure"] = {{"dat", f.dat}, {"script", f.script}, {"png", f.png}};
    if (!f.png.empty()) out << "embed: " << f.png << "\n";
  }
  record_program_options(j);
  write_json_file(cmd.out_dir + "/embed.json", j);
  return j;
}

}  // namespace moca::tools
