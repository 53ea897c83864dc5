// Host-side float64 arrays and the scenario's view replay, with no MLX.
//
// The references see only logical values: a Tensor's storage with its views
// (slice / transpose / reshape / broadcast_to / expand_dims) materialised row-major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vjpcheck {

using json = nlohmann::json;
using Dims = std::vector<int64_t>;

struct Host {
  Dims shape;
  std::vector<double> v;

  Host() = default;
  Host(Dims s, std::vector<double> values) : shape(std::move(s)), v(std::move(values)) {}
  static Host zeros(Dims s);
  size_t size() const { return v.size(); }
};

int64_t numel(const Dims& d);
Dims row_strides(const Dims& d);

// Python slice(start, stop, step).indices(length): [start, stop, step, count].
struct SliceSpan {
  int64_t start, stop, step, count;
};
SliceSpan slice_span(const json& spec, int64_t length);

Host apply_view(const Host& x, const json& view);
Host storage(const json& tensor);   // the flat values in their stored shape
Host logical(const json& tensor);   // storage with every view applied

// numpy-style broadcast of two shapes; throws when incompatible.
Dims broadcast_shapes(const Dims& a, const Dims& b);
Host broadcast_to(const Host& x, const Dims& shape);

json nested(const Host& x);         // nested JSON lists, like ndarray.tolist()
// Non-finite numbers are {"nonfinite": "nan" | "inf" | "-inf"} in every file (strict JSON).
double number(const json& v);
json number_json(double x);
std::string dims_text(const Dims& d);  // "(2, 1, 1)", like a Python tuple

}  // namespace vjpcheck
