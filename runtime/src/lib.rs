//! # idforge
//!
//! The std layer of idforge: real clocks, thread-safe and fork-safe generators, and segment
//! sources, over the `#![no_std]` algorithms of [`idforge_core`].
//!
//! ```
//! use idforge::{Layout, Snowflake};
//! let ids = Snowflake::new(Layout::TWITTER, 7)?;
//! let a = ids.next()?;
//! let b = ids.next()?;
//! assert!(b > a);
//! assert_eq!(ids.decode(a)?.node, 7);
//! # Ok::<(), idforge::Error>(())
//! ```
//!
//! - [`Snowflake`]: 64-bit ids in any [`Layout`], with a clock [`Policy`] and an optional
//!   [`StateFile`] high-water mark.
//! - [`ObjectIds`] and [`object_id`]: MongoDB ObjectIds.
//! - [`Flake128s`]: 128-bit flake ids.
//! - [`Uuid7s`] and [`Ulids`]: RFC 9562 UUIDv7s and ULIDs, strictly increasing; their random
//!   bits come from a per-thread [`Random`] stream, or one the caller owns.
//! - [`Segments`]: ids from ranges of a [`SegmentSource`], refilled in the background.
//! - [`WorkerLease`]: a snowflake node id leased from an idforge server
//!   ([`SnowflakeBuilder::lease`]).
//!
//! Every error has a stable [`ErrorCode`] shared with the C, Python and Node bindings.

mod batch;
mod clock;
mod entropy;
mod error;
mod flake128;
pub mod fork;
mod lease;
mod marks;
mod objectid;
pub mod pem;
mod platform;
mod policy;
mod reseed;
mod rng;
mod seconds;
mod segments;
mod snowflake;
pub mod source;
mod state_file;
pub mod text;
mod time_ordered;

pub use batch::{MAX_BATCH, batch_len};
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{CoreError, Error, ErrorCode, Result};
pub use flake128::{Flake128s, WorkerId};
pub use idforge_core;
pub use idforge_core::encode;
pub use idforge_core::flake128::Flake128;
pub use idforge_core::objectid::ObjectId;
pub use idforge_core::segment::Segment;
pub use idforge_core::snowflake::{Layout, Order, Parts, Spec as LayoutSpec};
pub use idforge_core::ulid::Ulid;
pub use idforge_core::uuid7::Uuid7;
#[cfg(feature = "serde")]
pub use idforge_core::with_serde;
pub use lease::{DEFAULT_LEASE_TTL, DEFAULT_MAX_SKEW, WorkerLease};
pub use objectid::{ObjectIds, object_id, object_id_with};
pub use policy::{DEFAULT_LEAD, Policy};
pub use rng::Random;
pub use segments::options as segment_options;
pub use segments::{EngineStats, SegmentOptions, SegmentOptionsInput, SegmentStats, Segments};
pub use snowflake::{Snowflake, SnowflakeBuilder};
#[cfg(feature = "sql")]
pub use source::SqlSource;
pub use source::{FileSource, MemorySource, RemoteSource, SegmentSource};
pub use state_file::StateFile;
pub use time_ordered::{TimeOrdered, TimeOrderedId, Ulids, Uuid7s};
