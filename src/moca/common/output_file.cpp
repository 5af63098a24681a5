#include "moca/common/output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <streambuf>

#include "moca/common/error_text.hpp"

namespace moca {

namespace {

std::string quoted_path(const std::string& path) {
  return "'" + path + "'";
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  std::string message = "cannot write " + quoted_path(path) + ": " + what;
  if (err != 0) message += std::string(" (") + std::strerror(err) + ")";
  throw std::runtime_error(message);
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The descriptor a path names without opening anything: "-", /dev/stdout, /dev/stderr,
/// /dev/fd/N, /proc/self/fd/N; -1 otherwise.
int fd_path(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.compare(0, p.size(), p) == 0 && path.size() > p.size() &&
        path.find_first_not_of("0123456789", p.size()) == std::string::npos &&
        path.size() - p.size() < 6) {
      return std::stoi(path.substr(p.size()));
    }
  }
  return -1;
}

/// A streambuf over a descriptor with sticky errors: the first failed write(2) is remembered
/// and later output discarded, so the writer runs to its end and the caller reports the error.
class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }
  /// Writes what is buffered; false (error() set) on failure.
  bool drain() { return sync() == 0; }

 protected:
  int_type overflow(int_type ch) override {
    sync();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= epptr() - pptr()) {
      std::memcpy(pptr(), s, static_cast<size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    sync();
    put(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    put(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(buffer_, buffer_ + sizeof buffer_);
    return error_ == 0 ? 0 : -1;
  }
  // Seeking (a regular file only: a writer that rewrites a header, write_npy_rows) drains the
  // buffer first; a pipe or a sticky error answers -1, so the stream's seekp fails.
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    if (sync() != 0) return pos_type(off_type(-1));
    const int whence = dir == std::ios_base::beg   ? SEEK_SET
                       : dir == std::ios_base::cur ? SEEK_CUR
                                                   : SEEK_END;
    const off_t r = ::lseek(fd_, static_cast<off_t>(off), whence);
    return pos_type(off_type(r < 0 ? -1 : r));
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }

 private:
  void put(const char* p, size_t left) {
    while (error_ == 0 && left > 0) {
      const ssize_t w = ::write(fd_, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        error_ = w < 0 ? errno : EIO;
        return;
      }
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

/// Runs `writer` on `fd`; throws (naming `path`) for the writer's exception or a write error.
void write_to_fd(int fd, const std::string& path,
                 const std::function<void(std::ostream&)>& writer) {
  FdStreambuf buf(fd);
  std::ostream os(&buf);
  try {
    writer(os);
  } catch (const std::exception& e) {
    // A write error usually causes the writer's failure: report the cause.
    if (buf.error() != 0) fail(path, "write failed", buf.error());
    throw std::runtime_error("cannot write " + quoted_path(path) + ": " + exception_text(e));
  }
  os.flush();
  if (!buf.drain()) fail(path, "write failed", buf.error());
}

std::atomic<unsigned> g_temp_counter{0};

/// Removes temporary files `<target>.tmp.<pid>.<n>` left by processes that no longer exist (a run
/// killed while writing); files of live processes are left alone.
void remove_stale_temps(const std::string& target) {
  const std::string dir = dir_of(target);
  const size_t slash = target.rfind('/');
  const std::string prefix =
      (slash == std::string::npos ? target : target.substr(slash + 1)) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 9 ||
        rest.find_first_not_of("0123456789") != dot ||
        rest.find_first_not_of("0123456789", dot + 1) != std::string::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dot)));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      ::unlink((dir + "/" + name).c_str());
    }
  }
  ::closedir(d);
}

void write_atomic(const std::string& path, const std::string& target,
                  const std::function<void(std::ostream&)>& writer) {
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  const mode_t mode = exists ? (st.st_mode & 07777) : 0666;
  remove_stale_temps(target);
  const std::string tmp = target + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(g_temp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) fail(path, "cannot create the temporary file " + quoted_path(tmp), errno);
  bool closed = false;
  try {
    if (exists && ::fchmod(fd, mode) != 0) fail(path, "cannot set the mode", errno);
    write_to_fd(fd, path, writer);
    if (::fsync(fd) != 0) fail(path, "fsync failed", errno);
    closed = true;
    if (::close(fd) != 0) fail(path, "close failed", errno);
    if (std::rename(tmp.c_str(), target.c_str()) != 0) {
      fail(path, "cannot rename " + quoted_path(tmp) + " to " + quoted_path(target), errno);
    }
  } catch (...) {
    if (!closed) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  // Make the rename durable; best effort (some file systems cannot fsync a folder).
  const int dir = ::open(dir_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw_invalid("write_output_file()", "empty output path");
  OutputTarget t;
  std::string p = path;
  for (int hops = 0;; ++hops) {
    const int fd = fd_path(p);
    if (fd >= 0) {
      t.mode = OutputMode::kFd;
      t.fd = fd;
      return t;
    }
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hops == 40) fail(path, "too many levels of symbolic links", ELOOP);
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t len = ::readlink(p.c_str(), &link[0], link.size());
    if (len < 0) fail(path, "cannot read the symbolic link " + quoted_path(p), errno);
    link.resize(static_cast<size_t>(len));
    p = (!link.empty() && link[0] == '/') ? link : dir_of(p) + "/" + link;
  }
  t.path = p;
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(path, "it is a folder", EISDIR);
    t.mode = S_ISREG(st.st_mode) ? OutputMode::kAtomic : OutputMode::kDirect;
  }
  return t;
}

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& writer) {
  const OutputTarget t = resolve_output(path);
  switch (t.mode) {
    case OutputMode::kAtomic:
      write_atomic(path, t.path, writer);
      return;
    case OutputMode::kFd:
      if (t.fd == 1) std::cout.flush();
      if (t.fd == 2) std::cerr.flush();
      write_to_fd(t.fd, path, writer);
      return;
    case OutputMode::kDirect: {
      const int fd = ::open(t.path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) fail(path, "cannot open", errno);
      try {
        write_to_fd(fd, path, writer);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) fail(path, "close failed", errno);
      return;
    }
  }
}

