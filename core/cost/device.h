// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace core {

// Numbers that describe a target, read from a JSON file (resources/devices/*.json):
// {
//   "name": "h200", "description": "...",
//   "memory_capacity_bytes": 150323855360,     device memory (or on-chip SRAM) in bytes
//   "memory_bandwidth_gb_s": 4800,             device memory bandwidth, GB/s (1e9 bytes per second)
//   "host_link_gb_s": 64,                      host <-> device link, GB/s, one direction
//   "flops": { "float32": 6.7e13, "float16": 9.89e14, ... },   peak FLOP/s per dtype name
//   "alignment": 256,                          preferred activation alignment in bytes
//   "chip_link_gb_s": 60,                      optional: chip <-> chip link, GB/s, one direction
//   "chip_link_latency_us": 0.5,               optional: latency of one chip <-> chip transfer, microseconds
//   "notes": "..."                             optional, ignored: where the numbers come from
// }
// The chip link fields describe multi-chip targets whose chips pass tensors to each other directly
// (core/scenarios/multichip.h). A profile without them sends chip-to-chip traffic over the host link
// with no extra latency (chipLinkBandwidthOrHost).
struct DeviceProfile {
    std::string name;
    std::string description;
    std::string file; // where it was read from ("" for profiles built in code)
    Bytes memoryCapacity = 0;
    double memoryBandwidth = 0; // bytes per second
    double hostLinkBandwidth = 0; // bytes per second, one direction
    std::map<std::string, double> flops; // dtype name (dtypeName spelling) -> FLOP/s
    Bytes alignment = 256;
    double chipLinkBandwidth = 0; // bytes per second, one direction; 0: the profile has no chip link
    double chipLinkLatency = 0;   // seconds per transfer; 0 when the profile gives none

    // Chip-to-chip bandwidth: the chip link when the profile has one, else the host link.
    double chipLinkBandwidthOrHost() const { return chipLinkBandwidth > 0 ? chipLinkBandwidth : hostLinkBandwidth; }

    // FLOP/s for `dtype`; falls back to float32, then to the largest rate listed.
    double flopsFor(DType dtype) const;
};

// Parses a profile; errors name `file` and the field at fault. Every field but "description",
// "alignment", "notes" and the chip link fields is required; rates and sizes must be positive
// ("chip_link_latency_us" may be 0).
Expected<DeviceProfile> parseDeviceProfile(const std::string& jsonText, const std::string& file);
Expected<DeviceProfile> loadDeviceProfile(const std::filesystem::path& file);

// Folder of the built-in profiles (MEMPLAN_RESOURCES_DIR/devices, compiled in).
std::filesystem::path builtinDeviceDir();

// Every readable built-in profile, sorted by name. Unreadable files are skipped (tests check them).
std::vector<DeviceProfile> builtinDevices();

// `spec` is a built-in profile name ("h200") or a path to a profile file (contains '/' or ends in .json).
Expected<DeviceProfile> findDevice(const std::string& spec);

// The profile used when none is named: the built-in "h200", or a conservative stand-in when the
// resources folder is missing.
DeviceProfile defaultDevice();

} // namespace core
