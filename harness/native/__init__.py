"""The C++ suite (native/ at the top of the repository) and what it shares with the
gate: reading an MLX build and recording its commands (build), building and running
the C++ suite (suite), the suite as a server (server) and the fuzzer over native
servers (fuzz), and the run against the installed wheel (wheel). The gate itself is
harness/gate/."""
