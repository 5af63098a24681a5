#include "margin_study.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "moca/common/enum_names.hpp"
#include "moca/common/file_lock.hpp"
#include "moca/common/text_replace.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/eval/protocol.hpp"
#include "run_cli.hpp"
#include "study_data.hpp"
#include "study_runner.hpp"
#include "study_training.hpp"

namespace moca::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kWho = "margin_study";
constexpr double kTrainFraction = 0.7;  // Table 1's 7:3 split (ProtocolOptions' default too)

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const TransferDataSet& find_set(const std::vector<TransferDataSet>& sets, const std::string& name) {
  for (const auto& d : sets)
    if (d.name == name) return d;
  throw std::runtime_error(std::string(kWho) + ": no data set " + name + " in the study");
}

/// The subject ids of `w`'s last `n` subjects (sorted ids).
std::set<int> last_subjects(const data::Windows& w, int n) {
  std::set<int> all(w.subjects.data(), w.subjects.data() + w.subjects.size());
  std::set<int> out;
  for (auto it = all.rbegin(); it != all.rend() && static_cast<int>(out.size()) < n; ++it)
    out.insert(*it);
  return out;
}

/// The rows of `w` whose subject is (held_out) or is not (!held_out) in `subjects`.
std::vector<int> rows_of(const data::Windows& w, const std::set<int>& subjects, bool held_out) {
  std::vector<int> rows;
  for (int i = 0; i < w.size(); ++i)
    if ((subjects.count(w.subjects(i)) > 0) == held_out) rows.push_back(i);
  return rows;
}

/// A source's windows at the study's geometry (length, 50 Hz).
data::Dataset open_source(const MarginStudyOptions& o, const TransferDataSet& s) {
  data::DatasetOptions dopt = s.dataset;
  dopt.length = o.window_length;
  dopt.target_rate_hz = model::ModelGeometry{}.sample_rate_hz;
  dopt.use_env = false;
  try {
    return data::open_dataset(s.spec, dopt);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--source " + s.name + "=" + s.spec + ": " + e.what());
  }
}

/// The pre-training windows of a source: its subjects but the held-out ones, then the training
/// part of the 7:3 random split (split_seed) — the part protocol=random trains on.
data::Windows pretrain_windows(const MarginStudyOptions& o, const TransferDataSet& s) {
  const data::Dataset ds = open_source(o, s);
  const data::Windows kept =
      ds.windows.subset(rows_of(ds.windows, last_subjects(ds.windows, o.holdout_subjects), false));
  const auto split = data::random_split(kept.size(), kTrainFraction, o.split_seed);
  return kept.subset(split.train);
}

/// A downstream set as run after a source's models: `source` takes the source's spec and HAPT
/// windowing (the set's other data options stay).
TransferDataSet resolve_set(const TransferDataSet& d, const TransferDataSet& source) {
  if (d.spec != kSourceSpec) return d;
  TransferDataSet r = d;
  r.spec = source.spec;
  r.dataset.hapt_windowing = source.dataset.hapt_windowing;
  if (r.dataset.format == data::DataFormat::kAuto) r.dataset.format = source.dataset.format;
  return r;
}

std::string subjects_of(const MarginStudyOptions& o, const std::string& data) {
  for (size_t i = 0; i < o.data.size(); ++i)
    if (o.data[i].name == data) return i < o.subjects.size() ? o.subjects[i] : "kept";
  return "kept";
}

/// transfer_study's options for the downstream units of one pretrained model.
TransferStudyOptions transfer_options(const MarginStudyOptions& o, const MarginUnit& u,
                                      const std::string& checkpoint) {
  TransferStudyOptions t;
  t.out = o.out;
  t.models = {{"m", checkpoint}};
  t.scratch = false;
  t.control = false;
  t.settings = o.settings;
  t.lp_epochs = o.lp_epochs;
  t.ft_epochs = o.ft_epochs;
  t.split_seed = o.split_seed;
  t.seed = static_cast<std::uint64_t>(u.seed);
  return t;
}

