// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/pickle.h"

#include "io/gunzip.h"
#include "util/readfile.h"

#include <bit>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>

namespace core {

namespace {
using Kind = PickleValue::Kind;

// Names of the opcodes of protocols 0 to 5, for messages; nullptr for a byte that is no opcode.
const char* opcodeName(std::uint8_t op)
{
    switch (op) {
    case 0x80: return "PROTO";
    case 0x95: return "FRAME";
    case '.': return "STOP";
    case '}': return "EMPTY_DICT";
    case ']': return "EMPTY_LIST";
    case ')': return "EMPTY_TUPLE";
    case '(': return "MARK";
    case 's': return "SETITEM";
    case 'u': return "SETITEMS";
    case 'a': return "APPEND";
    case 'e': return "APPENDS";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 't': return "TUPLE";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'M': return "BININT2";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'G': return "BINFLOAT";
    case 0x8c: return "SHORT_BINUNICODE";
    case 'X': return "BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 'C': return "SHORT_BINBYTES";
    case 'B': return "BINBYTES";
    case 0x8e: return "BINBYTES8";
    case 0x96: return "BYTEARRAY8";
    case 'N': return "NONE";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x94: return "MEMOIZE";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 'h': return "BINGET";
    case 'j': return "LONG_BINGET";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    // Opcodes that name, build or call Python objects: never run.
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    // Protocol 0 and 1 text forms and sets: no object is run, but snapshots never hold them.
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    case 'd': return "DICT";
    case 'l': return "LIST";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    default: return nullptr;
    }
}

bool executes(std::uint8_t op)
{
    switch (op) {
    case 'c': case 0x93: case 'R': case 'b': case 0x81: case 0x92: case 'i': case 'o': case 'P': case 'Q':
    case 0x82: case 0x83: case 0x84: case 0x97: case 0x98:
        return true;
    default:
        return false;
    }
}

std::string hexByte(std::uint8_t op)
{
    const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[op >> 4] + digits[op & 15];
}
} // namespace

class PickleParser {
public:
    // Takes over `bytes`; what the document keeps of them is settled at STOP.
    PickleParser(PickleDocument& document, std::string bytes, const std::string& source, const LoadProgress& progress)
        : m_doc(document), m_bytes(std::move(bytes)), m_source(source), m_progress(progress)
    {
        m_data = m_bytes;
        reserveTables();
    }

    Status run();
    Status checkStructure();

private:
    static constexpr std::uint32_t kInlineInt = PickleDocument::kInlineInt;

