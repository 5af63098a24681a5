// _core: the compiled part of the moca Python package. Thin bindings over the library functions
// the command-line tools call (kcca::kcca_analysis, masking::score_windows) and their option and
// result structs; no algorithm lives here, and no JSON text crosses: a result's JSON shape (its
// to_json) arrives as dicts and lists (to_dict()). Every computation releases the GIL; C++
// exceptions become ValueError (std::invalid_argument) or RuntimeError (anything else) with the
// library's message.
#include <pybind11/eigen.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core.hpp"
#include "moca/common/random.hpp"
#include "moca/common/text_replace.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/export.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/recordings.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/window_source.hpp"
#include "moca/kcca/analysis.hpp"
#include "moca/kcca/centering.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policies.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_run.hpp"
#include "schema_kwargs.hpp"

namespace py = pybind11;

namespace moca::python {

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using IntArray = py::array_t<int, py::array::c_style | py::array::forcecast>;

kcca::Kernel make_kernel(const std::string& type, double sigma, int degree, double coef0) {
  kcca::Kernel k;
  k.type = parse_enum(kcca::kKernelTypeNames, type, "kernel");
  k.sigma = sigma;
  k.degree = degree;
  k.coef0 = coef0;
  k.validate();
  return k;
}

namespace {
/// y, pid and meta of n windows (labels, subjects, parts of `w` have n entries).
py::dict metadata_to_dict(const data::Windows& w, py::ssize_t n) {
  py::array_t<int> y(n), pid(n);
  std::copy(w.labels.data(), w.labels.data() + n, y.mutable_data());
  std::copy(w.subjects.data(), w.subjects.data() + n, pid.mutable_data());
  py::dict meta;
  meta["channel_names"] = w.channel_names;
  meta["class_names"] = w.class_names;
  meta["subject_names"] = w.subject_names;
  meta["sample_rate_hz"] = w.sample_rate_hz;
  meta["description"] = w.description;
  py::dict groups;  // name -> channel list
  for (const auto& g : w.modalities) groups[py::str(g.name)] = g.channels;
  meta["modalities"] = groups;
  if (w.parts.size() != 0) {  // the data's own split, as split.npy holds it
    py::list split;
    for (Eigen::Index i = 0; i < w.parts.size(); ++i)
      split.append(w.parts(i) == data::Windows::kTrainPart ? "train" : "test");
    meta["split"] = py::module_::import("numpy").attr("array")(split);
  } else {
    meta["split"] = py::none();
  }
  py::dict out;
  out["y"] = y;
  out["pid"] = pid;
  out["meta"] = meta;
  return out;
}
}  // namespace

py::dict windows_to_dict(const data::Windows& w) {
  const auto n = static_cast<py::ssize_t>(w.size());
  py::array_t<float> X(
      {n, static_cast<py::ssize_t>(w.channels), static_cast<py::ssize_t>(w.length)});
  std::copy(w.x.data(), w.x.data() + w.x.size(), X.mutable_data());
  py::dict out = metadata_to_dict(w, n);
  out["X"] = X;
  return out;
}

masking::Grid grid_of(int channels, int length, int patch_length) {
  return masking::make_grid(channels, length, patch_length);
}

// Masks as an (n, C, P) bool array.
py::array_t<bool> masks_to_array(const std::vector<masking::Mask>& masks, const masking::Grid& g) {
  py::array_t<bool> out({static_cast<py::ssize_t>(masks.size()),
                         static_cast<py::ssize_t>(g.channels),
                         static_cast<py::ssize_t>(g.patches)});
  bool* p = out.mutable_data();
  for (const auto& m : masks)
    for (const auto c : m.cells()) *p++ = c != 0;
  return out;
}

// A policy and the grid it masks; shared so that score() can hold several.
struct Policy {
  std::shared_ptr<const masking::MaskPolicy> policy;
  std::shared_ptr<data::Windows> pilot;  // adaptive policies keep none, but keep it alive anyway
};

Policy make_spec_policy(const std::string& spec, int channels, int length, int patch_length,
                        std::optional<FloatArray> pilot) {
  const masking::Grid g = grid_of(channels, length, patch_length);
  Policy p;
  masking::PolicyContext ctx;
  if (pilot) {
    p.pilot =
        std::make_shared<data::Windows>(make_windows(*pilot, std::nullopt, std::nullopt, {}, 0.0));
    ctx.pilot = p.pilot.get();
  }
  p.policy = masking::make_policy(spec, g, ctx);
  return p;
}

// A Python callable f(seed) -> (C, P) bool array as a masking::FunctionPolicy: the seed is one
// 64-bit draw of the library's stream, so the masks follow the scorer's seeds.
Policy make_callable_policy(const std::string& name, py::function fn, int channels, int length,
                            int patch_length) {
  const masking::Grid g = grid_of(channels, length, patch_length);
  // The callable is released with the GIL held (the policy may be destroyed without it).
  std::shared_ptr<py::function> guarded(new py::function(std::move(fn)), [](py::function* f) {
    py::gil_scoped_acquire gil;
    delete f;
  });
  auto sample = [guarded, g](Rng& rng, const masking::WindowRef&) {
    const std::uint64_t seed = rng();
    py::gil_scoped_acquire gil;
    py::object r = (*guarded)(seed);
    auto a = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(r);
    if (!a || a.ndim() != 2 || a.shape(0) != g.channels || a.shape(1) != g.patches) {
      throw std::invalid_argument("policy callable: must return a (" + std::to_string(g.channels) +
                                  ", " + std::to_string(g.patches) + ") boolean array");
    }
    return masking::Mask(g.channels, g.patches,
                         std::vector<std::uint8_t>(a.data(), a.data() + g.tokens()));
  };
  Policy p;
  p.policy = std::make_shared<masking::FunctionPolicy>(name, g, sample);
  return p;
}

py::array_t<bool> sample_policy(const Policy& p, int n, std::uint64_t seed, int draw) {
  if (n < 1) throw std::invalid_argument("sample(): n (" + std::to_string(n) + ") must be >= 1");
  if (draw < 0) {
    throw std::invalid_argument("sample(): draw (" + std::to_string(draw) + ") must be >= 0");
  }
  const masking::Grid& g = p.policy->grid();
  std::vector<masking::Mask> masks;
  {
    py::gil_scoped_release release;
    // The stream of draw r of PolicyScorer::draw_masks (per-window mode). No policy's draw reads
    // its window (adaptive's distribution is fixed by its pilot when it is made), so none is given.
    Rng rng(derive_seed(seed, static_cast<std::uint64_t>(draw)));
    const data::RowMatrixXf empty;
    for (int i = 0; i < n; ++i) masks.push_back(p.policy->sample(rng, empty));
  }
  return masks_to_array(masks, g);
}

}  // namespace

