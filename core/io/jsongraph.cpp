// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/jsongraph.h"

#include "graph/capture.h"
#include "onnx/onnxconsistency.h"

#include "util/readfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <unordered_map>

namespace core {

namespace {
using nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Where the entries of the file start: the line of each top-level value and of each element of a
// top-level array. Found by a lax scan of text that nlohmann already accepted, so the scan need
// not validate anything; in valid JSON a newline can only appear in whitespace.
struct LineIndex {
    std::map<std::string, int> keyLine;
    std::map<std::string, std::vector<int>> elementLines;

    int line(const std::string& key, std::size_t element) const
    {
        const auto it = elementLines.find(key);
        return it != elementLines.end() && element < it->second.size() ? it->second[element] : 0;
    }
    int line(const std::string& key) const
    {
        const auto it = keyLine.find(key);
        return it != keyLine.end() ? it->second : 0;
    }
};

class LineScanner {
public:
    explicit LineScanner(const std::string& text) : m_text(text) { }

    LineIndex scan()
    {
        LineIndex index;
        if (m_text.compare(0, 3, "\xEF\xBB\xBF") == 0)
            m_pos = 3; // UTF-8 byte order mark
        skipWhitespace();
        if (peek() != '{')
            return index;
        ++m_pos;
        while (true) {
            skipWhitespace();
            if (peek() != '"')
                break;
            const auto key = readString();
            skipWhitespace();
            if (peek() == ':')
                ++m_pos;
            skipWhitespace();
            index.keyLine[key] = m_line;
            if (peek() == '[') {
                auto& lines = index.elementLines[key];
                lines.clear();
                ++m_pos;
                while (m_pos < m_text.size()) {
                    skipWhitespace();
                    if (peek() == ']') {
                        ++m_pos;
                        break;
                    }
                    lines.push_back(m_line);
                    skipValue();
                    skipWhitespace();
                    if (peek() == ',')
                        ++m_pos;
                }
            } else {
                skipValue();
            }
            skipWhitespace();
            if (peek() != ',')
                break;
            ++m_pos;
        }
        return index;
    }

private:
    char peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }

    void skipWhitespace()
    {
        while (m_pos < m_text.size()) {
            const char c = m_text[m_pos];
            if (c == '\n')
                ++m_line;
            else if (c != ' ' && c != '\t' && c != '\r')
                break;
            ++m_pos;
        }
    }

    std::string readString() // at the opening quote; escapes are kept as written
    {
        std::string out;
        ++m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] != '"') {
            if (m_text[m_pos] == '\\' && m_pos + 1 < m_text.size())
                out += m_text[m_pos++];
            out += m_text[m_pos++];
        }
        ++m_pos;
        return out;
    }

    void skipValue()
    {
        const char c = peek();
        if (c == '"') {
            readString();
        } else if (c == '{' || c == '[') {
            ++m_pos;
            int depth = 1;
            while (m_pos < m_text.size() && depth > 0) {
                const char d = m_text[m_pos];
                if (d == '"') {
                    readString();
                    continue;
                }
                if (d == '\n')
                    ++m_line;
                else if (d == '{' || d == '[')
                    ++depth;
                else if (d == '}' || d == ']')
                    --depth;
                ++m_pos;
            }
        } else {
            while (m_pos < m_text.size() && !std::strchr(",]} \t\r\n", m_text[m_pos]))
                ++m_pos;
        }
    }

    const std::string& m_text;
    std::size_t m_pos = 0;
    int m_line = 1;
};

// "line:column" of a byte offset (nlohmann reports the 1-based position of the last byte read).
std::string lineColumn(const std::string& text, std::size_t byte)
{
    const auto end = std::min(byte > 0 ? byte - 1 : 0, text.size());
    int line = 1;
    std::size_t lineStart = 0;
    for (std::size_t i = 0; i < end; ++i)
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    return std::to_string(line) + ":" + std::to_string(end - lineStart + 1);
}

// nlohmann's what(): "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
std::string parseErrorDetail(const char* what)
{
    std::string text = what;
    const auto column = text.find("column ");
    const auto colon = column == std::string::npos ? text.find("] ") : text.find(": ", column);
    if (colon != std::string::npos)
        text = text.substr(colon + 2);
    return text;
}

std::string quote(const std::string& name) { return "'" + name + "'"; }

