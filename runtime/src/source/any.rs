//! `idforge://a:7379,b:7379?mode=any`: ranges from whichever of several independent servers
//! answers: servers started with `--stripe K/N`, each on its own store, whose ids never meet
//! (Flickr's ticket servers). No election and no failover time: a dead server is skipped at
//! once and costs only its share of the capacity.
//!
//! Each refill goes to the next server in turn, skipping those that failed lately; a server
//! that fails (a refused or dropped connection, no answer within its share of the time, a
//! reply that may pass such as `ERR store unavailable`) is left out for a pause that grows
//! while it keeps failing, and the same requests go to the next server at once.
//!
//! Before its first range from a server (and again after it failed), the source reads the
//! server's stripe (`INFO server`) and refuses, permanently, servers that are not striped, or
//! striped so that their ids could meet (the same K, another N or block), a server that came
//! back on another stripe, and one that hands out a range outside its stripe: an operator's slip
//! must not become duplicates. A refusal ends the source: every request after it fails with the
//! same error, so that it reaches the callers (once the ids already fetched are used up) instead
//! of the source going on, unseen, with the other servers. Fixing the servers and starting the
//! process again clears it.
//!
//! The servers' ranges interleave, so a generator's ids are unique but only roughly
//! increasing. Each server's own ranges must still go up: a range below what this process
//! already took from that server (a restored store) is refused (`INVALID_SEGMENT`), with the
//! process-wide mark of that server and tag (shared with `idforge://host` on that server).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use idforge_core::segment::Segment;

use super::remote::{RemoteSource, transient_reply};
use super::resp::Reply;
use super::url::{self, SourceUrl};
use super::{SegmentSource, check_step, validate_tag};
use crate::error::{Error, ErrorCode, Result};
use crate::marks::{self, Mark, Ticket};

/// How long a server that failed is left out at first; it doubles while it keeps failing.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// The longest pause.
const MAX_PAUSE: Duration = Duration::from_secs(5);
/// The least time one server gets of a request's budget.
const MIN_SHARE: Duration = Duration::from_millis(250);
/// Most requests sent in one round trip (as `idforge://`).
const MAX_PIPELINE: usize = 256;

/// Whether `url` asks for this source (`mode=any`).
pub(crate) fn wanted(url: &str) -> bool {
    url.split_once('?')
        .is_some_and(|(_, query)| query.split('&').any(|pair| pair == "mode=any"))
}

/// One server of the stripes, and how it fared lately.
#[derive(Debug)]
struct Server {
    source: RemoteSource,
    health: Mutex<Health>,
    /// Its stripe (`INFO server`), read before its first range and again after a failure.
    known: Mutex<Known>,
}

/// What a source knows of a server's stripe.
#[derive(Debug, Default)]
struct Known {
    /// Its stripe, once read; never forgotten (a server that comes back on another stripe is
    /// refused).
    stripe: Option<Stripe>,
    /// Read since the server last failed.
    fresh: bool,
}

/// A server's `--stripe K/N` and `--stripe-block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stripe {
    index: i64,
    count: i64,
    block: i64,
}

impl std::fmt::Display for Stripe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} (block {})", self.index, self.count, self.block)
    }
}

/// The stripe in an `INFO server` text (`stripe:K/N`, `stripe_block:B`); `None` when it has
/// none (a server without stripes, or not idforge).
fn stripe_in(info: &str) -> Option<Stripe> {
    let field = |key: &str| {
        info.lines()
            .find_map(|line| line.trim_end().strip_prefix(key)?.strip_prefix(':'))
    };
    let (index, count) = field("stripe")?.split_once('/')?;
    Some(Stripe {
        index: index.parse().ok()?,
        count: count.parse().ok()?,
        block: field("stripe_block")?.parse().ok()?,
    })
}

#[derive(Debug, Default)]
struct Health {
    /// Left out until then.
    out_until: Option<Instant>,
    /// The pause of the last failure (doubles with each failure in a row).
    pause: Duration,
}

/// Ranges from any live server of a set of striped `idforge` servers (see the module doc).
#[derive(Debug)]
pub struct AnySource {
    servers: Vec<Server>,
    /// `host:port` of each server, for messages.
    hosts: Vec<String>,
    /// Where the next refill starts looking.
    next: AtomicUsize,
    /// One request's budget, across the servers it tries.
    timeout: Duration,
    identity: String,
    /// The refusal that ended this source, if one did (see the module doc).
    refused: Mutex<Option<Error>>,
}

