"""Running scenarios in MLX: the executor (the one place that turns a scenario
into MLX calls), crash-isolated workers, device choice, the environment record."""
