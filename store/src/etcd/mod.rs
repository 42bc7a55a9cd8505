//! The etcd store: `etcd://host:port[,host:port…][/prefix]` (prefix `idforge` by default).
//!
//! Keys under `/{prefix}/`:
//! - `max/{tag}`: the tag's `max_id`, in decimal; moved only by compare-and-swap.
//! - `tag/{tag}`: `{"step":…,"description":…}`.
//! - `clock/{name}`: a snowflake clock's persisted time, 20 zero-padded digits (so etcd's byte
//!   comparison is the numeric one and "only forward" is a compare).
//! - `user/{name}`: `{"hash":…,"perms":…}`.
//! - `leader`: the elected server (see the server's `serve::ha`), on that server's lease.
//!
//! Every [`EtcdStore::persist`] is fenced: its transaction requires the leader key to still be
//! the one this server created (same create revision), so a server that lost its lease, or a
//! paused one that resumed, cannot move a mark or a clock.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, DeleteOptions, GetOptions, Txn, TxnOp,
    TxnOpResponse,
};
use serde::{Deserialize, Serialize};

use crate::{ClockMove, Kind, StoreError, StoreResult, TagMove, TagRow, UserRow, WorkerRow};

mod integrity;
mod url;

pub use url::{EtcdTls, EtcdUrl, EtcdUser};

impl From<etcd_client::Error> for StoreError {
    fn from(e: etcd_client::Error) -> StoreError {
        StoreError(format!("etcd: {e}"))
    }
}

/// Whether `e` is an answer from an etcd member (not a timeout, a connection failure or a
/// member without a leader, which another member may well answer differently).
fn answered(e: &etcd_client::Error) -> bool {
    use tonic::Code;
    match e {
        etcd_client::Error::IoError(_) | etcd_client::Error::TransportError(_) => false,
        etcd_client::Error::GRpcStatus(status) => !matches!(
            status.code(),
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown
        ),
        _ => true,
    }
}

#[derive(Serialize, Deserialize)]
struct TagMeta {
    step: i64,
    description: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct WorkerMeta {
    token: String,
    expires_ms: i64,
    last_time_ms: i64,
    ttl_ms: i64,
    /// Absent in the rows of servers before sticky ids.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    holder: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    reserved_ms: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize)]
struct UserMeta {
    hash: String,
    perms: String,
}

/// A client of one etcd cluster, with the key prefix and the leader fence.
#[derive(Clone)]
pub struct EtcdStore {
    /// One client per member: a request that fails on one is tried on the next, and the one
    /// that answered is tried first next time (etcd-client's balanced channel would keep
    /// sending a share of the requests to a dead member).
    clients: Arc<Vec<Client>>,
    current: Arc<AtomicUsize>,
    root: String,
    /// The create revision of the leader key this server holds; 0 while it holds none.
    fence: Arc<AtomicI64>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("root", &self.root)
            .field("fence", &self.fence)
            .finish_non_exhaustive()
    }
}

fn zero_padded(ms: i64) -> String {
    format!("{:020}", ms.max(0))
}

/// The names of the moves whose compare-and-swap (one inner transaction each, in order) did not
/// hold.
fn conflicts<M>(
    moves: &[M],
    results: &[TxnOpResponse],
    name: impl Fn(&M) -> &String,
) -> Vec<String> {
    moves
        .iter()
        .zip(results)
        .filter(|(_, r)| !matches!(r, TxnOpResponse::Txn(t) if t.succeeded()))
        .map(|(m, _)| name(m).clone())
        .collect()
}

fn parse_int(key: &str, bytes: &[u8]) -> StoreResult<i64> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| StoreError(format!("etcd key {key} holds no integer")))
}

fn worker_row(id: i64, kv: &etcd_client::KeyValue) -> StoreResult<WorkerRow> {
    let meta: WorkerMeta = serde_json::from_slice(kv.value()).map_err(|e| {
        StoreError(format!(
            "etcd key {}: {e}",
            String::from_utf8_lossy(kv.key())
        ))
    })?;
    Ok(WorkerRow {
        id,
        token: meta.token,
        expires_ms: meta.expires_ms,
        last_time_ms: meta.last_time_ms,
        ttl_ms: meta.ttl_ms,
        holder: meta.holder,
        reserved_ms: meta.reserved_ms,
        version: kv.version(),
    })
}

