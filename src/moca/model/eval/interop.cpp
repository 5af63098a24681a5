// Weights exchanged with PyTorch in the MAE/timm layout (torch translation unit).
#include "moca/model/eval/interop.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/safetensors.hpp"
#include "moca/model/detail/torch_error.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/nn/pos_embed.hpp"

namespace moca::model {

namespace {

/// Names as one comma-separated list, as the programs take them.
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

/// "k.fc1.weight" -> "k.mlp.fc1.weight" inside a block; other names unchanged.
std::string block_name(const std::string& rest) {
  const auto dot = rest.find('.');
  if (dot == std::string::npos) return rest;
  const std::string tail = rest.substr(dot + 1);
  if (starts_with(tail, "fc1.") || starts_with(tail, "fc2.")) {
    return rest.substr(0, dot + 1) + "mlp." + tail;
  }
  return rest;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

std::vector<int64_t> sizes_of(const torch::Tensor& t) {
  return std::vector<int64_t>(t.sizes().begin(), t.sizes().end());
}

/// The model of a checkpoint (MAE or classifier), loaded, on the CPU.
struct LoadedModel {
  CheckpointInfo info;
  std::shared_ptr<torch::nn::Module> module;
  bool probe = false;
};

LoadedModel load_model(const std::string& path) {
  auto ck = detail::open_checkpoint(path);
  LoadedModel m;
  m.info = ck.info;
  if (ck.info.kind == "classifier") {
    const ClassifierSpec spec = classifier_spec(ck.info);
    m.probe = spec.probe;
    auto clf =
        MocaClassifier(ck.info.model, static_cast<int>(spec.class_names.size()), 0.0, spec.probe);
    detail::load_module(ck, *clf);
    m.module = clf.ptr();
  } else {
    auto mae = MocaMae(ck.info.model);
    detail::load_module(ck, *mae);
    m.module = mae.ptr();
  }
  return m;
}

/// Every parameter and buffer of `module`, by dotted name, in registration order.
std::vector<std::pair<std::string, torch::Tensor>> named_state(torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  std::set<std::string> seen;
  // Parameters and buffers of each submodule, depth first (the order of a PyTorch state_dict).
  for (const auto& item : module.named_modules("", /*include_self=*/true)) {
    const std::string prefix = item.key().empty() ? "" : item.key() + ".";
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false)) {
      out.emplace_back(prefix + p.key(), p.value());
    }
    for (const auto& b : item.value()->named_buffers(/*recurse=*/false)) {
      out.emplace_back(prefix + b.key(), b.value());
    }
  }
  return out;
}

/// The PyTorch shape of a moca tensor (only the patch embedding differs: a Conv2d kernel).
std::vector<int64_t> pytorch_shape(const std::string& moca_name, const torch::Tensor& t,
                                   const MocaOptions& mo) {
  if (moca_name == "encoder.patch_embed.weight") {
    const int64_t cin = mo.layout == TokenLayout::kModality ? 1 : mo.channels;
    return {t.size(0), cin, 1, mo.patch_length};
  }
  return sizes_of(t);
}

const NamedArray& find_array(const std::map<std::string, const NamedArray*>& by_name,
                             const std::string& key) {
  auto it = by_name.find(key);
  if (it == by_name.end()) {
    throw_invalid("import_arrays()", "key '" + key + "' is missing (the model needs it)");
  }
  return *it->second;
}

int count_blocks(const std::map<std::string, const NamedArray*>& by_name,
                 const std::string& prefix) {
  int n = 0;
  while (by_name.count(prefix + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

int64_t dim_at(const NamedArray& a, size_t i, size_t rank) {
  if (a.shape.size() != rank) {
    throw_invalid("import_arrays()", "key '" + a.name + "' has shape " + shape_text(a.shape) +
                                         ", expected " + std::to_string(rank) + " dimensions");
  }
  return a.shape[i];
}

/// Which fixed positional code a stored table is, if any (max abs difference <= 1e-4).
PosEmbedKind detect_pos_embed(const NamedArray& pos, const MocaOptions& mo,
                              std::vector<std::string>& notes) {
  double best = 1e300;
  PosEmbedKind kind = PosEmbedKind::kSinCos2d;
  for (PosEmbedKind k : {PosEmbedKind::kSinCos2d, PosEmbedKind::kSinCos1d}) {
    const auto table = sincos_pos_table(k, mo.layout, mo.channels, mo.patches(), mo.embed_dim);
    if (table.size() != pos.values.size()) continue;
    double diff = 0.0;
    for (size_t i = 0; i < table.size(); ++i)
      diff = std::max(diff, std::abs(static_cast<double>(table[i]) - pos.values[i]));
    if (diff < best) {
      best = diff;
      kind = k;
    }
  }
  if (best <= 1e-4) {
    notes.push_back("pos_embed: the fixed sin-cos code '" + to_string(kind) + "' (" +
                    (kind == PosEmbedKind::kSinCos1d ? "the authors' 1 x T grid" : "2-D (c, p)") +
                    ")");
  } else {
    notes.push_back(
        "pos_embed: matches neither fixed sin-cos code (max difference " + std::to_string(best) +
        "; learned in fine-tuning?): kept as stored, recorded as '" + to_string(kind) + "'");
  }
  return kind;
}

/// Architecture from the shapes; notes say what was inferred and how.
MocaOptions infer_options(const std::map<std::string, const NamedArray*>& by_name, bool mae,
                          const ImportOptions& o, std::vector<std::string>& notes) {
  const std::string where = "import_arrays()";
  if (o.channel_names.empty()) {
    throw_invalid("", "ImportOptions::channel_names", "''",
                  "is required (a moca export records it, other files do not): the names of the "
                  "model's C modalities in token-row order (the authors' UCI-HAR models: "
                  "gyro_x,gyro_y,gyro_z,acc_x,acc_y,acc_z)");
  }
  const NamedArray& pw = find_array(by_name, "patch_embed.proj.weight");
  const int64_t D = dim_at(pw, 0, 4), cin = pw.shape[1], Lp = pw.shape[3];
  if (pw.shape[2] != 1) {
    throw_invalid(where, "key 'patch_embed.proj.weight' has shape " + shape_text(pw.shape) +
                             "; moca's patches are 1 x Lp kernels (height 1)");
  }
  const int C = static_cast<int>(o.channel_names.size());
  TokenLayout layout;
  if (cin == 1) {
    layout = TokenLayout::kModality;
  } else if (cin == C) {
    layout = TokenLayout::kStacked;
  } else {
    throw_invalid(where, "key 'patch_embed.proj.weight' has " + std::to_string(cin) +
                             " input channels; expected 1 (one token per modality and patch) or "
                             "C = " +
                             std::to_string(C) + " (channel_names has " + std::to_string(C) +
                             " names)");
  }
  const NamedArray& pos = find_array(by_name, "pos_embed");
  const int64_t T = dim_at(pos, 1, 3) - 1;
  if (layout == TokenLayout::kModality && (T <= 0 || T % C != 0)) {
    throw_invalid(where, "key 'pos_embed' has " + std::to_string(T) +
                             " token rows, not a multiple of the " + std::to_string(C) +
                             " channels named");
  }
  const int64_t P = layout == TokenLayout::kModality ? T / C : T;
  MocaOptions mo;
  mo.channels = C;
  mo.length = static_cast<int>(P * Lp);
  mo.patch_length = static_cast<int>(Lp);
  mo.layout = layout;
  mo.embed_dim = static_cast<int>(D);
  mo.depth = count_blocks(by_name, "blocks.");
  mo.norm_pix_loss = o.norm_pix_loss;
  mo.loss_scope = o.loss_scope;
  const int64_t hidden = dim_at(find_array(by_name, "blocks.0.mlp.fc1.weight"), 0, 2);
  if (hidden % D != 0) {
    throw_invalid(where, "key 'blocks.0.mlp.fc1.weight' has " + std::to_string(hidden) +
                             " rows, not a multiple of the width " + std::to_string(D));
  }
  mo.mlp_ratio = static_cast<int>(hidden / D);
  if (o.num_heads > 0) {
    mo.num_heads = o.num_heads;
  } else {
    if (D % 64 != 0) {
      throw_invalid(where, "num_heads", "0",
                    "cannot be inferred for width " + std::to_string(D) +
                        " (not a multiple of head dim 64); give it");
    }
    mo.num_heads = static_cast<int>(D / 64);
    notes.push_back("num_heads " + std::to_string(D / 64) +
                    " = width / 64 (timm's ViTs; heads are not visible in shapes)");
  }
  if (mae) {
    const int64_t Dd = dim_at(find_array(by_name, "decoder_embed.weight"), 0, 2);
    mo.decoder_embed_dim = static_cast<int>(Dd);
    mo.decoder_depth = count_blocks(by_name, "decoder_blocks.");
    if (o.decoder_num_heads > 0) {
      mo.decoder_num_heads = o.decoder_num_heads;
    } else {
      if (Dd % 32 != 0) {
        throw_invalid(where, "decoder_num_heads", "0",
                      "cannot be inferred for decoder width " + std::to_string(Dd) + "; give it");
      }
      mo.decoder_num_heads = static_cast<int>(Dd / 32);
      notes.push_back("decoder_num_heads " + std::to_string(Dd / 32) +
                      " = decoder width / 32 (MAE's decoders; heads are not visible in shapes)");
    }
  } else {
    notes.push_back("no decoder (classifier): decoder options are the defaults, unused");
  }
  mo.validate();
  mo.pos_embed = detect_pos_embed(pos, mo, notes);
  notes.push_back("architecture: " + to_json(mo).dump());
  return mo;
}

/// The pickle (protocol 2) of a torch.save file, written opcode by opcode with the globals that
/// PyTorch's weights-only loader accepts (1.13's has no float opcode): dicts, strings, integers,
/// tuples, tensors as
/// torch._utils._rebuild_tensor_v2 over a persistent storage id, collections.OrderedDict.
class PthPickle {
 public:
  PthPickle() { bytes_ = {'\x80', '\x02'}; }
  void dict_begin() {
    op('}');
    op('(');
  }
  void dict_end() { op('u'); }
  void str(const std::string& v) {
    op('X');
    u32(static_cast<std::uint32_t>(v.size()));
    bytes_.insert(bytes_.end(), v.begin(), v.end());
  }
  void integer(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      u32(static_cast<std::uint32_t>(static_cast<int32_t>(v)));
      return;
    }
    op('\x8a');  // LONG1: 8 little-endian two's-complement bytes
    op('\x08');
    for (int i = 0; i < 8; ++i) op(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  }
  void strings(const std::vector<std::string>& v) {
    op(']');
    if (v.empty()) return;
    op('(');
    for (const auto& x : v) str(x);
    op('e');
  }
  void ints(const std::vector<int64_t>& v) {
    op('(');
    for (int64_t x : v) integer(x);
    op('t');
  }
  /// A tensor whose storage is record data/<key> of `numel` elements of `storage_type`.
  void tensor(const std::string& key, const std::string& storage_type,
              const std::vector<int64_t>& shape, int64_t numel) {
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');
    str("storage");
    global("torch", storage_type);
    str(key);
    str("cpu");
    integer(numel);
    op('t');
    op('Q');  // BINPERSID
    integer(0);
    ints(shape);
    std::vector<int64_t> stride(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) stride[i - 1] = stride[i] * shape[i];
    ints(stride);
    op('\x89');  // requires_grad False
    global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }
  const std::vector<char>& finish() {
    op('.');
    return bytes_;
  }

 private:
  void op(char c) { bytes_.push_back(c); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) op(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void global(const std::string& module, const std::string& name) {
    op('c');
    for (char c : module + "\n" + name + "\n") op(c);
  }
  std::vector<char> bytes_;
};

}  // namespace

std::string pytorch_name(const std::string& n, bool probe) {
  static const std::vector<std::pair<std::string, std::string>> fixed = {
      {"encoder.patch_embed.", "patch_embed.proj."},
      {"encoder.norm.", "norm."},
      {"decoder.embed.", "decoder_embed."},
      {"decoder.norm.", "decoder_norm."},
      {"decoder.pred.", "decoder_pred."},
      {"head_norm.", "head.0."}};
  if (n == "encoder.cls_token") return "cls_token";
  if (n == "encoder.pos_embed") return "pos_embed";
  if (n == "decoder.mask_token") return "mask_token";
  if (n == "decoder.pos_embed") return "decoder_pos_embed";
  if (starts_with(n, "encoder.blocks.")) return "blocks." + block_name(n.substr(15));
  if (starts_with(n, "decoder.blocks.")) return "decoder_blocks." + block_name(n.substr(15));
  for (const auto& f : fixed)
    if (starts_with(n, f.first)) return f.second + n.substr(f.first.size());
  if (starts_with(n, "head.")) return (probe ? "head.1." : "head.") + n.substr(5);
  throw_invalid("pytorch_name()", "'" + n + "' is not a parameter of a moca model");
}

namespace {

/// What an export writes, in either format: the tensors under their PyTorch names and shapes
/// (float32, or int64 for BatchNorm's counter), and the record of what shapes do not show.
struct ExportState {
  InteropReport report;
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  ExportRecord record;
  std::optional<std::string> rate_text;  ///< the rate as the checkpoint's JSON number text
};

ExportState export_state(const std::string& checkpoint) {
  LoadedModel m = load_model(checkpoint);
  ExportState st;
  InteropReport& r = st.report;
  r.kind = m.info.kind;
  r.probe = m.probe;
  r.model = m.info.model;
  for (const auto& kv : named_state(*m.module)) {
    const std::string key = pytorch_name(kv.first, m.probe);
    auto t = kv.second.detach().to(torch::kCPU).contiguous();
    if (t.scalar_type() != torch::kInt64) t = t.to(torch::kFloat32);
    t = t.reshape(pytorch_shape(kv.first, t, m.info.model));
    st.tensors.emplace_back(key, t);
    r.keys.push_back(key);
  }
  ExportRecord& rec = st.record;
  rec.kind = m.info.kind;
  rec.model = m.info.model;
  rec.channel_names = m.info.channel_names;
  const auto& meta = m.info.meta;
  if (meta.contains("data") && meta.at("data").contains("sample_rate_hz")) {
    st.rate_text = meta.at("data").at("sample_rate_hz").dump();
    rec.sample_rate_hz = meta.at("data").at("sample_rate_hz").get<double>();
  }
  if (m.info.kind == "classifier") {
    const ClassifierSpec spec = classifier_spec(m.info);
    rec.class_names = spec.class_names;
    rec.input_channels = spec.input_channels;
  }
  return st;
}

void write_pth(const ExportState& st, const std::string& out) {
  // {'model': state_dict, 'moca': config} as torch.save writes it: a zip archive "archive/"
  // holding data.pkl and one record data/<k> per tensor (little-endian raw values).
  const ExportRecord& rec = st.record;
  PthPickle pk;
  pk.dict_begin();
  pk.str("model");
  pk.dict_begin();
  for (size_t k = 0; k < st.tensors.size(); ++k) {
    const auto& [key, t] = st.tensors[k];
    pk.str(key);
    pk.tensor(std::to_string(k), t.scalar_type() == torch::kInt64 ? "LongStorage" : "FloatStorage",
              sizes_of(t), t.numel());
  }
  pk.dict_end();
  pk.str("moca");
  pk.dict_begin();
  pk.str("format");
  pk.str("moca-pytorch-1");
  pk.str("kind");
  pk.str(rec.kind);
  pk.str("model");
  pk.str(to_json(rec.model).dump());
  pk.str("channel_names");
  pk.strings(rec.channel_names);
  if (st.rate_text) {
    // as text: PyTorch 1.13's weights-only loader has no float opcode
    pk.str("sample_rate_hz");
    pk.str(*st.rate_text);
  }
  if (rec.kind == "classifier") {
    pk.str("head");
    pk.str(st.report.probe ? "probe" : "linear");
    pk.str("class_names");
    pk.strings(rec.class_names);
    pk.str("input_channels");
    pk.strings(rec.input_channels);
  }
  pk.dict_end();
  pk.dict_end();
  const std::vector<char>& pickle = pk.finish();
  write_output_file(out, [&](std::ostream& os) {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t n) {
      os.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
      return n;
    });
    writer.writeRecord("data.pkl", pickle.data(), pickle.size());
    for (size_t k = 0; k < st.tensors.size(); ++k) {
      const auto& t = st.tensors[k].second;
      writer.writeRecord("data/" + std::to_string(k), t.data_ptr(),
                         static_cast<size_t>(t.numel()) * t.element_size());
    }
    writer.writeEndOfFile();
  });
}

void write_safetensors_export(const ExportState& st, const std::string& out) {
  // The record as the format's string map: text as is, lists and the architecture as JSON.
  const ExportRecord& rec = st.record;
  std::map<std::string, std::string> meta = {
      {"format", "pt"},  // the package's convention for PyTorch-layout weights
      {"moca_format", kSafetensorsExportFormat},
      {"kind", rec.kind},
      {"model", to_json(rec.model).dump()},
      {"channel_names", nlohmann::json(rec.channel_names).dump()}};
  if (st.rate_text) meta["sample_rate_hz"] = *st.rate_text;
  if (rec.kind == "classifier") {
    meta["head"] = st.report.probe ? "probe" : "linear";
    meta["class_names"] = nlohmann::json(rec.class_names).dump();
    meta["input_channels"] = nlohmann::json(rec.input_channels).dump();
  }
  std::vector<SafetensorsTensor> ts;
  for (const auto& [key, t] : st.tensors) {
    SafetensorsTensor x;
    x.name = key;
    x.dtype = t.scalar_type() == torch::kInt64 ? "I64" : "F32";
    x.shape = sizes_of(t);
    const auto* p = static_cast<const char*>(t.data_ptr());
    x.bytes.assign(p, p + static_cast<size_t>(t.numel()) * t.element_size());
    ts.push_back(std::move(x));
  }
  write_safetensors(out, ts, meta);
}

std::optional<double> parse_rate(const std::string& path, const std::string& rate) {
  if (rate.empty()) return std::nullopt;
  const auto j = nlohmann::json::parse(rate, nullptr, false);
  if (!j.is_number()) {
    throw std::runtime_error(path + ": moca.sample_rate_hz (" + printable(rate) +
                             ") is not a number");
  }
  return j.get<double>();
}

/// A safetensors file's tensors as float, and a moca export's record from its metadata.
std::vector<NamedArray> read_safetensors_arrays(const std::string& path,
                                                std::optional<ExportRecord>* exported) {
  const SafetensorsFile f = read_safetensors(path);
  const auto& meta = f.metadata;
  auto text = [&](const char* key) {
    const auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  if (exported && text("moca_format") == kSafetensorsExportFormat) {
    auto json_of = [&](const char* key) {
      const auto j = nlohmann::json::parse(text(key), nullptr, false);
      if (j.is_discarded()) {
        throw std::runtime_error(path + ": metadata '" + key + "' is not JSON (" +
                                 printable(text(key)) + ")");
      }
      return j;
    };
    auto strings = [&](const char* key) {
      std::vector<std::string> v;
      if (text(key).empty()) return v;
      const auto j = json_of(key);
      if (!j.is_array()) throw std::runtime_error(path + ": metadata '" + key + "' is not a list");
      for (const auto& x : j) {
        if (!x.is_string())
          throw std::runtime_error(path + ": metadata '" + key + "' holds a non-text entry");
        v.push_back(x.get<std::string>());
      }
      return v;
    };
    ExportRecord rec;
    rec.kind = text("kind");
    rec.model = moca_options_from_json(json_of("model"));
    rec.channel_names = strings("channel_names");
    rec.class_names = strings("class_names");
    rec.input_channels = strings("input_channels");
    rec.sample_rate_hz = parse_rate(path, text("sample_rate_hz"));
    *exported = std::move(rec);
  }
  std::vector<NamedArray> out;
  for (const auto& e : f.tensors) {
    NamedArray a;
    a.name = e.name;
    a.shape = e.shape;
    a.values = f.floats(e);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

WeightsFormat resolve_weights_format(const std::string& path, WeightsFormat format) {
  if (format != WeightsFormat::kAuto) return format;
  const std::string ext = ".safetensors";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0
             ? WeightsFormat::kSafetensors
             : WeightsFormat::kPth;
}

InteropReport export_pytorch(const std::string& checkpoint, const std::string& out,
                             WeightsFormat format) {
  const ExportState st = export_state(checkpoint);
  if (resolve_weights_format(out, format) == WeightsFormat::kSafetensors) {
    write_safetensors_export(st, out);
  } else {
    write_pth(st, out);
  }
  return st.report;
}

std::vector<NamedArray> read_pth_arrays(const std::string& path,
                                        std::optional<ExportRecord>* exported) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("read_pth_arrays(): cannot open " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  c10::IValue top;
  try {
    top = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    if (error_text(e).find("got None") != std::string::npos) {
      throw std::runtime_error(path +
                               ": an OrderedDict state dict, which LibTorch's unpickler "
                               "cannot read; use `python3 -m moca.interop import`, or "
                               "save dict(state_dict)");
    }
    throw std::runtime_error(
        path + ": LibTorch's unpickler cannot read it (" + printable(error_text(e), 160) +
        "); use `python3 -m moca.interop import` (its reader skips entries such as the "
        "authors' argparse args and never runs code)");
  }
  // LibTorch's unpickler turns every collections.OrderedDict into None (it expects them only as
  // a tensor's empty backward hooks), so model.state_dict() saved as is cannot be read here.
  const std::string ordered =
      ": an OrderedDict state dict, which LibTorch's unpickler cannot read; use `python3 -m "
      "moca.interop import`, or save dict(state_dict)";
  if (top.isNone()) throw std::runtime_error(path + ordered);
  if (!top.isGenericDict()) {
    throw std::runtime_error(path + ": holds a " + top.tagKind() + ", not a state dict");
  }
  auto dict = top.toGenericDict();
  if (exported && dict.contains("moca") && dict.at("moca").isGenericDict()) {
    const auto cfg = dict.at("moca").toGenericDict();
    if (cfg.contains("model") && cfg.at("model").isString()) {
      ExportRecord rec;
      rec.model = moca_options_from_json(nlohmann::json::parse(cfg.at("model").toStringRef()));
      auto text = [&](const char* key) {
        return cfg.contains(key) && cfg.at(key).isString() ? cfg.at(key).toStringRef()
                                                           : std::string();
      };
      auto strings = [&](const char* key) {
        std::vector<std::string> v;
        if (!cfg.contains(key) || !cfg.at(key).isList()) return v;
        for (const c10::IValue& x : cfg.at(key).toListRef()) {
          if (!x.isString()) throw std::runtime_error(path + ": moca." + key + " is not text");
          v.push_back(x.toStringRef());
        }
        return v;
      };
      rec.kind = text("kind");
      rec.channel_names = strings("channel_names");
      rec.class_names = strings("class_names");
      rec.input_channels = strings("input_channels");
      rec.sample_rate_hz = parse_rate(path, text("sample_rate_hz"));  // JSON number text
      *exported = std::move(rec);
    }
  }
  if (dict.contains("model")) {
    if (dict.at("model").isNone()) throw std::runtime_error(path + ordered);
    if (dict.at("model").isGenericDict()) dict = dict.at("model").toGenericDict();
  }
  std::vector<NamedArray> out;
  for (const auto& kv : dict) {
    if (!kv.key().isString()) throw std::runtime_error(path + ": a key is not a string");
    const std::string name = kv.key().toStringRef();
    if (!kv.value().isTensor()) {
      throw std::runtime_error(path + ": entry '" + name + "' of the weights is not a tensor");
    }
    auto t = kv.value().toTensor().detach().to(torch::kCPU, torch::kFloat32).contiguous();
    NamedArray a;
    a.name = name;
    a.shape = sizes_of(t);
    a.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<NamedArray> read_weight_arrays(const std::string& path,
                                           std::optional<ExportRecord>* exported) {
  return looks_like_safetensors(path) ? read_safetensors_arrays(path, exported)
                                      : read_pth_arrays(path, exported);
}

InteropReport import_arrays(const std::vector<NamedArray>& tensors, const ImportOptions& o,
                            const std::string& out) {
  const std::string where = "import_arrays()";
  std::map<std::string, const NamedArray*> by_name;
  for (const auto& a : tensors) {
    if (!by_name.emplace(a.name, &a).second) throw_invalid(where, "key '" + a.name + "' twice");
    int64_t n = 1;
    for (int64_t s : a.shape) n *= s;
    if (n != static_cast<int64_t>(a.values.size())) {
      throw_invalid(where, "key '" + a.name + "': shape " + shape_text(a.shape) + " but " +
                               std::to_string(a.values.size()) + " values");
    }
  }
  if (by_name.count("fc_norm.weight")) {
    throw_invalid(where,
                  "key 'fc_norm.weight': a global-pool classifier (mean of tokens, then "
                  "fc_norm); moca classifiers pool the cls token through 'norm'");
  }
  const bool has_decoder = by_name.count("decoder_embed.weight") > 0;
  const bool has_head = by_name.count("head.weight") > 0 || by_name.count("head.1.weight") > 0;
  if (has_decoder == has_head) {
    throw_invalid(where, has_decoder ? "the tensors hold both a decoder and a classifier head"
                                     : "the tensors hold neither a decoder (decoder_embed.weight) "
                                       "nor a classifier head (head.weight): not a MoCA/MAE "
                                       "model");
  }
  const std::string kind = has_decoder ? "mae" : "classifier";
  if (o.kind != ImportKind::kAuto && enum_name(kImportKindNames, o.kind) != kind) {
    throw_invalid(where, o.kind == ImportKind::kMae
                             ? "an MAE (encoder + decoder) was expected, but the file holds a "
                               "classifier (head.weight, no decoder_embed)"
                             : "a classifier was expected, but the file holds an MAE "
                               "(decoder_embed.weight, no head)");
  }
  check_ranges(o);
  if (!(o.sample_rate_hz > 0.0)) {
    throw_invalid("", "ImportOptions::sample_rate", format_number(o.sample_rate_hz),
                  "is required (> 0; a moca export records it, other files do not): the rate of "
                  "the windows the model was trained on");
  }
  InteropReport r;
  r.kind = kind;
  r.probe = by_name.count("head.1.weight") > 0;
  r.model = infer_options(by_name, has_decoder, o, r.notes);
  const MocaOptions& mo = r.model;
  std::shared_ptr<torch::nn::Module> module;
  nlohmann::json meta;
  meta["kind"] = kind;
  meta["channel_names"] = o.channel_names;
  if (kind == "mae") {
    module = MocaMae(mo).ptr();
  } else {
    const NamedArray& hw = find_array(by_name, r.probe ? "head.1.weight" : "head.weight");
    const int K = static_cast<int>(dim_at(hw, 0, 2));
    std::vector<std::string> classes = o.class_names;
    if (classes.empty()) {
      for (int k = 0; k < K; ++k) classes.push_back(std::to_string(k));
      r.notes.push_back("class_names not given: classes named 0.." + std::to_string(K - 1));
    }
    if (static_cast<int>(classes.size()) != K) {
      throw_invalid(where, "class_names", std::to_string(classes.size()) + " names",
                    "must name the head's " + std::to_string(K) + " classes");
    }
    const auto inputs = o.input_channels.empty() ? o.channel_names : o.input_channels;
    match_channels(o.channel_names, inputs);
    module = MocaClassifier(mo, K, 0.0, r.probe).ptr();
    meta["input_channels"] = inputs;
    meta["class_names"] = classes;
    meta["classes"] = K;
    meta["head"] = r.probe ? "probe" : "linear";
    meta["training"] = {{"precision", to_string(Precision::kFp32)}, {"imported", true}};
  }
  std::set<std::string> used;
  torch::NoGradGuard no_grad;
  for (auto& kv : named_state(*module)) {
    const std::string key = pytorch_name(kv.first, r.probe);
    const NamedArray& a = find_array(by_name, key);
    const auto want = pytorch_shape(kv.first, kv.second, mo);
    if (a.shape != want) {
      throw_invalid(where, "key '" + key + "' has shape " + shape_text(a.shape) +
                               ", the inferred model needs " + shape_text(want));
    }
    auto src = torch::from_blob(const_cast<float*>(a.values.data()),
                                {static_cast<int64_t>(a.values.size())}, torch::kFloat32);
    kv.second.copy_(src.to(kv.second.scalar_type()).reshape(kv.second.sizes()));
    used.insert(key);
    r.keys.push_back(key);
  }
  for (const auto& kv : by_name) {
    if (!used.count(kv.first)) {
      throw_invalid(where, "key '" + kv.first + "' is not part of the inferred " + kind +
                               " (extra key; a different model?)");
    }
  }
  meta["model"] = to_json(mo);
  meta["data"] = {
      {"sample_rate_hz", o.sample_rate_hz}, {"length", mo.length}, {"normalisation", "none"}};
  meta["source"] = o.source;
  meta["import_notes"] = r.notes;
  meta["finished"] = true;
  detail::save_checkpoint(out, *module, nullptr, meta);
  return r;
}

InteropReport import_pytorch(const std::string& path, ImportOptions options,
                             const std::string& out) {
  check_ranges(options);  // the rows' ranges (schema), before the file is read
  std::optional<ExportRecord> exported;
  const auto arrays = read_weight_arrays(path, &exported);
  std::vector<std::string> notes;
  if (exported) {
    // A moca export records what the shapes cannot tell; options given must agree with it.
    const ExportRecord& e = *exported;
    auto adopt = [&](std::vector<std::string>& given, const std::vector<std::string>& recorded,
                     const char* field) {
      if (recorded.empty()) return;
      if (given.empty()) {
        given = recorded;
        notes.push_back(std::string(field) + " from the export's record: " + joined(recorded));
      } else if (given != recorded) {
        throw_invalid("", std::string("ImportOptions::") + field, joined(given),
                      "contradicts the export's record (" + joined(recorded) + ") in " + path);
      }
    };
    adopt(options.channel_names, e.channel_names, "channel_names");
    if (e.kind == "classifier") {
      adopt(options.class_names, e.class_names, "class_names");
      adopt(options.input_channels, e.input_channels, "input_channels");
    }
    if (e.sample_rate_hz) {
      const std::string rate = format_number(*e.sample_rate_hz);
      if (options.sample_rate_hz == 0.0) {
        options.sample_rate_hz = *e.sample_rate_hz;
        notes.push_back("sample_rate_hz from the export's record: " + rate);
      } else if (options.sample_rate_hz != *e.sample_rate_hz) {
        throw_invalid("", "ImportOptions::sample_rate", format_number(options.sample_rate_hz),
                      "contradicts the export's record (" + rate + ") in " + path);
      }
    }
    // The heads, which shapes do not show; options given win.
    if (options.num_heads == 0) options.num_heads = e.model.num_heads;
    if (options.decoder_num_heads == 0) options.decoder_num_heads = e.model.decoder_num_heads;
  }
  options.source = {{"file", path}};
  InteropReport r = import_arrays(arrays, options, out);
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  return r;
}

}  // namespace moca::model
