set -u
tar xzf build/gpu-carry.tgz
R=$OUT/r; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH
timeout 330 env OUT=$R/suite GPU_TESTS=build/gpu-tests bash ci/test-gpu.sh > $R/test-gpu.log 2>&1; echo "test-gpu rc=$?" >> $R/rc.txt
timeout 250 /opt/torch/.venv/bin/python3 tests/workloads/run.py --out $R/wl --timeout 100 --only mlp-fp16,gpt2-fp16,compile-default,cuda-graph,expandable-segments,jax-jit > $R/wl.log 2>&1; echo "wl rc=$?" >> $R/rc.txt
cd $OUT && tar czf r.tgz r && rm -rf r
