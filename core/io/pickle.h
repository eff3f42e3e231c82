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
// Values live in flat tables owned by PickleDocument: per value a kind byte and an 8-byte payload;
// the items of every list, tuple and dict in one pooled array (a container is a range of it); the
// bytes of the str and bytes values copied out of the pickle when they are a small part of it (the
// pickle's own bytes are then dropped once parsed; else the document keeps them). Integers within
// [0, 2^31) take no table entry: the handle carries them; None, True and False have one entry each.
// A memo reference (BINGET) shares the value rather than copying it, so the tables stay within a
// small multiple of the file (9 bytes per value, 4 per container item) and parsing is linear in
// the file's length.

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
    // A list's, tuple's or dict's items in the document's pool, and how many.
    const std::uint32_t* items() const;
    std::size_t itemCount() const;
    const PickleDocument* m_document;
    std::uint32_t m_node;
};

class PickleDocument {
public:
    PickleValue root() const { return PickleValue(this, m_root); }
    std::size_t valueCount() const { return m_kinds.size(); } // the values with a table entry

private:
    friend class PickleValue;
    friend class PickleParser;
    // A value handle with this bit set is an int in [0, 2^31) held in the handle itself; without
    // it, the index of an entry of m_kinds and m_payloads.
    static constexpr std::uint32_t kInlineInt = 0x80000000u;
    struct Span {
        std::uint64_t begin = 0; // in m_strings
        std::uint64_t count = 0;
    };
    // A list's, tuple's or dict's payload: its range of m_items packed as begin << kCountBits | count
    // when begin < 2^40 and count < 2^kCountBits (the usual case, no other record); else, negative,
    // -1 - the index of its Container.
    static constexpr int kCountBits = 23;
    // With this bit, Container::begin is an index in m_grown rather than in m_items.
    static constexpr std::uint64_t kGrown = std::uint64_t(1) << 63;
    struct Container {
        std::uint64_t begin = 0; // in m_items (or, with kGrown, in m_grown)
        std::uint64_t count = 0; // a list's or tuple's items, a dict's keys and values alternating
    };
    struct Items {
        const std::uint32_t* data = nullptr;
        std::size_t count = 0;
    };
    Items itemsOf(std::uint32_t container) const; // a list's, tuple's or dict's value handle
    std::vector<PickleValue::Kind> m_kinds;
    // Per value: int, bool; a float's bits; str/bytes: index in m_spans; list/tuple/dict: see kCountBits.
    std::vector<std::int64_t> m_payloads;
    std::string m_strings;
    std::vector<Span> m_spans;
    std::vector<Container> m_containers;
    std::vector<std::uint32_t> m_items;
    // Containers that outgrew their range of m_items while other values were built after it (a list
    // filled by many APPENDS, as Python writes long lists): their items, each in its own vector.
    std::vector<std::vector<std::uint32_t>> m_grown;
    std::uint32_t m_root = 0;
};

// Parses the pickle in `bytes` (taken over; released before returning unless its strings are more
// than a quarter of it). Messages read "SOURCE: byte N: ...". `progress` hears "parsing the pickle"
// with the fraction of bytes read, and its cancel ends the parse with ErrorCode::Cancelled.
Expected<std::shared_ptr<const PickleDocument>> parsePickle(
    std::string bytes, const std::string& source, const LoadProgress& progress = {});

// Reads a pickle file, gzip-compressed or not (magic 1f 8b), under kMaxSnapshotBytes before and
// after decompression. In a compressed file the byte offsets count the decompressed pickle, and
// messages say so. `progress`: "reading the file", "decompressing" and the parse's stage.
Expected<std::shared_ptr<const PickleDocument>> readPickleFile(const std::filesystem::path& file, const LoadProgress& progress = {});

} // namespace core
