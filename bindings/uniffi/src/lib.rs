//! idforge for the JVM: uniffi wrapper types over the runtime, so `core/` and `runtime/` stay
//! free of uniffi. `ci/steps/jvm.sh` generates the Kotlin sources from the built library (uniffi's
//! library mode) and tests them from Kotlin and Java.
//!
//! JVM conventions: 64-bit values are `Long` (Java has no unsigned `long`; an id of an
//! `unsigned` layout past 2^63 is the same 64 bits, negative as a `Long`, see
//! `java.lang.Long.toUnsignedString`), widths are `Int`, times are `java.time.Instant` or Unix
//! milliseconds, UUIDs are `java.util.UUID` (the custom type `Uuid`, see uniffi.toml), ULIDs are
//! their text, and every error is an `IdforgeException` subclass named for its code.

// uniffi's scaffolding macros expand to `unsafe` FFI functions; this crate is FFI glue.
#![allow(unsafe_code)]

mod describe;
mod error;
mod error_codes;
mod flake128;
mod id_text;
mod layout;
mod objectid;
mod segments;
mod snowflake;
mod time_ordered;
mod ulid;
mod uuid;
mod uuid7;

pub use describe::{IdField, IdKind, describe_id};
pub use error::{ErrorCodeInfo, IdforgeError, error_codes};
pub use flake128::{Flake128, Flake128Generator, Flake128Parts};
pub use id_text::{TextForm, id_from_text, id_to_text};
pub use layout::{IdBounds, Layout, Order, SnowflakeParts, layout_preset_names};
pub use objectid::ObjectId;
pub use segments::{SegmentStats, Segments};
pub use snowflake::{Policy, Snowflake};
pub use ulid::{
    Ulids, ulid_from_bytes, ulid_from_uuid, ulid_parse, ulid_time_ms, ulid_to_bytes, ulid_to_uuid,
};
pub use uuid::{Uuid, UuidBits};
pub use uuid7::{
    Uuid7Fields, Uuid7s, uuid7_fields, uuid7_from_bytes, uuid7_from_fields, uuid7_from_ulid,
    uuid7_parse, uuid7_time_ms, uuid7_to_ulid,
};

uniffi::setup_scaffolding!();
