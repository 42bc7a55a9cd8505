//! tinyid's URLs: `/tinyid/id/{nextId,nextIdSimple,nextSegmentId,nextSegmentIdSimple}` (also
//! without the `/tinyid` context path), with `bizType`, `batchSize` and `token` in the query or
//! a form body, any method Spring maps (GET and POST; `tinyid-client` POSTs).
//!
//! As tinyid's `IdContronller`: `Response{data, code, message}` JSON (code 200; 5 `token is
//! error` for a missing token, a token without the right, or no `bizType`; 6 and the error for
//! a failure, `can not find biztype:X` for an unknown tag), and the `Simple` forms as bare text,
//! empty on any failure. `batchSize` is 1 when absent, cut to `--http-max-batch` (tinyid's
//! `batch.size.max`), and not a number is Spring's `400`. A segment is the tag's stored step of
//! ids (cut to `--http-max-batch` and, striped, to the stripe block), as tinyid's `step`;
//! `nextSegmentId` gives what `tinyid-client` reads: `(currentId, maxId]`, `loadingId` at 20%
//! (tinyid's `LOADING_PERCENT`), `delta` 1 and `remainder` 0 (idforge tags count by one).
//! What tinyid does not have: `429` past the rate limit and `503` from a standby (never an id),
//! with the JSON body (code 6) or an empty `Simple` body.

use hyper::StatusCode;

use super::query::Params;
use super::reply::{JSON, Reply, TEXT, finish, json, spring_error, text, with};
use super::{Denied, Http};
use crate::serve::allocator::tags::AllocError;
use crate::serve::auth::Right;
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;

/// tinyid's `ErrorCode.TOKEN_ERR`.
const TOKEN_ERR: (u16, &str) = (5, "token is error");
/// tinyid's `ErrorCode.SYS_ERR`.
const SYS_ERR: u16 = 6;
/// tinyid's `Constants.LOADING_PERCENT`: the client loads the next segment past this share.
const LOADING_PERCENT: i64 = 20;

/// One of tinyid's four calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `nextId`: ids as a JSON list.
    Id,
    /// `nextIdSimple`: ids joined by commas.
    IdSimple,
    /// `nextSegmentId`: a segment as JSON.
    Segment,
    /// `nextSegmentIdSimple`: `currentId,loadingId,maxId,delta,remainder`.
    SegmentSimple,
}

impl Op {
    /// The call named by the last part of the path.
    pub(crate) fn parse(name: &str) -> Option<Op> {
        Some(match name {
            "nextId" => Op::Id,
            "nextIdSimple" => Op::IdSimple,
            "nextSegmentId" => Op::Segment,
            "nextSegmentIdSimple" => Op::SegmentSimple,
            _ => return None,
        })
    }

    fn simple(self) -> bool {
        matches!(self, Op::IdSimple | Op::SegmentSimple)
    }
}

/// A failure, as the JSON forms carry it (the `Simple` forms answer an empty body).
struct Failed {
    status: StatusCode,
    code: u16,
    message: String,
}

impl Failed {
    fn reply(self, op: Op) -> Reply {
        if op.simple() {
            return finish(with(self.status, TEXT, ""));
        }
        let body = format!(
            "{{\"data\":null,\"code\":{},\"message\":{}}}",
            self.code,
            serde_json::Value::from(self.message)
        );
        finish(with(self.status, JSON, body))
    }
}

/// Answers one tinyid call; `token` is the `token` parameter, or the `Authorization` header's.
pub(crate) async fn answer(
    shared: &Shared,
    http: &Http,
    op: Op,
    params: &Params,
    token: Option<&[u8]>,
    path: &str,
) -> Reply {
    // As tinyid: the batch size is bound (Spring's 400) before the token is looked at.
    let batch = match params.get("batchSize").map(str::trim) {
        None | Some("") => 1,
        Some(text) => match text.parse::<i32>() {
            Ok(n) => i64::from(n),
            Err(_) => {
                shared.allocator.metrics().error(ErrorKind::Usage);
                let message = format!(
                    "Failed to convert value of type 'java.lang.String' to required type \
                     'java.lang.Integer'; nested exception is java.lang.NumberFormatException: \
                     For input string: \"{text}\""
                );
                return spring_error(
                    StatusCode::BAD_REQUEST,
                    Some(
                        "org.springframework.web.method.annotation.MethodArgumentTypeMismatchException",
                    ),
                    &message,
                    path,
                );
            }
        },
    };
    match run(shared, http, op, params, token, batch).await {
        Ok(reply) => reply,
        Err(failed) => failed.reply(op),
    }
}

