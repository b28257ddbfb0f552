"""JAX Pallas: hand-written kernels lowered through Triton, jitted; an
elementwise kernel over a grid of blocks and a row-wise softmax, each
checked against jax.numpy in the same process."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from common import Timer, fl, result


def axpy_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0 + y_ref[...]


def softmax_kernel(x_ref, o_ref):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
    o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)


def main():
    n, blk = 1 << 16, 1024
    x = jax.random.normal(jax.random.PRNGKey(1), (n,), jnp.float32)
    y = jnp.arange(n, dtype=jnp.float32) / n
    axpy = jax.jit(pl.pallas_call(
        axpy_kernel, out_shape=jax.ShapeDtypeStruct((n,), jnp.float32), grid=(n // blk,),
        in_specs=[pl.BlockSpec((blk,), lambda i: (i,))] * 2, out_specs=pl.BlockSpec((blk,), lambda i: (i,))))
    a = axpy(x, y).block_until_ready()
    rows, cols, rb = 256, 128, 16
    m = jax.random.normal(jax.random.PRNGKey(2), (rows, cols), jnp.float32)
    sm = jax.jit(pl.pallas_call(
        softmax_kernel, out_shape=jax.ShapeDtypeStruct((rows, cols), jnp.float32), grid=(rows // rb,),
        in_specs=[pl.BlockSpec((rb, cols), lambda i: (i, 0))], out_specs=pl.BlockSpec((rb, cols), lambda i: (i, 0))))
    s = sm(m).block_until_ready()
    with Timer(lambda: s.block_until_ready()) as t:
        for _ in range(10):
            s = sm(m)
    ok = bool(jnp.array_equal(a, x * 2.0 + y)) and float(jnp.max(jnp.abs(s - jax.nn.softmax(m, axis=1)))) < 1e-5
    result(axpy=fl(jnp.sum(a), 6), softmax=fl(jnp.sum(s * m), 6), ok=ok, ms_per_call=t.ms / 10)


if __name__ == "__main__":
    main()
