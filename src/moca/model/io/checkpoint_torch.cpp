// The torch side of checkpoint.hpp: archives written atomically, read with shape-checked loading
// (detail/checkpoint_torch.hpp).
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "moca/common/output_file.hpp"
#include "moca/model/detail/torch_error.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model {

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return detail::open_checkpoint(path).info;
}

namespace detail {

namespace {

torch::Tensor string_tensor(const std::string& s) {
  auto t = torch::empty({static_cast<int64_t>(s.size())}, torch::kUInt8);
  std::copy(s.begin(), s.end(), reinterpret_cast<char*>(t.data_ptr<uint8_t>()));
  return t;
}

std::string tensor_string(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU).contiguous();
  const char* p = reinterpret_cast<const char*>(c.data_ptr<uint8_t>());
  return std::string(p, p + c.numel());
}

std::string shape_string(const torch::Tensor& t) {
  return c10::str(t.sizes());
}

void load_recursive(torch::serialize::InputArchive& archive, torch::nn::Module& module,
                    const std::string& prefix, const std::string& file) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(/*recurse=*/false)) {
    torch::Tensor t;
    if (!archive.try_read(p.key(), t)) {
      throw std::runtime_error("checkpoint " + file + ": parameter '" + prefix + p.key() +
                               "' is missing (the checkpoint holds a different model)");
    }
    if (!t.sizes().equals(p.value().sizes())) {
      throw std::runtime_error("checkpoint " + file + ": parameter '" + prefix + p.key() +
                               "' has shape " + shape_string(t) + ", the model expects " +
                               shape_string(p.value()));
    }
    p.value().copy_(t);
  }
  for (auto& b : module.named_buffers(/*recurse=*/false)) {
    torch::Tensor t;
    if (!archive.try_read(b.key(), t, /*is_buffer=*/true)) {
      throw std::runtime_error("checkpoint " + file + ": buffer '" + prefix + b.key() +
                               "' is missing (the checkpoint holds a different model)");
    }
    if (!t.sizes().equals(b.value().sizes())) {
      throw std::runtime_error("checkpoint " + file + ": buffer '" + prefix + b.key() +
                               "' has shape " + shape_string(t) + ", the model expects " +
                               shape_string(b.value()));
    }
    b.value().copy_(t);
  }
  for (auto& child : module.named_children()) {
    torch::serialize::InputArchive sub;
    if (!archive.try_read(child.key(), sub)) {
      throw std::runtime_error("checkpoint " + file + ": module '" + prefix + child.key() +
                               "' is missing (the checkpoint holds a different model)");
    }
    load_recursive(sub, *child.value(), prefix + child.key() + ".", file);
  }
}

}  // namespace

OpenCheckpoint open_checkpoint(const std::string& path) {
  OpenCheckpoint ck;
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw std::runtime_error("checkpoint " + path + ": cannot open the file");
  }
  try {
    ck.archive.load_from(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path +
                             ": not a moca checkpoint (not a readable LibTorch archive: " +
                             error_text(e).substr(0, 200) + ")");
  }
  torch::Tensor version, meta;
  if (!ck.archive.try_read("moca_checkpoint", version) || version.numel() != 1) {
    throw std::runtime_error("checkpoint " + path +
                             ": a LibTorch archive but not a moca checkpoint (no format tag)");
  }
  const int64_t v = version.to(torch::kCPU).item<int64_t>();
  if (v != kCheckpointFormat) {
    throw std::runtime_error("checkpoint " + path + ": format version " + std::to_string(v) +
                             " is not supported (this build reads version " +
                             std::to_string(kCheckpointFormat) + ")");
  }
  if (!ck.archive.try_read("meta", meta)) {
    throw std::runtime_error("checkpoint " + path + ": metadata missing");
  }
  try {
    ck.info.meta = nlohmann::json::parse(tensor_string(meta));
    ck.info.path = path;
    ck.info.kind = ck.info.meta.at("kind").get<std::string>();
    ck.info.model = moca_options_from_json(ck.info.meta.at("model"));
    ck.info.channel_names = ck.info.meta.at("channel_names").get<std::vector<std::string>>();
    if (ck.info.meta.contains("class_names")) {
      ck.info.class_names = ck.info.meta.at("class_names").get<std::vector<std::string>>();
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + path + ": malformed metadata (" + e.what() + ")");
  }
  if (ck.info.kind != "mae" && ck.info.kind != "classifier") {
    throw std::runtime_error("checkpoint " + path + ": unknown kind '" + ck.info.kind + "'");
  }
  if (static_cast<int>(ck.info.channel_names.size()) != ck.info.model.channels) {
    throw std::runtime_error(
        "checkpoint " + path + ": " + std::to_string(ck.info.channel_names.size()) +
        " channel names for a model of " + std::to_string(ck.info.model.channels) + " channels");
  }
  return ck;
}

