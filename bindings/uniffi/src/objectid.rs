//! `ObjectId`: MongoDB's 12-byte id (bson spec), generated, parsed and compared.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use idforge::ObjectId as RtObjectId;

use crate::error::Result;

/// A MongoDB ObjectId. Equal, hashed and ordered by its bytes; `toString()` is its hex.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, uniffi::Object)]
#[uniffi::export(Eq, Hash, Ord, Display)]
pub struct ObjectId {
    inner: RtObjectId,
}

#[uniffi::export]
impl ObjectId {
    /// A fresh ObjectId from the process-wide generator (fork-safe).
    #[uniffi::constructor]
    pub fn new() -> Result<Arc<ObjectId>> {
        Ok(Arc::new(ObjectId {
            inner: idforge::object_id()?,
        }))
    }

    /// Parses 24 hex digits (either case).
    #[uniffi::constructor]
    pub fn from_hex(hex: String) -> Result<Arc<ObjectId>> {
        Ok(Arc::new(ObjectId {
            inner: RtObjectId::parse_hex(&hex)?,
        }))
    }

    /// Takes exactly 12 bytes.
    #[uniffi::constructor]
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Arc<ObjectId>> {
        Ok(Arc::new(ObjectId {
            inner: RtObjectId::try_from_slice(&bytes)?,
        }))
    }

    /// The 24 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.to_string()
    }

    /// The 12 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.bytes().to_vec()
    }

    /// The creation time, Unix seconds (an unsigned 32-bit value).
    pub fn timestamp(&self) -> i64 {
        i64::from(self.inner.timestamp())
    }

    /// The creation time.
    pub fn generation_time(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(u64::from(self.inner.timestamp()))
    }
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = [0u8; RtObjectId::HEX_LEN];
        f.write_str(self.inner.to_hex(&mut buf))
    }
}
