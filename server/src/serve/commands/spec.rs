//! The command table: one row per command says everything the server knows about it apart from
//! what it does. Dispatch (arity, routing, `NOAUTH`), `COMMAND`, `COMMAND DOCS`, per-command
//! metrics and README.md's command table all read it.

/// The most ids one `IDF.SNOWFLAKE … COUNT n` returns: about 210 KB of reply, so a connection's
/// pending replies stay within `reply-buffer-bytes` plus one such reply.
pub(crate) const MAX_SNOWFLAKE_COUNT: i64 = 10_000;

/// What a command can be run before authentication, and what `COMMAND` says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    /// Hands out ids (`COMMAND` says `write`; every other command is `readonly`).
    Write,
    /// Runs before the client authenticates.
    NoAuth,
}

/// Which server answers a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Every server answers it itself.
    Local,
    /// Only the leader, with no key (a redirect names slot 0).
    Leader,
    /// Only the leader; the argument at this position places it in a hash slot.
    Key(usize),
}

/// How a command answers a wrong number of words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrongArgs {
    /// Redis's: `ERR wrong number of arguments for 'NAME' command`.
    Redis,
    /// Redis's, then ` (SYNOPSIS)`.
    WithSynopsis,
    /// The command's own text, also sent for an unknown subcommand.
    Own(&'static str),
}

/// One command.
#[derive(Debug)]
pub(crate) struct Spec {
    /// Lower case, as Redis prints names in errors and `COMMAND`.
    pub name: &'static str,
    /// Words including the name: `n > 0` exactly n, `n < 0` at least -n (Redis's rule).
    pub arity: i64,
    /// The first and last key's positions as `COMMAND` reports them (0: no key).
    pub keys: (i64, i64),
    /// Which server answers it.
    pub route: Route,
    /// Write, before-auth.
    pub flags: &'static [Flag],
    /// Redis ACL categories (`COMMAND`'s seventh field).
    pub acl: &'static [&'static str],
    /// The `COMMAND DOCS` group.
    pub group: &'static str,
    /// The version that has it (Redis's for Redis commands, idforge's for `IDF.*`).
    pub since: &'static str,
    /// One line for `COMMAND DOCS` (redis-cli's `help`).
    pub summary: &'static str,
    /// The arguments after the name: `UPPER` tokens, `a|b` choices, `[optional]`, `x …`.
    pub synopsis: &'static str,
    /// The arity error.
    pub wrong_args: WrongArgs,
    /// README.md's rows: (command, reply) in Markdown (read by its test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static [(&'static str, &'static str)],
}

/// The defaults rows leave out: no key, answered locally, read-only, Redis's arity error.
const BASE: Spec = Spec {
    name: "",
    arity: -1,
    keys: (0, 0),
    route: Route::Local,
    flags: &[],
    acl: &[],
    group: "",
    since: "",
    summary: "",
    synopsis: "",
    wrong_args: WrongArgs::Redis,
    doc: &[],
};

/// A row of the connection commands.
const CONNECTION: Spec = Spec {
    group: "connection",
    since: "1.0.0",
    ..BASE
};

/// A row of the `IDF.*` commands.
const IDF: Spec = Spec {
    group: "module",
    since: "0.1.0",
    ..BASE
};

/// Any other name: not in [`SPECS`], counted under this name.
const UNKNOWN: Spec = Spec {
    name: "unknown",
    ..BASE
};

/// README's reply for the Redis commands (merged into one row).
const AS_IN_REDIS: &str = "as in Redis";

/// README's reply for the cluster commands (merged into one row).
const CLUSTER_VIEW: &str = "Redis Cluster's view: one shard owning all slots, the leader as its \
                            master, standbys as replicas";

/// Declares the commands: the enum [`Cmd`] (plus `Unknown`) and [`SPECS`], row i for variant i.
macro_rules! commands {
    ($($variant:ident => $spec:expr,)*) => {
        /// The commands, for dispatch and per-command metrics; `Unknown` is any other name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[allow(missing_docs)]
        pub(crate) enum Cmd {
            $($variant,)*
            Unknown,
        }

        /// The table, in [`Cmd`]'s order (which is README.md's).
        pub(crate) const SPECS: &[Spec] = &[$($spec,)*];

        impl Cmd {
            /// How many there are, `Unknown` included.
            pub(crate) const COUNT: usize = SPECS.len() + 1;
            /// All of them, in order.
            pub(crate) const ALL: [Cmd; Cmd::COUNT] = [$(Cmd::$variant,)* Cmd::Unknown];
        }
    };
}

