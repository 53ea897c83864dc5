"""Test helpers shared across the stage folders (tests/ is on sys.path)."""
