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
    // Takes over `bytes`: the document's strings point into them.
    PickleParser(PickleDocument& document, std::string bytes, const std::string& source, const LoadProgress& progress)
        : m_doc(document), m_source(source), m_progress(progress)
    {
        m_doc.m_bytes = std::move(bytes);
        m_data = m_doc.m_bytes;
    }

    Status run();
    Status checkStructure();

private:
    using Node = PickleDocument::Node;

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
    Expected<std::uint32_t> addNode(Node node)
    {
        if (m_doc.m_nodes.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
            return fail("more than 4 billion values: beyond what a memory snapshot holds");
        m_doc.m_nodes.push_back(node);
        return std::uint32_t(m_doc.m_nodes.size() - 1);
    }
    Status pushNode(Node node)
    {
        auto index = addNode(node);
        if (!index)
            return index.error();
        m_stack.push_back(*index);
        return {};
    }
    Status pushContainer(Kind kind, std::vector<std::uint32_t> items = {})
    {
        m_doc.m_containers.push_back(std::move(items));
        m_heights.push_back(0);
        Node node { kind, std::uint32_t(m_doc.m_containers.size() - 1), 0 };
        for (const auto item : m_doc.m_containers.back())
            if (auto s = noteChild(node, item); !s)
                return s;
        return pushNode(node);
    }
    bool isContainer(const Node& node) const { return node.kind == Kind::List || node.kind == Kind::Tuple || node.kind == Kind::Dict; }
    // Keeps the nesting height of `parent` up to date as a child goes in; refuses beyond the cap.
    Status noteChild(const Node& parent, std::uint32_t child)
    {
        const auto& c = m_doc.m_nodes[child];
        if (!isContainer(c))
            return {};
        auto& height = m_heights[parent.aux];
        height = std::max(height, m_heights[c.aux] + 1);
        if (height > kMaxPickleDepth)
            return fail("containers nest deeper than " + std::to_string(kMaxPickleDepth) + " levels");
        return {};
    }
    Status pushString(Kind kind, std::uint64_t length)
    {
        if (length > remaining())
            return fail(opName() + " declares " + std::to_string(length) + " bytes, but only " + std::to_string(remaining())
                + " remain in the file");
        Node node { kind, std::uint32_t(length), std::int64_t(m_pos) };
        m_pos += std::size_t(length);
        return pushNode(node);
    }
    Status pushLong(std::uint64_t length);
    Status insert(bool dict, std::size_t count);
    Status popMark(std::vector<std::uint32_t>& items)
    {
        if (m_marks.empty())
            return fail(opName() + " needs a MARK before it, and there is none");
        items.assign(m_stack.begin() + std::ptrdiff_t(m_marks.back()), m_stack.end());
        m_stack.resize(m_marks.back());
        m_marks.pop_back();
        return {};
    }
    Status memoPut(std::uint64_t index)
    {
        if (auto s = needValues(1); !s)
            return s;
        m_memo[std::uint32_t(index)] = m_stack.back();
        return {};
    }

    PickleDocument& m_doc;
    const std::string& m_source;
    const LoadProgress& m_progress;
    std::string_view m_data;
    std::size_t m_pos = 0;
    std::size_t m_opStart = 0;
    std::uint8_t m_op = 0;
    std::vector<std::uint32_t> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<std::uint32_t, std::uint32_t> m_memo;
    std::vector<int> m_heights; // per container: the most containers nested below it
};

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
    return pushNode(Node { Kind::Int, 0, std::bit_cast<std::int64_t>(bits) });
}

