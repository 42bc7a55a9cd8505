//! Redis Cluster's view of the group: one shard holding all 16384 slots, owned by the leader.
//! `CLUSTER SLOTS/SHARDS/NODES/INFO/MYID/KEYSLOT` and `-MOVED` redirects let cluster-aware
//! clients (redis-cli `-c`, redis-py `RedisCluster`, ioredis `Cluster`) find the leader and
//! follow a failover.

use crate::serve::ha::Peer;
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;
use idforge_resp::Reply;

/// The number of hash slots.
pub const SLOTS: u16 = 16384;

/// CRC16/XMODEM, the checksum Redis Cluster hashes keys with.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The slot of a key, with Redis's `{hash tag}` rule.
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            let close = rest.iter().position(|&b| b == b'}')?;
            (close > 0).then(|| &rest[..close])
        })
        .unwrap_or(key);
    crc16(hashed) % SLOTS
}

/// The reply to a data command on a server that does not serve: `MOVED` to the leader it
/// knows, else `CLUSTERDOWN` (clients retry after a short wait).
pub(crate) fn redirect(shared: &Shared, key: Option<&[u8]>) -> (ErrorKind, String) {
    let slot = key.map_or(0, key_slot);
    let leadership = shared.allocator.leadership();
    match leadership.leader() {
        Some(leader) if leader.id != leadership.me().id => {
            (ErrorKind::Moved, format!("MOVED {slot} {}", leader.addr()))
        }
        _ => (
            ErrorKind::Moved,
            "CLUSTERDOWN no leader is serving right now; retry shortly".into(),
        ),
    }
}

/// `CLUSTER subcommand …`.
pub(super) fn command(
    shared: &Shared,
    args: &[&[u8]],
    out: &mut Reply,
) -> Result<(), (ErrorKind, String)> {
    let usage = |m: String| (ErrorKind::Usage, m);
    let sub = args[1].to_ascii_uppercase();
    let leadership = shared.allocator.leadership();
    let me = leadership.me();
    let leader = leadership.leader();
    // Standbys are listed as replicas: clients then know every server, and can ask any of
    // them where the leader went when it dies. They never send them writes.
    let standbys = leadership.standbys();
    match (sub.as_slice(), args.len()) {
        (b"SLOTS", 2) => match &leader {
            Some(l) => {
                out.array(1);
                out.array(3 + standbys.len());
                out.int(0);
                out.int(i64::from(SLOTS - 1));
                node(out, l);
                for p in &standbys {
                    node(out, p);
                }
            }
            None => out.array(0),
        },
        (b"SHARDS", 2) => match &leader {
            Some(l) => {
                out.array(1);
                out.map(2);
                out.bulk(b"slots");
                out.array(2);
                out.int(0);
                out.int(i64::from(SLOTS - 1));
                out.bulk(b"nodes");
                out.array(1 + standbys.len());
                shard_node(out, l, "master");
                for p in &standbys {
                    shard_node(out, p, "replica");
                }
            }
            None => out.array(0),
        },
        (b"NODES", 2) => {
            let mut text = String::new();
            let myself = |p: &Peer| if p.id == me.id { "myself," } else { "" };
            if let Some(l) = &leader {
                text.push_str(&format!(
                    "{} {}@0 {}master - 0 0 1 connected 0-{}\n",
                    l.id,
                    l.addr(),
                    myself(l),
                    SLOTS - 1
                ));
            }
            let leader_id = leader.as_ref().map_or("-", |l| l.id.as_str());
            for p in &standbys {
                text.push_str(&format!(
                    "{} {}@0 {}slave {leader_id} 0 0 1 connected\n",
                    p.id,
                    p.addr(),
                    myself(p),
                ));
            }
            out.bulk(text.as_bytes());
        }
        (b"INFO", 2) => {
            let ok = leader.is_some();
            let text = format!(
                "cluster_enabled:1\r\ncluster_state:{}\r\ncluster_slots_assigned:{}\r\n\
                 cluster_slots_ok:{}\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\n\
                 cluster_known_nodes:{}\r\ncluster_size:{}\r\ncluster_current_epoch:1\r\n\
                 cluster_my_epoch:1\r\n",
                if ok { "ok" } else { "fail" },
                if ok { SLOTS } else { 0 },
                if ok { SLOTS } else { 0 },
                usize::from(leader.is_some()) + standbys.len(),
                u8::from(ok),
            );
            out.bulk(text.as_bytes());
        }
        (b"MYID", 2) => out.bulk(me.id.as_bytes()),
        (b"KEYSLOT", 3) => out.int(i64::from(key_slot(args[2]))),
        _ => {
            return Err(usage(format!(
                "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
                String::from_utf8_lossy(args[1])
            )));
        }
    }
    Ok(())
}

/// A node as `CLUSTER SHARDS` lists it.
fn shard_node(out: &mut Reply, p: &Peer, role: &str) {
    out.map(7);
    for (k, v) in [
        ("id", p.id.as_str()),
        ("ip", p.host.as_str()),
        ("endpoint", p.host.as_str()),
    ] {
        out.bulk(k.as_bytes());
        out.bulk(v.as_bytes());
    }
    out.bulk(b"port");
    out.int(i64::from(p.port));
    out.bulk(b"role");
    out.bulk(role.as_bytes());
    out.bulk(b"replication-offset");
    out.int(0);
    out.bulk(b"health");
    out.bulk(b"online");
}

/// `[host, port, id]` as `CLUSTER SLOTS` lists a node.
fn node(out: &mut Reply, p: &Peer) {
    out.array(3);
    out.bulk(p.host.as_bytes());
    out.int(i64::from(p.port));
    out.bulk(p.id.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis_cluster() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        // An empty tag hashes the whole key.
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % SLOTS);
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert!(key_slot(b"") < SLOTS);
    }
}
