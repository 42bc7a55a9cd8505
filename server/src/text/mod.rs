//! Text shared by the command line and the server: layouts ([`layout`]), times ([`time`]), ids
//! ([`id`]) and tag patterns ([`glob`]). It imports neither `cli` nor `serve`.

pub mod glob;
pub mod id;
pub mod layout;
pub mod time;
