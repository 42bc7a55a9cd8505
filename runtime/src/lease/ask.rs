//! Asking the server: `IDF.WORKER ACQUIRE` and `RENEW` (again without the words an older
//! server refuses), and what it granted.

use super::*;

/// What a lease is asked with.
pub(super) struct Ask<'a> {
    pub(super) service: &'a str,
    pub(super) ttl_ms: u64,
    pub(super) max: u64,
    pub(super) holder: Option<&'a str>,
    pub(super) in_file: bool,
}

/// A lease the server granted (or renewed back from a file).
pub(super) struct Granted {
    pub(super) id: u64,
    pub(super) token: String,
    /// This host's clock when the request left and when the reply came.
    pub(super) sent: u64,
    pub(super) received: u64,
    /// The id's time floor and the server's clock, when told.
    pub(super) clock: Option<(u64, u64)>,
    /// The reservation's end (0: none told).
    pub(super) reserved_ms: u64,
    /// The lease's end the server told (a renewal), if it told one; a grant's is its clock
    /// plus the TTL.
    pub(super) end_ms: Option<u64>,
}

/// `[floor, server-ms, reserved-ms?]` of a grant or a renewal: the clock, and the reservation.
pub(super) fn clock_fields(fields: &[Reply]) -> Option<(Option<(u64, u64)>, u64)> {
    match fields {
        [] => Some((None, 0)),
        [Reply::Int(floor), Reply::Int(server), more @ ..] if *floor >= 0 && *server > 0 => {
            let reserved = match more {
                [Reply::Int(r), ..] => u64::try_from(*r).unwrap_or(0),
                _ => 0,
            };
            Some((Some((*floor as u64, *server as u64)), reserved))
        }
        _ => None,
    }
}

/// Whether a server refused a word it does not know (a server older than it).
fn refused_word(reply: &Reply) -> bool {
    matches!(reply, Reply::Error(e)
        if e.starts_with("ERR wrong arguments") || e.starts_with("ERR syntax"))
}

