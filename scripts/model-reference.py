#!/usr/bin/env python3
"""PyTorch reference of the model the training and inference suites measure.

The same GPT-style decoder as suites/transformer/transformer.h, with its parameters
named and laid out as MakeLayout, so our flat fp32 weights load unchanged:

  check   fp32 loss, gradient norms, the losses of five AdamW steps and
          greedy tokens on the CPU (or --device cuda): the figures the host
          and CUDA backends are compared with. Weights and tokens come from
          raw files (--weights: little-endian float32, MakeLayout order;
          --tokens: little-endian int32, batch x (seq + 1)) or, without them,
          from InitParameters and SyntheticTokens reimplemented here bit for bit.
  train   the training step (bf16 autocast, fp32 master weights, AdamW) timed
          with CUDA events: step time, tokens/s, MFU against a measured bf16
          matmul peak, with the FLOPs of config.cc's TrainingStepFlops.
  decode  prefill (time to first token) and greedy decode with a static KV
          cache at batch 1, 8 and 64, eager and replayed as a CUDA graph:
          time per output token.

Prints one JSON object on stdout. check runs anywhere (PyTorch 1.13 or
newer); train and decode need CUDA and PyTorch 2 (scaled_dot_product_attention).

    python3 scripts/model-reference.py check --preset tiny --seed 1
    python3 scripts/model-reference.py train --preset small --device cuda
    python3 scripts/model-reference.py decode --preset small --device cuda
"""

import argparse
import json
import math
import statistics
import sys

import numpy as np
import torch
import torch.nn.functional as F

# Copied from Preset() in suites/transformer/transformer.cc; keep the two in sync.
# name: (layers, width, heads, seq, batch, vocab)
PRESETS = {
    "tiny": (2, 64, 4, 32, 4, 256),
    "small": (6, 512, 8, 512, 8, 8192),
    "medium": (12, 1024, 16, 1024, 8, 32768),
    "large": (24, 2048, 16, 2048, 4, 50304),
}

# config.h's AdamW defaults.
ADAMW = {"lr": 1e-3, "betas": (0.9, 0.95), "eps": 1e-8, "weight_decay": 0.1}

LN_EPS = 1e-5
MASK64 = (1 << 64) - 1


class Config:
    def __init__(self, layers, width, heads, seq, batch, vocab):
        self.layers, self.width, self.heads = layers, width, heads
        self.seq, self.batch, self.vocab = seq, batch, vocab

    @property
    def head_dim(self):
        return self.width // self.heads

    def as_dict(self):
        return {k: getattr(self, k) for k in ("layers", "width", "heads", "seq", "batch", "vocab")}


def preset(name, batch=None, seq=None):
    c = Config(*PRESETS[name])
    if batch is not None:
        c.batch = batch
    if seq is not None:
        c.seq = seq
    return c


# ---- layout, FLOPs, initialisation: as suites/transformer/transformer.cc ----

def layout(c):
    """[(name, shape, decays)] in the order of the flat array (MakeLayout)."""
    w = c.width
    out = [("wte", (c.vocab, w), True), ("wpe", (c.seq, w), True),
           ("lnf_gain", (w,), False), ("lnf_bias", (w,), False)]
    for i in range(c.layers):
        p = f"blocks.{i}."
        out += [(p + "ln1_gain", (w,), False), (p + "ln1_bias", (w,), False),
                (p + "qkv", (3 * w, w), True), (p + "proj", (w, w), True),
                (p + "ln2_gain", (w,), False), (p + "ln2_bias", (w,), False),
                (p + "fc", (4 * w, w), True), (p + "fc_proj", (w, 4 * w), True)]
    return out


def parameter_count(c):
    return sum(math.prod(shape) for _, shape, _ in layout(c))


def forward_flops(c, batch, seq):
    d, tokens = float(c.width), float(batch) * float(seq)
    matmul = 2.0 * tokens * (c.layers * 12.0 * d * d + d * c.vocab)
    attention = 4.0 * tokens * float(seq) * d * c.layers
    return matmul + attention


def training_step_flops(c):
    return 3.0 * forward_flops(c, c.batch, c.seq)


def _u64(x):
    return np.uint64(x & MASK64)


