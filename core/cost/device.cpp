// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cost/device.h"

#include "util/readfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#ifndef MEMPLAN_RESOURCES_DIR
#define MEMPLAN_RESOURCES_DIR "resources"
#endif

namespace core {

double DeviceProfile::flopsFor(DType dtype) const
{
    if (auto it = flops.find(std::string(dtypeName(dtype))); it != flops.end())
        return it->second;
    if (auto it = flops.find("float32"); it != flops.end())
        return it->second;
    double best = 0;
    for (const auto& [name, rate] : flops)
        best = std::max(best, rate);
    return best;
}

namespace {
// Physical bounds of a profile's rates: a kilo- to an exa-rate (FLOP/s, bytes/s). Outside them a
// number is a typo or a unit slip (a bandwidth in bytes where GB/s is asked), and 1e-308 would
// make every estimate infinite.
constexpr double kMinRate = 1e3, kMaxRate = 1e18;
// Byte counts become 64-bit integers: 2^60 (an exbibyte) is far beyond any device and far from overflow.
constexpr double kMostBytes = double(std::int64_t(1) << 60);
constexpr double kMostAlignment = double(std::int64_t(1) << 30);
constexpr double kMostLatencyUs = 1e6; // one second per transfer

std::string number(double value)
{
    std::ostringstream text;
    text << value;
    return text.str();
}
} // namespace

// A profile file that is not one is bad input (InvalidModel), as a broken model file is. Every
// field is checked for presence, type and range; the message names the file, the field and the range:
// rates 1e3 to 1e18 FLOP/s or bytes/s (1e-6 to 1e9 GB/s), a float32 rate among the flops, the
// capacity up to 2^60 bytes, the alignment a power of two up to 2^30, the chip link latency 0 to 1e6 us.
// loadDeviceProfile reads at most kMaxDeviceProfileBytes of a regular file.
Expected<DeviceProfile> parseDeviceProfile(const std::string& jsonText, const std::string& file)
{
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(jsonText);
    } catch (const nlohmann::json::exception& e) { // a syntax error, or a number such as 1e999 that overflows
        return makeError(ErrorCode::InvalidModel, file + ": not valid JSON: " + e.what());
    }
    if (!doc.is_object())
        return makeError(ErrorCode::InvalidModel, file + ": a device profile is a JSON object");
    auto missing = [&](const std::string& field, const std::string& what) {
        return makeError(ErrorCode::InvalidModel, file + ": field '" + field + "' " + what);
    };
    // A number in [low, high] (low excluded when `openLow`); `unit` completes the message.
    auto inRange = [&](const nlohmann::json& value, const std::string& field, double low, double high, bool openLow,
                       const std::string& unit, double& out) -> Status {
        if (!value.is_number())
            return missing(field, std::string(value.is_null() ? "is missing" : "is not a number") + "; expected " + unit);
        const double v = value.get<double>();
        if (!(openLow ? v > low : v >= low) || !(v <= high))
            return missing(field, "is " + number(v) + "; expected " + unit);
        out = v;
        return {};
    };
    auto field = [&](const char* name) { return doc.contains(name) ? doc[name] : nlohmann::json(); };
    const std::string rateRange = number(kMinRate * 1e-9) + " to " + number(kMaxRate * 1e-9) + " GB/s";

