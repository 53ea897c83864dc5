"""The command line: one module per subcommand (listed in cli/main.py), plus the
entry points of build_and_test.py (cli/build_and_test.py) and
validate_artifacts.py (cli/validate.py, numpy only: this package's __init__
imports nothing).

Each subcommand module exposes add_parser(subparsers, name) and main(args).
build_and_test.py and validate_artifacts.py are thin entry points onto
cli/build_and_test.py and cli/validate.py.

Exit codes everywhere: 0 all good, 1 a check failed, 2 usage or environment error.
"""
