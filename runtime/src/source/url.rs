//! Source URLs: `scheme://[user[:password]@]host[:port][,host[:port]…][/path][?key=value&…]`.
//!
//! Written by hand rather than with the `url` crate: a list of hosts in the authority (our
//! server's failover form) is not a valid URL authority there.

use std::time::Duration;

use idforge_core::Error as CoreError;

use crate::error::Result;

/// A parsed network source URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceUrl {
    pub scheme: String,
    pub user: Option<String>,
    pub password: Option<String>,
    pub hosts: Vec<(String, u16)>,
    /// What follows the hosts, without the leading `/` (empty when absent).
    pub path: String,
    pub params: Vec<(String, String)>,
}

fn bad(why: &'static str) -> crate::Error {
    CoreError::InvalidUrl(why).into()
}

/// Decodes `%XX` escapes (user names and passwords may hold `@`, `:` or `/`).
pub(crate) fn percent_decode(text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("a '%' in a URL must start a %XX escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad("a URL escape decodes to invalid UTF-8"))
}

/// Splits `rest?query` into the part before `?` and its `key=value` pairs (decoded).
pub(crate) fn split_query(text: &str) -> Result<(&str, Vec<(String, String)>)> {
    let Some((head, query)) = text.split_once('?') else {
        return Ok((text, Vec::new()));
    };
    let mut params = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        params.push((percent_decode(k)?, percent_decode(v)?));
    }
    Ok((head, params))
}

impl SourceUrl {
    /// Parses a network URL; hosts without a port get `default_port`.
    pub(crate) fn parse(url: &str, default_port: u16) -> Result<SourceUrl> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| bad("a source URL starts with scheme://"))?;
        let (rest, params) = split_query(rest)?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hostlist) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            None => (None, None),
            Some(u) => {
                let (name, pass) = match u.split_once(':') {
                    Some((n, p)) => (n, Some(percent_decode(p)?)),
                    None => (u, None),
                };
                let name = percent_decode(name)?;
                ((!name.is_empty()).then_some(name), pass)
            }
        };
        let mut hosts = Vec::new();
        for host in hostlist.split(',') {
            hosts.push(parse_host(host, default_port)?);
        }
        Ok(SourceUrl {
            scheme: scheme.to_ascii_lowercase(),
            user,
            password,
            hosts,
            path: path.to_owned(),
            params,
        })
    }

    /// Fails on a parameter not in `known`, so a typo is not silently ignored.
    pub(crate) fn only_params(&self, known: &[&str]) -> Result<()> {
        if self.params.iter().all(|(k, _)| known.contains(&k.as_str())) {
            Ok(())
        } else {
            Err(bad(
                "unknown URL parameter (see the source's documentation)",
            ))
        }
    }
}

/// The value of `key` among `params`.
pub(crate) fn param<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// `timeout_ms` of a URL, or `default`: how long one request to the source may take.
pub(crate) fn timeout(params: &[(String, String)], default: Duration) -> Result<Duration> {
    match param(params, "timeout_ms") {
        None => Ok(default),
        Some(ms) => match ms.parse::<u64>() {
            Ok(ms @ 1..=3_600_000) => Ok(Duration::from_millis(ms)),
            _ => Err(bad(
                "timeout_ms is a whole number of milliseconds, 1 to 3600000",
            )),
        },
    }
}

fn parse_host(host: &str, default_port: u16) -> Result<(String, u16)> {
    if host.is_empty() {
        return Err(bad("a source URL names a host"));
    }
    // `[::1]:7379` for IPv6 literals.
    let (name, port) = if let Some(v6) = host.strip_prefix('[') {
        let (addr, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("an IPv6 host is written [addr]:port"))?;
        (addr, after.strip_prefix(':'))
    } else {
        match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        }
    };
    if name.is_empty() {
        return Err(bad("a source URL names a host"));
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| bad("a port is a number from 1 to 65535"))?,
    };
    Ok((name.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn parses_hosts_users_paths_and_params() {
        let u = SourceUrl::parse(
            "idforge://app:p%40ss@10.0.0.1,10.0.0.2:7000,[::1]:7001?timeout_ms=250",
            7379,
        )
        .unwrap();
        assert_eq!(u.scheme, "idforge");
        assert_eq!(u.user.as_deref(), Some("app"));
        assert_eq!(u.password.as_deref(), Some("p@ss"));
        assert_eq!(
            u.hosts,
            vec![
                ("10.0.0.1".to_owned(), 7379),
                ("10.0.0.2".to_owned(), 7000),
                ("::1".to_owned(), 7001)
            ]
        );
        assert_eq!(
            timeout(&u.params, Duration::ZERO).unwrap(),
            Duration::from_millis(250)
        );
        let r = SourceUrl::parse("redis://:secret@localhost/3", 6379).unwrap();
        assert_eq!((r.user, r.password.as_deref()), (None, Some("secret")));
        assert_eq!(r.path, "3");
        assert_eq!(r.hosts, vec![("localhost".to_owned(), 6379)]);
    }

    #[test]
    fn refuses_malformed_urls() {
        for url in [
            "idforge:/x",
            "idforge://",
            "idforge://h:0",
            "idforge://h:99999",
            "idforge://h:x",
            "idforge://a,,b",
            "idforge://u:%zz@h",
            "idforge://[::1",
            "idforge://:7379",
        ] {
            let e = SourceUrl::parse(url, 1).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidUrl, "{url}");
        }
        let u = SourceUrl::parse("idforge://h?timeout_ms=0", 1).unwrap();
        assert_eq!(
            timeout(&u.params, Duration::ZERO).unwrap_err().code(),
            ErrorCode::InvalidUrl
        );
        let u = SourceUrl::parse("idforge://h?tiemout_ms=5", 1).unwrap();
        assert_eq!(
            u.only_params(&["timeout_ms"]).unwrap_err().code(),
            ErrorCode::InvalidUrl
        );
    }
}
