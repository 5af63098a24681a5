// The Encoder binding: a pre-trained MoCA encoder (src/moca/model) as a NumPy feature function.
// Compiled without LibTorch it only reports that the encoder is unavailable.
#include <pybind11/eigen.h>
#include <pybind11/stl.h>

#include <sstream>
#include <stdexcept>

#include "core.hpp"
#include "schema_kwargs.hpp"
#ifdef MOCA_PYTHON_WITH_TORCH
#include "moca/data/dataset.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/interop.hpp"
#include "moca/model/eval/protocol.hpp"
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

using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

model::RuntimeOptions runtime_of(const std::string& device, int threads) {
  model::RuntimeOptions r;
  r.device = parse_enum(model::kDeviceNames, device, "RuntimeOptions::device");
  r.threads = threads;
  r.validate();
  return r;
}

// A kept classifier (linprobe/finetune --save-model) on NumPy windows in its input channels.
void bind_classifier(py::module_& m) {
  auto windows = [](const model::Classifier& c, const Floats& X) {
    return make_windows(X, std::nullopt, std::nullopt, c.spec().input_channels,
                        c.spec().sample_rate_hz);
  };
  py::class_<model::Classifier>(m, "Classifier")
      .def(py::init([](const std::string& path, const std::string& device, int threads) {
             const auto r = runtime_of(device, threads);
             py::gil_scoped_release release;
             return std::make_unique<model::Classifier>(path, r);
           }),
           py::arg("path"), py::arg("device") = "auto", py::arg("threads") = 0)
      .def_property_readonly("class_names",
                             [](const model::Classifier& c) { return c.spec().class_names; })
      .def_property_readonly("input_channels",
                             [](const model::Classifier& c) { return c.spec().input_channels; })
      .def_property_readonly("channel_names",
                             [](const model::Classifier& c) { return c.info().channel_names; })
      .def_property_readonly("sample_rate",
                             [](const model::Classifier& c) { return c.spec().sample_rate_hz; })
      .def_property_readonly("length", [](const model::Classifier& c) { return c.spec().length; })
      .def_property_readonly("probe", [](const model::Classifier& c) { return c.spec().probe; })
      .def(
          "predict",
          [windows](const model::Classifier& c, const Floats& X) {
            const data::Windows w = windows(c, X);
            std::vector<int> p;
            {
              py::gil_scoped_release release;
              p = c.predict(w);
            }
            return py::array_t<int>(static_cast<py::ssize_t>(p.size()), p.data());
          },
          py::arg("X"))
      .def(
          "predict_proba",
          [windows](const model::Classifier& c, const Floats& X) {
            const data::Windows w = windows(c, X);
            py::gil_scoped_release release;
            return c.predict_proba(w);
          },
          py::arg("X"));
}

// The PyTorch exchange (src/moca/model/eval/interop.hpp) and the MAE's reconstruction.
void bind_interop(py::module_& m) {
  auto report = [](const model::InteropReport& r) {
    py::dict d;
    d["kind"] = r.kind;
    d["probe"] = r.probe;
    d["keys"] = r.keys;
    d["notes"] = r.notes;
    return d;
  };
  m.def(
      "export_pytorch",
      [report](const std::string& checkpoint, const std::string& out, const std::string& format) {
        const model::WeightsFormat f = model::resolve_weights_format(
            out, parse_enum(model::kWeightsFormatNames, format, "format"));
        model::InteropReport r;
        {
          py::gil_scoped_release release;
          r = model::export_pytorch(checkpoint, out, f);
        }
        py::dict d = report(r);
        d["format"] = enum_name(model::kWeightsFormatNames, f);
        return d;
      },
      py::arg("checkpoint"), py::arg("out"), py::arg("format") = "auto");
  m.def(
      "import_arrays",
      [report](const py::dict& tensors, const std::string& out, const std::string& source,
               const py::dict& options) {
        std::vector<model::NamedArray> arrays;
        for (const auto& kv : tensors) {
          const auto a = Floats::ensure(kv.second);
          if (!a) throw std::invalid_argument("import_arrays(): a value is not a numeric array");
          model::NamedArray na;
          na.name = py::cast<std::string>(kv.first);
          for (py::ssize_t i = 0; i < a.ndim(); ++i) na.shape.push_back(a.shape(i));
          na.values.assign(a.data(), a.data() + a.size());
          arrays.push_back(std::move(na));
        }
        model::ImportOptions o;  // the keywords are the rows of ImportOptions::schema
        set_from_kwargs(o, options, kEveryScope, "import_arrays");
        o.source = {{"file", source}};
        model::InteropReport r;
        try {
          py::gil_scoped_release release;
          r = model::import_arrays(arrays, o, out);
        } catch (const std::invalid_argument& e) {  // ImportOptions::key -> the keyword
          throw std::invalid_argument(with_keyword_names<model::ImportOptions>(e.what()));
        }
        return report(r);
      },
      py::arg("tensors"), py::arg("out"), py::arg("source"), py::arg("options"),
      "model::import_arrays: `options` holds ImportOptions' keywords (kind, channel_names, "
      "sample_rate, class_names, input_channels, num_heads, decoder_num_heads, norm_pix_loss, "
      "loss_scope), checked strictly by type.");
  m.def(
      "reconstruct",
      [](const std::string& checkpoint, const Floats& X, const BoolArray& masks,
         const std::vector<std::string>& channel_names) {
        const data::Windows w = make_windows(X, std::nullopt, std::nullopt, channel_names, 0.0);
        const std::vector<masking::Mask> ms = array_to_masks(masks, w.channels, w.size());
        data::RowMatrixXf rec;
        {
          py::gil_scoped_release release;
          rec = model::reconstruct_with_model(checkpoint, w, ms);
        }
        py::array_t<float> out({static_cast<py::ssize_t>(w.size()),
                                static_cast<py::ssize_t>(w.channels),
                                static_cast<py::ssize_t>(w.length)});
        std::copy(rec.data(), rec.data() + rec.size(), out.mutable_data());
        return out;
      },
      py::arg("checkpoint"), py::arg("X"), py::arg("masks"), py::arg("channel_names"));
}

