//! Ranges from a server that speaks the Redis protocol: our segment server (`idforge://`) or
//! Redis itself (`redis://`), both through `INCRBY tag step` (the reply is the range's last id).
//!
//! `idforge://` is durable: the server never hands out a value twice, even after a crash.
//! `redis://` is as durable as the Redis behind it: a restart without `appendfsync always`, or
//! a failover to a replica that had not seen the last `INCRBY`, can hand out a range again.

use std::time::Duration;

use idforge_core::segment::Segment;

use super::per_process::PerProcess;
use super::resp::{Conn, Deadline, Reply};
use super::tls::{self, TlsParams};
use super::url::{self, SourceUrl};
use super::{SegmentSource, check_step, validate_tag};
use crate::error::{Error, ErrorCode, Result};

/// Most `INCRBY`s sent in one round trip (each reply is a short integer).
const MAX_PIPELINE: usize = 256;
/// How many `MOVED` replies one fetch follows before it gives up.
const MAX_REDIRECTS: u32 = 5;
/// How long one request may take unless the URL says otherwise (`timeout_ms`): connecting,
/// sending, the whole reply and any `MOVED` redirects, together.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Which server a [`RemoteSource`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `idforge://[user:pass@]host:port[,host:port…]`: our server; follows `MOVED`
    /// (`idforges://`: over TLS).
    Idforge,
    /// `redis://[user:pass@]host:port[/db]`: Redis `INCRBY` on the tag's key (`rediss://`: over
    /// TLS).
    Redis,
}

/// Ranges from an `idforge://` or `redis://` server: one connection per process, opened on the
/// first fetch, re-opened (trying each listed host in turn) after a failure.
#[derive(Debug)]
pub struct RemoteSource {
    flavor: Flavor,
    url: SourceUrl,
    db: u32,
    timeout: Duration,
    /// TLS settings (`idforges://`, `rediss://`).
    tls: Option<TlsParams>,
    conn: PerProcess<Conn>,
}

fn source_error(code: ErrorCode, message: String) -> Error {
    Error::permanent(code, message)
}

/// Error replies that pass: a cluster without a leader (a failover), a server loading or
/// busy, a replica that cannot write yet, a store that did not answer, a full server.
const TRANSIENT_REPLIES: [&str; 8] = [
    "CLUSTERDOWN",
    "TRYAGAIN",
    "LOADING",
    "MASTERDOWN",
    "READONLY",
    "BUSY",
    "ERR STORE UNAVAILABLE",
    "ERR MAX NUMBER OF CLIENTS",
];

/// Whether an error reply is one that may pass (see [`TRANSIENT_REPLIES`]).
pub(crate) fn transient_reply(reply: &str) -> bool {
    let upper = reply.to_ascii_uppercase();
    TRANSIENT_REPLIES.iter().any(|p| upper.starts_with(p))
}

/// An error for the reply `reply`: transient when the reply is.
fn reply_error(code: ErrorCode, reply: &str, message: String) -> Error {
    if transient_reply(reply) {
        Error::transient(code, message)
    } else {
        Error::permanent(code, message)
    }
}

