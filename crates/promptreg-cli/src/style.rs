//! Colours, only when asked for.

use anstyle::{AnsiColor, Style};

/// Paints text when colour is on.
#[derive(Clone, Copy)]
pub struct Paint {
    pub color: bool,
}

impl Paint {
    fn paint(self, style: Style, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_owned()
        }
    }

    pub fn heading(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }

    pub fn origin(self, text: &str) -> String {
        self.paint(AnsiColor::Cyan.on_default().bold(), text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    pub fn added(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    pub fn removed(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default(), text)
    }
}
