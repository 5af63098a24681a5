#include "moca/common/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace moca {

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& writer,
                       bool binary) {
  if (path.empty()) throw std::invalid_argument("write_file_atomic(): empty output path");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(tmp, binary ? std::ios::out | std::ios::binary | std::ios::trunc
                                    : std::ios::out | std::ios::trunc);
      if (!out) {
        throw std::runtime_error("cannot open '" + tmp + "' for writing (" + std::strerror(errno) +
                                 ")");
      }
      writer(out);
      out.flush();
      if (!out) throw std::runtime_error("write to '" + tmp + "' failed (disk full?)");
    }
    const int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw std::runtime_error("cannot rename '" + tmp + "' to '" + path + "' (" +
                               std::strerror(errno) + ")");
    }
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void write_text_atomic(const std::string& path, const std::string& contents) {
  write_file_atomic(path, [&](std::ostream& o) { o << contents; });
}

}  // namespace moca
