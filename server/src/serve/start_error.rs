//! Why `idforge serve` could not start (or stopped): each step of the start its own variant,
//! with the words the operator reads on stderr.

use std::path::PathBuf;

use super::allocator::stripe::StripeError;
use super::config::SettingError;
use super::net::tls::TlsError;
use idforge_store::StoreError;
use idforge_store::guard::GuardError;

/// A start of the server that failed, and where.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A setting refused.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// The data directory could not be made.
    #[error("cannot create data dir {}: {source}", path.display())]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The store could not be opened.
    #[error("cannot open the store: {0}")]
    Store(StoreError),
    /// The users could not be read from the store.
    #[error("cannot load users: {0}")]
    Users(StoreError),
    /// A port could not be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// What was asked for (`127.0.0.1:7379`, `metrics port 9379`).
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The `--port-file` could not be written.
    #[error("cannot write {}: {source}", path.display())]
    PortFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The store holds another stripe: the check's own words (they name the way out).
    #[error(transparent)]
    Stripe(#[from] StripeError),
    /// The guard finds the store behind, or it fails its check: the guard's own words (they
    /// name the way out).
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// The TLS files could not be loaded.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The `--http-tokens` file could not be read or has a bad line.
    #[error("--http-tokens {}: {reason}", path.display())]
    HttpTokens {
        /// The file.
        path: PathBuf,
        /// What is wrong (the line number included).
        reason: String,
    },
    /// The process's signals could not be handled.
    #[error("cannot handle signals: {0}")]
    Signals(std::io::Error),
}
