// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QFrame>

class QLabel;
class QToolButton;

// Non-modal message strip above the views (hotspot's KMessageWidget): an error or information
// line with a close button. Hidden until showMessage(); the window keeps working while it shows.
class MessageBanner : public QFrame {
    Q_OBJECT
public:
    enum class Type { Information, Error };
    explicit MessageBanner(QWidget* parent = nullptr);

    void showMessage(const QString& text, Type type = Type::Error);
    QString text() const;
    Type type() const { return m_type; }

private:
    QLabel* m_icon;
    QLabel* m_text;
    QToolButton* m_close;
    Type m_type = Type::Information;
};
