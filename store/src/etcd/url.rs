//! An `etcd://` or `etcds://` store URL: its members, its key prefix and its TLS files (read
//! bounded, as PEM).

use std::path::{Path, PathBuf};

use etcd_client::{Certificate, Identity, TlsOptions};

use crate::{StoreError, StoreResult};

/// The parts of an `etcd://` (or `etcds://`) URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdUrl {
    /// `http://host:port` (`https://` with TLS) of each member.
    pub endpoints: Vec<String>,
    /// The key prefix, without slashes.
    pub prefix: String,
    /// TLS settings, for `etcds://`.
    pub tls: Option<EtcdTls>,
    /// `user:password@` before the members: etcd's own authentication (RBAC), percent-decoded.
    /// An empty user (`etcd://:@…`, what a manifest gives with its Secret's keys absent) is none.
    pub user: Option<EtcdUser>,
}

/// An etcd user and its password (the password never shown: `Debug` prints `***`).
#[derive(Clone, PartialEq, Eq)]
pub struct EtcdUser {
    /// The user's name.
    pub name: String,
    /// Its password.
    pub password: String,
}

impl std::fmt::Debug for EtcdUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdUser")
            .field("name", &self.name)
            .field("password", &"***")
            .finish()
    }
}

/// What an `etcds://` store trusts and shows (its URL's `tls_*` parameters).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtcdTls {
    /// `tls_ca`: the CA certificates (PEM) that sign the members' certificates (default: the
    /// system's store).
    pub ca: Option<PathBuf>,
    /// `tls_cert` and `tls_key`: a client certificate (PEM), for members that ask for one.
    pub client: Option<(PathBuf, PathBuf)>,
    /// `tls_server_name`: the name the members' certificates carry, when not their host.
    pub server_name: Option<String>,
}

/// The largest PEM file read for etcd's TLS.
const MAX_PEM_BYTES: u64 = 4 * 1024 * 1024;

fn read_pem(path: &Path, what: &str) -> StoreResult<Vec<u8>> {
    let fail = |why: String| StoreError(format!("etcd {what} {}: {why}", path.display()));
    let bytes = idforge::pem::read_bounded(path, MAX_PEM_BYTES).map_err(|e| fail(e.to_string()))?;
    if !bytes.starts_with(b"-----BEGIN") {
        return Err(fail("not a PEM file".into()));
    }
    Ok(bytes)
}

impl EtcdTls {
    /// tonic's TLS settings, from the files as they are now.
    pub(super) fn options(&self) -> StoreResult<TlsOptions> {
        let mut tls = TlsOptions::new();
        tls = match &self.ca {
            Some(ca) => tls.ca_certificate(Certificate::from_pem(read_pem(ca, "tls_ca")?)),
            None => tls.with_native_roots(),
        };
        if let Some((cert, key)) = &self.client {
            tls = tls.identity(Identity::from_pem(
                read_pem(cert, "tls_cert")?,
                read_pem(key, "tls_key")?,
            ));
        }
        if let Some(name) = &self.server_name {
            tls = tls.domain_name(name.clone());
        }
        Ok(tls)
    }
}

