//! # idforge-server
//!
//! The `idforge` command-line tool and the segment server (`idforge serve`, in [`serve`]). The binary is a thin
//! wrapper around [`run`], so every command can be tested in process:
//!
//! ```
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let status = idforge_server::run(["idforge", "decode", "1212161842325159937"], &mut out, &mut err);
//! assert_eq!(status, 0);
//! let text = String::from_utf8(out).unwrap();
//! assert!(text.contains("2020-01-01T00:01:18.745Z"));
//! ```
//!
//! - [`cli`]: the arguments and the dispatch.
//! - [`layout_arg`]: `--layout` (preset names and strict specs) and the preset listing.
//! - [`time_arg`]: RFC 3339 and Unix-millisecond times, in and out.
//! - [`generate`], [`decode`], [`compose`]: the commands.
//! - [`serve`]: the segment server.
//! - [`store_cmd`]: `idforge store verify|repair`, a store against its guard.
//! - [`error`]: the one-line error with its stable code and exit status.
#![forbid(unsafe_code)]

pub mod cli;
pub mod compose;
pub mod decode;
pub mod error;
pub mod generate;
pub mod layout_arg;
pub mod serve;
pub mod store_cmd;
pub mod time_arg;

pub use cli::run;
pub use error::CliError;
