// vjpcheck-native: run gather_mm / gather_qmm scenarios through MLX's C++ API.
//
//   vjpcheck-native INPUT.json [START]
//       INPUT holds {"scenarios": [...], "tolerances": {"reference": ..., "fd": ...}} as
//       written by harness/native/suite.py. Streams one JSON object per line:
//       {"start": i} before scenario i, then {"record": ...} or {"skip": ...}, so a
//       parent can turn a crash into one `crashed` record and resume at i + 1.
//
//   vjpcheck-native --serve TOLERANCES.json
//       Server for the fuzzer: {"ready": true, "ops": [...]} first, then for each line
//       {"scenario": {...}} read on stdin, {"stage": name, "checks": [...]} before each MLX
//       stage and one result line ({"record", "vjp_error"}, {"invalid"} or {"skip"}; see
//       serve_scenario). A line that is not a scenario gets {"harness_error": text}.
//
//   vjpcheck-native --bench-moe TOKENS HIDDEN FFN EXPERTS REPEATS
//       Times a MoE-shaped right-sorted gather_mm forward + backward (bench/moe.py).
//
//   vjpcheck-native --bench WORKLOAD REPEATS
//       Times one named workload's forward + gradient and lists its graph's primitives
//       (bench/speed.py); --bench-list prints the names, one a line.
//
//   vjpcheck-native --fast-path
//       {"fast_path": {"gather_mm": bool, "gather_qmm": bool}}: whether a right-sorted,
//       non-broadcast VJP still goes through the segmented matmul (build_and_test.py).
//
// In every mode the protocol goes to a private copy of stdout, and stdout itself is
// pointed at stderr: BLAS error handlers print there (OpenBLAS's xerbla), and their
// text must never interleave with the JSON lines.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "bench.hpp"
#include "execute.hpp"
#include "mlx_ops.hpp"
#include "workloads.hpp"

using namespace vjpcheck;

static FILE* proto = stdout;

static void emit(const json& obj) {
  std::string line = obj.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), proto);
  std::fflush(proto);
}

static void private_channel() {
  std::fflush(stdout);
  int fd = dup(1);
  FILE* f = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (f == nullptr || dup2(2, 1) < 0) return;  // keep plain stdout: still correct without BLAS noise
  proto = f;
}

static Tolerances read_tolerances(const json& input) {
  return {input.at("tolerances").at("reference"), input.at("tolerances").at("fd")};
}

static json read_file(const char* path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(std::string("cannot read ") + path);
  return json::parse(in);
}

static int batch(int argc, char** argv) {
  json input;
  Tolerances tol;
  try {
    input = read_file(argv[1]);
    tol = read_tolerances(input);
  } catch (const std::exception& e) {
    std::cerr << "vjpcheck-native: " << e.what() << "\n";
    return 2;
  }
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

static int serve(const char* tolerances_path) {
  Tolerances tol;
  try {
    tol = read_tolerances(read_file(tolerances_path));
  } catch (const std::exception& e) {
    std::cerr << "vjpcheck-native: " << e.what() << "\n";
    return 2;
  }
  emit({{"ready", true}, {"ops", supported_ops()}});
  auto stage = [](const std::string& name, const json& checks) {
    emit({{"stage", name}, {"checks", checks}});
  };
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    json msg;
    try {
      msg = json::parse(line);
      const json& s = msg.at("scenario");
      emit(serve_scenario(s, tol, stage));
    } catch (const std::exception& e) {  // a malformed request is the parent's bug, not MLX's
      emit({{"harness_error", std::string("bad request: ") + e.what()}});
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  private_channel();
  mx::set_default_device(mx::Device::cpu);
  if (mode == "--serve" && argc == 3) return serve(argv[2]);
  if (mode == "--bench-moe" && argc == 7) return bench_moe(argv + 2, [](const json& j) { emit(j); });
  if (mode == "--bench" && argc == 4) return bench_workload(argv + 2, [](const json& j) { emit(j); });
  if (mode == "--bench-list" && argc == 2) {
    for (auto& n : workload_names()) emit(n);
    return 0;
  }
  if (mode == "--fast-path" && argc == 2) return fast_path_probe([](const json& j) { emit(j); });
  if (argc < 2 || argc > 3 || mode.rfind("--", 0) == 0) {
    std::cerr << "usage: vjpcheck-native INPUT.json [START]\n"
                 "       vjpcheck-native --serve TOLERANCES.json\n"
                 "       vjpcheck-native --bench-moe TOKENS HIDDEN FFN EXPERTS REPEATS\n"
                 "       vjpcheck-native --bench WORKLOAD REPEATS | --bench-list\n"
                 "       vjpcheck-native --fast-path\n";
    return 2;
  }
  return batch(argc, argv);
}