std::vector<masking::Mask> array_to_masks(const BoolArray& a, int channels, int count) {
  if (a.ndim() != 3 || (a.shape(0) != 1 && a.shape(0) != count) || a.shape(1) != channels) {
    throw std::invalid_argument("masks: must be a (1 or N, C, P) boolean array with N = " +
                                std::to_string(count) + " and C = " + std::to_string(channels));
  }
  const auto patches = static_cast<int>(a.shape(2));
  const int cells = channels * patches;
  std::vector<masking::Mask> masks;
  const bool* p = a.data();
  for (py::ssize_t i = 0; i < a.shape(0); ++i, p += cells) {
    masks.emplace_back(channels, patches, std::vector<std::uint8_t>(p, p + cells));
  }
  return masks;
}

data::Windows make_windows(const FloatArray& X, const std::optional<IntArray>& y,
                           const std::optional<IntArray>& pid,
                           const std::vector<std::string>& channel_names, double sample_rate_hz,
                           const std::optional<IntArray>& parts) {
  if (X.ndim() != 3) {
    throw std::invalid_argument("X: must be a 3-d array (N windows, C channels, L samples), got " +
                                std::to_string(X.ndim()) + " dimensions");
  }
  data::Windows w;
  const auto n = static_cast<Eigen::Index>(X.shape(0));
  w.channels = static_cast<int>(X.shape(1));
  w.length = static_cast<int>(X.shape(2));
  if (sample_rate_hz > 0.0) w.sample_rate_hz = sample_rate_hz;
  w.x = Eigen::Map<const data::RowMatrixXf>(X.data(), n,
                                            static_cast<Eigen::Index>(w.channels) * w.length);
  w.labels = Eigen::VectorXi::Constant(n, -1);
  w.subjects = Eigen::VectorXi::Constant(n, -1);
  auto copy_ids = [n](const IntArray& a, Eigen::VectorXi& to, const char* what) {
    if (a.ndim() != 1 || a.shape(0) != n) {
      throw std::invalid_argument(std::string(what) + ": must be a 1-d array of N (" +
                                  std::to_string(n) + ") integers");
    }
    to = Eigen::Map<const Eigen::VectorXi>(a.data(), n);
  };
  if (y) copy_ids(*y, w.labels, "y");
  if (pid) copy_ids(*pid, w.subjects, "pid");
  if (parts) copy_ids(*parts, w.parts, "split");
  if (channel_names.empty()) {
    for (int c = 0; c < w.channels; ++c) w.channel_names.push_back("ch" + std::to_string(c));
  } else {
    w.channel_names = channel_names;
  }
  w.description = "NumPy array from Python";
  w.validate("moca (Python)");
  return w;
}