impl RemoteSource {
    /// A source for `url` (`idforge://…`, `redis://…`, or over TLS `idforges://…`,
    /// `rediss://…`); connects on the first fetch. A TLS URL's certificate files are read now.
    pub fn new(url: &str) -> Result<RemoteSource> {
        let scheme = url.split("://").next().unwrap_or("");
        let (flavor, port) = match scheme {
            "idforge" | "idforges" => (Flavor::Idforge, 7379),
            "redis" | "rediss" => (Flavor::Redis, 6379),
            _ => {
                return Err(idforge_core::Error::InvalidUrl(
                    "not idforge://, idforges://, redis:// or rediss://",
                )
                .into());
            }
        };
        let parsed = SourceUrl::parse(url, port)?;
        let tls = secure(&parsed)?;
        match flavor {
            Flavor::Idforge => {
                parsed.only_params(&[&["timeout_ms", "mode"], &tls::PARAMS[..]].concat())?
            }
            Flavor::Redis => parsed.only_params(&[&["timeout_ms"], &tls::PARAMS[..]].concat())?,
        }
        // `mode=any` is another source (`AnySource`); `leader` is this one's.
        if url::param(&parsed.params, "mode").is_some_and(|mode| mode != "leader") {
            return Err(idforge_core::Error::InvalidUrl("mode is leader or any").into());
        }
        let timeout = url::timeout(&parsed.params, DEFAULT_TIMEOUT)?;
        let db = match (flavor, parsed.path.as_str()) {
            (_, "") => 0,
            (Flavor::Redis, db) => db.parse().map_err(|_| {
                idforge_core::Error::InvalidUrl("a redis:// path is a database number")
            })?,
            (Flavor::Idforge, _) => {
                return Err(idforge_core::Error::InvalidUrl("idforge:// URLs have no path").into());
            }
        };
        if flavor == Flavor::Redis && parsed.hosts.len() > 1 {
            return Err(idforge_core::Error::InvalidUrl("redis:// names one host").into());
        }
        Ok(RemoteSource {
            flavor,
            url: parsed,
            db,
            timeout,
            tls,
            conn: PerProcess::new()?,
        })
    }

    /// An `idforge://` source for host `i` of `url` alone, with its credentials, whose
    /// requests take at most `timeout` (for [`super::AnySource`]).
    pub(crate) fn one_host(
        url: &SourceUrl,
        i: usize,
        timeout: Duration,
        tls: Option<TlsParams>,
    ) -> Result<RemoteSource> {
        Ok(RemoteSource {
            flavor: Flavor::Idforge,
            url: SourceUrl {
                hosts: vec![url.hosts[i].clone()],
                params: Vec::new(),
                ..url.clone()
            },
            db: 0,
            timeout,
            tls,
            conn: PerProcess::new()?,
        })
    }

    /// Which server this source talks to.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Connects to `host:port` and authenticates (and selects the database).
    fn open(&self, host: &str, port: u16, deadline: Deadline) -> Result<Conn> {
        self.handshake(
            Conn::connect(host, port, deadline, 0, self.tls.as_ref())?,
            deadline,
        )
    }

    /// Connects to the first listed host that answers. A refused handshake is not retried on
    /// the next host: the credentials are the same there.
    fn open_any(&self, deadline: Deadline) -> Result<Conn> {
        let mut last = None;
        let hosts = &self.url.hosts;
        for (i, (host, port)) in hosts.iter().enumerate() {
            match Conn::connect(
                host,
                *port,
                deadline,
                hosts.len() - i - 1,
                self.tls.as_ref(),
            ) {
                Ok(conn) => return self.handshake(conn, deadline),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| {
            source_error(ErrorCode::SourceUnavailable, "no host in the URL".into())
        }))
    }

    fn handshake(&self, mut conn: Conn, deadline: Deadline) -> Result<Conn> {
        if let Some(password) = &self.url.password {
            let reply = match &self.url.user {
                Some(user) => {
                    conn.call(&[b"AUTH", user.as_bytes(), password.as_bytes()], deadline)?
                }
                None => conn.call(&[b"AUTH", password.as_bytes()], deadline)?,
            };
            if let Reply::Error(e) = reply {
                return Err(reply_error(
                    ErrorCode::SourceUnavailable,
                    &e,
                    format!("{}: authentication refused: {e}", conn.addr),
                ));
            }
        }
        if self.db != 0 {
            let db = self.db.to_string();
            if let Reply::Error(e) = conn.call(&[b"SELECT", db.as_bytes()], deadline)? {
                return Err(reply_error(
                    ErrorCode::SourceUnavailable,
                    &e,
                    format!("{}: SELECT {db}: {e}", conn.addr),
                ));
            }
        }
        Ok(conn)
    }

