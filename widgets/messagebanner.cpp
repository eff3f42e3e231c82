// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#include "messagebanner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QToolButton>

MessageBanner::MessageBanner(QWidget* parent)
    : QFrame(parent)
    , m_icon(new QLabel(this))
    , m_text(new QLabel(this))
    , m_action(new QToolButton(this))
    , m_close(new QToolButton(this))
{
    setObjectName(QStringLiteral("messageBanner"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_text->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    m_close->setAutoRaise(true);
    m_close->setText(QStringLiteral("✕"));
    m_close->setToolTip(tr("Dismiss"));
    connect(m_close, &QToolButton::clicked, this, &QWidget::hide);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    layout->addWidget(m_icon, 0, Qt::AlignTop);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_action, 0, Qt::AlignTop);
    layout->addWidget(m_close, 0, Qt::AlignTop);
    m_action->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_action->hide();
    hide();
}

void MessageBanner::showMessage(const QString& text, Type type, QAction* action)
{
    setToolTip(QString()); // details belong to one message: the caller sets them after this
    m_remedy = action;
    m_action->setVisible(action != nullptr);
    if (action)
        m_action->setDefaultAction(action);
    m_type = type;
    const bool error = type == Type::Error;
    setStyleSheet(error
            ? QStringLiteral("#messageBanner { background: #fbe3e4; border: 1px solid #d9534f; border-radius: 4px; }"
                             " QLabel { color: #7a1f1d; }")
            : QStringLiteral("#messageBanner { background: #e3eefb; border: 1px solid #4a90d9; border-radius: 4px; }"
                             " QLabel { color: #1d3f7a; }"));
    const auto icon = style()->standardIcon(error ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxInformation);
    m_icon->setPixmap(icon.pixmap(20, 20));
    m_text->setText(text);
    show();
}

QString MessageBanner::text() const { return m_text->text(); }