namespace {

// KccaAnalysisOptions, KccaAnalysis, kcca_analysis, kernel_variates: the kcca tool's analysis on
// in-memory views.
void bind_kcca(py::module_& m) {
  using kcca::AnalysisOptions;
  using kcca::AnalysisResult;
  py::class_<AnalysisOptions>(m, "KccaAnalysisOptions",
                              "kcca::AnalysisOptions (the kcca tool's flags)")
      .def(py::init<>())
      .def_property(
          "kernel", [](const AnalysisOptions& o) { return kcca::kernel_type_name(o.kernel); },
          [](AnalysisOptions& o, const std::string& t) {
            o.kernel = parse_enum(kcca::kKernelTypeNames, t, "AnalysisOptions::kernel");
          })
      .def_readwrite("sigma", &AnalysisOptions::sigma)
      .def_readwrite("degree", &AnalysisOptions::degree)
      .def_readwrite("coef0", &AnalysisOptions::coef0)
      .def_readwrite("gamma", &AnalysisOptions::gamma)
      .def_readwrite("gamma_u", &AnalysisOptions::gamma_u)
      .def_readwrite("gamma_m", &AnalysisOptions::gamma_m)
      .def_readwrite("center", &AnalysisOptions::center)
      .def_readwrite("components", &AnalysisOptions::components)
      .def_property(
          "method", [](const AnalysisOptions& o) { return kcca::to_string(o.method); },
          [](AnalysisOptions& o, const std::string& t) {
            o.method = parse_enum(kcca::kKccaMethodNames, t, "AnalysisOptions::method");
          })
      .def_readwrite("rank", &AnalysisOptions::rank)
      .def_readwrite("cca", &AnalysisOptions::cca)
      .def_readwrite("pca", &AnalysisOptions::pca)
      .def_readwrite("ridge", &AnalysisOptions::ridge)
      .def_readwrite("bootstrap", &AnalysisOptions::bootstrap)
      .def_readwrite("permutations", &AnalysisOptions::permutations)
      .def_readwrite("seed", &AnalysisOptions::seed)
      .def_readwrite("coefficients", &AnalysisOptions::coefficients)
      .def("validate", &AnalysisOptions::validate)
      .def_static(
          "from_keywords",
          [](const py::dict& options) {
            AnalysisOptions o;
            set_from_kwargs(o, options, kEveryScope, "kcca_analysis");
            return o;
          },
          py::arg("options"),
          "Options from keywords: the rows of kcca::AnalysisOptions' schema (the kcca tool's "
          "flags, and coefficients), checked strictly by type; the others keep their defaults.");
  py::class_<AnalysisResult>(m, "KccaAnalysis", "kcca::AnalysisResult")
      .def_readonly("options", &AnalysisResult::options)
      .def_readonly("n", &AnalysisResult::n)
      .def_readonly("d_u", &AnalysisResult::d_u)
      .def_readonly("d_m", &AnalysisResult::d_m)
      .def_readonly("correlations", &AnalysisResult::correlations)
      .def_property_readonly("alpha", [](const AnalysisResult& r) { return r.kcca.alpha; })
      .def_property_readonly("beta", [](const AnalysisResult& r) { return r.kcca.beta; })
      .def_property_readonly("weights_u", [](const AnalysisResult& r) { return r.cca.weights_u; })
      .def_property_readonly("weights_m", [](const AnalysisResult& r) { return r.cca.weights_m; })
      .def_readonly("seconds", &AnalysisResult::seconds)
      .def(
          "to_dict", [](const AnalysisResult& r) { return to_python(kcca::to_json(r)); },
          "The kcca tool's JSON document (without the inputs' paths) as dicts and lists.");
  m.def(
      "kcca_analysis",
      [](const AnalysisOptions& options, const Eigen::MatrixXd& U, const Eigen::MatrixXd& M) {
        py::gil_scoped_release release;
        return kcca::kcca_analysis(options, U, M);
      },
      py::arg("options"), py::arg("U"), py::arg("M"),
      "kcca::kcca_analysis on two views: correlations, alpha, beta (KCCA) or the canonical "
      "weights weights_u, weights_m (CCA), and to_dict().");

  m.def(
      "kernel_variates",
      [](const Eigen::MatrixXd& X_new, const Eigen::MatrixXd& X_train, const std::string& kernel,
         double sigma, int degree, double coef0, bool center, const Eigen::MatrixXd& coef) {
        const kcca::Kernel k = make_kernel(kernel, sigma, degree, coef0);
        if (X_new.cols() != X_train.cols()) {
          throw std::invalid_argument("transform(): new rows have " + std::to_string(X_new.cols()) +
                                      " columns, training rows " + std::to_string(X_train.cols()));
        }
        py::gil_scoped_release release;
        Eigen::MatrixXd K = kcca::cross_gram(X_new, X_train, k);
        if (center) K = kcca::center_cross_gram(K, kcca::gram(X_train, k));
        return Eigen::MatrixXd(K * coef);
      },
      py::arg("X_new"), py::arg("X_train"), py::arg("kernel"), py::arg("sigma"), py::arg("degree"),
      py::arg("coef0"), py::arg("center"), py::arg("coef"),
      "Canonical variates K(X_new, X_train) coef (out-of-sample centred when center).");
}

// A library message about moca.data.load's options in its keywords: the spec, which the library
// names DataOptions::data (the tools' --data), is `spec` here; DatasetOptions::key is `key`.
std::string load_keyword_names(const std::string& message) {
  return with_keyword_names<data::DatasetOptions>(
      replace_all(message, "DataOptions::data", "spec"));
}

// A keyword of moca.data.load given where it takes no effect (data::unused_options: coupling
// beside HAPT data, npy_layout beside the generator) is a ValueError naming it, as the programs
// refuse the flag. `generator` holds the generator keywords given (windows, coupling, seed).
void refuse_unused_keywords(const std::string& spec, const data::DatasetOptions& o,
                            const py::dict& options, const py::dict& generator) {
  data::DataOptions all;
  all.data = spec;
  all.dataset = o;
  py::dict given = options.attr("copy")();  // the caller's dict stays as it was
  // the generator's fields under their keywords
  const std::pair<const char*, const char*> keywords[] = {
      {"synthetic_windows", "windows"}, {"coupling", "coupling"}, {"synthetic_seed", "seed"}};
  std::vector<UnusedOption> unused = data::unused_options(all, /*split_used=*/false);
  for (UnusedOption& u : unused) {
    for (const auto& [field, keyword] : keywords) {
      if (u.field == std::string("DataOptions::") + field) {
        u.field = keyword;
        if (generator.contains(keyword)) given[keyword] = generator[keyword];
      }
    }
  }
  refuse_unused(unused, given);
}

// open_dataset, synthetic_transitions: the programs' data on the Python side.
void bind_data(py::module_& m) {
  // A .npy folder (one X.npy or shards) read through memory maps, a batch at a time.
  py::class_<data::MappedNpySource>(m, "MappedFolder")
      .def(py::init([](const std::string& path, const std::string& layout) {
             data::MappedNpyOptions o;
             o.layout = parse_enum(data::kNpyLayoutNames, layout, "npy_layout");
             return std::make_unique<data::MappedNpySource>(path, o);
           }),
           py::arg("path"), py::arg("npy_layout") = "auto")
      .def("__len__", [](const data::MappedNpySource& s) { return s.size(); })
      .def_property_readonly("channels",
                             [](const data::MappedNpySource& s) { return s.meta().channels; })
      .def_property_readonly("length",
                             [](const data::MappedNpySource& s) { return s.meta().length; })
      .def_property_readonly("dtype", &data::MappedNpySource::dtype)
      .def_property_readonly("storage", &data::MappedNpySource::storage_text)
      .def_property_readonly("identity", &data::MappedNpySource::identity)
      .def_property_readonly("shards",
                             [](const data::MappedNpySource& s) {
                               py::list out;
                               for (const auto& sh : s.shards())
                                 out.append(py::make_tuple(sh.path, sh.windows, sh.bytes));
                               return out;
                             })
      .def("labels",
           [](const data::MappedNpySource& s) {
             return metadata_to_dict(s.meta(), static_cast<py::ssize_t>(s.size()));
           })
      .def(
          "read",
          [](const data::MappedNpySource& s, const std::vector<int>& rows) {
            py::array_t<float> X({static_cast<py::ssize_t>(rows.size()),
                                  static_cast<py::ssize_t>(s.meta().channels),
                                  static_cast<py::ssize_t>(s.meta().length)});
            float* out = X.mutable_data();
            {
              py::gil_scoped_release release;
              s.read(rows.data(), static_cast<int>(rows.size()), out);
            }
            return X;
          },
          py::arg("rows"))
      .def(
          "block_order",
          [](const data::MappedNpySource& s, std::uint64_t seed, int block, int pool) {
            return data::block_shuffle_order(s.storage(), block, pool, seed);
          },
          py::arg("seed"), py::arg("block") = 64, py::arg("pool") = 1024)
      .def("check_unchanged", &data::MappedNpySource::check_unchanged)
      .def_property_readonly("windows_read",
                             [](const data::MappedNpySource& s) { return s.counters().windows; });
  m.def(
      "write_shards",
      [](const py::array_t<float, py::array::c_style | py::array::forcecast>& X,
         const py::array_t<int, py::array::c_style | py::array::forcecast>& y,
         const py::array_t<int, py::array::c_style | py::array::forcecast>& pid,
         const std::string& out, double shard_mb, bool float16, double rate,
         const std::vector<std::string>& channel_names) {
        if (X.ndim() != 3 || y.size() != X.shape(0) || pid.size() != X.shape(0)) {
          throw std::invalid_argument(
              "write_shards(): X must be N x C x L with N labels and N subject ids");
        }
        data::Windows w;
        w.channels = static_cast<int>(X.shape(1));
        w.length = static_cast<int>(X.shape(2));
        w.sample_rate_hz = rate;
        w.x = Eigen::Map<const data::RowMatrixXf>(X.data(), X.shape(0), X.shape(1) * X.shape(2));
        w.labels = Eigen::Map<const Eigen::VectorXi>(y.data(), y.size());
        w.subjects = Eigen::Map<const Eigen::VectorXi>(pid.data(), pid.size());
        w.channel_names = channel_names;
        w.validate("moca.data.write_shards");
        const data::ShardWriteOptions so = data::ShardOptions{shard_mb, float16}.write_options();
        py::gil_scoped_release release;
        const data::InMemorySource source(w);
        return data::write_npy_shards(source, out, so).size();
      },
      py::arg("X"), py::arg("y"), py::arg("pid"), py::arg("out"), py::arg("shard_mb"),
      py::arg("float16"), py::arg("rate"), py::arg("channel_names"));
  m.def(
      "open_dataset",
      [](const std::string& spec, const py::dict& options, double rate, int length,
         bool keep_rate_and_length, std::optional<int> windows, std::optional<double> coupling,
         std::optional<std::uint64_t> seed) {
        data::DatasetOptions o;
        set_from_kwargs(o, options, kEveryScope, "moca.data.load");
        o.target_rate_hz = rate;
        o.length = length;
        o.keep_rate_and_length = keep_rate_and_length;
        o.generator.windows = windows.value_or(o.generator.windows);
        o.generator.coupling = coupling.value_or(o.generator.coupling);
        o.generator.seed = seed.value_or(o.generator.seed);
        py::dict generator;
        if (windows) generator["windows"] = *windows;
        if (coupling) generator["coupling"] = *coupling;
        if (seed) generator["seed"] = *seed;
        refuse_unused_keywords(spec, o, options, generator);
        data::Dataset d;
        try {
          py::gil_scoped_release release;
          d = data::open_dataset(spec, o);
        } catch (const std::invalid_argument& e) {  // DatasetOptions::key -> the keyword
          throw std::invalid_argument(load_keyword_names(e.what()));
        } catch (const std::runtime_error& e) {  // a folder that is none: named the same way
          throw std::runtime_error(load_keyword_names(e.what()));
        }
        py::dict out = windows_to_dict(d.windows);
        py::dict meta = out["meta"];
        meta["spec"] = d.spec.to_string();
        meta["origin"] = d.origin;
        meta["notes"] = d.notes;
        meta["source_rate_hz"] = d.source_rate_hz;
        meta["source_length"] = d.source_length;
        meta["source_channels"] = d.source_channels;
        meta["dropped_nonfinite"] = d.dropped_nonfinite;
        meta["summary"] = d.summary();
        return out;
      },
      py::arg("spec"), py::arg("options"), py::arg("rate"), py::arg("length"),
      py::arg("keep_rate_and_length"), py::arg("windows"), py::arg("coupling"), py::arg("seed"),
      "data::open_dataset (the programs' --data): windows and metadata; `options` are keywords "
      "of DatasetOptions' schema (dataset_options()).");
  m.def(
      "dataset_options", [] { return schema_rows(data::DatasetOptions{}); },
      "The rows of data::DatasetOptions' schema (moca.data.load's keywords): key, flag, help, "
      "rule, default, choices.");
  m.def(
      "window_recordings",
      [](const std::string& source, const py::dict& options) {
        data::RecordingWindowOptions o;
        set_from_kwargs(o, options, kEveryScope, "moca.data.window_recordings");
        refuse_unused(data::unused_options(o), options);
        const auto keywords = [](const std::string& message) {
          return with_keyword_names<data::RecordingWindowOptions>(
              replace_all(message, "WindowExportOptions::from", "source"));
        };
        data::Windows w;
        nlohmann::json record;
        try {
          py::gil_scoped_release release;
          w = data::window_recordings(source, o, nullptr, &record);
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(keywords(e.what()));
        } catch (const std::runtime_error& e) {
          throw std::runtime_error(keywords(e.what()));
        }
        py::dict out = windows_to_dict(w);
        py::dict meta = out["meta"];
        meta["recordings"] = record.dump();  // JSON text: moca.data parses it
        return out;
      },
      py::arg("source"), py::arg("options"),
      "data::window_recordings (moca data window's RecordingSource, in memory): windows and "
      "metadata; "
      "`options` are keywords of RecordingWindowOptions' schema (recording_options()).");
  m.def(
      "recording_options", [] { return schema_rows(data::RecordingWindowOptions{}); },
      "The rows of data::RecordingWindowOptions' schema (moca.data.window_recordings' "
      "keywords): key, flag, help, rule, default, choices.");
  m.def(
      "synthetic_transitions",
      [](const FloatArray& X, const IntArray& y, std::optional<IntArray> pid, int n,
         std::uint64_t seed) {
        const data::Windows base = make_windows(X, y, pid, {}, 0.0);
        data::Windows w;
        {
          py::gil_scoped_release release;
          w = data::synthetic_transitions(base, n, seed);
        }
        return windows_to_dict(w);
      },
      py::arg("X"), py::arg("y"), py::arg("pid"), py::arg("n"), py::arg("seed"));
}

// Policy, make_policy, make_callable_policy, policy_names, with_default_ratio.
void bind_policies(py::module_& m) {
  py::class_<Policy>(m, "Policy")
      .def_property_readonly("spec", [](const Policy& p) { return p.policy->spec(); })
      .def_property_readonly("name", [](const Policy& p) { return p.policy->name(); })
      .def_property_readonly("C", [](const Policy& p) { return p.policy->grid().channels; })
      .def_property_readonly("P", [](const Policy& p) { return p.policy->grid().patches; })
      .def_property_readonly("patch_length",
                             [](const Policy& p) { return p.policy->grid().patch_length; })
      .def("sample", &sample_policy, py::arg("n"), py::arg("seed"), py::arg("draw"))
      .def(
          "window_masks",
          [](const Policy& p, int n, std::uint64_t seed) {
            if (n < 1) {
              throw std::invalid_argument("window_masks(): n (" + std::to_string(n) +
                                          ") must be >= 1");
            }
            std::vector<masking::Mask> masks;
            {
              py::gil_scoped_release release;
              const data::RowMatrixXf empty;
              for (int i = 0; i < n; ++i)
                masks.push_back(masking::window_mask(*p.policy, seed, i, empty));
            }
            return masks_to_array(masks, p.policy->grid());
          },
          py::arg("n"), py::arg("seed"),
          "masking::window_mask for windows 0..n-1 (moca embed's and attention's masks)");
  m.def("make_policy", &make_spec_policy, py::arg("spec"), py::arg("channels"), py::arg("length"),
        py::arg("patch_length"), py::arg("pilot") = py::none());
  m.def("make_callable_policy", &make_callable_policy, py::arg("name"), py::arg("fn"),
        py::arg("channels"), py::arg("length"), py::arg("patch_length"));
  m.def("policy_names", &masking::policy_names);
  m.def("with_default_ratio", &masking::with_default_ratio, py::arg("spec"), py::arg("ratio"));
}

// ScoreOptions, ScoreRunOptions, ScoreRun, score_windows: kcca_score's scoring on in-memory
// windows. The enum choices are set and read as their names (the parse functions' messages).
void bind_scoring(py::module_& m) {
  using masking::ScoreOptions;
  using masking::ScoreRun;
  using masking::ScoreRunOptions;
  py::class_<ScoreOptions>(m, "ScoreOptions", "masking::ScoreOptions (the scorer's options)")
      .def(py::init<>())
      .def_property(
          "estimator", [](const ScoreOptions& o) { return masking::to_string(o.estimator); },
          [](ScoreOptions& o, const std::string& t) {
            o.estimator = parse_enum(masking::kEstimatorNames, t, "estimator");
          })
      .def_property(
          "kernel", [](const ScoreOptions& o) { return kcca::kernel_type_name(o.kernel); },
          [](ScoreOptions& o, const std::string& t) {
            o.kernel = parse_enum(kcca::kKernelTypeNames, t, "kernel");
          })
      .def_readwrite("draws", &ScoreOptions::draws)
      .def_readwrite("pca", &ScoreOptions::pca)
      .def_readwrite("ridge", &ScoreOptions::ridge)
      .def_readwrite("sigma", &ScoreOptions::sigma)
      .def_readwrite("gamma", &ScoreOptions::gamma)
      .def_readwrite("seed", &ScoreOptions::seed)
      .def_readwrite("threads", &ScoreOptions::threads)
      .def("validate", &ScoreOptions::validate);
  py::class_<ScoreRunOptions>(m, "ScoreRunOptions",
                              "masking::ScoreRunOptions (kcca_score's scoring)")
      .def(py::init<>())
      .def_readwrite("schemes", &ScoreRunOptions::schemes)
      .def_readwrite("ratio", &ScoreRunOptions::ratio)
      .def_property(
          "features", [](const ScoreRunOptions& o) { return masking::to_string(o.features); },
          [](ScoreRunOptions& o, const std::string& t) {
            o.features = parse_enum(masking::kFeatureKindNames, t, "ScoreRunOptions::features");
          })
      .def_readwrite("score", &ScoreRunOptions::score)
      .def_readwrite("patch_length", &ScoreRunOptions::patch_length)
      .def_readwrite("cross_modal", &ScoreRunOptions::cross_modal)
      .def_property(
          "mask_mode",
          [](const ScoreRunOptions& o) {
            return enum_name(masking::kMaskModeChoiceNames, o.mask_mode);
          },
          &masking::set_mask_mode, "auto | per-window | shared (masking::set_mask_mode)")
      .def(
          "add_policy", [](ScoreRunOptions& o, const Policy& p) { o.policies.push_back(p.policy); },
          py::arg("policy"), "A policy scored after the schemes (made for the windows' grid).")
      .def(
          "use_encoder",
          [](ScoreRunOptions& o, const std::string& checkpoint) {
            o.feature_map = encoder_feature_map(checkpoint);
          },
          py::arg("checkpoint"), "A trained encoder as the feature map (replaces features).")
      .def("validate", &ScoreRunOptions::validate)
      .def_static(
          "from_keywords",
          [](const py::dict& options) {
            ScoreRunOptions o;
            set_from_kwargs(o, options, kEveryScope, "moca.score");
            refuse_unused(masking::unused_options(o.score), options);  // as kcca_score does
            return o;
          },
          py::arg("options"),
          "Options from moca.score's keywords: the rows of ScoreRunOptions' schema "
          "(score_options()), checked strictly by type.")
      .def("mask_mode_warning", &masking::mask_mode_warning,
           "masking::mask_mode_warning: the caution kcca_score prints, or \"\".");
  py::class_<ScoreRun>(m, "ScoreRun", "masking::ScoreRun")
      .def_readonly("windows", &ScoreRun::windows)
      .def_readonly("features", &ScoreRun::features)
      .def_readonly("views", &ScoreRun::views)
      .def_readonly("seconds", &ScoreRun::seconds)
      .def(
          "to_dict", [](const ScoreRun& r) { return to_python(masking::to_json(r)); },
          "kcca_score's JSON document of the run as dicts and lists.");
  m.def(
      "score_windows",
      [](const FloatArray& X, std::optional<IntArray> y, std::vector<std::string> channel_names,
         const std::string& modalities, const ScoreRunOptions& options, const py::dict& data) {
        data::Windows w = make_windows(X, y, std::nullopt, channel_names, 0.0);
        // the groups kcca_score's --data settles: --modalities text, else from the names
        const auto notes = data::settle_modalities(w, modalities);
        nlohmann::json provenance = from_python(data, "data");
        provenance["modalities"] = data::format_modalities(w.modalities);
        if (!notes.empty() && !provenance.contains("notes")) provenance["notes"] = notes;
        try {
          py::gil_scoped_release release;
          return masking::score_windows(w, std::move(provenance), options);
        } catch (const std::invalid_argument& e) {  // ScoreOptions::draws -> the keyword
          throw std::invalid_argument(with_keyword_names<ScoreRunOptions>(e.what()));
        }
      },
      py::arg("X"), py::arg("y"), py::arg("channel_names"), py::arg("modalities"),
      py::arg("options"), py::arg("data"),
      "masking::score_windows on windows X (N, C, L) with the modality groups "
      "data::settle_modalities gives them; `data` is their provenance.");
  m.def(
      "score_options", [] { return schema_rows(ScoreRunOptions{}); },
      "The rows of masking::ScoreRunOptions' schema (moca.score's keywords): key, flag, help, "
      "rule, default, choices.");
}

}  // namespace