// Bytes of a tensor whose shape is fully known; kUnknownSize when the dtype or a dimension is unknown
// or the product overflows.
Bytes shapeBytes(DType dtype, const std::vector<std::int64_t>& shape)
{
    if (dtypeBytes(dtype) == 0)
        return kUnknownSize;
    for (auto dim : shape)
        if (dim < 0)
            return kUnknownSize;
    return tensorBytes(dtype, shape);
}

const char* typeName(const json& value)
{
    if (value.is_number_integer())
        return "an integer";
    if (value.is_number_float())
        return "a float";
    if (value.is_string())
        return "a string";
    if (value.is_boolean())
        return "a boolean";
    if (value.is_array())
        return "a list";
    if (value.is_object())
        return "an object";
    return "null";
}

std::string dumpLine(const OrderedJson& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// The capture map as the file had it: a value that is a number's JSON text is written as that number.
OrderedJson captureJson(const std::map<std::string, std::string>& capture)
{
    OrderedJson out = OrderedJson::object();
    for (const auto& [key, text] : capture) {
        OrderedJson number;
        try {
            number = OrderedJson::parse(text);
        } catch (const json::exception&) { // not JSON, or a number out of a double's range
        }
        out[key] = number.is_number() && dumpLine(number) == text ? number : OrderedJson(text);
    }
    return out;
}

class Parser {
public:
    // body: the graph is a control-flow op's (Op::bodies, read from its op's "bodies"): it may have
    // no ops, and its ops list only the inputs it defines (outer values are not its tensors), so the
    // ONNX shape rules, which want every input, are not checked on it.
    // depth: how many graphs enclose this one (0 for the file's own graph), at most kMostBodyDepth.
    Parser(const std::string& text, const std::string& source, const ShapeBindings& bindings, bool body = false, int depth = 0)
        : m_text(text)
        , m_source(source)
        , m_bindings(bindings)
        , m_body(body)
        , m_depth(depth)
    {
    }

    // Graphs nest no deeper than this (ONNX models nest a few levels): a deeper file is refused
    // rather than read by recursion as deep as it asks.
    static constexpr int kMostBodyDepth = 32;

    Expected<Graph> parse()
    {
        json root;
        try {
            root = json::parse(m_text);
        } catch (const json::parse_error& e) {
            return makeError(ErrorCode::InvalidModel,
                m_source + ":" + lineColumn(m_text, e.byte) + ": invalid JSON: " + parseErrorDetail(e.what()));
        } catch (const json::exception& e) { // out_of_range 406: a number such as 1e999 overflows a double
            return makeError(ErrorCode::InvalidModel, m_source + ": invalid JSON: " + parseErrorDetail(e.what()));
        }
        m_lines = LineScanner(m_text).scan();
        return parseRoot(root);
    }

    Expected<Graph> parseRoot(const json& root)
    {
        if (!root.is_object())
            return fail(1, "the file", std::string("expected a JSON object { \"tensors\": [...], \"ops\": [...] }, found ") + typeName(root));
        for (const auto& [key, value] : root.items())
            if (key != "name" && key != "tensors" && key != "ops" && key != "inputs" && key != "outputs" && key != "notes"
                && key != "opsets" && key != "capture" && key != "comment")
                return fail(m_lines.line(key), quote(key),
                    "unknown top-level field (expected name, tensors, ops, inputs, outputs, notes, opsets, capture)");

        if (root.contains("name")) {
            if (!root["name"].is_string())
                return fail(m_lines.line("name"), "name", std::string("expected a string, found ") + typeName(root["name"]));
            m_graph.name = root["name"].get<std::string>();
        } else {
            m_graph.name = std::filesystem::path(m_source).stem().string();
        }
        if (root.contains("notes")) {
            const auto& notes = root["notes"];
            if (!notes.is_array())
                return fail(m_lines.line("notes"), "notes", "expected a list of strings");
            for (const auto& note : notes) {
                if (!note.is_string())
                    return fail(m_lines.line("notes"), "notes", "expected a list of strings");
                m_graph.notes.push_back(note.get<std::string>());
            }
        }
        if (root.contains("opsets")) {
            const auto& opsets = root["opsets"];
            auto positive = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() > 0; };
            if (!opsets.is_object() || !std::all_of(opsets.begin(), opsets.end(), positive))
                return fail(m_lines.line("opsets"), "opsets", "expected an object of domain: operator set version, e.g. {\"\": 17}");
            for (const auto& [domain, version] : opsets.items())
                m_graph.opsets[domain] = version.get<std::int64_t>();
        }

        if (root.contains("capture")) {
            const auto& capture = root["capture"];
            if (!capture.is_object())
                return fail(m_lines.line("capture"), "capture", std::string("expected an object of name: string or number, found ") + typeName(capture));
            for (const auto& [key, value] : capture.items()) {
                if (!value.is_string() && !value.is_number())
                    return fail(m_lines.line("capture"), "capture", quote(key) + " must be a string or a number, found " + typeName(value));
                m_graph.capture[key] = value.is_string() ? value.get<std::string>() : dumpLine(value);
            }
        }

        if (!root.contains("tensors") || !root["tensors"].is_array())
            return fail(m_lines.line("tensors"), "tensors", "expected a list of tensors under \"tensors\"");
        const auto& tensors = root["tensors"];
        m_explicitKind.assign(tensors.size(), false);
        for (std::size_t i = 0; i < tensors.size(); ++i)
            if (auto status = parseTensor(tensors[i], i); !status)
                return status.error();

        if (!root.contains("ops") || !root["ops"].is_array() || (root["ops"].empty() && !m_body))
            return fail(m_lines.line("ops"), "ops", "the graph needs a non-empty list of ops under \"ops\"");
        const auto& ops = root["ops"];
        m_producer.assign(m_graph.tensors.size(), -1);
        for (std::size_t i = 0; i < ops.size(); ++i)
            if (auto status = parseOp(ops[i], i); !status)
                return status.error();

        for (const char* key : { "inputs", "outputs" })
            if (auto status = parseEnds(root, key); !status)
                return status.error();
        for (const auto& [name, shape] : m_bindings.inputShapes) {
            const auto t = m_graph.findTensor(name);
            if (!t || std::find(m_graph.inputs.begin(), m_graph.inputs.end(), *t) == m_graph.inputs.end())
                return makeError(ErrorCode::InvalidArgument,
                    m_source + ": --input-shape names " + quote(name) + ", which is not a graph input" + inputList());
        }
        if (!m_body)
            if (auto status = checkOps(); !status)
                return status.error();
        return std::move(m_graph);
    }

private:
    // The declared shapes against what ONNX allows each op (its attributes, its inputs' shapes) and
    // the outputs MemPlan's ONNX shape rules compute: an executor runs what the file declares, so a
    // shape the op cannot have is refused here, not left to a kernel that cannot run it.
    Status checkOps() const
    {
        const KnownValues values = [&](TensorIndex t) -> const std::vector<std::int64_t>* {
            const auto& x = m_graph.tensors[std::size_t(t)];
            return x.values.empty() ? nullptr : &x.values;
        };
        auto conflict = firstInvalidOp(m_graph, values);
        if (!conflict)
            conflict = firstShapeConflict(m_graph, values);
        if (!conflict)
            conflict = firstRuleMismatch(m_graph);
        if (!conflict)
            return {};
        return fail(m_lines.line("ops", std::size_t(conflict->op)), "ops[" + std::to_string(conflict->op) + "]", conflict->message);
    }

    Error fail(int line, const std::string& where, const std::string& what, ErrorCode code = ErrorCode::InvalidModel) const
    {
        return makeError(code, m_source + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + where + ": " + what);
    }

    std::string inputList() const
    {
        std::string text;
        for (auto t : m_graph.inputs)
            text += (text.empty() ? " (inputs: " : ", ") + m_graph.tensors[t].name;
        return text.empty() ? text : text + ")";
    }

    Status parseTensor(const json& entry, std::size_t i)
    {
        const int line = m_lines.line("tensors", i);
        std::string where = "tensors[" + std::to_string(i) + "]";
        if (!entry.is_object())
            return fail(line, where, std::string("expected an object, found ") + typeName(entry));
        const bool named = entry.contains("name") && entry["name"].is_string() && !entry["name"].get<std::string>().empty();
        if (named)
            where += " " + quote(entry["name"].get<std::string>());
        for (const auto& [key, value] : entry.items())
            if (key != "name" && key != "dtype" && key != "shape" && key != "bytes" && key != "kind" && key != "estimated"
                && key != "sequence" && key != "list_exact" && key != "optional" && key != "values" && key != "items" && key != "category"
                && key != "module" && key != "comment")
                return fail(line, where,
                    "unknown field " + quote(key)
                        + " (expected name, dtype, shape, bytes, kind, estimated, sequence, list_exact, optional, values, items, category, module)");
        if (!named)
            return fail(line, where, "every tensor needs a non-empty string \"name\"");

        Tensor tensor;
        tensor.name = entry["name"].get<std::string>();
        if (const auto it = m_tensorIndex.find(tensor.name); it != m_tensorIndex.end())
            return fail(line, where, "duplicate tensor name (first declared at tensors[" + std::to_string(it->second) + "])");

        if (entry.contains("dtype")) {
            const auto& dtype = entry["dtype"];
            if (!dtype.is_string())
                return fail(line, where, std::string("\"dtype\" must be a string, found ") + typeName(dtype));
            const auto parsed = parseDType(dtype.get<std::string>());
            if (!parsed)
                return fail(line, where, "unknown dtype " + quote(dtype.get<std::string>()) + " (e.g. float32, float16, int64, uint8)");
            tensor.dtype = *parsed;
        }
        if (entry.contains("kind")) {
            const auto& kind = entry["kind"];
            if (!kind.is_string())
                return fail(line, where, std::string("\"kind\" must be a string, found ") + typeName(kind));
            const auto parsed = parseKind(kind.get<std::string>());
            if (!parsed || *parsed == TensorKind::Workspace)
                return fail(line, where,
                    "unknown kind " + quote(kind.get<std::string>()) + " (expected input, output, weight, activation or persistent)");
            tensor.kind = *parsed;
            m_explicitKind[i] = true;
        }
        for (auto [key, flag] : { std::pair { "estimated", &tensor.estimated }, std::pair { "sequence", &tensor.sequence },
                 std::pair { "list_exact", &tensor.listExact }, std::pair { "optional", &tensor.optional } })
            if (entry.contains(key)) {
                if (!entry[key].is_boolean())
                    return fail(line, where, std::string("\"") + key + "\" must be true or false");
                *flag = entry[key].get<bool>();
            }
        if (auto s = namedField(entry, "category", line, where, tensor.category,
                [](const std::string& text) { return parseCategory(text).has_value(); },
                "input, parameter, buffer, gradient, optimizer_state, saved, temporary or output");
            !s)
            return s;
        if (auto s = moduleField(entry, line, where, tensor.module); !s)
            return s;
        if (tensor.listExact && !tensor.sequence)
            return fail(line, where, "\"list_exact\" is for a sequence (\"sequence\": true)");
        if (entry.contains("values") && !integers(entry["values"], tensor.values))
            return fail(line, where, "\"values\" must be a list of integers");
        if (entry.contains("items")) {
            const auto& items = entry["items"];
            if (!items.is_array())
                return fail(line, where, "\"items\" must be a list of element shapes");
            for (const auto& item : items) {
                std::vector<std::int64_t> shape;
                if (!integers(item, shape) || std::any_of(shape.begin(), shape.end(), [](auto d) { return d < 0; }))
                    return fail(line, where, "\"items\" must be a list of element shapes (lists of dimensions >= 0)");
                tensor.items.push_back(std::move(shape));
            }
        }

        const bool hasBytes = entry.contains("bytes");
        const bool hasShape = entry.contains("shape");
        if (!hasBytes && !hasShape)
            return fail(line, where, "needs \"bytes\" or \"dtype\" and \"shape\"");

        if (const auto bound = m_bindings.inputShapes.find(tensor.name); bound != m_bindings.inputShapes.end()) {
            tensor.shape = bound->second;
            tensor.rankKnown = true;
        } else if (hasShape) {
            const auto& shape = entry["shape"];
            if (!shape.is_array())
                return fail(line, where, std::string("\"shape\" must be a list of dimensions, found ") + typeName(shape));
            tensor.rankKnown = true;
            for (std::size_t d = 0; d < shape.size(); ++d) {
                const auto& dim = shape[d];
                const std::string dimWhere = "dimension " + std::to_string(d);
                if (dim.is_null()) {
                    tensor.shape.push_back(-1); // stated as unknown
                } else if (dim.is_string()) {
                    const auto symbol = dim.get<std::string>();
                    const auto value = m_bindings.dims.find(symbol);
                    if (value != m_bindings.dims.end()) {
                        tensor.shape.push_back(value->second);
                    } else {
                        tensor.shape.push_back(-1);
                        if (!hasBytes) // with "bytes" the shape is only descriptive
                            return fail(line, where,
                                dimWhere + " is the symbol " + quote(symbol) + ", which has no value; pass --dim " + symbol + "=VALUE",
                                ErrorCode::InvalidArgument);
                    }
                } else if (dim.is_number_unsigned() && dim.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())) {
                    return fail(line, where, dimWhere + " is too large");
                } else if (dim.is_number_integer()) {
                    const auto value = dim.get<std::int64_t>();
                    if (value < 0)
                        return fail(line, where,
                            dimWhere + " is " + std::to_string(value) + ": dimensions must be >= 0 (null marks an unknown one)");
                    tensor.shape.push_back(value);
                } else {
                    return fail(line, where,
                        dimWhere + " must be an integer, a symbol name or null, found " + typeName(dim));
                }
            }
        }

        if (hasBytes) {
            const auto& bytes = entry["bytes"];
            if (bytes.is_null()) {
                tensor.size = kUnknownSize;
            } else if (bytes.is_number_unsigned() && bytes.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<Bytes>::max())) {
                return fail(line, where, "\"bytes\" is too large");
            } else if (bytes.is_number_integer()) {
                tensor.size = bytes.get<Bytes>();
                if (tensor.size < 0)
                    return fail(line, where, "\"bytes\" is " + std::to_string(tensor.size) + ": sizes must be >= 0");
            } else {
                return fail(line, where, std::string("\"bytes\" must be an integer, found ") + typeName(bytes));
            }
        } else {
            if (tensor.dtype == DType::Undefined)
                return fail(line, where, "has a \"shape\" but no \"dtype\" (or give \"bytes\")");
            tensor.size = shapeBytes(tensor.dtype, tensor.shape);
            const bool allKnown = std::all_of(tensor.shape.begin(), tensor.shape.end(), [](auto d) { return d >= 0; });
            if (allKnown && tensor.size == kUnknownSize)
                return fail(line, where, "the size overflows 64 bits (dtype × shape)");
        }

        m_tensorIndex.emplace(tensor.name, i);
        m_graph.tensors.push_back(std::move(tensor));
        return {};
    }

    // A field whose value is one of a fixed set of names (a tensor's category, an op's phase): `known`
    // says which; anything else is refused, listing `expected`.
    template <typename Known>
    Status namedField(const json& entry, const char* key, int line, const std::string& where, std::string& out, Known known,
        const char* expected) const
    {
        if (!entry.contains(key))
            return {};
        const auto& value = entry[key];
        if (!value.is_string() || !known(value.get<std::string>()))
            return fail(line, where,
                std::string("unknown ") + key + " " + (value.is_string() ? quote(value.get<std::string>()) : std::string(typeName(value)))
                    + " (expected " + expected + ")");
        out = value.get<std::string>();
        return {};
    }

    // A tensor's or op's "module": the module path that made it ("" at top level).
    Status moduleField(const json& entry, int line, const std::string& where, std::string& out) const
    {
        if (!entry.contains("module"))
            return {};
        if (!entry["module"].is_string())
            return fail(line, where, std::string("\"module\" must be a string (a module path such as \"layer1.0.conv1\"), found ")
                    + typeName(entry["module"]));
        out = entry["module"].get<std::string>();
        return {};
    }

    // A JSON list of 64-bit integers into `out`; false when it is anything else.
    static bool integers(const json& list, std::vector<std::int64_t>& out)
    {
        if (!list.is_array())
            return false;
        for (const auto& v : list) {
            if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())))
                return false;
            out.push_back(v.get<std::int64_t>());
        }
        return true;
    }

    // `slots` (inputs and outputs only): the position of each name, as ONNX counts them; "" leaves one out.
    Status tensorList(const json& entry, const char* key, int line, const std::string& where, std::vector<TensorIndex>& out,
        std::vector<int>* slots)
    {
        if (!entry.contains(key))
            return {};
        const auto& list = entry[key];
        if (!list.is_array())
            return fail(line, where, std::string("\"") + key + "\" must be a list of tensor names");
        for (std::size_t k = 0; k < list.size(); ++k) {
            const auto& item = list[k];
            if (!item.is_string())
                return fail(line, where, std::string("\"") + key + "\" must be a list of tensor names, found " + typeName(item));
            const auto name = item.get<std::string>();
            if (name.empty() && slots)
                continue; // an optional input (output) left out, as ONNX writes it
            const auto it = m_tensorIndex.find(name);
            if (it == m_tensorIndex.end())
                return fail(line, where,
                    std::string(std::strcmp(key, "captured") == 0 ? "captured tensor" : std::string(key).substr(0, std::strlen(key) - 1))
                        + " " + quote(name) + " is not a declared tensor (add it to \"tensors\")");
            out.push_back(static_cast<TensorIndex>(it->second));
            if (slots)
                slots->push_back(int(k));
        }
        if (slots)
            trimSlots(*slots);
        return {};
    }

    Status parseOp(const json& entry, std::size_t i)
    {
        const int line = m_lines.line("ops", i);
        std::string where = "ops[" + std::to_string(i) + "]";
        if (!entry.is_object())
            return fail(line, where, std::string("expected an object, found ") + typeName(entry));
        Op op;
        if (entry.contains("name")) {
            if (!entry["name"].is_string())
                return fail(line, where, "\"name\" must be a string");
            op.name = entry["name"].get<std::string>();
            where += " " + quote(op.name);
        }
        for (const auto& [key, value] : entry.items())
            if (key != "name" && key != "type" && key != "domain" && key != "inputs" && key != "outputs" && key != "captured"
                && key != "attributes" && key != "module" && key != "phase" && key != "bodies" && key != "comment")
                return fail(line, where,
                    "unknown field " + quote(key) + " (expected name, type, domain, inputs, outputs, captured, attributes, module, phase, bodies)");
        if (!entry.contains("type") || !entry["type"].is_string() || entry["type"].get<std::string>().empty())
            return fail(line, where, "every op needs a non-empty string \"type\" (e.g. \"Conv\")");
        op.type = entry["type"].get<std::string>();
        if (entry.contains("domain")) {
            if (!entry["domain"].is_string())
                return fail(line, where, "\"domain\" must be a string");
            op.domain = entry["domain"].get<std::string>();
        }
        if (auto s = moduleField(entry, line, where, op.module); !s)
            return s;
        if (auto s = namedField(entry, "phase", line, where, op.phase,
                [](const std::string& text) { return parsePhase(text).has_value(); }, "forward, backward or optimizer");
            !s)
            return s;
        if (auto s = tensorList(entry, "inputs", line, where, op.inputs, &op.inputSlots); !s)
            return s;
        if (auto s = tensorList(entry, "outputs", line, where, op.outputs, &op.outputSlots); !s)
            return s;
        if (auto s = tensorList(entry, "captured", line, where, op.captured, nullptr); !s)
            return s;
        if (op.outputs.empty())
            return fail(line, where, "every op writes at least one tensor: \"outputs\" lists none");
        for (auto t : op.outputs) {
            if (m_producer[t] == static_cast<OpIndex>(i))
                return fail(line, where, "lists output " + quote(m_graph.tensors[t].name) + " twice");
            if (m_producer[t] >= 0) {
                const auto& first = m_graph.ops[m_producer[t]];
                return fail(line, where,
                    "output " + quote(m_graph.tensors[t].name) + " is already produced by ops[" + std::to_string(m_producer[t]) + "]"
                        + (first.name.empty() ? std::string() : " " + quote(first.name)) + "; a tensor has one producer");
            }
            m_producer[t] = static_cast<OpIndex>(i);
        }
        if (entry.contains("attributes")) {
            const auto& attributes = entry["attributes"];
            if (!attributes.is_object())
                return fail(line, where, "\"attributes\" must be an object of name: value");
            for (const auto& [key, value] : attributes.items()) {
                auto attribute = parseAttribute(value);
                if (!attribute)
                    return fail(line, where,
                        "attribute " + quote(key) + " must be an integer, a float, a string or a list of numbers or strings, found "
                            + typeName(value));
                op.attributes.emplace(key, std::move(*attribute));
            }
        }
        if (auto s = parseBodies(entry, line, where, op.bodies); !s)
            return s;
        m_graph.ops.push_back(std::move(op));
        return {};
    }

    // An op's "bodies": [{"attribute": "then_branch", "graph": { a JSON graph }}, ...], each parsed
    // as a graph of its own; its errors name this file, the op's line and the body.
    Status parseBodies(const json& entry, int line, const std::string& where, std::vector<OpBody>& bodies) const
    {
        if (!entry.contains("bodies"))
            return {};
        const auto& list = entry["bodies"];
        if (!list.is_array())
            return fail(line, where, "\"bodies\" must be a list of {\"attribute\": NAME, \"graph\": {...}}");
        if (m_depth >= kMostBodyDepth)
            return fail(line, where, "graphs nest more than " + std::to_string(kMostBodyDepth) + " deep");
        for (std::size_t k = 0; k < list.size(); ++k) {
            const auto& body = list[k];
            if (!body.is_object() || !body.contains("attribute") || !body["attribute"].is_string()
                || body["attribute"].get<std::string>().empty() || !body.contains("graph") || !body["graph"].is_object())
                return fail(line, where, "bodies[" + std::to_string(k) + "]: expected {\"attribute\": NAME, \"graph\": {...}}");
            const auto attribute = body["attribute"].get<std::string>();
            static const std::string noText;
            static const ShapeBindings noBindings;
            const std::string source = m_source + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + where + " body " + quote(attribute);
            auto graph = Parser(noText, source, noBindings, true, m_depth + 1).parseRoot(body["graph"]);
            if (!graph)
                return graph.error();
            bodies.push_back(OpBody { attribute, std::make_shared<const Graph>(std::move(*graph)) });
        }
        return {};
    }

    static std::optional<Attribute> parseAttribute(const json& value)
    {
        Attribute attribute;
        auto isFloat = [](const json& v) { // finite and within float range
            return v.is_number() && std::abs(v.get<double>()) <= double(std::numeric_limits<float>::max());
        };
        auto integer = [](const json& v) {
            return v.is_number_integer()
                && !(v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max()));
        };
        if (value.is_string()) {
            attribute.text = value.get<std::string>();
        } else if (integer(value)) {
            attribute.ints.push_back(value.get<std::int64_t>());
        } else if (value.is_number_float() && isFloat(value)) {
            attribute.floats.push_back(value.get<float>());
        } else if (value.is_array()) {
            attribute.list = true;
            const bool allIntegers = std::all_of(value.begin(), value.end(), integer);
            const bool allStrings = !value.empty() && std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
            for (const auto& item : value) {
                if (allStrings)
                    attribute.strings.push_back(item.get<std::string>());
                else if (allIntegers)
                    attribute.ints.push_back(item.get<std::int64_t>());
                else if (isFloat(item))
                    attribute.floats.push_back(item.get<float>());
                else
                    return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
        return attribute;
    }

    // Graph inputs or outputs: the list when the file has one, else every tensor of that kind.
    Status parseEnds(const json& root, const char* key)
    {
        const bool inputs = std::strcmp(key, "inputs") == 0;
        auto& out = inputs ? m_graph.inputs : m_graph.outputs;
        const auto kind = inputs ? TensorKind::Input : TensorKind::Output;
        if (!root.contains(key)) {
            for (std::size_t t = 0; t < m_graph.tensors.size(); ++t)
                if (m_graph.tensors[t].kind == kind)
                    out.push_back(static_cast<TensorIndex>(t));
            return {};
        }
        const int line = m_lines.line(key);
        if (auto s = tensorList(root, key, line, key, out, nullptr); !s)
            return s;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (std::find(out.begin(), out.begin() + i, out[i]) != out.begin() + i)
                return fail(line, key, quote(m_graph.tensors[out[i]].name) + " is listed twice");
            if (!m_explicitKind[out[i]])
                m_graph.tensors[out[i]].kind = kind;
        }
        return {};
    }

    const std::string& m_text;
    const std::string& m_source;
    const ShapeBindings& m_bindings;
    bool m_body = false;
    int m_depth = 0;
    LineIndex m_lines;
    Graph m_graph;
    std::unordered_map<std::string, std::size_t> m_tensorIndex;
    std::vector<bool> m_explicitKind;
    std::vector<OpIndex> m_producer;
};

