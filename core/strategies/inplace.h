// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// In-place: ops write where their result will be read, instead of into a buffer of their own.
// - Elementwise (Relu, Add, Mul, ...) and view ops (Reshape, Flatten, Squeeze, Unsqueeze, Identity):
//   the input X and output Y share one buffer when X is an activation (not a graph input or output,
//   not on host), X's last read is this op, every tensor already sharing X's buffer is read for the
//   last time at or before this op (so overwriting it is safe), Y is an activation or graph output
//   of X's byte size, and Y is not already sharing. For a binary op the first qualifying input is
//   taken; chains (conv -> relu -> reshape) collapse into one buffer.
// - Concat: each input X is written by its producer straight into its slice of the output Y, and
//   the Concat copies nothing, when every dimension of Y before the axis is 1 (each slice is one
//   contiguous range), X is an activation produced by an op (not a graph input or output, not on
//   host), occurs once among the inputs, shares with nothing, and its slice starts at a multiple of
//   16 bytes. Y's buffer then lives from the birth of its earliest input in a slice, so inputs are
//   tried one at a time, the latest-born first, and one stays in its slice only when the live-bytes
//   curve sorted highest first does not get worse (a long skip connection usually makes it worse).
// - Concat families: Concats that join runs of one list (a DenseNet block: cat(f0), cat(f0, f1), ...,
//   cat(f0, ..., fn)) are held by one of them, H: each earlier Concat whose inputs are a contiguous
//   run of H's inputs is a view of that run's range of H's output (it copies nothing), and H's
//   inputs are written into their slices, so each feature map is held once. For the latest Concat
//   of a family, it and each Concat that would be its view are tried as H; the best by the sorted
//   curve is kept when that is not worse. Families go first, then single inputs as above.
// - Merged tensors become ONE buffer (lifetime = union, tensors = all, Concat inputs at their
//   slice's offset). The strategy tries the elementwise pass alone and after the Concat pass, and
//   keeps the better of the two by the same sorted curve. Cost: none (no kernel does more work).
// Limits: runs last in the pipeline (it depends on the final lifetimes); a broadcasting binary op
// aliases only the input of the output's size; a Concat output is put into a later Concat only
// as a view of its own inputs' run there, not as an input written into its slice.

#include "strategies/strategy.h"

namespace core {

class InPlaceStrategy : public Strategy {
public:
    std::string_view name() const override { return "inplace"; }
    std::string_view description() const override
    {
        return "elementwise and view ops write into an input that dies there; Concat inputs are written into their slice";
    }
    Expected<Transformed> apply(Transformed state, const StrategyOptions& options) const override;
};

} // namespace core
