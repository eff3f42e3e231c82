# SPDX-License-Identifier: MIT
# SPDX-FileCopyrightText: MemPlan authors
"""Capture the step PyTorch really runs (inference, or a training step with its optimizer) as
MemPlan's JSON graph: `capture(model, example_inputs, loss_fn=None, optimizer=None, path=...)`."""

from .capture import CaptureError, capture, default_loss

__all__ = ["capture", "CaptureError", "default_loss"]