// A float as the shortest decimal that reads back as the same float (1e-05, not 9.99999974737875e-06).
double shortestDouble(float value)
{
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    double out = value;
    std::from_chars(buffer, result.ptr, out);
    return out;
}

// A list attribute is written as a JSON list even with one element, so it reads back as a list.
OrderedJson attributeJson(const Attribute& attribute)
{
    if (!attribute.strings.empty())
        return attribute.strings;
    if (!attribute.text.empty())
        return attribute.text;
    if (!attribute.ints.empty()) {
        if (attribute.ints.size() == 1 && !attribute.list)
            return attribute.ints.front();
        return attribute.ints;
    }
    if (!attribute.floats.empty()) {
        if (attribute.floats.size() == 1 && !attribute.list)
            return shortestDouble(attribute.floats.front());
        auto list = OrderedJson::array();
        for (auto f : attribute.floats)
            list.push_back(shortestDouble(f));
        return list;
    }
    return OrderedJson::array();
}

std::string readFile(const std::filesystem::path& file, std::string& text)
{
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec))
        return file.string() + ": is a folder, not a file";
    auto read = readFileCapped(file, kMaxJsonBytes, "a JSON graph");
    if (!read)
        return read.error().message;
    text = std::move(*read);
    return {};
}
} // namespace

