#include "moca/masking/make_policy.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/masking/policies.hpp"
#include "moca/masking/policy_spec.hpp"

namespace moca::masking {

namespace detail {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

void check_keys(const PolicySpec& spec, const std::vector<std::string>& allowed) {
  for (const auto& kv : spec.options) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == kv.first;
    if (!ok) {
      throw_invalid("make_policy()",
                    "unknown key '" + kv.first + "' for policy '" + spec.name + "' (valid keys: " +
                        (allowed.empty() ? std::string("none") : join(allowed, ", ")) + ")");
    }
  }
}

double get_double(const PolicySpec& spec, const std::string& key, double fallback) {
  const std::string* v = spec.find(key);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const double d = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size() || !std::isfinite(d)) {
    throw_invalid("make_policy()", spec.name + " " + key + " (" + *v + ") is not a number");
  }
  return d;
}

long long get_int(const PolicySpec& spec, const std::string& key, long long fallback) {
  const std::string* v = spec.find(key);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long long d = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || end != v->c_str() + v->size()) {
    throw_invalid("make_policy()", spec.name + " " + key + " (" + *v + ") is not an integer");
  }
  return d;
}

std::unique_ptr<MaskPolicy> make_adaptive(const PolicySpec& spec, const Grid& grid,
                                          const PolicyContext& context);

/// The `count` key: keep-floor (the default) or mask-floor (policies.hpp).
CountRule get_count_rule(const PolicySpec& spec) {
  const std::string* v = spec.find("count");
  if (v == nullptr) return CountRule::kKeepFloor;
  for (const auto& row : kCountRuleNames)
    if (*v == row.name) return row.value;
  throw_invalid("make_policy()", spec.name + " count (" + *v +
                                     ") must be one of: " + enum_choices(kCountRuleNames) +
                                     " (keep-floor keeps int(N*(1-ratio)) units, the authors' "
                                     "rule; mask-floor masks floor(ratio*N))");
}

/// Policies without a ratio take no count rule: one message naming the value and why.
void refuse_count_rule(const PolicySpec& spec, const char* why) {
  if (const std::string* v = spec.find("count")) {
    throw_invalid("make_policy()", spec.name + " takes no count rule (count=" + *v + "): " + why);
  }
}

}  // namespace detail

namespace {

/// The modality groups a sensor / per-modality policy splits by: context.modalities, else the
/// pilot windows' groups (named in `names` for messages).
struct ModalityGroups {
  std::vector<std::vector<int>> groups;
  std::string names;

