//! The `IDF.*` commands: tags, server-side snowflakes, decoding and users.

use super::cursor;
use super::request::{Session, alloc_error, int, require, tag as name, text as arg_text, usage};
use super::spec::{Cmd, MAX_SNOWFLAKE_COUNT};
use crate::serve::allocator::tags::AllocError;
use crate::serve::auth::{Perms, Right, UserChangeError};
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;
use crate::text::layout::parse_layout;
use idforge::text::id::describe;
use idforge_resp::Reply;

type Failure = (ErrorKind, String);

fn syntax() -> Failure {
    usage("ERR syntax error")
}

fn store(e: AllocError) -> Failure {
    (ErrorKind::Store, e.to_string())
}

fn user_change(e: UserChangeError) -> Failure {
    match e {
        // The client's request, not the store, is what cannot be done.
        UserChangeError::NoAdminLeft(m) => usage(format!("ERR {m}")),
        UserChangeError::Store(m) => (ErrorKind::Store, format!("ERR {m}")),
    }
}

fn positive(arg: &[u8], what: &str, max: i64) -> Result<i64, Failure> {
    let n = int(arg)?;
    if !(1..=max).contains(&n) {
        return Err(usage(format!("ERR {what} must be between 1 and {max}")));
    }
    Ok(n)
}

/// The most tag names one `IDF.TAG SCAN` reads (its `COUNT`) and `IDF.TAG LIST` reads at all.
const MAX_TAG_PAGE: usize = 1000;

/// The `IDF.TAG SCAN` page size without `COUNT`.
const DEFAULT_TAG_PAGE: usize = 100;

/// A `SCAN` cursor: `0` (the start, and the end), or one [`cursor::seal`] made, which
/// opens to the last name of the page before (see [`cursor`] for why it is sealed).
fn parse_cursor(arg: &[u8]) -> Result<String, Failure> {
    if arg == b"0" {
        return Ok(String::new());
    }
    let after = cursor::open(arg).map_err(|e| usage(e.to_string()))?;
    // Sealed by this process from a name it read: valid unless something is badly wrong.
    idforge::source::validate_tag(&after)
        .map_err(|_| usage(cursor::CursorError::Invalid.to_string()))?;
    Ok(after)
}

/// Writes the names `s` may read, as an array.
fn visible_names(s: &Session, names: &[String], out: &mut Reply) {
    let visible: Vec<&String> = names
        .iter()
        .filter(|t| s.perms.as_ref().is_some_and(|p| p.allows(Right::Read, t)))
        .collect();
    out.array(visible.len());
    for t in visible {
        out.bulk(t.as_bytes());
    }
}

