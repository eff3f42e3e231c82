// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "inputsizesdialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cctype>
#include <limits>

namespace {

// "1,3,224,224", "1x3x224x224" or "1 3 224 224" as dims; false when a part is not a positive
// whole number.
bool parseShape(const QString& text, std::vector<std::int64_t>& dims)
{
    dims.clear();
    static const QRegularExpression separators(QStringLiteral("[,x×\\s]+"));
    const auto parts = text.trimmed().split(separators, Qt::SkipEmptyParts);
    for (const auto& part : parts) {
        bool ok = false;
        const qlonglong v = part.toLongLong(&ok);
        if (!ok || v <= 0)
            return false;
        dims.push_back(v);
    }
    return !dims.empty();
}

bool isNumber(const std::string& dim)
{
    return !dim.empty() && std::all_of(dim.begin(), dim.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The declared dims with 1 for each open one: "1,3,224,224" for batch×3×224×224.
QString example(const std::vector<std::string>& dims)
{
    QStringList parts;
    for (const auto& d : dims)
        parts << (isNumber(d) ? QString::fromStdString(d) : QStringLiteral("1"));
    return parts.join(QLatin1Char(','));
}

QString joined(const std::vector<std::string>& dims)
{
    QStringList parts;
    for (const auto& d : dims)
        parts << QString::fromStdString(d);
    return parts.join(QStringLiteral("×"));
}

// Where a symbolic dimension sits: "axis 0 of input_ids, axis 0 of attention_mask" (at most three).
QString symbolPlaces(const core::OpenInputs& open, const std::string& symbol)
{
    QStringList places;
    int more = 0;
    for (const auto& input : open.declared)
        for (std::size_t d = 0; d < input.dims.size(); ++d)
            if (input.dims[d] == symbol) {
                if (places.size() < 3)
                    places << QObject::tr("axis %1 of %2").arg(d).arg(QString::fromStdString(input.name));
                else
                    ++more;
            }
    QString text = places.join(QStringLiteral(", "));
    if (more > 0)
        text += QObject::tr(" and %1 more").arg(more);
    return text;
}

} // namespace

InputSizesDialog::InputSizesDialog(const core::OpenInputs& open, const core::ShapeBindings& current, const InputFiles& files, QWidget* parent)
    : QDialog(parent)
    , m_open(open)
    , m_current(current)
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Input Sizes"));
    setMinimumWidth(440);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("MemPlan plans for the sizes given here (as --dim, --input-shape and --input do on the "
                                "command line). A file gives an input's contents: its shape, the values or list elements "
                                "that size what the model computes from them, and the input of a run."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* form = new QFormLayout;
    for (const auto& symbol : m_open.symbols) {
        auto* box = new QSpinBox(this);
        box->setRange(1, std::numeric_limits<int>::max());
        const auto bound = m_current.dims.find(symbol);
        box->setValue(bound != m_current.dims.end() && bound->second >= 1 && bound->second <= box->maximum() ? int(bound->second) : 1);
        box->setObjectName(QStringLiteral("dim:") + QString::fromStdString(symbol));
        const QString places = symbolPlaces(m_open, symbol);
        box->setToolTip(places.isEmpty() ? tr("Symbolic dimension '%1' of the model's inputs").arg(QString::fromStdString(symbol))
                                         : tr("Symbolic dimension '%1': %2").arg(QString::fromStdString(symbol), places));
        // The name alone says little when an exporter made it up ("unk__612", "s0"): say where it sits.
        auto* row = new QHBoxLayout;
        row->addWidget(box);
        if (!places.isEmpty()) {
            auto* where = new QLabel(places, this);
            where->setObjectName(QStringLiteral("places:") + QString::fromStdString(symbol));
            where->setStyleSheet(QStringLiteral("color: gray;"));
            row->addWidget(where, 1);
        }
        form->addRow(tr("Dimension %1:").arg(QString::fromStdString(symbol)), row);
        m_dims.push_back(box);
    }
    for (const auto& input : m_open.inputs) {
        auto* field = new QLineEdit(this);
        field->setObjectName(QStringLiteral("shape:") + QString::fromStdString(input.name));
        if (const auto given = m_current.inputShapes.find(input.name); given != m_current.inputShapes.end()) {
            QStringList parts;
            for (auto d : given->second)
                parts << QString::number(d);
            field->setText(parts.join(QLatin1Char(',')));
        }
        field->setPlaceholderText(input.shapeDeclared ? tr("declared %1, e.g. %2").arg(joined(input.dims), example(input.dims))
                                                      : tr("no shape declared, e.g. 1,3,224,224"));
        field->setToolTip(input.shapeDeclared
                ? tr("Input %1 is declared %2: give every dimension, ? ones included (axis by axis, left to right)")
                      .arg(QString::fromStdString(input.name), joined(input.dims))
                : tr("Input %1 declares no shape: give all of it").arg(QString::fromStdString(input.name)));
        form->addRow(tr("Shape of input %1:").arg(QString::fromStdString(input.name)), field);
        m_shapes.push_back(field);
        connect(field, &QLineEdit::textChanged, this, &InputSizesDialog::validate);
    }
    for (const auto& name : m_open.names) {
        auto* field = new QLineEdit(this);
        field->setObjectName(QStringLiteral("file:") + QString::fromStdString(name));
        field->setPlaceholderText(tr("no file: random contents"));
        const auto given = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first == name; });
        if (given != files.end())
            field->setText(QString::fromStdString(given->second.string()));
        auto* browse = new QPushButton(tr("Browse…"), this);
        browse->setToolTip(tr("Choose a TensorProto, SequenceProto or OptionalProto file (.pb) for input %1").arg(QString::fromStdString(name)));
        connect(browse, &QPushButton::clicked, this, [this, field, name] {
            const QString path = QFileDialog::getOpenFileName(this, tr("Contents of input %1").arg(QString::fromStdString(name)),
                field->text().isEmpty() ? QString() : QFileInfo(field->text()).absolutePath(), tr("ONNX tensor files (*.pb);;All files (*)"));
            if (!path.isEmpty())
                field->setText(path);
        });
        auto* row = new QHBoxLayout;
        row->addWidget(field, 1);
        row->addWidget(browse);
        form->addRow(tr("Contents of input %1:").arg(QString::fromStdString(name)), row);
        m_files.push_back(field);
        connect(field, &QLineEdit::textChanged, this, &InputSizesDialog::validate);
    }
    layout->addLayout(form);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #b02a2a;"));
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    validate();
}

