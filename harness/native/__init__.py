"""The gate and the C++ suite (native/ at the top of the repository): reading an MLX
build, applying a patch, the object cache, MLX's Python bindings and C++ tests
built once per checkout (bindings), the pristine and patched builds (variants),
MLX's own tests (mlxtests), the gate and its verdict (gate), the Python fuzzer
against both builds (pyfuzz), replaying gate evidence (replay), building and
running the C++ suite (suite, server, fuzz) and the run against the installed
wheel (wheel)."""
