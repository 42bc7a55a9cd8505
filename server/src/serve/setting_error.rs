//! Why a setting is refused: each rule's own variant, with the words `idforge serve` prints. At
//! the bottom floor, so that the components that check their own settings (a stripe, a TLS
//! mode) need nothing of `config`.

use std::path::PathBuf;

/// A setting, or a combination of settings, that the server refuses to start with.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// Outside both of its bounds.
    #[error("{name} {value} is out of range ({min} to {max})")]
    OutOfRange {
        /// The setting's flag name (`max-request-bytes`).
        name: String,
        /// The value given.
        value: String,
        /// The least allowed.
        min: String,
        /// The largest allowed.
        max: String,
    },
    /// Below its least value.
    #[error("{name} {value} is below {min}")]
    Below {
        /// The setting's flag name.
        name: String,
        /// The value given.
        value: String,
        /// The least allowed.
        min: String,
    },
    /// Above its largest value.
    #[error("{name} {value} is above {max}")]
    Above {
        /// The setting's flag name.
        name: String,
        /// The value given.
        value: String,
        /// The largest allowed.
        max: String,
    },
    /// A value of the wrong form (a layout, an address, a stripe, a TLS mode).
    #[error("{name} {reason}")]
    Invalid {
        /// The setting's flag name.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Settings that only go together, given apart.
    #[error("{0}")]
    Together(&'static str),
    /// The `--config` file could not be read.
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The `--config` file is not TOML of known settings.
    #[error("config {}: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why, with the line.
        source: Box<toml::de::Error>,
    },
}
