//! Text shared by the command line and the server: layouts ([`layout`]), ids ([`id`]: the
//! `--type` values and JSON; the rules are the runtime's), tag patterns ([`glob`]) and HTML
//! ([`html`]). Times are the runtime's [`idforge::text::time`]. It imports neither `cli` nor
//! `serve`.

pub mod glob;
pub mod html;
pub mod id;
pub mod layout;

pub use idforge::text::time;
