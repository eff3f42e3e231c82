// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "io/problemcsv.h"

#include "util/readfile.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>
#include <system_error>
#include <unordered_map>

namespace core {

namespace {
std::string_view trim(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
        text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
        text.remove_suffix(1);
    return text;
}

// Splits one line into fields, trimming spaces around unquoted ones. Plain fields are views into
// `line`; a line with quotes ("a,b", "" for a quote) is unquoted into `storage`, and the views point there.
void splitFields(std::string_view line, std::vector<std::string_view>& fields, std::vector<std::string>& storage)
{
    fields.clear();
    if (line.find('"') == std::string_view::npos) {
        std::size_t start = 0;
        while (true) {
            const auto comma = line.find(',', start);
            fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
            if (comma == std::string_view::npos)
                return;
            start = comma + 1;
        }
    }
    storage.assign(1, std::string());
    std::vector<bool> quoted(1, false);
    bool inQuotes = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (inQuotes) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                storage.back() += '"';
                ++i;
            } else if (c == '"') {
                inQuotes = false;
            } else {
                storage.back() += c;
            }
        } else if (c == '"' && !quoted.back() && trim(storage.back()).empty()) {
            storage.back().clear(); // spaces before the opening quote do not count
            quoted.back() = true;
            inQuotes = true;
        } else if (c == ',') {
            storage.emplace_back();
            quoted.push_back(false);
        } else if (!quoted.back() || (c != ' ' && c != '\t' && c != '\r')) {
            storage.back() += c; // after a closing quote only stray text is kept
        }
    }
    for (std::size_t f = 0; f < storage.size(); ++f)
        fields.push_back(quoted[f] ? std::string_view(storage[f]) : trim(storage[f]));
}

enum class Number { Ok, NotInteger, OutOfRange };

Number parseInteger(std::string_view text, std::int64_t& value)
{
    if (!text.empty() && text.front() == '+')
        text.remove_prefix(1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
        return Number::OutOfRange;
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        return Number::NotInteger;
    return Number::Ok;
}

bool isBlank(std::string_view line) { return trim(line).empty(); }

// The length of the record at the start of `text`: up to its first newline outside a quoted field
// (a quoted name may hold newlines), or all of it. A quote opens a field only at its start, as in
// splitFields; `newlines` counts the newlines inside quotes, `open` says a quote was never closed.
std::size_t recordLength(std::string_view text, int& newlines, bool& open)
{
    newlines = 0;
    open = false;
    const auto line = text.substr(0, text.find('\n'));
    if (line.find('"') == std::string_view::npos)
        return line.size(); // the common case, kept at memchr speed
    bool fieldStart = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (open) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
                ++i;
            else if (c == '"')
                open = false;
            else if (c == '\n')
                ++newlines;
        } else if (c == '\n') {
            return i;
        } else if (c == ',') {
            fieldStart = true;
        } else if (c == '"' && fieldStart) {
            open = true;
            fieldStart = false;
        } else if (c != ' ' && c != '\t') {
            fieldStart = false;
        }
    }
    return text.size();
}

std::string csvField(const std::string& text)
{
    const bool plain = text.find_first_of(",\"\r\n") == std::string::npos
        && (text.empty() || (text.front() != ' ' && text.front() != '\t' && text.back() != ' ' && text.back() != '\t'));
    if (plain)
        return text;
    std::string out = "\"";
    for (char c : text) {
        if (c == '"')
            out += '"';
        out += c;
    }
    return out + '"';
}

constexpr std::array<std::string_view, 5> kColumns { "id", "lower", "upper", "size", "offset" };
enum Column { Id, Lower, Upper, Size, Offset };
} // namespace

