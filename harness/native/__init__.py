"""The C++ suite (native/ at the top of the repository): reading an MLX build,
applying a patch, the object cache, building and running the suite, the
pristine-vs-patched gate, and the run against the installed wheel."""
