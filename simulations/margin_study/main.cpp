// margin_study: cross vs sync masking (both count rules), pre-trained on named sources with
// several seeds, then linear-probed and fine-tuned on named data sets; paired differences over
// seeds and folds. See docs/studies.md ("margin_study").
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "list_flags.hpp"
#include "margin_study.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/text_replace.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/model_options.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace {

/// Pulls the `NAME.subjects=VALUE` items out of `sets` into `subjects` (per data set, in order).
std::vector<std::string> take_subjects(std::vector<std::string>& sets,
                                       const std::vector<moca::sim::TransferDataSet>& data) {
  std::vector<std::string> subjects(data.size(), "kept"), rest;
  for (const std::string& item : sets) {
    const auto dot = item.find('.');
    const auto eq = item.find('=');
    if (dot != std::string::npos && eq != std::string::npos && dot < eq &&
        item.substr(dot + 1, eq - dot - 1) == "subjects") {
      bool found = false;
      for (size_t i = 0; i < data.size(); ++i) {
        if (data[i].name == item.substr(0, dot)) {
          subjects[i] = item.substr(eq + 1);
          found = true;
        }
      }
      if (!found)
        throw std::invalid_argument("--set (" + item + "): no data set " + item.substr(0, dot) +
                                    "; name it with --data NAME=SPEC");
    } else {
      rest.push_back(item);
    }
  }
  sets = rest;
  return subjects;
}

std::vector<std::string> split_list(const std::vector<std::string>& given,
                                    const std::string& flag) {
  return moca::masking::split_spec_list(moca::sim::join_list(given), flag);
}

}  // namespace

int main(int argc, char** argv) {
  moca::sim::MarginStudyOptions o;
  const moca::sim::MarginStudyOptions defaults;
  std::vector<std::string> sources, source_sets, data, sets;
  CLI::App app{
      "margin_study: cross vs sync masking (both count rules) pre-trained on named sources "
      "(default HAPT raw and uci-har windowing) with several seeds, then linear-probed and "
      "fine-tuned on named data sets; paired differences over seeds and folds; resumable (run "
      "the same command again), --jobs, --shard K/N, --report rebuilds report.md/report.json "
      "from the ledgers"};
  moca::sim::add_schema_rows(&app, o, "--out", "--window-length");
  app.get_option("--out")->required();
  app.add_option("--source", sources,
                 "NAME=SPEC, repeatable: a pre-training source (default raw=hapt:$MOCA_HAPT_DIR "
                 "and uci-har=the same with hapt-windowing=uci-har)");
  app.add_option("--source-set", source_sets,
                 "NAME.KEY=VALUE, repeatable: a source's data option (format, modalities, "
                 "sample-rate, hapt-windowing, keep-classes, ...)");
  // the pre-training rows of model::PretrainOptions the resumable studies take (--preset,
  // --patch-length, --epochs, --batch, --lr, --warmup-epochs, --checkpoint-every)
  moca::tools::add_schema_options(&app, o.pretrain,
                                  moca::model::kStudyScope | moca::model::kResumableStudyScope);
  app.get_option("--warmup-epochs")->description("linear warm-up in epochs (in [0, epochs))");
  app.add_option("--data", data,
                 "NAME=SPEC, repeatable: a downstream set (hmp:DIR, npy:DIR, hapt:DIR, "
                 "generator:..., or `source`: each pre-training source's own data); default "
                 "own=source with protocol random (Table 1's 7:3 split)");
  app.add_option("--set", sets,
                 "NAME.KEY=VALUE, repeatable: a downstream set's option (transfer_study's "
                 "keys: protocol, folds, keep-classes, input-seconds, ...; and subjects = kept | "
                 "held-out | all for a `source` set)");
  moca::sim::add_schema_rows(&app, o, "--settings", "--report");
  moca::sim::show_list_default(app, "--policies", o.policies);
  moca::sim::show_list_default(app, "--settings", o.settings);
  app.add_option("--worker-unit", o.worker_unit)->group("");
  app.add_option("--worker-threads", o.worker_threads)->group("");
  return moca::tools::run_cli("margin_study", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    o.policies = app.count("--policies") ? split_list(o.policies, "--policies") : defaults.policies;
    o.settings = app.count("--settings") ? split_list(o.settings, "--settings") : defaults.settings;
    if (!o.run.report && o.worker_unit.empty()) {
      if (sources.empty()) {
        if (!source_sets.empty())
          throw std::invalid_argument("--source-set needs --source NAME=SPEC");
        o.sources = moca::sim::MarginStudyOptions::default_margin_sources();
      }
      for (const std::string& s : sources) {
        try {
          o.sources.push_back(moca::sim::parse_transfer_data(s));
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(moca::replace_all(e.what(), "--data", "--source"));
        }
      }
      try {
        moca::sim::apply_data_settings(o.sources, source_sets);
      } catch (const std::invalid_argument& e) {
        std::string m = moca::replace_all(e.what(), "--set", "--source-set");
        throw std::invalid_argument(moca::replace_all(std::move(m), "--data", "--source"));
      }
      if (data.empty()) {
        data = {"own=source"};
        sets.insert(sets.begin(), "own.protocol=random");
      }
      for (const std::string& d : data) o.data.push_back(moca::sim::parse_transfer_data(d));
      o.subjects = take_subjects(sets, o.data);
      moca::sim::apply_data_settings(o.data, sets);
    }
    if (!o.worker_unit.empty()) {
      moca::sim::run_margin_worker(o, std::cerr);
      return 0;
    }
    moca::sim::run_margin_study(o, std::cout, std::cerr);
    return 0;
  });
}
