//! A reader of server-sent events (the `text/event-stream` format of the
//! HTML standard): lines of `field: value`, an event ending at a blank
//! line, comments starting with `:`.

use std::io::BufRead;
use std::time::Duration;

/// One event as dispatched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// `event:`; `message` when the event names none.
    pub(crate) kind: String,
    /// Every `data:` line, joined by newlines.
    pub(crate) data: String,
    /// The last event id in force after this event, if any was ever set.
    pub(crate) id: Option<String>,
    /// A `retry:` hint this event carried.
    pub(crate) retry: Option<Duration>,
}

/// What one line of the stream produced.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A complete event.
    Event(SseEvent),
    /// A comment (a keep-alive).
    Comment,
    /// Nothing yet.
    Pending,
}

/// The state of an event being read, line by line.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    kind: String,
    data: Option<String>,
    last_id: Option<String>,
    retry: Option<Duration>,
}

impl Parser {
    /// Feeds one line, without its line ending.
    pub(crate) fn line(&mut self, line: &str) -> Line {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return Line::Comment;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.kind = value.to_owned(),
            "data" => {
                // Each line ends with a newline; dispatch drops the last.
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            // An id with a NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Line::Pending
    }

    /// Ends the event at a blank line: one without data is not dispatched
    /// (but its id and retry stay in force).
    fn dispatch(&mut self) -> Line {
        let kind = std::mem::take(&mut self.kind);
        let retry = self.retry.take();
        match self.data.take() {
            None => Line::Pending,
            Some(mut data) => Line::Event(SseEvent {
                kind: if kind.is_empty() {
                    "message".to_owned()
                } else {
                    kind
                },
                data: {
                    data.pop();
                    data
                },
                id: self.last_id.clone(),
                retry,
            }),
        }
    }
}

/// Reads `stream` line by line and hands each event and comment to
/// `each`, until the stream ends, fails or `each` returns `false`.
pub(crate) fn read(
    stream: impl BufRead,
    mut each: impl FnMut(Line) -> bool,
) -> std::io::Result<()> {
    let mut parser = Parser::default();
    for line in stream.lines() {
        let line = line?;
        let line = line.strip_suffix('\r').unwrap_or(&line);
        match parser.line(line) {
            Line::Pending => {}
            other => {
                if !each(other) {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<Line> {
        let mut got = Vec::new();
        read(text.as_bytes(), |line| {
            got.push(line);
            true
        })
        .unwrap();
        got
    }

    fn event(kind: &str, data: &str, id: Option<&str>) -> Line {
        Line::Event(SseEvent {
            kind: kind.to_owned(),
            data: data.to_owned(),
            id: id.map(str::to_owned),
            retry: None,
        })
    }

    #[test]
    fn fields_make_one_event_at_the_blank_line() {
        assert_eq!(
            events("id: 7\nevent: label_moved\ndata: {\"a\":1}\n\n"),
            [event("label_moved", "{\"a\":1}", Some("7"))]
        );
    }

    #[test]
    fn data_lines_join_with_newlines_and_one_leading_space_is_dropped() {
        assert_eq!(
            events("data: one\ndata:two\ndata:  three\n\n"),
            [event("message", "one\ntwo\n three", None)]
        );
    }

    #[test]
    fn an_empty_data_line_keeps_its_place() {
        assert_eq!(
            events("data\ndata: x\n\ndata: y\ndata\n\n"),
            [event("message", "\nx", None), event("message", "y\n", None)]
        );
    }

    #[test]
    fn comments_are_reported_and_break_nothing() {
        assert_eq!(
            events(": keep-alive\ndata: a\n: in between\n\n"),
            [Line::Comment, Line::Comment, event("message", "a", None)]
        );
    }

    #[test]
    fn the_last_id_stays_in_force_until_changed() {
        assert_eq!(
            events("id: 1\ndata: a\n\ndata: b\n\nid: 2\n\ndata: c\n\n"),
            [
                event("message", "a", Some("1")),
                event("message", "b", Some("1")),
                event("message", "c", Some("2")),
            ]
        );
    }

    #[test]
    fn retry_is_read_in_milliseconds_and_bad_values_are_ignored() {
        let got = events("retry: 500\nevent: reconnect\ndata: {}\n\nretry: soon\ndata: x\n\n");
        let Line::Event(first) = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(first.retry, Some(Duration::from_millis(500)));
        assert_eq!(first.kind, "reconnect");
        let Line::Event(second) = &got[1] else {
            panic!("{got:?}")
        };
        assert_eq!(second.retry, None);
    }

    #[test]
    fn crlf_line_endings_and_events_without_data() {
        assert_eq!(
            events("event: nothing\r\n\r\nevent: x\r\ndata: 1\r\n\r\n"),
            [event("x", "1", None)]
        );
    }

    #[test]
    fn a_stream_cut_mid_event_dispatches_nothing_of_it() {
        assert_eq!(
            events("data: a\n\ndata: half"),
            [event("message", "a", None)]
        );
    }
}
