#include "moca/masking/mask.hpp"

#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"

namespace moca::masking {

void Grid::validate() const {
  auto check = [](int v, const char* name) {
    if (v < 1) {
      throw_invalid("", std::string("Grid: ") + name + " (" + std::to_string(v) + ") must be >= 1");
    }
  };
  check(channels, "channels");
  check(patches, "patches");
  check(patch_length, "patch_length");
}

Grid make_grid(int channels, int length, int patch_length) {
  if (patch_length < 1 || length < 1 || length % patch_length != 0) {
    throw_invalid("make_grid()", "patch length (" + std::to_string(patch_length) +
                                     ") must be >= 1 and divide the window length (" +
                                     std::to_string(length) + ")");
  }
  Grid g{channels, length / patch_length, patch_length};
  g.validate();
  return g;
}

Mask::Mask(int channels, int patches) : channels_(channels), patches_(patches) {
  if (channels < 1 || patches < 1) {
    throw_invalid("Mask()", "grid " + std::to_string(channels) + " x " + std::to_string(patches) +
                                " must be at least 1 x 1");
  }
  cells_.assign(static_cast<size_t>(channels) * static_cast<size_t>(patches), 0);
}

Mask::Mask(int channels, int patches, std::vector<std::uint8_t> cells) : Mask(channels, patches) {
  if (cells.size() != cells_.size()) {
    throw_invalid("Mask()", std::to_string(cells.size()) + " cells given for a " +
                                std::to_string(channels) + " x " + std::to_string(patches) +
                                " grid");
  }
  for (auto& v : cells) v = v ? 1 : 0;
  cells_ = std::move(cells);
}

int Mask::masked_count() const {
  int n = 0;
  for (auto v : cells_) n += v;
  return n;
}

double Mask::ratio() const {
  return cells_.empty() ? 0.0 : static_cast<double>(masked_count()) / cells_.size();
}

std::vector<int> Mask::masked_tokens() const {
  std::vector<int> t;
  for (size_t i = 0; i < cells_.size(); ++i)
    if (cells_[i]) t.push_back(static_cast<int>(i));
  return t;
}

std::vector<int> Mask::visible_tokens() const {
  std::vector<int> t;
  for (size_t i = 0; i < cells_.size(); ++i)
    if (!cells_[i]) t.push_back(static_cast<int>(i));
  return t;
}

Mask Mask::complement() const {
  Mask m = *this;
  for (auto& v : m.cells_) v = v ? 0 : 1;
  return m;
}

std::string Mask::to_string() const {
  std::string s;
  for (int c = 0; c < channels_; ++c) {
    for (int p = 0; p < patches_; ++p) s.push_back(masked(c, p) ? '1' : '0');
    if (c + 1 < channels_) s.push_back('\n');
  }
  return s;
}

Mask Mask::parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::uint8_t> cells;
  int rows = 0, cols = -1, line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    int n = 0;
    for (char ch : line) {
      if (ch == '0' || ch == '1') {
        cells.push_back(ch == '1');
        ++n;
      } else if (ch != ' ' && ch != ',' && ch != '\t' && ch != '\r') {
        throw_invalid("Mask::parse()", "line " + std::to_string(line_no) + " has character '" +
                                           printable(std::string(1, ch)) +
                                           "' (cells must be 0 or 1)");
      }
    }
    if (n == 0) continue;
    if (cols >= 0 && n != cols) {
      throw_invalid("Mask::parse()", "line " + std::to_string(line_no) + " has " +
                                         std::to_string(n) + " cells, expected " +
                                         std::to_string(cols) + " (rows must not be ragged)");
    }
    cols = n;
    ++rows;
  }
  if (rows == 0) throw_invalid("Mask::parse()", "no mask rows");
  return Mask(rows, cols, std::move(cells));
}

}  // namespace moca::masking
