//! `Segments`: ids from ranges of a segment source (Leaf-style double buffer).

use std::sync::Arc;

use idforge::{SegmentOptions as RtOptions, SegmentOptionsInput, Segments as RtSegments};

use crate::error::Result;
use crate::snowflake::count;

/// The stats records from the runtime's one declaration (`idforge::with_stats_records!`), as
/// uniffi records (Kotlin's `Long`: counters stay far below 2^63).
macro_rules! uniffi_stats {
    (
        segment { $( $(#[doc = $sd:tt])* $sf:ident, )* }
        engine { $( $(#[doc = $ed:tt])* $ef:ident, )* }
    ) => {
        /// Counters of a `Segments` generator.
        #[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
        pub struct SegmentStats {
            $( $(#[doc = $sd])* pub $sf: i64, )*
            /// The process-wide figures of the refill engine serving this generator's source.
            pub engine: EngineStats,
        }

        /// Figures of the refill engine a generator shares with every generator of the process
        /// on the same source.
        #[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
        pub struct EngineStats {
            $( $(#[doc = $ed])* pub $ef: i64, )*
        }

        impl From<idforge::SegmentStats> for SegmentStats {
            fn from(s: idforge::SegmentStats) -> Self {
                SegmentStats {
                    $( $sf: s.$sf as i64, )*
                    engine: s.engine.into(),
                }
            }
        }

        impl From<idforge::EngineStats> for EngineStats {
            fn from(e: idforge::EngineStats) -> Self {
                EngineStats { $( $ef: e.$ef as i64, )* }
            }
        }
    };
}

idforge::with_stats_records!(uniffi_stats);

/// Ids of one tag from a segment source (`memory:`, `file:`, `sqlite:`, `postgres://`,
/// `mysql://`, `redis://`, `idforge://`), increasing, never repeated across processes that
/// share the source. Safe to share between threads.
#[derive(uniffi::Object)]
pub struct Segments {
    inner: RtSegments,
}

/// Options of a `Segments` generator as in effect (see `Segments.options`).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SegmentOptions {
    /// The first and smallest step.
    pub step: i64,
    /// The largest step dynamic sizing may reach.
    pub max_step: i64,
    /// Whether the step grows or shrinks to keep a range lasting about `target_ms`.
    pub dynamic_step: bool,
    /// How long a range should last, in ms.
    pub target_ms: i64,
    /// Percentage of a range used before the next is fetched.
    pub prefetch_pct: i32,
    /// The longest a call waits for a range, in ms.
    pub timeout_ms: i64,
}

/// A Kotlin integer in the runtime's range: a negative is 0, out of every option's bounds, so
/// the runtime refuses it with its message for the option.
fn unsigned<T: TryFrom<i64> + Default>(v: Option<impl Into<i64>>) -> Option<T> {
    v.map(|v| T::try_from(v.into()).unwrap_or_default())
}

#[uniffi::export]
impl Segments {
    /// Opens `url` for `tag`. `step` is the first (and smallest) range, `max_step` the largest
    /// the dynamic step may reach, `target_ms` how long a range should last, `prefetch_pct` how
    /// much of a range is used before the next is fetched, `timeout_ms` the longest a call waits
    /// (through transient failures; a permanent one throws at once). An option left null takes
    /// the default every language shares (the README's "Segment sources"); one out of bounds
    /// throws `INVALID_ARGUMENT` naming it.
    #[uniffi::constructor(default(
        step = None,
        max_step = None,
        dynamic_step = None,
        target_ms = None,
        prefetch_pct = None,
        timeout_ms = None
    ))]
    #[allow(clippy::too_many_arguments)] // one per option, each with a default
    pub fn new(
        url: String,
        tag: String,
        step: Option<i64>,
        max_step: Option<i64>,
        dynamic_step: Option<bool>,
        target_ms: Option<i64>,
        prefetch_pct: Option<i32>,
        timeout_ms: Option<i64>,
    ) -> Result<Arc<Segments>> {
        let options = RtOptions::resolve(SegmentOptionsInput {
            step: unsigned(step),
            max_step: unsigned(max_step),
            dynamic_step,
            target_ms: unsigned(target_ms),
            prefetch_pct: unsigned(prefetch_pct),
            timeout_ms: unsigned(timeout_ms),
        })?;
        Ok(Arc::new(Segments {
            inner: RtSegments::open(&url, &tag, options)?,
        }))
    }

    /// The options in effect.
    pub fn options(&self) -> SegmentOptions {
        let o = self.inner.options();
        SegmentOptions {
            step: o.step as i64,
            max_step: o.max_step as i64,
            dynamic_step: o.dynamic_step,
            target_ms: o.target_ms() as i64,
            prefetch_pct: o.prefetch_pct.into(),
            timeout_ms: o.timeout_ms() as i64,
        }
    }

    /// The next id; waits (at most `timeout_ms`) when no range is buffered.
    pub fn next(&self) -> Result<i64> {
        Ok(self.inner.next()? as i64)
    }

    /// The next id if one is buffered, else null (never waits).
    pub fn try_next(&self) -> Result<Option<i64>> {
        Ok(self.inner.try_next()?.map(|id| id as i64))
    }

    /// Waits until an id is buffered, without taking it.
    pub fn ready(&self) -> Result<()> {
        Ok(self.inner.ready()?)
    }

    /// `n` ids in increasing order.
    pub fn next_many(&self, n: i32) -> Result<Vec<i64>> {
        let mut ids = vec![0u64; count(n)?];
        self.inner.next_many(&mut ids)?;
        Ok(ids.into_iter().map(|id| id as i64).collect())
    }

    /// The tag.
    pub fn tag(&self) -> String {
        self.inner.tag().to_owned()
    }

    /// The counters.
    pub fn stats(&self) -> SegmentStats {
        self.inner.stats().into()
    }
}