impl EtcdStore {
    /// Connects to the cluster of `url` and checks that it answers.
    pub async fn open(url: &str) -> StoreResult<EtcdStore> {
        let parsed = EtcdUrl::parse(url)?;
        let mut options = ConnectOptions::new()
            .with_connect_timeout(Duration::from_millis(500))
            .with_timeout(Duration::from_secs(2))
            .with_keep_alive(Duration::from_secs(1), Duration::from_secs(1))
            .with_require_leader(true);
        if let Some(tls) = &parsed.tls {
            options = options.with_tls(tls.options()?);
        }
        if let Some(user) = &parsed.user {
            // etcd's authentication: a token per connection, renewed by the client.
            options = options.with_user(user.name.clone(), user.password.clone());
        }
        let mut clients = Vec::new();
        for endpoint in &parsed.endpoints {
            clients.push(Client::connect([endpoint], Some(options.clone())).await?);
        }
        let store = EtcdStore {
            clients: Arc::new(clients),
            current: Arc::new(AtomicUsize::new(0)),
            root: format!("/{}/", parsed.prefix),
            fence: Arc::new(AtomicI64::new(0)),
        };
        // A cluster that is starting (or electing its own leader) answers within seconds.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            match store.ping().await {
                Ok(()) => return Ok(store),
                Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
                Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            }
        }
    }

    /// Always [`Kind::Etcd`].
    pub fn kind(&self) -> Kind {
        Kind::Etcd
    }

    /// A client of the member that answered last (cheap to clone).
    pub fn client(&self) -> Client {
        self.clients[self.current.load(Ordering::Relaxed) % self.clients.len()].clone()
    }

    /// Runs `op` on the member that answered last, then on each other one until one answers;
    /// the last error when none does. Only for requests that are safe to repeat (a compare in
    /// a transaction makes a repeated write fail its compare, never apply twice).
    pub async fn call<T, F, Fut>(&self, op: F) -> Result<T, etcd_client::Error>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.call_bounded(None, op).await
    }

    /// As [`EtcdStore::call`], but each member gets at most `per_try`: a member cut off
    /// without a word (its packets dropped, not refused) costs `per_try`, not the 2 s request
    /// timeout, so the election's lease traffic moves to another member within the lease. The
    /// member that answers is tried first next time.
    pub async fn call_within<T, F, Fut>(
        &self,
        per_try: Duration,
        op: F,
    ) -> Result<T, etcd_client::Error>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        self.call_bounded(Some(per_try), op).await
    }

    async fn call_bounded<T, F, Fut>(
        &self,
        per_try: Option<Duration>,
        op: F,
    ) -> Result<T, etcd_client::Error>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, etcd_client::Error>>,
    {
        let n = self.clients.len();
        let start = self.current.load(Ordering::Relaxed);
        let mut last = None;
        for i in 0..n {
            let at = (start + i) % n;
            let attempt = op(self.clients[at].clone());
            let answer = match per_try {
                None => attempt.await,
                Some(limit) => tokio::time::timeout(limit, attempt)
                    .await
                    .unwrap_or_else(|_| {
                        Err(etcd_client::Error::IoError(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!("etcd member {at} did not answer within {limit:?}"),
                        )))
                    }),
            };
            match answer {
                Ok(v) => {
                    if i > 0 {
                        self.current.store(at, Ordering::Relaxed);
                    }
                    return Ok(v);
                }
                // A member that answered (an error of etcd's own, such as "lease not found")
                // says more than one that did not: its error is kept over later silences.
                Err(e) if last.as_ref().is_some_and(answered) && !answered(&e) => {}
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| etcd_client::Error::InvalidArgs("no etcd member".into())))
    }

    /// The next call starts at the member after the current one (which just failed to answer
    /// on a stream of its own, such as a lease keep-alive).
    pub fn skip_current(&self) {
        let n = self.clients.len();
        let _ = self
            .current
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| Some((c + 1) % n));
    }

    /// The full name of a key under the prefix.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.root)
    }

    /// Sets the fence: the create revision of the leader key this server holds (0: none, and
    /// every persist fails).
    pub fn set_fence(&self, revision: i64) {
        self.fence.store(revision, Ordering::SeqCst);
    }

    /// One tag.
    pub async fn tag(&self, tag: &str) -> StoreResult<Option<TagRow>> {
        let (max, meta) = (
            self.key(&format!("max/{tag}")),
            self.key(&format!("tag/{tag}")),
        );
        let txn = Txn::new().and_then([TxnOp::get(max.clone(), None), TxnOp::get(meta, None)]);
        let txn = &txn;
        let resp = self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        let mut values = resp.op_responses().into_iter().map(|r| match r {
            TxnOpResponse::Get(g) => g.kvs().first().map(|kv| kv.value().to_vec()),
            _ => None,
        });
        let (Some(Some(max_value)), meta_value) = (values.next(), values.next().flatten()) else {
            return Ok(None);
        };
        let meta = meta_value
            .and_then(|v| serde_json::from_slice::<TagMeta>(&v).ok())
            .unwrap_or(TagMeta {
                step: 1000,
                description: None,
            });
        Ok(Some(TagRow {
            tag: tag.to_owned(),
            max_id: parse_int(&max, &max_value)?,
            step: meta.step,
            description: meta.description,
        }))
    }

    /// Every tag, sorted by name.
    pub async fn tags(&self) -> StoreResult<Vec<TagRow>> {
        let (max_root, meta_root) = (self.key("max/"), self.key("tag/"));
        let prefix = Some(GetOptions::new().with_prefix());
        let txn = Txn::new().and_then([
            TxnOp::get(max_root.clone(), prefix.clone()),
            TxnOp::get(meta_root.clone(), prefix),
        ]);
        let txn = &txn;
        let resp = self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        let mut rows = Vec::new();
        let mut metas = std::collections::HashMap::new();
        for (i, r) in resp.op_responses().into_iter().enumerate() {
            let TxnOpResponse::Get(g) = r else { continue };
            for kv in g.kvs() {
                let key = String::from_utf8_lossy(kv.key()).into_owned();
                if i == 0 {
                    let tag = key[max_root.len()..].to_owned();
                    rows.push((tag, parse_int(&key, kv.value())?));
                } else if let Ok(meta) = serde_json::from_slice::<TagMeta>(kv.value()) {
                    metas.insert(key[meta_root.len()..].to_owned(), meta);
                }
            }
        }
        let mut out: Vec<TagRow> = rows
            .into_iter()
            .map(|(tag, max_id)| {
                let meta = metas.remove(&tag);
                TagRow {
                    step: meta.as_ref().map_or(1000, |m| m.step),
                    description: meta.and_then(|m| m.description),
                    tag,
                    max_id,
                }
            })
            .collect();
        out.sort_by(|a, b| a.tag.cmp(&b.tag));
        Ok(out)
    }

    /// At most `limit` tag names after `after` (from the first when empty), by key: one ranged,
    /// keys-only read.
    pub async fn tag_names(&self, after: &str, limit: usize) -> StoreResult<Vec<String>> {
        let root = self.key("max/");
        let start = format!("{root}{after}\0");
        // The end of the `max/` prefix: `max0` ('0' follows '/').
        let end = format!("{}0", &root[..root.len() - 1]);
        let options = GetOptions::new()
            .with_range(end)
            .with_limit(i64::try_from(limit).unwrap_or(i64::MAX))
            .with_keys_only();
        let (start, options) = (&start, &options);
        let resp = self
            .call(|mut c| async move { c.get(start.as_str(), Some(options.clone())).await })
            .await?;
        Ok(resp
            .kvs()
            .iter()
            .map(|kv| String::from_utf8_lossy(&kv.key()[root.len()..]).into_owned())
            .collect())
    }

    /// Adds a tag; `false` when it exists already.
    pub async fn create_tag(&self, row: &TagRow) -> StoreResult<bool> {
        let max = self.key(&format!("max/{}", row.tag));
        let meta = serde_json::to_vec(&TagMeta {
            step: row.step,
            description: row.description.clone(),
        })
        .map_err(|e| StoreError(e.to_string()))?;
        let txn = Txn::new()
            .when([Compare::create_revision(max.clone(), CompareOp::Equal, 0)])
            .and_then([
                TxnOp::put(max, row.max_id.to_string(), None),
                TxnOp::put(self.key(&format!("tag/{}", row.tag)), meta, None),
            ]);
        let txn = &txn;
        Ok(self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?
            .succeeded())
    }

    /// Removes a tag; `false` when there was none.
    pub async fn drop_tag(&self, tag: &str) -> StoreResult<bool> {
        let txn = Txn::new().and_then([
            TxnOp::delete(self.key(&format!("max/{tag}")), None),
            TxnOp::delete(self.key(&format!("tag/{tag}")), None),
        ]);
        let txn = &txn;
        let resp = self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        Ok(matches!(resp.op_responses().first(), Some(TxnOpResponse::Delete(d)) if d.deleted() > 0))
    }

    /// Moves marks (each a compare-and-swap) and clocks (each only forward) in one transaction
    /// that also requires the leader key this server holds; returns the tags that conflicted.
    pub async fn persist(
        &self,
        tags: &[TagMove],
        clocks: &[(String, i64)],
    ) -> StoreResult<Vec<String>> {
        let mut ops = Vec::with_capacity(tags.len() + clocks.len());
        for m in tags {
            let key = self.key(&format!("max/{}", m.tag));
            ops.push(TxnOp::txn(
                Txn::new()
                    .when([Compare::value(
                        key.clone(),
                        CompareOp::Equal,
                        m.old.to_string(),
                    )])
                    .and_then([TxnOp::put(key, m.new.to_string(), None)]),
            ));
        }
        for (name, ms) in clocks {
            let key = self.key(&format!("clock/{name}"));
            let value = zero_padded(*ms);
            // A value compare on a missing key is false: then create it.
            let create = Txn::new()
                .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
                .and_then([TxnOp::put(key.clone(), value.clone(), None)]);
            ops.push(TxnOp::txn(
                Txn::new()
                    .when([Compare::value(key.clone(), CompareOp::Less, value.clone())])
                    .and_then([TxnOp::put(key, value, None)])
                    .or_else([TxnOp::txn(create)]),
            ));
        }
        let results = self.fenced(ops).await?.op_responses();
        Ok(conflicts(tags, &results, |m| &m.tag))
    }

    /// Runs `ops` in one transaction that requires the leader key this server created (the
    /// fence); fails, writing nothing, when it is gone or another server's.
    async fn fenced(&self, ops: Vec<TxnOp>) -> StoreResult<etcd_client::TxnResponse> {
        let fence = self.fence.load(Ordering::SeqCst);
        if fence == 0 {
            return Err(StoreError("not the leader: write refused".into()));
        }
        let txn = Txn::new()
            .when([Compare::create_revision(
                self.key("leader"),
                CompareOp::Equal,
                fence,
            )])
            .and_then(ops);
        let txn = &txn;
        let resp = self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        if !resp.succeeded() {
            return Err(StoreError(
                "fenced: this server no longer holds the leader key".into(),
            ));
        }
        Ok(resp)
    }

    /// Brings snowflake clocks back, each a compare-and-swap on its value, in one fenced
    /// transaction (see [`super::Store::lower_clocks`]); returns the clocks that conflicted.
    pub async fn lower_clocks(&self, clocks: &[ClockMove]) -> StoreResult<Vec<String>> {
        let ops = clocks
            .iter()
            .map(|m| {
                let key = self.key(&format!("clock/{}", m.name));
                TxnOp::txn(
                    Txn::new()
                        .when([Compare::value(
                            key.clone(),
                            CompareOp::Equal,
                            zero_padded(m.old),
                        )])
                        .and_then([TxnOp::put(key, zero_padded(m.new), None)]),
                )
            })
            .collect();
        let results = self.fenced(ops).await?.op_responses();
        Ok(conflicts(clocks, &results, |m| &m.name))
    }

    /// The persisted time of a snowflake clock.
    pub async fn clock(&self, name: &str) -> StoreResult<Option<i64>> {
        let key = self.key(&format!("clock/{name}"));
        let value = self.value_at(&key).await?;
        value.map(|v| parse_int(&key, &v)).transpose()
    }

    /// The value at `key` (in full, root included), if it has one: a linearizable read.
    async fn value_at(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        let resp = self
            .call(|mut c| async move { c.get(key, None).await })
            .await?;
        Ok(resp.kvs().first().map(|kv| kv.value().to_vec()))
    }

    /// The keys under `name` (a prefix below the root), and that prefix in full.
    pub async fn under(&self, name: &str) -> StoreResult<(String, Vec<etcd_client::KeyValue>)> {
        let root = self.key(name);
        let prefix = &root;
        let mut resp = self
            .call(|mut c| async move {
                c.get(prefix.as_str(), Some(GetOptions::new().with_prefix()))
                    .await
            })
            .await?;
        Ok((root, resp.take_kvs()))
    }

    /// Every user, sorted by name.
    pub async fn users(&self) -> StoreResult<Vec<UserRow>> {
        let (root, kvs) = self.under("user/").await?;
        let mut users = Vec::new();
        for kv in &kvs {
            let name = String::from_utf8_lossy(&kv.key()[root.len()..]).into_owned();
            let meta: UserMeta = serde_json::from_slice(kv.value())
                .map_err(|e| StoreError(format!("etcd user {name}: {e}")))?;
            users.push(UserRow {
                name,
                hash: meta.hash,
                perms: meta.perms,
            });
        }
        users.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(users)
    }

    /// Adds or replaces a user.
    pub async fn put_user(&self, user: &UserRow) -> StoreResult<()> {
        let value = serde_json::to_vec(&UserMeta {
            hash: user.hash.clone(),
            perms: user.perms.clone(),
        })
        .map_err(|e| StoreError(e.to_string()))?;
        let key = self.key(&format!("user/{}", user.name));
        let key = &key;
        let value = &value;
        self.call(|mut c| async move { c.put(key.clone(), value.clone(), None).await })
            .await?;
        Ok(())
    }

    /// Removes a user; `false` when there was none.
    pub async fn delete_user(&self, name: &str) -> StoreResult<bool> {
        let key = self.key(&format!("user/{name}"));
        let key = &key;
        let resp = self
            .call(|mut c| async move { c.delete(key.clone(), None::<DeleteOptions>).await })
            .await?;
        Ok(resp.deleted() > 0)
    }

    /// The worker-id leases of `service` (`worker/{service}/{id:010}`), by id.
    pub async fn workers(&self, service: &str) -> StoreResult<Vec<WorkerRow>> {
        let (root, kvs) = self.under(&format!("worker/{service}/")).await?;
        let mut rows = Vec::new();
        for kv in &kvs {
            let key = String::from_utf8_lossy(kv.key()).into_owned();
            let id = parse_int(&key, &kv.key()[root.len()..])?;
            rows.push(worker_row(id, kv)?);
        }
        Ok(rows)
    }

    /// One worker lease of `service`, if it was ever taken.
    pub async fn worker(&self, service: &str, id: i64) -> StoreResult<Option<WorkerRow>> {
        let key = self.key(&format!("worker/{service}/{id:010}"));
        let key = &key;
        let resp = self
            .call(|mut c| async move { c.get(key.as_str(), None).await })
            .await?;
        resp.kvs().first().map(|kv| worker_row(id, kv)).transpose()
    }

    /// Compare-and-sets of many worker leases (distinct keys) in fenced transactions of at
    /// most 64 (etcd refuses more than 128 operations in one); whether each held.
    pub async fn put_workers(&self, writes: &[(String, WorkerRow)]) -> StoreResult<Vec<bool>> {
        let mut held = Vec::with_capacity(writes.len());
        for chunk in writes.chunks(64) {
            let mut ops = Vec::with_capacity(chunk.len());
            for (service, row) in chunk {
                let key = self.key(&format!("worker/{service}/{:010}", row.id));
                let value = serde_json::to_vec(&WorkerMeta {
                    token: row.token.clone(),
                    expires_ms: row.expires_ms,
                    last_time_ms: row.last_time_ms,
                    ttl_ms: row.ttl_ms,
                    holder: row.holder.clone(),
                    reserved_ms: row.reserved_ms,
                })
                .map_err(|e| StoreError(e.to_string()))?;
                ops.push(TxnOp::txn(
                    Txn::new()
                        .when([Compare::version(key.clone(), CompareOp::Equal, row.version)])
                        .and_then([TxnOp::put(key, value, None)]),
                ));
            }
            let resp = self.fenced(ops).await?;
            held.extend(
                resp.op_responses()
                    .iter()
                    .map(|r| matches!(r, TxnOpResponse::Txn(t) if t.succeeded())),
            );
        }
        Ok(held)
    }

    /// Whether the cluster answers (a linearizable read).
    pub async fn ping(&self) -> StoreResult<()> {
        self.value_at(&self.key("leader")).await.map(|_| ())
    }

    /// Nothing to close: the channels close when the last clone is dropped.
    pub async fn close(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_compare_as_numbers() {
        assert!(zero_padded(99) < zero_padded(100));
        assert_eq!(zero_padded(-5), zero_padded(0));
    }
}
