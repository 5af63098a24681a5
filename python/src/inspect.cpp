// The EncoderInspector binding (src/moca/model/eval/inspect.hpp): attention maps and pooled
// embeddings as NumPy arrays. Compiled without LibTorch it binds nothing.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "core.hpp"
#ifdef MOCA_PYTHON_WITH_TORCH
#include "moca/model/eval/inspect.hpp"
#endif

namespace py = pybind11;

namespace moca::python {

#ifdef MOCA_PYTHON_WITH_TORCH

void bind_inspector(py::module_& m) {
  using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
  py::class_<model::EncoderInspector>(m, "EncoderInspector")
      .def(py::init([](const std::string& checkpoint) {
             py::gil_scoped_release release;
             return std::make_unique<model::EncoderInspector>(checkpoint);
           }),
           py::arg("checkpoint"))
      .def(
          "attention",
          [](const model::EncoderInspector& ins, const Floats& X, const py::object& masks,
             const std::vector<std::string>& channel_names) {
            const data::Windows w = make_windows(X, std::nullopt, std::nullopt, channel_names, 0.0);
            std::vector<masking::Mask> ms;
            if (!masks.is_none())
              ms = array_to_masks(masks.cast<BoolArray>(), w.channels, w.size());
            std::vector<model::WindowAttention> all;
            {
              py::gil_scoped_release release;
              for (int i = 0; i < w.size(); ++i) {
                const masking::Mask* mk =
                    ms.empty() ? nullptr : &ms[ms.size() == 1 ? 0 : static_cast<size_t>(i)];
                all.push_back(ins.attention(w, i, mk));
              }
            }
            const auto& a0 = all.at(0);
            const py::ssize_t B = w.size(), Ly = a0.layers, H = a0.heads, N = a0.size(),
                              T = a0.tokens;
            py::array_t<double> weights({B, Ly, H, N, N}), rollout({B, N, N});
            py::array_t<bool> visible({B, T});
            for (py::ssize_t b = 0; b < B; ++b) {
              const auto& a = all[static_cast<size_t>(b)];
              std::copy(a.weights.begin(), a.weights.end(),
                        weights.mutable_data() + b * Ly * H * N * N);
              for (py::ssize_t i = 0; i < N; ++i)
                for (py::ssize_t j = 0; j < N; ++j) rollout.mutable_at(b, i, j) = a.rollout(i, j);
              for (py::ssize_t t = 0; t < T; ++t)
                visible.mutable_at(b, t) = a.visible[static_cast<size_t>(t)];
            }
            py::dict d;
            d["weights"] = weights;
            d["rollout"] = rollout;
            d["visible"] = visible;
            return d;
          },
          py::arg("X"), py::arg("masks"), py::arg("channel_names"))
      .def(
          "pooled",
          [](const model::EncoderInspector& ins, const Floats& X, const std::string& pool,
             const std::vector<std::string>& channel_names) {
            const data::Windows w = make_windows(X, std::nullopt, std::nullopt, channel_names, 0.0);
            const model::Pool p = parse_enum(model::kPoolNames, pool, "pool");
            py::gil_scoped_release release;
            return ins.embed(w, p);
          },
          py::arg("X"), py::arg("pool"), py::arg("channel_names"));
}

#else

void bind_inspector(py::module_&) {}

#endif

}  // namespace moca::python
