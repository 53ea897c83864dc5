#include "host.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace vjpcheck {

Host Host::zeros(Dims s) {
  auto n = numel(s);
  return Host(std::move(s), std::vector<double>(n, 0.0));
}

int64_t numel(const Dims& d) {
  int64_t n = 1;
  for (auto x : d) n *= x;
  return n;
}

Dims row_strides(const Dims& d) {
  Dims s(d.size(), 1);
  for (int i = int(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// Materialise a strided window (offset, strides, shape) of contiguous x.
static Host gather_strided(const Host& x, int64_t offset, const Dims& strides, const Dims& shape) {
  Host out = Host::zeros(shape);
  Dims idx(shape.size(), 0);
  for (int64_t flat = 0; flat < int64_t(out.size()); ++flat) {
    int64_t src = offset;
    for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * strides[k];
    out.v[flat] = x.v.at(src);
    for (int k = int(idx.size()) - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

static int64_t opt_int(const json& spec, size_t i, bool& given) {
  given = i < spec.size() && !spec[i].is_null();
  return given ? spec[i].get<int64_t>() : 0;
}

SliceSpan slice_span(const json& spec, int64_t n) {
  bool has_start, has_stop, has_step;
  // A one-element spec is slice(stop), as in Python.
  json s = spec.size() == 1 ? json::array({nullptr, spec[0]}) : spec;
  int64_t start = opt_int(s, 0, has_start), stop = opt_int(s, 1, has_stop);
  int64_t step = opt_int(s, 2, has_step);
  if (!has_step) step = 1;
  if (step == 0) throw std::invalid_argument("slice step cannot be zero");
  auto clamp = [&](int64_t v, bool given, int64_t dflt) {
    if (!given) return dflt;
    if (v < 0) v += n;
    if (step > 0) return std::clamp<int64_t>(v, 0, n);
    return std::clamp<int64_t>(v, -1, n - 1);
  };
  start = clamp(start, has_start, step > 0 ? 0 : n - 1);
  stop = clamp(stop, has_stop, step > 0 ? n : -1);
  int64_t count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                           : std::max<int64_t>(0, (start - stop - step - 1) / (-step));
  return {start, stop, step, count};
}

static Host do_slice(const Host& x, const json& index) {
  auto rs = row_strides(x.shape);
  Dims strides = rs, shape = x.shape;
  int64_t offset = 0;
  if (index.size() > x.shape.size()) throw std::invalid_argument("too many slice axes");
  for (size_t k = 0; k < index.size(); ++k) {
    auto sp = slice_span(index[k], x.shape[k]);
    offset += sp.start * rs[k];
    strides[k] = rs[k] * sp.step;
    shape[k] = sp.count;
  }
  return gather_strided(x, offset, strides, shape);
}

static Host do_transpose(const Host& x, const std::vector<int64_t>& axes) {
  if (axes.size() != x.shape.size()) throw std::invalid_argument("transpose axes do not match rank");
  auto rs = row_strides(x.shape);
  Dims strides, shape;
  for (auto a : axes) {
    strides.push_back(rs.at(a));
    shape.push_back(x.shape.at(a));
  }
  return gather_strided(x, 0, strides, shape);
}

static Host do_reshape(const Host& x, Dims shape) {
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) infer = int64_t(k); else known *= shape[k];
  }
  if (infer >= 0 && known) shape[infer] = int64_t(x.size()) / known;
  if (numel(shape) != int64_t(x.size()))
    throw std::invalid_argument("cannot reshape " + dims_text(x.shape) + " to " + dims_text(shape));
  return Host(shape, x.v);
}

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw std::invalid_argument("shapes " + dims_text(a) + " and " + dims_text(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

Host broadcast_to(const Host& x, const Dims& shape) {
  if (broadcast_shapes(x.shape, shape) != shape)
    throw std::invalid_argument("cannot broadcast " + dims_text(x.shape) + " to " + dims_text(shape));
  auto rs = row_strides(x.shape);
  size_t lead = shape.size() - x.shape.size();
  Dims strides(shape.size(), 0);
  for (size_t k = 0; k < x.shape.size(); ++k) strides[lead + k] = x.shape[k] == 1 ? 0 : rs[k];
  return gather_strided(x, 0, strides, shape);
}

static Host do_expand_dims(const Host& x, int64_t axis) {
  int64_t rank = int64_t(x.shape.size()) + 1;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw std::invalid_argument("expand_dims axis out of range");
  Dims shape = x.shape;
  shape.insert(shape.begin() + axis, 1);
  return Host(shape, x.v);
}

Host apply_view(const Host& x, const json& view) {
  auto op = view.at("op").get<std::string>();
  if (op == "slice") return do_slice(x, view.at("index"));
  if (op == "transpose") return do_transpose(x, view.at("axes").get<std::vector<int64_t>>());
  if (op == "reshape") return do_reshape(x, view.at("shape").get<Dims>());
  if (op == "broadcast_to") return broadcast_to(x, view.at("shape").get<Dims>());
  if (op == "expand_dims") return do_expand_dims(x, view.at("axis").get<int64_t>());
  throw std::invalid_argument("unknown view op '" + op + "'");
}

// A number, or a non-finite one written as {"nonfinite": "nan" | "inf" | "-inf"}
// (harness/core/jsonio.py: the files are strict JSON).
double number(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_object() && v.size() == 1 && v.contains("nonfinite")) {
    auto name = v["nonfinite"].get<std::string>();
    if (name == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (name == "inf") return std::numeric_limits<double>::infinity();
    if (name == "-inf") return -std::numeric_limits<double>::infinity();
  }
  throw std::invalid_argument("not a number: " + v.dump().substr(0, 80));
}

json number_json(double x) {
  if (std::isnan(x)) return {{"nonfinite", "nan"}};
  if (std::isinf(x)) return {{"nonfinite", x > 0 ? "inf" : "-inf"}};
  return x;
}

Host storage(const json& t) {
  std::vector<double> values;
  for (auto& v : t.at("values")) values.push_back(number(v));
  Host h(t.at("shape").get<Dims>(), std::move(values));
  if (int64_t(h.size()) != numel(h.shape))
    throw std::invalid_argument(std::to_string(h.size()) + " values do not fill shape " + dims_text(h.shape));
  return h;
}

Host logical(const json& t) {
  Host h = storage(t);
  if (t.contains("views"))
    for (auto& view : t["views"]) h = apply_view(h, view);
  return h;
}

static json nested_from(const Host& x, size_t axis, int64_t& pos) {
  json out = json::array();
  if (axis == x.shape.size()) return number_json(x.v[pos++]);
  for (int64_t i = 0; i < x.shape[axis]; ++i) {
    if (axis + 1 == x.shape.size()) out.push_back(number_json(x.v[pos++]));
    else out.push_back(nested_from(x, axis + 1, pos));
  }
  return out;
}

json nested(const Host& x) {
  int64_t pos = 0;
  return nested_from(x, 0, pos);
}

std::string dims_text(const Dims& d) {
  std::string s = "(";
  for (size_t k = 0; k < d.size(); ++k) s += (k ? ", " : "") + std::to_string(d[k]);
  return s + (d.size() == 1 ? ",)" : ")");
}

}  // namespace vjpcheck