commands! {
    Incr => Spec {
        name: "incr",
        arity: 2,
        keys: (1, 1),
        route: Route::Key(1),
        flags: &[Flag::Write],
        acl: &["@write", "@string", "@fast"],
        group: "string",
        summary: "Takes the tag's next id.",
        synopsis: "tag",
        doc: &[("`INCR tag`", "the tag's next id")],
        ..CONNECTION
    },
    IncrBy => Spec {
        name: "incrby",
        arity: 3,
        keys: (1, 1),
        route: Route::Key(1),
        flags: &[Flag::Write],
        acl: &["@write", "@string", "@fast"],
        group: "string",
        summary: "Takes n fresh ids of the tag; replies with the last.",
        synopsis: "tag n",
        doc: &[(
            "`INCRBY tag n`",
            "a range of `n` fresh ids; the reply is its last (`n` ≥ 1)",
        )],
        ..CONNECTION
    },
    Get => Spec {
        name: "get",
        arity: 2,
        keys: (1, 1),
        route: Route::Key(1),
        acl: &["@read", "@string", "@fast"],
        group: "string",
        summary: "The last id handed out of the tag.",
        synopsis: "tag",
        doc: &[(
            "`GET tag`",
            "the last id handed out (every later one is larger), or nil",
        )],
        ..CONNECTION
    },
    IdfTag => Spec {
        name: "idf.tag",
        arity: -2,
        route: Route::Key(2),
        acl: &["@idforge"],
        summary: "Creates, describes, lists, scans and drops tags.",
        synopsis: "CREATE|INFO|LIST|SCAN|DROP [arg …]",
        doc: &[
            (
                "`IDF.TAG CREATE tag [STEP n] [START n] [DESC text]`, `INFO tag`, \
                 `LIST [pattern]`, `DROP tag`",
                "manage tags (unknown tags are created on first use unless \
                 `--auto-create=false`); `LIST` reads only the first 1,000 tags by name",
            ),
            (
                "`IDF.TAG SCAN cursor [MATCH pattern] [COUNT n]`",
                "`[next-cursor, [names…]]` as Redis's `SCAN`: start at `0`, stop when it returns \
                 `0`; each call reads one page of `n` tags (100, at most 1,000) from the store \
                 and keeps those matching the glob and readable by the user (a page may hold \
                 fewer, even none). The cursor is opaque: the page's last name sealed with a key \
                 of the server process (ChaCha20-Poly1305, padded to the longest name), so it \
                 shows no tag name, not even of tags the user may not read; an altered cursor, \
                 or one from before a restart or a failover, gets `-ERR invalid cursor…`: start \
                 again from `0`",
            ),
        ],
        ..IDF
    },
    IdfSnowflake => Spec {
        name: "idf.snowflake",
        arity: -2,
        keys: (1, 1),
        route: Route::Key(1),
        flags: &[Flag::Write],
        acl: &["@write", "@idforge"],
        summary: "Makes one snowflake id, or n.",
        synopsis: "name [COUNT n]",
        wrong_args: WrongArgs::WithSynopsis,
        doc: &[(
            "`IDF.SNOWFLAKE name [COUNT n]`",
            "server-made snowflake ids (`--snowflake-layout`, `--node-id`)",
        )],
        ..IDF
    },
    IdfDecode => Spec {
        name: "idf.decode",
        arity: -2,
        acl: &["@idforge"],
        summary: "An id's fields.",
        synopsis: "id [LAYOUT spec]",
        wrong_args: WrongArgs::WithSynopsis,
        doc: &[("`IDF.DECODE id [LAYOUT spec]`", "an id's fields")],
        ..IDF
    },
    IdfUser => Spec {
        name: "idf.user",
        arity: -2,
        route: Route::Leader,
        acl: &["@admin", "@idforge"],
        summary: "Sets, deletes and lists users.",
        synopsis: "SET|DEL|LIST [arg …]",
        wrong_args: WrongArgs::Own(
            "ERR unknown subcommand or wrong number of arguments for 'idf.user' \
             (SET name password [admin|alloc:PATTERN|read:PATTERN …] | DEL name | LIST)",
        ),
        doc: &[(
            "`IDF.USER SET name password [admin\\|alloc:PATTERN\\|read:PATTERN …]`, `DEL name`, \
             `LIST`",
            "users (argon2 hashes, in the store)",
        )],
        ..IDF
    },
    IdfWorker => Spec {
        name: "idf.worker",
        arity: -2,
        route: Route::Key(2),
        acl: &["@idforge"],
        summary: "Leases worker ids: acquire, renew, release, list.",
        synopsis: "ACQUIRE|RENEW|RELEASE|LIST service [arg …]",
        wrong_args: WrongArgs::Own(
            "ERR wrong arguments for 'idf.worker' (ACQUIRE service ttl-ms [MAX n] [CLOCK] | \
             RENEW service id token [TIME ms] [CLOCK] [RESUME] | RELEASE service id token \
             [TIME ms] [KEEP] | \
             LIST service [CURSOR c] [COUNT n])",
        ),
        doc: &[
            (
                "`IDF.WORKER ACQUIRE service ttl-ms [MAX n] [CLOCK] [HOLDER name [FILE]]`",
                "a worker-id lease: `[id, token, ttl-ms]`, the lowest id below `n` (1024) that \
                 no live holder has nor is reserved for another; with `HOLDER`, the id that \
                 holder took last when it is free for it (sticky ids: an ended lease's id stays \
                 reserved for its named holder for `--worker-reserve-ms`); with `CLOCK`, \
                 `[id, token, ttl-ms, floor-ms, server-ms]`: `floor-ms` is the id's time floor \
                 (the latest time an earlier holder could have put in an id, 0 if none), \
                 `server-ms` the server's clock (Unix ms; the lease ends `ttl-ms` after it), \
                 and with `HOLDER` too, the reservation's end (`reserved-ms`) after them; \
                 `FILE`: the holder keeps the lease in a file and may use the id past the \
                 lease's end, up to the reservation's, while cut off: that lease goes to no one \
                 until given back or renewed with its token, even after it ended; \
                 servers before floors refuse `CLOCK`, before holders `HOLDER`",
            ),
            (
                "`IDF.WORKER RENEW service id token [TIME ms] [CLOCK] [RESUME]`, \
                 `RELEASE service id token [TIME ms] [KEEP]`",
                "renew (reply: the lease's end, Unix ms; with `CLOCK`, `[end-ms, floor-ms, \
                 server-ms]`, and `reserved-ms` after them for a named holder; `-LEASELOST` \
                 once it ended) or give back a lease (`+OK`), \
                 reporting the latest time put in an id (at most the TTL, and at least 60 s, \
                 past the lease's end: `-ERR TIME … past the lease's end` beyond); \
                 `RESUME` (with `CLOCK`): a process starting from its lease file takes the \
                 lease back only once it has ended (`-LEASEHELD ms …` while it is live: \
                 another process may be renewing it from a copy of the file), under a new \
                 token told last, `[end-ms, floor-ms, server-ms, reserved-ms, token]`, the \
                 floor covering every time the lease's earlier processes reported; `KEEP` on \
                 a lease kept in a file ends it now but leaves it to its token, so the \
                 holder's next start resumes it at once",
            ),
            (
                "`IDF.WORKER LIST service [CURSOR c] [COUNT n]`",
                "the service's leases, `[id, held, end-ms, last-time-ms, holder, reserved-ms]` \
                 each (`holder` empty, `reserved-ms` 0 when none was named), in id order: \
                 with `CURSOR`/`COUNT`, one page `[next-cursor, rows]` (`COUNT` 100 by default, \
                 at most 1000; the next cursor is 0 after the last page); without, all rows as \
                 before, refused (`-ERR more than 1000 leases`) when they do not fit one page",
            ),
        ],
        ..IDF
    },
    IdfFailover => Spec {
        name: "idf.failover",
        arity: 1,
        route: Route::Leader,
        acl: &["@admin", "@idforge"],
        summary: "The leader hands over to a standby.",
        doc: &[(
            "`IDF.FAILOVER`",
            "(etcd) the leader gives back its cache and hands over to a standby",
        )],
        ..IDF
    },
    Cluster => Spec {
        name: "cluster",
        arity: -2,
        acl: &["@slow"],
        group: "cluster",
        since: "3.0.0",
        summary: "Redis Cluster's view of the group.",
        synopsis: "SLOTS|SHARDS|NODES|INFO|MYID|KEYSLOT [key]",
        doc: &[(
            "`CLUSTER SLOTS\\|SHARDS\\|NODES\\|INFO\\|MYID\\|KEYSLOT`",
            CLUSTER_VIEW,
        )],
        ..BASE
    },
    // Cluster clients send these to pick replicas for reads; every read goes to the leader
    // here, so both are accepted and change nothing.
    ReadOnly => Spec {
        name: "readonly",
        arity: 1,
        acl: &["@fast", "@connection"],
        group: "cluster",
        since: "3.0.0",
        summary: "Accepted; reads go to the leader.",
        doc: &[("`READONLY`", CLUSTER_VIEW)],
        ..BASE
    },
    ReadWrite => Spec {
        name: "readwrite",
        arity: 1,
        acl: &["@fast", "@connection"],
        group: "cluster",
        since: "3.0.0",
        summary: "Accepted; reads go to the leader.",
        doc: &[("`READWRITE`", CLUSTER_VIEW)],
        ..BASE
    },
    Ping => Spec {
        name: "ping",
        flags: &[Flag::NoAuth],
        acl: &["@fast", "@connection"],
        summary: "Replies PONG, or the message.",
        synopsis: "[message]",
        doc: &[("`PING`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Echo => Spec {
        name: "echo",
        arity: 2,
        acl: &["@fast", "@connection"],
        summary: "Replies with the message.",
        synopsis: "message",
        doc: &[("`ECHO`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Hello => Spec {
        name: "hello",
        flags: &[Flag::NoAuth],
        acl: &["@fast", "@connection"],
        since: "6.0.0",
        summary: "Picks the protocol, authenticates, names the connection.",
        synopsis: "[protover [AUTH username password] [SETNAME clientname]]",
        doc: &[("`HELLO`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Auth => Spec {
        name: "auth",
        flags: &[Flag::NoAuth],
        acl: &["@fast", "@connection"],
        summary: "Authenticates the connection.",
        synopsis: "[username] password",
        doc: &[("`AUTH`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Quit => Spec {
        name: "quit",
        flags: &[Flag::NoAuth],
        acl: &["@fast", "@connection"],
        summary: "Closes the connection.",
        doc: &[("`QUIT`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Select => Spec {
        name: "select",
        arity: 2,
        acl: &["@fast", "@connection"],
        summary: "Accepts database 0, the only one.",
        synopsis: "index",
        doc: &[("`SELECT 0`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Client => Spec {
        name: "client",
        arity: -2,
        acl: &["@slow", "@connection"],
        since: "2.4.0",
        summary: "The connection's id and name.",
        synopsis: "ID|GETNAME|SETNAME|SETINFO [arg …]",
        doc: &[("`CLIENT ID/SETNAME/GETNAME`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Command => Spec {
        name: "command",
        acl: &["@slow", "@connection"],
        group: "server",
        since: "2.8.13",
        summary: "The commands: all, their count, their details or their docs.",
        synopsis: "[COUNT|INFO|DOCS [name …]]",
        doc: &[("`COMMAND`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Info => Spec {
        name: "info",
        acl: &["@slow", "@dangerous"],
        group: "server",
        summary: "The server's state, by section.",
        synopsis: "[section]",
        doc: &[("`INFO`", AS_IN_REDIS)],
        ..CONNECTION
    },
    Config => Spec {
        name: "config",
        arity: -2,
        acl: &["@slow"],
        group: "server",
        since: "2.0.0",
        summary: "Answers GET with empty values; nothing can be set.",
        synopsis: "GET parameter …",
        wrong_args: WrongArgs::Own("ERR CONFIG supports only GET here"),
        doc: &[("`CONFIG GET`", AS_IN_REDIS)],
        ..CONNECTION
    },
}

impl Cmd {
    /// The command `name` names (any case).
    pub(crate) fn parse(name: &[u8]) -> Cmd {
        (SPECS
            .iter()
            .position(|s| name.eq_ignore_ascii_case(s.name.as_bytes())))
        .map_or(Cmd::Unknown, |i| Cmd::ALL[i])
    }

    /// Its row (`Unknown`'s only has a name, for metrics).
    pub(crate) fn spec(self) -> &'static Spec {
        SPECS.get(self as usize).unwrap_or(&UNKNOWN)
    }

    /// The command's name, lower case (as Redis prints it in errors).
    pub(crate) fn name(self) -> &'static str {
        self.spec().name
    }

    /// The arity error.
    pub(crate) fn wrong_args(self) -> String {
        self.spec().wrong_args()
    }
}

impl Spec {
    /// Whether `n` words (the name included) fit the arity.
    pub(crate) fn arity_fits(&self, n: usize) -> bool {
        let n = n as i64;
        if self.arity >= 0 {
            n == self.arity
        } else {
            n >= -self.arity
        }
    }

    /// The arity error.
    pub(crate) fn wrong_args(&self) -> String {
        let redis = format!("ERR wrong number of arguments for '{}' command", self.name);
        match self.wrong_args {
            WrongArgs::Redis => redis,
            WrongArgs::WithSynopsis => format!("{redis} ({})", self.synopsis),
            WrongArgs::Own(text) => text.to_owned(),
        }
    }

    /// Whether it has `flag`.
    pub(crate) fn has(&self, flag: Flag) -> bool {
        self.flags.contains(&flag)
    }

    /// The key that places it in a hash slot (`None`: no key, slot 0), or `None` when every
    /// server answers it itself.
    pub(crate) fn routed(&self, args: &[&[u8]]) -> Option<Option<usize>> {
        match self.route {
            Route::Local => None,
            Route::Leader => Some(None),
            Route::Key(i) => Some((i < args.len()).then_some(i)),
        }
    }
}

/// README.md's command table: each row's `doc` lines, with consecutive single-line rows that
/// share a reply joined into one line.
#[cfg(test)]
pub(crate) fn markdown_table() -> String {
    let mut lines: Vec<(String, &str)> = Vec::new();
    for spec in SPECS {
        for &(command, reply) in spec.doc {
            match lines.last_mut() {
                Some((commands, last)) if *last == reply && spec.doc.len() == 1 => {
                    commands.push_str(", ");
                    commands.push_str(command);
                }
                _ => lines.push((command.to_owned(), reply)),
            }
        }
    }
    let mut out = String::from("| command | reply |\n| --- | --- |\n");
    for (command, reply) in lines {
        out.push_str(&format!("| {command} | {reply} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_names_round_trip() {
        for (i, c) in Cmd::ALL[..Cmd::COUNT - 1].iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert_eq!(Cmd::parse(c.name().to_uppercase().as_bytes()), *c);
        }
        assert_eq!(Cmd::parse(b"DECR"), Cmd::Unknown);
        assert_eq!(Cmd::Unknown.name(), "unknown");
    }

    #[test]
    fn rows_are_complete() {
        for s in SPECS {
            assert!(s.arity != 0 && !s.doc.is_empty(), "{}", s.name);
            assert!(!s.group.is_empty() && !s.since.is_empty(), "{}", s.name);
            assert!(!s.summary.is_empty() && !s.acl.is_empty(), "{}", s.name);
            // A fixed arity leaves nothing optional.
            assert!(s.arity < 0 || !s.synopsis.contains('['), "{}", s.name);
        }
    }

    #[test]
    fn arity_follows_redis_rule() {
        let incr = Cmd::Incr.spec();
        assert!(incr.arity_fits(2) && !incr.arity_fits(1) && !incr.arity_fits(3));
        let tag = Cmd::IdfTag.spec();
        assert!(!tag.arity_fits(1) && tag.arity_fits(2) && tag.arity_fits(9));
        assert_eq!(
            Cmd::IdfDecode.wrong_args(),
            "ERR wrong number of arguments for 'idf.decode' command (id [LAYOUT spec])"
        );
    }

    #[test]
    fn readme_lists_the_commands() {
        crate::reference::check_section("README.md", "commands", &markdown_table()).unwrap();
    }
}
