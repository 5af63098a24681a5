#include "moca/model/runtime.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace moca::model {

void RuntimeOptions::validate() const {
  if (device != "auto" && device != "cpu" && device != "cuda") {
    throw std::invalid_argument("RuntimeOptions::validate(): device ('" + device +
                                "') must be one of auto, cpu, cuda");
  }
  if (precision != "fp32" && precision != "bf16") {
    throw std::invalid_argument("RuntimeOptions::validate(): precision ('" + precision +
                                "') must be fp32 or bf16");
  }
  if (batch_shards < 0 || batch_shards > 1024) {
    throw std::invalid_argument("RuntimeOptions::validate(): batch_shards (" +
                                std::to_string(batch_shards) + ") must be in [0, 1024] (0 = auto)");
  }
  if (threads < 0 || threads > 1024) {
    throw std::invalid_argument("RuntimeOptions::validate(): threads (" + std::to_string(threads) +
                                ") must be in [0, 1024] (0 = hardware cores)");
  }
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
  return device == "cuda" || (device == "auto" && cuda_available());
}

}  // namespace moca::model