/// A downstream set opened for a model of `source` at `geometry`, restricted to its subjects.
OpenedTransferData open_downstream(const MarginStudyOptions& o, const TransferStudyOptions& t,
                                   const TransferDataSet& d, const TransferDataSet& source,
                                   const model::ModelGeometry& geometry) {
  const TransferDataSet r = resolve_set(d, source);
  OpenedTransferData opened = open_transfer_data(t, r, geometry);
  const std::string subjects = subjects_of(o, d.name);
  if (d.spec == kSourceSpec && subjects != "all") {
    data::Windows& w = opened.dataset.windows;
    w = w.subset(rows_of(w, last_subjects(w, o.holdout_subjects), subjects == "held-out"));
    std::set<int> left(w.subjects.data(), w.subjects.data() + w.subjects.size());
    if (w.size() == 0 ||
        (opened.protocol.protocol == model::Protocol::kSubjectKfold &&
         static_cast<int>(left.size()) < r.folds) ||
        (opened.protocol.protocol == model::Protocol::kLoso && left.size() < 2)) {
      throw std::invalid_argument(
          "--set " + d.name + ".subjects (" + subjects + "): " + std::to_string(left.size()) +
          " subjects of source " + source.name + " left for protocol " +
          model::to_string(opened.protocol.protocol) + " (--holdout-subjects " +
          std::to_string(o.holdout_subjects) + ")");
    }
  }
  return opened;
}

TransferDataSet set_from_json(const json& j) {
  TransferDataSet d;
  d.set_json(j);
  return d;
}

std::string pretrain_dir(const std::string& out, const MarginUnit& u) {
  return out + "/pretrain/" + u.model_name();
}
std::string unit_dir(const std::string& out, const MarginUnit& u) {
  return u.pretraining() ? pretrain_dir(out, u) : out + "/units/" + u.key();
}
MarginUnit model_of(const MarginUnit& u) {
  return {u.source, u.policy, u.seed, "", ""};
}

}  // namespace

// ---- options ----

model::PretrainOptions MarginStudyOptions::default_margin_pretrain() {
  model::PretrainOptions p;
  p.preset = "cpu-small";
  p.patch_length = 20;
  p.epochs = 50;
  p.batch_size = 50;
  p.lr = 5e-4;
  p.warmup_epochs = 5.0;
  p.checkpoint_every = 5;
  return p;
}

std::vector<TransferDataSet> MarginStudyOptions::default_margin_sources() {
  const char* dir = std::getenv("MOCA_HAPT_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::invalid_argument(
        "--source: none given and $MOCA_HAPT_DIR is unset (the default sources are HAPT's)");
  }
  std::vector<TransferDataSet> s = {parse_transfer_data(std::string("raw=hapt:") + dir),
                                    parse_transfer_data(std::string("uci-har=hapt:") + dir)};
  apply_data_settings(s, {"raw.hapt-windowing=raw", "uci-har.hapt-windowing=uci-har"});
  return s;
}

void MarginStudyOptions::validate() const {
  if (out.empty()) throw std::invalid_argument("--out is required");
  if (run.report) return;
  check_ranges(*this);
  if (sources.empty()) throw std::invalid_argument("--source: no pre-training source");
  std::set<std::string> names;
  for (const TransferDataSet& s : sources) {
    if (!names.insert(s.name).second)
      throw std::invalid_argument("--source: the name " + s.name + " is used twice");
    try {
      s.dataset.validate();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--source " + s.name + "=" + s.spec + ": " + e.what());
    }
  }
  if (policies.empty()) throw std::invalid_argument("--policies is empty");
  if (std::set<std::string>(policies.begin(), policies.end()).size() != policies.size())
    throw std::invalid_argument("--policies names a spec twice");
  for (const std::string& p : policies) {
    try {
      masking::parse_policy_spec(p);
    } catch (const std::exception& e) {
      throw std::invalid_argument("--policies (" + p + "): " + e.what());
    }
  }
  pretrain.validate();
  if (window_length % pretrain.patch_length != 0) {
    throw std::invalid_argument("--window-length (" + std::to_string(window_length) +
                                ") must be a multiple of --patch-length (" +
                                std::to_string(pretrain.patch_length) + ")");
  }
  // the downstream sets and settings: transfer_study's rules
  TransferStudyOptions t;
  t.out = out;
  t.models = {{"m", "m.pt"}};
  t.data = data;
  t.settings = settings;
  t.lp_epochs = lp_epochs;
  t.ft_epochs = ft_epochs;
  t.validate();
  for (size_t i = 0; i < data.size(); ++i) {
    const std::string s = i < subjects.size() ? subjects[i] : "kept";
    if (s != "kept" && s != "held-out" && s != "all")
      throw std::invalid_argument("--set " + data[i].name + ".subjects (" + s +
                                  ") must be kept, held-out or all");
    if (s != "kept" && data[i].spec != kSourceSpec)
      throw std::invalid_argument("--set " + data[i].name + ".subjects (" + s +
                                  ") applies to --data " + data[i].name + "=source only");
    if (s == "held-out" && holdout_subjects == 0)
      throw std::invalid_argument("--set " + data[i].name +
                                  ".subjects (held-out) needs --holdout-subjects >= 1");
  }
  parse_shard(run.shard, "--shard");
}

