// error_text (detail/torch_error.hpp): only c10's exception type, not <torch/torch.h>, so this
// translation unit compiles in well under a second.
#include "moca/model/detail/torch_error.hpp"

#include <c10/util/Exception.h>

namespace moca::model {

std::string error_text(const std::exception& e) {
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) return ce->what_without_backtrace();
  return e.what();
}

}  // namespace moca::model