impl EtcdUrl {
    /// Parses `etcd://[user:password@]h1:p1[,h2:p2…][/prefix]`, or
    /// `etcds://…[?tls_ca=…&tls_cert=…&tls_key=…&tls_server_name=…]` for TLS.
    pub fn parse(url: &str) -> StoreResult<EtcdUrl> {
        let bad = |why: &str| StoreError(format!("bad etcd URL {url:?}: {why}"));
        let (rest, secure) = match (url.strip_prefix("etcd://"), url.strip_prefix("etcds://")) {
            (Some(rest), _) => (rest, false),
            (_, Some(rest)) => (rest, true),
            _ => return Err(bad("it must start with etcd:// or etcds://")),
        };
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let tls = if secure {
            let mut tls = EtcdTls::default();
            let (mut cert, mut key) = (None, None);
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                // Taken as written: file paths and host names need no escapes.
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                let v = v.to_owned();
                match k {
                    "tls_ca" => tls.ca = Some(PathBuf::from(v)),
                    "tls_cert" => cert = Some(PathBuf::from(v)),
                    "tls_key" => key = Some(PathBuf::from(v)),
                    "tls_server_name" => tls.server_name = Some(v),
                    _ => return Err(bad(&format!("unknown parameter {k:?}"))),
                }
            }
            tls.client = match (cert, key) {
                (Some(c), Some(k)) => Some((c, k)),
                (None, None) => None,
                _ => return Err(bad("tls_cert and tls_key go together")),
            };
            Some(tls)
        } else {
            if !query.is_empty() {
                return Err(bad("parameters (tls_*) are for etcds:// URLs"));
            }
            None
        };
        let (authority, prefix) = match rest.split_once('/') {
            Some((h, p)) => (h, p.trim_matches('/')),
            None => (rest, ""),
        };
        // The last `@` ends the credentials (a password may hold one only escaped, %40).
        let (user, hosts) = match authority.rsplit_once('@') {
            Some((credentials, hosts)) => {
                let (name, password) = credentials
                    .split_once(':')
                    .ok_or_else(|| bad("credentials are user:password@"))?;
                let decode = |part: &str, what: &str| {
                    percent_encoding::percent_decode_str(part)
                        .decode_utf8()
                        .map(|s| s.into_owned())
                        .map_err(|_| bad(&format!("the {what} is not UTF-8 once decoded")))
                };
                let (name, password) = (decode(name, "user")?, decode(password, "password")?);
                let user = (!name.is_empty()).then_some(EtcdUser { name, password });
                (user, hosts)
            }
            None => (None, authority),
        };
        let prefix = if prefix.is_empty() { "idforge" } else { prefix };
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        {
            return Err(bad("the prefix may hold only letters, digits and - _ . /"));
        }
        let mut endpoints = Vec::new();
        for host in hosts.split(',') {
            let (h, port) = host
                .rsplit_once(':')
                .ok_or_else(|| bad("each member needs host:port"))?;
            if h.is_empty() || port.parse::<u16>().is_err() {
                return Err(bad(&format!("bad member {host:?}")));
            }
            let scheme = if secure { "https" } else { "http" };
            endpoints.push(format!("{scheme}://{host}"));
        }
        Ok(EtcdUrl {
            endpoints,
            prefix: prefix.to_owned(),
            tls,
            user,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = EtcdUrl::parse("etcd://127.0.0.1:2379,[::1]:2380/app/ids").unwrap();
        assert_eq!(u.endpoints, ["http://127.0.0.1:2379", "http://[::1]:2380"]);
        assert_eq!(u.prefix, "app/ids");
        assert_eq!(EtcdUrl::parse("etcd://h:1").unwrap().prefix, "idforge");
        assert_eq!(u.user, None);
        let u = EtcdUrl::parse("etcd://idforge:p%40ss:w@h:1,g:2/app").unwrap();
        let user = u.user.clone().unwrap();
        assert_eq!(
            (user.name.as_str(), user.password.as_str()),
            ("idforge", "p@ss:w")
        );
        assert_eq!(u.endpoints, ["http://h:1", "http://g:2"]);
        assert!(!format!("{u:?}").contains("p@ss"), "{u:?}");
        // A manifest whose Secret has no etcd keys gives an empty user: no authentication.
        assert_eq!(EtcdUrl::parse("etcd://:@h:1").unwrap().user, None);
        for bad in [
            "etcd://",
            "etcd://h",
            "etcd://h:x",
            "redis://h:1",
            "etcd://h:1/a b",
            "etcd://nopassword@h:1",
            "etcd://u:%ff@h:1",
        ] {
            assert!(EtcdUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