Expected<Graph> parseJsonGraph(const std::string& text, const std::string& source, const ShapeBindings& bindings)
{
    return Parser(text, source, bindings).parse();
}

Expected<Graph> importJsonGraph(const std::filesystem::path& file, const ShapeBindings& bindings)
{
    std::string text;
    if (auto problem = readFile(file, text); !problem.empty())
        return makeError(ErrorCode::Io, problem);
    return parseJsonGraph(text, file.string(), bindings);
}

std::string exportJsonGraph(const Graph& graph)
{
    auto names = [&](const std::vector<TensorIndex>& list) {
        auto out = OrderedJson::array();
        for (auto t : list)
            out.push_back(graph.tensors[t].name);
        return out;
    };

    std::string out = "{\n  \"name\": " + dumpLine(graph.name) + ",\n  \"tensors\": [";
    for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
        const auto& tensor = graph.tensors[i];
        OrderedJson entry;
        entry["name"] = tensor.name;
        if (tensor.dtype != DType::Undefined)
            entry["dtype"] = std::string(dtypeName(tensor.dtype));
        if (tensor.rankKnown) {
            auto shape = OrderedJson::array();
            for (auto dim : tensor.shape)
                shape.push_back(dim >= 0 ? OrderedJson(dim) : OrderedJson(nullptr));
            entry["shape"] = std::move(shape);
        }
        // "bytes" only where dtype × shape does not already say it.
        const Bytes implied = tensor.rankKnown ? shapeBytes(tensor.dtype, tensor.shape) : kUnknownSize;
        if (tensor.dtype == DType::Undefined || !tensor.rankKnown || tensor.size != implied)
            entry["bytes"] = tensor.size >= 0 ? OrderedJson(tensor.size) : OrderedJson(nullptr);
        entry["kind"] = std::string(kindName(tensor.kind));
        if (tensor.estimated)
            entry["estimated"] = true;
        if (tensor.sequence)
            entry["sequence"] = true;
        if (tensor.listExact)
            entry["list_exact"] = true;
        if (tensor.optional)
            entry["optional"] = true;
        if (!tensor.values.empty())
            entry["values"] = tensor.values;
        if (!tensor.items.empty())
            entry["items"] = tensor.items;
        if (!tensor.category.empty())
            entry["category"] = tensor.category;
        if (!tensor.module.empty() || !tensor.category.empty())
            entry["module"] = tensor.module;
        out += (i ? ",\n    " : "\n    ") + dumpLine(entry);
    }
    out += "\n  ],\n  \"ops\": [";
    for (std::size_t i = 0; i < graph.ops.size(); ++i) {
        const auto& op = graph.ops[i];
        OrderedJson entry;
        entry["name"] = op.name;
        entry["type"] = op.type;
        if (!op.domain.empty())
            entry["domain"] = op.domain;
        entry["inputs"] = slotNames(graph, op.inputs, op.inputSlots);
        entry["outputs"] = slotNames(graph, op.outputs, op.outputSlots);
        if (!op.captured.empty())
            entry["captured"] = names(op.captured);
        if (!op.attributes.empty()) {
            OrderedJson attributes = OrderedJson::object();
            for (const auto& [key, value] : op.attributes)
                attributes[key] = attributeJson(value);
            entry["attributes"] = std::move(attributes);
        }
        if (!op.module.empty() || !op.phase.empty())
            entry["module"] = op.module;
        if (!op.phase.empty())
            entry["phase"] = op.phase;
        if (!op.bodies.empty()) { // each graph as the same format, nested (on the op's line)
            auto bodies = OrderedJson::array();
            for (const auto& body : op.bodies)
                bodies.push_back(OrderedJson { { "attribute", body.attribute }, { "graph", OrderedJson::parse(exportJsonGraph(*body.graph)) } });
            entry["bodies"] = std::move(bodies);
        }
        out += (i ? ",\n    " : "\n    ") + dumpLine(entry);
    }
    out += "\n  ],\n  \"inputs\": " + dumpLine(names(graph.inputs)) + ",\n  \"outputs\": " + dumpLine(names(graph.outputs));
    if (!graph.notes.empty())
        out += ",\n  \"notes\": " + dumpLine(OrderedJson(graph.notes));
    if (!graph.opsets.empty())
        out += ",\n  \"opsets\": " + dumpLine(OrderedJson(graph.opsets));
    if (!graph.capture.empty())
        out += ",\n  \"capture\": " + dumpLine(captureJson(graph.capture));
    out += "\n}\n";
    return out;
}

} // namespace core
