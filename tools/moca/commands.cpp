#include "commands.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "moca/common/matrix_io.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/hmp.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/checkpoint.hpp"
#include "moca/model/encoder_features.hpp"
#include "moca/model/metrics.hpp"

namespace moca::tools {

namespace {

void write_json(const std::string& path, const nlohmann::json& j) {
  if (!path.empty()) write_output_text(path, j.dump(2) + "\n");
}

struct AllData {
  data::Windows all;
  std::string source;
};

AllData load_all(const DataOptions& o, std::ostream& log) {
  o.validate();
  AllData d;
  std::string dir = o.data;
  if (dir.empty()) {
    const char* env = std::getenv("MOCA_HAPT_DIR");
    if (env != nullptr && *env != '\0') {
      dir = env;
      log << "data: UCI HAPT from $MOCA_HAPT_DIR = " << dir << "\n";
    }
  } else {
    log << "data: UCI HAPT from --data " << dir << "\n";
  }
  if (!dir.empty()) {
    data::WindowingOptions wo;
    wo.length = o.window_length;
    wo.stride = o.window_length;
    d.all = data::load_hapt_windows(dir, wo);
    d.source = "hapt:" + dir;
  } else {
    data::SyntheticOptions so;
    so.windows = o.synthetic_windows;
    so.length = o.window_length;
    so.coupling = o.coupling;
    so.seed = o.synthetic_seed;
    d.all = data::generate_synthetic(so);
    d.source = "synthetic";
    log << "data: the built-in synthetic IMU generator (no --data and no $MOCA_HAPT_DIR): "
        << so.windows << " windows, coupling " << so.coupling << ", seed " << so.seed << "\n";
  }
  log << data::class_count_table(d.all);
  return d;
}

std::pair<data::Windows, data::Windows> split_windows(const data::Windows& all,
                                                      const DataOptions& o, int fold) {
  if (o.split == "all") return {all, all};
  if (o.split == "random") {
    const auto s = data::random_split(all.size(), o.train_fraction, o.split_seed);
    return {all.subset(s.train), all.subset(s.test)};
  }
  const auto folds = data::subject_kfold(all.subjects, o.folds, o.split_seed);
  const auto& s = folds[static_cast<size_t>(fold)];
  return {all.subset(s.train), all.subset(s.test)};
}

nlohmann::json summary_json(const std::vector<double>& v) {
  const auto ms = model::mean_sd(v);
  return {{"mean", ms.mean}, {"sd", ms.sd}, {"n", ms.n}, {"values", v}};
}

std::string replace_fold(std::string s, int fold) {
  const std::string key = "{fold}";
  for (size_t p = s.find(key); p != std::string::npos; p = s.find(key)) {
    s.replace(p, key.size(), std::to_string(fold));
  }
  return s;
}

void make_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create folder " + dir);
  }
}

}  // namespace

void DataOptions::validate() const {
  auto fail = [](const std::string& f, const std::string& v, const std::string& rule) {
    throw std::invalid_argument("DataOptions::validate(): " + f + " (" + v + ") " + rule);
  };
  if (window_length < 2) fail("window_length", std::to_string(window_length), "must be >= 2");
  if (synthetic_windows < 2) {
    fail("synthetic_windows", std::to_string(synthetic_windows), "must be >= 2");
  }
  if (!(coupling >= 0.0 && coupling <= 1.0))
    fail("coupling", std::to_string(coupling), "must be in [0, 1]");
  if (split != "random" && split != "subject-kfold" && split != "all") {
    fail("split", split, "must be one of random, subject-kfold, all");
  }
  if (!(train_fraction > 0.0 && train_fraction < 1.0)) {
    fail("train_fraction", std::to_string(train_fraction), "must be in (0, 1)");
  }
  if (folds < 2) fail("folds", std::to_string(folds), "must be >= 2");
  if (fold < 0 || fold >= folds) {
    fail("fold", std::to_string(fold),
         "must be in [0, folds) = [0, " + std::to_string(folds) + ")");
  }
}

nlohmann::json LoadedData::to_json() const {
  return {{"source", source},
          {"train_windows", train.size()},
          {"test_windows", test.size()},
          {"channels", train.channel_names},
          {"length", train.length},
          {"description", train.description}};
}

