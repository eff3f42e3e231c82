// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "tolerancespinbox.h"

#include <QLocale>

#include <cmath>

ToleranceSpinBox::ToleranceSpinBox(QWidget* parent)
    : QDoubleSpinBox(parent)
{
    setDecimals(15); // the value is kept to this many decimals: 1e-9 must survive
    setRange(1e-9, 1.0);
    setCorrectionMode(QAbstractSpinBox::CorrectToPreviousValue);
}

void ToleranceSpinBox::stepBy(int steps)
{
    setValue(value() * std::pow(10.0, steps));
}

QString ToleranceSpinBox::textFromValue(double value) const { return format(value); }

double ToleranceSpinBox::valueFromText(const QString& text) const
{
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    return ok ? v : value();
}

QValidator::State ToleranceSpinBox::validate(QString& text, int&) const
{
    const QString t = text.trimmed();
    if (t.isEmpty())
        return QValidator::Intermediate;
    bool ok = false;
    const double v = t.toDouble(&ok);
    if (ok && v >= minimum() && v <= maximum())
        return QValidator::Acceptable;
    // A number on its way ("1e", "1e-", "0.") or out of range for now.
    for (QChar c : t)
        if (!(c.isDigit() || c == QLatin1Char('.') || c == QLatin1Char('e') || c == QLatin1Char('E') || c == QLatin1Char('-')
                || c == QLatin1Char('+')))
            return QValidator::Invalid;
    return QValidator::Intermediate;
}

QString ToleranceSpinBox::format(double value)
{
    if (value == 0)
        return QStringLiteral("0");
    if (!std::isfinite(value))
        return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    if (std::fabs(value) >= 0.01 && std::fabs(value) < 1e4)
        return QString::number(value, 'g', 2);
    int exponent = static_cast<int>(std::floor(std::log10(std::fabs(value))));
    double mantissa = value / std::pow(10.0, exponent);
    mantissa = std::round(mantissa * 10) / 10; // two significant digits
    if (std::fabs(mantissa) >= 10) {
        mantissa /= 10;
        ++exponent;
    }
    return QStringLiteral("%1e%2").arg(QString::number(mantissa, 'g', 2)).arg(exponent);
}
