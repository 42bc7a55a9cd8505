//! The commands: connection and server commands in Redis's shape, the id commands, and `IDF.*`.

use super::auth::{Checked, DEFAULT_USER, Right};
use super::cluster::redirect;
use super::cmd::Cmd;
use super::metrics::ErrorKind;
use super::request::{Outcome, Session, alloc_error, int, require, tag, text, usage};
use super::resp::Reply;
use super::shared::Shared;

/// Runs one command, appending its reply to `out`.
pub async fn execute(shared: &Shared, s: &mut Session, args: &[&[u8]], out: &mut Reply) {
    let cmd = Cmd::parse(args[0]);
    let metrics = shared.engine.metrics();
    metrics.request(cmd);
    if let Err((kind, message)) = run(shared, s, cmd, args, out).await {
        metrics.error(kind);
        out.error(&message);
    }
}

fn arity(cmd: Cmd) -> (ErrorKind, String) {
    usage(format!(
        "ERR wrong number of arguments for '{}' command",
        cmd.name()
    ))
}

async fn run(
    shared: &Shared,
    s: &mut Session,
    cmd: Cmd,
    args: &[&[u8]],
    out: &mut Reply,
) -> Outcome {
    let n = args.len();
    if s.perms.is_none() && !matches!(cmd, Cmd::Auth | Cmd::Hello | Cmd::Ping | Cmd::Quit) {
        return Err((ErrorKind::Auth, "NOAUTH Authentication required.".into()));
    }
    if let Some(key) = cmd.routed(args) {
        if !shared.engine.leadership().serving() {
            return Err(redirect(shared, key.map(|i| args[i])));
        }
    }
    match cmd {
        Cmd::Incr | Cmd::IncrBy => {
            let want = if cmd == Cmd::Incr { 2 } else { 3 };
            if n != want {
                return Err(arity(cmd));
            }
            let tag = tag(args[1])?;
            let count = if cmd == Cmd::Incr { 1 } else { int(args[2])? };
            if count < 1 {
                return Err(usage("ERR the count must be a positive integer"));
            }
            require(s, Some(Right::Alloc), tag, cmd.name())?;
            // A tag created here counts towards a non-admin user's quota.
            let owner = (!s.perms.as_ref().is_some_and(|p| p.is_admin())).then_some(&*s.user);
            let first = (shared.engine.alloc_for(tag, count, owner).await)
                .map_err(|e| alloc_error(shared, args[1], e))?;
            out.int(first + (count - 1));
        }
        Cmd::Get => {
            if n != 2 {
                return Err(arity(cmd));
            }
            let tag = tag(args[1])?;
            require(s, Some(Right::Read), tag, cmd.name())?;
            match (shared.engine.last(tag).await).map_err(|e| alloc_error(shared, args[1], e))? {
                Some(last) => out.bulk(itoa::Buffer::new().format(last).as_bytes()),
                None => out.null(),
            }
        }
        Cmd::Ping => match n {
            1 => out.simple("PONG"),
            2 => out.bulk(args[1]),
            _ => return Err(arity(cmd)),
        },
        Cmd::Echo => {
            if n != 2 {
                return Err(arity(cmd));
            }
            out.bulk(args[1]);
        }
        Cmd::Quit => {
            s.quit = true;
            out.ok();
        }
        Cmd::Select => {
            if n != 2 {
                return Err(arity(cmd));
            }
            if int(args[1])? != 0 {
                return Err(usage("ERR DB index is out of range"));
            }
            out.ok();
        }
        Cmd::Auth => {
            let (user, pass) = match n {
                2 => (DEFAULT_USER, text(args[1])?),
                3 => (text(args[1])?, text(args[2])?),
                _ => return Err(arity(cmd)),
            };
            authenticate(shared, s, user, pass).await?;
            out.ok();
        }
        Cmd::Hello => hello(shared, s, args, out).await?,
        Cmd::Client => client(s, args, out)?,
        Cmd::Command => command(args, out),
        Cmd::Info => out.bulk(super::info::text(shared, args.get(1).copied()).as_bytes()),
        Cmd::Config => {
            // Enough for tools that read settings (redis-benchmark asks for `save` and
            // `appendonly`): each asked-for name with an empty value; nothing can be set.
            if n < 3 || !args[1].eq_ignore_ascii_case(b"GET") {
                return Err(usage("ERR CONFIG supports only GET here"));
            }
            out.map(n - 2);
            for name in &args[2..] {
                out.bulk(name);
                out.bulk(b"");
            }
        }
        Cmd::IdfTag => super::idf::tag_command(shared, s, args, out).await?,
        Cmd::IdfSnowflake => super::idf::snowflake(shared, s, args, out).await?,
        Cmd::IdfDecode => super::idf::decode(shared, args, out)?,
        Cmd::IdfUser => super::idf::user(shared, s, args, out).await?,
        Cmd::IdfFailover => super::idf::failover(shared, s, args, out).await?,
        Cmd::IdfWorker => super::idf::worker(shared, s, args, out).await?,
        Cmd::Cluster => super::cluster::command(shared, args, out)?,
        // Cluster clients send these to pick replicas for reads; every read goes to the
        // leader here, so both are accepted and change nothing.
        Cmd::ReadOnly | Cmd::ReadWrite => {
            if n != 1 {
                return Err(arity(cmd));
            }
            out.ok();
        }
        Cmd::Unknown => {
            let mut message = format!(
                "ERR unknown command '{}', with args beginning with:",
                String::from_utf8_lossy(args[0])
            );
            for a in args[1..].iter().take(8) {
                message.push_str(&format!(" '{}'", String::from_utf8_lossy(a)));
            }
            return Err(usage(message));
        }
    }
    Ok(())
}