void write_output_file_passing(const std::string& path,
                               const std::function<void(std::ostream&)>& writer) {
  std::exception_ptr own;  // the writer's exception, rethrown as it was
  try {
    write_output_file(path, [&](std::ostream& o) {
      try {
        writer(o);
      } catch (...) {
        own = std::current_exception();
        throw;
      }
    });
  } catch (...) {
    if (own) std::rethrow_exception(own);
    throw;
  }
}

void write_output_text(const std::string& path, const std::string& contents) {
  write_output_file(path, [&](std::ostream& o) { o << contents; });
}

namespace {

[[noreturn]] void unwritable(const std::string& flag, const std::string& path,
                             const std::string& why) {
  throw_invalid("", flag + " (" + path + "): " + why);
}

/// The folder `dir` can take new entries: exists, is a folder, is writable and searchable.
void check_folder(const std::string& flag, const std::string& path, const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) unwritable(flag, path, "folder " + dir + " does not exist");
    unwritable(flag, path, "cannot reach folder " + dir + " (" + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) unwritable(flag, path, dir + " is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    unwritable(flag, path, "folder " + dir + " is not writable (" + std::strerror(errno) + ")");
  }
}

}  // namespace

void check_writable(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  OutputTarget t;
  try {
    t = resolve_output(path);
  } catch (const std::runtime_error& e) {
    // resolve_output's "cannot write 'P': it is a folder (Is a directory)": keep the cause.
    std::string why = e.what();
    const std::string head = "cannot write " + quoted_path(path) + ": ";
    if (why.compare(0, head.size(), head) == 0) why = why.substr(head.size());
    unwritable(flag, path, why);
  }
  switch (t.mode) {
    case OutputMode::kFd:
      if (::fcntl(t.fd, F_GETFD) < 0) {
        unwritable(flag, path, "descriptor " + std::to_string(t.fd) + " is not open");
      }
      return;
    case OutputMode::kDirect:
      if (::access(t.path.c_str(), W_OK) != 0) {
        unwritable(flag, path, std::string("not writable (") + std::strerror(errno) + ")");
      }
      return;
    case OutputMode::kAtomic:
      if (!t.path.empty() && t.path.back() == '/') unwritable(flag, path, "names a folder");
      check_folder(flag, path, dir_of(t.path));
      return;
  }
}

void check_writable_folder(const std::string& path, const std::string& flag, bool parents) {
  if (path.empty()) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) unwritable(flag, path, "exists and is not a folder");
    check_folder(flag, path, path);
    return;
  }
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::string dir = dir_of(p);
  if (parents) {
    // The nearest existing ancestor: the folders below it are created.
    while (dir != "/" && dir != "." && ::stat(dir.c_str(), &st) != 0 && errno == ENOENT) {
      dir = dir_of(dir);
    }
  }
  check_folder(flag, path, dir);
}

void create_output_folder(const std::string& path) {
  if (path.empty()) throw std::invalid_argument("create_output_folder(): empty path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw std::runtime_error("'" + path + "' is not a folder");
    return;
  }
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const std::string parent = dir_of(p);
  if (parent != p && parent != "." && parent != "/") create_output_folder(parent);
  if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create folder '" + path + "': " + std::strerror(errno));
  }
  if (::stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::runtime_error("'" + path + "' is not a folder");
  }
}

bool writes_standard_output(const std::string& path) {
  if (path.empty()) return false;
  try {
    const OutputTarget t = resolve_output(path);
    return t.mode == OutputMode::kFd && t.fd == 1;
  } catch (const std::exception&) {
    return false;  // not a path at all: check_writable reports it
  }
}

}  // namespace moca
