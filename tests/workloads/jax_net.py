"""JAX: jit of a small network, forward and gradient, on the GPU.
ms_per_grad: ten gradients after the first; steady_ms_per_call: gradients
in a loop (common.steady())."""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax
import jax.numpy as jnp

from common import Timer, fl, result, steady


def main():
    devs = jax.devices("gpu")
    key = jax.random.PRNGKey(0)
    k1, k2, k3 = jax.random.split(key, 3)
    params = {"w1": jax.random.normal(k1, (256, 512)) * 0.05, "w2": jax.random.normal(k2, (512, 10)) * 0.05}
    x = jax.random.normal(k3, (128, 256))
    y = jnp.arange(128) % 10

    def loss(p, x, y):
        h = jax.nn.gelu(x @ p["w1"])
        logits = h @ p["w2"]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(128), y])

    f = jax.jit(loss)
    gf = jax.jit(jax.grad(loss))
    v = f(params, x, y).block_until_ready()
    g = gf(params, x, y)
    with Timer(lambda: jax.block_until_ready(g)) as t:
        for _ in range(10):
            g = gf(params, x, y)
    last = [g]

    def call():
        last[0] = gf(params, x, y)

    per_grad = steady(call, lambda: jax.block_until_ready(last[0]))
    result(platform=devs[0].platform, loss=fl(v, 5), gnorm=fl(jnp.sqrt(sum(jnp.sum(a * a) for a in g.values())), 5),
           ms_per_grad=t.ms / 10, steady_ms_per_call=per_grad)


if __name__ == "__main__":
    main()