async fn authenticate(shared: &Shared, s: &mut Session, user: &str, pass: &str) -> Outcome {
    if !shared.auth.required() {
        return Err((
            ErrorKind::Auth,
            "ERR AUTH <password> called without any password configured for the default \
             user. Are you sure your configuration is correct?"
                .into(),
        ));
    }
    let failed = match shared.auth.check(s.peer, user, pass).await {
        Checked::Ok(perms) => {
            s.perms = Some(perms);
            s.user = user.to_owned();
            return Ok(());
        }
        Checked::Wrong => "WRONGPASS invalid username-password pair or user is disabled.",
        Checked::Throttled => {
            "ERR too many failed AUTH attempts from this address; try again in a few seconds"
        }
    };
    // Slows guessing on one connection to a few tries a second, for the cost of a timer.
    tokio::time::sleep(shared.limits.auth_fail_delay).await;
    Err((ErrorKind::Auth, failed.into()))
}

async fn hello(shared: &Shared, s: &mut Session, args: &[&[u8]], out: &mut Reply) -> Outcome {
    let mut resp3 = out.resp3;
    let mut i = 1;
    if let Some(v) = args.get(1) {
        resp3 = match int(v) {
            Ok(2) => false,
            Ok(3) => true,
            _ => {
                return Err(usage("NOPROTO unsupported protocol version"));
            }
        };
        i = 2;
    }
    while i < args.len() {
        let opt = args[i];
        if opt.eq_ignore_ascii_case(b"AUTH") && i + 2 < args.len() {
            let (user, pass) = (text(args[i + 1])?, text(args[i + 2])?);
            authenticate(shared, s, user, pass).await?;
            i += 3;
        } else if opt.eq_ignore_ascii_case(b"SETNAME") && i + 1 < args.len() {
            s.name = Some(args[i + 1].to_vec());
            i += 2;
        } else {
            return Err(usage(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(opt)
            )));
        }
    }
    if s.perms.is_none() {
        return Err((
            ErrorKind::Auth,
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time"
                .into(),
        ));
    }
    out.resp3 = resp3;
    out.map(7);
    out.bulk(b"server");
    out.bulk(b"idforge");
    out.bulk(b"version");
    out.bulk(env!("CARGO_PKG_VERSION").as_bytes());
    out.bulk(b"proto");
    out.int(if resp3 { 3 } else { 2 });
    out.bulk(b"id");
    out.int(s.id as i64);
    let leadership = shared.engine.leadership();
    out.bulk(b"mode");
    out.bulk(if leadership.is_elected() {
        b"cluster".as_slice()
    } else {
        b"standalone"
    });
    out.bulk(b"role");
    out.bulk(if leadership.serving() {
        b"master".as_slice()
    } else {
        b"replica"
    });
    out.bulk(b"modules");
    out.array(0);
    Ok(())
}

fn client(s: &mut Session, args: &[&[u8]], out: &mut Reply) -> Outcome {
    let Some(sub) = args.get(1) else {
        return Err(arity(Cmd::Client));
    };
    let is = |name: &str| sub.eq_ignore_ascii_case(name.as_bytes());
    match args.len() {
        2 if is("ID") => out.int(s.id as i64),
        2 if is("GETNAME") => match &s.name {
            Some(name) => out.bulk(name),
            None => out.null(),
        },
        3 if is("SETNAME") => {
            if args[2].iter().any(|b| *b <= b' ' || *b > b'~') {
                return Err(usage(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                ));
            }
            s.name = (!args[2].is_empty()).then(|| args[2].to_vec());
            out.ok();
        }
        // Client libraries announce themselves (redis-py, go-redis); accepted and ignored.
        4 if is("SETINFO") => out.ok(),
        _ => {
            return Err(usage(format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
                String::from_utf8_lossy(sub)
            )));
        }
    }
    Ok(())
}

/// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO name…`, `COMMAND DOCS` (empty: no docs to give).
fn command(args: &[&[u8]], out: &mut Reply) {
    let known = &Cmd::ALL[..Cmd::COUNT - 1];
    let sub = args.get(1).map(|a| a.to_ascii_uppercase());
    match sub.as_deref() {
        None => {
            out.array(known.len());
            for c in known {
                command_info(*c, out);
            }
        }
        Some(b"COUNT") => out.int(known.len() as i64),
        Some(b"INFO") => {
            out.array(args.len() - 2);
            for name in &args[2..] {
                match Cmd::parse(name) {
                    Cmd::Unknown => out.null(),
                    c => command_info(c, out),
                }
            }
        }
        _ => out.map(0),
    }
}

fn command_info(c: Cmd, out: &mut Reply) {
    let (arity, first, last) = c.shape();
    out.array(6);
    out.bulk(c.name().as_bytes());
    out.int(arity);
    out.array(1);
    out.simple(
        if matches!(c, Cmd::Incr | Cmd::IncrBy | Cmd::IdfSnowflake) {
            "write"
        } else {
            "readonly"
        },
    );
    out.int(first);
    out.int(last);
    out.int(i64::from(first != 0));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names_round_trip() {
        for c in &Cmd::ALL[..Cmd::COUNT - 1] {
            assert_eq!(Cmd::parse(c.name().to_uppercase().as_bytes()), *c);
        }
        assert_eq!(Cmd::parse(b"DECR"), Cmd::Unknown);
        assert_eq!(Cmd::ALL.len(), Cmd::COUNT);
    }

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
