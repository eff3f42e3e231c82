// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "timeaxis.h"

#include "util/format.h"

#include <cmath>

double niceStep(double rough)
{
    if (!(rough > 0))
        return 1;
    const double power = std::pow(10.0, std::floor(std::log10(rough)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 })
        if (m * power >= rough)
            return m * power;
    return 10 * power;
}

namespace {

std::vector<double> ticksWithStep(double first, double last, double step)
{
    std::vector<double> ticks;
    for (double t = std::ceil(first / step - 1e-9) * step; t <= last + 1e-9 * step; t += step)
        ticks.push_back(std::abs(t) < 1e-9 * step ? 0.0 : t);
    return ticks;
}
} // namespace

std::vector<double> niceTicks(double first, double last, int maxTicks, double minStep)
{
    if (!(last > first) || maxTicks < 1)
        return {};
    double step = niceStep((last - first) / maxTicks);
    if (step < minStep)
        step = minStep;
    return ticksWithStep(first, last, step);
}

std::vector<double> byteTicks(double low, double high, int maxTicks)
{
    if (!(high > low) || maxTicks < 1)
        return {};
    const double unit = byteUnitFor(high).divisor;
    const double step = std::max(1.0, niceStep((high - low) / maxTicks / unit) * unit);
    return ticksWithStep(low, high, step);
}

QString formatInUnit(double bytes, const ByteUnit& unit)
{
    QString number = QString::number(bytes / unit.divisor, 'f', 2);
    while (
        number.contains(QLatin1Char('.')) && (number.endsWith(QLatin1Char('0')) || number.endsWith(QLatin1Char('.'))))
        number.chop(1);
    return number + QLatin1Char(' ') + unit.name;
}

QString shortBytes(double bytes)
{
    QString text = QString::fromStdString(core::formatBytes(static_cast<std::int64_t>(std::llround(bytes))));
    const int space = text.indexOf(QLatin1Char(' '));
    const int dot = text.indexOf(QLatin1Char('.'));
    if (dot >= 0 && space > dot) {
        int end = space;
        while (end > dot + 1 && text.at(end - 1) == QLatin1Char('0'))
            --end;
        if (end == dot + 1)
            end = dot;
        text = text.left(end) + text.mid(space);
    }
    return text;
}

ByteUnit byteUnitFor(double maxBytes)
{
    if (maxBytes >= 1024.0 * 1024 * 1024)
        return { 1024.0 * 1024 * 1024, QStringLiteral("GiB") };
    if (maxBytes >= 1024.0 * 1024)
        return { 1024.0 * 1024, QStringLiteral("MiB") };
    if (maxBytes >= 1024.0)
        return { 1024.0, QStringLiteral("KiB") };
    return { 1, QStringLiteral("B") };
}
