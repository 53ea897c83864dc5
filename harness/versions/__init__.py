"""Which MLX releases carry each defect: isolated environments per release, the
probes run in each, the first affected release."""
