#include "moca/common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace moca {

namespace {

std::string read_owner(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos ? "?" : pid;
}

}  // namespace

FileLock::FileLock(const std::string& lock_path, const std::string& what) : path_(lock_path) {
  // The file is removed on release, so a lock taken on a file that was removed meanwhile is
  // worthless: retry until the locked file is the one at the path.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw std::runtime_error("cannot create the lock file '" + path_ + "' for " + what + " (" +
                               std::strerror(errno) + ")");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string owner = read_owner(fd);
      ::close(fd);
      if (err == EWOULDBLOCK) {
        throw std::runtime_error(what + " is in use by process " + owner + " (lock file " + path_ +
                                 ")");
      }
      throw std::runtime_error("cannot lock '" + path_ + "' for " + what + " (" +
                               std::strerror(err) + ")");
    }
    struct stat held {
    }, now{};
    if (::fstat(fd, &held) == 0 && ::stat(path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
        // The lock holds without the pid; only the message of a refused process suffers.
      }
      fd_ = fd;
      return;
    }
    ::close(fd);
  }
  throw std::runtime_error("cannot lock '" + path_ + "' for " + what +
                           " (the lock file keeps being replaced)");
}

FileLock::~FileLock() {
  if (fd_ >= 0) {
    ::unlink(path_.c_str());
    ::close(fd_);
  }
}

std::string lock_path_for_file(const std::string& path) {
  return path + ".lock";
}

std::string lock_path_for_folder(const std::string& dir) {
  return dir + "/.moca.lock";
}

}  // namespace moca
