from ._missing import Missing as Parser, missing as pattern_for_opts  # noqa: F401