LoadedData load_data(const DataOptions& options, std::ostream& log) {
  AllData d = load_all(options, log);
  LoadedData out;
  out.source = d.source;
  std::tie(out.train, out.test) = split_windows(d.all, options, options.fold);
  log << "split: " << options.split << " -> " << out.train.size() << " train, " << out.test.size()
      << " test windows\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_pretrain(const PretrainCommand& cmd, std::ostream& out, std::ostream& log,
                            const std::atomic<bool>* stop) {
  cmd.train.validate();
  const LoadedData d = load_data(cmd.data, log);
  const auto r = model::pretrain(cmd.train, d.train, log, stop);
  nlohmann::json j;
  j["command"] = "pretrain";
  j["data"] = d.to_json();
  j["options"] = cmd.train.training_json();
  j["options"]["checkpoint"] = cmd.train.checkpoint;
  j["options"]["metrics"] = cmd.train.metrics_path();
  j["model"] = model::to_json(r.model);
  j["device"] = r.device;
  j["threads"] = r.threads;
  j["precision"] = cmd.train.runtime.precision;
  j["iterations"] = r.iterations;
  j["iterations_per_epoch"] = r.iterations_per_epoch;
  j["finished"] = r.finished;
  j["interrupted"] = r.interrupted;
  j["seconds"] = r.seconds;
  j["final_loss"] = r.history.empty() ? nlohmann::json() : nlohmann::json(r.history.back().loss);
  j["world_size"] = r.world_size;
  j["backend"] = r.backend;
  j["allreduce_seconds"] = r.allreduce_seconds;
  j["loop_seconds"] = r.loop_seconds;
  j["windows_per_s"] = r.loop_seconds > 0 ? static_cast<double>(r.loop_iterations) *
                                                cmd.train.batch_size / r.loop_seconds
                                          : 0.0;
  if (r.rank != 0) return j;  // data-parallel: rank 0 alone reports
  write_json(cmd.json, j);
  out << "pretrain: " << r.history.size() << "/" << cmd.train.epochs << " epochs, " << r.iterations
      << " iterations on " << d.train.size() << " windows (" << d.source << "), " << r.device
      << " x" << r.threads << " threads"
      << (r.world_size > 1 ? " x " + std::to_string(r.world_size) + " ranks (" + r.backend + ")"
                           : std::string())
      << ", " << std::fixed << std::setprecision(1) << r.seconds << " s\n";
  if (!r.history.empty()) {
    out << "final epoch loss " << std::setprecision(5) << r.history.back().loss << "\n";
  }
  out << (r.finished ? "finished" : "interrupted") << "; checkpoint " << r.checkpoint
      << "; metrics " << cmd.train.metrics_path() << "\n";
  return j;
}

// ---------------------------------------------------------------------------------------------
void ClassifyCommand::validate() const {
  data.validate();
  options.validate();
  if (adl_classes != "paper" && adl_classes != "all") {
    throw std::invalid_argument("ClassifyCommand: adl_classes (" + adl_classes +
                                ") must be paper or all");
  }
  if (data.split != "random" || data.fold != 0) {
    throw std::invalid_argument(
        "ClassifyCommand: linprobe and finetune choose their splits with --protocol (random, "
        "subject-kfold runs every fold); --split/--fold (" +
        data.split + ", " + std::to_string(data.fold) + ") apply to the other subcommands");
  }
  if (protocol != "random" && protocol != "subject-kfold" && protocol != "adl-loso") {
    throw std::invalid_argument("ClassifyCommand: protocol (" + protocol +
                                ") must be one of random, subject-kfold, adl-loso");
  }
}

