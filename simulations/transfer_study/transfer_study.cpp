#include "transfer_study.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/file_lock.hpp"
#include "moca/common/fingerprint.hpp"
#include "moca/common/text_replace.hpp"
#include "run_cli.hpp"
#include "study_data.hpp"
#include "study_runner.hpp"

namespace moca::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kWho = "transfer_study";

bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

/// A data set's protocol: auto (empty) or a model::Protocol name.
std::optional<model::Protocol> parse_protocol(const std::string& text, const std::string& what) {
  if (text == "auto") return std::nullopt;
  for (const auto& row : model::kProtocolNames)
    if (text == row.name) return row.value;
  throw std::invalid_argument(what + " (" + text + ") must be one of: auto, " +
                              enum_choices(model::kProtocolNames));
}

/// The paper's appendix tables (fine-tuning and linear-probing settings per data set).
struct PaperColumn {
  const char* name;
  double ft_lr, ft_wd;
  int ft_batch;
  double ft_warmup;
  double lp_lr, lp_wd;
  int lp_batch;
  double lp_warmup;
};
constexpr PaperColumn kPaperColumns[] = {
    {"uci-har", 1e-3, 5e-2, 50, 5, 1e-3, 0.0, 50, 10},
    {"wisdm", 1e-3, 5e-2, 256, 10, 1e-2, 1e-4, 256, 10},
    {"imwsha", 2.5e-4, 5e-2, 64, 10, 1e-3, 1e-4, 28, 10},
    {"realworld", 2.5e-4, 5e-2, 64, 10, 2.5e-3, 1e-4, 64, 10},
    {"opportunity", 2.5e-4, 1e-1, 64, 10, 2.5e-3, 5e-2, 64, 10},
    {"pamap2", 2.5e-4, 5e-2, 64, 10, 2.5e-3, 1e-4, 64, 10},
};

const PaperColumn* paper_column(const TransferDataSet& d) {
  const std::string name = d.paper.empty() ? d.name : d.paper;
  for (const PaperColumn& c : kPaperColumns)
    if (name == c.name) return &c;
  return nullptr;
}

/// The `--set NAME.KEY` key of a data option: its flag key (`sample-rate`), except
/// DatasetOptions' data_format, whose key here is `format`.
std::string transfer_key(const Option& row) {
  return row.field() == "DatasetOptions::data_format" ? "format" : flag_key(row);
}

/// A data-layer message about data set `d` with the data set named first. The data layer names
/// the fields of the data options (`DatasetOptions::sample_rate`), which this program sets with
/// `--set NAME.key` and the spec with `--data NAME=SPEC`: they are written so. A message that
/// still names a program's flag gets the `--set` spelling added.
std::invalid_argument data_error(const TransferDataSet& d, std::string message) {
  const std::vector<Option> rows = option_rows<data::DatasetOptions>();
  for (const Option& row : rows) {
    message =
        replace_all(std::move(message), row.field(), "--set " + d.name + "." + transfer_key(row));
  }
  message = replace_all(std::move(message), "DataOptions::data", "--data " + d.name);
  std::string text = "data set " + d.name + " (" + d.spec + "): " + message;
  for (const Option& row : rows) {
    if (message.find(row.flag) != std::string::npos &&
        message.find("--set " + d.name + ".") == std::string::npos) {
      text += " (here: --set " + d.name + "." + transfer_key(row) + ")";
      break;
    }
  }
  return std::invalid_argument(text);
}

/// A message of check_ranges about data set `d`'s own options (`TransferDataSet::folds`) with
/// them written as this program sets them (`--set NAME.folds`).
std::invalid_argument own_error(const TransferDataSet& d, std::string message) {
  for (const Option& row : option_rows<TransferDataSet>()) {
    message = replace_all(std::move(message), row.field(), "--set " + d.name + "." + flag_key(row));
  }
  return std::invalid_argument(message);
}

std::vector<std::string> paper_column_names() {
  std::vector<std::string> names;
  for (const PaperColumn& c : kPaperColumns) names.emplace_back(c.name);
  return names;
}

}  // namespace

// ---- data sets ----

