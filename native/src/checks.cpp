#include "checks.hpp"

#include <cmath>

namespace vjpcheck {

static json unravel(int64_t flat, const Dims& shape) {
  json idx = json::array();
  auto rs = row_strides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    idx.push_back(flat / rs[k]);
    flat %= rs[k];
  }
  return idx;
}

json compare(const std::string& name, const Host& obs, const Host& exp, Tolerance tol,
             const std::string& kind) {
  json rec = {{"name", name}, {"kind", kind}, {"atol", tol.atol}, {"rtol", tol.rtol},
              {"observed_shape", obs.shape}, {"expected_shape", exp.shape},
              {"observed", nested(obs)}, {"expected", nested(exp)},
              {"worst_index", nullptr}, {"worst_error", nullptr}, {"worst_tolerance", nullptr}};
  if (obs.shape != exp.shape) {
    rec["passed"] = false;
    rec["reason"] = "shape " + dims_text(obs.shape) + " != " + dims_text(exp.shape);
    return rec;
  }
  for (size_t k = 0; k < obs.size(); ++k) {
    if (!std::isfinite(obs.v[k])) {
      rec["passed"] = false;
      rec["worst_index"] = unravel(int64_t(k), obs.shape);
      rec["reason"] = "non-finite value in observed";
      return rec;
    }
  }
  if (obs.size() == 0) {
    rec["passed"] = true;
    rec["reason"] = "empty";
    return rec;
  }
  size_t worst = 0, outside = 0;
  double worst_ratio = -1;
  for (size_t k = 0; k < obs.size(); ++k) {
    double err = std::fabs(obs.v[k] - exp.v[k]), t = tol.atol + tol.rtol * std::fabs(exp.v[k]);
    if (err > t) ++outside;
    if (err / t > worst_ratio) {  // first maximum, as numpy's argmax
      worst_ratio = err / t;
      worst = k;
    }
  }
  rec["passed"] = outside == 0;
  rec["worst_index"] = unravel(int64_t(worst), obs.shape);
  rec["worst_error"] = std::fabs(obs.v[worst] - exp.v[worst]);
  rec["worst_tolerance"] = tol.atol + tol.rtol * std::fabs(exp.v[worst]);
  rec["reason"] = outside == 0 ? "ok"
                               : std::to_string(outside) + " of " + std::to_string(obs.size()) +
                                     " elements outside tolerance";
  return rec;
}

}  // namespace vjpcheck
