// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QFrame>

class QAction;
class QLabel;
class QToolButton;

// Non-modal message strip above the views (hotspot's KMessageWidget): an error or information
// line with a close button, and a button for `action` when the message has a remedy. Hidden until
// showMessage(); the window keeps working while it shows.
class MessageBanner : public QFrame {
    Q_OBJECT
public:
    enum class Type { Information, Error };
    explicit MessageBanner(QWidget* parent = nullptr);

    void showMessage(const QString& text, Type type = Type::Error, QAction* action = nullptr);
    QString text() const;
    QAction* remedy() const { return m_remedy; } // the action offered with the message, or null
    Type type() const { return m_type; }

private:
    QLabel* m_icon;
    QLabel* m_text;
    QToolButton* m_action;
    QToolButton* m_close;
    QAction* m_remedy = nullptr;
    Type m_type = Type::Information;
};