QString InputSizesDialog::problem() const
{
    std::vector<std::int64_t> dims;
    for (std::size_t k = 0; k < m_files.size(); ++k) {
        const QString path = m_files[k]->text().trimmed();
        if (!path.isEmpty() && !QFileInfo(path).isFile())
            return tr("The file for input %1 does not exist: %2").arg(QString::fromStdString(m_open.names[k]), path);
    }
    for (std::size_t k = 0; k < m_shapes.size(); ++k) {
        const auto& input = m_open.inputs[k];
        const QString name = QString::fromStdString(input.name);
        if (m_shapes[k]->text().trimmed().isEmpty() && hasFile(input.name))
            continue; // the file gives the shape
        if (!parseShape(m_shapes[k]->text(), dims))
            return tr("Give input %1 a shape of positive whole numbers (e.g. %2) or a file with its contents.")
                .arg(name, input.shapeDeclared && !input.dims.empty() ? example(input.dims) : QStringLiteral("1,3,224,224"));
        if (input.shapeDeclared && dims.size() != input.dims.size())
            return tr("Input %1 is declared with %2 dimensions (%3); the shape given has %4.")
                .arg(name)
                .arg(input.dims.size())
                .arg(joined(input.dims))
                .arg(dims.size());
        for (std::size_t d = 0; input.shapeDeclared && d < dims.size(); ++d) {
            const auto& declared = input.dims[d];
            if (isNumber(declared) && std::to_string(dims[d]) != declared)
                return tr("Input %1 declares dimension %2 as %3; the shape given has %4.")
                    .arg(name)
                    .arg(d)
                    .arg(QString::fromStdString(declared))
                    .arg(dims[d]);
        }
    }
    return {};
}

void InputSizesDialog::validate()
{
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

core::ShapeBindings InputSizesDialog::bindings() const
{
    core::ShapeBindings b = m_current;
    for (std::size_t k = 0; k < m_dims.size(); ++k)
        b.dims[m_open.symbols[k]] = m_dims[k]->value();
    std::vector<std::int64_t> dims;
    for (std::size_t k = 0; k < m_shapes.size(); ++k) {
        if (parseShape(m_shapes[k]->text(), dims))
            b.inputShapes[m_open.inputs[k].name] = dims;
        else
            b.inputShapes.erase(m_open.inputs[k].name); // left to its file
    }
    return b;
}

InputSizesDialog::InputFiles InputSizesDialog::files() const
{
    InputFiles files;
    for (std::size_t k = 0; k < m_files.size(); ++k)
        if (const QString path = m_files[k]->text().trimmed(); !path.isEmpty())
            files.emplace_back(m_open.names[k], std::filesystem::path(path.toStdString()));
    return files;
}

bool InputSizesDialog::hasFile(const std::string& input) const
{
    for (std::size_t k = 0; k < m_files.size(); ++k)
        if (m_open.names[k] == input && !m_files[k]->text().trimmed().isEmpty())
            return true;
    return false;
}

QLineEdit* InputSizesDialog::fileField(const QString& input) const
{
    for (std::size_t k = 0; k < m_files.size(); ++k)
        if (QString::fromStdString(m_open.names[k]) == input)
            return m_files[k];
    return nullptr;
}

QSpinBox* InputSizesDialog::dimBox(const QString& symbol) const
{
    for (std::size_t k = 0; k < m_dims.size(); ++k)
        if (QString::fromStdString(m_open.symbols[k]) == symbol)
            return m_dims[k];
    return nullptr;
}

QLineEdit* InputSizesDialog::shapeField(const QString& input) const
{
    for (std::size_t k = 0; k < m_shapes.size(); ++k)
        if (QString::fromStdString(m_open.inputs[k].name) == input)
            return m_shapes[k];
    return nullptr;
}