    DeviceProfile profile;
    profile.file = file;
    if (!doc.contains("name") || !doc["name"].is_string() || doc["name"].get<std::string>().empty())
        return missing("name", "is missing or not a non-empty string");
    profile.name = doc["name"].get<std::string>();
    if (doc.contains("description")) {
        if (!doc["description"].is_string())
            return missing("description", "is not a string");
        profile.description = doc["description"].get<std::string>();
    }
    double capacity = 0, bandwidth = 0, link = 0, alignment = 256;
    if (auto s = inRange(field("memory_capacity_bytes"), "memory_capacity_bytes", 0, kMostBytes, true,
            "a positive number of bytes up to 2^60", capacity); !s)
        return s.error();
    if (auto s = inRange(field("memory_bandwidth_gb_s"), "memory_bandwidth_gb_s", kMinRate * 1e-9, kMaxRate * 1e-9, false, rateRange, bandwidth); !s)
        return s.error();
    if (auto s = inRange(field("host_link_gb_s"), "host_link_gb_s", kMinRate * 1e-9, kMaxRate * 1e-9, false, rateRange, link); !s)
        return s.error();
    if (doc.contains("alignment")) {
        if (auto s = inRange(doc["alignment"], "alignment", 1, kMostAlignment, false, "a power of two from 1 to 2^30 bytes", alignment); !s)
            return s.error();
        const auto bytes = static_cast<std::int64_t>(alignment);
        if (double(bytes) != alignment || (bytes & (bytes - 1)) != 0)
            return missing("alignment", "is " + number(alignment) + "; expected a power of two from 1 to 2^30 bytes");
    }
    double chipLink = 0, chipLatency = 0;
    if (doc.contains("chip_link_gb_s"))
        if (auto s = inRange(doc["chip_link_gb_s"], "chip_link_gb_s", kMinRate * 1e-9, kMaxRate * 1e-9, false, rateRange, chipLink); !s)
            return s.error();
    if (doc.contains("chip_link_latency_us"))
        if (auto s = inRange(doc["chip_link_latency_us"], "chip_link_latency_us", 0, kMostLatencyUs, false,
                "a number of microseconds from 0 to 1e6", chipLatency); !s)
            return s.error();
    profile.chipLinkBandwidth = chipLink * 1e9;
    profile.chipLinkLatency = chipLatency * 1e-6;
    profile.memoryCapacity = static_cast<Bytes>(capacity);
    profile.memoryBandwidth = bandwidth * 1e9;
    profile.hostLinkBandwidth = link * 1e9;
    profile.alignment = static_cast<Bytes>(alignment);
    const auto flops = doc.find("flops");
    if (flops == doc.end() || !flops->is_object() || flops->empty())
        return missing("flops", "is missing or not an object of dtype -> FLOP/s");
    const std::string flopRange = number(kMinRate) + " to " + number(kMaxRate) + " FLOP/s";
    for (const auto& [dtype, rate] : flops->items()) {
        if (!parseDType(dtype))
            return makeError(ErrorCode::InvalidModel, file + ": flops: unknown dtype '" + dtype + "'");
        double value = 0;
        if (auto s = inRange(rate, "flops." + dtype, kMinRate, kMaxRate, false, flopRange, value); !s)
            return s.error();
        profile.flops[std::string(dtypeName(*parseDType(dtype)))] = value;
    }
    // Every estimate falls back to the float32 rate (flopsFor), so it must be given.
    if (!profile.flops.count(std::string(dtypeName(DType::Float32))))
        return missing("flops.float32", "is missing; every profile gives the float32 rate (" + flopRange + ")");
    return profile;
}

Expected<DeviceProfile> loadDeviceProfile(const std::filesystem::path& file)
{
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return makeError(ErrorCode::Io, file.string() + ": cannot read the device profile (no such file)");
    auto text = readFileCapped(file, kMaxDeviceProfileBytes, "a device profile");
    if (!text)
        return text.error();
    return parseDeviceProfile(*text, file.string());
}

std::filesystem::path builtinDeviceDir() { return std::filesystem::path(MEMPLAN_RESOURCES_DIR) / "devices"; }

std::vector<DeviceProfile> builtinDevices()
{
    std::vector<DeviceProfile> result;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(builtinDeviceDir(), ec)) {
        if (entry.path().extension() != ".json")
            continue;
        if (auto profile = loadDeviceProfile(entry.path()))
            result.push_back(std::move(*profile));
    }
    std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return result;
}

Expected<DeviceProfile> findDevice(const std::string& spec)
{
    const bool isPath = spec.find('/') != std::string::npos || (spec.size() > 5 && spec.ends_with(".json"));
    if (isPath)
        return loadDeviceProfile(spec);
    std::string names;
    for (auto& profile : builtinDevices()) {
        if (profile.name == spec)
            return profile;
        names += (names.empty() ? "" : ", ") + profile.name;
    }
    return makeError(ErrorCode::InvalidArgument,
        "unknown device '" + spec + "'; built-in devices: " + (names.empty() ? "(none found in " + builtinDeviceDir().string() + ")" : names)
            + "; or give a profile file path");
}

DeviceProfile defaultDevice()
{
    if (auto profile = findDevice("h200"))
        return *profile;
    DeviceProfile fallback;
    fallback.name = "generic";
    fallback.description = "stand-in when no profile files are found";
    fallback.memoryCapacity = Bytes(16) << 30;
    fallback.memoryBandwidth = 500e9;
    fallback.hostLinkBandwidth = 16e9;
    fallback.flops["float32"] = 10e12;
    return fallback;
}

} // namespace core
