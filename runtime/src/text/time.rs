//! Times as text: RFC 3339 text or integer Unix milliseconds in, RFC 3339 (UTC) out, with a
//! small proleptic-Gregorian calendar conversion (any year a layout reaches, past 9999 too).

use crate::{Error, ErrorCode, Result};

const MS_PER_DAY: i64 = 86_400_000;
/// Days from 0000-03-01 to 1970-01-01 in the proleptic Gregorian calendar.
const DAYS_TO_UNIX_EPOCH: i64 = 719_468;
/// Days in one 400-year cycle of the Gregorian calendar.
const DAYS_PER_ERA: i64 = 146_097;

/// Days since 1970-01-01 of the civil date `year-month-day` (proleptic Gregorian; `month` in
/// 1..=12, `day` in 1..=31, not checked against the month's length).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Count years from March, so that the leap day is the last day of the counted year.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * DAYS_PER_ERA + day_of_era - DAYS_TO_UNIX_EPOCH
}

/// The civil date `(year, month, day)` of `days` since 1970-01-01 (the inverse of
/// [`days_from_civil`]).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + DAYS_TO_UNIX_EPOCH;
    let era = days.div_euclid(DAYS_PER_ERA);
    let day_of_era = days - era * DAYS_PER_ERA;
    // Leap days fall every 1460 days, except at 36524 and 146096 (century rules).
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction.
    (year, month as u32, day as u32)
}

/// Whether `year` has a 29 February.
pub fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Days in `month` (1..=12) of `year`.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Splits Unix milliseconds into the date and the milliseconds of that day.
fn split(ms: u64) -> ((i64, u32, u32), u64) {
    // u64 milliseconds are at most ~2.1e11 days: they fit an i64.
    let days = (ms / MS_PER_DAY as u64) as i64;
    (civil_from_days(days), ms % MS_PER_DAY as u64)
}

fn write_date_time(date: (i64, u32, u32), ms_of_day: u64) -> String {
    let (year, month, day) = date;
    let secs = ms_of_day / 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Unix milliseconds as RFC 3339 UTC text with milliseconds: `2023-11-14T22:13:20.123Z`.
///
/// Years past 9999 (possible with unusual layouts) are written with more digits, which RFC 3339
/// itself cannot express.
pub fn format_ms(ms: u64) -> String {
    let (date, ms_of_day) = split(ms);
    format!(
        "{}.{:03}Z",
        write_date_time(date, ms_of_day),
        ms_of_day % 1000
    )
}

/// Unix seconds as RFC 3339 UTC text: `2106-02-07T06:28:15Z`.
pub fn format_secs(secs: u64) -> String {
    let ms = secs.saturating_mul(1000);
    let (date, ms_of_day) = split(ms);
    format!("{}Z", write_date_time(date, ms_of_day))
}

/// A time argument: integer Unix milliseconds (`1700000000123`) or RFC 3339 text
/// (`2024-01-01T00:00:00Z`, `2024-01-01T01:30:00.5+01:30`). Times before 1970 are refused with
/// `TIME_OUT_OF_RANGE`, malformed text with `INVALID_ARGUMENT`.
pub fn parse_time(s: &str) -> Result<u64> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().map_err(|_| {
            Error::text(
                ErrorCode::InvalidDecimal,
                format!("time {s}: too many milliseconds for 64 bits"),
            )
        });
    }
    let ms = parse_rfc3339(s)?;
    u64::try_from(ms).map_err(|_| {
        Error::text(
            ErrorCode::TimeOutOfRange,
            format!("time {s} is before 1970-01-01T00:00:00Z"),
        )
    })
}

/// Reads `N` ASCII digits at `at`, or `None`.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let field = b.get(at..at + n)?;
    field.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// Parses RFC 3339 text (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)`; `t`, `z` and a space
