//! Text shared by the command line and the server: layouts ([`layout`]), times ([`time`]), ids
//! ([`id`]), tag patterns ([`glob`]) and HTML ([`html`]). It imports neither `cli` nor `serve`.

pub mod glob;
pub mod html;
pub mod id;
pub mod layout;
pub mod time;
