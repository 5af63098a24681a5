// moca launch: one node's ranks of a data-parallel run. See launch.hpp.
#include "launch.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <utility>

namespace moca::tools {

namespace {

std::atomic<int> g_forward{0};  // the last SIGINT/SIGTERM received, to forward

extern "C" void on_launcher_signal(int sig) {
  g_forward.store(sig);
}

/// A TCP port on `addr` that is free now (bind to port 0, read it back, close).
int free_port(const std::string& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error("launch: cannot open a socket: " + std::string(std::strerror(errno)));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof sa;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    const std::string e = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("launch: cannot find a free port on " + addr + ": " + e);
  }
  ::close(fd);
  return ntohs(sa.sin_port);
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = ::sigabbrev_np(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) +
           (name != nullptr ? " (SIG" + std::string(name) + ")" : std::string());
  }
  return "ended with wait status " + std::to_string(status);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

/// This executable's path (/proc/self/exe), which every rank runs.
std::string self_executable() {
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("launch: cannot find this executable (/proc/self/exe)");
  self[len] = '\0';
  return self;
}

/// While alive, SIGINT and SIGTERM are recorded in g_forward (to forward to the ranks) instead
/// of ending the launcher; the destructor puts the previous handlers back.
class ForwardSignals {
 public:
  ForwardSignals() {
    struct sigaction sa = {};
    sa.sa_handler = on_launcher_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~ForwardSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
};

/// In the forked child: becomes rank r (environment as torchrun sets it) and runs `self` with
/// the command; never returns.
[[noreturn]] void exec_rank(const LaunchCommand& cmd, int r, int port, std::string& self,
                            pid_t launcher) {
  // Own process group: a terminal's Ctrl-C reaches the launcher only, which forwards it
  // once. The rank ends (SIGTERM: stop with a checkpoint) if the launcher dies.
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != launcher) ::_exit(1);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::setenv("RANK", std::to_string(r).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
  ::setenv("WORLD_SIZE", std::to_string(cmd.nproc).c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(cmd.nproc).c_str(), 1);
  ::setenv("MASTER_ADDR", cmd.master_addr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  std::vector<char*> argv;
  argv.push_back(self.data());
  for (const auto& a : cmd.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(self.c_str(), argv.data());
  std::fprintf(stderr, "moca launch: rank %d: cannot run %s: %s\n", r, self.c_str(),
               std::strerror(errno));
  ::_exit(127);
}

/// Forks the cmd.nproc ranks; returns their pids, rank by rank. A failed fork kills the ranks
/// already started and throws std::runtime_error.
std::vector<pid_t> start_ranks(const LaunchCommand& cmd, int port, std::string self) {
  const pid_t launcher = ::getpid();
  std::vector<pid_t> pids;
  for (int r = 0; r < cmd.nproc; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      throw std::runtime_error("launch: fork failed: " + std::string(std::strerror(errno)));
    }
    if (pid == 0) exec_rank(cmd, r, port, self, launcher);
    pids.push_back(pid);
  }
  return pids;
}

/// The running ranks as the launcher watches them: the first failure starts the --kill-after
/// clock, after which the ranks still running are killed.
class RankWatch {
 public:
  RankWatch(std::vector<pid_t> pids, double kill_after, std::ostream& log)
      : pids_(std::move(pids)), live_(pids_.size()), kill_after_(kill_after), log_(log) {}

  /// Waits for every rank; returns the first failing rank's exit code (0 if none failed).
  int wait() {
    while (live_ > 0) {
      forward_signal();
      int status = 0;
      const pid_t done = ::waitpid(-1, &status, WNOHANG);
      if (done > 0) {
        record_exit(done, status);
        continue;
      }
      if (done < 0 && errno != EINTR) break;
      if (first_failure_ != 0 && !killed_ && std::chrono::steady_clock::now() >= deadline_) {
        log_ << "moca launch: the other ranks did not exit within --kill-after " << kill_after_
             << " s of the failure; killing them\n"
             << std::flush;
        signal_running(SIGKILL);
        killed_ = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return first_failure_;
  }
  /// The last SIGINT/SIGTERM forwarded to the ranks (0 = none).
  int forwarded() const { return forwarded_; }

 private:
  void signal_running(int sig) {
    for (pid_t p : pids_) {
      if (p > 0) ::kill(p, sig);
    }
  }
  void forward_signal() {
    const int sig = g_forward.exchange(0);
    if (sig == 0) return;
    signal_running(sig);
    forwarded_ = sig;
  }
  // Rank `done` ended with `status`: a failure (not one of the ranks killed here) is reported
  // and, if it is the first, gives the exit code and starts the --kill-after clock.
  void record_exit(pid_t done, int status) {
    for (std::size_t r = 0; r < pids_.size(); ++r) {
      if (pids_[r] != done) continue;
      pids_[r] = -1;
      --live_;
      const int code = exit_code(status);
      if (code == 0 || killed_) continue;
      log_ << "moca launch: rank " << r << " (pid " << done << ") " << describe(status) << "\n"
           << std::flush;
      if (first_failure_ == 0) {
        first_failure_ = code;
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<long long>(kill_after_ * 1000));
      }
    }
  }

  std::vector<pid_t> pids_;  // -1 once the rank has ended
  std::size_t live_;
  double kill_after_;
  std::ostream& log_;
  int first_failure_ = 0;
  int forwarded_ = 0;
  bool killed_ = false;
  std::chrono::steady_clock::time_point deadline_{};
};

}  // namespace

void LaunchCommand::validate() const {
  if (nproc < 1 || nproc > 1024) {
    throw std::invalid_argument("launch: --nproc (" + std::to_string(nproc) +
                                ") must be in [1, 1024]");
  }
  if (master_port < 0 || master_port > 65535) {
    throw std::invalid_argument("launch: --master-port (" + std::to_string(master_port) +
                                ") must be in [0, 65535] (0 = a free port)");
  }
  if (!(kill_after >= 0.0) || !std::isfinite(kill_after)) {
    throw std::invalid_argument("launch: --kill-after (" + std::to_string(kill_after) +
                                ") must be >= 0 seconds");
  }
  if (command.empty()) {
    throw std::invalid_argument(
        "launch: no command to run (usage: moca launch --nproc N -- pretrain ...)");
  }
  if (command[0] != "pretrain" && command[0] != "linprobe" && command[0] != "finetune") {
    throw std::invalid_argument("launch: the command (" + command[0] +
                                ") must be pretrain, linprobe or finetune");
  }
}

int run_launch(const LaunchCommand& cmd, std::ostream& log) {
  cmd.validate();
  const int port = cmd.master_port > 0 ? cmd.master_port : free_port(cmd.master_addr);
  const std::string self = self_executable();
  int first_failure = 0, forwarded = 0;
  {
    const ForwardSignals forwarding;
    std::vector<pid_t> pids = start_ranks(cmd, port, self);
    log << "moca launch: " << cmd.nproc << " ranks, rendezvous " << cmd.master_addr << ":" << port
        << "\n"
        << std::flush;
    RankWatch ranks(std::move(pids), cmd.kill_after, log);
    first_failure = ranks.wait();
    forwarded = ranks.forwarded();
  }
  if (first_failure == 0 && forwarded != 0) {
    log << "moca launch: forwarded signal " << forwarded << "; every rank exited cleanly\n";
  }
  return first_failure;
}

}  // namespace moca::tools
