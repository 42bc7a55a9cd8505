//! `INFO`: the server's state as Redis-style `key:value` sections.

use std::fmt::Write;

use crate::serve::shared::Shared;

/// The `INFO` text of `section` (all sections when `None`, `all` or `everything`), as `admin`
/// (an admin, or anyone on a server without users) may see it: others see no file paths.
pub(super) fn text(shared: &Shared, section: Option<&[u8]>, admin: bool) -> String {
    let want = |name: &str| match section {
        None => true,
        Some(s) => {
            s.eq_ignore_ascii_case(name.as_bytes())
                || s.eq_ignore_ascii_case(b"all")
                || s.eq_ignore_ascii_case(b"everything")
                || s.eq_ignore_ascii_case(b"default")
        }
    };
    let engine = &shared.allocator;
    let metrics = engine.metrics();
    let mut out = String::new();
    // `# Section` headers and `key:value` lines.
    let mut line = |k: &str, v: &dyn std::fmt::Display| {
        let _ = if k.starts_with('#') {
            write!(out, "{k}\r\n")
        } else {
            write!(out, "{k}:{v}\r\n")
        };
    };
    if want("server") {
        line("# Server", &"");
        // Client libraries read these two to decide which features to use.
        line("redis_version", &"7.0.0");
        let leadership = engine.leadership();
        line(
            "redis_mode",
            &if leadership.is_elected() {
                "cluster"
            } else {
                "standalone"
            },
        );
        line("idforge_version", &env!("CARGO_PKG_VERSION"));
        line("process_id", &std::process::id());
        line("tcp_port", &shared.port);
        line("uptime_in_seconds", &engine.started().elapsed().as_secs());
        // `--stripe`: this server's K of N (0/1 when it hands out every id) and the block.
        let stripe = engine.stripe();
        line("stripe", &format_args!("{}/{}", stripe.index, stripe.count));
        line("stripe_block", &stripe.block);
    }
    if want("clients") {
        line("# Clients", &"");
        line("connected_clients", &metrics.connections());
    }
    if want("persistence") {
        line("# Persistence", &"");
        // ioredis waits for `loading:0` before it sends commands.
        line("loading", &0);
        line("store", &engine.store().kind().name());
        line("persists", &metrics.persists_total());
        line("persist_failing", &u8::from(engine.failing().is_some()));
        // Where the guard is, and whether it found the store behind (then this server never
        // leads until repaired).
        line(
            "guard",
            &match &engine.guard {
                None => "none".to_owned(),
                Some(g) if admin => g.path().display().to_string(),
                // Where the server keeps its files is the operator's, not every user's.
                Some(_) => "set".to_owned(),
            },
        );
        line("store_behind_guard", &u8::from(engine.refusing().is_some()));
    }
    if want("stats") {
        line("# Stats", &"");
        line("total_commands_processed", &shared.requests.total());
        line("ids_allocated", &metrics.ids_total());
    }
    if want("replication") {
        line("# Replication", &"");
        let leadership = engine.leadership();
        line(
            "role",
            &if leadership.serving() {
                "master"
            } else {
                "slave"
            },
        );
        if let Some(leader) = leadership.leader() {
            line("leader", &leader.addr());
        }
    }
    if want("cluster") {
        line("# Cluster", &"");
        line(
            "cluster_enabled",
            &u8::from(engine.leadership().is_elected()),
        );
    }
    if want("keyspace") {
        line("# Keyspace", &"");
        line("loaded_tags", &engine.loaded_tags());
        line("evicted_tags", &engine.evicted_tags());
        line("loaded_snowflake_names", &engine.loaded_snowflake_names());
        line("evicted_snowflake_names", &engine.evicted_snowflake_names());
    }
    out
}