json MarginStudyOptions::settings_json() const {
  json s = json::array(), d = json::array();
  for (const auto& x : sources) s.push_back(x.to_json());
  for (size_t i = 0; i < data.size(); ++i) {
    json j = data[i].to_json();
    j["subjects"] = i < subjects.size() ? subjects[i] : "kept";
    d.push_back(j);
  }
  return {{"sources", s},
          {"policies", policies},
          {"seeds", seeds},
          {"holdout_subjects", holdout_subjects},
          {"window_length", window_length},
          {"pretrain",
           {{"preset", pretrain.preset},
            {"patch_length", pretrain.patch_length},
            {"epochs", pretrain.epochs},
            {"batch_size", pretrain.batch_size},
            {"lr", pretrain.lr},
            {"warmup_epochs", pretrain.effective_warmup_epochs()},
            {"checkpoint_every", pretrain.checkpoint_every}}},
          {"data", d},
          {"settings", settings},
          {"lp_epochs", lp_epochs},
          {"ft_epochs", ft_epochs},
          {"split_seed", split_seed},
          {"train_fraction", kTrainFraction}};
}

void MarginStudyOptions::set_settings(const json& j) {
  sources.clear();
  for (const json& x : j.at("sources")) {
    sources.push_back(set_from_json(x));
  }
  policies = j.at("policies").get<std::vector<std::string>>();
  seeds = j.at("seeds");
  holdout_subjects = j.at("holdout_subjects");
  window_length = j.at("window_length");
  const json& p = j.at("pretrain");
  pretrain.preset = p.at("preset");
  pretrain.patch_length = p.at("patch_length");
  pretrain.epochs = p.at("epochs");
  pretrain.batch_size = p.at("batch_size");
  pretrain.lr = p.at("lr");
  pretrain.warmup_epochs = p.at("warmup_epochs").get<double>();
  pretrain.checkpoint_every = p.at("checkpoint_every");
  data.clear();
  subjects.clear();
  for (const json& x : j.at("data")) {
    data.push_back(set_from_json(x));
    subjects.push_back(x.at("subjects"));
  }
  settings = j.at("settings").get<std::vector<std::string>>();
  lp_epochs = j.at("lp_epochs");
  ft_epochs = j.at("ft_epochs");
  split_seed = j.at("split_seed");
}

// ---- units ----

std::string MarginUnit::model_name() const {
  return source + "/" + safe_name(policy) + "/seed" + std::to_string(seed);
}

std::string MarginUnit::key() const {
  return pretraining() ? "pretrain/" + model_name() : model_name() + "/" + data + "/" + setting;
}

std::vector<MarginUnit> margin_units(const MarginStudyOptions& o) {
  std::vector<MarginUnit> units;
  for (const auto& s : o.sources)
    for (const auto& p : o.policies)
      for (int seed = 0; seed < o.seeds; ++seed) units.push_back({s.name, p, seed, "", ""});
  for (const auto& s : o.sources)
    for (const auto& p : o.policies)
      for (int seed = 0; seed < o.seeds; ++seed)
        for (const auto& d : o.data)
          for (const auto& st : o.settings) units.push_back({s.name, p, seed, d.name, st});
  return units;
}

// ---- worker ----