    Error fail(const std::string& what) const
    {
        return makeError(ErrorCode::InvalidModel, m_source + ": byte " + std::to_string(m_opStart) + ": " + what);
    }
    std::string opName() const
    {
        const char* name = opcodeName(m_op);
        return std::string(name ? name : "?") + " (" + hexByte(m_op) + ")";
    }
    std::size_t remaining() const { return m_data.size() - m_pos; }
    // The next `n` argument bytes of the current opcode, little-endian, as an unsigned number.
    bool readUnsigned(std::size_t n, std::uint64_t& value, Error& error)
    {
        if (remaining() < n) {
            error = fail("the pickle ends inside " + opName() + ": it needs " + std::to_string(n) + " more bytes, "
                + std::to_string(remaining()) + " remain");
            return false;
        }
        value = 0;
        for (std::size_t i = 0; i < n; ++i)
            value |= std::uint64_t(static_cast<unsigned char>(m_data[m_pos + i])) << (8 * i);
        m_pos += n;
        return true;
    }
    // Values above the innermost MARK (Python keeps a fresh stack per mark).
    std::size_t available() const { return m_stack.size() - (m_marks.empty() ? 0 : m_marks.back()); }
    Status needValues(std::size_t n) const
    {
        if (available() < n)
            return fail(opName() + " needs " + std::to_string(n) + " value" + (n == 1 ? "" : "s") + " on the stack, finds "
                + std::to_string(available()) + (m_marks.empty() ? "" : " above the last MARK"));
        return {};
    }
    Kind kindOf(std::uint32_t value) const { return (value & kInlineInt) ? Kind::Int : m_doc.m_kinds[value]; }
    bool isContainer(std::uint32_t value) const
    {
        const auto kind = kindOf(value);
        return kind == Kind::List || kind == Kind::Tuple || kind == Kind::Dict;
    }
    Expected<std::uint32_t> addNode(Kind kind, std::int64_t payload)
    {
        if (m_doc.m_kinds.size() >= kInlineInt - 1) // handles at and above kInlineInt are inline ints
            return fail("more than 2 billion values: beyond what a memory snapshot holds");
        m_doc.m_kinds.push_back(kind);
        m_doc.m_payloads.push_back(payload);
        m_heights.push_back(0);
        return std::uint32_t(m_doc.m_kinds.size() - 1);
    }
    // Where a container's items are: `begin` in m_items, or with kGrown in m_grown.
    struct Range {
        std::uint64_t begin = 0;
        std::uint64_t count = 0;
    };
    Range rangeOf(std::uint32_t container) const
    {
        const auto payload = m_doc.m_payloads[container];
        if (payload >= 0)
            return { std::uint64_t(payload) >> PickleDocument::kCountBits, std::uint64_t(payload) & ((std::uint64_t(1) << PickleDocument::kCountBits) - 1) };
        const auto& record = m_doc.m_containers[std::size_t(-1 - payload)];
        return { record.begin, record.count };
    }
    void setRange(std::uint32_t container, Range range)
    {
        auto& payload = m_doc.m_payloads[container];
        if (payload >= 0 && range.begin < (std::uint64_t(1) << 40) && range.count < (std::uint64_t(1) << PickleDocument::kCountBits)) {
            payload = std::int64_t(range.begin << PickleDocument::kCountBits | range.count);
            return;
        }
        if (payload >= 0) {
            payload = -1 - std::int64_t(m_doc.m_containers.size());
            m_doc.m_containers.push_back({});
        }
        m_doc.m_containers[std::size_t(-1 - payload)] = { range.begin, range.count };
    }
    Status pushNode(Kind kind, std::int64_t payload)
    {
        auto index = addNode(kind, payload);
        if (!index)
            return index.error();
        m_stack.push_back(*index);
        return {};
    }
    Status pushInt(std::int64_t value)
    {
        if (value >= 0 && value < std::int64_t(kInlineInt)) {
            m_stack.push_back(std::uint32_t(value) | kInlineInt);
            return {};
        }
        return pushNode(Kind::Int, value);
    }
    // None, True and False: one shared entry each, made when first seen (values have no identity).
    Status pushConstant(Kind kind, bool value)
    {
        auto& shared = kind == Kind::None ? m_none : value ? m_true : m_false;
        if (!shared) {
            auto index = addNode(kind, value);
            if (!index)
                return index.error();
            shared = *index;
        }
        m_stack.push_back(*shared);
        return {};
    }
    // A new container holding the stack's values from `from` on, which it takes off the stack.
    Status pushContainer(Kind kind, std::size_t from)
    {
        std::uint8_t height = 0;
        for (std::size_t i = from; i < m_stack.size(); ++i)
            if (auto s = noteChild(height, m_stack[i]); !s)
                return s;
        const auto container = addNode(kind, 0);
        if (!container)
            return container.error();
        m_heights[*container] = height;
        setRange(*container, { m_doc.m_items.size(), m_stack.size() - from });
        m_doc.m_items.insert(m_doc.m_items.end(), m_stack.begin() + std::ptrdiff_t(from), m_stack.end());
        m_stack.resize(from);
        m_stack.push_back(*container);
        return {};
    }
    // Keeps the nesting height of a container up to date as `child` goes in; refuses beyond the cap.
    Status noteChild(std::uint8_t& height, std::uint32_t child)
    {
        if (!isContainer(child))
            return {};
        height = std::max<std::uint8_t>(height, std::uint8_t(m_heights[child] + 1));
        if (height > kMaxPickleDepth)
            return fail("containers nest deeper than " + std::to_string(kMaxPickleDepth) + " levels");
        return {};
    }
    Status pushString(Kind kind, std::uint64_t length)
    {
        if (length > remaining())
            return fail(opName() + " declares " + std::to_string(length) + " bytes, but only " + std::to_string(remaining())
                + " remain in the file");
        m_doc.m_spans.push_back(PickleDocument::Span { m_pos, length });
        m_pos += std::size_t(length);
        return pushNode(kind, std::int64_t(m_doc.m_spans.size() - 1));
    }
    Status pushLong(std::uint64_t length);
    Status insert(bool dict, std::size_t count);
    Status append(std::uint32_t container, const std::vector<std::uint32_t>& items);
    // The position of the innermost MARK, which is dropped; the values above it stay on the stack.
    Status popMark(std::size_t& from)
    {
        if (m_marks.empty())
            return fail(opName() + " needs a MARK before it, and there is none");
        from = m_marks.back();
        m_marks.pop_back();
        return {};
    }
    Status memoPut(std::uint64_t index)
    {
        if (auto s = needValues(1); !s)
            return s;
        const auto key = std::uint32_t(index);
        if (key < m_memoDense.size())
            m_memoDense[key] = m_stack.back();
        else if (key == m_memoDense.size() && !m_memoSparse.contains(key))
            m_memoDense.push_back(m_stack.back());
        else
            m_memoSparse[key] = m_stack.back();
        return {};
    }
    std::optional<std::uint32_t> memoGet(std::uint32_t key) const
    {
        if (key < m_memoDense.size())
            return m_memoDense[key];
        const auto found = m_memoSparse.find(key);
        return found == m_memoSparse.end() ? std::nullopt : std::optional(found->second);
    }
    // Room for the tables, estimated from the pickle's length so that they seldom grow by copying
    // (a copy of a table holds it twice for a moment: a gigabyte's pool is the largest allocation of
    // the parse). A snapshot holds about 1 value per 14 bytes and 1 container item per 3.7; the
    // estimates stay above that. Reserved room that is never filled is never
    // touched, so it takes address space but no memory. Without the room (the system refuses it)
    // the tables grow as they go.
    void reserveTables()
    {
        const auto bytes = m_data.size();
        try {
            m_doc.m_kinds.reserve(bytes / 8);
            m_doc.m_payloads.reserve(bytes / 8);
            m_doc.m_items.reserve(bytes / 2);
            m_heights.reserve(bytes / 8);
        } catch (const std::bad_alloc&) {
        } catch (const std::length_error&) {
        }
    }
    // The document keeps the str and bytes values: copied out when they are a small part of the
    // pickle (the usual case: keys and names are memoized), else the pickle's bytes themselves.
    void keepStrings();

