#include "encoder_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace moca::tools {

std::string encoder_plugin_path() {
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("cannot find this executable (/proc/self/exe)");
  std::string dir(self, static_cast<size_t>(len));
  dir.erase(dir.find_last_of('/') + 1);
  return std::filesystem::path(dir + MOCA_ENCODER_PLUGIN_RELDIR "/" MOCA_ENCODER_PLUGIN_FILE)
      .lexically_normal()
      .string();
}

std::shared_ptr<const masking::FeatureMap> load_encoder_feature_map(const std::string& checkpoint) {
  const std::string path = encoder_plugin_path();
  // Never closed: the feature map's code lives in the module.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    throw std::runtime_error("--features encoder needs the encoder module " + path +
                             " (built and installed with moca when LibTorch is found), which "
                             "could not be loaded: " +
                             (why ? why : "unknown dlopen error"));
  }
  using Entry = int (*)(const char*, std::shared_ptr<const masking::FeatureMap>*, std::string*);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "moca_kcca_score_make_encoder"));
  if (!entry) {
    throw std::runtime_error("encoder module " + path +
                             " has no entry point moca_kcca_score_make_encoder (a module of "
                             "another moca version?)");
  }
  std::shared_ptr<const masking::FeatureMap> map;
  std::string error;
  const int code = entry(checkpoint.c_str(), &map, &error);
  if (code == kEncoderPluginUsage) throw std::invalid_argument(error);
  if (code != kEncoderPluginOk || !map) throw std::runtime_error(error);
  return map;
}

}  // namespace moca::tools
