#include "data_flags.hpp"

#include <string>

#include "run_cli.hpp"
#include "schema_options.hpp"

namespace moca::tools {

void add_data_flags(CLI::App* app, data::DataOptions& options, Scope scope) {
  const std::string group = app->option_defaults()->get_group();
  app->option_defaults()->group("Data");
  add_schema_options(app, options, scope);
  app->option_defaults()->group(group);
  // A data flag that the data or the split leaves without effect is refused when given, and not
  // recorded otherwise (--coupling beside HAPT data, --folds beside --split random).
  const bool split_used = (scope & data::kSplitScope) != 0;
  after_parse(app, [app, &options, split_used] {
    inert_fields(*app, data::unused_options(options, split_used));
  });
}

}  // namespace moca::tools