// SETITEM(S) (dict) or APPEND(S) (list): the container lies just below the `count` values taken.
Status PickleParser::insert(bool dict, std::size_t count)
{
    std::vector<std::uint32_t> items;
    if (count == 0) {
        if (auto s = popMark(items); !s)
            return s;
    } else {
        if (auto s = needValues(count); !s)
            return s;
        items.assign(m_stack.end() - std::ptrdiff_t(count), m_stack.end());
        m_stack.resize(m_stack.size() - count);
    }
    if (auto s = needValues(1); !s)
        return s;
    const Node target = m_doc.m_nodes[m_stack.back()];
    const Kind wanted = dict ? Kind::Dict : Kind::List;
    if (target.kind != wanted)
        return fail(opName() + " adds to a " + std::string(PickleValue(&m_doc, m_stack.back()).typeName()) + ", not a "
            + (dict ? "dict" : "list"));
    if (dict && items.size() % 2 != 0)
        return fail(opName() + " has an odd number of values (" + std::to_string(items.size()) + "): keys and values come in pairs");
    auto& entries = m_doc.m_containers[target.aux];
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (dict && i % 2 == 0) {
            const auto keyKind = m_doc.m_nodes[items[i]].kind;
            if (keyKind != Kind::String && keyKind != Kind::Int && keyKind != Kind::Bytes)
                return fail("a dict key is a " + std::string(PickleValue(&m_doc, items[i]).typeName())
                    + ": a memory snapshot's keys are strings or integers");
        }
        if (auto s = noteChild(target, items[i]); !s)
            return s;
        entries.push_back(items[i]);
    }
    return {};
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
        case '}': status = pushContainer(Kind::Dict); break;
        case ']': status = pushContainer(Kind::List); break;
        case ')': status = pushContainer(Kind::Tuple); break;
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
            std::vector<std::uint32_t> items(m_stack.end() - std::ptrdiff_t(count), m_stack.end());
            m_stack.resize(m_stack.size() - count);
            status = pushContainer(Kind::Tuple, std::move(items));
            break;
        }
        case 't': {
            std::vector<std::uint32_t> items;
            if (status = popMark(items); !status)
                return status;
            status = pushContainer(Kind::Tuple, std::move(items));
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
            std::vector<std::uint32_t> dropped;
            status = popMark(dropped);
            break;
        }
        case '2':
            if (status = needValues(1); status)
                m_stack.push_back(m_stack.back());
            break;
        case 'J':
            if (!readUnsigned(4, n, error))
                return error;
            status = pushNode(Node { Kind::Int, 0, std::int64_t(std::int32_t(std::uint32_t(n))) });
            break;
        case 'K': case 'M':
            if (!readUnsigned(m_op == 'K' ? 1 : 2, n, error))
                return error;
            status = pushNode(Node { Kind::Int, 0, std::int64_t(n) });
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
            status = pushNode(Node { Kind::Float, 0, std::bit_cast<std::int64_t>(bits) });
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
        case 'N': status = pushNode(Node { Kind::None, 0, 0 }); break;
        case 0x88: case 0x89: status = pushNode(Node { Kind::Bool, 0, m_op == 0x88 }); break;
        case 0x94: status = memoPut(m_memo.size()); break;
        case 'q': case 'r':
            if (!readUnsigned(m_op == 'q' ? 1 : 4, n, error))
                return error;
            status = memoPut(n);
            break;
        case 'h': case 'j': {
            if (!readUnsigned(m_op == 'h' ? 1 : 4, n, error))
                return error;
            const auto found = m_memo.find(std::uint32_t(n));
            if (found == m_memo.end())
                return fail(opName() + " reads memo index " + std::to_string(n) + ", which was never stored");
            m_stack.push_back(found->second); // shared, not copied: the value table stays linear in the file
            break;
        }
        case '.':
            if (!m_marks.empty() || m_stack.size() != 1)
                return fail("STOP with " + std::to_string(m_stack.size()) + " values and " + std::to_string(m_marks.size())
                    + " open MARKs on the stack; a pickle ends with exactly one value");
            m_doc.m_root = m_stack.back();
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
    const auto& nodes = m_doc.m_nodes;
    const auto& containers = m_doc.m_containers;
    enum : std::uint8_t { White, Grey, Black };
    std::vector<std::uint8_t> colour(containers.size(), White);
    std::vector<int> height(containers.size(), 0);
    struct Frame {
        std::uint32_t container;
        std::size_t next;
    };
    std::vector<Frame> path;
    const auto tooDeep = [&]() {
        return makeError(ErrorCode::InvalidModel, m_source + ": containers nest deeper than " + std::to_string(kMaxPickleDepth)
                + " levels (through memo references)");
    };
    const auto& root = nodes[m_doc.m_root];
    if (!isContainer(root))
        return {};
    path.push_back({ root.aux, 0 });
    colour[root.aux] = Grey;
    while (!path.empty()) {
        auto& top = path.back();
        const auto& items = containers[top.container];
        if (top.next == items.size()) {
            colour[top.container] = Black;
            const int h = height[top.container];
            path.pop_back();
            if (!path.empty())
                height[path.back().container] = std::max(height[path.back().container], h + 1);
            continue;
        }
        const auto& child = nodes[items[top.next++]];
        if (!isContainer(child))
            continue;
        if (colour[child.aux] == Grey)
            return makeError(ErrorCode::InvalidModel, m_source + ": a container holds itself (through memo references); a memory snapshot is a tree");
        if (colour[child.aux] == Black) {
            height[top.container] = std::max(height[top.container], height[child.aux] + 1);
            if (int(path.size()) + height[child.aux] > kMaxPickleDepth)
                return tooDeep();
            continue;
        }
        if (int(path.size()) >= kMaxPickleDepth)
            return tooDeep();
        colour[child.aux] = Grey;
        path.push_back({ child.aux, 0 });
    }
    return {};
}

