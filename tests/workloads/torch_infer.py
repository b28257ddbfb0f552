"""PyTorch inference: a transformers decoder built from a config (random
weights, nothing downloaded), greedy generation in fp16 or bf16, four
passes after a short warm-up: tokens_per_s is the decode rate of the last
three (every sequence length seen before; their median), first_tokens_per_s
the first's.
Usage: torch_infer.py {gpt2|llama} {fp16|bf16} [new_tokens]"""
import statistics
import sys

import torch

from common import Timer, result, seed_all


def build(kind, dtype):
    import transformers as tf
    if kind == "gpt2":
        cfg = tf.GPT2Config(n_layer=4, n_head=8, n_embd=512, vocab_size=8192, n_positions=512)
        m = tf.GPT2LMHeadModel(cfg)
    else:
        cfg = tf.LlamaConfig(num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                             hidden_size=512, intermediate_size=1408, vocab_size=8192,
                             max_position_embeddings=512)
        m = tf.LlamaForCausalLM(cfg)
    return m.to(device="cuda", dtype=dtype).eval()


def main():
    kind, prec = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 48
    seed_all(0)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[prec]
    m = build(kind, dtype)
    g = torch.Generator(device="cpu").manual_seed(2)
    ids = torch.randint(0, 8192, (2, 16), generator=g).cuda()
    mask = torch.ones_like(ids)
    kw = dict(max_new_tokens=n, do_sample=False, attention_mask=mask, pad_token_id=0)
    with torch.no_grad():
        m.generate(ids, **dict(kw, max_new_tokens=4))   # warm-up
        # The first pass meets each sequence length for the first time:
        # on the H100 machine its steps took 47-78 ms against 3-8 ms in the
        # next passes, natively too (per-length work in the libraries, by the
        # look of it kernels compiled at run time; docs/PERFORMANCE.md).
        with Timer(torch.cuda.synchronize) as first:
            m.generate(ids, **kw)
        # Three more passes, the median: one pass of 48 tokens is 0.1-0.2 s.
        warm = []
        for _ in range(3):
            with Timer(torch.cuda.synchronize) as t:
                out = m.generate(ids, **kw)
            warm.append(t.ms)
    toks = out[:, ids.shape[1]:].tolist()
    result(tokens=toks, tokens_per_s=2 * n / (statistics.median(warm) / 1e3),
           first_tokens_per_s=2 * n / (first.ms / 1e3))


if __name__ == "__main__":
    main()
