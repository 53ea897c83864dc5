"""The one exception that means "tell the user one line and exit 2"."""


class UsageError(Exception):
    """Bad usage or an unusable environment: one clear line, exit 2."""
