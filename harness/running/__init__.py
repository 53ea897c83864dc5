"""Running scenarios in MLX: the executor (execute: the one place that turns a
scenario into MLX calls and hands what it saw to every oracle of the context,
harness/oracles/), crash-isolated workers, device choice, the environment
record, and replay of recorded evidence."""
