// Conversions between nlohmann::json values and Python objects, in memory: a result's JSON
// shape (the library's to_json) reaches Python as the dicts and lists json.loads would give,
// and a caller's provenance dict reaches the library without a JSON string in between.
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "core.hpp"

namespace py = pybind11;

namespace moca::python {

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: {
      const double v = j.get<double>();
      if (!std::isfinite(v)) return py::none();  // as JSON text writes NaN and Inf: null
      return py::float_(v);
    }
    case nlohmann::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return std::move(out);
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [key, v] : j.items()) out[py::str(key)] = to_python(v);
      return std::move(out);
    }
    default:
      throw std::runtime_error("to_python(): JSON value of unsupported type " +
                               std::string(j.type_name()));
  }
}

nlohmann::json from_python(const py::handle& o, const std::string& where) {
  if (o.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
  if (py::isinstance<py::int_>(o)) {
    if (o.cast<py::int_>() < py::int_(0)) return o.cast<std::int64_t>();
    return o.cast<std::uint64_t>();
  }
  if (py::isinstance<py::float_>(o)) return o.cast<double>();
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, v] : o.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) {
        throw py::type_error(where + ": keys must be strings, got " +
                             py::repr(key).cast<std::string>());
      }
      out[key.cast<std::string>()] = from_python(v, where);
    }
    return out;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : o) out.push_back(from_python(v, where));
    return out;
  }
  throw py::type_error(where + ": " + py::repr(o).cast<std::string>() +
                       " is not a str, number, bool, None, list or dict");
}

}  // namespace moca::python
