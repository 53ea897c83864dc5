#include "checks.hpp"

#include <cmath>
#include <limits>

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

// Per element, as harness/core/checks.py: where the expected value is finite, the
// error is |obs - exp| (inf when obs is not finite) against atol + rtol * |exp|;
// where it is non-finite, the observed value must be the same non-finite value
// (error 0, else inf) and the tolerance is atol.
static void error_of(double o, double e, Tolerance tol, double& err, double& t) {
  if (std::isfinite(e)) {
    err = std::isfinite(o) ? std::fabs(o - e) : std::numeric_limits<double>::infinity();
    t = tol.atol + tol.rtol * std::fabs(e);
  } else {
    bool same = (std::isnan(o) && std::isnan(e)) || o == e;
    err = same ? 0.0 : std::numeric_limits<double>::infinity();
    t = tol.atol;
  }
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
  if (obs.size() == 0) {
    rec["passed"] = true;
    rec["reason"] = "empty";
    return rec;
  }
  size_t worst = 0, outside = 0, nonfinite = 0;
  double worst_ratio = -1, worst_err = 0, worst_tol = 0;
  for (size_t k = 0; k < obs.size(); ++k) {
    double err, t;
    error_of(obs.v[k], exp.v[k], tol, err, t);
    if (err > t) {
      ++outside;
      if (!std::isfinite(obs.v[k])) ++nonfinite;
    }
    double ratio = err == 0 ? 0.0 : err / t;
    if (ratio > worst_ratio) {  // first maximum, as numpy's argmax
      worst_ratio = ratio;
      worst = k;
      worst_err = err;
      worst_tol = t;
    }
  }
  rec["passed"] = outside == 0;
  rec["worst_index"] = unravel(int64_t(worst), obs.shape);
  rec["worst_error"] = number_json(worst_err);
  rec["worst_tolerance"] = number_json(worst_tol);
  rec["reason"] = outside == 0 ? "ok"
                               : std::to_string(outside) + " of " + std::to_string(obs.size()) +
                                     " elements outside tolerance" +
                                     (nonfinite ? " (" + std::to_string(nonfinite) + " non-finite)" : "");
  return rec;
}

}  // namespace vjpcheck
