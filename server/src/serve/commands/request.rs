//! A connection's session and the argument rules every command shares: UTF-8 text, tag names,
//! Redis integers, rights, and the replies for usage and allocation errors.

use std::sync::Arc;

use crate::serve::allocator::tags::AllocError;
use crate::serve::auth::{Perms, Right};
use crate::serve::commands::cluster::redirect;
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;

/// One connection's state.
#[derive(Debug)]
pub struct Session {
    /// `CLIENT ID`.
    pub id: u64,
    /// `CLIENT SETNAME`.
    pub name: Option<Vec<u8>>,
    /// The authenticated user's rights (`None`: not authenticated yet).
    pub perms: Option<Arc<Perms>>,
    /// The user name.
    pub user: String,
    /// `QUIT` was called: close after replying.
    pub quit: bool,
    /// The client's address (failed AUTHs are limited per address).
    pub peer: Option<std::net::IpAddr>,
}

pub(crate) type Outcome = Result<(), (ErrorKind, String)>;

pub(crate) fn usage(message: impl Into<String>) -> (ErrorKind, String) {
    (ErrorKind::Usage, message.into())
}

pub(crate) fn alloc_error(shared: &Shared, key: &[u8], e: AllocError) -> (ErrorKind, String) {
    if e == AllocError::NotLeader {
        return redirect(shared, Some(key));
    }
    (e.kind(), e.to_string())
}

pub(crate) fn text(arg: &[u8]) -> Result<&str, (ErrorKind, String)> {
    std::str::from_utf8(arg).map_err(|_| usage("ERR argument is not valid UTF-8"))
}

/// A tag or snowflake name, by the runtime's rule for tags (safe as a file name and a key).
pub(crate) fn tag(arg: &[u8]) -> Result<&str, (ErrorKind, String)> {
    let name = text(arg)?;
    idforge::source::validate_tag(name).map_err(|e| usage(format!("ERR invalid tag: {e}")))?;
    Ok(name)
}

/// A decimal integer as Redis reads it.
pub(crate) fn int(arg: &[u8]) -> Result<i64, (ErrorKind, String)> {
    std::str::from_utf8(arg)
        .ok()
        .filter(|s| !s.starts_with('+') && !s.is_empty())
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| usage("ERR value is not an integer or out of range"))
}

/// Checks the session's rights: `right` on `tag`, or administrator rights when `right` is
/// `None`. `cmd` names the command in the `NOPERM` error.
pub(crate) fn require(s: &Session, right: Option<Right>, tag: &str, cmd: &str) -> Outcome {
    let ok = match (&s.perms, right) {
        (Some(p), Some(r)) => p.allows(r, tag),
        (Some(p), None) => p.is_admin(),
        (None, _) => false,
    };
    if ok {
        return Ok(());
    }
    Err((
        ErrorKind::Auth,
        format!(
            "NOPERM User {} has no permissions to run the '{cmd}' command",
            s.user
        ),
    ))
}
