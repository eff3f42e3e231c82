// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// An input tensor file (`memplan run --input NAME=FILE.pb`, the ONNX backend test data): the same
// bytes as a TensorProto, a SequenceProto and an OptionalProto. A value read must be whole: its
// bytes match its element type and shape.
#include "fuzzcommon.h"

#include "exec/tensordata.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto file = fuzz::writeScratch(".pb", data, size);
    using Reader = core::Expected<std::pair<std::string, core::HostTensor>> (*)(const std::filesystem::path&);
    const std::pair<const char*, Reader> readers[] = { { "readTensorFile", core::readTensorFile },
        { "readSequenceFile", core::readSequenceFile }, { "readOptionalFile", core::readOptionalFile } };
    for (const auto& [name, read] : readers) {
        auto value = read(file);
        if (!value) {
            fuzz::checkError(value.error(), name);
            continue;
        }
        const auto& tensor = value->second;
        if (tensor.sequence || tensor.optional || tensor.dtype == core::DType::Undefined || tensor.dtype == core::DType::String)
            continue;
        // In 128 bits: a shape whose element count overflows 64 bits must have been refused (one with
        // a dimension 0 holds nothing, however large the others).
        __int128 bytes = core::dtypeBytes(tensor.dtype);
        const bool empty = std::find(tensor.shape.begin(), tensor.shape.end(), 0) != tensor.shape.end();
        for (auto d : tensor.shape) {
            if (d < 0)
                fuzz::fail(std::string(name) + " returned a negative dimension");
            if (empty)
                continue;
            bytes = bytes * d;
            if (bytes > (__int128(1) << 62))
                fuzz::fail(std::string(name) + " returned a shape of more than 2^62 bytes");
        }
        if (empty)
            bytes = 0;
        if (bytes != __int128(tensor.data.size()))
            fuzz::fail(std::string(name) + " returned " + std::to_string(tensor.data.size()) + " bytes for a "
                + std::string(core::dtypeName(tensor.dtype)) + " tensor of " + std::to_string(static_cast<long long>(bytes))
                + " bytes");
    }
    return 0;
}