def splitmix64(x):
    """SplitMix64 of a uint64 array (numpy's uint64 arithmetic wraps)."""
    x = x + _u64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * _u64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * _u64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _splitmix64_int(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def _uniform(seed, stream, index):
    base = _splitmix64_int(seed ^ ((stream * 0xD6E8FEB86659FD93) & MASK64))
    h = splitmix64(index + _u64(base))
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * (1.0 / 9007199254740992.0)


def _normal(seed, index):
    """Box-Muller as config.cc's Normal, with the C library's log and cos
    (numpy's vectorised ones may round the last bit differently)."""
    u1, u2 = _uniform(seed, 1, index), _uniform(seed, 2, index)
    log, cos = np.frompyfunc(math.log, 1, 1), np.frompyfunc(math.cos, 1, 1)
    return np.sqrt(-2.0 * log(u1).astype(np.float64)) * cos(6.283185307179586 * u2).astype(np.float64)


def init_parameters(c, seed):
    """InitParameters: the flat fp32 array, value for value as config.cc."""
    total = parameter_count(c)
    p = np.zeros(total, dtype=np.float32)
    residual_std = 0.02 / math.sqrt(2.0 * c.layers)
    at = 0
    for name, shape, _ in layout(c):
        n = math.prod(shape)
        short = name.split(".")[-1]
        if short in ("wte", "wpe", "qkv", "fc"):
            std = 0.02
        elif short in ("proj", "fc_proj"):
            std = residual_std
        else:
            std = None
        if std is not None:
            index = np.arange(at, at + n, dtype=np.uint64)
            p[at:at + n] = (std * _normal(seed, index)).astype(np.float32)
        elif short.endswith("_gain"):
            p[at:at + n] = 1.0
        at += n
    return p


def synthetic_tokens(count, vocab, seed):
    """SyntheticTokens: `count` int32 tokens in [0, vocab)."""
    base = _u64(_splitmix64_int(seed & MASK64))
    h = splitmix64(np.arange(count, dtype=np.uint64) + base)
    return (h % np.uint64(vocab)).astype(np.int32)


def state_from_flat(c, flat):
    """The named tensors (views into one fp32 tensor) of a flat array laid out as MakeLayout."""
    flat = torch.as_tensor(np.ascontiguousarray(flat, dtype=np.float32))
    if flat.numel() != parameter_count(c):
        raise ValueError(f"{flat.numel()} values; the model has {parameter_count(c)}")
    state, at = {}, 0
    for name, shape, _ in layout(c):
        n = math.prod(shape)
        state[name] = flat[at:at + n].view(shape)
        at += n
    return state


def random_state(c, device, seed):
    """Parameters with InitParameters' distribution from torch's generator,
    for the timed runs (whose figures do not depend on the values)."""
    gen = torch.Generator(device=device).manual_seed(seed)
    residual_std = 0.02 / math.sqrt(2.0 * c.layers)
    state = {}
    for name, shape, _ in layout(c):
        short = name.split(".")[-1]
        if short.endswith("_gain"):
            state[name] = torch.ones(shape, device=device)
        elif short.endswith("_bias"):
            state[name] = torch.zeros(shape, device=device)
        else:
            std = residual_std if short in ("proj", "fc_proj") else 0.02
            state[name] = torch.randn(shape, device=device, generator=gen) * std
    return state


# ---- the model ----

class Model(torch.nn.Module):
    """The decoder with parameters named as in layout(); `attention` is
    "sdpa" (scaled_dot_product_attention, the timed path) or "explicit"
    (scores, causal mask, softmax, values: any PyTorch)."""

    def __init__(self, c, state, attention="sdpa"):
        super().__init__()
        self.c, self.attention = c, attention
        self.names = [name for name, _, _ in layout(c)]
        for name in self.names:
            self.register_parameter(name.replace(".", "_"),
                                    torch.nn.Parameter(state[name].detach().clone()))

    def p(self, name):
        return getattr(self, name.replace(".", "_"))

    def named_layout_parameters(self):
        return [(name, self.p(name)) for name in self.names]

    def _attend(self, q, k, v, causal, mask=None):
        if self.attention == "sdpa":
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
        if causal:
            t, s = q.shape[-2], k.shape[-2]
            keep = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(s - t)
            scores = scores.masked_fill(~keep, float("-inf"))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v

    def _block(self, i, x, kv_write=None, kv_read=None, mask=None):
        """One block over x [B, T, w]. kv_write(k, v) stores the new keys and
        values; kv_read() gives the keys and values to attend over (the cache)."""
        c, pre = self.c, f"blocks.{i}."
        b, t, w = x.shape
        h = F.layer_norm(x, (w,), self.p(pre + "ln1_gain"), self.p(pre + "ln1_bias"), LN_EPS)
        qkv = F.linear(h, self.p(pre + "qkv"))  # Q rows, then K, then V; head h at h·hd
        q, k, v = (z.view(b, t, c.heads, c.head_dim).transpose(1, 2) for z in qkv.split(w, dim=-1))
        if kv_write is not None:
            kv_write(k, v)
        if kv_read is not None:
            k, v = kv_read()
        y = self._attend(q, k, v, causal=mask is None, mask=mask)
        y = y.transpose(1, 2).reshape(b, t, w)
        x = x + F.linear(y, self.p(pre + "proj"))
        h = F.layer_norm(x, (w,), self.p(pre + "ln2_gain"), self.p(pre + "ln2_bias"), LN_EPS)
        h = F.gelu(F.linear(h, self.p(pre + "fc")), approximate="tanh")
        return x + F.linear(h, self.p(pre + "fc_proj"))

    def _head(self, x):
        x = F.layer_norm(x, (self.c.width,), self.p("lnf_gain"), self.p("lnf_bias"), LN_EPS)
        return x @ self.p("wte").t()  # tied LM head

    def logits(self, inputs):
        """inputs [B, T] -> logits [B, T, vocab], no cache."""
        t = inputs.shape[1]
        x = self.p("wte")[inputs] + self.p("wpe")[:t]
        for i in range(self.c.layers):
            x = self._block(i, x)
        return self._head(x)

    def loss(self, inputs, targets):
        logits = self.logits(inputs)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))

    # ---- inference with a static KV cache ----

    def new_cache(self, batch, dtype, device):
        shape = (self.c.layers, batch, self.c.heads, self.c.seq, self.c.head_dim)
        return torch.zeros(shape, dtype=dtype, device=device), torch.zeros(shape, dtype=dtype, device=device)

    def prefill(self, prompt, cache):
        """prompt [B, P]: fills cache positions [0, P); logits of the last position [B, vocab]."""
        kc, vc = cache
        b, t = prompt.shape
        x = self.p("wte")[prompt] + self.p("wpe")[:t]
        for i in range(self.c.layers):
            def write(k, v, i=i):
                kc[i, :b, :, :t].copy_(k)
                vc[i, :b, :, :t].copy_(v)
            x = self._block(i, x, kv_write=write)
        return self._head(x[:, -1:])[:, 0]

    def decode(self, tokens, pos, cache):
        """tokens [B] at position pos (a one-element int64 device tensor, so
        the step can be captured as a graph): appends to the cache and
        attends over all of it with positions > pos masked; logits [B, vocab]."""
        kc, vc = cache
        b = tokens.shape[0]
        x = (self.p("wte")[tokens] + self.p("wpe").index_select(0, pos))[:, None]
        keep = (torch.arange(self.c.seq, device=tokens.device) <= pos).view(1, 1, 1, -1)
        for i in range(self.c.layers):
            def write(k, v, i=i):
                kc[i, :b].index_copy_(2, pos, k)
                vc[i, :b].index_copy_(2, pos, v)
            def read(i=i):
                return kc[i, :b], vc[i, :b]
            x = self._block(i, x, kv_write=write, kv_read=read, mask=keep)
        return self._head(x)[:, 0]