json TransferDataSet::to_json() const {
  json j = {{"name", name},
            {"spec", spec},
            {"format", dataset.format},
            {"modalities", dataset.modalities},
            {"sample_rate_hz", dataset.sample_rate_hz},
            {"channel_names", dataset.channel_names},
            {"segment", dataset.segment},
            {"keep_classes", dataset.keep_classes},
            {"npy_layout", dataset.npy_layout},
            {"drop_nonfinite", dataset.drop_nonfinite},
            {"protocol", protocol ? model::to_string(*protocol) : std::string("auto")},
            {"folds", folds},
            {"match_channels", enum_name(model::kChannelMatchNames, match_channels)},
            {"input_seconds", input_seconds},
            {"paper", paper}};
  // Only when not raw: the workers read their data set from this record, and ledgers written
  // before the option existed (all raw) keep comparing equal.
  if (dataset.hapt_windowing != data::HaptWindowing::kRaw) {
    j["hapt_windowing"] = enum_name(data::kHaptWindowingNames, dataset.hapt_windowing);
  }
  if (!dataset.labels.empty()) j["labels"] = dataset.labels;  // likewise
  return j;
}

void TransferDataSet::set_json(const json& j) {
  name = j.at("name");
  spec = j.at("spec");
  dataset.format = j.at("format");
  dataset.modalities = j.at("modalities");
  dataset.sample_rate_hz = j.at("sample_rate_hz");
  dataset.channel_names = j.at("channel_names").get<std::vector<std::string>>();
  dataset.segment = j.at("segment");
  dataset.keep_classes = j.at("keep_classes");
  dataset.npy_layout = j.at("npy_layout");
  dataset.drop_nonfinite = j.at("drop_nonfinite");
  protocol = parse_protocol(j.at("protocol").get<std::string>(), "protocol");
  folds = j.at("folds");
  match_channels = parse_enum(model::kChannelMatchNames, j.at("match_channels").get<std::string>(),
                              "match_channels");
  input_seconds = j.at("input_seconds");
  paper = j.at("paper");
  dataset.hapt_windowing =
      j.contains("hapt_windowing")
          ? parse_enum(data::kHaptWindowingNames, j.at("hapt_windowing").get<std::string>(),
                       "hapt_windowing")
          : data::HaptWindowing::kRaw;
  dataset.labels = j.value("labels", std::string());
}

const std::vector<std::string>& transfer_data_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Option& row : option_rows<data::DatasetOptions>()) k.push_back(transfer_key(row));
    k.emplace_back("protocol");
    for (const Option& row : option_rows<TransferDataSet>()) k.push_back(flag_key(row));
    return k;
  }();
  return keys;
}

TransferDataSet parse_transfer_data(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq + 1 == text.size()) {
    throw std::invalid_argument("--data (" + text + ") must be NAME=SPEC, e.g. adl=hmp:DIR");
  }
  TransferDataSet d;
  d.name = text.substr(0, eq);
  d.spec = text.substr(eq + 1);
  if (!valid_name(d.name)) {
    throw std::invalid_argument("--data (" + text +
                                "): the name must be letters, digits, '_' or '-'");
  }
  return d;
}

void apply_data_settings(std::vector<TransferDataSet>& sets,
                         const std::vector<std::string>& items) {
  for (const std::string& item : items) {
    const auto dot = item.find('.');
    const auto eq = item.find('=', dot == std::string::npos ? 0 : dot);
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq == dot + 1) {
      throw std::invalid_argument("--set (" + item +
                                  ") must be NAME.KEY=VALUE, e.g. "
                                  "adl.sample-rate=32");
    }
    const std::string name = item.substr(0, dot), key = item.substr(dot + 1, eq - dot - 1),
                      value = item.substr(eq + 1);
    auto it = std::find_if(sets.begin(), sets.end(),
                           [&](const TransferDataSet& d) { return d.name == name; });
    if (it == sets.end()) {
      std::vector<std::string> names;
      for (const auto& d : sets) names.push_back(d.name);
      const std::string near = nearest_name(name, names);
      throw std::invalid_argument("--set (" + item + "): no data set " + name +
                                  (near.empty() ? "" : " (did you mean " + near + "?)") +
                                  "; name it with --data NAME=SPEC");
    }
    TransferDataSet& d = *it;
    const std::string what = "--set " + name + "." + key;
    // the data options by their schema (DatasetOptions::schema), then the study's own keys
    // (protocol, then TransferDataSet::schema)
    if (key != "data-format" &&
        set_option_text(d.dataset, key == "format" ? "data-format" : key, value, what)) {
      continue;
    }
    if (key == "protocol") {
      d.protocol = parse_protocol(value, what);
    } else if (!set_option_text(d, key, value, what)) {
      const std::string near = nearest_name(key, transfer_data_keys());
      throw std::invalid_argument("--set (" + item + "): unknown key " + key +
                                  (near.empty() ? "" : " (did you mean " + near + "?)"));
    }
  }
}

