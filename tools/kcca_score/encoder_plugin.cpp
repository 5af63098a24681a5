// The encoder feature map of `kcca_score --features encoder` as a loadable module
// (libmoca_kcca_score_encoder.so): it links moca::model and LibTorch, so kcca_score itself does
// not, and its other runs skip loading LibTorch (~0.65 s, issue #14). kcca_score dlopen()s it
// from <bin>/../<libdir>/moca (encoder_loader.cpp). Exceptions do not cross the boundary at
// load time: the entry point returns a code and a message.
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "encoder_loader.hpp"
#include "moca/model/encoder_features.hpp"

extern "C" __attribute__((visibility("default"))) int moca_kcca_score_make_encoder(
    const char* checkpoint, std::shared_ptr<const moca::masking::FeatureMap>* out,
    std::string* error) {
  try {
    *out = moca::model::make_encoder_feature_map(checkpoint);
    return moca::tools::kEncoderPluginOk;
  } catch (const std::invalid_argument& e) {
    *error = e.what();
    return moca::tools::kEncoderPluginUsage;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error while loading the encoder";
  }
  return moca::tools::kEncoderPluginFailed;
}
