#pragma once
/// \file data_flags.hpp
/// The one flag group every program uses to choose its data (kcca_score, every `moca` command,
/// the studies in simulations/): the rows of moca::data::DataOptions::schema in the program's
/// scope (--data, the --data-* options of open_dataset, and the generator and split options).
#include <CLI/CLI.hpp>

#include "moca/data/selection.hpp"

namespace moca::tools {

/// Adds to `app`, in its "Data" group, a flag for every row of DataOptions::schema in `scope`
/// (data::kDataSourceScope, kGeneratorScope, ...), bound to `options`. After the parse, the
/// flags that data::unused_options() finds without effect (the split's only with kSplitScope)
/// are refused when stated and left out of the recorded options (run_cli.hpp, inert_option).
void add_data_flags(CLI::App* app, data::DataOptions& options, Scope scope);

}  // namespace moca::tools