// ---- options ----

void TransferStudyOptions::validate() const {
  if (out.empty()) throw std::invalid_argument("--out is required");
  if (run.report) return;  // the settings are the ledger's
  if (models.empty() && !scratch) {
    throw std::invalid_argument(
        "no model: name checkpoints with --model NAME=PATH (or keep "
        "the scratch baseline)");
  }
  std::set<std::string> names;
  for (const auto& [name, path] : models) {
    if (!valid_name(name))
      throw std::invalid_argument("--model (" + name + "=" + path +
                                  "): the name must be letters, digits, '_' or '-'");
    if (name == "scratch")
      throw std::invalid_argument("--model (scratch=" + path +
                                  "): the name scratch is the supervised baseline's");
    if (!names.insert(name).second)
      throw std::invalid_argument("--model: the name " + name + " is used twice");
  }
  if (data.empty()) throw std::invalid_argument("no data set: name one with --data NAME=SPEC");
  std::set<std::string> data_names;
  for (const TransferDataSet& d : data) {
    if (!data_names.insert(d.name).second)
      throw std::invalid_argument("--data: the name " + d.name + " is used twice");
    const std::string p = "--set " + d.name + ".";
    try {
      check_ranges(d);  // folds, input-seconds
    } catch (const std::invalid_argument& e) {
      throw own_error(d, e.what());
    }
    if (!d.paper.empty() && d.paper != "none" && !paper_column(d)) {
      throw std::invalid_argument(p + "paper (" + d.paper + ") must be none or one of: " + [] {
        std::string s;
        for (const auto& n : paper_column_names()) s += (s.empty() ? "" : ", ") + n;
        return s;
      }());
    }
    try {
      d.dataset.validate();
    } catch (const std::invalid_argument& e) {
      throw data_error(d, e.what());
    }
  }
  if (settings.empty()) throw std::invalid_argument("--settings is empty (lp, ft)");
  std::set<std::string> seen;
  for (const std::string& s : settings) {
    if (s != "lp" && s != "ft")
      throw std::invalid_argument("--settings (" + s + ") must be lp or ft");
    if (!seen.insert(s).second) throw std::invalid_argument("--settings: " + s + " is named twice");
  }
  check_ranges(*this);  // epochs, label fraction, jobs, threads, max units
  parse_shard(run.shard, "--shard");
}

json TransferStudyOptions::settings_json() const {
  json m = json::array(), d = json::array();
  for (const auto& [name, path] : models) m.push_back({{"name", name}, {"checkpoint", path}});
  for (const auto& ds : data) d.push_back(ds.to_json());
  return {{"models", m},
          {"scratch", scratch},
          {"scratch_preset", scratch_preset},
          {"data", d},
          {"settings", settings},
          {"control", control},
          {"lp_epochs", lp_epochs},
          {"ft_epochs", ft_epochs},
          {"scratch_epochs", scratch_epochs},
          {"split_seed", split_seed},
          {"seed", seed},
          {"label_fraction", label_fraction}};
}

void TransferStudyOptions::set_settings(const json& s) {
  models.clear();
  for (const json& m : s.at("models")) models.emplace_back(m.at("name"), m.at("checkpoint"));
  scratch = s.at("scratch");
  scratch_preset = s.at("scratch_preset");
  data.clear();
  for (const json& j : s.at("data")) {
    TransferDataSet d;
    d.set_json(j);
    data.push_back(d);
  }
  settings = s.at("settings").get<std::vector<std::string>>();
  control = s.at("control");
  lp_epochs = s.at("lp_epochs");
  ft_epochs = s.at("ft_epochs");
  scratch_epochs = s.at("scratch_epochs");
  split_seed = s.at("split_seed");
  seed = s.at("seed");
  label_fraction = s.at("label_fraction");
}

// ---- units ----

std::string TransferUnit::key() const {
  return model + "/" + data + "/" + setting;
}

