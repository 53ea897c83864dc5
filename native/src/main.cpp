// vjpcheck-native: run the exported scenario catalog through MLX's C++ API.
//
// Usage: vjpcheck-native INPUT.json [START]
// INPUT holds {"scenarios": [...], "tolerances": {"reference": ..., "fd": ...}}
// as written by harness/native_suite.py. Streams one JSON object per line on
// stdout: {"start": i} before scenario i, then {"record": ...} or {"skip": ...},
// so a parent can turn a crash into one `crashed` record and resume at i + 1.
#include <fstream>
#include <iostream>

#include "execute.hpp"
#include "mlx_ops.hpp"

using namespace vjpcheck;

static void emit(const json& obj) {
  std::cout << obj.dump() << "\n" << std::flush;
}

static std::string skip_reason(const std::string& op) {
  std::string names;
  for (auto& n : supported_ops()) names += (names.empty() ? "" : ", ") + n;
  return "op '" + op + "' is not implemented by the native suite (it runs " + names + ")";
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: vjpcheck-native INPUT.json [START]\n";
    return 2;
  }
  json input;
  try {
    std::ifstream in(argv[1]);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[1]);
    input = json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "vjpcheck-native: " << e.what() << "\n";
    return 2;
  }
  Tolerances tol{input.at("tolerances").at("reference"), input.at("tolerances").at("fd")};
  mx::set_default_device(mx::Device::cpu);
  auto& scenarios = input.at("scenarios");
  size_t start = argc == 3 ? std::stoul(argv[2]) : 0;
  for (size_t i = start; i < scenarios.size(); ++i) {
    auto& s = scenarios[i];
    emit({{"start", i}});
    std::string op = s.at("op");
    if (!find_ref_op(op) || !find_mlx_op(op))
      emit({{"skip", {{"scenario", s.at("name")}, {"reason", skip_reason(op)}}}});
    else
      emit({{"record", run_scenario(s, "cpu", tol)}});
  }
  return 0;
}