impl Ask<'_> {
    /// `IDF.WORKER ACQUIRE`, asked again without the words an older server refuses.
    pub(super) fn acquire(&self, source: &RemoteSource) -> Result<Granted> {
        let (ttl_text, max_text) = (self.ttl_ms.to_string(), self.max.min(1 << 24).to_string());
        let mut args: Vec<&[u8]> = vec![
            b"IDF.WORKER",
            b"ACQUIRE",
            self.service.as_bytes(),
            ttl_text.as_bytes(),
            b"MAX",
            max_text.as_bytes(),
        ];
        if let Some(name) = self.holder {
            args.extend([b"HOLDER".as_slice(), name.as_bytes()]);
            if self.in_file {
                args.push(b"FILE");
            }
        }
        args.push(b"CLOCK");
        let mut sent = now_ms();
        let (mut addr, mut reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        if self.holder.is_some() && refused_word(&reply) {
            // A server older than holder names refuses HOLDER: lease without a name, as
            // before them (the id is then not kept for this instance, nor ridden out past its
            // lease's end: no reservation is told).
            args.truncate(6);
            args.push(b"CLOCK");
            sent = now_ms();
            (addr, reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        }
        if matches!(&reply, Reply::Error(e) if e.starts_with("ERR wrong arguments")) {
            // A server older than time floors refuses CLOCK: lease as before them, without a
            // floor (an earlier holder's ids are then kept apart only by the id's reuse delay,
            // as they always were with such a server) and without measuring the skew.
            args.pop();
            sent = now_ms();
            (addr, reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        }
        let received = now_ms();
        // `[id, token, ttl, floor, server-ms, reserved-ms]` with CLOCK and HOLDER; `[id,
        // token, ttl]` from an older server.
        match reply {
            Reply::Array(parts) => match parts.as_slice() {
                [Reply::Int(id), Reply::Bulk(token), _, rest @ ..] if *id >= 0 => {
                    let Some((clock, reserved_ms)) = clock_fields(rest) else {
                        let token = String::from_utf8_lossy(token).into_owned();
                        let _ = source.call(
                            &[
                                b"IDF.WORKER",
                                b"RELEASE",
                                self.service.as_bytes(),
                                id.to_string().as_bytes(),
                                token.as_bytes(),
                            ],
                            "IDF.WORKER",
                        );
                        return Err(lease_error(format!(
                            "{addr}: a malformed grant (floor and clock {rest:?})"
                        )));
                    };
                    Ok(Granted {
                        id: *id as u64,
                        token: String::from_utf8_lossy(token).into_owned(),
                        sent,
                        received,
                        clock,
                        reserved_ms,
                        end_ms: None,
                    })
                }
                _ => Err(lease_error(format!("{addr}: a malformed grant {parts:?}"))),
            },
            Reply::Error(e) if e.contains("no free worker id") || e.contains("lease limit") => Err(
                Error::permanent(ErrorCode::Overflow, format!("{addr}: {e}")),
            ),
            other => Err(lease_error(format!(
                "{addr}: IDF.WORKER ACQUIRE: {other:?}"
            ))),
        }
    }

    /// Takes back the lease of a file with its token (`RENEW … RESUME`: a lease kept in a file
    /// comes back even after its end, under a new token): [`Resumed::Lost`] when it is lost,
    /// [`Resumed::Held`] while it is live, `Err` with `SOURCE_UNAVAILABLE` when the server
    /// cannot be reached.
    pub(super) fn resume(&self, source: &RemoteSource, record: &LeaseRecord) -> Result<Resumed> {
        let (id, time) = (record.id.to_string(), record.mark_ms.to_string());
        let mut args: Vec<&[u8]> = vec![
            b"IDF.WORKER",
            b"RENEW",
            self.service.as_bytes(),
            id.as_bytes(),
            record.token.as_bytes(),
            b"TIME",
            time.as_bytes(),
            b"CLOCK",
            b"RESUME",
        ];
        let mut sent = now_ms();
        let (mut addr, mut reply) = source.call(&args, "IDF.WORKER RENEW")?;
        if refused_word(&reply) {
            // A server older than RESUME: renewed as before it (such a server cannot tell a
            // second process on a copy of the file from this one).
            args.pop();
            sent = now_ms();
            (addr, reply) = source.call(&args, "IDF.WORKER RENEW")?;
        }
        let received = now_ms();
        // `[end, floor, server-ms, reserved-ms, token]` (`token` from servers that know RESUME).
        match reply {
            Reply::Array(parts) => match parts.split_first() {
                Some((Reply::Int(end), rest)) => {
                    let token = match rest.get(3) {
                        Some(Reply::Bulk(t)) => String::from_utf8_lossy(t).into_owned(),
                        _ => record.token.clone(),
                    };
                    match clock_fields(rest.get(..3).unwrap_or(rest)) {
                        Some((clock @ Some(_), reserved_ms)) => Ok(Resumed::Granted(Granted {
                            id: record.id,
                            token,
                            sent,
                            received,
                            clock,
                            reserved_ms,
                            // The lease's TTL is the one it was granted with, whatever this
                            // process asks.
                            end_ms: Some(u64::try_from(*end).unwrap_or(0)),
                        })),
                        _ => Err(lease_error(format!(
                            "{addr}: a malformed renewal {parts:?}"
                        ))),
                    }
                }
                _ => Err(lease_error(format!(
                    "{addr}: a malformed renewal {parts:?}"
                ))),
            },
            Reply::Error(e) if e.starts_with("LEASELOST") => Ok(Resumed::Lost),
            Reply::Error(e) if e.starts_with("LEASEHELD") => {
                let ends_in = e
                    .split_whitespace()
                    .nth(1)
                    .and_then(|ms| ms.parse::<u64>().ok())
                    .ok_or_else(|| lease_error(format!("{addr}: a malformed refusal {e:?}")))?;
                Ok(Resumed::Held {
                    ends_in: Duration::from_millis(ends_in),
                    said: format!("{addr}: {e}"),
                })
            }
            // A server older than floors or names: lease again (it keeps no reservation, so
            // nothing of the file is trusted with it).
            Reply::Error(_) if refused_word(&reply) => Ok(Resumed::Lost),
            // A server that answers but cannot serve now (its store down, loading): as out of
            // reach. Any other answer is a refusal, never a reason to go on without it.
            Reply::Error(e) if crate::source::transient_reply(&e) => Err(Error::transient(
                ErrorCode::SourceUnavailable,
                format!("{addr}: IDF.WORKER RENEW: {e}"),
            )),
            other => Err(lease_error(format!("{addr}: IDF.WORKER RENEW: {other:?}"))),
        }
    }
}

/// The longest a start from a lease file waits for a live lease to end (a process killed without
/// a word leaves it live for up to its TTL): past it, the start fails and may be retried.
const RESUME_WAIT_MAX: Duration = Duration::from_secs(30);

/// What a start waits past the end the server told, for the round trips.
const RESUME_SLACK: Duration = Duration::from_millis(500);

impl Ask<'_> {
    /// [`resume`](Self::resume), waiting out a live lease once: a process killed without a word
    /// leaves its lease live until its end (at most [`RESUME_WAIT_MAX`]); one still live after
    /// that end is renewed by another process (on a copy, a hard link or a symbolic link of the
    /// file), and this start is refused.
    pub(super) fn resume_waiting(
        &self,
        source: &RemoteSource,
        record: &LeaseRecord,
        file: Option<&LeaseFile>,
    ) -> Result<Option<Granted>> {
        let mut deadline = None;
        loop {
            match self.resume(source, record)? {
                Resumed::Granted(granted) => return Ok(Some(granted)),
                Resumed::Lost => return Ok(None),
                Resumed::Held { ends_in, said } => {
                    let now = std::time::Instant::now();
                    let deadline =
                        *deadline.get_or_insert(now + ends_in.min(RESUME_WAIT_MAX) + RESUME_SLACK);
                    if now >= deadline {
                        let path = file.map(|f| f.path().to_path_buf()).unwrap_or_default();
                        return Err(Error::StateFile {
                            path,
                            source: std::io::Error::new(
                                std::io::ErrorKind::WouldBlock,
                                format!(
                                    "in use by another process: its lease is still renewed \
                                     (a copy or a link of this lease file?): {said}"
                                ),
                            ),
                        });
                    }
                    std::thread::sleep((ends_in + Duration::from_millis(20)).min(deadline - now));
                }
            }
        }
    }
}

/// What a start from a lease file got from the server.
pub(super) enum Resumed {
    /// The lease is this process's again.
    Granted(Granted),
    /// It ended and may have gone to another holder: lease again.
    Lost,
    /// It is live: the process that held it may still run (on a copy or a link of the file),
    /// or was killed and its lease ends in `ends_in` unless renewed again.
    Held {
        /// How long until it ends, unless renewed.
        ends_in: Duration,
        /// The server's words.
        said: String,
    },
}