    PickleDocument& m_doc;
    std::string m_bytes;
    const std::string& m_source;
    const LoadProgress& m_progress;
    std::string_view m_data;
    std::size_t m_pos = 0;
    std::size_t m_opStart = 0;
    std::uint8_t m_op = 0;
    std::vector<std::uint32_t> m_stack; // value handles
    std::vector<std::size_t> m_marks;
    std::vector<std::uint32_t> m_scratch; // the values an insert takes, reused
    // The memo as Python keeps it (a dict of index to value): indices stored in order (MEMOIZE, and
    // what Python's pickler writes with BINPUT) in a vector, any other in the map; each index in one.
    std::vector<std::uint32_t> m_memoDense;
    std::unordered_map<std::uint32_t, std::uint32_t> m_memoSparse;
    std::optional<std::uint32_t> m_none, m_true, m_false;
    std::vector<std::uint8_t> m_heights; // per value: the most containers nested below it (at most kMaxPickleDepth)
};
static_assert(kMaxPickleDepth < 250, "nesting heights are kept in a byte");

void PickleParser::keepStrings()
{
    auto& spans = m_doc.m_spans;
    std::uint64_t total = 0;
    for (const auto& span : spans)
        total += span.count;
    if (total > m_bytes.size() / 4) {
        m_doc.m_strings = std::move(m_bytes);
        return;
    }
    m_doc.m_strings.reserve(std::size_t(total));
    for (auto& span : spans) {
        const auto begin = m_doc.m_strings.size();
        m_doc.m_strings.append(m_bytes, std::size_t(span.begin), std::size_t(span.count));
        span.begin = begin;
    }
    m_bytes.clear();
    m_bytes.shrink_to_fit();
    m_data = {};
}

Status PickleParser::pushLong(std::uint64_t length)
{
    if (length > remaining())
        return fail(opName() + " declares " + std::to_string(length) + " bytes, but only " + std::to_string(remaining())
            + " remain in the file");
    // Little-endian two's complement; bytes past the eighth may only repeat the sign.
    const auto* bytes = reinterpret_cast<const unsigned char*>(m_data.data() + m_pos);
    const bool negative = length > 0 && (bytes[length - 1] & 0x80);
    std::uint64_t bits = negative ? ~std::uint64_t(0) : 0;
    for (std::uint64_t i = 0; i < length; ++i) {
        if (i < 8) {
            bits &= ~(std::uint64_t(0xff) << (8 * i));
            bits |= std::uint64_t(bytes[i]) << (8 * i);
        } else if (bytes[i] != (negative ? 0xff : 0x00)) {
            return fail("an integer of " + std::to_string(length) + " bytes does not fit 64 bits (MemPlan reads integers within int64)");
        }
    }
    if (length > 8 && bool(bits >> 63) != negative)
        return fail("an integer of " + std::to_string(length) + " bytes does not fit 64 bits (MemPlan reads integers within int64)");
    m_pos += std::size_t(length);
    return pushInt(std::bit_cast<std::int64_t>(bits));
}

// Adds `items` after the container's own: in place when its range is the pool's last; otherwise
// the container moves to a vector of its own (m_grown) and grows there. So building a container by
// many inserts stays linear, and the pool holds no copies.
Status PickleParser::append(std::uint32_t container, const std::vector<std::uint32_t>& items)
{
    auto& pool = m_doc.m_items;
    auto range = rangeOf(container);
    const std::uint64_t needed = range.count + items.size();
    if (range.begin & PickleDocument::kGrown) {
        auto& grown = m_doc.m_grown[std::size_t(range.begin & ~PickleDocument::kGrown)];
        grown.insert(grown.end(), items.begin(), items.end());
    } else if (items.empty() || range.begin + range.count == pool.size()) {
        pool.insert(pool.end(), items.begin(), items.end());
    } else {
        std::vector<std::uint32_t> grown;
        grown.reserve(std::size_t(std::max<std::uint64_t>(needed, 2 * range.count)));
        grown.insert(grown.end(), pool.begin() + std::ptrdiff_t(range.begin), pool.begin() + std::ptrdiff_t(range.begin + range.count));
        grown.insert(grown.end(), items.begin(), items.end());
        range.begin = m_doc.m_grown.size() | PickleDocument::kGrown;
        m_doc.m_grown.push_back(std::move(grown));
    }
    range.count = needed;
    setRange(container, range);
    return {};
}

// SETITEM(S) (dict) or APPEND(S) (list): the container lies just below the `count` values taken.
Status PickleParser::insert(bool dict, std::size_t count)
{
    auto& items = m_scratch;
    std::size_t from = 0;
    if (count == 0) {
        if (auto s = popMark(from); !s)
            return s;
    } else {
        if (auto s = needValues(count); !s)
            return s;
        from = m_stack.size() - count;
    }
    items.assign(m_stack.begin() + std::ptrdiff_t(from), m_stack.end());
    m_stack.resize(from);
    if (auto s = needValues(1); !s)
        return s;
    const auto target = m_stack.back();
    const Kind wanted = dict ? Kind::Dict : Kind::List;
    if (kindOf(target) != wanted)
        return fail(opName() + " adds to a " + std::string(PickleValue(&m_doc, target).typeName()) + ", not a "
            + (dict ? "dict" : "list"));
    if (dict && items.size() % 2 != 0)
        return fail(opName() + " has an odd number of values (" + std::to_string(items.size()) + "): keys and values come in pairs");
    auto height = m_heights[target];
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (dict && i % 2 == 0) {
            const auto keyKind = kindOf(items[i]);
            if (keyKind != Kind::String && keyKind != Kind::Int && keyKind != Kind::Bytes)
                return fail("a dict key is a " + std::string(PickleValue(&m_doc, items[i]).typeName())
                    + ": a memory snapshot's keys are strings or integers");
        }
        if (auto s = noteChild(height, items[i]); !s)
            return s;
    }
    m_heights[target] = height;
    return append(target, items);
}

