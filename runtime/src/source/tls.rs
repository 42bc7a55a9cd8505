//! TLS for the network sources (`idforges://`, `rediss://`): rustls with the `ring` provider.
//!
//! URL parameters:
//! - `tls_ca=PATH`: the CA certificates (PEM) to trust; default: the system's store;
//! - `tls_cert=PATH` and `tls_key=PATH`: a client certificate (PEM) for mutual TLS;
//! - `tls_server_name=NAME`: the name the server's certificate must carry, when it is not the
//!   host in the URL (an IP address, say).
//!
//! The files are read when the source is made (so a wrong path fails at once) and again for each
//! new connection, so a rotated client certificate is taken without a restart. Verification is
//! never turned off.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use super::url::param;
use crate::error::{Error, ErrorCode, Result};

/// The URL parameters this module reads.
pub(crate) const PARAMS: [&str; 4] = ["tls_ca", "tls_cert", "tls_key", "tls_server_name"];

/// The largest PEM file read: a CA bundle is a few hundred KiB; this bounds a wrong path.
const MAX_PEM_BYTES: u64 = 4 * 1024 * 1024;

/// What a TLS source trusts and shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsParams {
    ca: Option<PathBuf>,
    client: Option<(PathBuf, PathBuf)>,
    server_name: Option<String>,
}

fn invalid(message: String) -> Error {
    Error::permanent(ErrorCode::InvalidUrl, message)
}

impl TlsParams {
    /// The TLS parameters of a URL's query, checked, with the files read once.
    pub(crate) fn from_params(params: &[(String, String)]) -> Result<TlsParams> {
        let path = |key| {
            param(params, key)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let client = match (path("tls_cert"), path("tls_key")) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err(invalid("tls_cert and tls_key go together".into())),
        };
        let server_name = param(params, "tls_server_name").map(str::to_owned);
        if let Some(name) = &server_name {
            ServerName::try_from(name.as_str())
                .map_err(|_| invalid(format!("tls_server_name {name:?} is not a host name")))?;
        }
        let tls = TlsParams {
            ca: path("tls_ca"),
            client,
            server_name,
        };
        tls.config()?;
        Ok(tls)
    }

    /// The client settings, from the files as they are now.
    pub(crate) fn config(&self) -> Result<Arc<ClientConfig>> {
        let mut roots = RootCertStore::empty();
        match &self.ca {
            Some(ca) => {
                for cert in certs(ca, "tls_ca")? {
                    roots
                        .add(cert)
                        .map_err(|e| invalid(format!("tls_ca {}: {e}", ca.display())))?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(invalid(
                        "no CA certificates in the system's store: give tls_ca".into(),
                    ));
                }
            }
        }
        let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(e.to_string()))?
            .with_root_certificates(roots);
        let config = match &self.client {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = certs(cert, "tls_cert")?;
                let pem = read_pem(key, "tls_key")?;
                let key = PrivateKeyDer::from_pem_slice(&pem)
                    .map_err(|e| invalid(format!("tls_key {}: {e}", key.display())))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| invalid(format!("tls_cert/tls_key: {e}")))?
            }
        };
        Ok(Arc::new(config))
    }

    /// The name to verify the server's certificate against when connecting to `host`.
    pub(crate) fn server_name(&self, host: &str) -> Result<ServerName<'static>> {
        let name = self.server_name.as_deref().unwrap_or(host);
        ServerName::try_from(name.to_owned()).map_err(|_| {
            invalid(format!(
                "{name:?} is not a name TLS can verify; give tls_server_name"
            ))
        })
    }
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>> {
    crate::pem::read_bounded(path, MAX_PEM_BYTES).map_err(|e| {
        let message = format!("{what} {}: {e}", path.display());
        if e.kind() == std::io::ErrorKind::InvalidData {
            invalid(message)
        } else {
            Error::permanent(ErrorCode::Io, message)
        }
    })
}

fn certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let pem = read_pem(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("{what} {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(invalid(format!(
            "{what} {}: no certificate in it",
            path.display()
        )));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn bad_tls_parameters_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "not pem").unwrap();
        let big = dir.path().join("big.pem");
        std::fs::write(&big, vec![b'a'; (MAX_PEM_BYTES + 1) as usize]).unwrap();
        let cases = [
            (params(&[("tls_cert", "/x.pem")]), "go together"),
            (
                params(&[("tls_ca", missing.to_str().unwrap())]),
                "missing.pem",
            ),
            (
                params(&[("tls_ca", junk.to_str().unwrap())]),
                "no certificate",
            ),
            (params(&[("tls_ca", big.to_str().unwrap())]), "larger than"),
            (
                params(&[("tls_server_name", "no spaces allowed")]),
                "not a host name",
            ),
        ];
        for (p, why) in cases {
            let e = TlsParams::from_params(&p).unwrap_err();
            assert!(e.to_string().contains(why), "{p:?}: {e}");
            assert!(!e.is_transient());
        }
    }
}
