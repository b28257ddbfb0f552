class Missing:
    """Any use says that FileCheck is not installed."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("filecheck is not installed here (tests/external/stubs)")


def missing(*args, **kwargs):
    raise RuntimeError("filecheck is not installed here (tests/external/stubs)")
