//! `COMMAND`: the table ([`super::spec`]) as Redis clients read it. `COMMAND` and `COMMAND INFO`
//! give each command's arity, flags, keys and ACL categories (cluster clients find keys with
//! them); `COMMAND DOCS` gives summaries and arguments (redis-cli's hints and `help`).

use super::spec::{Cmd, Flag, SPECS, Spec};
use idforge_resp::Reply;

/// `COMMAND`, `COMMAND COUNT`, `COMMAND INFO name…`, `COMMAND DOCS [name…]`.
pub(super) fn command(args: &[&[u8]], out: &mut Reply) {
    let sub = args.get(1).map(|a| a.to_ascii_uppercase());
    // The rows `COMMAND INFO` and `DOCS` ask for (`None`: an unknown name).
    let named = || {
        args[2..].iter().map(|name| match Cmd::parse(name) {
            Cmd::Unknown => None,
            c => Some(c.spec()),
        })
    };
    match sub.as_deref() {
        None => {
            out.array(SPECS.len());
            SPECS.iter().for_each(|spec| info(spec, out));
        }
        Some(b"COUNT") => out.int(SPECS.len() as i64),
        Some(b"INFO") => {
            out.array(args.len() - 2);
            for spec in named() {
                match spec {
                    Some(spec) => info(spec, out),
                    None => out.null(),
                }
            }
        }
        Some(b"DOCS") => {
            // Redis leaves unknown names out.
            let specs: Vec<&Spec> = if args.len() == 2 {
                SPECS.iter().collect()
            } else {
                named().flatten().collect()
            };
            out.map(specs.len());
            for spec in specs {
                out.bulk(spec.name.as_bytes());
                docs(spec, out);
            }
        }
        _ => out.map(0),
    }
}

/// `[name, arity, [flags], first key, last key, step, [ACL categories]]`.
fn info(spec: &Spec, out: &mut Reply) {
    let (first, last) = spec.keys;
    out.array(7);
    out.bulk(spec.name.as_bytes());
    out.int(spec.arity);
    out.array(1);
    out.simple(if spec.has(Flag::Write) {
        "write"
    } else {
        "readonly"
    });
    out.int(first);
    out.int(last);
    out.int(i64::from(first != 0));
    out.array(spec.acl.len());
    for category in spec.acl {
        out.simple(category);
    }
}

/// `{summary, since, group[, arguments]}`.
fn docs(spec: &Spec, out: &mut Reply) {
    let arguments = parse(&mut words(spec.synopsis), spec.keys.0);
    out.map(if arguments.is_empty() { 3 } else { 4 });
    for (key, value) in [
        ("summary", spec.summary),
        ("since", spec.since),
        ("group", spec.group),
    ] {
        out.bulk(key.as_bytes());
        out.bulk(value.as_bytes());
    }
    if !arguments.is_empty() {
        out.bulk(b"arguments");
        put_args(&arguments, out);
    }
}

/// One argument of a synopsis, as `COMMAND DOCS` describes it.
#[derive(Debug, PartialEq)]
struct Arg {
    name: String,
    /// `key`, `string`, `pure-token`, `oneof` or `block`.
    kind: &'static str,
    token: Option<String>,
    optional: bool,
    multiple: bool,
    /// A `oneof`'s or `block`'s parts.
    parts: Vec<Arg>,
}

impl Arg {
    fn new(name: &str, kind: &'static str) -> Arg {
        Arg {
            name: name.to_ascii_lowercase(),
            kind,
            token: None,
            optional: false,
            multiple: false,
            parts: Vec::new(),
        }
    }
}

/// A synopsis's words, with `[` and `]` apart.
type Words<'a> = std::vec::IntoIter<&'a str>;

/// Splits a synopsis into words.
fn words(synopsis: &str) -> Words<'_> {
    let mut words = Vec::new();
    for word in synopsis.split_whitespace() {
        let open = word.len() - word.trim_start_matches('[').len();
        let close = word.len() - word.trim_end_matches(']').len();
        words.extend(std::iter::repeat_n("[", open));
        words.push(word.trim_matches(|c| c == '[' || c == ']'));
        words.extend(std::iter::repeat_n("]", close));
    }
    words.into_iter()
}

