#pragma once
/// \file atomic_file.hpp
/// Atomic writes: results and checkpoints are written to a temporary file in the target's
/// directory and renamed over the target, so a reader never sees a half-written file and an
/// interrupted run never destroys the previous one.
#include <functional>
#include <ostream>
#include <string>

namespace moca {

/// Writes `path` atomically: `writer` fills a stream opened on `path + ".tmp.<pid>"`; on success
/// the stream is flushed, fsync'ed and renamed onto `path`. On any failure (writer throws, disk
/// full, rename fails) the temporary file is removed and std::runtime_error names the path.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& writer,
                       bool binary = false);

/// Convenience: atomically writes `contents` to `path`.
void write_text_atomic(const std::string& path, const std::string& contents);

}  // namespace moca
