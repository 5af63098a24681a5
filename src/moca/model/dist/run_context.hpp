#pragma once
/// \file run_context.hpp
/// What a training call needs to know about the process it runs in (torch-free): the
/// collective of its job's ranks and the log it writes to.
///
/// A program makes one context per process, before its first training call, with
/// make_run_context() (the one place that reads the rendezvous environment), and passes it to
/// every call: pretrain(), run_protocol(), train_classifier(). Several calls share its process
/// group (linprobe's folds: one rendezvous). The overloads of those calls that take a plain
/// std::ostream (library and Python callers, tests) run with a local context: one process,
/// whatever the environment says.
#include <memory>
#include <ostream>
#include <string>

#include "moca/model/dist/distributed.hpp"

namespace moca::model {

/// A run's collective and log. Not copyable or movable (training calls keep references to it);
/// make_run_context() returns it by value all the same (guaranteed copy elision).
class RunContext {
 public:
  /// One process: a LocalCollective, and `log` as the log.
  explicit RunContext(std::ostream& log);
  /// `collective` (non-null) and `log` on its rank 0; a null stream on the other ranks.
  RunContext(std::unique_ptr<Collective> collective, std::ostream& log);
  ~RunContext();
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  Collective& collective() const { return *collective_; }
  /// The program's log on rank 0, a null stream (writes nowhere) on the others.
  std::ostream& log() const { return *log_; }
  int rank() const { return collective_->rank(); }
  int world_size() const { return collective_->world_size(); }
  bool is_root() const { return rank() == 0; }

  /// Throws std::invalid_argument (message starts with `who`) when a world of several ranks was
  /// made with other options than `options` asks a training call on a CUDA (`cuda`) or CPU
  /// device for (another backend or timeout), or when its backend cannot carry that device's
  /// tensors (nccl on the CPU). A world of one fits any options.
  void check_fits(const DistOptions& options, bool cuda, const std::string& who) const;

 private:
  std::unique_ptr<Collective> collective_;
  std::unique_ptr<std::ostream> null_log_;
  std::ostream* log_ = nullptr;
};

/// The program's context: reads the environment (read_dist_env: torchrun's RANK, WORLD_SIZE,
/// ... or SLURM's); a world of several ranks joins its process group (connect_c10d, with
/// `options`' backend and timeout; `cuda`: the run's device is CUDA), a world of one is local.
/// `log` is the program's log (kept on rank 0). Throws as read_dist_env() and connect_c10d().
RunContext make_run_context(const DistOptions& options, bool cuda, std::ostream& log);

}  // namespace moca::model
