// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"
#include "onnx/onnximport.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

// File > Input Sizes: the values an ONNX model's inputs leave open, as the command line's --dim
// NAME=V and --input-shape NAME=D0,D1,... give them: a spin box per symbolic dimension (1 unless
// `current` binds it) and a shape field per input with an unnamed or undeclared dimension. OK stays
// disabled while a field does not hold positive whole numbers of the declared rank; the line under
// the fields says which.
class InputSizesDialog : public QDialog {
    Q_OBJECT
public:
    InputSizesDialog(const core::OpenInputs& open, const core::ShapeBindings& current, QWidget* parent = nullptr);

    // `current` with every field's value: dims for the symbols, inputShapes for the inputs.
    core::ShapeBindings bindings() const;
    // Empty when every field is valid, else why not (naming the input).
    QString problem() const;

    QSpinBox* dimBox(const QString& symbol) const;
    QLineEdit* shapeField(const QString& input) const;

private:
    void validate();

    core::OpenInputs m_open;
    core::ShapeBindings m_current;
    std::vector<QSpinBox*> m_dims;      // per m_open.symbols
    std::vector<QLineEdit*> m_shapes;   // per m_open.inputs
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};
