//! TLS on the client and metrics ports (rustls, with the `ring` provider).
//!
//! The certificate, key and client CA are read from PEM files at start and again on SIGHUP; a
//! reload that fails (a missing file, a key that does not match) is logged and the server keeps
//! the settings it had, so a bad rotation never takes it down. Each new connection uses the
//! settings current when it arrives; open connections keep theirs.

use crate::serve::net::cert_expiry::earliest_not_after;
use crate::serve::net::stream::{RecordBudget, Records};
use crate::serve::setting_error::SettingError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};

/// The largest PEM file read (a certificate chain is a few KiB; this bounds a wrong path).
const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// Whether clients must show a certificate signed by the CA (`--tls-auth-clients`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    No,
    /// A client may show one (it must then be valid); one without is let in.
    Optional,
    /// Every client must show a valid certificate (mutual TLS).
    Yes,
}

impl ClientAuth {
    /// `yes`, `no` or `optional` (as Redis's `tls-auth-clients`).
    pub fn parse(text: &str) -> Result<ClientAuth, SettingError> {
        match text.to_ascii_lowercase().as_str() {
            "yes" | "true" => Ok(ClientAuth::Yes),
            "no" | "false" => Ok(ClientAuth::No),
            "optional" => Ok(ClientAuth::Optional),
            _ => Err(SettingError::Invalid {
                name: "tls-auth-clients",
                reason: format!("{text:?} is not yes, no or optional"),
            }),
        }
    }
}

/// Where the TLS settings come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain (PEM, leaf first).
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The CA that signs client certificates (PEM), for mutual TLS.
    pub ca: Option<PathBuf>,
    /// Whether a client certificate is asked for.
    pub clients: ClientAuth,
    /// The most bytes incomplete records may hold, over every connection.
    pub max_incomplete: usize,
}

/// The current TLS settings of a server, reloadable.
pub struct Tls {
    files: TlsFiles,
    current: RwLock<TlsAcceptor>,
    /// The earliest `notAfter` of the chain in use (Unix seconds; `i64::MIN`: unreadable).
    not_after: AtomicI64,
    /// What incomplete records may hold, over every connection.
    incomplete: Arc<RecordBudget>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").field("files", &self.files).finish()
    }
}

impl Tls {
    /// Reads the files; fails with a message naming the file that is wrong.
    pub fn load(files: TlsFiles) -> Result<Tls, TlsError> {
        let (config, not_after) = build(&files)?;
        Ok(Tls {
            incomplete: Arc::new(RecordBudget::new(files.max_incomplete)),
            files,
            current: RwLock::new(TlsAcceptor::from(config)),
            not_after: AtomicI64::new(not_after.unwrap_or(i64::MIN)),
        })
    }

    /// Reads the files again; on failure the settings in use stay.
    pub fn reload(&self) -> Result<(), TlsError> {
        let (config, not_after) = build(&self.files)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = TlsAcceptor::from(config);
        (self.not_after).store(not_after.unwrap_or(i64::MIN), Ordering::Relaxed);
        Ok(())
    }

    /// When the first certificate of the chain in use expires (Unix seconds), if readable.
    pub fn not_after(&self) -> Option<i64> {
        Some(self.not_after.load(Ordering::Relaxed)).filter(|&t| t != i64::MIN)
    }

    /// An accepted socket under rustls: a record must be complete within `limit`, and the
    /// incomplete records of every connection fit `--tls-max-incomplete-bytes`.
    pub fn records(&self, tcp: tokio::net::TcpStream, limit: std::time::Duration) -> Records {
        Records::new(tcp, limit, self.incomplete.clone())
    }

    /// The bytes incomplete records hold now.
    pub fn incomplete_bytes(&self) -> usize {
        self.incomplete.used()
    }

    /// The current acceptor (after the last reload).
    pub fn acceptor(&self) -> TlsAcceptor {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Why the TLS files cannot be used: each names the setting and the file.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file could not be read.
    #[error("{what} {}: {source}", path.display())]
    Read {
        /// The setting (`tls-cert`, `tls-key`, `tls-ca-cert`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file larger than any PEM file of a certificate chain or key.
    #[error("{what} {}: larger than {MAX_PEM_BYTES} bytes", path.display())]
    TooLarge {
        /// The setting.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A file that does not hold what its setting needs.
    #[error("{what} {}: {reason}", path.display())]
    Content {
        /// The setting.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong, in rustls's or the PEM reader's words.
        reason: String,
    },
    /// Client certificates asked for without the CA that signs them.
    #[error("tls-auth-clients needs tls-ca-cert")]
    NoCa,
    /// The protocol versions refused by rustls.
    #[error("{0}")]
    Versions(String),
    /// A certificate and a key that do not go together.
    #[error("tls-cert/tls-key: {0}")]
    Pair(String),
}

impl TlsError {
    fn content(what: &'static str, path: &Path, reason: impl std::fmt::Display) -> TlsError {
        TlsError::Content {
            what,
            path: path.to_owned(),
            reason: reason.to_string(),
        }
    }
}

fn read_pem(path: &Path, what: &'static str) -> Result<Vec<u8>, TlsError> {
    let path_buf = path.to_owned();
    idforge::pem::read_bounded(path, MAX_PEM_BYTES).map_err(|source| {
        if source.kind() == std::io::ErrorKind::InvalidData {
            TlsError::TooLarge {
                what,
                path: path_buf,
            }
        } else {
            TlsError::Read {
                what,
                path: path_buf,
                source,
            }
        }
    })
}

fn certs(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::content(what, path, e))?;
    if certs.is_empty() {
        return Err(TlsError::content(what, path, "no certificate in it"));
    }
    Ok(certs)
}

/// The server's settings, and the earliest expiry of its chain.
fn build(files: &TlsFiles) -> Result<(Arc<ServerConfig>, Option<i64>), TlsError> {
    let chain = certs(&files.cert, "tls-cert")?;
    let not_after = earliest_not_after(chain.iter().map(|c| c.as_ref()));
    let key_pem = read_pem(&files.key, "tls-key")?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| TlsError::content("tls-key", &files.key, e))?;
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Versions(e.to_string()))?;
    let builder = match (&files.ca, files.clients) {
        (_, ClientAuth::No) => builder.with_no_client_auth(),
        (None, _) => return Err(TlsError::NoCa),
        (Some(ca), clients) => {
            let mut roots = RootCertStore::empty();
            for cert in certs(ca, "tls-ca-cert")? {
                roots
                    .add(cert)
                    .map_err(|e| TlsError::content("tls-ca-cert", ca, e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if clients == ClientAuth::Optional {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(
                verifier
                    .build()
                    .map_err(|e| TlsError::content("tls-ca-cert", ca, e))?,
            )
        }
    };
    let config = builder
        .with_single_cert(chain, key)
        .map_err(|e| TlsError::Pair(e.to_string()))?;
    Ok((Arc::new(config), not_after))
}
