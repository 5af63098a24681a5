#include "moca/model/eval/embed_views.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "moca/common/matrix_io.hpp"
#include "moca/common/npy_header.hpp"
#include "moca/common/output_file.hpp"
#include "moca/embed/map_figure.hpp"
#include "moca/embed/pca_map.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/eval/attention_report.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "moca/model/eval/protocol.hpp"

namespace moca::model {

namespace {

void save_matrix(const std::string& path, const Eigen::MatrixXd& m) {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = m;
  write_npy(path, {r.rows(), r.cols()}, r.data());
}

// labels.npy: the windows' label ids (both modes write it). `meta` may hold no values, so the
// count is the labels'.
void save_labels(const std::string& dir, const data::Windows& meta) {
  const std::vector<std::int64_t> labels(meta.labels.data(),
                                         meta.labels.data() + meta.labels.size());
  write_npy_int(dir + "/labels.npy", {static_cast<std::int64_t>(labels.size())}, labels.data());
}

/// Takes the next rows (first, first + block.rows()) of a matrix being written.
using PutRows = std::function<void(int first, const Eigen::MatrixXd& block)>;

// Writes `path`, an n x cols float64 .npy, atomically from row blocks that `producer` gives in
// order: memory holds one block, not the matrix. n is the number of rows given; anything but
// blocks of `cols` columns in order is a logic error. The producer's exceptions pass unchanged
// and leave `path` as it was.
void write_row_blocks(const std::string& path, Eigen::Index cols,
                      const std::function<void(const PutRows& put)>& producer) {
  write_npy_byte_rows(path, {cols}, "<f8", [&](const auto& put_row) {
    Eigen::Index written = 0;
    producer([&](int first, const Eigen::MatrixXd& block) {
      if (first != written || block.cols() != cols)
        throw std::logic_error("write_row_blocks(): rows out of order or of another width");
      const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = block;
      for (Eigen::Index i = 0; i < r.rows(); ++i)
        put_row(reinterpret_cast<const char*>(r.data() + i * cols));
      written += r.rows();
    });
  });
}

// Every checkpoint must take the windows of the first (one data selection serves them all).
ModelGeometry common_geometry(const std::vector<std::string>& checkpoints) {
  const ModelGeometry geometry = checkpoint_geometry(checkpoints.front());
  for (size_t i = 1; i < checkpoints.size(); ++i) {
    const std::string& c = checkpoints[i];
    const ModelGeometry g = checkpoint_geometry(c);
    if (g.length != geometry.length || g.sample_rate_hz != geometry.sample_rate_hz) {
      throw_invalid("", "EmbedOptions::checkpoints", c,
                    "must take the windows of the first checkpoint (length " +
                        std::to_string(geometry.length) + " at " +
                        std::to_string(geometry.sample_rate_hz) + " Hz)");
    }
  }
  return geometry;
}

nlohmann::json umap_json(const embed::UmapOptions& u) {
  return {{"neighbors", u.neighbors},
          {"min_dist", u.min_dist},
          {"spread", u.spread},
          {"epochs", u.epochs},
          {"negative_samples", u.negative_samples},
          {"seed", u.seed},
          {"max_points", embed::kUmapMaxPoints},
          {"knn", "exact (Euclidean)"}};
}

}  // namespace

void EmbedOptions::validate() const {
  if (checkpoints.empty()) throw std::invalid_argument("EmbedOptions::checkpoints is required");
  if (!pooled() && checkpoints.size() != 1) {
    throw_invalid("", "EmbedOptions::checkpoints", std::to_string(checkpoints.size()) + " files",
                  "must be one without EmbedOptions::pool or EmbedOptions::map");
  }
  if (!labels.empty() && labels.size() != checkpoints.size()) {
    throw_invalid(
        "", "EmbedOptions::labels", std::to_string(labels.size()) + " names",
        "must be one per EmbedOptions::checkpoints (" + std::to_string(checkpoints.size()) + ")");
  }
  check_ranges(*this);
  if (map == EmbedMap::kUmap) umap.validate();
  inference.runtime.validate();
  data.validate();
}

std::vector<UnusedOption> unused_options(const EmbedOptions& o) {
  std::vector<UnusedOption> unused;
  const std::string views =
      "the pooled embeddings (EmbedOptions::pool, EmbedOptions::map) take "
      "every token and draw no masks";
  const std::string pooled =
      "only the pooled embeddings use it (EmbedOptions::pool or "
      "EmbedOptions::map)";
  for (const Option& row : option_rows<EmbedOptions>()) {
    if (row.scope == kViewsScope && o.pooled()) unused.push_back({row.field(), views});
    if (row.scope == kPooledScope && !o.pooled()) unused.push_back({row.field(), pooled});
  }
  if (o.map != EmbedMap::kUmap) {
    for (const Option& row : option_rows<embed::UmapOptions>()) {
      unused.push_back({row.field(), "only EmbedOptions::map umap uses it"});
    }
  }
  return unused;
}

nlohmann::json embed_views(const EmbedOptions& o, std::ostream& log) {
  o.validate();
  check_writable_folder(o.out_dir, "EmbedOptions::out_dir");
  if (o.pooled()) throw std::invalid_argument("embed_views(): the options ask for embed_maps()");
  const std::string& checkpoint = o.checkpoints.front();
  const ModelGeometry geometry = checkpoint_geometry(checkpoint);
  const auto d =
      data::select_test(o.data, log, geometry.length, geometry.sample_rate_hz, o.max_windows);
  const data::WindowSource& test = *d->windows;
  const Eigen::Index n = test.size();
  EncoderFeatures enc(checkpoint, o.inference);
  const masking::Grid grid =
      masking::make_grid(test.meta().channels, test.meta().length, enc.info().model.patch_length);
  // A chunk at a time (the whole set in memory): a window's mask is drawn from its index in the
  // evaluated set, so the masks and features do not depend on the chunks. The policy's pilot is
  // the first chunk (in memory: every window).
  std::unique_ptr<masking::MaskPolicy> policy;
  if (n == 0) throw_invalid("", "EmbedOptions::data", d->source, "has no test windows");
  create_output_folder(o.out_dir);
  // masks.txt, Z_U and Z_M are written as the chunks come, so memory holds a chunk's masks and
  // features, not n rows.
  write_output_file_passing(o.out_dir + "/masks.txt", [&](std::ostream& mask_text) {
    write_row_blocks(o.out_dir + "/Z_M.npy", enc.dim(), [&](const PutRows& put_masked) {
      write_row_blocks(o.out_dir + "/Z_U.npy", enc.dim(), [&](const PutRows& put_unmasked) {
        data::for_each_chunk(test, data::kEvalChunk, [&](int first, const data::Windows& chunk) {
          if (!policy) {
            masking::PolicyContext context;
            context.pilot = &chunk;
            policy = masking::make_policy(o.policy, grid, context);
          }
          std::vector<masking::Mask> masks;
          for (int i = 0; i < chunk.size(); ++i)
            masks.push_back(masking::window_mask(*policy, o.seed, first + i, chunk.window(i)));
          for (const masking::Mask& m : masks) {
            std::string cells = m.to_string();  // one line per window: rows joined
            cells.erase(std::remove(cells.begin(), cells.end(), '\n'), cells.end());
            mask_text << cells << "\n";
          }
          const ViewFeatures part = enc.view_features(chunk, masks);
          put_unmasked(first, part.unmasked);
          put_masked(first, part.masked);
        });
      });
    });
  });
  save_labels(o.out_dir, test.meta());
  nlohmann::json j;
  j["command"] = "embed";
  j["data"] = d->data;
  j["checkpoint"] = checkpoint;
  j["policy"] = policy->spec();
  j["seed"] = o.seed;
  j["windows"] = n;
  j["dim"] = enc.dim();
  j["files"] = {"Z_U.npy", "Z_M.npy", "labels.npy", "masks.txt"};
  j["features"] =
      "mean of the encoder outputs (final norm, cls excluded) over each view's tokens; the "
      "unmasked view feeds the visible tokens, the masked view the masked tokens";
  return j;
}

nlohmann::json embed_maps(const EmbedOptions& o, std::ostream& out, std::ostream& log) {
  o.validate();
  if (!o.pooled()) throw std::invalid_argument("embed_maps(): the options ask for embed_views()");
  check_writable_folder(o.out_dir, "EmbedOptions::out_dir", true);
  const Pool pool = o.pool.value_or(Pool::kMean);
  embed::UmapOptions umap = o.umap;
  umap.threads = o.inference.runtime.threads;
  const ModelGeometry geometry = common_geometry(o.checkpoints);
  const auto d =
      data::select_test(o.data, log, geometry.length, geometry.sample_rate_hz, o.max_windows);
  const data::WindowSource& source = *d->windows;
  const data::Windows& test = source.meta();  // labels and subjects; no values
  const int n = source.size();
  create_output_folder(o.out_dir);
  std::vector<std::string> classes;
  for (int i = 0; i < n; ++i) classes.push_back(class_label(test, i));
  save_labels(o.out_dir, test);
  write_npy_strings(o.out_dir + "/classes.npy", classes);
  const std::string map_name = o.map ? enum_name(kEmbedMapNames, *o.map) : "";
  nlohmann::json j;
  j["command"] = "embed";
  j["data"] = d->data;
  j["pool"] = pool_name(pool);
  j["windows"] = n;
  j["map"] = o.map ? nlohmann::json(map_name) : nlohmann::json(nullptr);
  if (o.map == EmbedMap::kUmap) j["umap"] = umap_json(umap);
  j["models"] = nlohmann::json::array();
  std::vector<embed::MapPanel> panels;
  for (size_t m = 0; m < o.checkpoints.size(); ++m) {
    const std::string& checkpoint = o.checkpoints[m];
    const std::string name =
        o.labels.empty() ? std::filesystem::path(checkpoint).stem().string() : o.labels[m];
    EncoderInspector inspector(checkpoint, o.inference);
    const int dim = inspector.dim();
    // Written a chunk at a time; held whole only for a map, which lays out all the rows at once.
    Eigen::MatrixXd z;
    if (o.map) z.resize(n, dim);
    write_row_blocks(o.out_dir + "/embedding_" + name + ".npy", dim, [&](const PutRows& put) {
      data::for_each_chunk(source, data::kEvalChunk, [&](int first, const data::Windows& chunk) {
        const Eigen::MatrixXd part = inspector.embed(chunk, pool);
        put(first, part);
        if (o.map) z.middleRows(first, part.rows()) = part;
      });
    });
    nlohmann::json mj = {{"label", name},
                         {"checkpoint", checkpoint},
                         {"kind", inspector.info().kind},
                         {"dim", dim},
                         {"embedding", "embedding_" + name + ".npy"}};
    out << "embed: " << name << ": " << n << " windows x " << dim << " (" << pool_name(pool)
        << " pooling)";
    if (o.map) {
      const auto t0 = std::chrono::steady_clock::now();
      const Eigen::MatrixXd y =
          *o.map == EmbedMap::kUmap ? embed::umap_layout(z, umap) : embed::pca_layout(z, 2);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      save_matrix(o.out_dir + "/map_" + name + ".npy", y);
      std::ostringstream csv;
      csv.precision(17);
      csv << "window,subject,label,class,x,y\n";
      for (int i = 0; i < n; ++i) {
        csv << i << "," << test.subjects(i) << "," << test.labels(i) << ","
            << classes[static_cast<size_t>(i)] << "," << y(i, 0) << "," << y(i, 1) << "\n";
      }
      write_output_text(o.out_dir + "/map_" + name + ".csv", csv.str());
      mj["map"] = {"map_" + name + ".csv", "map_" + name + ".npy"};
      panels.push_back({name, y, classes});
      mj["map_seconds"] = seconds;
      out << " -> " << map_name << " map (" << seconds << " s)";
    }
    out << "\n";
    j["models"].push_back(mj);
  }
  if (!panels.empty()) {
    const std::string title = map_name + " of " + pool_name(pool) + "-pooled encoder embeddings (" +
                              std::to_string(n) + " test windows)";
    const auto f = embed::write_map_figure(panels, o.out_dir + "/map", title, o.png);
    j["figure"] = {{"dat", f.dat}, {"script", f.script}, {"png", f.png}};
    if (!f.png.empty()) out << "embed: " << f.png << "\n";
  }
  return j;
}

}  // namespace moca::model