Expected<CsvProblem> parseProblemCsv(const std::string& text, const std::string& source)
{
    std::string_view rest(text);
    if (rest.substr(0, 3) == "\xEF\xBB\xBF")
        rest.remove_prefix(3); // UTF-8 byte order mark (spreadsheet exports)
    int lineNumber = 0; // of the record's first line
    int nextLineNumber = 1;
    bool unclosedQuote = false;
    std::string_view line; // one record: a line, or more where a quoted field holds newlines
    auto nextLine = [&]() {
        if (rest.empty())
            return false;
        int newlines = 0;
        const auto length = recordLength(rest, newlines, unclosedQuote);
        line = rest.substr(0, length);
        rest.remove_prefix(std::min(length + 1, rest.size()));
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        lineNumber = nextLineNumber;
        nextLineNumber += newlines + 1;
        return true;
    };
    auto fail = [&](const std::string& what) {
        return makeError(ErrorCode::InvalidModel, source + ":" + std::to_string(lineNumber) + ": " + what);
    };

    bool haveHeader = false;
    while (nextLine())
        if (!isBlank(line)) {
            haveHeader = true;
            break;
        }
    if (!haveHeader)
        return makeError(ErrorCode::InvalidModel, source + ": empty file: expected a header line id,lower,upper,size");
    if (unclosedQuote)
        return fail("a quoted field opened on this line is not closed");

    std::vector<std::string_view> fields;
    std::vector<std::string> storage;
    splitFields(line, fields, storage);
    std::array<int, kColumns.size()> column;
    column.fill(-1);
    for (std::size_t f = 0; f < fields.size(); ++f) {
        std::string name(fields[f]);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        const auto known = std::find(kColumns.begin(), kColumns.end(), name);
        if (known == kColumns.end())
            continue; // extra columns are allowed and ignored
        auto& slot = column[known - kColumns.begin()];
        if (slot >= 0)
            return fail("column '" + name + "' appears twice in the header");
        slot = static_cast<int>(f);
    }
    for (int c = Id; c <= Size; ++c)
        if (column[c] < 0)
            return fail("the header lacks column '" + std::string(kColumns[c]) + "' (expected id,lower,upper,size in any order, optional offset)");
    const std::size_t fieldCount = fields.size();
    const bool hasOffset = column[Offset] >= 0;

    CsvProblem result;
    auto& problem = result.problem;
    problem.alignment = 1;
    if (hasOffset)
        result.offsets.emplace();
    std::unordered_map<std::string, int> firstLine;
    const auto estimate = static_cast<std::size_t>(std::count(rest.begin(), rest.end(), '\n') + 1);
    problem.buffers.reserve(estimate);
    firstLine.reserve(estimate);
    if (hasOffset)
        result.offsets->reserve(estimate);

    while (nextLine()) {
        if (isBlank(line))
            continue;
        if (unclosedQuote)
            return fail("a quoted field opened on this line is not closed");
        splitFields(line, fields, storage);
        if (fields.size() != fieldCount)
            return fail("expected " + std::to_string(fieldCount) + " fields like the header, found " + std::to_string(fields.size()));

        std::int64_t values[kColumns.size()] = {};
        for (int c = Lower; c < static_cast<int>(kColumns.size()); ++c) {
            if (column[c] < 0)
                continue;
            const auto field = fields[column[c]];
            const std::string name(kColumns[c]);
            switch (parseInteger(field, values[c])) {
            case Number::NotInteger:
                return fail(name + " '" + std::string(field) + "' is not an integer");
            case Number::OutOfRange:
                return fail(name + " '" + std::string(field) + "' is out of range");
            case Number::Ok:
                break;
            }
            if (values[c] < 0)
                return fail(name + " is " + std::to_string(values[c]) + ": it must be >= 0");
            if ((c == Lower || c == Upper) && values[c] > std::numeric_limits<Step>::max())
                return fail(name + " " + std::to_string(values[c]) + " is out of range: steps must be below 2^31");
        }
        if (values[Upper] <= values[Lower])
            return fail("upper (" + std::to_string(values[Upper]) + ") must be greater than lower (" + std::to_string(values[Lower])
                + "): a buffer lives over the half-open steps [lower, upper)");

        const auto id = fields[column[Id]];
        if (id.empty())
            return fail("empty id");
        auto [it, inserted] = firstLine.emplace(std::string(id), lineNumber);
        if (!inserted)
            return fail("duplicate id '" + it->first + "' (first on line " + std::to_string(it->second) + ")");

        Buffer buffer;
        buffer.name = it->first;
        buffer.lifetime = { static_cast<Step>(values[Lower]), static_cast<Step>(values[Upper]) };
        buffer.size = values[Size];
        buffer.kind = TensorKind::Activation;
        buffer.tensors.push_back(buffer.name);
        problem.steps = std::max(problem.steps, buffer.lifetime.end);
        problem.buffers.push_back(std::move(buffer));
        if (hasOffset)
            result.offsets->push_back(values[Offset]);
    }
    if (auto s = checkProblemSize(problem); !s)
        return makeError(s.error().code, source + ": " + s.error().message);
    return result;
}

Expected<CsvProblem> importProblemCsv(const std::filesystem::path& file)
{
    auto text = readFileCapped(file, kMaxProblemCsvBytes, "an allocation-problem CSV");
    if (!text)
        return text.error();
    return parseProblemCsv(*text, file.string());
}

std::string exportProblemCsv(const PlanProblem& problem, const Plan* plan)
{
    const bool withOffsets = plan && plan->offsets.size() == problem.buffers.size();
    std::string out = withOffsets ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n";
    out.reserve(out.size() + problem.buffers.size() * 32);
    for (std::size_t i = 0; i < problem.buffers.size(); ++i) {
        const auto& buffer = problem.buffers[i];
        out += csvField(buffer.name);
        for (auto value : { Bytes(buffer.lifetime.start), Bytes(buffer.lifetime.end), buffer.size }) {
            out += ',';
            out += std::to_string(value);
        }
        if (withOffsets) {
            out += ',';
            out += std::to_string(plan->offsets[i]);
        }
        out += '\n';
    }
    return out;
}

} // namespace core