void save_checkpoint(const std::string& path, const torch::nn::Module& module,
                     const torch::optim::Optimizer* optimizer, const nlohmann::json& meta) {
  torch::serialize::OutputArchive archive;
  archive.write("moca_checkpoint", torch::tensor({static_cast<int64_t>(kCheckpointFormat)}));
  archive.write("meta", string_tensor(meta.dump()));
  torch::serialize::OutputArchive model_archive;
  module.save(model_archive);
  archive.write("model", model_archive);
  if (optimizer != nullptr) {
    torch::serialize::OutputArchive opt_archive;
    optimizer->save(opt_archive);
    archive.write("optimizer", opt_archive);
  }
  // The output module's stream never fails towards LibTorch (write errors are sticky and
  // reported after save_to returns), so torch's archive writer cannot throw from its destructor
  // (which would end in std::terminate); anything save_to itself throws (c10::Error) becomes a
  // std::runtime_error naming the file, the temporary file is removed and the previous
  // checkpoint stays intact.
  write_output_file(path, [&](std::ostream& os) { archive.save_to(os); });
}

MocaEncoder load_encoder(OpenCheckpoint& checkpoint, const torch::Device& device) {
  MocaEncoder encoder(checkpoint.info.model);
  load_module(checkpoint, *encoder, {"encoder"});
  encoder->to(device);
  encoder->eval();
  return encoder;
}

void load_module(OpenCheckpoint& ck, torch::nn::Module& module,
                 const std::vector<std::string>& path) {
  torch::serialize::InputArchive current;
  if (!ck.archive.try_read("model", current)) {
    throw std::runtime_error("checkpoint " + ck.info.path + ": no model parameters");
  }
  std::string prefix;
  for (const auto& name : path) {
    torch::serialize::InputArchive sub;
    if (!current.try_read(name, sub)) {
      throw std::runtime_error("checkpoint " + ck.info.path + ": module '" + prefix + name +
                               "' is missing");
    }
    current = std::move(sub);
    prefix += name + ".";
  }
  load_recursive(current, module, prefix, ck.info.path);
}

void load_optimizer(OpenCheckpoint& ck, torch::optim::Optimizer& optimizer) {
  torch::serialize::InputArchive sub;
  if (!ck.archive.try_read("optimizer", sub)) {
    throw std::runtime_error("checkpoint " + ck.info.path + ": no optimizer state to resume from");
  }
  try {
    optimizer.load(sub);
  } catch (const std::exception& e) {
    throw std::runtime_error("checkpoint " + ck.info.path + ": optimizer state unreadable (" +
                             error_text(e) + ")");
  }
}

torch::Tensor pos_rows_for_data(const CheckpointInfo& info,
                                const std::vector<std::string>& channel_names, int channels,
                                const torch::Device& device) {
  if (channel_names.empty()) {
    if (channels != info.model.channels) {
      throw_invalid("", "the data has " + std::to_string(channels) +
                            " unnamed channels but the model has " +
                            std::to_string(info.model.channels) +
                            "; name the channels to map them onto the model's");
    }
    return {};
  }
  const auto rows = match_channels(info.channel_names, channel_names);
  if (is_identity_channel_map(rows, info.model.channels)) return {};
  return pos_rows_for_channels(info.model, rows).to(device);
}

}  // namespace detail
}  // namespace moca::model
