// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "util/readfile.h"

#include "util/format.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace core {

namespace {
std::string capText(std::int64_t maxBytes)
{
    return formatBytes(maxBytes) + " (" + std::to_string(maxBytes) + " bytes)";
}

std::string kindOf(std::filesystem::file_type type)
{
    using std::filesystem::file_type;
    switch (type) {
    case file_type::directory: return "a folder";
    case file_type::character: return "a character device";
    case file_type::block: return "a block device";
    case file_type::fifo: return "a FIFO (named pipe)";
    case file_type::socket: return "a socket";
    default: return "not a regular file";
    }
}
} // namespace

Expected<std::int64_t> checkReadableFile(const std::filesystem::path& file, std::int64_t maxBytes, std::string_view what)
{
    const auto name = file.string();
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec); // follows links: a link to /dev/zero is a device
    if (ec || !std::filesystem::exists(status))
        return makeError(ErrorCode::Io, name + ": no such file (expected " + std::string(what) + ")");
    if (!std::filesystem::is_regular_file(status))
        return makeError(ErrorCode::Io, name + ": is " + kindOf(status.type()) + ", not " + std::string(what) + " file");
    const auto size = std::filesystem::file_size(file, ec);
    if (ec)
        return makeError(ErrorCode::Io, name + ": cannot read the file size (" + ec.message() + ")");
    if (size > std::uintmax_t(maxBytes))
        return makeError(ErrorCode::Io, name + ": " + formatBytes(std::int64_t(std::min<std::uintmax_t>(size, INT64_MAX)))
                + ", larger than " + std::string(what) + " may be (" + capText(maxBytes) + ")");
    return std::int64_t(size);
}

Expected<std::string> readFileCapped(const std::filesystem::path& file, std::int64_t maxBytes, std::string_view what)
{
    auto size = checkReadableFile(file, maxBytes, what);
    if (!size)
        return size.error();
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(ErrorCode::Io, file.string() + ": cannot open: " + std::strerror(errno));
    std::string text;
    try {
        text.resize(std::size_t(*size));
        in.read(text.data(), std::streamsize(text.size()));
        text.resize(std::size_t(in.gcount()));
        // A file that grew since its size was read: take the rest in blocks, up to the cap.
        char block[64 * 1024];
        while (in) {
            in.read(block, sizeof block);
            text.append(block, std::size_t(in.gcount()));
            if (std::int64_t(text.size()) > maxBytes)
                return makeError(ErrorCode::Io, file.string() + ": grew past " + capText(maxBytes)
                        + " while being read, more than " + std::string(what) + " may be");
        }
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::Io, file.string() + ": not enough memory to read its " + formatBytes(*size));
    }
    if (in.bad())
        return makeError(ErrorCode::Io, file.string() + ": cannot read: " + std::strerror(errno));
    return text;
}

} // namespace core
