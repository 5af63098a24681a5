#include "moca/model/runtime.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace moca::model {

std::string to_string(Device v) {
  return enum_name(kDeviceNames, v);
}

std::string to_string(Precision v) {
  return enum_name(kPrecisionNames, v);
}

void RuntimeOptions::validate() const {
  check_ranges(*this);  // threads, batch_shards
}

int RuntimeOptions::effective_threads() const {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

int RuntimeOptions::effective_batch_shards(bool cuda, int batch) const {
  const int wanted = batch_shards > 0 ? batch_shards : (cuda ? 1 : effective_threads());
  return std::max(1, std::min(wanted, batch));
}

bool RuntimeOptions::uses_cuda() const {
  return device == Device::kCuda || (device == Device::kAuto && cuda_available());
}

}  // namespace moca::model