    /// An error reply as the error of `errors.json` that fits it best.
    fn refused(&self, addr: &str, tag: &str, reply: &str) -> Error {
        let upper = reply.to_ascii_uppercase();
        let code = if upper.contains("NO SUCH TAG") {
            ErrorCode::InvalidArgument
        } else if upper.contains("OVERFLOW") {
            ErrorCode::Overflow
        } else {
            ErrorCode::SourceUnavailable
        };
        reply_error(code, reply, format!("{addr}: INCRBY {tag}: {reply}"))
    }
}

/// The TLS settings of a URL: `Some` for `idforges://` and `rediss://`, whose `tls_*` parameters
/// are then taken out of `parsed.params`; other schemes may not have `tls_*` parameters.
pub(crate) fn secure(parsed: &SourceUrl) -> Result<Option<TlsParams>> {
    let tls = matches!(parsed.scheme.as_str(), "idforges" | "rediss");
    let has_tls_params = parsed
        .params
        .iter()
        .any(|(k, _)| tls::PARAMS.contains(&k.as_str()));
    if !tls {
        if has_tls_params {
            return Err(idforge_core::Error::InvalidUrl(
                "tls_* parameters are for idforges:// and rediss:// URLs",
            )
            .into());
        }
        return Ok(None);
    }
    TlsParams::from_params(&parsed.params).map(Some)
}

/// `MOVED <slot> <host>:<port>` → the host and port.
fn moved_target(reply: &str) -> Option<(String, u16)> {
    let target = reply.strip_prefix("MOVED ")?.split_whitespace().nth(1)?;
    let (host, port) = target.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port.parse().ok()?))
}

impl RemoteSource {
    /// Sends one command to the server that serves (following `MOVED`, re-opening a dead kept
    /// connection once) and returns the address that answered with its reply, which is never
    /// `MOVED`. `what` names the command in errors. All of it within one `timeout_ms`.
    pub(crate) fn call(&self, args: &[&[u8]], what: &str) -> Result<(String, Reply)> {
        let (addr, mut replies) = self.call_all(&[args], what)?;
        Ok((addr, replies.pop().unwrap_or(Reply::Nil)))
    }

    /// Sends `commands` in one round trip and returns their replies in order, none `MOVED`:
    /// the commands answered `MOVED` go again, together, to the server it names. A kept
    /// connection found dead is re-opened once. All of it within one `timeout_ms`.
    pub(crate) fn call_all(
        &self,
        commands: &[&[&[u8]]],
        what: &str,
    ) -> Result<(String, Vec<Reply>)> {
        let deadline = Deadline::after(self.timeout);
        self.conn.with(|slot| {
            let mut replies: Vec<Reply> = vec![Reply::Nil; commands.len()];
            let mut pending: Vec<usize> = (0..commands.len()).collect();
            let mut redirects = 0;
            // A connection kept from an earlier call may have died since (a server restart):
            // one retry on a fresh one. A lost reply means a gap, never a repeat.
            let mut reused = slot.is_some();
            loop {
                let conn = match slot {
                    Some(conn) => conn,
                    None => slot.insert(self.open_any(deadline)?),
                };
                let sent: Vec<&[&[u8]]> = pending.iter().map(|&i| commands[i]).collect();
                let got = match conn.pipeline(&sent, deadline) {
                    Ok(got) => got,
                    Err(e) => {
                        *slot = None;
                        // Not after a timeout: the request's time is used up.
                        if e.code() != ErrorCode::Timeout && std::mem::take(&mut reused) {
                            continue;
                        }
                        return Err(e);
                    }
                };
                let addr = conn.addr.clone();
                let mut moved = None;
                let mut redirected = Vec::new();
                for (&i, reply) in pending.iter().zip(got) {
                    match reply {
                        Reply::Error(e) if e.starts_with("MOVED ") => {
                            redirected.push(i);
                            moved = Some(e);
                        }
                        other => replies[i] = other,
                    }
                }
                let Some(e) = moved else {
                    return Ok((addr, replies));
                };
                *slot = None;
                redirects += 1;
                let target = moved_target(&e).ok_or_else(|| {
                    source_error(
                        ErrorCode::SourceUnavailable,
                        format!("{addr}: a MOVED reply without host:port: {e}"),
                    )
                })?;
                if redirects > MAX_REDIRECTS {
                    // A group still electing its leader: may pass.
                    return Err(Error::transient(
                        ErrorCode::SourceUnavailable,
                        format!("{addr}: {what}: more than {MAX_REDIRECTS} MOVED redirects: {e}"),
                    ));
                }
                reused = false;
                pending = redirected;
                *slot = Some(self.open(&target.0, target.1, deadline)?);
            }
        })
    }

