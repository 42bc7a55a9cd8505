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
//! The layers read top-down: [`cli`] uses [`serve`] and [`text`]; [`serve`] uses [`text`] and never
//! `cli`; [`text`] uses neither.
//!
//! - [`cli`]: the arguments and the dispatch, one module per subcommand (`gen`, `decode`,
//!   `compose`, `layouts`, `store verify|repair`).
//! - [`text`]: layouts, times and ids as text, shared by the command line and the server.
//! - [`serve`]: the segment server.
//! - [`error`]: the one-line error with its stable code and exit status.
//! - [`reference`](mod@reference): documentation tables made from the code's declarations (checked in tests).
#![forbid(unsafe_code)]

pub mod cli;
pub mod error;
pub mod reference;
pub mod serve;
pub mod text;

pub use cli::run;
pub use error::CliError;
