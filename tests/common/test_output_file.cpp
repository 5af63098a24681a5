#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "moca/common/output_file.hpp"

namespace fs = std::filesystem;

namespace {

/// A fresh scratch folder, removed at the end of the test.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Names in `dir` that look like temporary files of the output module.
int temp_files(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++n;
  }
  return n;
}

std::string error_of(const std::string& path, const std::string& contents) {
  try {
    moca::write_output_text(path, contents);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a regular file is replaced atomically; a failing writer leaves it intact") {
  Scratch s("moca_test_output_regular");
  const std::string p = s / "out.txt";
  moca::write_output_text(p, "first");
  CHECK(slurp(p) == "first");
  CHECK(moca::resolve_output(p).mode == moca::OutputMode::kAtomic);
  try {
    moca::write_output_file(p, [](std::ostream& o) {
      o << "partial";
      // LibTorch's c10::Error appends a backtrace to what(); the message drops it.
      throw std::runtime_error("boom\nException raised from save at x.cpp:1\nframe #0: f()");
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "cannot write '" + p + "': boom");
  }
  CHECK(slurp(p) == "first");
  CHECK(temp_files(s.dir) == 0);
  // The mode of an existing file is kept.
  ::chmod(p.c_str(), 0600);
  moca::write_output_text(p, "second");
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(slurp(p) == "second");
  // A temporary file of a process that no longer exists is removed by the next write; one of a
  // live process (this one, pid 1) is not.
  const std::string stale = p + ".tmp.999999999.0", live = p + ".tmp.1.0";
  std::ofstream(stale) << "half";
  std::ofstream(live) << "busy";
  moca::write_output_text(p, "third");
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  fs::remove(live);
}

TEST_CASE("write_output_file_passing: the writer's own error keeps its type and text") {
  Scratch s("moca_test_output_passing");
  const std::string p = s / "out.txt";
  moca::write_output_text(p, "first");
  const auto usage_error = [](std::ostream& o) {
    o << "partial";
    throw std::invalid_argument("--policy (x) is not a policy");
  };
  CHECK_THROWS_WITH_AS(moca::write_output_file_passing(p, usage_error),
                       "--policy (x) is not a policy", std::invalid_argument);
  CHECK(slurp(p) == "first");
  CHECK(temp_files(s.dir) == 0);
  // control: write_output_file reports the same writer as a write failure
  CHECK_THROWS_WITH_AS(moca::write_output_file(p, usage_error),
                       ("cannot write '" + p + "': --policy (x) is not a policy").c_str(),
                       std::runtime_error);
  moca::write_output_file_passing(p, [](std::ostream& o) { o << "second"; });
  CHECK(slurp(p) == "second");
}

TEST_CASE("errors name the path and the cause") {
  Scratch s("moca_test_output_errors");
  const std::string missing = error_of("/nonexistent-dir/x.txt", "a");
  CHECK(missing.find("'/nonexistent-dir/x.txt'") != std::string::npos);
  CHECK(missing.find("No such file or directory") != std::string::npos);
  const std::string folder = error_of(s.dir.string(), "a");
  CHECK(folder.find("it is a folder") != std::string::npos);
  CHECK_THROWS_AS(moca::write_output_text("", "a"), std::invalid_argument);
}

TEST_CASE("a symbolic link is written through, atomically beside its target") {
  Scratch s("moca_test_output_link");
  fs::create_directories(s.dir / "real");
  moca::write_output_text(s / "real/target.json", "old");
  fs::create_symlink("real/target.json", s.dir / "out.json");  // relative link
  moca::write_output_text(s / "out.json", "new");
  CHECK(fs::is_symlink(s.dir / "out.json"));
  CHECK(slurp(s / "real/target.json") == "new");
  CHECK(moca::resolve_output(s / "out.json").path == s / "real/target.json");
  CHECK(temp_files(s.dir / "real") == 0);
  // A dangling link creates its target; a chain of links is followed.
  fs::create_symlink(s.dir / "real/later.json", s.dir / "dangling");
  fs::create_symlink("dangling", s.dir / "chain");
  moca::write_output_text(s / "chain", "created");
  CHECK(slurp(s / "real/later.json") == "created");
  CHECK(fs::is_symlink(s.dir / "dangling"));
  // A loop is an error, not a hang.
  fs::create_symlink("loop_b", s.dir / "loop_a");
  fs::create_symlink("loop_a", s.dir / "loop_b");
  CHECK(error_of(s / "loop_a", "x").find("too many levels of symbolic links") != std::string::npos);
}

TEST_CASE("a FIFO is streamed into, not replaced") {
  Scratch s("moca_test_output_fifo");
  const std::string fifo = s / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(moca::resolve_output(fifo).mode == moca::OutputMode::kDirect);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  const std::string big(300000, 'x');  // more than a pipe buffer: the writer must wait
  moca::write_output_text(fifo, big);
  reader.join();
  CHECK(got == big);
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A FIFO whose reader went away: EPIPE is an error (SIGPIPE ignored for the check).
  const auto old = std::signal(SIGPIPE, SIG_IGN);
  std::thread closer([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    ::close(fd);
  });
  const std::string err = error_of(fifo, big);
  closer.join();
  std::signal(SIGPIPE, old);
  CHECK(err.find("Broken pipe") != std::string::npos);
}

TEST_CASE("'-' and /dev/stdout write to the standard output") {
  Scratch s("moca_test_output_stdout");
  const std::string captured = s / "captured.txt";
  CHECK(moca::resolve_output("-").mode == moca::OutputMode::kFd);
  CHECK(moca::resolve_output("/dev/stdout").fd == 1);
  CHECK(moca::resolve_output("/dev/fd/2").fd == 2);
  const int fd = ::open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  std::cout.flush();  // nothing of doctest's (-s) output may land in the capture
  const int saved = ::dup(1);
  ::dup2(fd, 1);
  ::close(fd);
  moca::write_output_text("-", "dash\n");
  moca::write_output_text("/dev/stdout", "devstdout\n");
  ::dup2(saved, 1);
  ::close(saved);
  CHECK(slurp(captured) == "dash\ndevstdout\n");
}

TEST_CASE("a device that reports a full disk: error, device node untouched") {
  // A private twin of /dev/full (character device 1:7), never the real one. Needs CAP_MKNOD.
  Scratch s("moca_test_output_full");
  const std::string full = s / "full";
  if (::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    MESSAGE("skipped: mknod not permitted here");
    return;
  }
  const int probe = ::open(full.c_str(), O_WRONLY);
  if (probe < 0) {
    MESSAGE("skipped: the device cannot be opened here (device cgroup)");
    return;
  }
  ::close(probe);
  CHECK(moca::resolve_output(full).mode == moca::OutputMode::kDirect);
  const std::string err = error_of(full, "{\"x\": 1}\n");
  CHECK(err.find("'" + full + "'") != std::string::npos);
  CHECK(err.find("No space left on device") != std::string::npos);
  struct stat st {};
  REQUIRE(::lstat(full.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("a file system that fills during the write: error, temp removed, old file intact") {
  // A 64 kB tmpfs when this process may mount one (root in a container), else skipped.
  Scratch s("moca_test_output_tmpfs");
  const fs::path mnt = s.dir / "small";
  fs::create_directories(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    MESSAGE("skipped: mounting a tmpfs is not permitted here");
    return;
  }
  const std::string p = (mnt / "x.pt").string();
  moca::write_output_text(p, "previous checkpoint");
  const std::string err = error_of(p, std::string(1 << 20, 'c'));
  const int left = temp_files(mnt);
  const std::string kept = slurp(p);
  ::umount(mnt.c_str());
  CHECK(err.find("No space left on device") != std::string::npos);
  CHECK(left == 0);
  CHECK(kept == "previous checkpoint");
}

TEST_CASE("a file size limit (RLIMIT_FSIZE) is a write error like a full disk") {
  Scratch s("moca_test_output_fsize");
  const std::string p = s / "big.bin";
  moca::write_output_text(p, "old");
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  const auto old = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string err = error_of(p, std::string(100000, 'b'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old);
  CHECK(err.find("File too large") != std::string::npos);
  CHECK(slurp(p) == "old");
  CHECK(temp_files(s.dir) == 0);
}

// check_writable: the check every program runs on its output flags before any work.
TEST_CASE(
    "check_writable refuses a missing folder, a folder and a non-folder parent, creating nothing") {
  Scratch s("moca_check_writable");
  auto message = [](const std::string& path) {
    try {
      moca::check_writable(path, "--json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(s / "missing/r.json") ==
        "--json (" + (s / "missing/r.json") + "): folder " + (s / "missing") + " does not exist");
  CHECK(message(s.dir.string()).find("is a folder") != std::string::npos);
  { std::ofstream(s / "file") << "x"; }
  CHECK(message(s / "file/r.json") ==
        "--json (" + (s / "file/r.json") + "): " + (s / "file") + " is not a folder");
  // Writable targets pass and nothing is created.
  CHECK(message(s / "new.json").empty());
  CHECK_FALSE(fs::exists(s / "new.json"));
  CHECK(message(s / "file").empty());
  CHECK(slurp(s / "file") == "x");
  CHECK(message("-").empty());
  CHECK(message("/dev/stderr").empty());
  CHECK(message("").empty());
  // A dangling symbolic link is checked at its target's folder.
  fs::create_symlink(s / "nowhere/t.json", s / "link.json");
  CHECK(message(s / "link.json").find("nowhere does not exist") != std::string::npos);
  // A folder without write permission (root may write anywhere: checked only for other users).
  if (::geteuid() != 0) {
    fs::create_directories(s / "ro");
    fs::permissions(s / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK(message(s / "ro/r.json").find("is not writable") != std::string::npos);
    fs::permissions(s / "ro", fs::perms::owner_all);
  }
}

TEST_CASE("check_writable_folder: an existing folder or a new one in a folder") {
  Scratch s("moca_check_writable_folder");
  CHECK_NOTHROW(moca::check_writable_folder(s.dir.string(), "--out"));
  CHECK_NOTHROW(moca::check_writable_folder(s / "new", "--out"));
  CHECK_NOTHROW(moca::check_writable_folder(s / "new/", "--out"));
  CHECK_FALSE(fs::exists(s / "new"));
  CHECK_THROWS_WITH_AS(
      moca::check_writable_folder(s / "a/b", "--out"),
      ("--out (" + (s / "a/b") + "): folder " + (s / "a") + " does not exist").c_str(),
      std::invalid_argument);
  { std::ofstream(s / "file") << "x"; }
  CHECK_THROWS_AS(moca::check_writable_folder(s / "file", "--out"), std::invalid_argument);
}

TEST_CASE("create_output_folder: the folder and the missing ones above it, or a clear error") {
  Scratch s("moca_create_output_folder");
  moca::create_output_folder(s / "a/b/c/");
  CHECK(fs::is_directory(s / "a/b/c"));
  CHECK_NOTHROW(moca::create_output_folder(s / "a/b"));  // an existing folder passes
  { std::ofstream(s / "file") << "x"; }
  CHECK_THROWS_WITH_AS(moca::create_output_folder(s / "file"),
                       ("'" + (s / "file") + "' is not a folder").c_str(), std::runtime_error);
  CHECK_THROWS_WITH_AS(moca::create_output_folder(s / "file/sub"),
                       ("'" + (s / "file") + "' is not a folder").c_str(), std::runtime_error);
  CHECK(fs::exists(s / "file"));  // nothing lost
  if (::geteuid() != 0) {
    fs::create_directories(s / "ro");
    fs::permissions(s / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_WITH_AS(moca::create_output_folder(s / "ro/x"),
                         doctest::Contains("cannot create folder"), std::runtime_error);
    fs::permissions(s / "ro", fs::perms::owner_all);
  }
}

TEST_CASE("writes_standard_output names descriptor 1 only") {
  CHECK(moca::writes_standard_output("-"));
  CHECK(moca::writes_standard_output("/dev/stdout"));
  CHECK(moca::writes_standard_output("/dev/fd/1"));
  CHECK_FALSE(moca::writes_standard_output("/dev/stderr"));
  CHECK_FALSE(moca::writes_standard_output("r.json"));
  CHECK_FALSE(moca::writes_standard_output(""));
}
