from ._missing import Missing as Matcher, Missing as Options  # noqa: F401