    /// The range that `reply` (from `addr`) gives `tag`'s `INCRBY … step`.
    fn range_of(&self, addr: &str, tag: &str, step: u64, reply: Reply) -> Result<Segment> {
        match reply {
            Reply::Int(last) => leaf_range(last, step).map_err(|why| {
                source_error(
                    ErrorCode::InvalidSegment,
                    format!("{addr}: INCRBY {tag} {step} returned {last}: {why}"),
                )
            }),
            Reply::Error(e) => Err(self.refused(addr, tag, &e)),
            other => {
                // Not a counter reply: the connection's state is unknown, start afresh.
                self.conn.with(|slot| *slot = None);
                Err(source_error(
                    ErrorCode::SourceUnavailable,
                    format!("{addr}: INCRBY replied {other:?}, not an integer"),
                ))
            }
        }
    }
}

impl SegmentSource for RemoteSource {
    fn identity(&self) -> Option<String> {
        let hosts: Vec<String> = self
            .url
            .hosts
            .iter()
            .map(|(h, p)| {
                let h = h.to_ascii_lowercase();
                if h.contains(':') {
                    format!("[{h}]:{p}")
                } else {
                    format!("{h}:{p}")
                }
            })
            .collect();
        // The counters, not the way to them: `idforges://h` shares them with `idforge://h`.
        let (scheme, db) = match self.flavor {
            Flavor::Redis => ("redis", format!("/{}", self.db)),
            Flavor::Idforge => ("idforge", String::new()),
        };
        Some(format!("{scheme}://{}{db}", hosts.join(",")))
    }

    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        let mut ranges = self.fetch_many(&[(tag, step)]);
        ranges.pop().unwrap_or_else(|| unreachable_reply(tag))
    }

    /// Pipelined: one `INCRBY` per request, all in one round trip.
    fn fetch_many(&self, requests: &[(&str, u64)]) -> Vec<Result<Segment>> {
        let checked: Vec<Result<String>> = requests
            .iter()
            .map(|&(tag, step)| {
                validate_tag(tag)?;
                check_step(step)?;
                Ok(step.to_string())
            })
            .collect();
        let sent: Vec<(usize, [&[u8]; 3])> = checked
            .iter()
            .enumerate()
            .filter_map(|(i, step)| {
                let step = step.as_ref().ok()?;
                Some((
                    i,
                    [&b"INCRBY"[..], requests[i].0.as_bytes(), step.as_bytes()],
                ))
            })
            .collect();
        let commands: Vec<&[&[u8]]> = sent.iter().map(|(_, args)| &args[..]).collect();
        let mut answers = if commands.is_empty() {
            Ok((String::new(), Vec::new()))
        } else {
            self.call_all(&commands, "INCRBY")
        };
        let mut replies = match &mut answers {
            Ok((_, replies)) => std::mem::take(replies).into_iter(),
            Err(_) => Vec::new().into_iter(),
        };
        requests
            .iter()
            .zip(checked)
            .map(|(&(tag, step), checked)| {
                checked?;
                match &answers {
                    Ok((addr, _)) => {
                        let reply = replies.next().unwrap_or(Reply::Nil);
                        self.range_of(addr, tag, step, reply)
                    }
                    Err(e) => Err(e.again()),
                }
            })
            .collect()
    }

    fn lanes(&self) -> usize {
        1
    }

    fn max_batch(&self) -> usize {
        MAX_PIPELINE
    }

    fn connections(&self) -> usize {
        self.conn.peek(|slot| slot.is_some())
    }
}

