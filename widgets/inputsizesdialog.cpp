// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "inputsizesdialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
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

} // namespace

InputSizesDialog::InputSizesDialog(const core::OpenInputs& open, const core::ShapeBindings& current, QWidget* parent)
    : QDialog(parent)
    , m_open(open)
    , m_current(current)
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Input Sizes"));
    setMinimumWidth(440);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("The model's inputs leave these sizes open. MemPlan plans for the values given here "
                                "(as --dim and --input-shape do on the command line)."),
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
        box->setToolTip(tr("Symbolic dimension '%1' of the model's inputs").arg(QString::fromStdString(symbol)));
        form->addRow(tr("Dimension %1:").arg(QString::fromStdString(symbol)), box);
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
        form->addRow(tr("Shape of input %1:").arg(QString::fromStdString(input.name)), field);
        m_shapes.push_back(field);
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
    for (std::size_t k = 0; k < m_shapes.size(); ++k) {
        const auto& input = m_open.inputs[k];
        const QString name = QString::fromStdString(input.name);
        if (!parseShape(m_shapes[k]->text(), dims))
            return tr("Give input %1 a shape of positive whole numbers, e.g. 1,3,224,224.").arg(name);
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
    for (std::size_t k = 0; k < m_shapes.size(); ++k)
        if (parseShape(m_shapes[k]->text(), dims))
            b.inputShapes[m_open.inputs[k].name] = dims;
    return b;
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
