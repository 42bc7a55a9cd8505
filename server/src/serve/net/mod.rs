//! The network side of the server: bytes only (the RESP session that runs commands on them is
//! `commands::session`).
//!
//! - [`stream`], [`tls`]: the byte stream, plain or TLS (rustls), with the record timeout.
//! - [`busy_poll`]: the single-threaded event loop polls briefly after requests instead of
//!   sleeping.
//! - [`slots`]: the bounded table of an HTTP port's connections (metrics, HTTP API).

pub mod busy_poll;
pub(crate) mod cert_expiry;
pub(crate) mod slots;
pub mod stream;
pub mod tls;
