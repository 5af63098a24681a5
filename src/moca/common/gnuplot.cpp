#include "moca/common/gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace moca {

bool gnuplot_available() {
  const char* path = std::getenv("PATH");
  // execvp's search when PATH is unset: confstr(_CS_PATH), "/bin:/usr/bin" on glibc.
  const std::string dirs = path != nullptr ? path : "/bin:/usr/bin";
  size_t start = 0;
  while (true) {
    const size_t end = dirs.find(':', start);
    std::string dir =
        dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string file = dir + "/gnuplot";
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(file.c_str(), X_OK) == 0) {
      return true;
    }
    if (end == std::string::npos) return false;
    start = end + 1;
  }
}

std::string gnuplot_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

namespace {

/// Frees a posix_spawn_file_actions_t on every path out.
class FileActions {
 public:
  FileActions() {
    if (posix_spawn_file_actions_init(&actions_) != 0) {
      throw std::runtime_error("run_gnuplot_script(): posix_spawn_file_actions_init failed");
    }
  }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

}  // namespace

int run_gnuplot_script(const std::string& script, GnuplotOutput output) {
  FileActions actions;
  int rc = 0;
  if (output == GnuplotOutput::kDiscard) {
    rc = posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO);
  if (rc != 0) {
    throw std::runtime_error("run_gnuplot_script(): posix_spawn file actions failed (" +
                             std::string(std::strerror(rc)) + ")");
  }
  // What this process has buffered comes before gnuplot's own lines.
  std::fflush(nullptr);
  std::vector<char> program{'g', 'n', 'u', 'p', 'l', 'o', 't', '\0'};
  std::vector<char> path(script.begin(), script.end());
  path.push_back('\0');
  char* argv[] = {program.data(), path.data(), nullptr};
  pid_t pid = 0;
  rc = posix_spawnp(&pid, "gnuplot", actions.get(), nullptr, argv, environ);
  if (rc != 0) return 127;  // glibc reports a failed exec here (ENOENT, EACCES)
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error("run_gnuplot_script(): waitpid failed (" +
                               std::string(std::strerror(errno)) + ")");
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void run_gnuplot(const std::string& script, const std::string& tmp_png, const std::string& png,
                 const std::string& who) {
  if (!gnuplot_available()) {
    throw std::runtime_error(who + ": gnuplot not found (install gnuplot-nox); the script " +
                             script + " was written");
  }
  const int rc = run_gnuplot_script(script);
  if (rc != 0 || std::rename(tmp_png.c_str(), png.c_str()) != 0) {
    std::remove(tmp_png.c_str());
    throw std::runtime_error(who + ": gnuplot failed on " + script + " (status " +
                             std::to_string(rc) + ")");
  }
}

}  // namespace moca
