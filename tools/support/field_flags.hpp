#pragma once
/// \file field_flags.hpp
/// Library messages name the option they are about (`DatasetOptions::sample_rate (-1) must be
/// >= 0`), the programs name the flag that sets it (`--sample-rate (-1) must be >= 0`).
/// The flags come from the schema rows a program added (add_field_flag), then from a table of
/// the option structs without a schema yet; run_cli rewrites every error message with them.
#include <functional>
#include <string>

namespace moca::tools {

/// A library option field and the flag that sets it in the programs.
struct FieldFlag {
  const char* field;  ///< `Struct::member`, as library messages write it
  const char* flag;   ///< `--flag`
};

/// Registers `field` (`Owner::key`) as set by `flag` in this program: what add_schema_options
/// does for each row it adds. Registered fields are replaced before the table's.
void add_field_flag(const std::string& field, const std::string& flag);

/// `message` with every field of the table replaced by its flag. A field matches whole: no
/// letter, digit, '_' or "::" next to it (so `AnalysisOptions::gamma` leaves
/// `AnalysisOptions::gamma_u` alone, and `AnalysisOptions::gamma:` is a match). Given
/// `has_flag` (the program's flags), a table row applies only when the program has its flag, and
/// a field `SomethingOptions::name_of_it` that no applying row names becomes `--name-of-it` when
/// the program has that flag (the studies' options are named so: PretrainOptions::batch_size is
/// moca's --batch and a study's --batch-size), and stays as it is otherwise.
std::string with_flag_names(const std::string& message,
                            const std::function<bool(const std::string&)>& has_flag = {});

}  // namespace moca::tools
