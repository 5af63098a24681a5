#pragma once
/// \file policy_spec.hpp
/// The policy spec-string grammar `name[:key=value[,key=value]*]`, e.g. `cross:ratio=0.75`,
/// `sensor:keep=1`, `adaptive:base=cross,beta=20,candidates=256`.
#include <string>
#include <utility>
#include <vector>

namespace moca::masking {

/// A parsed spec string: the policy name and its key=value options in the order given.
struct PolicySpec {
  std::string name;                                          ///< e.g. "cross"
  std::vector<std::pair<std::string, std::string>> options;  ///< e.g. {{"ratio", "0.75"}}

  /// The value of `key`, or nullptr when absent.
  const std::string* find(const std::string& key) const;
};

/// Splits `text` into name and options. Whitespace around tokens is ignored. Throws
/// std::invalid_argument on an empty name, an option without '=', an empty key or value, or a
/// repeated key (the message quotes the spec).
PolicySpec parse_policy_spec(const std::string& text);

/// The inverse of parse_policy_spec(): `name` or `name:k1=v1,k2=v2` in the stored order.
std::string format_policy_spec(const PolicySpec& spec);

/// Shortest decimal text that parses back to exactly `value` (e.g. 0.75 -> "0.75").
std::string format_number(double value);

/// The spec with `ratio=<ratio>` appended when its policy takes a ratio (its registry row's
/// RatioRule: kOwn, or kOfBase through its base, cross by default) and does not set one; other
/// specs are returned in canonical order unchanged. Used by every tool that has a global --ratio.
/// Throws std::invalid_argument as parse_policy_spec() does.
std::string with_default_ratio(const std::string& spec, double ratio);

/// Splits a comma-separated list of specs (a --scheme or --policies flag) into specs. A
/// `key=value` item that follows a spec with options belongs to that spec:
/// "cross,adaptive:base=sync,beta=5,sync" -> {cross, adaptive:base=sync,beta=5, sync}. Spaces
/// around items are dropped. Throws std::invalid_argument naming `what` for an empty list and
/// an empty item ("a,,b", "a,", " ").
std::vector<std::string> split_spec_list(const std::string& text,
                                         const std::string& what = "spec list");

}  // namespace moca::masking
