#pragma once
/// \file launch.hpp
/// `moca launch`: starts the ranks of a data-parallel run on this node (as torchrun does for
/// one node), forwards SIGINT/SIGTERM to them and returns the first failing rank's status.
#include <ostream>
#include <string>
#include <vector>

namespace moca::tools {

struct LaunchCommand {
  int nproc = 2;                          ///< ranks to start, >= 1
  std::string master_addr = "127.0.0.1";  ///< where rank 0 hosts the rendezvous store
  int master_port = 0;                    ///< 0 = a free port picked by the launcher
  double kill_after = 30.0;          ///< seconds the other ranks get after one fails, then SIGKILL
  std::vector<std::string> command;  ///< the moca subcommand and its arguments
  /// Throws std::invalid_argument naming the field, value and rule.
  void validate() const;
};

/// Runs the ranks (this executable with `command`, RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE/
/// MASTER_ADDR/MASTER_PORT set) and waits for them. Returns 0 when every rank exits with 0, else
/// the first failing rank's exit status (128 + signal number for a rank killed by a signal).
/// Reports each failure on `log` naming the rank, its pid and its status.
int run_launch(const LaunchCommand& cmd, std::ostream& log);

}  // namespace moca::tools
