//! [`Timestamp`]: a time in milliseconds since the epoch, written and
//! read as RFC 3339 in UTC.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};

/// A time, in milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Now, by the wall clock.
    pub fn now() -> Timestamp {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }
}

/// RFC 3339 in UTC, to the second: `2026-11-30T13:05:50Z`.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1000);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        )
    }
}

/// RFC 3339: `2026-11-30T13:05:50Z`, with fractions of a second
/// (`.250`) and an offset (`+01:00`) taken too.
impl FromStr for Timestamp {
    type Err = Error;
    fn from_str(s: &str) -> Result<Timestamp, Error> {
        parse_rfc3339(s).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!("`{s}` is not an RFC 3339 time: write it like `2026-11-30T13:05:50Z`"),
            )
        })
    }
}

fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = s.get(range)?;
        digits
            .bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let punctuated = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !punctuated {
        return None;
    }
    let (y, mo, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (h, mi, sec) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let first: String = fraction[..digits]
            .chars()
            .chain("00".chars())
            .take(3)
            .collect();
        millis = first.parse::<i64>().ok()?;
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let (oh, om) = rest.get(1..)?.split_once(':')?;
            if oh.len() != 2 || om.len() != 2 {
                return None;
            }
            sign * (oh.parse::<i64>().ok()? * 60 + om.parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(y, mo, d);
    let seconds = days * 86_400 + h * 3600 + mi * 60 + sec - offset * 60;
    Some(Timestamp(seconds * 1000 + millis))
}

/// Howard Hinnant's `days_from_civil`: the day count from 1970-01-01 of
/// a proleptic Gregorian date; the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// As its RFC 3339 text, like the tool's JSON output.
impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a
/// day count from 1970-01-01.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_reads_back_its_rfc_3339_text() {
        for ms in [
            0,
            1_764_000_000_000,
            951_782_400_000,
            -86_400_000,
            4_102_444_799_000,
        ] {
            let t = Timestamp(ms);
            assert_eq!(t.to_string().parse::<Timestamp>().unwrap(), t, "{t}");
        }
        let t: Timestamp = "2026-11-30T14:05:50.25+01:00".parse().unwrap();
        assert_eq!(t, "2026-11-30T13:05:50.250Z".parse().unwrap());
        assert_eq!(t.0 % 1000, 250);
        for bad in [
            "",
            "2026-11-30",
            "2026-13-01T00:00:00Z",
            "2026-11-30T13:05:50",
            "2026-11-30T13:05:50+1",
            "x026-11-30T13:05:50Z",
        ] {
            let e = bad.parse::<Timestamp>().unwrap_err();
            assert!(e.to_string().contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn timestamps_print_as_rfc3339() {
        assert_eq!(Timestamp(0).to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(
            Timestamp(1_796_043_950_000).to_string(),
            "2026-11-30T13:05:50Z"
        );
        assert_eq!(
            Timestamp(951_782_400_000).to_string(),
            "2000-02-29T00:00:00Z"
        );
    }
}
