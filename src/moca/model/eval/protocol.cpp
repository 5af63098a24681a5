#include "moca/model/eval/protocol.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"
#include "moca/data/splits.hpp"
#include "moca/model/io/checkpoint.hpp"

namespace moca::model {

ModelGeometry checkpoint_geometry(const std::string& checkpoint) {
  const CheckpointInfo info = read_checkpoint_info(checkpoint);
  ModelGeometry g;
  g.length = info.model.length;
  g.patch_length = info.model.patch_length;
  g.max_patches = info.model.max_patches();
  const auto& meta = info.meta;
  if (meta.contains("data") && meta.at("data").contains("sample_rate_hz")) {
    g.sample_rate_hz = meta.at("data").at("sample_rate_hz").get<double>();
  }
  return g;
}

ModelGeometry geometry_at_seconds(const ModelGeometry& g, double seconds, const std::string& what,
                                  std::string* note) {
  if (!(seconds > 0.0 && std::isfinite(seconds))) {
    throw_invalid("", what + " (" + format_number(seconds, 6) + ") must be > 0");
  }
  const long samples = std::lround(seconds * g.sample_rate_hz);
  const long length = samples / g.patch_length * g.patch_length;
  if (length < g.patch_length) {
    throw_invalid("", what + " (" + format_number(seconds, 6) + ") is shorter than one patch (" +
                          std::to_string(g.patch_length) + " samples at " +
                          format_number(g.sample_rate_hz, 6) + " Hz)");
  }
  check_patches_fit_positions(static_cast<int>(length / g.patch_length), g.max_patches,
                              g.patch_length, "", what + " (" + format_number(seconds, 6) + ")");
  if (note) {
    *note = "input of " + format_number(seconds, 6) + " s: " + std::to_string(samples) +
            " samples at " + format_number(g.sample_rate_hz, 6) + " Hz -> " +
            std::to_string(length) + " (" + std::to_string(length / g.patch_length) +
            " patches of " + std::to_string(g.patch_length) + " per modality" +
            (length < samples ? "; windows centre-cropped to whole patches" : "") +
            "; the model's own length is " + std::to_string(g.length) + ")";
  }
  ModelGeometry out = g;
  out.length = static_cast<int>(length);
  return out;
}

std::vector<UnusedOption> unused_options(const ProtocolOptions& o) {
  std::vector<UnusedOption> out;
  const std::string is = "; the protocol is " + to_string(o.protocol);
  if (o.protocol != Protocol::kRandom) {
    out.push_back({"ProtocolOptions::train_fraction", "only the random protocol uses it" + is});
  }
  if (o.protocol != Protocol::kSubjectKfold) {
    out.push_back({"ProtocolOptions::folds", "only the subject-kfold protocol uses it" + is});
  }
  if (o.downstream.mode == DownstreamMode::kScratch &&
      o.downstream.scratch_init == ScratchInit::kTimm) {
    out.push_back({"DownstreamOptions::pos_embed",
                   "timm's initialisation (--scratch-init timm) learns the positional table from a "
                   "random start"});
  }
  return out;
}

void ProtocolOptions::validate() const {
  downstream.validate();
  check_ranges(*this);  // the rows' ranges (schema): train_fraction, folds, label_fraction
  // Fields are named Owner::field, which the programs rewrite to their flags, Python to its
  // keywords.
  if (refit && save_model.empty()) {
    throw_invalid("",
                  "ProtocolOptions::refit trains the model to keep; it needs "
                  "ProtocolOptions::save_model");
  }
  if (refit && downstream.checkpoint.find("{fold}") != std::string::npos) {
    throw_invalid("ProtocolOptions::refit",
                  "a per-fold DownstreamOptions::checkpoint (" + downstream.checkpoint +
                      ") would train on windows that pre-trained "
                      "another fold's encoder; refit from one checkpoint");
  }
  if (refit && save_model.find("{fold}") != std::string::npos) {
    throw_invalid("ProtocolOptions::refit", "one model is saved: ProtocolOptions::save_model (" +
                                                save_model + ") must not contain '{fold}'");
  }
}

data::Windows shuffle_labels(const data::Windows& w, std::uint64_t seed) {
  std::vector<int> y(w.labels.data(), w.labels.data() + w.labels.size());
  Rng rng(seed);
  shuffle(y, rng);
  data::Windows out = w;
  for (int i = 0; i < out.size(); ++i) out.labels(i) = y[static_cast<size_t>(i)];
  return out;
}

std::vector<int> label_subset(const data::Windows& train, double fraction, std::uint64_t seed) {
  std::map<int, std::vector<int>> by_class;
  for (int i = 0; i < train.size(); ++i)
    if (train.labels(i) >= 0) by_class[train.labels(i)].push_back(i);
  Rng rng(seed);
  std::vector<int> keep;
  for (auto& [label, rows] : by_class) {  // classes in id order: the draws are reproducible
    const auto n = static_cast<std::int64_t>(rows.size());
    const std::int64_t k =
        std::max<std::int64_t>(1, std::llround(fraction * static_cast<double>(n)));
    for (std::int64_t i = 0; i < k; ++i) {  // partial Fisher-Yates: the first k of a shuffle
      std::swap(rows[static_cast<size_t>(i)],
                rows[static_cast<size_t>(uniform_int(rng, i, n - 1))]);
    }
    keep.insert(keep.end(), rows.begin(), rows.begin() + k);
  }
  std::sort(keep.begin(), keep.end());
  return keep;
}

nlohmann::json summary_json(const std::vector<double>& v) {
  const auto ms = mean_sd(v);
  return {{"mean", ms.mean}, {"sd", ms.sd}, {"n", ms.n}, {"values", v}};
}

std::string replace_fold(std::string s, int fold) {
  const std::string key = "{fold}";
  for (size_t p = s.find(key); p != std::string::npos; p = s.find(key)) {
    s.replace(p, key.size(), std::to_string(fold));
  }
  return s;
}

void FoldScores::add(const ClassificationMetrics& m) {
  accuracy.push_back(m.accuracy);
  macro_f1.push_back(m.macro_f1);
  balanced_accuracy.push_back(m.balanced_accuracy);
}

nlohmann::json FoldScores::summary_json() const {
  return {{"accuracy", model::summary_json(accuracy)},
          {"macro_f1", model::summary_json(macro_f1)},
          {"balanced_accuracy", model::summary_json(balanced_accuracy)}};
}

nlohmann::json ProtocolResult::folds_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const FoldResult& f : folds) {
    const DownstreamResult& r = f.result;
    nlohmann::json fj = {{"fold", f.fold},
                         {"train_windows", f.train_windows},
                         {"test_windows", f.test_windows},
                         {"checkpoint", f.checkpoint},
                         {"channel_map", r.channel_map},
                         {"device", to_string(r.device)},
                         {"seconds", r.seconds},
                         {"metrics", to_json(r.test)},
                         {"history", r.history}};
    if (protocol != "random") fj["test_subjects"] = f.test_subjects;
    out.push_back(fj);
  }
  return out;
}

