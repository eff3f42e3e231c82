// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QDoubleSpinBox>

// A relative tolerance in scientific notation ("1e-3", "2.5e-6"): the arrows step by factors of
// ten, typing accepts any number in range (1e-3, 0.001, 1E-3). QDoubleSpinBox's fixed decimals
// would show 1e-6 as 0.000001 and round smaller values to zero.
class ToleranceSpinBox : public QDoubleSpinBox {
    Q_OBJECT
public:
    explicit ToleranceSpinBox(QWidget* parent = nullptr);

    void stepBy(int steps) override;
    QString textFromValue(double value) const override;
    double valueFromText(const QString& text) const override;
    QValidator::State validate(QString& text, int& pos) const override;

    // "3.1e-6", "1e-3", "0.25", "0": two significant digits, the exponent without padding.
    static QString format(double value);
};
