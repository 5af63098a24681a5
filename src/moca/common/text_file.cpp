#include "moca/common/text_file.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <stdexcept>

namespace moca {

namespace {
bool is_regular_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

struct TextFileReader::Impl {
  gzFile file = nullptr;
  std::string buffer;
  size_t pos = 0;
  bool eof = false;
};

bool text_file_exists(const std::string& path) {
  return is_regular_file(path) || is_regular_file(path + ".gz");
}

TextFileReader::TextFileReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  path_ = is_regular_file(path) ? path : (is_regular_file(path + ".gz") ? path + ".gz" : path);
  if (!is_regular_file(path_)) {
    throw std::runtime_error("cannot open '" + path + "' (no such file, nor '" + path + ".gz')");
  }
  impl_->file = gzopen(path_.c_str(), "rb");
  if (impl_->file == nullptr) throw std::runtime_error("cannot open '" + path_ + "'");
  gzbuffer(impl_->file, 1 << 17);
  if (ends_with(path_, ".gz") && gzdirect(impl_->file) == 1) {
    // zlib reads a file without the gzip magic bytes as plain text and would hand its bytes to
    // the parsers; gzdirect() asks the open stream, so the file is opened once.
    gzclose(impl_->file);
    impl_->file = nullptr;
    throw std::runtime_error("'" + path_ + "' is not a gzip file (no gzip magic bytes)");
  }
}

TextFileReader::~TextFileReader() {
  if (impl_ && impl_->file) gzclose(impl_->file);
}

bool TextFileReader::next_line(std::string& line) {
  line.clear();
  auto& b = impl_->buffer;
  for (;;) {
    const size_t nl = b.find('\n', impl_->pos);
    if (nl != std::string::npos) {
      line.append(b, impl_->pos, nl - impl_->pos);
      impl_->pos = nl + 1;
      break;
    }
    line.append(b, impl_->pos, std::string::npos);
    b.clear();
    impl_->pos = 0;
    if (impl_->eof) {
      if (line.empty()) return false;
      break;
    }
    b.resize(1 << 16);
    const int got = gzread(impl_->file, &b[0], static_cast<unsigned>(b.size()));
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(impl_->file, &err);
      throw std::runtime_error("read error in '" + path_ + "' after line " +
                               std::to_string(line_no_) + " (" + msg + ")");
    }
    b.resize(static_cast<size_t>(got));
    if (got == 0) {
      // gzread returns 0 both at a clean end and at a truncated stream: check which.
      int err = 0;
      const char* msg = gzerror(impl_->file, &err);
      if (err != Z_OK && err != Z_STREAM_END) {
        throw std::runtime_error("read error in '" + path_ + "' after line " +
                                 std::to_string(line_no_) + " (" + msg + ")");
      }
      impl_->eof = true;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_no_;
  return true;
}

}  // namespace moca