std::vector<TransferUnit> transfer_units(const TransferStudyOptions& o) {
  std::vector<TransferUnit> units;
  for (const TransferDataSet& d : o.data) {
    for (const auto& m : o.models)
      for (const std::string& s : o.settings) units.push_back({m.first, d.name, s});
    if (o.scratch) units.push_back({"scratch", d.name, "supervised"});
    if (o.control && !o.models.empty()) units.push_back({o.models[0].first, d.name, "lp-shuffled"});
  }
  return units;
}

model::DownstreamOptions unit_downstream_options(const TransferStudyOptions& o,
                                                 const TransferDataSet& d,
                                                 const TransferUnit& unit) {
  using model::DownstreamMode;
  const bool lp = unit.setting == "lp" || unit.setting == "lp-shuffled";
  const DownstreamMode mode = unit.model == "scratch" ? DownstreamMode::kScratch
                              : lp                    ? DownstreamMode::kLinearProbe
                                                      : DownstreamMode::kFinetune;
  model::DownstreamOptions dopt = model::downstream_defaults(mode);
  if (const PaperColumn* c = d.paper == "none" ? nullptr : paper_column(d)) {
    dopt.lr = lp ? c->lp_lr : c->ft_lr;
    dopt.weight_decay = lp ? c->lp_wd : c->ft_wd;
    dopt.batch_size = lp ? c->lp_batch : c->ft_batch;
    dopt.warmup_epochs = lp ? c->lp_warmup : c->ft_warmup;
  }
  dopt.epochs = mode == DownstreamMode::kScratch ? o.scratch_epochs
                : lp                             ? o.lp_epochs
                                                 : o.ft_epochs;
  // The paper warms up for 10 (5) of 50 epochs: fewer epochs keep that share.
  dopt.warmup_epochs =
      dopt.warmup_epochs.value_or(dopt.default_warmup_epochs()) * dopt.epochs / 50.0;
  dopt.seed = o.seed;
  dopt.runtime.device = model::Device::kCpu;
  dopt.progress = false;
  if (mode == DownstreamMode::kScratch) {
    dopt.preset = o.scratch_preset;
  } else {
    for (const auto& m : o.models)
      if (m.first == unit.model) dopt.checkpoint = m.second;
  }
  return dopt;
}

// ---- data ----

OpenedTransferData open_transfer_data(const TransferStudyOptions& o, const TransferDataSet& d,
                                      const model::ModelGeometry& geometry_in) {
  const std::string what = "data set " + d.name + " (" + d.spec + ")";
  model::ModelGeometry geometry = geometry_in;
  if (d.input_seconds > 0)
    geometry =
        model::geometry_at_seconds(geometry, d.input_seconds, "--set " + d.name + ".input-seconds");
  data::DatasetOptions dopt = d.dataset;
  dopt.length = geometry.length;
  dopt.target_rate_hz = geometry.sample_rate_hz;
  dopt.use_env = false;
  OpenedTransferData out;
  try {
    out.dataset = data::open_dataset(d.spec, dopt);
  } catch (const std::invalid_argument& e) {
    throw data_error(d, e.what());
  }
  const data::Windows& w = out.dataset.windows;
  std::set<int> classes, subjects;
  for (int i = 0; i < w.size(); ++i) {
    if (w.labels(i) >= 0) {
      classes.insert(w.labels(i));
      subjects.insert(w.subjects(i));
    }
  }
  if (classes.size() < 2) {
    throw std::invalid_argument(what + ": " + std::to_string(classes.size()) +
                                " class among the labelled windows; classification needs >= 2");
  }
  model::ProtocolOptions& p = out.protocol;
  const int n_subjects = static_cast<int>(subjects.size());
  // auto: the data's own split when it states one (a .ts archive set), else by subjects
  p.protocol = d.protocol.value_or(w.parts.size() != 0 ? model::Protocol::kPredefined
                                   : n_subjects > 5    ? model::Protocol::kSubjectKfold
                                                       : model::Protocol::kLoso);
  p.folds = d.folds;
  p.split_seed = o.split_seed;
  p.match_channels = d.match_channels;
  p.label_fraction = o.label_fraction;
  p.source = out.dataset.spec.to_string();
  p.batch_at_most_train = true;
  if (p.protocol == model::Protocol::kSubjectKfold && n_subjects < d.folds) {
    throw std::invalid_argument(what + ": " + std::to_string(n_subjects) +
                                " subjects for subject-kfold with " + std::to_string(d.folds) +
                                " folds (needs >= folds subjects; set --set " + d.name +
                                ".protocol=loso or .folds)");
  }
  if (p.protocol == model::Protocol::kLoso && n_subjects < 2) {
    throw std::invalid_argument(what + ": " + std::to_string(n_subjects) +
                                " subject for leave-one-subject-out (needs >= 2)");
  }
  return out;
}

