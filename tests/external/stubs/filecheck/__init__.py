"""A stand-in for the `filecheck` package, which numba-cuda's test helpers
import but the GPU machine lacks (nothing can be installed there). It lets
the tests load; a test that really checks compiler output with FileCheck
fails the same way natively and through vcuda, so pysuite.sh's comparison
is unaffected."""
