// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "util/cancel.h"
#include "util/expected.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace core {

// A bounded reader for the pickles Python writes with protocols 2 to 5 (PyTorch's memory snapshots):
// dicts, lists, tuples, str, bytes, int (within int64), float, bool and None. It never executes
// anything: the opcodes that name a class or call a function (GLOBAL, STACK_GLOBAL, REDUCE, BUILD,
// NEWOBJ, INST, OBJ, PERSID, ...) are refused, as are the text opcodes of protocols 0 and 1. Every
// refusal names the source and the byte offset of the opcode: truncation, stack underflow, a memo
// index never stored, a length beyond the rest of the file, nesting deeper than kMaxPickleDepth, a
// container that holds itself through the memo.
//
// Values live in one flat table owned by PickleDocument; strings and bytes are views into the
// pickle's own bytes, which the document keeps. A memo reference (BINGET) shares the value rather
// than copying it, so the table stays within a small multiple of the file (16 bytes per value, 4 per
// container entry, a vector per container and the memo's map) and parsing is linear in the file's
// length.

inline constexpr int kMaxPickleDepth = 64; // containers inside containers; a snapshot nests 6 deep

class PickleDocument;

// A read-only handle to one value of a PickleDocument; valid while the document lives.
class PickleValue {
public:
    enum class Kind : std::uint8_t { None, Bool, Int, Float, String, Bytes, List, Tuple, Dict };

    Kind kind() const;
    bool isNone() const { return kind() == Kind::None; }
    bool isInt() const { return kind() == Kind::Int; }
    bool isString() const { return kind() == Kind::String; }
    bool isDict() const { return kind() == Kind::Dict; }
    bool isList() const { return kind() == Kind::List || kind() == Kind::Tuple; } // a tuple reads as a list
    bool asBool() const;
    std::int64_t asInt() const;
    double asFloat() const;
    std::string_view asString() const; // the UTF-8 bytes of a str, the bytes of bytes

    // List and tuple: their items; dict: its entries (a key stored twice counts twice).
    std::size_t size() const;
    PickleValue operator[](std::size_t index) const; // list or tuple item
    // Dict lookup by string key; the last value stored under it wins, as in Python. Linear in the
    // dict's entries: snapshot dicts hold a handful of keys.
    std::optional<PickleValue> find(std::string_view key) const;
    // Dict entries in insertion order (a key stored twice appears twice): key, value.
    std::size_t entryCount() const;
    PickleValue entryKey(std::size_t index) const;
    PickleValue entryValue(std::size_t index) const;

    // "dict", "list", "str", "int", ... for messages.
    std::string_view typeName() const;

private:
    friend class PickleDocument;
    friend class PickleParser;
    PickleValue(const PickleDocument* document, std::uint32_t node) : m_document(document), m_node(node) { }
    const PickleDocument* m_document;
    std::uint32_t m_node;
};

class PickleDocument {
public:
    PickleValue root() const { return PickleValue(this, m_root); }
    std::size_t valueCount() const { return m_nodes.size(); }

private:
    friend class PickleValue;
    friend class PickleParser;
    struct Node {
        PickleValue::Kind kind = PickleValue::Kind::None;
        std::uint32_t aux = 0; // string/bytes: length; list/tuple/dict: index in m_containers
        std::int64_t value = 0; // int, bool; a float's bits; string/bytes: offset in m_bytes
    };
    std::string m_bytes;
    std::vector<Node> m_nodes;
    // Per container its node indices: items for a list or tuple, key and value alternating for a dict.
    std::vector<std::vector<std::uint32_t>> m_containers;
    std::uint32_t m_root = 0;
};

// Parses the pickle in `bytes` (taken over: strings point into it). Messages read
// "SOURCE: byte N: ...". `progress` hears "parsing the pickle" with the fraction of bytes read, and
// its cancel ends the parse with ErrorCode::Cancelled.
Expected<std::shared_ptr<const PickleDocument>> parsePickle(
    std::string bytes, const std::string& source, const LoadProgress& progress = {});

// Reads a pickle file, gzip-compressed or not (magic 1f 8b), under kMaxSnapshotBytes before and
// after decompression. In a compressed file the byte offsets count the decompressed pickle, and
// messages say so. `progress`: "reading the file", "decompressing" and the parse's stage.
Expected<std::shared_ptr<const PickleDocument>> readPickleFile(const std::filesystem::path& file, const LoadProgress& progress = {});

} // namespace core