/// The arguments up to a `]` or the end; the `key`th (from 1) is the key, if not 0.
fn parse(words: &mut Words, key: i64) -> Vec<Arg> {
    let mut args: Vec<Arg> = Vec::new();
    while let Some(word) = words.next() {
        let arg = match word {
            "]" => break,
            "…" => {
                if let Some(last) = args.last_mut() {
                    last.multiple = true;
                }
                continue;
            }
            "[" => {
                let mut parts = parse(words, 0);
                // `[TOKEN value]`: the value, after its token.
                let tokened = matches!(parts.as_slice(),
                    [token, value] if token.kind == "pure-token" && value.parts.is_empty());
                let mut arg = if parts.len() == 1 {
                    parts.remove(0)
                } else if tokened {
                    let mut value = parts.remove(1);
                    value.token = parts.remove(0).token;
                    value
                } else {
                    let mut block = Arg::new(&parts[0].name, "block");
                    block.parts = parts;
                    block
                };
                arg.optional = true;
                arg
            }
            _ if word.contains('|') => {
                let mut oneof = Arg::new(word.split('|').next().unwrap_or(word), "oneof");
                oneof.parts = word.split('|').map(token).collect();
                oneof
            }
            _ if word.bytes().any(|b| b.is_ascii_uppercase()) => token(word),
            _ if args.len() as i64 + 1 == key => Arg::new(word, "key"),
            _ => Arg::new(word, "string"),
        };
        args.push(arg);
    }
    args
}

/// A literal word.
fn token(word: &str) -> Arg {
    let mut arg = Arg::new(word, "pure-token");
    arg.token = Some(word.to_owned());
    arg
}

/// The arguments as `COMMAND DOCS` lists them: an array of maps.
fn put_args(args: &[Arg], out: &mut Reply) {
    out.array(args.len());
    for arg in args {
        let flags: Vec<&str> = [("optional", arg.optional), ("multiple", arg.multiple)]
            .into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect();
        let fields = 2
            + usize::from(arg.token.is_some())
            + usize::from(!flags.is_empty())
            + usize::from(!arg.parts.is_empty());
        out.map(fields);
        out.bulk(b"name");
        out.bulk(arg.name.as_bytes());
        out.bulk(b"type");
        out.bulk(arg.kind.as_bytes());
        if let Some(token) = &arg.token {
            out.bulk(b"token");
            out.bulk(token.as_bytes());
        }
        if !flags.is_empty() {
            out.bulk(b"flags");
            out.array(flags.len());
            flags.iter().for_each(|f| out.simple(f));
        }
        if !arg.parts.is_empty() {
            out.bulk(b"arguments");
            put_args(&arg.parts, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(synopsis: &str, key: i64) -> Vec<Arg> {
        parse(&mut words(synopsis), key)
    }

    #[test]
    fn synopses_become_arguments() {
        let a = args("name [COUNT n]", 1);
        assert_eq!((a[0].kind, a[0].optional), ("key", false));
        assert_eq!((a[1].name.as_str(), a[1].kind), ("n", "string"));
        assert_eq!(
            (a[1].token.as_deref(), a[1].optional),
            (Some("COUNT"), true)
        );
        let a = args(
            "[protover [AUTH username password] [SETNAME clientname]]",
            0,
        );
        assert_eq!((a.len(), a[0].kind, a[0].optional), (1, "block", true));
        assert_eq!(a[0].parts[1].kind, "block");
        assert_eq!(a[0].parts[2].token.as_deref(), Some("SETNAME"));
        let a = args("[COUNT|INFO|DOCS [name …]]", 0);
        assert_eq!((a[0].kind, a[0].parts[0].kind), ("block", "oneof"));
        assert!(a[0].parts[1].optional && a[0].parts[1].multiple);
        // Every row's synopsis parses, brackets balanced.
        for spec in SPECS {
            let opens = spec.synopsis.matches('[').count();
            assert_eq!(opens, spec.synopsis.matches(']').count(), "{}", spec.name);
            args(spec.synopsis, spec.keys.0);
        }
    }
}