impl AnySource {
    /// A source over the hosts of `url` (`idforge://[user:pass@]a:7379,b:7379?mode=any`);
    /// `timeout_ms` is one request's budget across the servers it tries, each getting an
    /// equal share of what is left (at least 250 ms).
    pub fn new(url: &str) -> Result<AnySource> {
        if !url.starts_with("idforge://") && !url.starts_with("idforges://") {
            return Err(idforge_core::Error::InvalidUrl(
                "mode=any is for idforge:// and idforges:// URLs",
            )
            .into());
        }
        let parsed = SourceUrl::parse(url, 7379)?;
        let tls = super::remote::secure(&parsed)?;
        parsed.only_params(&[&["timeout_ms", "mode"], &super::tls::PARAMS[..]].concat())?;
        if !parsed.path.is_empty() {
            return Err(idforge_core::Error::InvalidUrl("idforge:// URLs have no path").into());
        }
        let timeout = url::timeout(&parsed.params, super::remote::DEFAULT_TIMEOUT)?;
        let share = (timeout / parsed.hosts.len() as u32).max(MIN_SHARE.min(timeout));
        let servers = (0..parsed.hosts.len())
            .map(|i| {
                Ok(Server {
                    source: RemoteSource::one_host(&parsed, i, share, tls.clone())?,
                    health: Mutex::default(),
                    known: Mutex::default(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let hosts: Vec<String> = servers
            .iter()
            .filter_map(|s| s.source.identity())
            .map(|id| id.trim_start_matches("idforge://").to_owned())
            .collect();
        Ok(AnySource {
            servers,
            identity: format!("idforge://{}?mode=any", hosts.join(",")),
            hosts,
            next: AtomicUsize::new(0),
            timeout,
            refused: Mutex::default(),
        })
    }

    /// The servers in the order to try them: from the next in turn, those not left out first.
    fn order(&self) -> Vec<usize> {
        let n = self.servers.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let now = Instant::now();
        let (mut live, mut out) = (Vec::with_capacity(n), Vec::new());
        for i in (0..n).map(|k| (start + k) % n) {
            match lock(&self.servers[i].health).out_until {
                Some(until) if until > now => out.push(i),
                _ => live.push(i),
            }
        }
        // Servers left out are still tried, last: when all failed lately, one may be back.
        live.extend(out);
        live
    }

    /// Ends this source with `e` (the first refusal is kept), and gives `e` back.
    fn refuse(&self, e: Error) -> Error {
        lock(&self.refused).get_or_insert_with(|| e.again());
        e
    }
}

impl AnySource {
    /// Reads server `i`'s stripe unless known, and checks it against the others known: servers
    /// of one `mode=any` URL must be striped alike (N and block) on different stripes, or their
    /// ids would meet. A server that cannot be asked fails transiently; a wrong set of stripes
    /// is permanent (an operator must fix it).
    fn check_stripe(&self, i: usize) -> Result<Stripe> {
        let server = &self.servers[i];
        let known = {
            let k = lock(&server.known);
            k.stripe.filter(|_| k.fresh)
        };
        let mine = match known {
            Some(stripe) => stripe,
            None => {
                let stripe = self.read_stripe(i)?;
                let mut k = lock(&server.known);
                if let Some(before) = k.stripe.filter(|&before| before != stripe) {
                    return Err(Error::permanent(
                        ErrorCode::SourceUnavailable,
                        format!(
                            "{} came back on stripe {stripe}, not {before}: refused, as its ids \
                             may meet what it handed out before",
                            self.hosts[i]
                        ),
                    ));
                }
                *k = Known {
                    stripe: Some(stripe),
                    fresh: true,
                };
                stripe
            }
        };
        for (j, other) in self.servers.iter().enumerate() {
            let Some(theirs) = lock(&other.known).stripe else {
                continue;
            };
            let clash = j != i
                && (theirs.index == mine.index
                    || theirs.count != mine.count
                    || theirs.block != mine.block);
            if clash {
                return Err(Error::permanent(
                    ErrorCode::SourceUnavailable,
                    format!(
                        "servers {} and {} of a mode=any URL are on stripes {mine} and {theirs}: \
                         their ids could meet (give each its own K of the same N and block)",
                        self.hosts[i], self.hosts[j]
                    ),
                ));
            }
        }
        Ok(mine)
    }

    /// Asks server `i` for its stripe (`INFO server`).
    fn read_stripe(&self, i: usize) -> Result<Stripe> {
        let (addr, reply) = self.servers[i].source.call(&[b"INFO", b"server"], "INFO")?;
        let text = match reply {
            Reply::Bulk(text) => String::from_utf8_lossy(&text).into_owned(),
            // Loading, full, a failover: another server, and this one again later.
            Reply::Error(e) if transient_reply(&e) => {
                return Err(Error::transient(
                    ErrorCode::SourceUnavailable,
                    format!("{addr}: INFO: {e}"),
                ));
            }
            other => format!("{other:?}"),
        };
        stripe_in(&text)
            .filter(|s| s.count > 1 || self.servers.len() == 1)
            .ok_or_else(|| {
                Error::permanent(
                    ErrorCode::SourceUnavailable,
                    format!(
                        "{addr} is not a striped idforge server (--stripe K/N): mode=any \
                         needs servers whose ids cannot meet"
                    ),
                )
            })
    }
}

impl Stripe {
    /// Whether `range` lies in one block of this stripe: a server's ranges must, whatever it
    /// became since its stripe was read (a reconnect is silent).
    fn holds(&self, range: Segment) -> bool {
        let block = self.block as u64;
        let (first, last) = (range.start(), range.end() - 1);
        first >= 1
            && (first - 1) / block == (last - 1) / block
            && (first - 1) / block % self.count as u64 == self.index as u64
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    fn failed(&self) {
        let mut h = lock(&self.health);
        h.pause = (h.pause * 2).clamp(FIRST_PAUSE, MAX_PAUSE);
        h.out_until = Some(Instant::now() + h.pause);
        // It may come back as another server: read its stripe again before using it.
        lock(&self.known).fresh = false;
    }

    fn answered(&self) {
        *lock(&self.health) = Health::default();
    }

    /// Takes the tickets of this server's marks for `tags`, before asking it.
    fn tickets(&self, tags: &[&str]) -> Result<Vec<(Arc<Mark>, Ticket)>> {
        tags.iter()
            .map(|tag| {
                let mark = marks::mark_for(&self.source, tag)?;
                let ticket = mark.ticket();
                Ok((mark, ticket))
            })
            .collect()
    }
}

impl SegmentSource for AnySource {
    fn identity(&self) -> Option<String> {
        Some(self.identity.clone())
    }

    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        let mut ranges = self.fetch_many(&[(tag, step)]);
        ranges.pop().unwrap_or_else(|| {
            Err(Error::permanent(
                ErrorCode::SourceUnavailable,
                format!("INCRBY {tag}: no reply"),
            ))
        })
    }

    /// The requests go to one server in one round trip; those it could not serve go on to the
    /// next, at once.
    fn fetch_many(&self, requests: &[(&str, u64)]) -> Vec<Result<Segment>> {
        let mut results: Vec<Option<Result<Segment>>> = requests
            .iter()
            .map(|&(tag, step)| {
                validate_tag(tag)
                    .and_then(|()| check_step(step))
                    .err()
                    .map(Err)
            })
            .collect();
        let mut pending: Vec<usize> = (0..requests.len())
            .filter(|&i| results[i].is_none())
            .collect();
        if let Some(refused) = lock(&self.refused).as_ref() {
            for &r in &pending {
                results[r] = Some(Err(refused.again()));
            }
            pending.clear();
        }
        let mut last_failure: Option<Error> = None;
        let started = Instant::now();
        for i in self.order() {
            // The budget is the request's, however many servers it tries (each its share).
            if pending.is_empty() || started.elapsed() >= self.timeout {
                break;
            }
            let server = &self.servers[i];
            let stripe = match self.check_stripe(i) {
                Ok(stripe) => stripe,
                Err(e) if e.is_transient() => {
                    server.failed();
                    last_failure = Some(e);
                    continue;
                }
                Err(e) => {
                    let e = self.refuse(e);
                    for &r in &pending {
                        results[r] = Some(Err(e.again()));
                    }
                    break;
                }
            };
            // A range lies within one block: a longer step gets a block.
            let asked: Vec<(&str, u64)> = pending
                .iter()
                .map(|&r| (requests[r].0, requests[r].1.min(stripe.block as u64)))
                .collect();
            let tags: Vec<&str> = asked.iter().map(|&(tag, _)| tag).collect();
            let tickets = match server.tickets(&tags) {
                Ok(tickets) => tickets,
                Err(e) => {
                    last_failure = Some(e);
                    continue;
                }
            };
            let got = server.source.fetch_many(&asked);
            let mut again = Vec::new();
            let mut failed = false;
            for ((r, fetched), (mark, ticket)) in pending.iter().zip(got).zip(tickets) {
                match fetched {
                    Ok(range) if !stripe.holds(range) => {
                        results[*r] = Some(Err(self.refuse(Error::permanent(
                            ErrorCode::InvalidSegment,
                            format!(
                                "{}: INCRBY {} handed out ids {}..={}, outside its stripe \
                                 {stripe}: refused",
                                self.hosts[i],
                                requests[*r].0,
                                range.start(),
                                range.end() - 1
                            ),
                        ))));
                    }
                    Ok(range) => {
                        let admitted = mark.admit(ticket, range, requests[*r].0);
                        results[*r] = Some(admitted.map(|()| range));
                    }
                    // The server may be down, restarting or without its store: another one.
                    Err(e) if e.is_transient() => {
                        failed = true;
                        again.push(*r);
                        last_failure = Some(e);
                    }
                    Err(e) => results[*r] = Some(Err(e)),
                }
            }
            if failed {
                server.failed();
            } else {
                server.answered();
            }
            pending = again;
        }
        results
            .into_iter()
            .map(|result| {
                result.unwrap_or_else(|| {
                    Err(last_failure.as_ref().map_or_else(
                        || {
                            Error::transient(
                                ErrorCode::SourceUnavailable,
                                "no server answered".into(),
                            )
                        },
                        Error::again,
                    ))
                })
            })
            .collect()
    }

    /// One lane per server, so a server that does not answer holds up one lane only.
    fn lanes(&self) -> usize {
        self.servers.len()
    }

    fn max_batch(&self) -> usize {
        MAX_PIPELINE
    }

    fn ordered(&self) -> bool {
        false
    }

    fn connections(&self) -> usize {
        self.servers.iter().map(|s| s.source.connections()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked() {
        assert!(wanted("idforge://a,b?mode=any"));
        assert!(wanted("idforge://a,b?timeout_ms=9&mode=any"));
        assert!(!wanted("idforge://a,b?mode=leader"));
        assert!(!wanted("idforge://a,b"));
        let s = AnySource::new("idforge://u:pw@A:1,b?mode=any&timeout_ms=1000").unwrap();
        assert_eq!(
            s.identity().as_deref(),
            Some("idforge://a:1,b:7379?mode=any")
        );
        assert_eq!((s.lanes(), s.ordered(), s.connections()), (2, false, 0));
        for bad in [
            "redis://a?mode=any",
            "idforge://a/0?mode=any",
            "idforge://a?mode=any&db=1",
            "idforge://a?mode=any&timeout_ms=0",
        ] {
            let e = AnySource::new(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidUrl, "{bad}");
        }
    }

    #[test]
    fn stripes_are_read_from_info() {
        let info = "# Server\r\nredis_version:7.0.0\r\nstripe:1/3\r\nstripe_block:500\r\n";
        assert_eq!(
            stripe_in(info),
            Some(Stripe {
                index: 1,
                count: 3,
                block: 500
            })
        );
        assert_eq!(stripe_in("# Server\r\nredis_version:7.0.0\r\n"), None);
        assert_eq!(stripe_in("stripe:x/2\r\nstripe_block:5\r\n"), None);
    }

    #[test]
    fn a_range_must_lie_in_one_block_of_the_servers_stripe() {
        let s = Stripe {
            index: 1,
            count: 2,
            block: 10,
        };
        let range = |a: u64, b: u64| Segment::new(a, b + 1).unwrap();
        assert!(s.holds(range(11, 20)));
        assert!(s.holds(range(31, 31)));
        assert!(!s.holds(range(1, 10)), "stripe 0's block");
        assert!(!s.holds(range(19, 21)), "across blocks");
        assert!(!s.holds(range(20, 31)), "across blocks");
    }

    #[test]
    fn dead_servers_are_skipped_and_bad_requests_refused_without_asking() {
        // Port 1 on loopback: nothing listens there.
        let s =
            AnySource::new("idforge://127.0.0.1:1,127.0.0.1:1?mode=any&timeout_ms=500").unwrap();
        let got = s.fetch_many(&[("t", 10), ("bad tag", 10), ("t", 0)]);
        let e = got[0].as_ref().unwrap_err();
        assert!(e.is_transient(), "{e}");
        assert_eq!(e.code(), ErrorCode::SourceUnavailable);
        assert_eq!(
            got[1].as_ref().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            got[2].as_ref().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        // Both failed: both left out, and still tried (last) rather than nothing.
        assert_eq!(s.order().len(), 2);
        assert!(
            s.servers
                .iter()
                .all(|srv| srv.health.lock().unwrap().out_until.is_some())
        );
    }
}
