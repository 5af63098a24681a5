#include "study_flags.hpp"

#include "data_flags.hpp"

namespace moca::sim {

void add_study_data_flags(CLI::App* app, StudyDataOptions& o, const std::string& samples_help,
                          const std::string& data_seed_help) {
  tools::add_data_flags(app, o.selection,
                        data::kDataSourceScope | data::kGeneratorScope | data::kSplitSeedScope);
  app->add_option("--samples", o.samples, samples_help)->capture_default_str();
  app->add_option("--data-seed", o.seed, data_seed_help)->capture_default_str();
}

}  // namespace moca::sim