nlohmann::json run_classify(const ClassifyCommand& cmd, std::ostream& out, std::ostream& log) {
  cmd.validate();
  data::Windows all;
  std::string source;
  std::vector<data::Split> splits;
  if (cmd.protocol == "adl-loso") {
    std::string dir = cmd.hmp;
    if (dir.empty()) {
      const char* env = std::getenv("MOCA_HMP_DIR");
      if (env != nullptr) dir = env;
    }
    if (dir.empty()) {
      throw std::invalid_argument(
          "run_classify(): protocol adl-loso needs the UCI ADL (HMP) data: --hmp DIR or "
          "$MOCA_HMP_DIR");
    }
    data::HmpOptions ho;
    ho.length =
        cmd.options.mode == model::DownstreamMode::kScratch
            ? cmd.data.window_length
            : model::read_checkpoint_info(replace_fold(cmd.options.checkpoint, 0)).model.length();
    all = data::load_hmp_windows(dir, ho);
    source = "hmp:" + dir;
    if (cmd.adl_classes == "paper") {
      const std::vector<std::string> keep = {"climb_stairs", "drink_glass", "getup_bed",
                                             "pour_water", "walk"};
      std::vector<int> rows, relabel;
      for (int i = 0; i < all.size(); ++i) {
        const std::string& name = all.class_names.at(static_cast<size_t>(all.labels(i)));
        const auto it = std::find(keep.begin(), keep.end(), name);
        if (it != keep.end()) {
          rows.push_back(i);
          relabel.push_back(static_cast<int>(it - keep.begin()));
        }
      }
      if (rows.empty()) {
        throw std::runtime_error("run_classify(): no window of the paper's five ADL classes in " +
                                 dir);
      }
      all = all.subset(rows);
      for (int i = 0; i < all.size(); ++i) all.labels(i) = relabel[static_cast<size_t>(i)];
      all.class_names = keep;
      source += " (paper's 5 classes)";
      log << "kept the paper's five ADL classes:\n" << data::class_count_table(all);
    }
    log << "data: UCI ADL (HMP) wrist accelerometer from " << dir << ", " << all.size()
        << " windows of " << ho.length << " samples at 50 Hz\n"
        << data::class_count_table(all);
    splits = data::leave_one_subject_out(all.subjects);
  } else {
    AllData d = load_all(cmd.data, log);
    all = std::move(d.all);
    source = d.source;
    if (cmd.protocol == "random") {
      splits.push_back(
          data::random_split(all.size(), cmd.data.train_fraction, cmd.data.split_seed));
    } else {
      splits = data::subject_kfold(all.subjects, cmd.data.folds, cmd.data.split_seed);
    }
  }
  nlohmann::json j;
  j["command"] = model::to_string(cmd.options.mode);
  j["protocol"] = cmd.protocol;
  j["data"] = {{"source", source},
               {"windows", all.size()},
               {"channels", all.channel_names},
               {"description", all.description}};
  j["options"] = cmd.options.to_json();
  nlohmann::json folds = nlohmann::json::array();
  std::vector<double> acc, f1, bal;
  std::ostringstream pred_csv;
  pred_csv << "fold,truth,predicted\n";
  for (size_t f = 0; f < splits.size(); ++f) {
    model::DownstreamOptions o = cmd.options;
    o.checkpoint = replace_fold(o.checkpoint, static_cast<int>(f));
    data::Windows train = all.subset(splits[f].train), test = all.subset(splits[f].test);
    log << cmd.protocol << " split " << f + 1 << "/" << splits.size() << ": " << train.size()
        << " train, " << test.size() << " test windows\n";
    const auto r = model::train_classifier(o, train, test, log);
    acc.push_back(r.test.accuracy);
    f1.push_back(r.test.macro_f1);
    bal.push_back(r.test.balanced_accuracy);
    nlohmann::json fj = {{"fold", f},
                         {"train_windows", train.size()},
                         {"test_windows", test.size()},
                         {"checkpoint", o.checkpoint},
                         {"channel_map", r.channel_map},
                         {"device", r.device},
                         {"seconds", r.seconds},
                         {"metrics", model::to_json(r.test)},
                         {"history", r.history}};
    if (cmd.protocol != "random") {
      std::vector<int> subj;
      for (int i = 0; i < test.size(); ++i) {
        if (std::find(subj.begin(), subj.end(), test.subjects(i)) == subj.end()) {
          subj.push_back(test.subjects(i));
        }
      }
      fj["test_subjects"] = subj;
    }
    folds.push_back(fj);
    for (size_t i = 0; i < r.truth.size(); ++i) {
      pred_csv << f << "," << r.truth[i] << "," << r.predicted[i] << "\n";
    }
    if (splits.size() == 1) out << model::confusion_table(r.test, all.class_names);
  }
  j["folds"] = folds;
  j["summary"] = {{"accuracy", summary_json(acc)},
                  {"macro_f1", summary_json(f1)},
                  {"balanced_accuracy", summary_json(bal)}};
  write_json(cmd.json, j);
  if (!cmd.predictions.empty()) write_output_text(cmd.predictions, pred_csv.str());
  const auto a = model::mean_sd(acc), m = model::mean_sd(f1), b = model::mean_sd(bal);
  out << std::fixed << std::setprecision(2) << model::to_string(cmd.options.mode) << " ("
      << cmd.protocol << ", " << splits.size() << (splits.size() == 1 ? " split" : " splits")
      << ", " << source << "): top-1 " << 100 * a.mean;
  if (a.n > 1) out << " +- " << 100 * a.sd;
  out << " %, macro-F1 " << 100 * m.mean;
  if (m.n > 1) out << " +- " << 100 * m.sd;
  out << " %, balanced accuracy " << 100 * b.mean;
  if (b.n > 1) out << " +- " << 100 * b.sd;
  out << " %\n";
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_metrics(const MetricsCommand& cmd, std::ostream& out) {
  if (cmd.predictions.empty())
    throw std::invalid_argument("run_metrics(): --predictions is required");
  const Eigen::MatrixXd m = read_csv_matrix(cmd.predictions);
  if (m.cols() != 2 && m.cols() != 3) {
    throw std::invalid_argument("run_metrics(): " + cmd.predictions + " has " +
                                std::to_string(m.cols()) +
                                " columns; expected truth,predicted or fold,truth,predicted");
  }
  const int off = m.cols() == 3 ? 1 : 0;
  std::map<int, std::pair<std::vector<int>, std::vector<int>>> by_fold;
  std::vector<int> truth, pred;
  int max_id = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (int k = 0; k < m.cols(); ++k) {
      if (m(i, k) != std::floor(m(i, k)) || m(i, k) < 0) {
        throw std::invalid_argument("run_metrics(): " + cmd.predictions + " row " +
                                    std::to_string(i + 1) + " holds a non-integer or negative id");
      }
    }
    const int fold = off ? static_cast<int>(m(i, 0)) : 0;
    const int t = static_cast<int>(m(i, off)), p = static_cast<int>(m(i, off + 1));
    by_fold[fold].first.push_back(t);
    by_fold[fold].second.push_back(p);
    truth.push_back(t);
    pred.push_back(p);
    max_id = std::max({max_id, t, p});
  }
  const int classes = cmd.classes > 0 ? cmd.classes : max_id + 1;
  const auto pooled = model::classification_metrics(truth, pred, std::max(classes, 2));
  nlohmann::json j;
  j["predictions"] = cmd.predictions;
  j["pooled"] = model::to_json(pooled);
  std::vector<double> acc, f1, bal;
  nlohmann::json folds = nlohmann::json::array();
  for (const auto& kv : by_fold) {
    const auto mf =
        model::classification_metrics(kv.second.first, kv.second.second, std::max(classes, 2));
    acc.push_back(mf.accuracy);
    f1.push_back(mf.macro_f1);
    bal.push_back(mf.balanced_accuracy);
    folds.push_back({{"fold", kv.first}, {"metrics", model::to_json(mf)}});
  }
  j["folds"] = folds;
  j["summary"] = {{"accuracy", summary_json(acc)},
                  {"macro_f1", summary_json(f1)},
                  {"balanced_accuracy", summary_json(bal)}};
  write_json(cmd.json, j);
  out << model::confusion_table(pooled);
  const auto a = model::mean_sd(acc), mf = model::mean_sd(f1), b = model::mean_sd(bal);
  out << std::fixed << std::setprecision(2) << "pooled: top-1 " << 100 * pooled.accuracy
      << " %, macro-F1 " << 100 * pooled.macro_f1 << " %, balanced accuracy "
      << 100 * pooled.balanced_accuracy << " % (" << pooled.n << " predictions)\n";
  if (a.n > 1) {
    out << "per fold (" << a.n << "): top-1 " << 100 * a.mean << " +- " << 100 * a.sd
        << " %, macro-F1 " << 100 * mf.mean << " +- " << 100 * mf.sd << " %, balanced accuracy "
        << 100 * b.mean << " +- " << 100 * b.sd << " %\n";
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_impute(const ImputeCommand& cmd, std::ostream& out, std::ostream& log) {
  cmd.options.validate();
  if (cmd.max_windows < 0) {
    throw std::invalid_argument("run_impute(): max_windows (" + std::to_string(cmd.max_windows) +
                                ") must be >= 0");
  }
  LoadedData d = load_data(cmd.data, log);
  data::Windows test = d.test;
  if (cmd.max_windows > 0 && cmd.max_windows < test.size()) {
    std::vector<int> rows;
    for (int i = 0; i < cmd.max_windows; ++i) rows.push_back(i);
    test = test.subset(rows);
  }
  log << "impute: " << test.size() << " test windows\n";
  const auto table = model::evaluate_imputation(cmd.options, test, log);
  nlohmann::json j;
  j["command"] = "impute";
  j["data"] = d.to_json();
  j["data"]["evaluated_windows"] = test.size();
  j["seed"] = cmd.options.seed;
  j["mice"] = {{"iterations", cmd.options.mice.iterations},
               {"draws", cmd.options.mice.draws},
               {"ridge", cmd.options.mice.ridge},
               {"posterior", cmd.options.mice.posterior}};
  j["table"] = table.to_json();
  write_json(cmd.json, j);
  out << "imputation error on masked samples (" << test.size() << " test windows, " << d.source
      << ")\n"
      << table.to_text();
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_embed(const EmbedCommand& cmd, std::ostream& out, std::ostream& log) {
  if (cmd.checkpoint.empty()) throw std::invalid_argument("run_embed(): --checkpoint is required");
  if (cmd.max_windows < 0) throw std::invalid_argument("run_embed(): max_windows must be >= 0");
  LoadedData d = load_data(cmd.data, log);
  data::Windows test = d.test;
  if (cmd.max_windows > 0 && cmd.max_windows < test.size()) {
    std::vector<int> rows;
    for (int i = 0; i < cmd.max_windows; ++i) rows.push_back(i);
    test = test.subset(rows);
  }
  model::EncoderFeatures enc(cmd.checkpoint, cmd.inference);
  const masking::Grid grid =
      masking::make_grid(test.channels, test.length, enc.info().model.patch_length());
  const auto policy = masking::make_policy(cmd.policy, grid);
  std::vector<masking::Mask> masks;
  std::ostringstream mask_text;
  for (int i = 0; i < test.size(); ++i) {
    Rng rng(derive_seed(cmd.seed, static_cast<std::uint64_t>(i)));
    masks.push_back(policy->sample(rng, test.window(i)));
    std::string cells;
    for (auto v : masks.back().cells()) cells += v ? '1' : '0';
    mask_text << cells << "\n";
  }
  const auto f = enc.view_features(test, masks);
  make_dir(cmd.out_dir);
  auto save = [&](const std::string& name, const Eigen::MatrixXd& m) {
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m;
    write_npy(cmd.out_dir + "/" + name, {r.rows(), r.cols()}, r.data());
  };
  save("Z_U.npy", f.unmasked);
  save("Z_M.npy", f.masked);
  std::vector<std::int64_t> labels(test.labels.data(), test.labels.data() + test.size());
  write_npy_int(cmd.out_dir + "/labels.npy", {static_cast<std::int64_t>(labels.size())},
                labels.data());
  write_output_text(cmd.out_dir + "/masks.txt", mask_text.str());
  nlohmann::json j;
  j["command"] = "embed";
  j["data"] = d.to_json();
  j["checkpoint"] = cmd.checkpoint;
  j["policy"] = policy->spec();
  j["seed"] = cmd.seed;
  j["windows"] = test.size();
  j["dim"] = enc.dim();
  j["files"] = {"Z_U.npy", "Z_M.npy", "labels.npy", "masks.txt"};
  j["features"] =
      "mean of the encoder outputs (final norm, cls excluded) over each view's tokens; the "
      "unmasked view feeds the visible tokens, the masked view the masked tokens";
  write_json(cmd.out_dir + "/embed.json", j);
  out << "embed: " << test.size() << " windows x " << enc.dim() << " features per view ("
      << policy->spec() << ") -> " << cmd.out_dir << "/Z_U.npy, Z_M.npy\n";
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_reconstruct(const ReconstructCommand& cmd, std::ostream& out,
                               std::ostream& log) {
  cmd.options.validate();
  LoadedData d = load_data(cmd.data, log);
  const auto r = model::reconstruct_window(cmd.options, d.test, log);
  nlohmann::json j;
  j["command"] = "reconstruct";
  j["data"] = d.to_json();
  j["window"] = cmd.options.window;
  j["label"] = d.test.labels(cmd.options.window);
  j["policy"] = cmd.options.policy;
  j["mask"] = r.mask.to_string();
  j["mae_masked"] = r.mae_masked;
  j["mse_masked"] = r.mse_masked;
  j["csv"] = r.csv;
  j["png"] = r.png;
  write_json(cmd.options.out + ".json", j);
  out << "reconstruct: test window " << cmd.options.window << " (label "
      << d.test.labels(cmd.options.window) << "), masked MAE " << r.mae_masked << ", MSE "
      << r.mse_masked << "\n"
      << "wrote " << r.csv << (r.png.empty() ? "" : ", " + r.png) << "\n";
  return j;
}

}  // namespace moca::tools