Status PickleParser::run()
{
    Error error;
    std::uint64_t n = 0;
    std::uint32_t ops = 0;
    while (m_pos < m_data.size()) {
        if ((++ops & 0xFFFF) == 0) { // every 65536 opcodes: a gigabyte of pickle holds some 100 million
            if (m_progress.cancelled())
                return makeError(ErrorCode::Cancelled, m_source + ": reading was cancelled at byte " + std::to_string(m_pos));
            m_progress("parsing the pickle", double(m_pos) / double(m_data.size()));
        }
        m_opStart = m_pos;
        m_op = static_cast<std::uint8_t>(m_data[m_pos++]);
        Status status;
        switch (m_op) {
        case 0x80:
            if (!readUnsigned(1, n, error))
                return error;
            if (n > 5)
                return fail("pickle protocol " + std::to_string(n) + " is newer than 5, the newest MemPlan reads");
            break;
        case 0x95: // FRAME: a length hint for buffered readers; the whole file is in memory already
            if (!readUnsigned(8, n, error))
                return error;
            if (n > remaining())
                return fail("FRAME declares " + std::to_string(n) + " bytes, but only " + std::to_string(remaining()) + " remain in the file");
            break;
        case '}': status = pushContainer(Kind::Dict, m_stack.size()); break;
        case ']': status = pushContainer(Kind::List, m_stack.size()); break;
        case ')': status = pushContainer(Kind::Tuple, m_stack.size()); break;
        case '(':
            if (m_marks.size() >= std::size_t(kMaxPickleDepth))
                return fail("MARKs nest deeper than " + std::to_string(kMaxPickleDepth) + " levels");
            m_marks.push_back(m_stack.size());
            break;
        case 's': status = insert(true, 2); break;
        case 'u': status = insert(true, 0); break;
        case 'a': status = insert(false, 1); break;
        case 'e': status = insert(false, 0); break;
        case 0x85: case 0x86: case 0x87: {
            const std::size_t count = m_op - 0x84;
            if (status = needValues(count); !status)
                return status;
            status = pushContainer(Kind::Tuple, m_stack.size() - count);
            break;
        }
        case 't': {
            std::size_t from = 0;
            if (status = popMark(from); !status)
                return status;
            status = pushContainer(Kind::Tuple, from);
            break;
        }
        case '0': // POP: the top value, or the innermost MARK when none is above it (as Python does)
            if (available() > 0)
                m_stack.pop_back();
            else if (!m_marks.empty())
                m_marks.pop_back();
            else
                return fail("POP on an empty stack");
            break;
        case '1': {
            std::size_t from = 0;
            if (status = popMark(from); status)
                m_stack.resize(from);
            break;
        }
        case '2':
            if (status = needValues(1); status)
                m_stack.push_back(m_stack.back());
            break;
        case 'J':
            if (!readUnsigned(4, n, error))
                return error;
            status = pushInt(std::int64_t(std::int32_t(std::uint32_t(n))));
            break;
        case 'K': case 'M':
            if (!readUnsigned(m_op == 'K' ? 1 : 2, n, error))
                return error;
            status = pushInt(std::int64_t(n));
            break;
        case 0x8a: case 0x8b:
            if (!readUnsigned(m_op == 0x8a ? 1 : 4, n, error))
                return error;
            if (m_op == 0x8b && (n & 0x80000000u))
                return fail("LONG4 declares a negative length");
            status = pushLong(n);
            break;
        case 'G': {
            if (!readUnsigned(8, n, error))
                return error;
            // Big-endian on the wire: readUnsigned read it little-endian, so swap.
            std::uint64_t bits = 0;
            for (int i = 0; i < 8; ++i)
                bits |= ((n >> (8 * i)) & 0xff) << (8 * (7 - i));
            status = pushNode(Kind::Float, std::bit_cast<std::int64_t>(bits));
            break;
        }
        case 0x8c: case 'X': case 0x8d: case 'C': case 'B': case 0x8e: case 0x96: {
            const bool text = m_op == 0x8c || m_op == 'X' || m_op == 0x8d;
            const std::size_t width = (m_op == 0x8c || m_op == 'C') ? 1 : (m_op == 'X' || m_op == 'B') ? 4 : 8;
            if (!readUnsigned(width, n, error))
                return error;
            status = pushString(text ? Kind::String : Kind::Bytes, n);
            break;
        }
        case 'N': status = pushConstant(Kind::None, false); break;
        case 0x88: case 0x89: status = pushConstant(Kind::Bool, m_op == 0x88); break;
        case 0x94: status = memoPut(m_memoDense.size() + m_memoSparse.size()); break;
        case 'q': case 'r':
            if (!readUnsigned(m_op == 'q' ? 1 : 4, n, error))
                return error;
            status = memoPut(n);
            break;
        case 'h': case 'j': {
            if (!readUnsigned(m_op == 'h' ? 1 : 4, n, error))
                return error;
            const auto found = memoGet(std::uint32_t(n));
            if (!found)
                return fail(opName() + " reads memo index " + std::to_string(n) + ", which was never stored");
            m_stack.push_back(*found); // shared, not copied: the value table stays linear in the file
            break;
        }
        case '.':
            if (!m_marks.empty() || m_stack.size() != 1)
                return fail("STOP with " + std::to_string(m_stack.size()) + " values and " + std::to_string(m_marks.size())
                    + " open MARKs on the stack; a pickle ends with exactly one value");
            m_doc.m_root = m_stack.back();
            keepStrings();
            return checkStructure();
        default:
            if (executes(m_op))
                return fail("pickle opcode " + opName()
                    + " is not allowed: a memory snapshot holds only dicts, lists, strings and numbers");
            if (opcodeName(m_op))
                return fail("pickle opcode " + opName()
                    + " is not supported: MemPlan reads the dicts, lists, tuples, strings, bytes, numbers, booleans and None of pickle protocols 2 to 5");
            return fail("byte " + hexByte(m_op) + " is not a pickle opcode");
        }
        if (!status)
            return status;
    }
    m_opStart = m_data.size();
    return fail("the pickle ends without STOP" + std::string(m_data.empty() ? " (the file is empty)" : ""));
}

