#!/usr/bin/env bash
# Runs the vcuda GPU test programs (built by tests/gpu/Makefile) natively,
# through vcuda, or both ways and compares the two.
#
#   run-suite.sh --bin DIR [--mode native|vcuda|both|standin] [--guest-lib DIR]
#                [--socket PATH] [--out DIR] [--timeout S] [--skip FILE]
#   run-suite.sh --list [--bin DIR]
#
# DIR holds static/NAME and shared/NAME for every program. For each program
# and variant the runner saves stdout (NAME.out), stderr (NAME.err) and the
# exit code (NAME.rc) under OUT/MODE/VARIANT/, and the wall time of each run in
# OUT/MODE/times.txt.
#   native: the programs as they are (the machine's own libcuda.so.1);
#           a program passes if it exits 0 and its last line is "PASS NAME".
#   vcuda:  the same with LD_LIBRARY_PATH=GUEST_LIB_DIR prepended (the guest
#           libcuda.so.1 lives there) and VCUDA_SOCKET=PATH when --socket is given.
#   both:   native, then vcuda; a program passes if it passes natively and its
#           vcuda run has the same exit code and byte-for-byte the same stdout.
#   standin: as vcuda, against a vcuda-server with the CI stand-in for a GPU
#           (CI, no GPU): kernels are not run there, so a program passes if it
#           gets through every CUDA call to its verdict: "PASS NAME", or "FAIL
#           NAME: N check(s) failed" (result checks) is reported as RAN; a
#           failed CUDA call, a crash or a timeout fails it.
# --skip FILE: "NAME reason" per line: NAME is not run, and reported as SKIP
# with the reason (the stand-in's known gaps, tests/gpu/standin-gaps.txt).
# Prints "PASS VARIANT/NAME" or "FAIL VARIANT/NAME: reason" per program and
# variant, then "N passed, N failed" alone on the last line; exits 1 if any
# failed, 2 on a usage error.
set -u

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin="" mode=both guest_lib="" socket="" out="" tmo=60 list=0 skip=""
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) bin=${2:?}; shift 2 ;;
    --mode) mode=${2:?}; shift 2 ;;
    --guest-lib) guest_lib=${2:?}; shift 2 ;;
    --socket) socket=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --timeout) tmo=${2:?}; shift 2 ;;
    --skip) skip=${2:?}; shift 2 ;;
    --list) list=1; shift ;;
    -h|--help) usage ;;
    *) echo "run-suite.sh: unknown argument: $1" >&2; usage ;;
    esac
done

