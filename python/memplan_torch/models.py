# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""Models the command line can capture: torchvision architectures (random weights) and a small
GPT-style decoder (gpt-small) for transformer training steps."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // self.heads))
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.out = nn.Linear(4 * width, width)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(self.act(self.fc(self.ln2(x))))


class SmallGPT(nn.Module):
    """A GPT-style decoder: token and position embeddings, pre-norm blocks, a tied output head."""

    def __init__(self, vocab=8192, width=256, heads=4, layers=4, context=256):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tokens(idx) + self.positions(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def build(name, batch, input_shape=None, seq_len=128, device=None):
    """(model, example inputs, loss_fn) for a torchvision name or gpt-small. The loss is cross
    entropy against random labels (per token for gpt-small). device: where the model and inputs go
    ("meta": shapes only, for capture.enable_meta_tracing); None leaves them on the CPU."""
    torch.manual_seed(0)
    if device == "meta":
        from .capture import enable_meta_tracing
        enable_meta_tracing()
    if name == "gpt-small":
        model = SmallGPT(context=max(seq_len, 1))
        tokens = torch.randint(0, 8192, (batch, seq_len))
        targets = torch.randint(0, 8192, (batch, seq_len))
        if device is not None:
            model, tokens, targets = model.to(device), tokens.to(device), targets.to(device)
        return model, (tokens,), lambda logits: F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    import torchvision
    factory = getattr(torchvision.models, name, None)
    if factory is None or not callable(factory) or name.startswith("_") or name[0].isupper():
        raise ValueError(f"unknown model '{name}': give a torchvision classification model (resnet18, mobilenet_v2, "
                         "vit_b_16, ...) or gpt-small")
    model = factory(weights=None) if "weights" in factory.__code__.co_varnames else factory()
    shape = tuple(input_shape) if input_shape else (3, 224, 224)
    x = torch.randn(batch, *shape)
    if device is not None:
        model, x = model.to(device), x.to(device)
    labels = None

    def loss(out):
        nonlocal labels
        logits = out["out"] if isinstance(out, dict) else out[0] if isinstance(out, tuple) else out
        if labels is None:
            g = torch.Generator().manual_seed(1)
            labels = torch.randint(0, logits.shape[1], (logits.shape[0],) + tuple(logits.shape[2:]), generator=g).to(logits.device)
        return F.cross_entropy(logits, labels)

    return model, (x,), loss
