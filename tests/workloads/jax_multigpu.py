"""JAX across every GPU of the process: a pmap with a psum (XLA's all-reduce
over NCCL between the devices), and a jit of a matrix product whose first
operand is sharded by rows over a mesh of all devices (XLA partitions it and
gathers the result). On a machine with one GPU both run on that one and it
reports devices=1. ms_per_call: the pmap in a loop (common.steady())."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from common import fl, result, steady


def main():
    jax.config.update("jax_default_matmul_precision", "highest")  # fp32 products, comparable with numpy's
    devs = jax.devices("gpu")
    n = len(devs)
    x = jnp.arange(n * 4096, dtype=jnp.float32).reshape(n, 4096) / 4096.0
    f = jax.pmap(lambda v: jax.lax.psum(v * 2.0, "i"), axis_name="i")
    y = f(x)
    want = 2.0 * np.asarray(x).sum(axis=0)
    ok = all(np.allclose(np.asarray(y[d]), want, rtol=1e-6) for d in range(n))
    rng = np.random.default_rng(3)
    a = rng.standard_normal((256 * n, 512), dtype=np.float32)
    b = rng.standard_normal((512, 128), dtype=np.float32)
    mesh = Mesh(np.array(devs), ("d",))
    sa = jax.device_put(a, NamedSharding(mesh, P("d", None)))
    sb = jax.device_put(b, NamedSharding(mesh, P()))
    c = jax.jit(lambda p, q: p @ q, out_shardings=NamedSharding(mesh, P()))(sa, sb)
    c = np.asarray(c)
    ok = ok and np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    last = [y]

    def call():
        last[0] = f(x)

    per = steady(call, lambda: jax.block_until_ready(last[0]))
    result(devices=n, psum=fl(float(np.asarray(y).sum()), 7), mm=fl(float(c.astype(np.float64).sum()), 4),
           ok=bool(ok), ms_per_call=per)


if __name__ == "__main__":
    main()