# Program names: from the binaries when --bin is given, else from the sources.
program_names() {
    if [ -n "$bin" ]; then
        for v in static shared; do
            [ -d "$bin/$v" ] || continue
            for f in "$bin/$v"/*; do
                [ -f "$f" ] && [ -x "$f" ] && basename "$f"
            done
        done | sort -u
    else
        for f in "$here"/progs/*.cu; do basename "$f" .cu; done | sort -u
    fi
}

if [ "$list" = 1 ]; then
    program_names
    exit 0
fi

[ -n "$bin" ] || { echo "run-suite.sh: --bin DIR is required" >&2; usage; }
[ -d "$bin/static" ] || [ -d "$bin/shared" ] ||
    { echo "run-suite.sh: $bin has neither static/ nor shared/" >&2; exit 2; }
case "$mode" in native|vcuda|both|standin) ;; *) echo "run-suite.sh: bad --mode $mode" >&2; usage ;; esac
case "$tmo" in ''|*[!0-9]*) echo "run-suite.sh: bad --timeout $tmo" >&2; usage ;; esac
if [ "$mode" != native ]; then
    [ -n "$guest_lib" ] || { echo "run-suite.sh: --mode $mode needs --guest-lib DIR" >&2; exit 2; }
    [ -e "$guest_lib/libcuda.so.1" ] ||
        { echo "run-suite.sh: no libcuda.so.1 in $guest_lib" >&2; exit 2; }
    guest_lib=$(cd "$guest_lib" && pwd)
fi
command -v timeout >/dev/null || { echo "run-suite.sh: needs timeout(1)" >&2; exit 2; }
bin=$(cd "$bin" && pwd)
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/vcuda-gpu-suite.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)

declare -A skipped=()
if [ -n "$skip" ]; then
    [ -r "$skip" ] || { echo "run-suite.sh: cannot read --skip $skip" >&2; exit 2; }
    while read -r n why; do
        case "$n" in '' | '#'*) continue ;; esac
        skipped[$n]=$why
    done < "$skip"
fi

mapfile -t names < <(program_names)
[ ${#names[@]} -gt 0 ] || { echo "run-suite.sh: no programs in $bin" >&2; exit 2; }

# run_all MODE: runs every program and variant, results under $out/MODE.
run_all() {
    local m=$1 v name dir exe rc t0 t1
    local -a envs
    if [ "$m" = vcuda ] || [ "$m" = standin ]; then
        envs=(LD_LIBRARY_PATH="$guest_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        [ -n "$socket" ] && envs+=(VCUDA_SOCKET="$socket")
    else
        envs=(-u VCUDA_SOCKET)
    fi
    mkdir -p "$out/$m"
    : > "$out/$m/times.txt"
    for v in static shared; do
        dir=$out/$m/$v
        mkdir -p "$dir"
        for name in "${names[@]}"; do
            exe=$bin/$v/$name
            rm -f "$dir/$name.out" "$dir/$name.err" "$dir/$name.rc"
            [ -n "${skipped[$name]+x}" ] && continue
            if [ ! -x "$exe" ]; then
                echo 127 > "$dir/$name.rc"
                echo "missing binary $exe" > "$dir/$name.err"
                : > "$dir/$name.out"
                continue
            fi
            t0=$(date +%s%N)
            (cd "$dir" && exec env "${envs[@]}" timeout -k 5 "$tmo" "$exe" \
                < /dev/null > "$dir/$name.out" 2> "$dir/$name.err")
            rc=$?
            t1=$(date +%s%N)
            echo "$rc" > "$dir/$name.rc"
            printf '%s/%s rc=%d %d ms\n' "$v" "$name" "$rc" $(( (t1 - t0) / 1000000 )) >> "$out/$m/times.txt"
        done
    done
}

# verdict_one MODE VARIANT NAME: empty if the run passed on its own, else a reason.
verdict_one() {
    local dir=$out/$1/$2 name=$3 rc last
    rc=$(cat "$dir/$name.rc" 2>/dev/null || echo 127)
    last=$(tail -n 1 "$dir/$name.out" 2>/dev/null)
    case "$rc" in
    0) [ "$last" = "PASS $name" ] ||
           echo "$1 exit code 0 but the last line is not 'PASS $name': ${last:-<no output>}"
       return ;;
    124|137) echo "$1 run timed out after ${tmo} s"; return ;;
    esac
    [ -n "$last" ] || last="stderr: $(head -n 1 "$dir/$name.err" 2>/dev/null)"
    echo "$1 exit code $rc ($last)"
}

# compare V NAME: empty if native and vcuda agree, else a reason.
compare() {
    local v=$1 name=$2 a b rca rcb i n la lb
    a=$out/native/$v/$name.out
    b=$out/vcuda/$v/$name.out
    rca=$(cat "$out/native/$v/$name.rc")
    rcb=$(cat "$out/vcuda/$v/$name.rc")
    if [ "$rca" != "$rcb" ]; then
        echo "exit code $rcb through vcuda, $rca natively$( [ "$rcb" = 124 ] && echo ' (timed out)')"
        return
    fi
    cmp -s "$a" "$b" && return
    local -a A B
    mapfile -t A < "$a"
    mapfile -t B < "$b"
    n=${#A[@]}
    [ ${#B[@]} -gt "$n" ] && n=${#B[@]}
    for ((i = 0; i < n; i++)); do
        la=${A[i]-<no line>}
        lb=${B[i]-<no line>}
        [ $i -ge ${#A[@]} ] && la="<end of output>"
        [ $i -ge ${#B[@]} ] && lb="<end of output>"
        if [ "$la" != "$lb" ]; then
            echo "output differs at line $((i + 1)): native '$la', vcuda '$lb'"
            return
        fi
    done
    echo "output differs (line endings or trailing bytes)"
}

# verdict_standin VARIANT NAME: empty if the program reached its verdict,
# "ran: ..." if only result checks failed there, else why it failed.
verdict_standin() {
    local dir=$out/standin/$1 name=$2 rc last
    rc=$(cat "$dir/$name.rc" 2>/dev/null || echo 127)
    last=$(tail -n 1 "$dir/$name.out" 2>/dev/null)
    case "$rc:$last" in
    "0:PASS $name") return ;;
    "1:FAIL $name: "*" check(s) failed, first: "*) echo "ran: ${last#FAIL $name: }"; return ;;
    124:* | 137:*) echo "timed out after ${tmo} s"; return ;;
    esac
    [ -n "$last" ] || last="stderr: $(head -n 1 "$dir/$name.err" 2>/dev/null)"
    echo "exit code $rc ($last)"
}

passed=0 failed=0 ran=0 nskip=0
report() { # VARIANT NAME REASON
    if [ -z "$3" ]; then
        echo "PASS $1/$2"
        passed=$((passed + 1))
    elif [ "${3#ran: }" != "$3" ]; then
        echo "RAN  $1/$2: every CUDA call made; kernel results not checked (${3#ran: })"
        ran=$((ran + 1))
    else
        echo "FAIL $1/$2: $3"
        failed=$((failed + 1))
    fi
}

case "$mode" in
native|vcuda|standin) run_all "$mode" ;;
both) run_all native; run_all vcuda ;;
esac

for v in static shared; do
    for name in "${names[@]}"; do
        if [ -n "${skipped[$name]+x}" ]; then
            echo "SKIP $v/$name: ${skipped[$name]}"
            nskip=$((nskip + 1))
            continue
        fi
        case "$mode" in
        native|vcuda) report "$v" "$name" "$(verdict_one "$mode" "$v" "$name")" ;;
        standin) report "$v" "$name" "$(verdict_standin "$v" "$name")" ;;
        both)
            r=$(verdict_one native "$v" "$name")
            [ -z "$r" ] && r=$(compare "$v" "$name")
            [ -z "$r" ] && r=$(verdict_one vcuda "$v" "$name")
            report "$v" "$name" "$r"
            ;;
        esac
    done
done
if [ "$mode" = standin ]; then
    echo "$passed passed, $ran ran (kernel results not checked on the CI stand-in), $nskip skipped, $failed failed"
elif [ "$nskip" -gt 0 ]; then
    echo "$passed passed, $nskip skipped, $failed failed"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
