// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
// zlib rather than Qt: memplan_core links no Qt, and qUncompress reads zlib streams, not gzip.
#include "io/gunzip.h"

#include "util/format.h"

#include <algorithm>
#include <limits>
#include <new>

#include <zlib.h>

namespace core {

bool isGzip(std::string_view bytes)
{
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Expected<std::string> gunzip(std::string_view bytes, std::int64_t maxBytes, const std::string& source, const LoadProgress& progress)
{
    z_stream stream {};
    // 16 + MAX_WBITS: a gzip header and trailer (CRC-32 and length checked by zlib), not zlib's own.
    if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK)
        return makeError(ErrorCode::Io, source + ": cannot start gzip decompression");
    struct End {
        z_stream* s;
        ~End() { inflateEnd(s); }
    } end { &stream };

    std::string out;
    std::size_t consumed = 0; // compressed bytes handed to zlib so far
    char block[256 * 1024];
    try {
        while (true) {
            // zlib counts in uInt (32 bits); 16 MiB at a time also paces progress and cancellation.
            if (progress.cancelled())
                return makeError(ErrorCode::Cancelled, source + ": decompressing was cancelled at compressed byte " + std::to_string(consumed));
            progress("decompressing", bytes.empty() ? 1.0 : double(consumed) / double(bytes.size()));
            const auto chunk = std::min<std::size_t>(bytes.size() - consumed, std::size_t(16) << 20);
            stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + consumed));
            stream.avail_in = static_cast<uInt>(chunk);
            int result = Z_OK;
            do {
                stream.next_out = reinterpret_cast<Bytef*>(block);
                stream.avail_out = sizeof block;
                result = inflate(&stream, Z_NO_FLUSH);
                if (result == Z_NEED_DICT || result == Z_DATA_ERROR || result == Z_MEM_ERROR || result == Z_STREAM_ERROR)
                    return makeError(ErrorCode::InvalidModel, source + ": compressed byte "
                            + std::to_string(consumed + (chunk - stream.avail_in)) + ": corrupt gzip data ("
                            + (stream.msg ? stream.msg : "zlib error " + std::to_string(result)) + ")");
                const auto produced = sizeof block - stream.avail_out;
                if (std::int64_t(out.size() + produced) > maxBytes)
                    return makeError(ErrorCode::InvalidModel, source + ": decompresses to more than " + formatBytes(maxBytes)
                            + ", more than a memory snapshot may be");
                out.append(block, produced);
            } while (result == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0));
            const auto before = consumed;
            consumed += chunk - stream.avail_in;
            if (result == Z_STREAM_END) {
                if (consumed == bytes.size())
                    return out;
                if (!isGzip(bytes.substr(consumed)))
                    return makeError(ErrorCode::InvalidModel, source + ": compressed byte " + std::to_string(consumed)
                            + ": data after the end of the gzip stream is not another gzip member");
                inflateReset(&stream);
                continue;
            }
            if (consumed == bytes.size() || consumed == before) // all read, or zlib can make no progress
                return makeError(ErrorCode::InvalidModel, source + ": the gzip stream is truncated (it ends at compressed byte "
                        + std::to_string(consumed) + " before its end)");
        }
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::Io, source + ": not enough memory to decompress (" + formatBytes(std::int64_t(out.size())) + " so far)");
    }
}

} // namespace core
