//! The command names: dispatch and per-command metrics share this one list.

/// The most ids one `IDF.SNOWFLAKE … COUNT n` returns: about 210 KB of reply, so a connection's
/// pending replies stay within `reply-buffer-bytes` plus one such reply.
pub const MAX_SNOWFLAKE_COUNT: i64 = 10_000;

/// The commands, for dispatch and per-command metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Cmd {
    Ping,
    Echo,
    Hello,
    Auth,
    Quit,
    Select,
    Client,
    Command,
    Info,
    Config,
    Incr,
    IncrBy,
    Get,
    IdfTag,
    IdfSnowflake,
    IdfDecode,
    IdfUser,
    IdfFailover,
    IdfWorker,
    Cluster,
    ReadOnly,
    ReadWrite,
    Unknown,
}

impl Cmd {
    /// How many there are.
    pub const COUNT: usize = 23;
    /// All of them, in order.
    pub const ALL: [Cmd; Cmd::COUNT] = [
        Cmd::Ping,
        Cmd::Echo,
        Cmd::Hello,
        Cmd::Auth,
        Cmd::Quit,
        Cmd::Select,
        Cmd::Client,
        Cmd::Command,
        Cmd::Info,
        Cmd::Config,
        Cmd::Incr,
        Cmd::IncrBy,
        Cmd::Get,
        Cmd::IdfTag,
        Cmd::IdfSnowflake,
        Cmd::IdfDecode,
        Cmd::IdfUser,
        Cmd::IdfFailover,
        Cmd::IdfWorker,
        Cmd::Cluster,
        Cmd::ReadOnly,
        Cmd::ReadWrite,
        Cmd::Unknown,
    ];

    /// The command's name, lower case (as Redis prints it in errors).
    pub fn name(self) -> &'static str {
        match self {
            Cmd::Ping => "ping",
            Cmd::Echo => "echo",
            Cmd::Hello => "hello",
            Cmd::Auth => "auth",
            Cmd::Quit => "quit",
            Cmd::Select => "select",
            Cmd::Client => "client",
            Cmd::Command => "command",
            Cmd::Info => "info",
            Cmd::Config => "config",
            Cmd::Incr => "incr",
            Cmd::IncrBy => "incrby",
            Cmd::Get => "get",
            Cmd::IdfTag => "idf.tag",
            Cmd::IdfSnowflake => "idf.snowflake",
            Cmd::IdfDecode => "idf.decode",
            Cmd::IdfUser => "idf.user",
            Cmd::IdfFailover => "idf.failover",
            Cmd::IdfWorker => "idf.worker",
            Cmd::Cluster => "cluster",
            Cmd::ReadOnly => "readonly",
            Cmd::ReadWrite => "readwrite",
            Cmd::Unknown => "unknown",
        }
    }

    /// `(arity, first key, last key)` as `COMMAND` reports them (negative arity: at least).
    pub(super) fn shape(self) -> (i64, i64, i64) {
        match self {
            Cmd::Incr | Cmd::Get => (2, 1, 1),
            Cmd::IncrBy => (3, 1, 1),
            Cmd::Ping | Cmd::Hello | Cmd::Auth | Cmd::Info | Cmd::Command => (-1, 0, 0),
            Cmd::Quit | Cmd::IdfFailover | Cmd::ReadOnly | Cmd::ReadWrite => (-1, 0, 0),
            Cmd::Echo | Cmd::Select => (2, 0, 0),
            Cmd::IdfSnowflake => (-2, 1, 1),
            _ => (-2, 0, 0),
        }
    }

    /// The key that places a data command in a hash slot (`None`: no key, slot 0), or `None`
    /// for the commands every server answers itself.
    pub(super) fn routed(self, args: &[&[u8]]) -> Option<Option<usize>> {
        match self {
            Cmd::Incr | Cmd::IncrBy | Cmd::Get | Cmd::IdfSnowflake => Some(Some(1)),
            Cmd::IdfTag | Cmd::IdfWorker => Some(Some(2)),
            Cmd::IdfUser | Cmd::IdfFailover => Some(None),
            _ => None,
        }
        .map(|key| key.filter(|&i| i < args.len()))
    }

    /// The command `name` names (any case).
    pub fn parse(name: &[u8]) -> Cmd {
        Cmd::ALL[..Cmd::COUNT - 1]
            .iter()
            .copied()
            .find(|c| name.eq_ignore_ascii_case(c.name().as_bytes()))
            .unwrap_or(Cmd::Unknown)
    }
}
