//! The connection commands with more to them than a line: `AUTH`, `HELLO`, `CLIENT`.

use super::arity;
use super::request::{Outcome, Session, int, text, usage};
use super::spec::Cmd;
use crate::serve::auth::{Checked, DEFAULT_USER};
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;
use idforge_resp::Reply;

/// `AUTH [user] password`.
pub(super) async fn auth(
    shared: &Shared,
    s: &mut Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Outcome {
    let (user, pass) = match args {
        [_, pass] => (DEFAULT_USER, text(pass)?),
        [_, user, pass] => (text(user)?, text(pass)?),
        _ => return Err(arity(Cmd::Auth)),
    };
    authenticate(shared, s, user, pass).await?;
    out.ok();
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

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
pub(super) async fn hello(
    shared: &Shared,
    s: &mut Session,
    args: &[&[u8]],
    out: &mut Reply,
) -> Outcome {
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
    let leadership = shared.allocator.leadership();
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

/// `CLIENT ID|GETNAME|SETNAME name|SETINFO attr value`.
pub(super) fn client(s: &mut Session, args: &[&[u8]], out: &mut Reply) -> Outcome {
    // The arity (at least 2) is checked before.
    let sub = args[1];
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
