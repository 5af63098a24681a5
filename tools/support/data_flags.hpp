#pragma once
/// \file data_flags.hpp
/// The one flag group every program uses to choose its data (kcca_score, every `moca` command,
/// the studies in simulations/): --data and the --data-* options of moca::data::open_dataset.
#include <CLI/CLI.hpp>
#include <string>

#include "moca/data/dataset.hpp"

namespace moca::tools {

/// Adds --data SPEC, --data-format, --modalities, --sample-rate, --drop-nonfinite,
/// --keep-classes and --npy-layout to `app`, writing into `spec` and `options`.
void add_data_flags(CLI::App* app, std::string& spec, data::DatasetOptions& options);

}  // namespace moca::tools