namespace {

/// The geometry of a unit's model: its checkpoint's, or for scratch the first model's (every
/// model of a row sees the same windows), else the default 4 s at 50 Hz.
model::ModelGeometry unit_geometry(const TransferStudyOptions& o, const std::string& model) {
  for (const auto& m : o.models)
    if (m.first == model) return model::checkpoint_geometry(m.second);
  if (!o.models.empty()) return model::checkpoint_geometry(o.models.front().second);
  return model::ModelGeometry{};
}

const TransferDataSet& data_set(const TransferStudyOptions& o, const std::string& name) {
  for (const auto& d : o.data)
    if (d.name == name) return d;
  throw std::runtime_error(std::string(kWho) + ": no data set " + name + " in the study");
}

std::string unit_dir(const std::string& out, const TransferUnit& u) {
  return out + "/units/" + u.model + "/" + u.data + "/" + u.setting;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

// ---- worker ----

void run_transfer_worker(const TransferStudyOptions& given, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string ledger_path =
      given.out + "/" + parse_shard(given.run.shard, "--shard").ledger_name();
  const auto records = read_ledger(ledger_path);
  if (records.empty() || records.front().at("kind") != "study")
    throw std::runtime_error("worker: " + ledger_path + " has no study record");
  TransferStudyOptions o = given;
  o.set_settings(records.front().at("settings"));
  const std::vector<TransferUnit> units = transfer_units(o);
  const auto it = std::find_if(units.begin(), units.end(),
                               [&](const TransferUnit& u) { return u.key() == o.worker_unit; });
  if (it == units.end()) throw std::runtime_error("worker: no unit " + o.worker_unit);
  const TransferUnit& unit = *it;
  const TransferDataSet& d = data_set(o, unit.data);
  OpenedTransferData opened = open_transfer_data(o, d, unit_geometry(o, unit.model));
  model::ProtocolOptions po = opened.protocol;
  po.downstream = unit_downstream_options(o, d, unit);
  po.downstream.runtime.threads = o.worker_threads;
  po.shuffle_labels = unit.setting == "lp-shuffled";
  const model::ProtocolResult r = model::run_protocol(po, opened.dataset.windows, log);
  json result = {{"key", unit.key()},
                 {"model", unit.model},
                 {"data", unit.data},
                 {"setting", unit.setting},
                 {"checkpoint", po.downstream.checkpoint},
                 {"protocol", r.protocol},
                 {"downstream", po.downstream.to_json()},
                 {"dataset", opened.dataset.to_json()},
                 {"summary", r.scores.summary_json()},
                 {"folds", r.folds_json()},
                 {"threads", o.worker_threads},
                 {"seconds", seconds_since(t0)}};
  write_json(unit_dir(o.out, unit) + "/result.json", result);
  log << "worker: " << unit.key() << " done\n";
}

// ---- the study ----

namespace {

/// Checks every checkpoint and opens every data set at the first model's geometry (rate,
/// classes, subjects, protocol) before anything is written; returns their descriptions.
json check_and_describe(const TransferStudyOptions& o, std::ostream& log) {
  for (const auto& [name, path] : o.models) {
    if (!fs::exists(path))
      throw std::invalid_argument("--model " + name + "=" + path + ": no such checkpoint");
  }
  const model::ModelGeometry geometry = unit_geometry(o, o.models.empty() ? "" : o.models[0].first);
  json described = json::array();
  for (const TransferDataSet& d : o.data) {
    const OpenedTransferData opened = open_transfer_data(o, d, geometry);
    log << kWho << ": " << d.name << ": " << opened.dataset.summary() << "; protocol "
        << model::to_string(opened.protocol.protocol)
        << (opened.protocol.protocol == model::Protocol::kSubjectKfold
                ? " (" + std::to_string(opened.protocol.folds) + " folds)"
                : std::string())
        << "\n";
    for (const auto& n : opened.dataset.notes) log << kWho << ": " << d.name << ": " << n << "\n";
    json j = opened.dataset.to_json();
    j["name"] = d.name;
    j["protocol"] = model::to_string(opened.protocol.protocol);
    j["fingerprint"] = data::fingerprint(opened.dataset.windows);  // its numbers (resume check)
    described.push_back(j);
  }
  return described;
}

/// This process's units (its shard's) and how to run the ones still to do.
/// Records the units finished before a kill; runs the others as workers (--jobs at once, up to
/// --max-units new ones). Returns the units of this shard.
int run_transfer_units(const TransferStudyOptions& o, StudyRun& run, std::ostream& log) {
  const std::vector<TransferUnit> units = transfer_units(o);
  const int per_job = threads_per_job(o.run.threads, o.run.jobs);
  std::map<std::string, TransferUnit> by_key;
  std::vector<WorkerJob> jobs;
  int mine = 0, recorded_now = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    if (!run.shard().owns(i)) continue;
    ++mine;
    const TransferUnit& u = units[i];
    if (run.ledger().has("unit", u.key())) continue;
    if (fs::exists(unit_dir(o.out, u) + "/result.json")) {  // finished before a kill
      run.record_unit(u.key(), unit_dir(o.out, u));
      ++recorded_now;
      continue;
    }
    by_key[u.key()] = u;
    jobs.push_back(run.worker_job(u.key(), unit_dir(o.out, u), per_job));
  }
  const int left = o.run.max_units < 0 ? -1 : std::max(0, o.run.max_units - recorded_now);
  run_worker_jobs(
      self_executable(), jobs, o.run.jobs, left,
      [&](const WorkerJob& j) { run.record_unit(j.key, unit_dir(o.out, by_key.at(j.key))); }, kWho,
      log);
  return mine;
}

}  // namespace

int run_transfer_study(const TransferStudyOptions& o, std::ostream& out, std::ostream& log) {
  o.validate();
  if (o.run.report) {
    build_transfer_report(o.out, out, log);
    return 0;
  }
  const json described = check_and_describe(o, log);  // before the output folder exists
  json study = {{"kind", "study"}, {"settings", o.settings_json()}, {"data", described}};
  // The checkpoints' contents, not only their paths: a unit is reused only for the model it ran,
  // not for another model written over the same file.
  json checkpoints = json::object();
  for (const auto& [name, path] : o.models) checkpoints[name] = file_fingerprint(path);
  study["checkpoints"] = checkpoints;
  auto check_resume = [&](const json& recorded, const std::string& ledger) {
    // Ledgers written before the fingerprints lack them: compared where recorded.
    const json& was = recorded.value("checkpoints", json::object());
    for (const auto& [name, path] : o.models) {
      if (was.contains(name) && was.at(name) != checkpoints.at(name)) {
        throw std::runtime_error(ledger + ": model " + name + "'s checkpoint " + path +
                                 " changed since its units ran (fingerprint " +
                                 was.at(name).get<std::string>() + " -> " +
                                 checkpoints.at(name).get<std::string>() +
                                 "); restore it or use another --out");
      }
    }
    // The data sets' numbers too: one changed in place under the same path and shape would
    // mix its units with the old ones.
    const json& was_data = recorded.value("data", json::array());
    for (size_t i = 0; i < was_data.size() && i < described.size(); ++i) {
      const json& a = was_data[i];
      const json& b = described[i];
      if (a.contains("fingerprint") && a.value("name", "") == b.at("name") &&
          a.at("fingerprint") != b.at("fingerprint")) {
        throw std::runtime_error(ledger + ": data set " + b.at("name").get<std::string>() +
                                 " changed since its units ran (data fingerprint " +
                                 a.at("fingerprint").get<std::string>() + " -> " +
                                 b.at("fingerprint").get<std::string>() +
                                 "); restore it or use another --out");
      }
    }
  };
  StudyRun run(o.out, parse_shard(o.run.shard, "--shard"), study, kWho, log, check_resume);
  const int mine = run_transfer_units(o, run, log);
  if (run.finish(mine)) build_transfer_report(o.out, out, log);
  return recorded_units(run.ledger().records());
}

}  // namespace moca::sim
