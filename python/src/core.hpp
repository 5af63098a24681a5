#pragma once
/// \file core.hpp
/// Shared pieces of the _core extension: NumPy windows -> data::Windows, and the encoder
/// bindings (encoder.cpp; stubs when moca is built without LibTorch).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/mask.hpp"

namespace moca::python {

/// Windows from an (N, C, L) float32 array (copied into the row-major store data::Windows
/// owns), optional labels y and subject ids pid (N ints, else -1), channel names (empty:
/// ch0..ch{C-1}), sample rate (<= 0: the default) and the data's own split (`parts`: N ints,
/// 0 = training, 1 = test; absent: none). Throws std::invalid_argument for a wrong rank or
/// length, or NaN/Inf (data::Windows::validate).
data::Windows make_windows(
    const pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>& X,
    const std::optional<
        pybind11::array_t<int, pybind11::array::c_style | pybind11::array::forcecast>>& y,
    const std::optional<
        pybind11::array_t<int, pybind11::array::c_style | pybind11::array::forcecast>>& pid,
    const std::vector<std::string>& channel_names, double sample_rate_hz,
    const std::optional<
        pybind11::array_t<int, pybind11::array::c_style | pybind11::array::forcecast>>& parts =
        std::nullopt);

/// A C-ordered bool array (converted from other dtypes and layouts).
using BoolArray = pybind11::array_t<bool, pybind11::array::c_style | pybind11::array::forcecast>;

/// Masks from a (1 or count, channels, P) bool array (True = masked); std::invalid_argument
/// naming the expected shape otherwise.
std::vector<masking::Mask> array_to_masks(const BoolArray& a, int channels, int count);

/// A JSON value as the Python object json.loads would make of its text (non-finite numbers, which
/// JSON text writes as null, become None).
pybind11::object to_python(const nlohmann::json& j);

/// A Python value of str, int, float, bool, None, list, tuple and dict (str keys) as JSON;
/// TypeError naming `where` for anything else.
nlohmann::json from_python(const pybind11::handle& o, const std::string& where);

/// Whether the extension was built with LibTorch (moca.Encoder available).
bool encoder_available();

/// model::make_encoder_feature_map(checkpoint); std::invalid_argument without LibTorch.
std::shared_ptr<const masking::FeatureMap> encoder_feature_map(const std::string& checkpoint);

/// Adds the Encoder class (or nothing without LibTorch) to the module.
void bind_encoder(pybind11::module_& m);
/// moca.Encoder.attention / pooled (inspect.cpp): EncoderInspector.
void bind_inspector(pybind11::module_& m);

}  // namespace moca::python
