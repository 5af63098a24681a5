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
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("launch: cannot find this executable (/proc/self/exe)");
  self[len] = '\0';

  struct sigaction sa {};
  sa.sa_handler = on_launcher_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  const pid_t launcher = ::getpid();
  std::vector<pid_t> pids;
  for (int r = 0; r < cmd.nproc; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t p : pids) ::kill(p, SIGKILL);
      throw std::runtime_error("launch: fork failed: " + std::string(std::strerror(errno)));
    }
    if (pid == 0) {
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
      argv.push_back(self);
      for (const auto& a : cmd.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(self, argv.data());
      std::fprintf(stderr, "moca launch: rank %d: cannot run %s: %s\n", r, self,
                   std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  log << "moca launch: " << cmd.nproc << " ranks, rendezvous " << cmd.master_addr << ":" << port
      << "\n"
      << std::flush;

  int first_failure = 0;
  int forwarded = 0;
  std::size_t live = pids.size();
  std::chrono::steady_clock::time_point deadline{};
  bool killed = false;
  while (live > 0) {
    const int sig = g_forward.exchange(0);
    if (sig != 0) {
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, sig);
      }
      forwarded = sig;
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      for (std::size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] != done) continue;
        pids[r] = -1;
        --live;
        const int code = exit_code(status);
        if (code != 0 && !killed) {
          log << "moca launch: rank " << r << " (pid " << done << ") " << describe(status) << "\n"
              << std::flush;
          if (first_failure == 0) {
            first_failure = code;
            deadline = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<long long>(cmd.kill_after * 1000));
          }
        }
      }
      continue;
    }
    if (done < 0 && errno != EINTR) break;
    if (first_failure != 0 && !killed && std::chrono::steady_clock::now() >= deadline) {
      log << "moca launch: the other ranks did not exit within --kill-after " << cmd.kill_after
          << " s of the failure; killing them\n"
          << std::flush;
      for (pid_t p : pids) {
        if (p > 0) ::kill(p, SIGKILL);
      }
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (first_failure == 0 && forwarded != 0) {
    log << "moca launch: forwarded signal " << forwarded << "; every rank exited cleanly\n";
  }
  return first_failure;
}

}  // namespace moca::tools
