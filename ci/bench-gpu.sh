#!/usr/bin/env bash
# The CUDA benchmarks on a GPU machine: bench/cuda/cuda_bench natively, then
# through vcuda-server (real driver), in the same run; prints each figure both
# ways and vcuda's ratio to native (higher is better for both kinds).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir bench-gpu
vb=${VCUDA_BUILD:-build/release}
bin=${CUDA_BENCH:-$vb/bench/cuda_bench}
seed=${SEED_BENCH:-$vb/bench/seed_bench}
# The sections: BENCH_CUDA, BENCH_TORCH, BENCH_VM (each 1 unless set to 0),
# so that a machine lent for ten minutes at a time can run them apart.
if [ "${BENCH_CUDA:-1}" != 0 ]; then
	bench_bin bench/cuda/cuda_bench.cu "$bin"
	bench_bin bench/cuda/seed_bench.cu "$seed" -lcublas -lcufft
	# Each program natively and through vcuda, $BENCH_CUDA_ROUNDS times (3,
	# about 30 s each), alternating which goes first: the same native
	# figure moves by a fifth between runs on a shared machine, so the
	# figures are the medians and the range is the rounds' own ratios. The
	# pairs print the same metrics in the same order. EXECUTOR (cuda) lets
	# the script itself be tried over the CI stand-in.
	rounds=${BENCH_CUDA_ROUNDS:-3}
	sock="$VC_TMP/vcuda.sock"
	"$vb/bin/vcuda-server" --socket "$sock" --executor "${EXECUTOR:-cuda}" >"$VC_TMP/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	# The page-locked gigabyte once more, its rows named *_spare: through
	# vcuda with VCUDA_PINNED_SPARE (a segment made ahead, pinspare.c),
	# natively as before (a second sample of the same figures).
	spare() { sed 's/^\([A-Za-z0-9_]*\)\t/\1_spare\t/'; }
	native() {
		"$bin"
		"$bin" pinned_gib | spare
		"$seed"
	}
	through() {
		VCUDA_SOCKET=$sock LD_LIBRARY_PATH="$PWD/$vb/guest" "$bin"
		VCUDA_PINNED_SPARE=1G VCUDA_SOCKET=$sock LD_LIBRARY_PATH="$PWD/$vb/guest" "$bin" pinned_gib | spare
		VCUDA_SOCKET=$sock LD_LIBRARY_PATH="$PWD/$vb/guest" "$seed"
	}
	for ((k = 1; k <= rounds; k++)); do
		if ((k % 2)); then
			native >"$VC_TMP/native.$k.tsv" || true
			through >"$VC_TMP/other.$k.tsv" || true
		else
			through >"$VC_TMP/other.$k.tsv" || true
			native >"$VC_TMP/native.$k.tsv" || true
		fi
	done
	kill -TERM $pid; wait $pid || true
	echo "== CUDA through vcuda vs native, same machine, same run, $rounds alternating rounds ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
	bench_ratios_rounds "$VC_TMP" "$rounds" vcuda
fi

# The PyTorch section: training steps (MLP and CNN, fp32 and autocast, 40
# steps each, the first untimed), transformer decode, and calls in a loop
# once warm (common.steady(): torch.compile in both modes, a CUDA graph's
# replay, a JAX jit gradient, a CuPy kernel), natively and through vcuda in
# the same run (tests/workloads/run.py; the last columns are vcuda's speed
# against native's). The same native step moves by a third between
# runs on a shared machine, so each workload runs $BENCH_TORCH_ROUNDS times
# both ways, alternating which goes first: the figures are the medians (a
# training step's own figure is its median step), and the range is the
# rounds' ratios. About 8 minutes for the training steps and 5 for decode
# on an H100, about 8 more for the loops (torch.compile compiles in each
# process); BENCH_TORCH_ONLY (comma-separated names) runs some of them.
PY=${WL_PYTHON:-/opt/torch/.venv/bin/python3}
if [ -x "$PY" ] && [ "${BENCH_TORCH:-1}" != 0 ]; then
	echo "== PyTorch through vcuda vs native, same run, ${BENCH_TORCH_ROUNDS:-3} rounds"
	WL_TRAIN_STEPS=40 "$PY" tests/workloads/run.py --vcuda-build "$vb" --out "$VC_TMP/torch" --timeout 180 \
		--repeat "${BENCH_TORCH_ROUNDS:-3}" \
		--only "${BENCH_TORCH_ONLY:-mlp-fp32,mlp-fp16,mlp-bf16,cnn-fp32,cnn-fp16,cnn-bf16,gpt2-fp16,llama-bf16,compile-default,compile-reduce-overhead,cuda-graph,jax-jit,cupy-libs}" || true
fi

# The VM section: the same program inside the test VM (ci/bench-vm.sh),
# where a VM pack was built (ci/vm-test.sh --pack build/vmpack; the GPU
# machine has no apt to build one). The guest runs under TCG there: only the
# page-locked copies, which the GPU makes in place, are the host's figures.
pack=${VM_PREBUILT:-build/vmpack}
if [ -f "$pack/env" ] && [ "${BENCH_VM:-1}" != 0 ]; then
	VM_PREBUILT=$pack bash ci/bench-vm.sh || true
fi
