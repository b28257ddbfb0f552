#!/usr/bin/env bash
# session.sh - every suite of this folder in one call on the GPU machine, for a
# device session whose minutes are few. Takes what was built and fetched here:
#
#   session.sh VCUDA_BUILD OUT [CLS_TAR] [GGML_TAR] [CPT_DIR]
#
# CLS_TAR: libsamples.sh's OUT as .tar.xz; GGML_TAR: ggml.sh's OUT as .tar.xz;
# CPT_DIR: cuda-python's cuda_bindings/tests files (with a conftest). Each part
# is skipped when its input is missing; numba-cuda's tests are installed there.
# Prints one summary line per suite; the logs go to OUT.
set -u
vb=$1 out=$2 cls=${3:-} ggml=${4:-} cpt=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
vb=$(cd "$vb" && pwd)
rc=0
if [ -n "$cls" ] && [ -f "$cls" ]; then
	mkdir -p /tmp/vc-cls && tar xJf "$cls" -C /tmp/vc-cls
	d=$(find /tmp/vc-cls -mindepth 1 -maxdepth 1 -type d | head -1)
	LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout "${CLS_TMO:-300}" bash "$here/libsamples.sh" run "$d" "$vb" "$out/cls" \
		> "$out/cls.txt" 2>&1 || rc=1
	grep -E '^(FAIL|libsamples)' "$out/cls.txt"
fi
if [ -n "$cpt" ] && [ -d "$cpt" ]; then
	(cd "$cpt" && PYSUITE_TMO=${CPT_TMO:-60} bash "$here/pysuite.sh" "$vb" "$out/cpt" cpt \
		--continue-on-collection-errors --timeout 60 test_*.py) > "$out/cpt.txt" 2>&1 || rc=1
	grep -E '^(WORSE|differ)' "$out/cpt.txt"
fi
# numba-cuda's driver and kernel tests (about 25 and 125 s each way on an
# H200 with 16 workers); NUMBA_TMO bounds each run of each.
for pkg in cudadrv cudapy; do
	PYSUITE_TMO=${NUMBA_TMO:-150} PYTHONPATH=$here/stubs bash "$here/pysuite.sh" "$vb" "$out/numba" "$pkg" \
		-p numba_cuda_plugin -n 16 --timeout 100 --import-mode=importlib --pyargs "numba.cuda.tests.$pkg" \
		> "$out/numba-$pkg.txt" 2>&1 || rc=1
	grep -E '^(native|vcuda|WORSE|differ)' "$out/numba-$pkg.txt" | head -30
done
if [ -n "$ggml" ] && [ -f "$ggml" ]; then
	mkdir -p /tmp/vc-ggml && tar xJf "$ggml" -C /tmp/vc-ggml
	d=$(find /tmp/vc-ggml -mindepth 1 -maxdepth 1 -type d | head -1)
	bash "$here/ggml.sh" run "$d" "$vb" "$out/ggml" > "$out/ggml.txt" 2>&1 || rc=1
	tail -5 "$out/ggml.txt"
fi
exit $rc
