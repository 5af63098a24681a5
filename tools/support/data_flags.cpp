#include "data_flags.hpp"

#include <string>

#include "schema_options.hpp"

namespace moca::tools {

void add_data_flags(CLI::App* app, data::DataOptions& options, Scope scope) {
  const std::string group = app->option_defaults()->get_group();
  app->option_defaults()->group("Data");
  add_schema_options(app, options, scope);
  app->option_defaults()->group(group);
}

}  // namespace moca::tools
