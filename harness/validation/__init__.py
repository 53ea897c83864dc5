"""Checking evidence without MLX: every evidence kind recomputed or re-derived
from what it records (numpy only). validation/evidence.py lists the kinds."""