/// A request that got no answer slot: cannot happen (one answer per request).
fn unreachable_reply(tag: &str) -> Result<Segment> {
    Err(source_error(
        ErrorCode::SourceUnavailable,
        format!("INCRBY {tag}: no reply"),
    ))
}

/// The range `last - step + 1 ..= last`, the reply of `INCRBY tag step`.
fn leaf_range(last: i64, step: u64) -> std::result::Result<Segment, &'static str> {
    if last <= 0 {
        return Err("the count is not positive");
    }
    Segment::from_leaf(last as u64, step).map_err(|_| "smaller than the step")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_of_a_failover_or_a_restart_are_transient_and_refusals_are_not() {
        for passing in [
            "CLUSTERDOWN no leader is serving right now; retry shortly",
            "CLUSTERDOWN not the leader",
            "LOADING Redis is loading the dataset in memory",
            "READONLY You can't write against a read only replica.",
            "ERR store unavailable: pool timed out",
            "ERR max number of clients reached",
            "TRYAGAIN",
        ] {
            assert!(transient_reply(passing), "{passing}");
        }
        for refused in [
            "WRONGPASS invalid username-password pair",
            "NOAUTH Authentication required.",
            "ERR no such tag 'x' (create it with IDF.TAG CREATE)",
            "ERR increment would overflow the tag's 64-bit range",
            "WRONGTYPE Operation against a key holding the wrong kind of value",
            "ERR value is not an integer or out of range",
        ] {
            assert!(!transient_reply(refused), "{refused}");
        }
    }

    #[test]
    fn moved_replies_parse() {
        assert_eq!(
            moved_target("MOVED 0 127.0.0.1:7001"),
            Some(("127.0.0.1".into(), 7001))
        );
        assert_eq!(
            moved_target("MOVED 3999 [::1]:7001"),
            Some(("::1".into(), 7001))
        );
        assert_eq!(moved_target("MOVED 0"), None);
        assert_eq!(moved_target("ERR x"), None);
    }

    #[test]
    fn ranges_end_at_the_reply() {
        assert_eq!(leaf_range(10, 10).unwrap(), Segment::new(1, 11).unwrap());
        assert_eq!(leaf_range(25, 5).unwrap(), Segment::new(21, 26).unwrap());
        assert!(leaf_range(4, 5).is_err());
        assert!(leaf_range(-5, 1).is_err());
    }

    #[test]
    fn identities_carry_no_credentials() {
        let id = |url: &str| RemoteSource::new(url).unwrap().identity().unwrap();
        assert_eq!(id("redis://:pw@h"), "redis://h:6379/0");
        assert_eq!(id("redis://u:pw@H:7/0"), "redis://h:7/0");
        assert_eq!(id("redis://h/3"), "redis://h:6379/3");
        assert_eq!(
            id("idforge://u:pw@a,[::1]:7000?timeout_ms=9"),
            "idforge://a:7379,[::1]:7000"
        );
    }

    #[test]
    fn urls_are_checked() {
        assert_eq!(
            RemoteSource::new("redis://h/2").unwrap().flavor(),
            Flavor::Redis
        );
        for bad in [
            "redis://h/x",
            "redis://a,b",
            "idforge://h/0",
            "idforge://h?db=1",
            "idforge://h?mode=all",
            "redis://h?mode=leader",
        ] {
            let e = RemoteSource::new(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidUrl, "{bad}");
        }
    }

    #[test]
    fn an_unreachable_server_is_source_unavailable() {
        // Port 1 on loopback: nothing listens there.
        let s = RemoteSource::new("idforge://127.0.0.1:1?timeout_ms=500").unwrap();
        assert_eq!(
            s.fetch("t", 10).unwrap_err().code(),
            ErrorCode::SourceUnavailable
        );
    }
}