def make_optimizer(model, fused=False):
    pairs = [(p, d) for (_, p), (_, _, d) in zip(model.named_layout_parameters(), layout(model.c))]
    decay = [p for p, d in pairs if d]
    plain = [p for p, d in pairs if not d]
    groups = [{"params": decay, "weight_decay": ADAMW["weight_decay"]},
              {"params": plain, "weight_decay": 0.0}]
    kw = dict(lr=ADAMW["lr"], betas=ADAMW["betas"], eps=ADAMW["eps"])
    if fused:
        try:
            return torch.optim.AdamW(groups, fused=True, **kw), True
        except (TypeError, RuntimeError):
            pass
    return torch.optim.AdamW(groups, **kw), False


def greedy(model, prompt, steps):
    """HostModel::Greedy: prefill, then `steps` tokens, each the argmax of the
    previous logits (torch.argmax gives the first of equal maxima)."""
    b, t = prompt.shape
    if t + steps - 1 > model.c.seq:
        raise ValueError(f"prompt {t} + steps {steps} - 1 exceeds seq {model.c.seq}")
    p = next(model.parameters())
    cache = model.new_cache(b, p.dtype, p.device)
    logits = model.prefill(prompt, cache)
    out = []
    pos = torch.tensor([t], dtype=torch.long, device=p.device)
    for s in range(steps):
        tok = logits.argmax(-1)
        out.append(tok)
        if s + 1 < steps:
            logits = model.decode(tok, pos, cache)
            pos += 1
    return torch.stack(out, dim=1)


