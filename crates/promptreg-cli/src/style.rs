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

    /// A unified diff, each line coloured by what it is.
    pub fn diff(self, diff: &str) -> String {
        diff.lines()
            .map(|line| {
                let line = match line.as_bytes().first() {
                    Some(b'+') => self.added(line),
                    Some(b'-') => self.removed(line),
                    Some(b'@') => self.origin(line),
                    _ => line.to_owned(),
                };
                line + "\n"
            })
            .collect()
    }
}
