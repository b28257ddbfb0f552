"""A pytest plugin standing in for the conftest at the top of numba-cuda's
source tree, which its wheel does not install: numba-cuda's test classes use a
class-scoped fixture `initialize_from_pytest_config` and an option for dumping
failed FileCheck reproducers. Load it with `-p numba_cuda_plugin` and this
folder on PYTHONPATH (pysuite.sh's callers do).

numba 0.68 still names numpy.row_stack, which numpy 2.5 removed: the first
compilation of every kernel then fails alike natively and through vcuda. The
plugin gives numpy the alias again (numpy.vstack, what row_stack was), in
the test processes only; processes the tests spawn do without it."""
import numpy
import pytest

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack


def pytest_addoption(parser):
    parser.addoption("--dump-failed-filechecks", action="store_true",
                     help="numba-cuda: write reproducers of failed FileCheck tests")


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    if request.cls is not None:
        request.cls._dump_failed_filechecks = request.config.getoption("dump_failed_filechecks")
