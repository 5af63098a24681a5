// The run context of a training process (torch-free). See run_context.hpp.
#include "moca/model/dist/run_context.hpp"
#include "moca/common/error_text.hpp"

#include <cstdio>
#include <stdexcept>
#include <utility>

namespace moca::model {

RunContext::RunContext(std::ostream& log)
    : collective_(std::make_unique<LocalCollective>()), log_(&log) {}

RunContext::RunContext(std::unique_ptr<Collective> collective, std::ostream& log)
    : collective_(std::move(collective)) {
  if (!collective_) throw_invalid("RunContext()", "collective is null");
  if (collective_->is_root()) {
    log_ = &log;
  } else {
    null_log_ = std::make_unique<std::ostream>(nullptr);
    log_ = null_log_.get();
  }
}

RunContext::~RunContext() = default;

void RunContext::check_fits(const DistOptions& options, bool cuda, const std::string& who) const {
  const Collective& c = *collective_;
  if (c.world_size() <= 1) return;
  const DistBackend used = c.backend();
  if (used == DistBackend::kNccl && !cuda) {
    throw_invalid(who, "the run's process group is nccl, which needs RuntimeOptions::device cuda");
  }
  const DistBackend wanted = resolve_backend(options.backend, cuda);
  if (wanted != used || options.timeout_s != c.timeout_s()) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "timeout %g s) differs from the options' (%s, timeout %g s)",
                  c.timeout_s(), enum_name(kDistBackendNames, wanted).c_str(), options.timeout_s);
    throw_invalid(who, "the run context's process group (" + enum_name(kDistBackendNames, used) +
                           ", " + buf + "); make the context from the same DistOptions");
  }
}

RunContext make_run_context(const DistOptions& options, bool cuda, std::ostream& log) {
  options.validate();
  const DistEnv env = read_dist_env();
  if (env.world_size <= 1) return RunContext(log);
  return RunContext(connect_c10d(env, options, cuda), log);
}

}  // namespace moca::model
