#pragma once
/// \file output_file.hpp
/// The one output module: every file any moca program writes goes through write_output_file.
///
/// * A regular file (or a path that does not exist yet) is written to a temporary file beside
///   the *resolved* path (symbolic links followed), fsync'ed and renamed over it, and the folder
///   is fsync'ed: a reader never sees a half-written file and an interrupted or failed write
///   leaves the previous file intact. The temporary file (`<target>.tmp.<pid>.<n>`) is removed
///   on every failure; one left by a process that was killed while writing is removed by the
///   next write of the same target.
/// * A FIFO, a character device, `-`, `/dev/stdout`, `/dev/stderr` or `/dev/fd/N` is written
///   directly (no temporary file, no rename), with every write and the close checked.
/// * Every failure is a std::runtime_error naming the path and the cause (strerror), e.g.
///   "cannot write 'out.json': No space left on device". Errors of the writer (including
///   exceptions thrown by LibTorch) are reported the same way.
///
/// Write errors are sticky: after the first failed write(2) the stream discards the rest and
/// the error is reported once the writer returns. A writer never sees a failing stream, so code
/// that cannot cope with one (LibTorch's archive writer) runs to its end normally.
#include <functional>
#include <ostream>
#include <string>

namespace moca {

/// How write_output_file writes a path.
enum class OutputMode {
  kAtomic,  ///< regular file or new file: temporary file + fsync + rename
  kDirect,  ///< FIFO, character device, socket: opened and written in place
  kFd,      ///< an already open descriptor: `-` and `/dev/stdout` (1), `/dev/stderr` (2), ...
};

/// Where and how a path is written.
struct OutputTarget {
  std::string path;  ///< the resolved path (symbolic links followed); empty for kFd
  OutputMode mode = OutputMode::kAtomic;
  int fd = -1;  ///< kFd only: the descriptor written
};

/// Resolves `path` (symbolic links followed, also dangling ones) and classifies it. Throws
/// std::invalid_argument for an empty path, std::runtime_error for a folder or a link loop.
OutputTarget resolve_output(const std::string& path);

/// Writes `path` as the file header describes; `writer` fills the stream. Throws
/// std::runtime_error naming `path` and the cause on any failure (the writer's exception text
/// included); a regular target is then unchanged and no temporary file is left behind.
void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& writer);

/// write_output_file for a writer that computes what it writes: an exception that `writer`
/// throws propagates unchanged (a usage error keeps its type and text) instead of becoming
/// "cannot write PATH: ..."; the target is left as it was all the same. Write errors are
/// reported as write_output_file reports them.
void write_output_file_passing(const std::string& path,
                               const std::function<void(std::ostream&)>& writer);
/// Convenience: writes `contents` to `path` through write_output_file.
void write_output_text(const std::string& path, const std::string& contents);

/// Checks, before a program does any work, that write_output_file can write `path` (the value
/// of the program's option `flag`), without creating or changing anything. An empty path (no
/// output asked for) passes. A descriptor path (`-`, /dev/stdout, /dev/fd/N) must be open; a
/// FIFO or device must be writable; otherwise the folder that will hold the file (symbolic links
/// followed) must exist, be a folder and be writable, and the path must not be a folder. Throws
/// std::invalid_argument (a usage error, exit 2) naming the flag, the path and the rule, e.g.
/// "--json (/no/such/dir/r.json): folder /no/such/dir does not exist".
void check_writable(const std::string& path, const std::string& flag);

/// The same for an output folder that a program creates or fills: an existing path must be a
/// writable folder; a new one needs a writable parent folder, or with `parents` (a program that
/// creates the missing folders above it too) a writable nearest existing ancestor. Creates
/// nothing.
void check_writable_folder(const std::string& path, const std::string& flag, bool parents = false);

/// Creates the output folder `path` and any missing folders above it (mode 0755); an existing
/// folder passes. Throws std::runtime_error naming the path and the cause: "cannot create folder
/// 'out/x': Permission denied", or "'out/x' is not a folder" for another kind of file.
void create_output_folder(const std::string& path);
/// True when `path` names the process's standard output (`-`, /dev/stdout, /dev/fd/1,
/// /proc/self/fd/1, or a symbolic link to one of them): a program whose result file is standard
/// output prints its human-readable report on standard error instead, so that standard output
/// carries the file alone.
bool writes_standard_output(const std::string& path);

}  // namespace moca