# ---- subcommands ----

def env(device):
    out = {"torch": torch.__version__, "device_type": device.type}
    if device.type == "cuda":
        out["device"] = torch.cuda.get_device_name(device)
        out["cuda"] = torch.version.cuda
    else:
        out["device"] = "cpu"
        out["threads"] = torch.get_num_threads()
    return out


def fail(message):
    """Ends the run with exit status 2 and the reason as JSON (as gpu-reference.py)."""
    print(json.dumps({"error": message}))
    sys.exit(2)


def read_raw(path, dtype, count):
    data = np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<"))
    if data.size != count:
        fail(f"{path}: {data.size} values, expected {count}")
    return data.astype(dtype)


def cmd_check(args):
    device = torch.device(args.device)
    c = preset(args.preset, args.batch, args.seq)
    # The positions table (wpe) is the preset's; a shorter --seq uses its first rows.
    shape = preset(args.preset)
    table = Config(c.layers, c.width, c.heads, shape.seq, c.batch, c.vocab)
    if c.seq > table.seq:
        fail(f"--seq {c.seq} exceeds the preset's {table.seq} positions")
    ntok = c.batch * (c.seq + 1)
    if args.weights:
        flat = read_raw(args.weights, np.float32, parameter_count(table))
    else:
        flat = init_parameters(table, args.seed)
    if args.tokens:
        tokens = read_raw(args.tokens, np.int32, ntok)
    else:
        tokens = synthetic_tokens(ntok, c.vocab, args.seed)
    tokens = torch.as_tensor(tokens.astype(np.int64)).view(c.batch, c.seq + 1).to(device)
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    torch.use_deterministic_algorithms(True, warn_only=True)
    state = {k: v.to(device) for k, v in state_from_flat(table, flat).items()}
    model = Model(table, state, attention="explicit")
    out = {**env(device), "command": "check", "preset": args.preset, "config": c.as_dict(),
           "seed": args.seed, "weights": args.weights or "InitParameters",
           "tokens": args.tokens or "SyntheticTokens", "parameters": parameter_count(table),
           "first_params": [float(x) for x in flat[:4]],
           "first_tokens": [int(x) for x in tokens.flatten()[:8].tolist()]}

    if hasattr(F, "scaled_dot_product_attention"):
        with torch.no_grad():
            explicit = model.loss(inputs, targets)
            model.attention = "sdpa"
            out["sdpa_minus_explicit_loss"] = float(model.loss(inputs, targets) - explicit)
            model.attention = "explicit"

    loss = model.loss(inputs, targets)
    loss.backward()
    norms = {name: float(p.grad.double().norm()) for name, p in model.named_layout_parameters()}
    out["loss"] = float(loss)
    out["grad_norm"] = math.sqrt(sum(n * n for n in norms.values()))
    out["grad_norms"] = norms

    # Prefill + decode against the full forward pass, before any step.
    with torch.no_grad():
        prompt_len = args.prompt or c.seq // 2
        steps = args.greedy_steps or c.seq - prompt_len + 1
        full = model.logits(inputs)
        cache = model.new_cache(c.batch, torch.float32, device)
        first = model.prefill(inputs[:, :prompt_len], cache)
        diff = float((first - full[:, prompt_len - 1]).abs().max())
        pos = torch.tensor([prompt_len], dtype=torch.long, device=device)
        for t in range(prompt_len, c.seq):
            step = model.decode(inputs[:, t], pos, cache)
            diff = max(diff, float((step - full[:, t]).abs().max()))
            pos += 1
        out["decode_minus_full_logits_max_abs"] = diff
        out["greedy"] = {"prompt_len": prompt_len, "steps": steps,
                         "tokens": greedy(model, inputs[:, :prompt_len], steps).tolist()}

    # The gradients of the initial loss are in place: step, then measure.
    opt, _ = make_optimizer(model)
    losses = []
    for k in range(args.steps):
        opt.step()
        opt.zero_grad(set_to_none=True)
        l = model.loss(inputs, targets)
        losses.append(float(l))  # the loss after k + 1 steps
        if k + 1 < args.steps:
            l.backward()
    out["losses_after_steps"] = losses
    with torch.no_grad():
        out["greedy_after_steps"] = greedy(model, inputs[:, :prompt_len], steps).tolist()
    out["adamw"] = {"lr": ADAMW["lr"], "betas": list(ADAMW["betas"]), "eps": ADAMW["eps"],
                    "weight_decay": ADAMW["weight_decay"],
                    "decay": "wte, wpe, qkv, proj, fc, fc_proj"}
    return out


