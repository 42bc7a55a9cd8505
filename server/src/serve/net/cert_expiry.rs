//! When a certificate expires: the `notAfter` of an X.509 certificate (DER), for the metric
//! `idforge_tls_cert_not_after_seconds` and its alert.
//!
//! Read by a few lines of DER walking rather than an X.509 crate: one field is needed, and the
//! parsers (x509-parser, x509-cert) bring their own ASN.1 stacks to a build CI already waits on.
//! The walk never recurses, reads only inside the bytes given, and answers `None` on anything
//! unexpected (the certificate itself was already accepted by rustls).

use crate::text::time::days_from_civil;

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const EXPLICIT_VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The earliest `notAfter` (Unix seconds) over `certs`, `None` when one cannot be read.
pub(crate) fn earliest_not_after<'a>(certs: impl IntoIterator<Item = &'a [u8]>) -> Option<i64> {
    certs
        .into_iter()
        .map(not_after)
        .try_fold(i64::MAX, |min, t| t.map(|t| min.min(t)))
        .filter(|&t| t != i64::MAX)
}

/// The `notAfter` of one DER certificate, in Unix seconds.
pub(crate) fn not_after(der: &[u8]) -> Option<i64> {
    let (cert, _) = expect(der, SEQUENCE)?;
    let (tbs, _) = expect(cert, SEQUENCE)?;
    let mut rest = tbs;
    if rest.first() == Some(&EXPLICIT_VERSION) {
        rest = element(rest)?.2;
    }
    let (_, rest) = expect(rest, INTEGER)?; // serialNumber
    let (_, rest) = expect(rest, SEQUENCE)?; // signature
    let (_, rest) = expect(rest, SEQUENCE)?; // issuer
    let (validity, _) = expect(rest, SEQUENCE)?;
    let (_, _, after_not_before) = element(validity)?;
    let (tag, time, _) = element(after_not_before)?;
    match tag {
        UTC_TIME => utc_time(time),
        GENERALIZED_TIME => generalized_time(time),
        _ => None,
    }
}

/// One element of `input`: (tag, contents, what follows). Definite lengths of up to 4 bytes.
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |len, &b| (len << 8) | usize::from(b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The contents of `input`'s first element and what follows, if its tag is `tag`.
fn expect(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (got, contents, rest) = element(input)?;
    (got == tag).then_some((contents, rest))
}

/// `YYMMDDHHMMSSZ` (RFC 5280: years 50-99 are 19xx).
fn utc_time(text: &[u8]) -> Option<i64> {
    let (yy, rest) = text.split_first_chunk::<2>()?;
    let yy = digits(yy)?;
    let year = if yy >= 50 { 1900 + yy } else { 2000 + yy };
    seconds(year, rest)
}

/// `YYYYMMDDHHMMSSZ`.
fn generalized_time(text: &[u8]) -> Option<i64> {
    let (yyyy, rest) = text.split_first_chunk::<4>()?;
    seconds(digits(yyyy)?, rest)
}

/// Unix seconds of `year` and `MMDDHHMMSSZ`.
fn seconds(year: i64, rest: &[u8]) -> Option<i64> {
    if rest.len() != 11 || rest[10] != b'Z' {
        return None;
    }
    let field = |i: usize| digits(&rest[i..i + 2]);
    let (month, day) = (field(0)?, field(2)?);
    let (hour, minute, second) = (field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let days = days_from_civil(year, month as u32, day as u32);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second.min(60))
}

/// The number written by ASCII digits (none of them anything else).
fn digits(text: &[u8]) -> Option<i64> {
    text.iter().try_fold(0i64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert_expiring(year: i32, month: u8, day: u8) -> Vec<u8> {
        let mut params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
        params.not_after = rcgen::date_time_ymd(year, month, day);
        let key = rcgen::KeyPair::generate().unwrap();
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn reads_utc_and_generalized_times() {
        // 2031-03-04 00:00:00 UTC (UTCTime) and 2051-01-02 (GeneralizedTime, past 2049).
        assert_eq!(not_after(&cert_expiring(2031, 3, 4)), Some(1_930_348_800));
        assert_eq!(not_after(&cert_expiring(2051, 1, 2)), Some(2_556_230_400));
        let (a, b) = (cert_expiring(2031, 3, 4), cert_expiring(2029, 1, 1));
        assert_eq!(
            earliest_not_after([&a[..], &b[..]]),
            not_after(&b),
            "the chain's earliest"
        );
    }

    #[test]
    fn damaged_input_is_none_never_a_panic() {
        let der = cert_expiring(2031, 3, 4);
        for len in 0..der.len() {
            assert_eq!(not_after(&der[..len]), None, "cut at {len}");
        }
        let mut wrong = der.clone();
        wrong[0] = INTEGER;
        assert_eq!(not_after(&wrong), None);
        assert_eq!(not_after(&[0x30, 0x85, 1, 2, 3, 4, 5]), None);
        assert_eq!(earliest_not_after([&der[..], &[0x30][..]]), None);
        assert_eq!(earliest_not_after(std::iter::empty()), None);
        assert_eq!(utc_time(b"3103040000001"), None);
        assert_eq!(utc_time(b"311304000000Z"), None);
    }
}
