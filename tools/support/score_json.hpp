#pragma once
/// \file score_json.hpp
/// The programs' names for the score JSON of moca/masking/score_json.hpp, where it lives.
#include "moca/masking/score_json.hpp"

namespace moca::tools {

using masking::all_comparisons;
using masking::to_json;

}  // namespace moca::tools
