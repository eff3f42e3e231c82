// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// Private to core/onnx: a Graph's op attribute written back as ONNX states it.

#include "graph/graph.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace core::onnxdetail {

// INT or INTS, FLOAT or FLOATS, STRING or STRINGS: a list where the attribute says so or ONNX
// defines the name as one (kernel_shape, pads, ...). onnxexport.cpp.
void writeAttribute(const std::string& name, const Attribute& a, onnx::AttributeProto& out);

} // namespace core::onnxdetail
