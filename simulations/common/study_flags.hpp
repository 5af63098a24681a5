#pragma once
/// \file study_flags.hpp
/// The data flag group of the studies that read StudyDataOptions (simulation_study,
/// paper_experiments, bound_check): the programs' --data group plus
/// --samples, --coupling, --split-seed and --data-seed.
#include <CLI/CLI.hpp>
#include <string>

#include "study_data.hpp"

namespace moca::sim {

/// Adds the flags to `app`, writing into `o`. `samples_help` and `data_seed_help` say what the
/// study does with the window count and the seed.
void add_study_data_flags(CLI::App* app, StudyDataOptions& o, const std::string& samples_help,
                          const std::string& data_seed_help = "generator seed");

}  // namespace moca::sim