nlohmann::json ProtocolResult::saved_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const SavedModel& s : saved) {
    if (s.fold >= 0) {
      out.push_back({{"path", s.path}, {"fold", s.fold}});
    } else {
      out.push_back({{"path", s.path}, {"refit", true}, {"train_windows", s.train_windows}});
    }
  }
  return out;
}

std::string ProtocolResult::predictions_csv() const {
  std::string csv = "fold,truth,predicted\n";
  for (const FoldResult& f : folds) {
    for (size_t i = 0; i < f.result.truth.size(); ++i) {
      csv += std::to_string(f.fold) + "," + std::to_string(f.result.truth[i]) + "," +
             std::to_string(f.result.predicted[i]) + "\n";
    }
  }
  return csv;
}

namespace {

// A classifier needs labelled windows of >= 2 classes.
void require_two_classes(const data::Windows& all, DownstreamMode mode) {
  std::vector<int> classes;
  for (int i = 0; i < all.size(); ++i)
    if (all.labels(i) >= 0 &&
        std::find(classes.begin(), classes.end(), all.labels(i)) == classes.end())
      classes.push_back(all.labels(i));
  if (classes.size() >= 2) return;
  throw_invalid(
      "run_classify()",
      to_string(mode) + " needs labels of >= 2 classes; " +
          (classes.empty() ? std::string("the data has no labels (Y.npy)")
                           : "every labelled window has class " +
                                 (classes[0] < static_cast<int>(all.class_names.size())
                                      ? "'" + all.class_names[static_cast<size_t>(classes[0])] + "'"
                                      : std::to_string(classes[0]))));
}

// Every data channel must be one of the checkpoint's (matched by name).
void require_model_channels(const std::string& checkpoint, const data::Windows& all) {
  const CheckpointInfo info = read_checkpoint_info(checkpoint);
  for (const auto& name : all.channel_names) {
    if (std::find(info.channel_names.begin(), info.channel_names.end(), name) !=
        info.channel_names.end())
      continue;
    std::string model_ch, data_ch;
    for (const auto& c : info.channel_names) model_ch += (model_ch.empty() ? "" : ",") + c;
    for (const auto& c : all.channel_names) data_ch += (data_ch.empty() ? "" : ",") + c;
    throw_invalid(
        "run_classify()",
        "the checkpoint " + info.path + " was trained on " +
            std::to_string(info.channel_names.size()) + " channels (" + model_ch +
            ") and the data has " + std::to_string(all.channels) + " (" + data_ch + "); channel '" +
            name +
            "' is not one of the model's, which cannot be bridged (channels are matched by name: "
            "name them with DatasetOptions::channel_names or meta.json channel_names, or select "
            "them with DatasetOptions::modalities)");
  }
}

// The train/test splits of the protocol over `all`.
std::vector<data::Split> protocol_splits(const ProtocolOptions& o, const std::string& name,
                                         const data::Windows& all) {
  if (o.protocol == Protocol::kRandom) {
    return {data::random_split(all.size(), o.train_fraction, o.split_seed)};
  }
  if (o.protocol == Protocol::kPredefined) {
    return {data::predefined_split(all.parts, "protocol " + name)};
  }
  data::require_subject_ids(all.subjects, all.parts, "protocol " + name,
                            "protocol predefined, or random");
  return o.protocol == Protocol::kLoso ? data::leave_one_subject_out(all.subjects)
                                       : data::subject_kfold(all.subjects, o.folds, o.split_seed);
}

// The subjects of `test` in order of first appearance.
std::vector<int> subjects_of(const data::Windows& test) {
  std::vector<int> subj;
  for (int i = 0; i < test.size(); ++i) {
    if (std::find(subj.begin(), subj.end(), test.subjects(i)) == subj.end()) {
      subj.push_back(test.subjects(i));
    }
  }
  return subj;
}

}  // namespace

