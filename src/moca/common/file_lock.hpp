#pragma once
/// \file file_lock.hpp
/// One writer per file a run owns: an advisory lock (flock) held for the life of the run.
#include <string>

namespace moca {

/// An exclusive flock(2) on a lock file, held from construction to destruction.
///
/// The lock file holds the owner's process id and is removed when the lock is released. A lock
/// left by a process that died is no obstacle: the kernel releases flock locks when the owner
/// exits, so only a live process can hold one. Locks are advisory: they keep moca programs apart,
/// not other programs.
class FileLock {
 public:
  /// Locks `lock_path` (created if needed) without waiting. Throws std::runtime_error
  /// "<what> is in use by process N (lock file <lock_path>)" when another process (or another
  /// FileLock in this one) holds it, or naming the path and strerror when the lock file cannot
  /// be created.
  /// \param what the locked resource for the message, e.g. "checkpoint x.pt".
  FileLock(const std::string& lock_path, const std::string& what);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  /// The lock file.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

/// The lock file of a checkpoint or other output file: `path + ".lock"`.
std::string lock_path_for_file(const std::string& path);
/// The lock file of an output folder: `dir + "/.moca.lock"`.
std::string lock_path_for_folder(const std::string& dir);

}  // namespace moca
