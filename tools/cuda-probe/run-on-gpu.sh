#!/bin/bash
# Runs every cuda-probe program on the GPU machine through the interposer
# libcuda.so.1 and collects logs under $OUT. Usage (repo root on the GPU machine):
#   OUT=/tmp/out .probe/run-on-gpu.sh [torch|notorch]
# Environment: PROGS (C programs to run; empty for none), TORCH_SCRIPTS
# (default torch_step; torch_more adds cuDNN, SDPA, cuFFT, cuSOLVER, graphs).
# Pass A: interposer only (tail-jump mode, as transparent as it gets).
# Pass B: interposer with VC_PROBE_RETVALS=1 (call-through: return values and
#         the memory behind export-table slot arguments) plus the LD_PRELOAD
#         helper logging getenv and (VC_PROBE_DLSYM=1) dlsym of cu* names.
set -u
P=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/vcprobe-out}
mkdir -p "$OUT"
LIB=$P/lib
CUDA_LIB=/usr/local/cuda/lib64
TORCH=${1:-torch}
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
for f in /usr/local/nvidia/lib64/libcuda.so.1 /lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1; do
  [ -e "$f" ] && say "real driver candidate: $f -> $(readlink -f "$f")"
done
REAL=${VC_REAL_LIBCUDA:-}
if [ -z "$REAL" ]; then
  for f in /usr/local/nvidia/lib64/libcuda.so.1 /lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1; do
    [ -e "$f" ] && { REAL=$f; break; }
  done
fi
say "real driver used: $REAL"
say "LD_LIBRARY_PATH before: ${LD_LIBRARY_PATH:-}"
# the real driver's exports against the stub's (every name dlsym'd must exist in ours)
nm -D --defined-only "$REAL" 2>/dev/null | awk '{print $NF}' | sort -u > "$OUT/real-exports.txt"
awk '{print $NF}' "$P/gen/syms.txt" | sort -u > /tmp/stub-exports.txt
say "real driver exports: $(wc -l < "$OUT/real-exports.txt"); stub: $(wc -l < /tmp/stub-exports.txt)"
say "in real driver, not in stub: $(comm -23 "$OUT/real-exports.txt" /tmp/stub-exports.txt | tr '\n' ' ')"
say "in stub, not in real driver: $(comm -13 "$OUT/real-exports.txt" /tmp/stub-exports.txt | tr '\n' ' ')"

say "ldd cublas.shared: $(ldd "$P/bin/cublas.shared" | grep -E 'cuda|cublas' | tr -s ' \t' ' ' | tr '\n' ';')"
fails=0
ENVS=()
run_one() { # pass logfile name cmd... ; runs cmd under env "${ENVS[@]}"
  local pass=$1 log=$2 name=$3; shift 3
  echo "VCP - $$ - - MARK prog-begin $pass $name" >> "$log"
  local t0=$(date +%s%N)
  timeout ${TMO:-30} env "${ENVS[@]}" "$@" > "$OUT/tmp.out" 2>&1
  local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "VCP - $$ - - MARK prog-end $pass $name rc=$rc" >> "$log"
  sed "s/^/[$pass $name] /" "$OUT/tmp.out" >> "$OUT/progs-output.txt"
  if [ $rc -eq 0 ] && grep -q '^PASS' "$OUT/tmp.out"; then say "PASS $pass $name (${dt} ms)"; return 0
  else say "FAIL $pass $name rc=$rc (${dt} ms)"; tail -5 "$OUT/tmp.out" | tee -a "$summary"; fails=$((fails+1)); return 1; fi
}
# A program that fails through the wrapped tables is run again (log-U.txt) with the
# cudart-interface and integrity-check tables handed out unwrapped, then with none wrapped.
retry() { # name cmd...
  local name=$1; shift
  [ "$pass" = A ] || return 0
  local saved=("${ENVS[@]}")
  ENVS=("${saved[@]/VC_PROBE_LOG=*/VC_PROBE_LOG=$OUT/log-U.txt}" VC_PROBE_UNWRAP=6bd5fb6c,d4082055)
  run_one U1 "$OUT/log-U.txt" "$name" "$@" || {
    ENVS=("${saved[@]/VC_PROBE_LOG=*/VC_PROBE_LOG=$OUT/log-U.txt}" VC_PROBE_UNWRAP=all)
    run_one U2 "$OUT/log-U.txt" "$name" "$@"; }
  ENVS=("${saved[@]}")
}

PROGS=${PROGS-"basic streams symbols coop graph cublas cufft"}
say "== native (no interposer): sanity"
for p in basic cublas; do
  ENVS=(LD_LIBRARY_PATH=$CUDA_LIB:${LD_LIBRARY_PATH:-})
  run_one native /dev/null $p.static "$P/bin/$p.static"
done

for pass in A B; do
  log=$OUT/log-$pass.txt
  : > "$log"
  base=(VC_PROBE_LOG=$log VC_REAL_LIBCUDA=$REAL)
  [ $pass = B ] && base+=(VC_PROBE_RETVALS=1 VC_PROBE_DLSYM=1 LD_PRELOAD=$LIB/libvcprobe_preload.so)
  say "== pass $pass"
  ENVS=("${base[@]}" LD_LIBRARY_PATH=$LIB:$CUDA_LIB:${LD_LIBRARY_PATH:-})
  [ -n "$PROGS" ] && run_one $pass "$log" drvapi "$P/bin/drvapi"
  for p in $PROGS; do
    for v in static shared; do
      run_one $pass "$log" $p.$v "$P/bin/$p.$v" || retry "$p.$v" "$P/bin/$p.$v"
    done
  done
  if [ "$TORCH" = torch ] && python3 -c 'import torch' 2>/dev/null; then
    ENVS=("${base[@]}" VC_PROBE_LIBDIR=$LIB PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-})
    for script in ${TORCH_SCRIPTS:-torch_step}; do
      TMO=100 run_one $pass "$log" $script python3 "$P/$script.py" || TMO=100 retry $script python3 "$P/$script.py"
    done
    if grep -q 'interposer loaded: False' "$OUT/progs-output.txt"; then
      say "torch did not load the interposer through LD_LIBRARY_PATH: again with LD_PRELOAD"
      pre=$LIB/libcuda.so.1; [ $pass = B ] && pre="$LIB/libvcprobe_preload.so $LIB/libcuda.so.1"
      ENVS=("${base[@]}" LD_PRELOAD="$pre" VC_PROBE_LIBDIR=$LIB PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-})
      TMO=100 run_one $pass "$log" torch-preload python3 "$P/torch_step.py"
    fi
  else
    say "torch: skipped (${TORCH}, or python3 has no torch)"
  fi
  say "pass $pass log: $(wc -l < "$log") lines"
done
rm -f "$OUT/tmp.out"
say "== failures: $fails"
exit 0