void run_margin_worker(const MarginStudyOptions& given, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string ledger_path =
      given.out + "/" + parse_shard(given.run.shard, "--shard").ledger_name();
  const auto records = read_ledger(ledger_path);
  if (records.empty() || records.front().at("kind") != "study")
    throw std::runtime_error("worker: " + ledger_path + " has no study record");
  MarginStudyOptions o = given;
  o.set_settings(records.front().at("settings"));
  const std::vector<MarginUnit> units = margin_units(o);
  const auto it = std::find_if(units.begin(), units.end(),
                               [&](const MarginUnit& u) { return u.key() == o.worker_unit; });
  if (it == units.end()) throw std::runtime_error("worker: no unit " + o.worker_unit);
  const MarginUnit& u = *it;
  const TransferDataSet& source = find_set(o.sources, u.source);
  const std::string checkpoint = pretrain_dir(o.out, model_of(u)) + "/model.pt";
  json result = {{"key", u.key()},     {"stage", u.pretraining() ? "pretrain" : "downstream"},
                 {"source", u.source}, {"policy", u.policy},
                 {"seed", u.seed},     {"threads", o.worker_threads}};
  if (u.pretraining()) {
    const data::Windows train = pretrain_windows(o, source);
    for (const json& described : records.front().at("data")) {
      if (described.at("name") == u.source &&
          described.at("fingerprint") != data::fingerprint(train)) {
        throw std::runtime_error("worker: source " + u.source +
                                 "'s pre-training windows differ from the study record's");
      }
    }
    model::PretrainOptions po = study_pretrain_options(o.pretrain, u.policy, train.size());
    fs::create_directories(pretrain_dir(o.out, u));
    po.checkpoint = checkpoint;
    po.resume = fs::exists(po.checkpoint);
    po.seed = static_cast<std::uint64_t>(u.seed);
    po.runtime.threads = o.worker_threads;
    const model::PretrainResult pr = model::pretrain(po, train, log);
    if (!pr.finished) throw std::runtime_error("worker: pre-training of " + u.key() + " stopped");
    json losses = json::array();
    for (const auto& e : pr.history) losses.push_back(e.loss);
    result["train_windows"] = train.size();
    result["data_fingerprint"] = data::fingerprint(train);
    result["epochs"] = o.pretrain.epochs;
    result["loss"] = losses;
    result["checkpoint"] = fs::relative(checkpoint, o.out).string();
  } else {
    const TransferStudyOptions t = transfer_options(o, u, checkpoint);
    const TransferDataSet& d = find_set(o.data, u.data);
    OpenedTransferData opened =
        open_downstream(o, t, d, source, model::checkpoint_geometry(checkpoint));
    model::ProtocolOptions po = opened.protocol;
    po.downstream = unit_downstream_options(t, resolve_set(d, source), {"m", d.name, u.setting});
    po.downstream.runtime.threads = o.worker_threads;
    const model::ProtocolResult r = model::run_protocol(po, opened.dataset.windows, log);
    json folds = json::array();
    for (const json& f : r.folds_json()) {
      folds.push_back({{"fold", f.at("fold")},
                       {"train_windows", f.at("train_windows")},
                       {"test_windows", f.at("test_windows")},
                       {"metrics", f.at("metrics")},
                       {"seconds", f.at("seconds")}});
    }
    result["data"] = u.data;
    result["setting"] = u.setting;
    result["protocol"] = r.protocol;
    result["windows"] = opened.dataset.windows.size();
    result["data_fingerprint"] = data::fingerprint(opened.dataset.windows);
    result["summary"] = r.scores.summary_json();
    result["folds"] = folds;
  }
  result["seconds"] = seconds_since(t0);
  write_json(unit_dir(o.out, u) + "/result.json", result);
  log << "worker: " << u.key() << " done\n";
}

// ---- the study ----

