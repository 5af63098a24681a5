#include "moca/data/windows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/fingerprint.hpp"

namespace moca::data {

Windows Windows::subset(const std::vector<int>& rows) const {
  Windows w;
  w.channels = channels;
  w.length = length;
  w.sample_rate_hz = sample_rate_hz;
  w.channel_names = channel_names;
  w.class_names = class_names;
  w.subject_names = subject_names;
  w.description = description;
  w.modalities = modalities;
  w.x.resize(static_cast<Eigen::Index>(rows.size()), x.cols());
  w.labels.resize(static_cast<Eigen::Index>(rows.size()));
  w.subjects.resize(static_cast<Eigen::Index>(rows.size()));
  if (parts.size() != 0) w.parts.resize(static_cast<Eigen::Index>(rows.size()));
  for (size_t k = 0; k < rows.size(); ++k) {
    const int r = rows[k];
    if (r < 0 || r >= size()) {
      throw_invalid("Windows::subset()", "row " + std::to_string(r) + " out of range [0, " +
                                             std::to_string(size()) + ")");
    }
    w.x.row(static_cast<Eigen::Index>(k)) = x.row(r);
    w.labels(static_cast<Eigen::Index>(k)) = labels.size() ? labels(r) : -1;
    w.subjects(static_cast<Eigen::Index>(k)) = subjects.size() ? subjects(r) : -1;
    if (parts.size() != 0) w.parts(static_cast<Eigen::Index>(k)) = parts(r);
  }
  return w;
}

std::vector<std::vector<int>> Windows::modality_channels() const {
  std::vector<std::vector<int>> out;
  for (const auto& g : modalities) out.push_back(g.channels);
  return out;
}

void Windows::validate(const std::string& what) const {
  if (channels < 1) throw_invalid(what, "channels", std::to_string(channels), "must be >= 1");
  if (length < 1) throw_invalid(what, "length", std::to_string(length), "must be >= 1");
  if (x.cols() != static_cast<Eigen::Index>(channels) * length) {
    throw_invalid(what, "x has " + std::to_string(x.cols()) +
                            " columns, expected C*L = " + std::to_string(channels * length));
  }
  if (labels.size() != x.rows()) {
    throw_invalid(what, "labels has " + std::to_string(labels.size()) + " entries for " +
                            std::to_string(x.rows()) + " windows");
  }
  if (subjects.size() != x.rows()) {
    throw_invalid(what, "subjects has " + std::to_string(subjects.size()) + " entries for " +
                            std::to_string(x.rows()) + " windows");
  }
  if (parts.size() != 0) {
    if (parts.size() != x.rows()) {
      throw_invalid(what, "parts (the data's own split) has " + std::to_string(parts.size()) +
                              " entries for " + std::to_string(x.rows()) + " windows");
    }
    for (Eigen::Index i = 0; i < parts.size(); ++i) {
      if (parts(i) != kTrainPart && parts(i) != kTestPart) {
        throw_invalid(what, "parts entry " + std::to_string(i) + " is " + std::to_string(parts(i)) +
                                " (0 = training, 1 = test)");
      }
    }
  }
  if (!channel_names.empty() && static_cast<int>(channel_names.size()) != channels) {
    throw_invalid(what, "channel_names has " + std::to_string(channel_names.size()) +
                            " names for " + std::to_string(channels) + " channels");
  }
  std::vector<int> owner(static_cast<size_t>(std::max(channels, 0)), -1);
  for (size_t g = 0; g < modalities.size(); ++g) {
    if (modalities[g].channels.empty())
      throw_invalid(what, "modality '" + modalities[g].name + "' is empty");
    for (int c : modalities[g].channels) {
      if (c < 0 || c >= channels) {
        throw_invalid(what, "modality '" + modalities[g].name + "' channel " + std::to_string(c) +
                                " is outside [0, " + std::to_string(channels) + ")");
      }
      if (owner[static_cast<size_t>(c)] >= 0) {
        throw_invalid(
            what, "channel " + std::to_string(c) + " is in two modalities ('" +
                      modalities[static_cast<size_t>(owner[static_cast<size_t>(c)])].name + "', '" +
                      modalities[g].name + "')");
      }
      owner[static_cast<size_t>(c)] = static_cast<int>(g);
    }
  }
  if (!x.allFinite()) {
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j)
        if (!std::isfinite(x(i, j))) {
          throw_invalid(what, "window " + std::to_string(i) + " channel " +
                                  std::to_string(j / length) + " sample " +
                                  std::to_string(j % length) + " is not finite");
        }
  }
}

std::string fingerprint(const Windows& w) {
  const std::int64_t shape[3] = {w.x.rows(), w.channels, w.length};
  std::uint64_t h = fnv1a64(shape, sizeof shape);
  h = fnv1a64(w.x.data(), static_cast<std::size_t>(w.x.size()) * sizeof(float), h);
  h = fnv1a64(w.labels.data(), static_cast<std::size_t>(w.labels.size()) * sizeof(int), h);
  h = fnv1a64(w.subjects.data(), static_cast<std::size_t>(w.subjects.size()) * sizeof(int), h);
  return hex64(h);
}

}  // namespace moca::data
