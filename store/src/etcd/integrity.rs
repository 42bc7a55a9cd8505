//! The etcd side of [`crate::integrity`]: the identity and stripe under `meta/`, clocks under `clock/`,
//! and unfenced compare-and-swap raises for a repair.

use etcd_client::{Compare, CompareOp, Txn, TxnOp};

use super::EtcdStore;
use crate::{StoreError, StoreResult};

impl EtcdStore {
    /// The value of `meta/<name>`, if it has one.
    pub async fn meta(&self, name: &str) -> StoreResult<Option<String>> {
        let value = self.value_at(&self.key(&format!("meta/{name}"))).await?;
        Ok(value.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Gives `meta/<name>` the value `candidate` unless it has one; returns the one it has.
    pub async fn claim_meta(&self, name: &str, candidate: &str) -> StoreResult<String> {
        let key = self.key(&format!("meta/{name}"));
        let txn = Txn::new()
            .when([Compare::create_revision(key.clone(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, candidate, None)]);
        let txn = &txn;
        self.call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        self.meta(name)
            .await?
            .ok_or_else(|| StoreError(format!("the store's {name} could not be written")))
    }

    /// Sets `meta/<name>` to `new` if it holds `old`; whether it did.
    pub async fn replace_meta(&self, name: &str, old: &str, new: &str) -> StoreResult<bool> {
        let key = self.key(&format!("meta/{name}"));
        let txn = Txn::new()
            .when([Compare::value(key.clone(), CompareOp::Equal, old)])
            .and_then([TxnOp::put(key, new, None)]);
        let txn = &txn;
        let resp = self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        Ok(resp.succeeded())
    }

    /// Every snowflake clock.
    pub async fn clocks(&self) -> StoreResult<Vec<(String, i64)>> {
        let (root, kvs) = self.under("clock/").await?;
        kvs.iter()
            .map(|kv| {
                let name = String::from_utf8_lossy(&kv.key()[root.len()..]).into_owned();
                let ms = std::str::from_utf8(kv.value())
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| StoreError(format!("etcd clock {name} holds no integer")))?;
                Ok((name, ms))
            })
            .collect()
    }

    /// Moves a tag's mark from `old` to `new` by compare-and-swap (unfenced; for a repair).
    pub async fn cas_mark(&self, tag: &str, old: i64, new: i64) -> StoreResult<bool> {
        let key = self.key(&format!("max/{tag}"));
        let txn = Txn::new()
            .when([Compare::value(
                key.clone(),
                CompareOp::Equal,
                old.to_string(),
            )])
            .and_then([TxnOp::put(key, new.to_string(), None)]);
        let txn = &txn;
        Ok(self
            .call(|mut c| async move { c.txn(txn.clone()).await })
            .await?
            .succeeded())
    }

    /// Raises a clock to at least `ms` (unfenced; for a repair).
    pub async fn raise_clock(&self, name: &str, ms: i64) -> StoreResult<()> {
        let key = self.key(&format!("clock/{name}"));
        let value = format!("{:020}", ms.max(0));
        let txn = Txn::new()
            .when([Compare::value(
                key.clone(),
                CompareOp::Greater,
                value.clone(),
            )])
            .or_else([TxnOp::put(key, value, None)]);
        let txn = &txn;
        self.call(|mut c| async move { c.txn(txn.clone()).await })
            .await?;
        Ok(())
    }
}