namespace {

/// Opens every source and every downstream set (for each source) before anything is written.
json check_and_describe(const MarginStudyOptions& o, std::ostream& log) {
  json described = json::array();
  model::ModelGeometry g;
  g.length = o.window_length;
  g.patch_length = o.pretrain.patch_length;
  for (const TransferDataSet& s : o.sources) {
    const data::Dataset ds = open_source(o, s);
    std::set<int> subjects(ds.windows.subjects.data(),
                           ds.windows.subjects.data() + ds.windows.subjects.size());
    if (static_cast<int>(subjects.size()) <= o.holdout_subjects) {
      throw std::invalid_argument("--holdout-subjects (" + std::to_string(o.holdout_subjects) +
                                  ") must be below source " + s.name + "'s " +
                                  std::to_string(subjects.size()) + " subjects");
    }
    const data::Windows train = pretrain_windows(o, s);
    // every policy built for the source's grid (names, keys, ratios checked)
    masking::PolicyContext context;
    context.pilot = &train;
    for (const std::string& p : o.policies) {
      try {
        masking::make_policy(
            p, masking::make_grid(train.channels, train.length, o.pretrain.patch_length), context);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("--policies (" + p + "): " + e.what());
      }
    }
    if (train.size() < 3)
      throw std::invalid_argument("--source " + s.name + ": " + std::to_string(train.size()) +
                                  " pre-training windows (needs >= 3)");
    log << kWho << ": source " << s.name << ": " << ds.summary() << "; pre-training on "
        << train.size() << " windows\n";
    json j = {{"name", s.name},
              {"windows", ds.windows.size()},
              {"train_windows", train.size()},
              {"held_out_subjects", last_subjects(ds.windows, o.holdout_subjects)},
              {"fingerprint", data::fingerprint(train)},
              {"sets", json::array()}};
    for (const TransferDataSet& d : o.data) {
      MarginUnit u{s.name, "", 0, d.name, ""};
      const OpenedTransferData opened = open_downstream(o, transfer_options(o, u, ""), d, s, g);
      log << kWho << ": " << s.name << " -> " << d.name << ": " << opened.dataset.windows.size()
          << " windows; protocol " << model::to_string(opened.protocol.protocol) << "\n";
      j["sets"].push_back({{"name", d.name},
                           {"windows", opened.dataset.windows.size()},
                           {"protocol", model::to_string(opened.protocol.protocol)},
                           {"fingerprint", data::fingerprint(opened.dataset.windows)}});
    }
    described.push_back(j);
  }
  return described;
}

/// Pre-trainings first, then the downstream units whose model is trained. Returns the units of
/// this shard.
int run_margin_units(const MarginStudyOptions& o, StudyRun& run, std::ostream& log) {
  const std::vector<MarginUnit> units = margin_units(o);
  const int per_job = threads_per_job(o.run.threads, o.run.jobs);
  int mine = 0, recorded_now = 0;
  std::map<std::string, MarginUnit> by_key;
  std::vector<std::vector<WorkerJob>> phases(2);
  for (size_t i = 0; i < units.size(); ++i) {
    if (!run.shard().owns(i)) continue;
    ++mine;
    const MarginUnit& u = units[i];
    by_key[u.key()] = u;
    if (run.ledger().has("unit", u.key())) continue;
    if (fs::exists(unit_dir(o.out, u) + "/result.json")) {  // finished before a kill
      run.record_unit(u.key(), unit_dir(o.out, u));
      ++recorded_now;
      continue;
    }
    phases[u.pretraining() ? 0 : 1].push_back(run.worker_job(u.key(), unit_dir(o.out, u), per_job));
  }
  int left = o.run.max_units < 0 ? -1 : std::max(0, o.run.max_units - recorded_now);
  auto on_success = [&](const WorkerJob& j) {
    run.record_unit(j.key, unit_dir(o.out, by_key.at(j.key)));
  };
  const int ran =
      run_worker_jobs(self_executable(), phases[0], o.run.jobs, left, on_success, kWho, log);
  if (left >= 0) left = std::max(0, left - ran);
  // downstream units whose pre-training is done (another shard's may still run)
  std::vector<WorkerJob> ready;
  int waiting = 0;
  for (const WorkerJob& j : phases[1]) {
    if (fs::exists(pretrain_dir(o.out, model_of(by_key.at(j.key))) + "/result.json"))
      ready.push_back(j);
    else
      ++waiting;
  }
  if (left != 0) run_worker_jobs(self_executable(), ready, o.run.jobs, left, on_success, kWho, log);
  if (waiting > 0 && run.shard().sharded()) {
    log << kWho << ": " << waiting
        << " downstream units wait for pre-trainings of other shards; run again after them\n";
  }
  return mine;
}

}  // namespace

int run_margin_study(const MarginStudyOptions& o, std::ostream& out, std::ostream& log) {
  o.validate();
  if (o.run.report) {
    build_margin_report(o.out, out, log);
    return 0;
  }
  const json described = check_and_describe(o, log);  // before the output folder exists
  const json study = {{"kind", "study"}, {"settings", o.settings_json()}, {"data", described}};
  StudyRun run(o.out, parse_shard(o.run.shard, "--shard"), study, kWho, log,
               [&](const json& recorded, const std::string& ledger) {
                 if (recorded.value("data", json::array()) != described) {
                   throw std::runtime_error(
                       ledger +
                       ": the sources or data sets changed since its units ran (their windows' "
                       "fingerprints differ); restore them or use another --out");
                 }
               });
  const int mine = run_margin_units(o, run, log);
  if (run.finish(mine)) build_margin_report(o.out, out, log);
  return recorded_units(run.ledger().records());
}

}  // namespace moca::sim
