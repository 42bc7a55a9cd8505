//! Leaf's URLs: `GET /api/segment/get/{key}` and `GET /api/snowflake/get/{key}`.
//!
//! As Leaf's `LeafController`: the id as the whole body (`text/plain`), and for a failure `500`
//! with Spring Boot's error body whose message is Leaf's `Result{id=-N, status=EXCEPTION}`:
//! `-2` an unknown key (Leaf's `EXCEPTION_ID_KEY_NOT_EXISTS`; here a tag that does not exist
//! with auto-create off, a bad name, or a tag quota reached), `-3` no id to give (Leaf's
//! `EXCEPTION_ID_TWO_SEGMENTS_ARE_NULL`: the store failing or too slow, an overflow, a clock out
//! of range). What Leaf does not have: `401`/`403`/`429` for tokens and rights, and `503` from
//! a standby (never an id).

use hyper::StatusCode;

use super::reply::{Reply, spring_error, text};
use super::{Denied, Http};
use crate::serve::allocator::tags::AllocError;
use crate::serve::auth::Right;
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;

/// The class Leaf's controller throws for a failed `Result`.
const LEAF_EXCEPTION: &str = "com.sankuai.inf.leaf.server.exception.LeafServerException";

/// Which of Leaf's generators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `/api/segment/get/{key}`: the next id of tag `key`.
    Segment,
    /// `/api/snowflake/get/{key}`: a snowflake id of name `key` (`IDF.SNOWFLAKE`).
    Snowflake,
}

/// Answers one Leaf request for `key` (percent-decoded); `path` is echoed in errors.
pub(crate) async fn get(
    shared: &Shared,
    http: &Http,
    kind: Kind,
    key: &str,
    token: Option<&[u8]>,
    path: &str,
) -> Reply {
    let caller = match http.caller(&shared.auth, token) {
        Ok(c) => c,
        Err(denied) => return denied_reply(shared, denied, path),
    };
    if idforge::source::validate_tag(key).is_err() {
        shared.allocator.metrics().error(ErrorKind::Usage);
        return failed(-2, path);
    }
    if !caller.perms.allows(Right::Alloc, key) {
        shared.allocator.metrics().error(ErrorKind::Auth);
        let message = format!("user {} may not take ids of '{key}'", caller.user);
        return spring_error(StatusCode::FORBIDDEN, None, &message, path);
    }
    let id = match kind {
        Kind::Segment => shared.allocator.alloc_for(key, 1, caller.owner()).await,
        Kind::Snowflake => {
            let mut out = Vec::with_capacity(1);
            (shared.allocator)
                .snowflakes_for(key, 1, &mut out, caller.owner())
                .await
                .map(|()| out.first().map_or(0, |id| *id as i64))
        }
    };
    match id {
        Ok(id) => text(itoa::Buffer::new().format(id).to_owned()),
        Err(e) => alloc_failed(shared, &e, path),
    }
}

/// Leaf's `500` for a failed `Result` with id `code`.
fn failed(code: i64, path: &str) -> Reply {
    let message = format!("Result{{id={code}, status=EXCEPTION}}");
    spring_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        Some(LEAF_EXCEPTION),
        &message,
        path,
    )
}

/// The reply to an allocation that failed.
fn alloc_failed(shared: &Shared, e: &AllocError, path: &str) -> Reply {
    shared.allocator.metrics().error(super::error_kind(e));
    match e {
        AllocError::NotLeader => spring_error(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            &super::not_leader(shared),
            path,
        ),
        AllocError::NoTag(_) | AllocError::Quota(_) | AllocError::NameQuota(_) => failed(-2, path),
        AllocError::Overflow
        | AllocError::Store(_)
        | AllocError::Clock(_)
        | AllocError::ClockAhead(_)
        | AllocError::TooManyTags(_)
        | AllocError::TooManyNames(_)
        | AllocError::LargerThanBlock(_) => failed(-3, path),
    }
}

/// `401` for a missing or unknown token, `429` past the rate limit.
fn denied_reply(shared: &Shared, denied: Denied, path: &str) -> Reply {
    shared.allocator.metrics().error(denied.kind());
    spring_error(denied.status(), None, denied.message(), path)
}
