// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

// ONNX external data (a tensor whose bytes lie in another file): where they are, checked before
// anything is read. Import checks every initializer's reference, so `plan` refuses what `run`
// could not read; the executor's weight loader reads through the same check.

#include "util/expected.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace onnx {
class TensorProto;
}

namespace core::onnxdetail {

struct ExternalRange {
    std::filesystem::path file; // canonical, inside the model's folder
    std::int64_t offset = 0;
    std::int64_t length = 0;
    bool missing = false; // the file does not exist (accepted only when not fileRequired)
};

// The file and byte range of `tensor`'s external data. `modelDir` is the folder of the model file;
// `what` (the model file) starts every message, which names the tensor and its location. Refused:
// a missing or absolute location, one that resolves (symbolic links followed) outside modelDir, a
// file that is not a readable regular file, offset or length that are not decimal byte counts, a
// range past the end of the file, and a length other than `expectedBytes` (the tensor's dims times
// its element size; < 0: not checked). Without a length: to the end of the file. Unless
// `fileRequired`, a file that does not exist is no error (planning needs only the dims; a model may
// travel without its weights): every other check still applies.
Expected<ExternalRange> locateExternalData(const onnx::TensorProto& tensor, const std::filesystem::path& modelDir,
                                           std::int64_t expectedBytes, const std::string& what, bool fileRequired);

// The byte size `tensor`'s dims and element type declare; -1 for strings, unknown element types,
// negative dims or an overflow.
std::int64_t declaredBytes(const onnx::TensorProto& tensor);

} // namespace core::onnxdetail