// A value added to a container after that container went into another (through the memo) may form
// a cycle or raise the nesting above the cap where noteChild could not see it: one linear pass over
// the containers reachable from the root (each visited once) settles both.
Status PickleParser::checkStructure()
{
    enum : std::uint8_t { White, Grey, Black };
    // Per value (only containers' entries are used): visit state and nesting height, at most kMaxPickleDepth.
    std::vector<std::uint8_t> colour(m_doc.m_kinds.size(), White);
    std::vector<std::uint8_t> height(m_doc.m_kinds.size(), 0);
    struct Frame {
        std::uint32_t container;
        std::size_t next;
    };
    std::vector<Frame> path;
    const auto tooDeep = [&]() {
        return makeError(ErrorCode::InvalidModel, m_source + ": containers nest deeper than " + std::to_string(kMaxPickleDepth)
                + " levels (through memo references)");
    };
    if (!isContainer(m_doc.m_root))
        return {};
    path.push_back({ m_doc.m_root, 0 });
    colour[m_doc.m_root] = Grey;
    while (!path.empty()) {
        auto& top = path.back();
        const auto items = m_doc.itemsOf(top.container);
        if (top.next == items.count) {
            colour[top.container] = Black;
            const int h = height[top.container];
            path.pop_back();
            if (!path.empty())
                height[path.back().container] = std::uint8_t(std::max<int>(height[path.back().container], h + 1));
            continue;
        }
        const auto c = items.data[top.next++];
        if (!isContainer(c))
            continue;
        if (colour[c] == Grey)
            return makeError(ErrorCode::InvalidModel, m_source + ": a container holds itself (through memo references); a memory snapshot is a tree");
        if (colour[c] == Black) {
            if (int(path.size()) + height[c] > kMaxPickleDepth)
                return tooDeep();
            height[top.container] = std::uint8_t(std::max<int>(height[top.container], height[c] + 1));
            continue;
        }
        if (int(path.size()) >= kMaxPickleDepth)
            return tooDeep();
        colour[c] = Grey;
        path.push_back({ c, 0 });
    }
    return {};
}

