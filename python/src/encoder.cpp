// The Encoder binding: a pre-trained MoCA encoder (src/moca/model) as a NumPy feature function.
// Compiled without LibTorch it only reports that the encoder is unavailable.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "core.hpp"
#ifdef MOCA_PYTHON_WITH_TORCH
#include "moca/model/encoder_features.hpp"
#endif

namespace py = pybind11;

namespace moca::python {

#ifdef MOCA_PYTHON_WITH_TORCH

bool encoder_available() {
  return true;
}

std::shared_ptr<const masking::FeatureMap> encoder_feature_map(const std::string& checkpoint) {
  return model::make_encoder_feature_map(checkpoint);
}

void bind_encoder(py::module_& m) {
  using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
  py::class_<model::EncoderFeatures>(m, "EncoderFeatures")
      .def(py::init([](const std::string& checkpoint) {
             py::gil_scoped_release release;
             return std::make_unique<model::EncoderFeatures>(checkpoint);
           }),
           py::arg("checkpoint"))
      .def_property_readonly("dim", &model::EncoderFeatures::dim)
      .def_property_readonly(
          "channels", [](const model::EncoderFeatures& e) { return e.info().model.channels(); })
      .def_property_readonly(
          "length", [](const model::EncoderFeatures& e) { return e.info().model.length(); })
      .def_property_readonly(
          "patch_length",
          [](const model::EncoderFeatures& e) { return e.info().model.patch_length(); })
      .def_property_readonly("channel_names",
                             [](const model::EncoderFeatures& e) { return e.info().channel_names; })
      .def_property_readonly("kind", [](const model::EncoderFeatures& e) { return e.info().kind; })
      .def(
          "view_features",
          [](const model::EncoderFeatures& e, const Floats& X, const BoolArray& masks,
             const std::vector<std::string>& channel_names) {
            const data::Windows w = make_windows(X, std::nullopt, std::nullopt, channel_names, 0.0);
            const std::vector<masking::Mask> ms = array_to_masks(masks, w.channels, w.size());
            model::ViewFeatures f;
            {
              py::gil_scoped_release release;
              f = e.view_features(w, ms);
            }
            return py::make_tuple(f.unmasked, f.masked);
          },
          py::arg("X"), py::arg("masks"), py::arg("channel_names"));
}

#else

bool encoder_available() {
  return false;
}

std::shared_ptr<const masking::FeatureMap> encoder_feature_map(const std::string&) {
  throw std::invalid_argument(
      "features: an encoder needs moca built with LibTorch (-DMOCA_WITH_TORCH=ON)");
}

void bind_encoder(py::module_&) {}

#endif

}  // namespace moca::python