namespace {

/// Fold `f`'s downstream options: its checkpoint ('{fold}' replaced) and, when this fold's model
/// is kept, where and with which provenance (recorded in `out.saved`).
DownstreamOptions fold_options(const ProtocolOptions& o, const std::vector<data::Split>& splits,
                               size_t f, ProtocolResult& out, std::ostream& log) {
  const int fold = static_cast<int>(f);
  const bool each_fold = o.save_model.find("{fold}") != std::string::npos;
  DownstreamOptions d = o.downstream;
  d.checkpoint = replace_fold(d.checkpoint, fold);
  if (!o.refit && (each_fold || f == 0)) {
    d.save_model = replace_fold(o.save_model, fold);
    d.provenance = {{"protocol", out.protocol},
                    {"fold", f},
                    {"folds", splits.size()},
                    {"data", o.source},
                    {"test_windows", splits[f].test.size()}};
    if (!d.save_model.empty()) {
      out.saved.push_back({d.save_model, fold, 0});
      if (splits.size() > 1 && !each_fold) {
        log << "the model saved is fold 0's of " << splits.size()
            << " (refit: one model on every window; '{fold}' in the name: each fold's)\n";
      }
    }
  }
  return d;
}

/// Fold `f`'s training windows under the options' label fraction and shuffled-label control;
/// the batch brought down to them when allowed.
data::Windows fold_training_windows(const ProtocolOptions& o, data::Windows train, size_t f,
                                    DownstreamOptions& d, std::ostream& log) {
  if (o.label_fraction < 1.0) {
    const int before = train.size();
    train = train.subset(label_subset(train, o.label_fraction, o.split_seed + f));
    log << "label fraction " << o.label_fraction << ": " << train.size() << " of " << before
        << " training windows (per class, at least one each)\n";
  }
  if (o.shuffle_labels) {
    train = shuffle_labels(train, derive_seed(o.split_seed + f, 0x5348'5546));  // "SHUF"
    log << "shuffled-label control: training labels permuted\n";
  }
  if (o.batch_at_most_train && train.size() < d.batch_size) {
    log << "batch size " << d.batch_size << " > " << train.size()
        << " training windows: batches of " << train.size() << "\n";
    d.batch_size = std::max(1, train.size());
  }
  return train;
}

}  // namespace

ProtocolResult run_protocol(const ProtocolOptions& o, const data::Windows& windows,
                            std::ostream& log) {
  RunContext local(log);
  return run_protocol(o, windows, local);
}

ProtocolResult run_protocol(const ProtocolOptions& o, const data::Windows& windows,
                            RunContext& context) {
  std::ostream& log = context.log();
  o.validate();
  data::Windows renamed;
  if (o.match_channels == ChannelMatch::kPosition) {
    if (o.downstream.mode == DownstreamMode::kScratch) {
      throw_invalid("ProtocolOptions::validate()",
                    "match_channels position needs a checkpoint (a model "
                    "from scratch takes the data's channels)");
    }
    std::vector<std::string> notes;
    renamed = channels_by_position(
        windows, read_checkpoint_info(replace_fold(o.downstream.checkpoint, 0)).channel_names,
        &notes);
    for (const auto& n : notes) log << n << "\n";
  }
  const data::Windows& all = o.match_channels == ChannelMatch::kPosition ? renamed : windows;
  ProtocolResult out;
  out.protocol = o.protocol_name.empty() ? to_string(o.protocol) : o.protocol_name;
  require_two_classes(all, o.downstream.mode);
  if (o.downstream.mode != DownstreamMode::kScratch) {
    require_model_channels(replace_fold(o.downstream.checkpoint, 0), all);
  }
  const std::vector<data::Split> splits = protocol_splits(o, out.protocol, all);
  for (size_t f = 0; f < splits.size(); ++f) {
    const int fold = static_cast<int>(f);
    DownstreamOptions d = fold_options(o, splits, f, out, log);
    const data::Windows test = all.subset(splits[f].test);
    log << out.protocol << " split " << f + 1 << "/" << splits.size() << ": "
        << splits[f].train.size() << " train, " << test.size() << " test windows\n";
    const data::Windows train = fold_training_windows(o, all.subset(splits[f].train), f, d, log);
    FoldResult fr;
    fr.fold = fold;
    fr.train_windows = train.size();
    fr.test_windows = test.size();
    fr.checkpoint = d.checkpoint;
    fr.test_subjects = subjects_of(test);
    fr.result = train_classifier(d, train, test, context);
    out.scores.add(fr.result.test);
    out.folds.push_back(std::move(fr));
  }
  if (o.refit) {  // the kept model, trained on every labelled window (no test part)
    std::vector<int> rows;
    for (int i = 0; i < all.size(); ++i)
      if (all.labels(i) >= 0) rows.push_back(i);
    DownstreamOptions d = o.downstream;
    d.save_model = o.save_model;
    d.provenance = {{"protocol", out.protocol}, {"refit", true}, {"data", o.source}};
    log << "refit: training the kept model on all " << rows.size() << " labelled windows\n";
    train_classifier(d, all.subset(rows), all.subset({}), context);
    out.saved.push_back({d.save_model, -1, static_cast<int>(rows.size())});
  }
  return out;
}

}  // namespace moca::model
