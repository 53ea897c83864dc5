"""The gate: a patch to MLX's translation units, pristine against patched, through
everything this project checks (build_and_test.py, `mlx-vjpcheck gate`).

Given a checkout and its existing static CMake build (`--mlx-build`): apply the
patch to copies of the touched files, compile each touched unit pristine and
patched with its exact flags (cached per unit and text), and link two builds
ahead of `libmlx.a`, each made of MLX's Python package (the bindings objects are
compiled once per checkout), MLX's C++ test binary and this project's C++ suite.
Then run, on both builds, side by side: every scenario of every op through the
ordinary scenario worker (catalog, regression corpus, --scenarios), the C++ suite
and whether the right-sorted fast path is still taken, and MLX's own Python and
C++ tests, one outcome per test. Everything lands in one run directory.

  inputs    every input checked before anything is written (prepare -> Gate)
  patch     a diff or a series applied to copies of the touched files
  headers   the units that include a touched header
  cache     the object cache (compiles and links per text and flags)
  bindings  MLX's Python bindings and C++ tests, compiled once per checkout
  variants  the pristine and patched links
  build     both builds from the above
  suites    what runs on one build (harness, native, MLX's tests, the patch's tests)
  mlxtests  MLX's own test suites: the child that runs them, parsing, comparison
  compare   the two builds compared, and the gate's lines over them
  run       one run end to end, into its run directory
  replay    recorded gate evidence rebuilt and run again
  pyfuzz    the Python fuzzer against both builds

The verdict's rules are judging/gate_verdict.py, shared with the validator.
"""
