//! `Segments`: ids of one tag from ranges fetched in the background. Synchronous calls take
//! only buffered ids (the refill worker keeps them coming); when none is buffered they throw
//! `IDFORGE_TIMEOUT` at once, and the `…Async` calls and `ready()` wait off the event loop.

use std::sync::Arc;

use idforge::{SegmentOptions as RtOptions, SegmentOptionsInput, Segments as RtSegments};
use napi::bindgen_prelude::{AsyncTask, BigInt, BigUint64Array};
use napi_derive::napi;

use crate::args::count;
use crate::error::{OrThrow, Result, invalid_argument, to_js};
use crate::task::{self, Waiting};

/// Options of a `Segments` generator, each optional: one left out takes the default every
/// language shares (the README's "Segment sources"); one out of bounds throws
/// `IDFORGE_INVALID_ARGUMENT` naming it.
#[napi(object)]
#[derive(Default)]
pub struct SegmentOptions {
    /// The first and smallest step (ids per fetched range).
    pub step: Option<f64>,
    /// The largest step dynamic sizing may reach.
    pub max_step: Option<f64>,
    /// Grow or shrink the step so a range lasts about `targetMs`.
    pub dynamic_step: Option<bool>,
    /// How long a range should last, in ms.
    pub target_ms: Option<f64>,
    /// Percentage of a range used before the next is fetched, 1..=99.
    pub prefetch_pct: Option<f64>,
    /// The longest an async call waits for a range, in ms, through transient failures.
    pub timeout_ms: Option<f64>,
}

/// The options a `Segments` generator runs with (`options()`): every one set.
#[napi(object, object_from_js = false)]
pub struct SegmentOptionsInEffect {
    /// The first and smallest step.
    pub step: f64,
    /// The largest step dynamic sizing may reach.
    pub max_step: f64,
    /// Whether the step grows or shrinks so a range lasts about `targetMs`.
    pub dynamic_step: bool,
    /// How long a range should last, in ms.
    pub target_ms: f64,
    /// Percentage of a range used before the next is fetched.
    pub prefetch_pct: f64,
    /// The longest an async call waits for a range, in ms.
    pub timeout_ms: f64,
}

