// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// ONNX Einsum equations: which label each operand dimension carries, and when a two-operand Einsum
// is one (batched) matrix product of its operands as they are stored. Shared by the shape rule, the
// CPU kernel and the CUDA executor, so all three read an equation the same way.

#include "exec/kernels.h"

#include <string>
#include <vector>

namespace core::exec {

// An equation split into its terms, blanks removed: "ij, jk -> ik" gives {"ij", "jk"} and "ik".
// Without "->" the output is implicit (explicitOutput false, output empty).
struct EinsumTerms {
    std::vector<std::string> inputs;
    std::string output;
    bool explicitOutput = false;
};
EinsumTerms splitEinsum(const std::string& equation);

// Each operand's and the output's dimensions as labels. A letter is a label ('A'..'Z' are 0..25,
// 'a'..'z' 26..51, so label order is character order); the dimensions an ellipsis stands for are
// labels 52, 53, ..., aligned from the right across the operands, so they broadcast as NumPy does.
// extent[label] is the label's length; an operand dimension of length 1 broadcasts to it.
struct EinsumLabels {
    std::vector<std::vector<int>> inputs;
    std::vector<int> output;
    std::vector<std::int64_t> extent;
    bool broadcasts = false; // some operand dimension has length 1 where its label is longer
};
// False, with the reason in *why, when the equation is malformed or does not fit the operand shapes
// and the output shape (an implicit output: the ellipsis, then the letters used once, in order).
bool einsumLabels(const std::string& equation, const std::vector<Shape>& inputs, const Shape& output, EinsumLabels& e,
    std::string* why = nullptr);

// A two-operand Einsum computed as C = op(A)·op(B) for each of `batch` products, on the operands as
// they are stored (row-major): A is [batch, m, k] ([batch, k, m] when transA), B is [batch, k, n]
// ([batch, n, k] when transB), the output is C [batch, m, n]. Operand `a` plays A and `b` plays B
// (exchanged when the output puts the second operand's free labels first).
struct EinsumGemm {
    int a = 0, b = 1;
    bool transA = false, transB = false;
    std::int64_t batch = 1, m = 1, n = 1, k = 1;
};
// False when the Einsum needs more than that: a diagonal, a label summed in one operand only, a
// broadcast dimension, or labels in an order no transpose flag gives.
bool einsumAsGemm(const EinsumLabels& e, EinsumGemm& g);

} // namespace core::exec
