#!/usr/bin/env python3
"""Check an mlx-vjpcheck evidence directory or bundle: python validate_artifacts.py DIR|ZIP

Needs numpy only (no MLX). Exit 0 every check passed, 1 a check failed,
2 bad input. See harness/cli/validate.py.
"""
import os
import sys

# Runs from a bare checkout too: the harness package sits next to this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.cli.validate import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
