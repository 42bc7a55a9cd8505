//! The commands: how a request becomes a reply.
//!
//! A client's session ([`session`]) parses a request into words and calls [`execute`]. The first
//! word names the command; its row in the table ([`spec`]) decides the rest before any handler
//! runs: a command other than `AUTH`, `HELLO`, `PING` and `QUIT` needs an authenticated client
//! (`NOAUTH`); a data command on a server that does not serve gets `-MOVED` to the leader
//! ([`cluster::redirect`]); a wrong number of words gets the row's arity error. Then the handler
//! runs and appends its reply, or returns an error that is counted (by kind) and sent.
//!
//! - [`spec`]: the table: names, arity, keys, routing, flags, docs.
//! - [`connection`]: `AUTH`, `HELLO`, `CLIENT`; [`command`]: `COMMAND`, from the table.
//! - [`idf`]: the `IDF.*` commands; [`cluster`]: `CLUSTER` and redirects; [`info`]: `INFO`.
//! - [`session`]: one RESP connection's loop: read requests, run them, write replies, within its
//!   limits.

pub mod cluster;
mod command;
mod connection;
pub(crate) mod cursor;
mod idf;
mod info;
pub(crate) mod request;
pub(crate) mod session;
pub(crate) mod spec;

use super::auth::Right;
use super::metrics::ErrorKind;
use super::metrics::family::Family;
use super::shared::Shared;
use idforge_resp::Reply;
use request::{Outcome, Session, alloc_error, int, require, tag, usage};
use spec::{Cmd, Flag};

/// The requests-by-command counters (`/metrics`, `INFO stats`): counter `cmd as usize` is
/// `cmd`'s.
pub(crate) fn request_counters() -> Family {
    Family::new(Cmd::ALL.iter().map(|cmd| cmd.name()).collect())
}

/// Runs one command, appending its reply to `out`.
pub(crate) async fn execute(shared: &Shared, s: &mut Session, args: &[&[u8]], out: &mut Reply) {
    let cmd = Cmd::parse(args[0]);
    shared.requests.add(cmd as usize);
    if let Err((kind, message)) = run(shared, s, cmd, args, out).await {
        shared.allocator.metrics().error(kind);
        out.error(&message);
    }
}

/// The arity error of `cmd`.
fn arity(cmd: Cmd) -> (ErrorKind, String) {
    usage(cmd.wrong_args())
}

async fn run(
    shared: &Shared,
    s: &mut Session,
    cmd: Cmd,
    args: &[&[u8]],
    out: &mut Reply,
) -> Outcome {
    let spec = cmd.spec();
    if s.perms.is_none() && !spec.has(Flag::NoAuth) {
        return Err((ErrorKind::Auth, "NOAUTH Authentication required.".into()));
    }
    if let Some(key) = spec.routed(args) {
        if !shared.allocator.leadership().serving() {
            return Err(cluster::redirect(shared, key.map(|i| args[i])));
        }
    }
    if !spec.arity_fits(args.len()) {
        return Err(arity(cmd));
    }
    match cmd {
        Cmd::Incr | Cmd::IncrBy => {
            let tag = tag(args[1])?;
            let count = if cmd == Cmd::Incr { 1 } else { int(args[2])? };
            if count < 1 {
                return Err(usage("ERR the count must be a positive integer"));
            }
            require(s, Some(Right::Alloc), tag, cmd.name())?;
            // A tag created here counts towards a non-admin user's quota.
            let owner = (!s.perms.as_ref().is_some_and(|p| p.is_admin())).then_some(&*s.user);
            let first = (shared.allocator.alloc_for(tag, count, owner).await)
                .map_err(|e| alloc_error(shared, args[1], e))?;
            out.int(first + (count - 1));
        }
        Cmd::Get => {
            let tag = tag(args[1])?;
            require(s, Some(Right::Read), tag, cmd.name())?;
            match (shared.allocator.last(tag).await).map_err(|e| alloc_error(shared, args[1], e))? {
                Some(last) => out.bulk(itoa::Buffer::new().format(last).as_bytes()),
                None => out.null(),
            }
        }
        Cmd::Ping => match args {
            [_] => out.simple("PONG"),
            [_, message] => out.bulk(message),
            _ => return Err(arity(cmd)),
        },
        Cmd::Echo => out.bulk(args[1]),
        Cmd::Quit => {
            s.quit = true;
            out.ok();
        }
        Cmd::Select => {
            if int(args[1])? != 0 {
                return Err(usage("ERR DB index is out of range"));
            }
            out.ok();
        }
        Cmd::Auth => connection::auth(shared, s, args, out).await?,
        Cmd::Hello => connection::hello(shared, s, args, out).await?,
        Cmd::Client => connection::client(s, args, out)?,
        Cmd::Command => command::command(args, out),
        Cmd::Info => {
            let admin = s.perms.as_ref().is_some_and(|p| p.is_admin());
            out.bulk(info::text(shared, args.get(1).copied(), admin).as_bytes());
        }
        Cmd::Config => {
            // Enough for tools that read settings (redis-benchmark asks for `save` and
            // `appendonly`): each asked-for name with an empty value; nothing can be set.
            if args.len() < 3 || !args[1].eq_ignore_ascii_case(b"GET") {
                return Err(arity(cmd));
            }
            out.map(args.len() - 2);
            for name in &args[2..] {
                out.bulk(name);
                out.bulk(b"");
            }
        }
        Cmd::IdfTag => idf::tag_command(shared, s, args, out).await?,
        Cmd::IdfSnowflake => idf::snowflake(shared, s, args, out).await?,
        Cmd::IdfDecode => idf::decode(shared, args, out)?,
        Cmd::IdfUser => idf::user(shared, s, args, out).await?,
        Cmd::IdfFailover => idf::failover(shared, s, out).await?,
        Cmd::IdfWorker => idf::worker(shared, s, args, out).await?,
        Cmd::Cluster => cluster::command(shared, args, out)?,
        // Cluster clients send these to pick replicas for reads (see their rows).
        Cmd::ReadOnly | Cmd::ReadWrite => out.ok(),
        Cmd::Unknown => return Err(unknown(args)),
    }
    Ok(())
}

/// Redis's error for a name it does not know, with the first arguments.
fn unknown(args: &[&[u8]]) -> (ErrorKind, String) {
    let mut message = format!(
        "ERR unknown command '{}', with args beginning with:",
        String::from_utf8_lossy(args[0])
    );
    for a in args[1..].iter().take(8) {
        message.push_str(&format!(" '{}'", String::from_utf8_lossy(a)));
    }
    usage(message)
}

#[cfg(test)]
mod tests {
    use super::request::{int, tag};

    #[test]
    fn integers_and_tags_are_checked() {
        assert_eq!(int(b"-5").unwrap(), -5);
        for bad in [
            &b""[..],
            b"+5",
            b"1.5",
            b"99999999999999999999",
            b"0x10",
            b" 1",
        ] {
            assert!(int(bad).is_err(), "{bad:?}");
        }
        assert!(tag(b"orders:eu-1.x_y").is_ok());
        for bad in [&b""[..], b".hidden", b"a b", b"a/b", &[b'a'; 129]] {
            assert!(tag(bad).is_err(), "{bad:?}");
        }
    }
}
