//! `idforge_status`: the return value of every fallible call, numbered as
//! `core/testdata/errors.json` (the numbers are frozen; a test checks the two agree).

use idforge_core::ErrorCode;

/// The result of an idforge call: `IDFORGE_STATUS_OK` (0) or the reason it failed.
///
/// The numbers never change; new errors get new numbers. `idforge_status_str` gives the name,
/// `idforge_last_error` the message of the calling thread's last failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum idforge_status {
    /// Success.
    Ok = 0,
    /// A snowflake layout is not valid (widths, tick unit, epoch).
    InvalidLayout = 1,
    /// A node (worker, machine) id does not fit the layout.
    NodeOutOfRange = 2,
    /// The layout's epoch lies after the current time.
    EpochInFuture = 3,
    /// A time is before the epoch or past the last time the layout can encode.
    TimeOutOfRange = 4,
    /// A sequence number does not fit the layout.
    SequenceOutOfRange = 5,
    /// Text is not valid hexadecimal of the expected length.
    InvalidHex = 6,
    /// Text is not valid base62 (`0-9A-Za-z`) or does not fit.
    InvalidBase62 = 7,
    /// Text is not valid Crockford base32 or does not fit.
    InvalidBase32 = 8,
    /// Text is not a valid decimal number or does not fit.
    InvalidDecimal = 9,
    /// A byte string has the wrong length.
    InvalidLength = 10,
    /// An argument is out of its documented range.
    InvalidArgument = 11,
    /// The clock is behind the last id by more than the policy allows.
    ClockBehind = 12,
    /// A wait (for the clock or a segment) took longer than its budget.
    Timeout = 13,
    /// A generator with a fixed identity was used in a forked child.
    Forked = 14,
    /// A segment range is empty or inverted, or not above the ids already taken from its source.
    InvalidSegment = 15,
    /// Both segment buffers are full.
    BufferFull = 16,
    /// A counter or range would pass its largest value.
    Overflow = 17,
    /// The segment source cannot be reached or refused the request.
    SourceUnavailable = 18,
    /// A file or socket operation failed.
    Io = 19,
    /// A source URL is malformed or names an unknown scheme.
    InvalidUrl = 20,
    /// A worker-id lease was lost or ran out: the generator on it issues no more ids.
    LeaseLost = 21,
    /// A required pointer argument was NULL.
    NullArgument = 100,
    /// idforge panicked (a bug); the call had no effect. Please report it.
    Panic = 101,
    /// An output buffer is too small; see the function for the size needed.
    BufferTooSmall = 102,
}

impl idforge_status {
    /// The status of an error code. One exhaustive list: a new code without a status here is
    /// caught by the `every_code_has_its_status` test.
    pub(crate) fn of(code: ErrorCode) -> idforge_status {
        use idforge_status as S;
        match code {
            ErrorCode::InvalidLayout => S::InvalidLayout,
            ErrorCode::NodeOutOfRange => S::NodeOutOfRange,
            ErrorCode::EpochInFuture => S::EpochInFuture,
            ErrorCode::TimeOutOfRange => S::TimeOutOfRange,
            ErrorCode::SequenceOutOfRange => S::SequenceOutOfRange,
            ErrorCode::InvalidHex => S::InvalidHex,
            ErrorCode::InvalidBase62 => S::InvalidBase62,
            ErrorCode::InvalidBase32 => S::InvalidBase32,
            ErrorCode::InvalidDecimal => S::InvalidDecimal,
            ErrorCode::InvalidLength => S::InvalidLength,
            ErrorCode::InvalidArgument => S::InvalidArgument,
            ErrorCode::ClockBehind => S::ClockBehind,
            ErrorCode::Timeout => S::Timeout,
            ErrorCode::Forked => S::Forked,
            ErrorCode::InvalidSegment => S::InvalidSegment,
            ErrorCode::BufferFull => S::BufferFull,
            ErrorCode::Overflow => S::Overflow,
            ErrorCode::SourceUnavailable => S::SourceUnavailable,
            ErrorCode::Io => S::Io,
            ErrorCode::InvalidUrl => S::InvalidUrl,
            ErrorCode::LeaseLost => S::LeaseLost,
            ErrorCode::NullArgument => S::NullArgument,
            ErrorCode::Panic => S::Panic,
            ErrorCode::BufferTooSmall => S::BufferTooSmall,
            // ErrorCode is non_exhaustive; a code added to the core but not here reports as a
            // bug rather than as a wrong, unrelated status.
            _ => S::Panic,
        }
    }

    /// The C enumerator name, NUL-terminated, for `idforge_status_str`.
    pub(crate) fn name_c(value: u32) -> &'static [u8] {
        if value == 0 {
            return b"IDFORGE_STATUS_OK\0";
        }
        match ErrorCode::from_u32(value) {
            Some(code) => c_name(code),
            None => b"IDFORGE_STATUS_UNKNOWN\0",
        }
    }
}

/// `IDFORGE_STATUS_<NAME>\0`, built at compile time from [`ErrorCode::name`].
fn c_name(code: ErrorCode) -> &'static [u8] {
    macro_rules! names {
        ($($code:ident),* $(,)?) => {
            match code {
                $(ErrorCode::$code => {
                    const NAME: &str = ErrorCode::$code.name();
                    const LEN: usize = "IDFORGE_STATUS_".len() + NAME.len() + 1;
                    const BYTES: [u8; LEN] = prefixed(NAME);
                    &BYTES
                })*
                _ => b"IDFORGE_STATUS_UNKNOWN\0",
            }
        };
    }
    names!(
        InvalidLayout,
        NodeOutOfRange,
        EpochInFuture,
        TimeOutOfRange,
        SequenceOutOfRange,
        InvalidHex,
        InvalidBase62,
        InvalidBase32,
        InvalidDecimal,
        InvalidLength,
        InvalidArgument,
        ClockBehind,
        Timeout,
        Forked,
        InvalidSegment,
        BufferFull,
        Overflow,
        SourceUnavailable,
        Io,
        InvalidUrl,
        LeaseLost,
        NullArgument,
        Panic,
        BufferTooSmall,
    )
}

const fn prefixed<const LEN: usize>(name: &str) -> [u8; LEN] {
    let prefix = b"IDFORGE_STATUS_";
    let name = name.as_bytes();
    let mut out = [0u8; LEN];
    let mut i = 0;
    while i < prefix.len() {
        out[i] = prefix[i];
        i += 1;
    }
    let mut j = 0;
    while j < name.len() {
        out[i + j] = name[j];
        j += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_status() {
        for code in ErrorCode::ALL {
            assert_eq!(idforge_status::of(code) as u32, code.as_u32(), "{code:?}");
        }
    }

    #[test]
    fn names_match_errors_json() {
        let text = include_str!("../../../core/testdata/errors.json");
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(idforge_status::name_c(0), b"IDFORGE_STATUS_OK\0");
        let rows = json["errors"].as_array().unwrap();
        assert_eq!(rows.len(), ErrorCode::ALL.len());
        for row in rows {
            let value = row["code"].as_u64().unwrap() as u32;
            let want = format!("{}\0", row["c"].as_str().unwrap());
            assert_eq!(idforge_status::name_c(value), want.as_bytes());
        }
        assert_eq!(idforge_status::name_c(99), b"IDFORGE_STATUS_UNKNOWN\0");
    }
}
