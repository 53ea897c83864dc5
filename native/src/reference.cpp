#include "reference.hpp"

#include <stdexcept>

namespace vjpcheck::ref {

static Dims batch_of(const Dims& d) { return Dims(d.begin(), d.end() - 2); }

static Host arange(const Dims& batch) {
  Host h = Host::zeros(batch);
  for (size_t k = 0; k < h.size(); ++k) h.v[k] = double(k);
  return h;
}

Selection resolve(const Dims& a_batch, const Dims& b_batch, const std::optional<Host>& lhs,
                  const std::optional<Host>& rhs) {
  Host l = lhs ? *lhs : arange(a_batch), r = rhs ? *rhs : arange(b_batch);
  Dims batch = broadcast_shapes(l.shape, r.shape);
  l = broadcast_to(l, batch);
  r = broadcast_to(r, batch);
  Selection sel{{}, {}, batch};
  auto take = [](const Host& idx, int64_t bound, const char* name, std::vector<int64_t>& out) {
    for (double v : idx.v) {
      if (v < 0 || v >= double(bound))
        throw std::out_of_range(std::string(name) + " index out of range [0, " +
                                std::to_string(bound) + ")");
      out.push_back(int64_t(v));
    }
  };
  take(l, numel(a_batch), "lhs", sel.left);
  take(r, numel(b_batch), "rhs", sel.right);
  return sel;
}

Host gather_mm(const Host& a, const Host& b, const std::optional<Host>& lhs,
               const std::optional<Host>& rhs) {
  auto sel = resolve(batch_of(a.shape), batch_of(b.shape), lhs, rhs);
  int64_t M = a.shape.end()[-2], K = a.shape.end()[-1], N = b.shape.end()[-1];
  Dims shape = sel.batch;
  shape.push_back(M);
  shape.push_back(N);
  Host y = Host::zeros(shape);
  for (size_t q = 0; q < sel.left.size(); ++q) {
    const double* A = &a.v[sel.left[q] * M * K];
    const double* B = &b.v[sel.right[q] * K * N];
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += A[m * K + k] * B[k * N + n];
        y.v[(q * M + m) * N + n] = acc;
      }
  }
  return y;
}

Grads gather_mm_vjp(const Host& a, const Host& b, const Host& g, const std::optional<Host>& lhs,
                    const std::optional<Host>& rhs) {
  auto sel = resolve(batch_of(a.shape), batch_of(b.shape), lhs, rhs);
  int64_t M = a.shape.end()[-2], K = a.shape.end()[-1], N = b.shape.end()[-1];
  Host dA = Host::zeros(a.shape), dB = Host::zeros(b.shape);
  for (size_t q = 0; q < sel.left.size(); ++q) {
    int64_t i = sel.left[q], j = sel.right[q];
    const double* G = &g.v[q * M * N];
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k) {
        double acc = 0;
        for (int64_t n = 0; n < N; ++n) acc += G[m * N + n] * b.v[(j * K + k) * N + n];
        dA.v[(i * M + m) * K + k] += acc;
      }
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t m = 0; m < M; ++m) acc += a.v[(i * M + m) * K + k] * G[m * N + n];
        dB.v[(j * K + k) * N + n] += acc;
      }
  }
  return {{"a", dA}, {"b", dB}};
}

// Group coordinates of element (r, c): MLX quantizes along the stored last
// axis whatever the layout (K when stored (E, N, K), N when stored (E, K, N)).
static void group_of(int64_t r, int64_t c, int gs, int64_t& gr, int64_t& gc) {
  gr = r;
  gc = c / gs;
}

// Matrices in a stack of shape (..., R, C): the product of the leading axes
// (not size / (R * C), which divides by zero for an empty R or C).
static int64_t stack_size(const Dims& shape) {
  int64_t n = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) n *= shape[i];
  return n;
}

Host dequantize(const Host& codes, const Host& scales, const Host& biases, int gs) {
  int64_t R = codes.shape.end()[-2], C = codes.shape.end()[-1];
  int64_t SR = scales.shape.end()[-2], SC = scales.shape.end()[-1];
  int64_t E = stack_size(codes.shape);
  Host w = Host::zeros(codes.shape);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        int64_t gr, gc;
        group_of(r, c, gs, gr, gc);
        int64_t s = (e * SR + gr) * SC + gc, at = (e * R + r) * C + c;
        w.v[at] = codes.v[at] * scales.v[s] + biases.v[s];
      }
  return w;
}

Host swap_last(const Host& x) {
  int64_t R = x.shape.end()[-2], C = x.shape.end()[-1], E = stack_size(x.shape);
  Dims shape = x.shape;
  std::swap(shape.end()[-2], shape.end()[-1]);
  Host out = Host::zeros(shape);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) out.v[(e * C + c) * R + r] = x.v[(e * R + r) * C + c];
  return out;
}

static Host as_kn(const Host& w, bool transpose) { return transpose ? swap_last(w) : w; }

Host gather_qmm(const Host& x, const Host& codes, const Host& scales, const Host& biases,
                const std::optional<Host>& lhs, const std::optional<Host>& rhs, int gs,
                bool transpose) {
  return gather_mm(x, as_kn(dequantize(codes, scales, biases, gs), transpose), lhs, rhs);
}

Grads gather_qmm_vjp(const Host& x, const Host& codes, const Host& scales, const Host& biases,
                     const Host& g, const std::optional<Host>& lhs,
                     const std::optional<Host>& rhs, int gs, bool transpose) {
  Host w = as_kn(dequantize(codes, scales, biases, gs), transpose);
  auto grads = gather_mm_vjp(x, w, g, lhs, rhs);
  Host dW = as_kn(grads["b"], transpose);  // back to the stored layout
  Host ds = Host::zeros(scales.shape), db = Host::zeros(biases.shape);
  int64_t R = codes.shape.end()[-2], C = codes.shape.end()[-1], E = stack_size(codes.shape);
  int64_t SR = scales.shape.end()[-2], SC = scales.shape.end()[-1];
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        int64_t gr, gc;
        group_of(r, c, gs, gr, gc);
        int64_t s = (e * SR + gr) * SC + gc, at = (e * R + r) * C + c;
        ds.v[s] += codes.v[at] * dW.v[at];
        db.v[s] += dW.v[at];
      }
  return {{"x", grads["a"]}, {"scales", ds}, {"biases", db}};
}

static int64_t mat_size(const Host& y) { return y.shape.end()[-2] * y.shape.end()[-1]; }

double pair_loss(const Host& y) {
  int64_t n = mat_size(y);
  if (int64_t(y.size()) != 2 * n) throw std::invalid_argument("pair_loss needs exactly two gathered products");
  double acc = 0;
  for (int64_t k = 0; k < n; ++k) acc += (y.v[k] - y.v[n + k]) * (y.v[k] - y.v[n + k]);
  return 0.5 * acc;
}

Host pair_loss_cotangent(const Host& y) {
  int64_t n = mat_size(y);
  if (int64_t(y.size()) != 2 * n) throw std::invalid_argument("pair_loss needs exactly two gathered products");
  Host g = Host::zeros(y.shape);
  for (int64_t k = 0; k < n; ++k) {
    g.v[k] = y.v[k] - y.v[n + k];
    g.v[n + k] = -g.v[k];
  }
  return g;
}

}  // namespace vjpcheck::ref
