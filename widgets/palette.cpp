// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "palette.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

namespace ViewPalette {

namespace {
    // Tableau 10: a qualitative palette designed so neighbours stay distinguishable.
    constexpr std::array<QRgb, 10> kBase
        = { 0x4E79A7, 0xF28E2B, 0xE15759, 0x76B7B2, 0x59A14F, 0xEDC948, 0xB07AA1, 0xFF9DA7, 0x9C755F, 0xBAB0AC };

    double linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

    std::array<double, 3> toLab(const QColor& color)
    {
        const double r = linear(color.redF()), g = linear(color.greenF()), b = linear(color.blueF());
        const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
        return { 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z)) };
    }
} // namespace

QColor kindColor(core::TensorKind kind)
{
    switch (kind) {
    case core::TensorKind::Activation:
        return QColor(0x4E79A7); // calm blue: most buffers are activations
    case core::TensorKind::Input:
        return QColor(0x59A14F); // green
    case core::TensorKind::Output:
        return QColor(0xE15759); // red
    case core::TensorKind::Weight:
        return QColor(0xEDC948); // yellow
    case core::TensorKind::Persistent:
        return QColor(0x1F6F6B); // dark teal (purple is the swap marks')
    case core::TensorKind::Workspace:
        return QColor(0x9C755F); // brown: an op's temporary memory, live for one step
    }
    return QColor(0xBAB0AC);
}

QColor categoryColor(int slot)
{
    // input, parameter, buffer, gradient, optimizer_state, saved, temporary, output, other
    static constexpr std::array<QRgb, 9> kColors { 0x59A14F, 0xB07AA1, 0xD4A6C8, 0xF28E2B, 0x76448A, 0x4E79A7,
        0x9ECAE9, 0xE15759, 0xBAB0AC };
    if (slot < 0 || slot >= static_cast<int>(kColors.size()))
        return QColor(kColors.back());
    return QColor(kColors[static_cast<std::size_t>(slot)]);
}

QColor moduleColor(const std::string& module)
{
    if (module.empty())
        return QColor(0xA0A4A8);
    return nameColor(module.substr(0, module.find('.')));
}

QColor nameColor(const std::string& name)
{
    // A stable hue per name (FNV-1a), independent of load order.
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : name)
        hash = (hash ^ c) * 16777619u;
    return indexColor(static_cast<int>(hash % 30));
}

QColor indexColor(int index)
{
    if (index < 0)
        return QColor(0xA0A4A8);
    const QColor base(kBase[static_cast<std::size_t>(index) % kBase.size()]);
    const int round = index / static_cast<int>(kBase.size());
    if (round == 0)
        return base;
    // Odd rounds darker, even rounds lighter; the shift shrinks slowly so later rounds still differ.
    const double amount = 0.30 + 0.05 * ((round - 1) / 2 % 3);
    float h, s, l;
    base.getHslF(&h, &s, &l);
    if (round % 2 == 1)
        l = static_cast<float>(l * (1.0 - amount));
    else
        l = static_cast<float>(l + (1.0 - l) * amount);
    return QColor::fromHslF(h, s, l);
}

QColor textColorOn(const QColor& background)
{
    const double luminance = 0.2126 * linear(background.redF()) + 0.7152 * linear(background.greenF())
        + 0.0722 * linear(background.blueF());
    // Contrast with white vs. with near-black (#1E1E1E, luminance ≈ 0.013).
    const double withWhite = 1.05 / (luminance + 0.05);
    const double withBlack = (luminance + 0.05) / (0.013 + 0.05);
    return withWhite >= withBlack ? QColor(Qt::white) : QColor(0x1E1E1E);
}

QColor faded(const QColor& color, double amount)
{
    auto mix = [amount](int c) { return static_cast<int>(std::lround(c + (255 - c) * amount)); };
    return QColor(mix(color.red()), mix(color.green()), mix(color.blue()), color.alpha());
}

double colorDistance(const QColor& a, const QColor& b)
{
    const auto la = toLab(a), lb = toLab(b);
    return std::sqrt(
        (la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) + (la[2] - lb[2]) * (la[2] - lb[2]));
}

QColor background() { return QColor(0xFAFAFA); }
QColor plotBackground() { return QColor(0xFFFFFF); }
QColor gridLine() { return QColor(0xE3E5E8); }
QColor axisText() { return QColor(0x3C4043); }
QColor outline() { return QColor(0x111111); }
QColor cursorLine() { return QColor(0xD62728); }
QColor denseFill() { return QColor(0x8A8A8A); } // neutral grey: apart from every category and kind colour

} // namespace ViewPalette