async fn run(
    shared: &Shared,
    http: &Http,
    op: Op,
    params: &Params,
    token: Option<&[u8]>,
    batch: i64,
) -> Result<Reply, Failed> {
    let biz = params.get("bizType").unwrap_or_default();
    let token_error = || Failed {
        status: StatusCode::OK,
        code: TOKEN_ERR.0,
        message: TOKEN_ERR.1.into(),
    };
    let caller = match http.caller(&shared.auth, token) {
        Ok(c) => c,
        Err(Denied::Limited) => {
            shared.allocator.metrics().error(ErrorKind::Limit);
            return Err(Failed {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: SYS_ERR,
                message: Denied::Limited.message().into(),
            });
        }
        Err(_) => {
            shared.allocator.metrics().error(ErrorKind::Auth);
            return Err(token_error());
        }
    };
    if biz.is_empty() || !caller.perms.allows(Right::Alloc, biz) {
        shared.allocator.metrics().error(ErrorKind::Auth);
        return Err(token_error());
    }
    if idforge::source::validate_tag(biz).is_err() {
        shared.allocator.metrics().error(ErrorKind::Usage);
        return Err(not_found(biz));
    }
    let allocator = &shared.allocator;
    let stripe = allocator.stripe();
    let cap = if stripe.is_striped() {
        http.settings.max_batch.min(stripe.block)
    } else {
        http.settings.max_batch
    };
    let n = match op {
        Op::Id | Op::IdSimple => batch.min(cap),
        Op::Segment | Op::SegmentSimple => {
            let info = allocator.info(biz).await;
            let step = info.map_err(|e| failure(shared, biz, e))?;
            step.map_or(allocator.policy().default_step, |i| i.step)
                .min(cap)
        }
    };
    // As tinyid: no ids asked for, an empty list (and, for the simple form, an empty body).
    if n < 1 {
        return Ok(if op.simple() {
            text("")
        } else {
            json("{\"data\":[],\"code\":200,\"message\":\"\"}")
        });
    }
    let first =
        (allocator.alloc_for(biz, n, caller.owner()).await).map_err(|e| failure(shared, biz, e))?;
    let last = first + (n - 1);
    let current = first - 1;
    let loading = current + n * LOADING_PERCENT / 100;
    Ok(match op {
        Op::Id => {
            let mut body = String::from("{\"data\":[");
            joined(&mut body, first, last);
            body.push_str("],\"code\":200,\"message\":\"\"}");
            json(body)
        }
        Op::IdSimple => {
            let mut body = String::new();
            joined(&mut body, first, last);
            text(body)
        }
        Op::Segment => json(format!(
            "{{\"data\":{{\"maxId\":{last},\"loadingId\":{loading},\"currentId\":{current},\
             \"delta\":1,\"remainder\":0}},\"code\":200,\"message\":\"\"}}"
        )),
        Op::SegmentSimple => text(format!("{current},{loading},{last},1,0")),
    })
}

/// Appends `first,…,last` to `out` (one buffer, no string per id: a batch is up to
/// `--http-max-batch` ids).
fn joined(out: &mut String, first: i64, last: i64) {
    let mut digits = itoa::Buffer::new();
    out.reserve(((last - first + 1) as usize).saturating_mul(8));
    for id in first..=last {
        if id != first {
            out.push(',');
        }
        out.push_str(digits.format(id));
    }
}

/// tinyid's message for an unknown `bizType`.
fn not_found(biz: &str) -> Failed {
    Failed {
        status: StatusCode::OK,
        code: SYS_ERR,
        message: format!("can not find biztype:{biz}"),
    }
}

/// The failure of an allocation: code 6 with the reason, `503` from a standby.
fn failure(shared: &Shared, biz: &str, e: AllocError) -> Failed {
    shared.allocator.metrics().error(super::error_kind(&e));
    match e {
        AllocError::NoTag(_) => not_found(biz),
        AllocError::NotLeader => Failed {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: SYS_ERR,
            message: super::not_leader(shared),
        },
        e => Failed {
            status: StatusCode::OK,
            code: SYS_ERR,
            message: e.to_string().trim_start_matches("ERR ").to_owned(),
        },
    }
}
