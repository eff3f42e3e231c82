// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "examples/examples.h"

#include "examples/examplenets.h"

#include <algorithm>

namespace core {

namespace {
struct Stay {
    const char* name;
    Bytes size;
    Step start, end;
};

PlanProblem problemFrom(std::initializer_list<Stay> stays)
{
    PlanProblem problem;
    problem.alignment = 1;
    for (const auto& stay : stays) {
        problem.buffers.push_back(Buffer { stay.name, { stay.start, stay.end }, stay.size, TensorKind::Activation, { stay.name } });
        problem.steps = std::max(problem.steps, stay.end);
    }
    return problem;
}

// The hotel front desk: guests are buffers, 100-byte rooms are memory blocks, steps are nights.
// At most three guests stay on any night (nights 1 to 4 have three), so three rooms suffice:
// first-fit gives Ada's room to Eve and Ben's room to Dan, then to Finn.
//
//   night   0    1    2    3    4    5
//   Ada     ███████████████
//   Ben     ██████████
//   Cleo         ████████████████████
//   Dan               ██████████
//   Eve                    ███████████████
//   Finn                        ██████████
PlanProblem hotel()
{
    constexpr Bytes kRoom = 100;
    return problemFrom({
        { "Ada", kRoom, 0, 3 },
        { "Ben", kRoom, 0, 2 },
        { "Cleo", kRoom, 1, 5 },
        { "Dan", kRoom, 2, 4 },
        { "Eve", kRoom, 3, 6 },
        { "Finn", kRoom, 4, 6 },
    });
}

// The second seed example: first-fit places w1 0, a1 512, w2 640, a2 512, out 0 in 896 bytes.
PlanProblem fiveTensors()
{
    return problemFrom({
        { "w1", 512, 0, 3 },
        { "a1", 128, 0, 1 },
        { "w2", 256, 1, 4 },
        { "a2", 128, 2, 3 },
        { "out", 64, 3, 4 },
    });
}
} // namespace

const std::vector<ExampleInfo>& exampleList()
{
    static const std::vector<ExampleInfo> list {
        { "hotel", "hotel front desk: six guests in 100-byte rooms, at most three at a time, fit in three rooms" },
        { "five-tensors", "five tensors w1, a1, w2, a2, out: the seed's first-fit packs them in 896 bytes, the lower bound" },
        { "cnn", "ResNet-18 (batch norm folded) on 1x3x224x224 float32: stem, 8 residual blocks, pool, FC" },
        { "unet", "4-level U-Net on 1x3x256x256 float32: long skips keep encoder activations alive for the decoder" },
        { "transformer", "4 transformer encoder layers, seq 128, hidden 512, 8 heads, FFN 2048, float32" },
    };
    return list;
}

Expected<Example> buildExample(const std::string& name)
{
    Example example;
    if (name == "hotel")
        example.problem = hotel();
    else if (name == "five-tensors")
        example.problem = fiveTensors();
    else if (name == "cnn")
        example.graph = buildCnnExample();
    else if (name == "unet")
        example.graph = buildUnetExample();
    else if (name == "transformer")
        example.graph = buildTransformerExample();
    else {
        std::string known;
        for (const auto& info : exampleList())
            known += (known.empty() ? "" : ", ") + info.name;
        return makeError(ErrorCode::InvalidArgument, "unknown example '" + name + "'; known examples: " + known);
    }
    return example;
}

} // namespace core
