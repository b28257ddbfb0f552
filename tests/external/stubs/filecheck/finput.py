from ._missing import Missing as FInput  # noqa: F401