PickleDocument::Items PickleDocument::itemsOf(std::uint32_t container) const
{
    const auto payload = m_payloads[container];
    if (payload >= 0)
        return { m_items.data() + (std::uint64_t(payload) >> kCountBits), std::size_t(std::uint64_t(payload) & ((std::uint64_t(1) << kCountBits) - 1)) };
    const auto& record = m_containers[std::size_t(-1 - payload)];
    if (record.begin & kGrown)
        return { m_grown[std::size_t(record.begin & ~kGrown)].data(), std::size_t(record.count) };
    return { m_items.data() + record.begin, std::size_t(record.count) };
}

PickleValue::Kind PickleValue::kind() const
{
    return (m_node & PickleDocument::kInlineInt) ? Kind::Int : m_document->m_kinds[m_node];
}

bool PickleValue::asBool() const { return kind() == Kind::Bool && m_document->m_payloads[m_node] != 0; }

std::int64_t PickleValue::asInt() const
{
    if (m_node & PickleDocument::kInlineInt)
        return std::int64_t(m_node & ~PickleDocument::kInlineInt);
    const auto k = kind();
    return k == Kind::Int || k == Kind::Bool ? m_document->m_payloads[m_node] : 0;
}

double PickleValue::asFloat() const
{
    const auto k = kind();
    if (k == Kind::Float)
        return std::bit_cast<double>(m_document->m_payloads[m_node]);
    return k == Kind::Int ? double(asInt()) : 0.0;
}

