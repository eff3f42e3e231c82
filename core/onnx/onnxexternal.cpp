// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "onnx/onnxexternal.h"

#include "graph/graph.h"
#include "onnx/onnxvalue.h"

#include <onnx/onnx_pb.h>

#include <charconv>
#include <optional>
#include <system_error>

namespace core::onnxdetail {

namespace {

// A decimal byte count: digits only, no sign, no overflow.
std::optional<std::int64_t> parseCount(const std::string& text)
{
    std::int64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || ptr != end)
        return std::nullopt;
    return value;
}

// `inner` lies in `dir` (both canonical): dir's elements are a prefix of inner's.
bool within(const std::filesystem::path& inner, const std::filesystem::path& dir)
{
    auto i = inner.begin();
    for (auto d = dir.begin(); d != dir.end(); ++d, ++i)
        if (d->empty() && std::next(d) == dir.end())
            return true; // a trailing separator
        else if (i == inner.end() || *i != *d)
            return false;
    return true;
}

} // namespace

std::int64_t declaredBytes(const onnx::TensorProto& tensor)
{
    const auto dtype = dtypeFromOnnx(tensor.data_type());
    if (!dtype || *dtype == DType::String || dtypeBytes(*dtype) <= 0)
        return -1;
    std::int64_t bytes = dtypeBytes(*dtype);
    for (auto d : tensor.dims())
        if (d < 0 || (d > 0 && bytes > INT64_MAX / d))
            return -1;
        else
            bytes *= d;
    return bytes;
}

Expected<ExternalRange> locateExternalData(const onnx::TensorProto& tensor, const std::filesystem::path& modelDir,
                                           std::int64_t expectedBytes, const std::string& what, bool fileRequired)
{
    std::string location;
    std::optional<std::string> offsetText, lengthText;
    for (const auto& kv : tensor.external_data()) {
        if (kv.key() == "location")
            location = kv.value();
        else if (kv.key() == "offset")
            offsetText = kv.value();
        else if (kv.key() == "length")
            lengthText = kv.value();
    }
    const std::string whose = what + ": tensor '" + tensor.name() + "': external data";
    const std::string at = " '" + location + "'";
    const auto fail = [&](const std::string& why) { return makeError(ErrorCode::InvalidModel, whose + " location" + at + ": " + why); };
    if (location.empty())
        return makeError(ErrorCode::InvalidModel, whose + " has no location");
    const std::filesystem::path relative(location);
    if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
        return fail("an absolute path; external data must lie in the model's folder");
    ExternalRange range;
    std::error_code ec;
    const auto dir = std::filesystem::weakly_canonical(modelDir.empty() ? std::filesystem::path(".") : modelDir, ec);
    if (!ec)
        range.file = std::filesystem::weakly_canonical(dir / relative, ec);
    if (ec)
        return fail("cannot be resolved (" + ec.message() + ")");
    if (!within(range.file, dir))
        return fail("resolves to " + range.file.string() + ", outside the model's folder " + dir.string());
    std::optional<std::int64_t> length;
    if (offsetText) {
        const auto v = parseCount(*offsetText);
        if (!v)
            return fail("offset '" + *offsetText + "' is not a byte count");
        range.offset = *v;
    }
    if (lengthText) {
        length = parseCount(*lengthText);
        if (!length)
            return fail("length '" + *lengthText + "' is not a byte count");
        if (expectedBytes >= 0 && *length != expectedBytes)
            return fail("length " + *lengthText + " is not the " + std::to_string(expectedBytes)
                        + " bytes the tensor's dims and element type need");
    }
    if (!fileRequired && !std::filesystem::exists(std::filesystem::symlink_status(range.file, ec))) {
        range.length = length.value_or(expectedBytes);
        range.missing = true;
        return range; // planning needs only the dims: the file may stay behind
    }
    if (!std::filesystem::is_regular_file(range.file, ec))
        return fail("is not a file in the model's folder");
    const auto fileSize = std::int64_t(std::filesystem::file_size(range.file, ec));
    if (ec)
        return fail("cannot be read (" + ec.message() + ")");
    if (range.offset > fileSize)
        return fail("offset " + std::to_string(range.offset) + " lies past the end of the file (" + std::to_string(fileSize) + " bytes)");
    range.length = fileSize - range.offset;
    if (length) {
        if (*length > fileSize - range.offset)
            return fail("offset " + std::to_string(range.offset) + " and length " + std::to_string(*length)
                        + " reach past the end of the file (" + std::to_string(fileSize) + " bytes)");
        range.length = *length;
    }
    if (expectedBytes >= 0 && range.length != expectedBytes)
        return fail("holds " + std::to_string(range.length) + " bytes for the tensor, its dims and element type need "
                    + std::to_string(expectedBytes));
    return range;
}

} // namespace core::onnxdetail
