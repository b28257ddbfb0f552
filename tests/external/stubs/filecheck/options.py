from ._missing import Missing as Options  # noqa: F401
from ._missing import missing as parse_argv_options  # noqa: F401
