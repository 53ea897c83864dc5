// Elementwise agreement checks, the same rule and record fields as harness/checks.py:
// pass iff shapes match exactly, every observed value is finite, and
// |observed - expected| <= atol + rtol * |expected| elementwise.
#pragma once

#include "host.hpp"

namespace vjpcheck {

struct Tolerance {
  double atol, rtol;
};

json compare(const std::string& name, const Host& observed, const Host& expected, Tolerance tol,
             const std::string& kind = "reference");

}  // namespace vjpcheck