PickleValue::Kind PickleValue::kind() const { return m_document->m_nodes[m_node].kind; }

bool PickleValue::asBool() const { return kind() == Kind::Bool && m_document->m_nodes[m_node].value != 0; }

std::int64_t PickleValue::asInt() const
{
    const auto& node = m_document->m_nodes[m_node];
    return node.kind == Kind::Int || node.kind == Kind::Bool ? node.value : 0;
}

double PickleValue::asFloat() const
{
    const auto& node = m_document->m_nodes[m_node];
    if (node.kind == Kind::Float)
        return std::bit_cast<double>(node.value);
    return node.kind == Kind::Int ? double(node.value) : 0.0;
}

std::string_view PickleValue::asString() const
{
    const auto& node = m_document->m_nodes[m_node];
    if (node.kind != Kind::String && node.kind != Kind::Bytes)
        return {};
    return std::string_view(m_document->m_bytes).substr(std::size_t(node.value), node.aux);
}

std::size_t PickleValue::size() const
{
    const auto k = kind();
    if (k == Kind::List || k == Kind::Tuple)
        return m_document->m_containers[m_document->m_nodes[m_node].aux].size();
    return entryCount();
}

PickleValue PickleValue::operator[](std::size_t index) const
{
    return PickleValue(m_document, m_document->m_containers[m_document->m_nodes[m_node].aux][index]);
}

std::size_t PickleValue::entryCount() const
{
    return kind() == Kind::Dict ? m_document->m_containers[m_document->m_nodes[m_node].aux].size() / 2 : 0;
}

PickleValue PickleValue::entryKey(std::size_t index) const
{
    return PickleValue(m_document, m_document->m_containers[m_document->m_nodes[m_node].aux][2 * index]);
}

PickleValue PickleValue::entryValue(std::size_t index) const
{
    return PickleValue(m_document, m_document->m_containers[m_document->m_nodes[m_node].aux][2 * index + 1]);
}

std::optional<PickleValue> PickleValue::find(std::string_view key) const
{
    for (std::size_t i = entryCount(); i-- > 0;) {
        const auto k = entryKey(i);
        if (k.kind() == Kind::String && k.asString() == key)
            return entryValue(i);
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