/// pybind11 before 2.12 does not know numpy 2's array layout, and an extension built with it
/// crashes at the first array that crosses: refuse numpy 2 at import with a clear ImportError.
void refuse_unsupported_numpy() {
#if PYBIND11_VERSION_HEX < 0x020C0000
  const auto version = py::module_::import("numpy").attr("__version__").cast<std::string>();
  if (std::stoi(version) >= 2) {
    throw py::import_error(
        "moca: this extension was built with pybind11 " + std::to_string(PYBIND11_VERSION_MAJOR) +
        "." + std::to_string(PYBIND11_VERSION_MINOR) +
        ", which cannot exchange arrays with numpy " + version +
        " (numpy 2 needs pybind11 >= 2.12): rebuild with `pip install .` (build " +
        "isolation fetches pybind11 >= 2.12) or install numpy < 2");
  }
#endif
}

}  // namespace moca::python

using namespace moca;
using namespace moca::python;

PYBIND11_MODULE(_core, m) {
  moca::python::refuse_unsupported_numpy();
  m.doc() = "moca's compiled core (use the moca package, not this module)";
  m.attr("__version__") = MOCA_VERSION;
  m.attr("with_torch") = py::bool_(encoder_available());

  // std::invalid_argument -> ValueError and std::exception -> RuntimeError with what() are
  // pybind11's defaults; this catches whatever else escapes so that no error reads "Unknown".
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::error_already_set&) {
      throw;
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def("derive_seed", &derive_seed, py::arg("seed"), py::arg("stream"),
        "The library's seed derivation (moca/common/random.hpp).");

  bind_kcca(m);
  bind_data(m);
  bind_policies(m);
  bind_scoring(m);
  bind_encoder(m);
  bind_inspector(m);
}