def time_events(fn, iterations, warmup):
    """Median seconds of fn() over `iterations` after `warmup` calls, each
    timed with CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iterations):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times), times


def bf16_peak(iterations):
    """Measured bf16 matmul throughput, 8192³ (FLOP/s)."""
    n = 8192
    gen = torch.Generator(device="cuda").manual_seed(n)
    a = (torch.rand(n, n, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(n, n, device="cuda", generator=gen) * 2 - 1).to(torch.bfloat16)
    median, _ = time_events(lambda: torch.matmul(a, b), iterations, warmup=5)
    return 2.0 * n ** 3 / median


def need_cuda(args):
    if not args.device.startswith("cuda") or not torch.cuda.is_available():
        fail("train and decode time a CUDA device: --device cuda, with PyTorch built for CUDA")
    if not hasattr(F, "scaled_dot_product_attention"):
        fail(f"PyTorch {torch.__version__} has no scaled_dot_product_attention (needs 2.0)")
    return torch.device(args.device)


def cmd_train(args):
    device = need_cuda(args)
    torch.backends.cuda.matmul.allow_tf32 = False
    c = preset(args.preset, args.batch)
    peak = bf16_peak(args.iterations)
    torch.cuda.empty_cache()
    model = Model(c, random_state(c, device, args.seed)).to(device)
    opt, fused = make_optimizer(model, fused=True)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    tokens = torch.randint(0, c.vocab, (c.batch, c.seq + 1), device=device, generator=gen)
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model.loss(inputs, targets)
        loss.backward()
        opt.step()
        return loss

    median, times = time_events(step, args.iterations, args.warmup)
    flops = training_step_flops(c)
    return {**env(device), "command": "train", "preset": args.preset, "config": c.as_dict(),
            "parameters": parameter_count(c), "precision": "bf16 autocast, fp32 master weights",
            "attention": "scaled_dot_product_attention(is_causal=True)", "adamw_fused": fused,
            "warmup": args.warmup, "iterations": args.iterations,
            "step_time_ms": median * 1e3, "step_times_ms": [t * 1e3 for t in times],
            "tokens_per_s": c.batch * c.seq / median, "flops_per_step": flops,
            "bf16_matmul_8192_tflops": peak / 1e12, "mfu": flops / median / peak,
            "peak_memory_gib": torch.cuda.max_memory_allocated(device) / 2 ** 30}


def decode_batch(model, prompt, steps, iterations):
    """Times the prefill of `prompt` [B, P] and `steps` greedy decode steps
    after it, eager and replayed as a CUDA graph of one step."""
    b, prompt_len = prompt.shape
    cache = model.new_cache(b, torch.bfloat16, prompt.device)
    with torch.no_grad():
        prefill_s, _ = time_events(lambda: model.prefill(prompt, cache), iterations, warmup=3)
        first = model.prefill(prompt, cache).argmax(-1)
    tok = first.clone()
    pos = torch.tensor([prompt_len], dtype=torch.long, device=prompt.device)

    def one():  # one greedy decode step: feeds its token back, advances pos
        tok.copy_(model.decode(tok, pos, cache).argmax(-1))
        pos.add_(1)

    def run_steps(fn):  # the same context and tokens for every timed run
        def all_steps():
            pos.fill_(prompt_len)
            tok.copy_(first)
            for _ in range(steps):
                fn()
        return all_steps

    with torch.no_grad():
        eager_s, _ = time_events(run_steps(one), iterations, warmup=2)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                one()
        torch.cuda.current_stream().wait_stream(side)
        pos.fill_(prompt_len)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            one()
        graph_s, _ = time_events(run_steps(graph.replay), iterations, warmup=2)
    return {"prefill_ms": prefill_s * 1e3,
            "prefill_tokens_per_s": b * prompt_len / prefill_s,
            "eager_ms_per_token": eager_s / steps * 1e3,
            "graph_ms_per_token": graph_s / steps * 1e3,
            "graph_tokens_per_s": b * steps / graph_s}


def cmd_decode(args):
    device = need_cuda(args)
    c = preset(args.preset)
    prompt_len = args.prompt or c.seq // 2
    steps = args.decode_steps or min(128, c.seq - prompt_len)
    if prompt_len + steps > c.seq:
        fail(f"--prompt {prompt_len} + --decode-steps {steps} exceeds seq {c.seq}")
    state = random_state(c, device, args.seed)
    model = Model(c, {k: v.to(torch.bfloat16) for k, v in state.items()}).to(device)
    del state
    model.requires_grad_(False)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    out = {**env(device), "command": "decode", "preset": args.preset, "config": c.as_dict(),
           "parameters": parameter_count(c), "precision": "bf16 weights and KV cache",
           "prompt_len": prompt_len, "decode_steps": steps, "iterations": args.iterations,
           "batches": {}}
    for b in [int(x) for x in args.batches.split(",")]:
        prompt = torch.randint(0, c.vocab, (b, prompt_len), device=device, generator=gen)
        out["batches"][str(b)] = decode_batch(model, prompt, steps, args.iterations)
        torch.cuda.empty_cache()
    out["peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2 ** 30
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="fp32 loss, gradients, AdamW steps and greedy tokens")
    check.add_argument("--preset", default="tiny", choices=PRESETS)
    check.add_argument("--weights", help="raw little-endian float32, MakeLayout order")
    check.add_argument("--tokens", help="raw little-endian int32, batch x (seq + 1)")
    check.add_argument("--seed", type=int, default=1, help="InitParameters / SyntheticTokens seed")
    check.add_argument("--batch", type=int, help="sequences (default: the preset's)")
    check.add_argument("--seq", type=int, help="tokens per sequence (default: the preset's)")
    check.add_argument("--steps", type=int, default=5, help="AdamW steps")
    check.add_argument("--prompt", type=int, help="greedy prompt length (default seq / 2)")
    check.add_argument("--greedy-steps", type=int, help="greedy tokens (default: up to seq)")
    check.add_argument("--device", default="cpu")

    train = sub.add_parser("train", help="timed training steps (CUDA)")
    train.add_argument("--preset", default="small", choices=PRESETS)
    train.add_argument("--batch", type=int, help="sequences per step (default: the preset's)")
    train.add_argument("--warmup", type=int, default=5)
    train.add_argument("--iterations", type=int, default=20)
    train.add_argument("--seed", type=int, default=1)
    train.add_argument("--device", default="cuda")

    decode = sub.add_parser("decode", help="timed prefill and decode (CUDA)")
    decode.add_argument("--preset", default="small", choices=PRESETS)
    decode.add_argument("--batches", default="1,8,64")
    decode.add_argument("--prompt", type=int, help="prompt tokens (default seq / 2)")
    decode.add_argument("--decode-steps", type=int, help="decode steps timed (default min(128, seq - prompt))")
    decode.add_argument("--iterations", type=int, default=10)
    decode.add_argument("--seed", type=int, default=1)
    decode.add_argument("--device", default="cuda")

    args = parser.parse_args()
    out = {"check": cmd_check, "train": cmd_train, "decode": cmd_decode}[args.command](args)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