/// for `T` are accepted, as the RFC allows, and so are PostgreSQL's offsets `+hh` and `+hhmm`) into Unix milliseconds, which are negative before
/// 1970. Digits of the fraction past milliseconds are dropped (the time is rounded down). Leap
/// seconds (`:60`) are refused: Unix time has no place for them.
pub fn parse_rfc3339(s: &str) -> Result<i64> {
    let bad = |why: &str| {
        Error::text(
            ErrorCode::InvalidArgument,
            format!(
                "time {s:?}: {why} (expected RFC 3339 such as 2024-01-01T00:00:00Z, or Unix milliseconds)"
            ),
        )
    };
    let b = s.as_bytes();
    let field = |at: usize, n: usize, name: &str| digits(b, at, n).ok_or_else(|| bad(name));
    let sep = |at: usize, allowed: &[u8]| {
        b.get(at)
            .is_some_and(|c| allowed.contains(c))
            .then_some(())
            .ok_or_else(|| bad("malformed date or time"))
    };

    let year = i64::from(field(0, 4, "the year must be 4 digits")?);
    sep(4, b"-")?;
    let month = field(5, 2, "the month must be 2 digits")?;
    sep(7, b"-")?;
    let day = field(8, 2, "the day must be 2 digits")?;
    sep(10, b"Tt ")?;
    let hour = field(11, 2, "the hour must be 2 digits")?;
    sep(13, b":")?;
    let minute = field(14, 2, "the minute must be 2 digits")?;
    sep(16, b":")?;
    let second = field(17, 2, "the second must be 2 digits")?;

    if !(1..=12).contains(&month) {
        return Err(bad("no such month"));
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(bad("no such day in that month"));
    }
    if hour > 23 || minute > 59 {
        return Err(bad("no such hour or minute"));
    }
    if second == 60 {
        return Err(bad("leap seconds are not supported"));
    }
    if second > 59 {
        return Err(bad("no such second"));
    }

    let mut at = 19;
    let mut millis = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 3 {
                millis = millis * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        match at - start {
            0 => return Err(bad("a fraction needs at least one digit")),
            1 => millis *= 100,
            2 => millis *= 10,
            _ => {}
        }
    }

    let offset_minutes = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            // RFC 3339's `+hh:mm`, and the `+hh` and `+hhmm` that PostgreSQL prints (ISO 8601),
            // so a time copied from psql works as it is.
            let shape = "the offset must be +hh:mm, +hhmm or +hh";
            let oh = field(at + 1, 2, shape)?;
            let (om, len) = match b.get(at + 3) {
                Some(b':') => (field(at + 4, 2, shape)?, 6),
                Some(_) => (field(at + 3, 2, shape)?, 5),
                None => (0, 3),
            };
            if oh > 23 || om > 59 {
                return Err(bad("no such offset"));
            }
            at += len;
            let minutes = i64::from(oh * 60 + om);
            if sign == b'-' { -minutes } else { minutes }
        }
        _ => return Err(bad("missing the time zone (Z or an offset such as +01:00)")),
    };
    if at != b.len() {
        return Err(bad("unexpected text after the time zone"));
    }

    let days = days_from_civil(year, month, day);
    let seconds = i64::from(hour * 3600 + minute * 60 + second);
    // Local time minus its offset from UTC is UTC.
    Ok(days * MS_PER_DAY + seconds * 1000 + millis - offset_minutes * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The date of `days` since 1970 by walking years and months one at a time: slow, but
    /// independent of the closed-form conversion under test.
    fn walk(mut days: i64) -> (i64, u32, u32) {
        let mut year = 1970;
        loop {
            let len = if is_leap_year(year) { 366 } else { 365 };
            if days < 0 {
                year -= 1;
                days += if is_leap_year(year) { 366 } else { 365 };
            } else if days >= len {
                days -= len;
                year += 1;
            } else {
                break;
            }
        }
        let mut month = 1;
        while days >= i64::from(days_in_month(year, month)) {
            days -= i64::from(days_in_month(year, month));
            month += 1;
        }
        (year, month, days as u32 + 1)
    }

    #[test]
    fn known_instants_format() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_ms(4_102_444_800_000), "2100-01-01T00:00:00.000Z");
        assert_eq!(format_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(format_ms(86_399_999), "1970-01-01T23:59:59.999Z");
        assert_eq!(format_secs(u64::from(u32::MAX)), "2106-02-07T06:28:15Z");
        assert_eq!(format_secs(0x7fff_ffff), "2038-01-19T03:14:07Z");
        assert_eq!(format_secs(253_402_300_799), "9999-12-31T23:59:59Z");
        // Past 9999 the year simply grows; no overflow at the very end of u64.
        assert_eq!(format_secs(253_402_300_800), "10000-01-01T00:00:00Z");
        assert!(format_ms(u64::MAX).ends_with(".615Z"));
    }

    #[test]
    fn known_instants_parse() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00Z").unwrap(),
            951_782_400_000
        );
        assert_eq!(
            parse_rfc3339("2100-01-01T00:00:00Z").unwrap(),
            4_102_444_800_000
        );
        assert_eq!(
            parse_rfc3339("2023-11-14T22:13:20.123Z").unwrap(),
            1_700_000_000_123
        );
        // Negative offsets are behind UTC: 19:00 at -05:00 is midnight UTC.
        assert_eq!(
            parse_rfc3339("2000-02-28T19:00:00-05:00").unwrap(),
            951_782_400_000
        );
        assert_eq!(
            parse_rfc3339("2099-12-31T14:30:00-09:30").unwrap(),
            4_102_444_800_000
        );
        assert_eq!(parse_rfc3339("1970-01-01T05:30:00+05:30").unwrap(), 0);
        // PostgreSQL's forms, as the README's SQL example prints them.
        assert_eq!(parse_rfc3339("1970-01-01 05:30:00+0530").unwrap(), 0);
        assert_eq!(parse_rfc3339("1970-01-01 05:00:00+05").unwrap(), 0);
        assert_eq!(
            parse_rfc3339("2025-01-08 14:30:47.630+00").unwrap(),
            parse_rfc3339("2025-01-08T14:30:47.630Z").unwrap()
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00-00:01").unwrap(), 60_000);
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59.999Z").unwrap(), -1);
        assert_eq!(parse_rfc3339("1970-01-01t00:00:00.5z").unwrap(), 500);
        assert_eq!(parse_rfc3339("1970-01-01 00:00:00.05Z").unwrap(), 50);
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:00.123999999Z").unwrap(),
            123
        );
        assert_eq!(parse_time("1700000000123").unwrap(), 1_700_000_000_123);
        assert_eq!(
            parse_time("2024-01-01T00:00:00Z").unwrap(),
            1_704_067_200_000
        );
    }

    #[test]
    fn bad_times_are_refused_with_stable_codes() {
        for bad in [
            "",
            "2024-01-01",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00+1",
            "2024-01-01T00:00:00+01:0",
            "2024-01-01T00:00:00+010",
            "2024-01-01T00:00:00+01:",
            "2024-01-01T00:00:00Zjunk",
            "2024-01-01T00:00:00.Z",
            "2024-1-01T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-00-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:60:00Z",
            "2016-12-31T23:59:60Z",
            "2024-01-01T00:00:00+24:00",
            "2024-01-01x00:00:00Z",
            "２０２４-01-01T00:00:00Z",
            "-1",
            "1.5",
        ] {
            let err = parse_time(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad:?}: {err}");
        }
        assert!(parse_rfc3339("2000-02-29T00:00:00Z").is_ok());
        assert_eq!(
            parse_time("1969-12-31T23:59:59Z").unwrap_err().code(),
            ErrorCode::TimeOutOfRange
        );
        assert_eq!(
            parse_time("99999999999999999999").unwrap_err().code(),
            ErrorCode::InvalidDecimal
        );
    }

    #[test]
    fn calendar_matches_a_day_by_day_walk() {
        for days in (-800_000..800_000).step_by(997).chain(-1500..1500) {
            let date = civil_from_days(days);
            assert_eq!(date, walk(days), "day {days}");
            assert_eq!(days_from_civil(date.0, date.1, date.2), days);
        }
    }

    #[test]
    fn parse_and_format_round_trip() {
        for ms in [
            0u64,
            1,
            999,
            68_256_000_001,
            951_782_400_000,
            253_402_300_799_999,
        ] {
            assert_eq!(parse_rfc3339(&format_ms(ms)).unwrap(), ms as i64, "{ms}");
        }
    }
}
