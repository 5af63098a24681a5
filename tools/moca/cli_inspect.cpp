// `moca attention`: flags -> model::AttentionOptions (attention_report.hpp).
#include <iostream>
#include <memory>

#include "cli.hpp"

namespace moca::tools {

Subcommand add_attention_cli(CLI::App& app) {
  auto c = std::make_shared<AttentionCommand>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // no-progress, no-png
  auto* a = app.add_subcommand("attention",
                               "attention maps, cls attention and rollout of chosen test windows");
  add_data_options(a, c->data);
  add_runtime_options(a, c->runtime);
  add_schema_options(a, *c, kEveryScope);  // model::AttentionOptions::schema
  a->add_flag("--no-png", flags->second, "CSV and JSON only");
  add_no_progress(a, flags->first);
  after_parse(a, [a, c] { inert_fields(*a, model::unused_options(*c)); });
  return {a, [c, flags]() {
            c->png = !flags->second;
            run_attention(*c, std::cout, std::cerr);
            return 0;
          }};
}

}  // namespace moca::tools
