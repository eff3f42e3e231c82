// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: MemPlan authors
#pragma once

#include <QFontMetrics>
#include <QLabel>
#include <QResizeEvent>

// A one-line label that cuts its text at the right with "…" to the width it is given, rather than
// painting as much as fits (the status bar's narration ran on under the step readout). The whole
// text stays in fullText() and the tooltip.
class ElidedLabel : public QLabel {
public:
    using QLabel::QLabel;

    void setFullText(const QString& text)
    {
        m_full = text;
        setToolTip(text);
        elide();
    }
    QString fullText() const { return m_full; }

protected:
    void resizeEvent(QResizeEvent* event) override
    {
        QLabel::resizeEvent(event);
        elide();
    }

private:
    void elide()
    {
        const int room = contentsRect().width() - 2 * margin();
        setText(room > 0 ? fontMetrics().elidedText(m_full, Qt::ElideRight, room) : m_full);
    }

    QString m_full;
};