/// `IDF.TAG CREATE tag [STEP n] [START n] [DESC text] | INFO tag | LIST [pattern] |
/// SCAN cursor [MATCH pattern] [COUNT n] | DROP tag`.
pub(super) async fn tag_command(
    shared: &Shared,
    s: &Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Result<(), Failure> {
    let engine = &shared.allocator;
    let sub = args[1].to_ascii_uppercase();
    match (sub.as_slice(), args.len()) {
        (b"CREATE", 3..) => {
            let tag = name(args[2])?;
            require(s, None, tag, "idf.tag|create")?;
            let (mut step, mut start, mut desc) = (engine.policy().default_step, 1, None);
            let mut i = 3;
            while i < args.len() {
                let (opt, value) = (args[i].to_ascii_uppercase(), args.get(i + 1));
                let value = value.ok_or_else(syntax)?;
                match opt.as_slice() {
                    b"STEP" => step = positive(value, "STEP", i64::from(i32::MAX))?,
                    b"START" => start = positive(value, "START", i64::MAX - 1)?,
                    b"DESC" => {
                        let text = arg_text(value)?;
                        if text.len() > 256 {
                            return Err(usage("ERR DESC is at most 256 bytes"));
                        }
                        desc = Some(text.to_owned());
                    }
                    _ => return Err(syntax()),
                }
                i += 2;
            }
            if !engine.create(tag, step, start, desc).await.map_err(store)? {
                return Err(usage(format!("ERR tag '{tag}' exists")));
            }
            out.ok();
        }
        (b"INFO", 3) => {
            let tag = name(args[2])?;
            require(s, Some(Right::Read), tag, "idf.tag|info")?;
            let Some(info) = engine.info(tag).await.map_err(store)? else {
                out.null();
                return Ok(());
            };
            out.map(8);
            out.bulk(b"tag");
            out.bulk(info.tag.as_bytes());
            for (key, value) in [
                ("last", info.last),
                ("max_id", info.max_id),
                ("cached", info.cached),
                ("step", info.step),
                ("dynamic_step", info.dynamic_step),
            ] {
                out.bulk(key.as_bytes());
                out.int(value);
            }
            out.bulk(b"description");
            match &info.description {
                Some(d) => out.bulk(d.as_bytes()),
                None => out.null(),
            }
            // The ids this server hands out: K/N, and `last`/`max_id` are ids of stripe K.
            let stripe = engine.stripe();
            out.bulk(b"stripe");
            out.bulk(format!("{}/{}", stripe.index, stripe.count).as_bytes());
        }
        (b"LIST", 2 | 3) => {
            // Bounded: the first MAX_TAG_PAGE tags by name; SCAN walks them all.
            let pattern = args.get(2).copied().unwrap_or(b"*");
            let (tags, _) = engine
                .scan("", pattern, MAX_TAG_PAGE)
                .await
                .map_err(store)?;
            visible_names(s, &tags, out);
        }
        (b"SCAN", 3..) => {
            let after = parse_cursor(args[2])?;
            let (mut pattern, mut count): (&[u8], usize) = (b"*", DEFAULT_TAG_PAGE);
            let mut i = 3;
            while i < args.len() {
                let (opt, value) = (args[i].to_ascii_uppercase(), args.get(i + 1));
                let value = value.ok_or_else(syntax)?;
                match opt.as_slice() {
                    b"MATCH" => pattern = value,
                    b"COUNT" => count = positive(value, "COUNT", MAX_TAG_PAGE as i64)? as usize,
                    _ => return Err(syntax()),
                }
                i += 2;
            }
            let (tags, next) = engine.scan(&after, pattern, count).await.map_err(store)?;
            let cursor = match next {
                Some(last) => cursor::seal(&last).map_err(|e| usage(e.to_string()))?,
                None => "0".to_owned(),
            };
            out.array(2);
            out.bulk(cursor.as_bytes());
            visible_names(s, &tags, out);
        }
        (b"DROP", 3) => {
            let tag = name(args[2])?;
            require(s, None, tag, "idf.tag|drop")?;
            let dropped = engine.drop_tag(tag).await.map_err(store)?;
            out.int(i64::from(dropped));
        }
        _ => {
            return Err(usage(
                "ERR unknown subcommand or wrong number of arguments for 'idf.tag' \
                 (CREATE tag [STEP n] [START n] [DESC text] | INFO tag | LIST [pattern] | \
                 SCAN cursor [MATCH pattern] [COUNT n] | DROP tag)",
            ));
        }
    }
    Ok(())
}

/// `IDF.SNOWFLAKE name [COUNT n]`: one id (an integer) or an array of n.
pub(super) async fn snowflake(
    shared: &Shared,
    s: &Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Result<(), Failure> {
    let count = match args.len() {
        2 => None,
        4 if args[2].eq_ignore_ascii_case(b"COUNT") => {
            Some(positive(args[3], "COUNT", MAX_SNOWFLAKE_COUNT)? as usize)
        }
        _ => return Err(usage(Cmd::IdfSnowflake.wrong_args())),
    };
    let name = name(args[1])?;
    require(s, Some(Right::Alloc), name, Cmd::IdfSnowflake.name())?;
    // A name started here counts towards a non-admin user's quota.
    let owner = (!s.perms.as_ref().is_some_and(|p| p.is_admin())).then_some(&*s.user);
    let mut ids = Vec::with_capacity(count.unwrap_or(1));
    shared
        .allocator
        .snowflakes_for(name, count.unwrap_or(1), &mut ids, owner)
        .await
        .map_err(|e| alloc_error(shared, args[1], e))?;
    match count {
        None => put_id(out, ids[0]),
        Some(_) => {
            out.array(ids.len());
            for id in ids {
                put_id(out, id);
            }
        }
    }
    Ok(())
}

fn put_id(out: &mut Reply, id: u64) {
    match i64::try_from(id) {
        Ok(v) => out.int(v),
        // Unsigned 64-bit layouts: ids past i64 go as decimal text.
        Err(_) => out.bulk(itoa::Buffer::new().format(id).as_bytes()),
    }
}

/// `IDF.DECODE id [LAYOUT name|spec]`: the id's fields as a map of text values.
pub(super) fn decode(shared: &Shared, args: &[&[u8]], out: &mut Reply) -> Result<(), Failure> {
    let layout = match args.len() {
        2 => shared.snowflake_layout(),
        4 if args[2].eq_ignore_ascii_case(b"LAYOUT") => {
            parse_layout(arg_text(args[3])?).map_err(|e| usage(format!("ERR {}", e.message())))?
        }
        _ => return Err(usage(Cmd::IdfDecode.wrong_args())),
    };
    let fields =
        describe(arg_text(args[1])?, None, None, &layout).map_err(|e| usage(format!("ERR {e}")))?;
    out.map(fields.len());
    for f in fields {
        out.bulk(f.key.as_bytes());
        out.bulk(f.value.to_string().as_bytes());
    }
    Ok(())
}

/// `IDF.USER SET name password [perm…] | DEL name | LIST`.
pub(super) async fn user(
    shared: &Shared,
    s: &Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Result<(), Failure> {
    require(s, None, "", Cmd::IdfUser.name())?;
    let sub = args[1].to_ascii_uppercase();
    let store = shared.allocator.store();
    match (sub.as_slice(), args.len()) {
        (b"SET", 4..) => {
            let user = name(args[2])?;
            let password = arg_text(args[3])?;
            if password.is_empty() {
                return Err(usage("ERR the password must not be empty"));
            }
            let words = args[4..]
                .iter()
                .map(|a| arg_text(a))
                .collect::<Result<Vec<_>, _>>()?;
            let perms = Perms::parse(words).map_err(|e| usage(format!("ERR {e}")))?;
            shared
                .auth
                .set(store, user, password, perms)
                .await
                .map_err(user_change)?;
            out.ok();
        }
        (b"DEL", 3) => {
            let user = name(args[2])?;
            let existed = shared.auth.delete(store, user).await.map_err(user_change)?;
            out.int(i64::from(existed));
        }
        (b"LIST", 2) => {
            let users = shared.auth.list();
            out.map(users.len());
            for (name, perms) in users {
                out.bulk(name.as_bytes());
                out.bulk(perms.as_bytes());
            }
        }
        _ => return Err(usage(Cmd::IdfUser.wrong_args())),
    }
    Ok(())
}

/// `IDF.FAILOVER`: the leader stops serving, gives back its unused cached ids and resigns, so a
/// standby takes over within one poll; replies once it has resigned. Administrators only.
pub(super) async fn failover(shared: &Shared, s: &Session, out: &mut Reply) -> Result<(), Failure> {
    require(s, None, "", Cmd::IdfFailover.name())?;
    let leadership = shared.allocator.leadership();
    if !leadership.is_elected() {
        return Err(usage(
            "ERR this server runs alone (no election): there is nobody to hand over to",
        ));
    }
    let done = leadership.failover_done.notified();
    leadership.failover.notify_one();
    if tokio::time::timeout(std::time::Duration::from_secs(5), done)
        .await
        .is_err()
    {
        return Err((
            ErrorKind::Store,
            "ERR the handover did not finish in 5 s".into(),
        ));
    }
    out.ok();
    Ok(())
}

/// The most worker ids a service may lease (a 24-bit node field).
const MAX_WORKERS: i64 = 1 << 24;

/// A holder's name (`ACQUIRE … HOLDER name`): what a tag may be (1-128 of `A-Za-z0-9_-.:`).
fn holder_name(arg: &[u8]) -> Result<&str, Failure> {
    let name = arg_text(arg)?;
    idforge::source::validate_tag(name).map_err(|_| {
        usage("ERR invalid holder: 1-128 characters of A-Za-z0-9_-.: not starting with '.'")
    })?;
    Ok(name)
}

/// `IDF.WORKER ACQUIRE service ttl-ms [MAX n] [CLOCK] [HOLDER name [FILE]] | RENEW service id token [TIME ms]
/// [CLOCK] [RESUME] | RELEASE service id token [TIME ms] [KEEP] | LIST service [CURSOR c] [COUNT n]` (see
/// [`crate::serve::allocator::workers`]).
pub(super) async fn worker(
    shared: &Shared,
    s: &Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Result<(), Failure> {
    use crate::serve::allocator::workers::{LIST_DEFAULT, LIST_MAX, LeaseError, RenewKind};
    let lease = |e: LeaseError| {
        let kind = match e {
            LeaseError::Store(_) => ErrorKind::Store,
            LeaseError::Full(_) => ErrorKind::Limit,
            _ => ErrorKind::Usage,
        };
        (kind, e.to_string())
    };
    let wrong = || usage(Cmd::IdfWorker.wrong_args());
    let sub = args[1].to_ascii_uppercase();
    let service = name(args.get(2).ok_or_else(wrong)?)?;
    let engine = &shared.allocator;
    match (sub.as_slice(), args.len()) {
        (b"ACQUIRE", 4..=10) => {
            require(s, Some(Right::Alloc), service, "idf.worker|acquire")?;
            let ttl = positive(args[3], "the TTL (ms)", 86_400_000)?;
            if ttl < 100 {
                return Err(usage("ERR the TTL must be at least 100 ms"));
            }
            let (mut max, mut clock, mut holder, mut rest) = (None, false, None, &args[4..]);
            let mut in_file = false;
            while let Some(opt) = rest.first() {
                if opt.eq_ignore_ascii_case(b"MAX") && rest.len() >= 2 && max.is_none() {
                    max = Some(positive(rest[1], "MAX", MAX_WORKERS)?);
                    rest = &rest[2..];
                } else if opt.eq_ignore_ascii_case(b"HOLDER") && rest.len() >= 2 && holder.is_none()
                {
                    holder = Some(holder_name(rest[1])?);
                    rest = &rest[2..];
                } else if opt.eq_ignore_ascii_case(b"CLOCK") && !clock {
                    clock = true;
                    rest = &rest[1..];
                } else if opt.eq_ignore_ascii_case(b"FILE") && !in_file {
                    in_file = true;
                    rest = &rest[1..];
                } else {
                    return Err(syntax());
                }
            }
            if in_file && holder.is_none() {
                return Err(usage(
                    "ERR FILE needs HOLDER: a lease kept in a file is a named one's",
                ));
            }
            let grant = engine
                .worker_acquire(
                    service,
                    ttl,
                    max.unwrap_or(1024),
                    holder.unwrap_or(""),
                    clock,
                    in_file,
                )
                .await
                .map_err(lease)?;
            // The floor and the clock only when asked: clients that unpack exactly three
            // fields keep working, and a client that sends CLOCK learns from an older server's
            // refusal that it has no floor to tell. The reservation's end only to a holder
            // that named itself.
            let named = clock && holder.is_some();
            out.array(match (clock, named) {
                (false, _) => 3,
                (true, false) => 5,
                (true, true) => 6,
            });
            out.int(grant.id);
            out.bulk(grant.token.as_bytes());
            out.int(grant.ttl_ms);
            if clock {
                out.int(grant.floor_ms);
                out.int(grant.server_ms);
            }
            if named {
                out.int(grant.reserved_ms);
            }
        }
        (b"RENEW" | b"RELEASE", 5..=9) => {
            require(s, Some(Right::Alloc), service, "idf.worker|renew")?;
            let release = sub.as_slice() == b"RELEASE";
            let id = int(args[3])?;
            let token = arg_text(args[4])?;
            let (mut time, mut clock, mut rest) = (0, false, &args[5..]);
            let mut kind = if release {
                RenewKind::Release
            } else {
                RenewKind::Renew
            };
            while let Some(opt) = rest.first() {
                if opt.eq_ignore_ascii_case(b"TIME") && rest.len() >= 2 {
                    time = int(rest[1])?;
                    rest = &rest[2..];
                } else if opt.eq_ignore_ascii_case(b"CLOCK") && !release {
                    clock = true;
                    rest = &rest[1..];
                } else if opt.eq_ignore_ascii_case(b"RESUME") && kind == RenewKind::Renew {
                    kind = RenewKind::Resume;
                    rest = &rest[1..];
                } else if opt.eq_ignore_ascii_case(b"KEEP") && kind == RenewKind::Release {
                    kind = RenewKind::Park;
                    rest = &rest[1..];
                } else {
                    return Err(syntax());
                }
            }
            if kind == RenewKind::Resume && !clock {
                return Err(usage(
                    "ERR RESUME needs CLOCK: a resumed lease tells its floor",
                ));
            }
            let renewal = engine
                .worker_renew(service, id, token, time, kind)
                .await
                .map_err(lease)?;
            if release {
                out.ok();
            } else if clock {
                // A lease that named its holder also tells its reservation's end; a resumed
                // one its new token.
                let named = renewal.reserved_ms > 0;
                let resumed = kind == RenewKind::Resume;
                out.array(3 + usize::from(named || resumed) + usize::from(resumed));
                out.int(renewal.end_ms);
                out.int(renewal.floor_ms);
                out.int(renewal.server_ms);
                if named || resumed {
                    out.int(renewal.reserved_ms);
                }
                if resumed {
                    out.bulk(renewal.token.as_bytes());
                }
            } else {
                out.int(renewal.end_ms);
            }
        }
        (b"LIST", 3..=7) => {
            require(s, Some(Right::Read), service, "idf.worker|list")?;
            let (mut cursor, mut count, mut rest) = (None, None, &args[3..]);
            while let [opt, value, more @ ..] = rest {
                if opt.eq_ignore_ascii_case(b"CURSOR") {
                    cursor = Some(int(value)?);
                } else if opt.eq_ignore_ascii_case(b"COUNT") {
                    count = Some(positive(value, "COUNT", LIST_MAX as i64)?);
                } else {
                    return Err(syntax());
                }
                rest = more;
            }
            if !rest.is_empty() {
                return Err(syntax());
            }
            let row = |out: &mut Reply, r: &idforge_store::WorkerRow| {
                out.array(6);
                out.int(r.id);
                out.int(i64::from(!r.token.is_empty()));
                out.int(r.expires_ms);
                out.int(r.last_time_ms);
                out.bulk(r.holder.as_bytes());
                out.int(r.reserved_ms);
            };
            if cursor.is_none() && count.is_none() {
                // The unpaged form, as before, for services small enough for one page.
                let (rows, next) = engine
                    .worker_list(service, 0, LIST_MAX)
                    .await
                    .map_err(lease)?;
                if next != 0 {
                    return Err(usage(format!(
                        "ERR more than {LIST_MAX} leases: page with LIST service CURSOR 0 [COUNT n]"
                    )));
                }
                out.array(rows.len());
                rows.iter().for_each(|r| row(out, r));
            } else {
                let count = count.map_or(LIST_DEFAULT, |n| n as usize);
                let (rows, next) = engine
                    .worker_list(service, cursor.unwrap_or(0).max(0), count)
                    .await
                    .map_err(lease)?;
                out.array(2);
                out.int(next);
                out.array(rows.len());
                rows.iter().for_each(|r| row(out, r));
            }
        }
        _ => return Err(wrong()),
    }
    Ok(())
}
