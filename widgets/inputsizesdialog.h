// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include "graph/graph.h"
#include "onnx/onnximport.h"

#include <QDialog>

#include <filesystem>
#include <utility>
#include <vector>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

// File > Input Sizes: the values an ONNX model's inputs leave open, as the command line's --dim
// NAME=V, --input-shape NAME=D0,D1,... and --input NAME=FILE.pb give them: a spin box per symbolic
// dimension (1 unless `current` binds it), a shape field per input with an unnamed or undeclared
// dimension, and a file field (with a Browse button) per graph input whose contents a TensorProto,
// SequenceProto or OptionalProto file gives: its shape, the values or list elements that size what
// the model computes from them, and a run's input. A shape field may stay empty when its input has a
// file. OK stays disabled while a shape field does not hold positive whole numbers of the declared
// rank or a file field names no file; the line under the fields says which.
class InputSizesDialog : public QDialog {
    Q_OBJECT
public:
    using InputFiles = std::vector<std::pair<std::string, std::filesystem::path>>;
    InputSizesDialog(const core::OpenInputs& open, const core::ShapeBindings& current, const InputFiles& files = {},
        QWidget* parent = nullptr);

    // `current` with every field's value: dims for the symbols, inputShapes for the inputs.
    core::ShapeBindings bindings() const;
    // The file fields that name a file, in graph-input order.
    InputFiles files() const;
    // Empty when every field is valid, else why not (naming the input).
    QString problem() const;

    QSpinBox* dimBox(const QString& symbol) const;
    QLineEdit* shapeField(const QString& input) const;
    QLineEdit* fileField(const QString& input) const;

private:
    void validate();
    bool hasFile(const std::string& input) const;

    core::OpenInputs m_open;
    core::ShapeBindings m_current;
    std::vector<QSpinBox*> m_dims;      // per m_open.symbols
    std::vector<QLineEdit*> m_shapes;   // per m_open.inputs
    std::vector<QLineEdit*> m_files;    // per m_open.names
    QLabel* m_problem;
    QDialogButtonBox* m_buttons;
};