  /// Throws when the data has a single group: `what` needs two.
  void require_two(const std::string& what) const {
    if (groups.size() == 1) {
      throw_invalid(
          "make_policy()",
          what + " needs >= 2 modality groups; the data has 1" +
              (names.empty() ? std::string() : " (" + names + ")") +
              " (state the groups with DatasetOptions::modalities, e.g. acc=0-2,gyro=3-5, or "
              "meta.json)");
    }
  }
};

ModalityGroups modality_groups(const PolicyContext& context) {
  ModalityGroups m{context.modalities, {}};
  if (m.groups.empty() && context.pilot != nullptr) {
    m.groups = context.pilot->modality_channels();
    for (const auto& g : context.pilot->modalities) {
      m.names += (m.names.empty() ? "" : ", ") + g.name;
    }
  }
  return m;
}

/// cross / random (ratio; every cell drawn independently of the others, a fixed count per window).
std::unique_ptr<MaskPolicy> make_cross(const PolicySpec& spec, const Grid& grid,
                                       const PolicyContext&) {
  detail::check_keys(spec, {"ratio", "count"});
  const bool cross = spec.name == "cross";
  return std::make_unique<CrossPolicy>(grid, detail::get_double(spec, "ratio", cross ? 0.75 : 0.7),
                                       spec.name, detail::get_count_rule(spec));
}

/// sync / temporal / extrapolation: whole time columns, by their column rule.
std::unique_ptr<MaskPolicy> make_column(const PolicySpec& spec, const Grid& grid,
                                        const PolicyContext&) {
  detail::check_keys(spec, {"ratio", "count"});
  const std::string& n = spec.name;
  const ColumnRule rule = n == "sync"       ? ColumnRule::kUniformSet
                          : n == "temporal" ? ColumnRule::kContiguous
                                            : ColumnRule::kLast;
  return std::make_unique<ColumnPolicy>(grid,
                                        detail::get_double(spec, "ratio", n == "sync" ? 0.75 : 0.7),
                                        rule, detail::get_count_rule(spec));
}

std::unique_ptr<MaskPolicy> make_sensor(const PolicySpec& spec, const Grid& grid,
                                        const PolicyContext& context) {
  const ModalityGroups modalities = modality_groups(context);
  detail::refuse_count_rule(spec, "it masks C-keep whole channels, set by keep");
  detail::check_keys(spec, {"keep"});
  modalities.require_two("sensor");
  const long long keep = detail::get_int(spec, "keep", 1);
  if (keep < 1 || keep > grid.channels - 1) {
    throw_invalid("make_policy()", "sensor keep (" + std::to_string(keep) +
                                       ") must be in [1, C-1] = [1, " +
                                       std::to_string(grid.channels - 1) + "]");
  }
  return std::make_unique<SensorPolicy>(grid, static_cast<int>(keep));
}

std::unique_ptr<MaskPolicy> make_per_modality(const PolicySpec& spec, const Grid& grid,
                                              const PolicyContext& context) {
  const ModalityGroups modalities = modality_groups(context);
  detail::check_keys(spec, {"ratio", "count", "groups"});
  const std::string* g = spec.find("groups");
  if (g == nullptr) modalities.require_two("per-modality");
  auto groups = g                           ? parse_modality_groups(*g, grid.channels)
                : modalities.groups.empty() ? default_modality_groups(grid.channels)
                                            : modalities.groups;
  return std::make_unique<PerModalityPolicy>(grid, detail::get_double(spec, "ratio", 0.75),
                                             std::move(groups), detail::get_count_rule(spec));
}

/// fixed:file=PATH (a mask file) or fixed:cells=ROWS (rows of 0/1 joined by '/').
std::unique_ptr<MaskPolicy> make_fixed(const PolicySpec& spec, const Grid& grid,
                                       const PolicyContext&) {
  detail::refuse_count_rule(spec, "its mask is given whole (file= or cells=)");
  detail::check_keys(spec, {"file", "cells"});
  const std::string* file = spec.find("file");
  const std::string* cells = spec.find("cells");
  if ((file == nullptr) == (cells == nullptr)) {
    throw_invalid("make_policy()",
                  "fixed needs exactly one of file=PATH or cells=ROWS (rows of 0/1 "
                  "joined by '/')");
  }
  if (file != nullptr) {
    if (!text_file_exists(*file)) {
      throw_invalid("make_policy()", "fixed file (" + *file + ") does not exist");
    }
    TextFileReader reader(*file);
    std::string all, line;
    while (reader.next_line(line)) all += line + "\n";
    return std::make_unique<FixedPolicy>(grid, Mask::parse(all), "file=" + *file);
  }
  std::string rows = *cells;
  for (auto& ch : rows)
    if (ch == '/') ch = '\n';
  Mask m = Mask::parse(rows);
  std::string canon = m.to_string();
  for (auto& ch : canon)
    if (ch == '\n') ch = '/';
  return std::make_unique<FixedPolicy>(grid, std::move(m), "cells=" + canon);
}

}  // namespace

// clang-format off
/// The policy registry: one row per policy (docs/masking.md lists the same rows).
const std::vector<PolicyEntry>& policy_registry() {
  static const std::vector<PolicyEntry> rows = {
      {"cross", "ratio (0.75), count (keep-floor)", RatioRule::kOwn, make_cross},
      {"random", "ratio (0.7), count (keep-floor)", RatioRule::kOwn, make_cross},
      {"sync", "ratio (0.75), count (keep-floor)", RatioRule::kOwn, make_column},
      {"temporal", "ratio (0.7), count (keep-floor)", RatioRule::kOwn, make_column},
      {"extrapolation", "ratio (0.7), count (keep-floor)", RatioRule::kOwn, make_column},
      {"sensor", "keep (1)", RatioRule::kNone, make_sensor},
      {"per-modality", "ratio (0.75), count (keep-floor), groups (the data's modality groups, "
                       "e.g. 0-2/3-5)",
       RatioRule::kOwn, make_per_modality},
      {"fixed", "file (a Mask::parse file) or cells (rows joined by '/', e.g. 0101/1010); exactly one",
       RatioRule::kNone, make_fixed},
      {"adaptive", "base (cross), beta (20), candidates (256), seed (0), pilot (256), pca (20), "
                   "features (raw); other keys go to the base policy (adaptive_policy.hpp)",
       RatioRule::kOfBase, detail::make_adaptive}};
  return rows;
}
// clang-format on

const PolicyEntry* find_policy(const std::string& name) {
  for (const auto& row : policy_registry())
    if (name == row.name) return &row;
  return nullptr;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& row : policy_registry()) names.emplace_back(row.name);
  return names;
}

std::unique_ptr<MaskPolicy> make_policy(const std::string& text, const Grid& grid,
                                        const PolicyContext& context) {
  const PolicySpec spec = parse_policy_spec(text);
  const PolicyEntry* row = find_policy(spec.name);
  if (row == nullptr) {
    throw_invalid("make_policy()", "unknown policy '" + spec.name +
                                       "' (valid: " + detail::join(policy_names(), ", ") + ")");
  }
  return row->make(spec, grid, context);
}

}  // namespace moca::masking
