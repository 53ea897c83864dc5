"""Stage 0, the data model and the rules (numpy only, never mlx): scenario and
tensor records, views, tolerances and comparison, verdicts, objectives, the op
record (OpInfo), quantization packing, drawing helpers for op strategies."""