std::string_view PickleValue::asString() const
{
    const auto k = kind();
    if (k != Kind::String && k != Kind::Bytes)
        return {};
    const auto& span = m_document->m_spans[std::size_t(m_document->m_payloads[m_node])];
    return std::string_view(m_document->m_strings).substr(std::size_t(span.begin), std::size_t(span.count));
}

const std::uint32_t* PickleValue::items() const { return m_document->itemsOf(m_node).data; }

std::size_t PickleValue::itemCount() const { return m_document->itemsOf(m_node).count; }

std::size_t PickleValue::size() const
{
    const auto k = kind();
    if (k == Kind::List || k == Kind::Tuple)
        return itemCount();
    return entryCount();
}

PickleValue PickleValue::operator[](std::size_t index) const { return PickleValue(m_document, items()[index]); }

std::size_t PickleValue::entryCount() const { return kind() == Kind::Dict ? itemCount() / 2 : 0; }

PickleValue PickleValue::entryKey(std::size_t index) const { return PickleValue(m_document, items()[2 * index]); }

PickleValue PickleValue::entryValue(std::size_t index) const { return PickleValue(m_document, items()[2 * index + 1]); }

std::optional<PickleValue> PickleValue::find(std::string_view key) const
{
    if (kind() != Kind::Dict)
        return std::nullopt;
    const auto* entries = items();
    for (std::size_t i = itemCount() / 2; i-- > 0;) {
        const PickleValue k(m_document, entries[2 * i]);
        if (k.kind() == Kind::String && k.asString() == key)
            return PickleValue(m_document, entries[2 * i + 1]);
    }
    return std::nullopt;
}

std::string_view PickleValue::typeName() const
{
    switch (kind()) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    }
    return "?";
}

Expected<std::shared_ptr<const PickleDocument>> parsePickle(std::string bytes, const std::string& source, const LoadProgress& progress)
{
    try {
        auto document = std::make_shared<PickleDocument>();
        PickleParser parser(*document, std::move(bytes), source, progress);
        if (auto status = parser.run(); !status)
            return status.error();
        return std::shared_ptr<const PickleDocument>(std::move(document));
    } catch (const std::bad_alloc&) {
        return makeError(ErrorCode::Io, source + ": not enough memory to read the pickle");
    }
}

Expected<std::shared_ptr<const PickleDocument>> readPickleFile(const std::filesystem::path& file, const LoadProgress& progress)
{
    progress("reading the file", 0);
    auto bytes = readFileCapped(file, kMaxSnapshotBytes, "a memory snapshot");
    if (!bytes)
        return bytes.error();
    if (!isGzip(*bytes))
        return parsePickle(std::move(*bytes), file.string(), progress);
    auto plain = gunzip(*bytes, kMaxSnapshotBytes, file.string(), progress);
    if (!plain)
        return plain.error();
    bytes->clear();
    bytes->shrink_to_fit();
    return parsePickle(std::move(*plain), file.string() + " (decompressed)", progress);
}

} // namespace core
