//! Text shared by the command line and the server: layouts ([`layout`]), times ([`time`]) and
//! ids ([`id`]). It imports neither `cli` nor `serve`.

pub mod id;
pub mod layout;
pub mod time;