// run_protocol: the classification protocol of linprobe / finetune on NumPy windows.
void bind_protocol(py::module_& m) {
  using Ints = py::array_t<int, py::array::c_style | py::array::forcecast>;
  // The keywords of run_protocol: ProtocolOptions' schema rows, their defaults those of `mode`.
  m.def(
      "protocol_options",
      [](const std::string& mode) {
        model::ProtocolOptions o;
        o.downstream =
            model::downstream_defaults(parse_enum(model::kDownstreamModeNames, mode, "mode"));
        return schema_rows(o);
      },
      py::arg("mode"),
      "ProtocolOptions' schema rows (key, flag, help, rule, default, choices, scope) at the "
      "defaults of `mode`.");
  m.def(
      "downstream_mode_scope",
      [](const std::string& mode) {
        return model::mode_scope(parse_enum(model::kDownstreamModeNames, mode, "mode"));
      },
      py::arg("mode"), "The scope bit of a mode (rows whose scope has it apply).");
  m.def(
      "run_protocol",
      [](const std::string& mode, const Floats& X, const Ints& y, const std::optional<Ints>& pid,
         const std::vector<std::string>& channel_names, const std::vector<std::string>& class_names,
         double rate, int threads, const py::dict& options, const std::optional<Ints>& split) {
        data::Windows w = make_windows(X, y, pid, channel_names, rate, split);
        w.class_names = class_names;
        w.modalities = data::groups_from_names(w.channel_names);
        model::ProtocolOptions o;
        const model::DownstreamMode m = parse_enum(model::kDownstreamModeNames, mode, "mode");
        o.downstream = model::downstream_defaults(m);
        set_from_kwargs(o, options, model::mode_scope(m), "mode " + mode);
        refuse_unused(model::unused_options(o), options);  // as the programs refuse the flag
        o.downstream.runtime.threads = threads;
        o.downstream.progress = false;
        o.source = "numpy";
        model::ProtocolResult r;
        std::ostringstream log;
        try {
          o.validate();
          py::gil_scoped_release release;
          r = model::run_protocol(o, w, log);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(with_keyword_names<model::ProtocolOptions>(e.what()));
        }
        py::list fold_list;
        for (const model::FoldResult& f : r.folds) {
          py::dict d;
          d["fold"] = f.fold;
          d["train_windows"] = f.train_windows;
          d["test_windows"] = f.test_windows;
          d["test_subjects"] = f.test_subjects;
          d["accuracy"] = f.result.test.accuracy;
          d["macro_f1"] = f.result.test.macro_f1;
          d["balanced_accuracy"] = f.result.test.balanced_accuracy;
          d["confusion"] = f.result.test.confusion;
          d["truth"] = f.result.truth;
          d["predicted"] = f.result.predicted;
          d["channel_map"] = f.result.channel_map;
          fold_list.append(d);
        }
        py::dict out;
        out["protocol"] = r.protocol;
        out["folds"] = fold_list;
        out["accuracy"] = r.scores.accuracy;
        out["macro_f1"] = r.scores.macro_f1;
        out["balanced_accuracy"] = r.scores.balanced_accuracy;
        py::list saved;
        for (const auto& sm : r.saved) saved.append(py::make_tuple(sm.path, sm.fold));
        out["saved"] = saved;
        out["log"] = log.str();
        return out;
      },
      py::arg("mode"), py::arg("X"), py::arg("y"), py::arg("pid"), py::arg("channel_names"),
      py::arg("class_names"), py::arg("rate"), py::arg("threads"), py::arg("options"),
      py::arg("split") = std::nullopt,
      "model::run_protocol: linprobe/finetune's protocol on windows (N, C, L); `options` holds "
      "ProtocolOptions' schema keywords.");
}

void bind_encoder(py::module_& m) {
  py::class_<model::EncoderFeatures>(m, "EncoderFeatures")
      .def(py::init([](const std::string& checkpoint) {
             py::gil_scoped_release release;
             return std::make_unique<model::EncoderFeatures>(checkpoint);
           }),
           py::arg("checkpoint"))
      .def_property_readonly("dim", &model::EncoderFeatures::dim)
      .def_property_readonly(
          "channels", [](const model::EncoderFeatures& e) { return e.info().model.channels; })
      .def_property_readonly("length",
                             [](const model::EncoderFeatures& e) { return e.info().model.length; })
      .def_property_readonly(
          "patch_length",
          [](const model::EncoderFeatures& e) { return e.info().model.patch_length; })
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
  bind_classifier(m);
  bind_protocol(m);
  bind_interop(m);
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
