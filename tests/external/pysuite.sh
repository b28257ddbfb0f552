#!/usr/bin/env bash
# pysuite.sh - run a Python test suite that somebody else wrote (numba-cuda's,
# cuda-python's, ...) on the GPU machine, natively and through vcuda, and list
# every test whose outcome differs.
#
#   pysuite.sh VCUDA_BUILD LOGDIR NAME [pytest arguments...]
#
# Both runs write a JUnit report (LOGDIR/NAME.{native,vcuda}.xml) and their
# output; the vcuda run goes through one vcuda-server (--executor cuda) with
# VCUDA_DEBUG set, so that every refused entry point is named in its output.
# compare.py then prints the tests that passed natively and not through vcuda
# (and the other way round). The exit status is 1 when any did. PYSUITE_TMO
# (seconds) bounds each of the two runs, so that a suite too long for a
# device call still gives both reports, of the same length of time:
# pytest-timeout's --session-timeout ends the session and the report is
# written; a run that does not end 90 s later is interrupted.
set -u
vb=$(cd "$1" && pwd) logs=$2 name=$3
shift 3
PY=${PY:-/opt/torch/.venv/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/external/lib.sh
. "$here/lib.sh"
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
tmo=0
if [ -n "${PYSUITE_TMO:-}" ]; then
	set -- --session-timeout="$PYSUITE_TMO" "$@"
	tmo=$((PYSUITE_TMO + 90))
fi

timeout -s INT -k 30 "$tmo" "$PY" -m pytest -q -p no:cacheprovider --junitxml="$logs/$name.native.xml" "$@" > "$logs/$name.native.log" 2>&1
echo "native: $(tail -1 "$logs/$name.native.log")"

sock=$logs/$name.sock
ext_server_start "$vb" "$sock" "$logs/$name.server.log"
LD_LIBRARY_PATH=$vb/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} VCUDA_SOCKET=$sock VCUDA_DEBUG=1 \
	timeout -s INT -k 30 "$tmo" "$PY" -m pytest -q -p no:cacheprovider --junitxml="$logs/$name.vcuda.xml" "$@" > "$logs/$name.vcuda.log" 2>&1
echo "vcuda:  $(tail -1 "$logs/$name.vcuda.log")"
ext_server_stop
"$PY" "$here/compare.py" "$logs/$name.native.xml" "$logs/$name.vcuda.xml"
