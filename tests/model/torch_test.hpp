#pragma once
// Torch test translation units include this instead of <doctest/doctest.h>: LibTorch pulls in
// glog, whose CHECK / CHECK_EQ ... macros would otherwise replace doctest's (a failing glog
// CHECK aborts the process, a passing one is not counted). Torch first, then doctest's macros.
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/moca_model.hpp"
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE
#include <doctest/doctest.h>