/// The stats records from the runtime's one declaration (`idforge::with_stats_records!`), as
/// JavaScript objects of numbers (counters stay far below 2^53).
macro_rules! node_stats {
    (
        segment { $( $(#[doc = $sd:tt])* $sf:ident, )* }
        engine { $( $(#[doc = $ed:tt])* $ef:ident, )* }
    ) => {
        /// Counters of a `Segments` generator.
        #[napi(object, object_from_js = false)]
        pub struct SegmentStats {
            $( $(#[doc = $sd])* pub $sf: f64, )*
            /// The process-wide figures of the refill engine serving this generator's source.
            pub engine: EngineStats,
        }

        /// Figures of the refill engine a generator shares with every generator of the process
        /// on the same source.
        #[napi(object)]
        pub struct EngineStats {
            $( $(#[doc = $ed])* pub $ef: f64, )*
        }

        impl From<idforge::SegmentStats> for SegmentStats {
            fn from(s: idforge::SegmentStats) -> Self {
                SegmentStats {
                    $( $sf: s.$sf as f64, )*
                    engine: s.engine.into(),
                }
            }
        }

        impl From<idforge::EngineStats> for EngineStats {
            fn from(e: idforge::EngineStats) -> Self {
                EngineStats { $( $ef: e.$ef as f64, )* }
            }
        }
    };
}

idforge::with_stats_records!(node_stats);

/// A `number` option as the runtime takes it: a negative integer is 0 and one past 2^64 the
/// largest value, both out of every bound, so the runtime refuses them with its message for the
/// option. A fraction, NaN or an infinity is no integer at all.
fn integer(v: Option<f64>) -> Result<Option<u64>> {
    match v {
        Some(v) if v.fract() != 0.0 || !v.is_finite() => Err(invalid_argument(
            "segment options must be integers (ids, ms or percent)",
        )),
        // Saturating: a negative integer gives 0.
        Some(v) => Ok(Some(v as u64)),
        None => Ok(None),
    }
}

fn options_of(o: Option<SegmentOptions>) -> Result<RtOptions> {
    let o = o.unwrap_or_default();
    RtOptions::resolve(SegmentOptionsInput {
        step: integer(o.step)?,
        max_step: integer(o.max_step)?,
        dynamic_step: o.dynamic_step,
        target_ms: integer(o.target_ms)?,
        prefetch_pct: integer(o.prefetch_pct)?.map(|v| u32::try_from(v).unwrap_or(u32::MAX)),
        timeout_ms: integer(o.timeout_ms)?,
    })
    .or_throw()
}

fn nothing_buffered() -> crate::error::JsErr {
    to_js(idforge::CoreError::Timeout { waited_ms: 0 })
}

/// Ids of one tag from a segment source (`idforge://`, `redis://`, `postgres://`, `mysql://`,
/// `sqlite://`, `file:///dir` or `memory:`), Leaf's double buffer with prefetch and dynamic
/// step. Safe to share; ids are unique across every generator of the
/// source and increase within one generator. With `sqlite://`, do not open the same file
/// through `node:sqlite` in this process: another SQLite library, blind to idforge's locks;
/// ranges are refused (`IDFORGE_SOURCE_UNAVAILABLE`) while such a connection is open. Every
/// generator of the process on one URL shares one refill engine: one thread and one connection
/// for `idforge://` and `redis://` however many tags (`stats().engine` holds its figures).
#[napi]
pub struct Segments {
    inner: Arc<RtSegments>,
}

#[napi]
impl Segments {
    /// A generator for `tag` over the source named by `url`. The first range is fetched at
    /// once, in the background: `await ready()` before the first synchronous `next()`.
    #[napi(constructor)]
    pub fn new(url: String, tag: String, options: Option<SegmentOptions>) -> Result<Segments> {
        Ok(Segments {
            inner: Arc::new(RtSegments::open(&url, &tag, options_of(options)?).or_throw()?),
        })
    }

    /// The tag.
    #[napi(getter)]
    pub fn tag(&self) -> String {
        self.inner.tag().to_owned()
    }

    /// The options in effect.
    #[napi]
    pub fn options(&self) -> SegmentOptionsInEffect {
        let o = self.inner.options();
        SegmentOptionsInEffect {
            step: o.step as f64,
            max_step: o.max_step as f64,
            dynamic_step: o.dynamic_step,
            target_ms: o.target_ms() as f64,
            prefetch_pct: o.prefetch_pct.into(),
            timeout_ms: o.timeout_ms() as f64,
        }
    }

    /// The next buffered id; never blocks: throws `IDFORGE_TIMEOUT` when none is buffered (a
    /// refill is under way; use `nextAsync`).
    #[napi]
    pub fn next(&self) -> Result<u64> {
        self.inner
            .try_next()
            .or_throw()?
            .ok_or_else(nothing_buffered)
    }

    /// `n` buffered ids; never blocks (see `next`; ids taken before the error are dropped).
    #[napi]
    pub fn next_many(&self, n: f64) -> Result<BigUint64Array> {
        let n = count(n)?;
        let mut ids = vec![0u64; n];
        for slot in &mut ids {
            *slot = self.next()?;
        }
        Ok(BigUint64Array::new(ids))
    }

    /// The next id, waiting off the event loop for a refill when none is buffered.
    #[napi(ts_return_type = "Promise<bigint>")]
    pub fn next_async(&self) -> AsyncTask<Waiting<BigInt>> {
        let s = self.inner.clone();
        AsyncTask::new(Waiting::new(
            Box::new(move || s.next().map(|id| vec![id])),
            task::one,
        ))
    }

    /// `n` ids, waiting off the event loop for refills.
    #[napi(ts_return_type = "Promise<BigUint64Array>")]
    pub fn next_many_async(&self, n: f64) -> Result<AsyncTask<Waiting<BigUint64Array>>> {
        let n = count(n)?;
        let s = self.inner.clone();
        let job = move || {
            let mut ids = vec![0u64; n];
            s.next_many(&mut ids).map(|()| ids)
        };
        Ok(AsyncTask::new(Waiting::new(Box::new(job), task::many)))
    }

    /// Resolves once an id is buffered (at most the timeout; a permanent failure rejects at once).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn ready(&self) -> AsyncTask<Waiting<()>> {
        let s = self.inner.clone();
        AsyncTask::new(Waiting::new(
            Box::new(move || s.ready().map(|()| Vec::new())),
            task::nothing,
        ))
    }

    /// The generator's counters.
    #[napi]
    pub fn stats(&self) -> SegmentStats {
        self.inner.stats().into()
    }
}
