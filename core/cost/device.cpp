// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "cost/device.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
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

// A profile file that is not one is bad input (InvalidModel), as a broken model file is.
Expected<DeviceProfile> parseDeviceProfile(const std::string& jsonText, const std::string& file)
{
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(jsonText);
    } catch (const nlohmann::json::parse_error& e) {
        return makeError(ErrorCode::InvalidModel, file + ": not valid JSON: " + e.what());
    }
    if (!doc.is_object())
        return makeError(ErrorCode::InvalidModel, file + ": a device profile is a JSON object");
    auto missing = [&](const char* field, const char* what) {
        return makeError(ErrorCode::InvalidModel, file + ": field '" + field + "' " + what);
    };
    auto positive = [&](const char* field, double& out) -> bool {
        const auto it = doc.find(field);
        if (it == doc.end() || !it->is_number() || it->get<double>() <= 0)
            return false;
        out = it->get<double>();
        return true;
    };
    DeviceProfile profile;
    profile.file = file;
    if (!doc.contains("name") || !doc["name"].is_string() || doc["name"].get<std::string>().empty())
        return missing("name", "is missing or not a non-empty string");
    profile.name = doc["name"].get<std::string>();
    if (doc.contains("description") && doc["description"].is_string())
        profile.description = doc["description"].get<std::string>();
    double capacity = 0, bandwidth = 0, link = 0, alignment = 256;
    // Byte counts become 64-bit integers: 2^60 (an exbibyte) is far beyond any device and far from overflow.
    constexpr double kMostBytes = double(std::int64_t(1) << 60);
    if (!positive("memory_capacity_bytes", capacity) || capacity > kMostBytes)
        return missing("memory_capacity_bytes", "is missing or not a positive number of bytes up to 2^60");
    if (!positive("memory_bandwidth_gb_s", bandwidth))
        return missing("memory_bandwidth_gb_s", "is missing or not a positive number (GB/s)");
    if (!positive("host_link_gb_s", link))
        return missing("host_link_gb_s", "is missing or not a positive number (GB/s)");
    if (doc.contains("alignment") && (!positive("alignment", alignment) || alignment > double(std::int64_t(1) << 30)))
        return missing("alignment", "is not a positive number of bytes up to 2^30");
    double chipLink = 0, chipLatency = 0;
    if (doc.contains("chip_link_gb_s") && !positive("chip_link_gb_s", chipLink))
        return missing("chip_link_gb_s", "is not a positive number (GB/s)");
    if (const auto it = doc.find("chip_link_latency_us"); it != doc.end()) {
        if (!it->is_number() || it->get<double>() < 0)
            return missing("chip_link_latency_us", "is not a number of microseconds >= 0");
        chipLatency = it->get<double>();
    }
    profile.chipLinkBandwidth = chipLink * 1e9;
    profile.chipLinkLatency = chipLatency * 1e-6;
    profile.memoryCapacity = static_cast<Bytes>(capacity);
    profile.memoryBandwidth = bandwidth * 1e9;
    profile.hostLinkBandwidth = link * 1e9;
    profile.alignment = static_cast<Bytes>(alignment);
    const auto flops = doc.find("flops");
    if (flops == doc.end() || !flops->is_object() || flops->empty())
        return missing("flops", "is missing or not an object of dtype -> FLOP/s");
    for (const auto& [dtype, rate] : flops->items()) {
        if (!parseDType(dtype))
            return makeError(ErrorCode::InvalidModel, file + ": flops: unknown dtype '" + dtype + "'");
        if (!rate.is_number() || rate.get<double>() <= 0)
            return makeError(ErrorCode::InvalidModel, file + ": flops." + dtype + " is not a positive number (FLOP/s)");
        profile.flops[std::string(dtypeName(*parseDType(dtype)))] = rate.get<double>();
    }
    return profile;
}

Expected<DeviceProfile> loadDeviceProfile(const std::filesystem::path& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        return makeError(ErrorCode::Io, file.string() + ": cannot read the device profile (no such file?)");
    std::stringstream text;
    text << in.rdbuf();
    return parseDeviceProfile(text.str(), file.string());
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
