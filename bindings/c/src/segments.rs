//! Segment ids (Leaf style): ranges of one tag fetched from a source, refilled in the background.

use std::ffi::c_char;

use runtime::{CoreError, SegmentOptions, SegmentOptionsInput, Segments};

use crate::error::{FfiError, panic_boundary};
use crate::ptr;
use crate::status::idforge_status;

/// Options of `idforge_segments_new`. A field left 0 (or `false`) is not given: its default
/// applies, so `idforge_segment_options opts = {0};` is the default set. The defaults and bounds
/// are the same in every language: the table in the README's "Segment sources". A field out of
/// its bounds fails with `INVALID_ARGUMENT` and a message naming the option.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_segment_options {
    /// The first and smallest step.
    pub step: u64,
    /// The largest step dynamic sizing may reach: at least `step` (when 0, the default or
    /// `step`, whichever is larger).
    pub max_step: u64,
    /// Always ask for `step` ids (false: grow or shrink the step to keep a segment lasting
    /// about `target_ms`, as Leaf does).
    pub fixed_step: bool,
    /// How long a segment should last, in ms.
    pub target_ms: u64,
    /// Percent of a segment used before the next one is fetched, 1..=99.
    pub prefetch_pct: u8,
    /// The longest a call waits for a range when both buffers are empty, in ms (up to one
    /// day): through transient failures (a server restarting, a refused connection, a busy
    /// database); a permanent one (authentication refused, an unknown tag) returns at once.
    pub timeout_ms: u64,
}

/// Counters of a segments generator.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_segment_stats {
    /// Ranges fetched from the source.
    pub ranges_fetched: u64,
    /// Fetches that failed.
    pub fetch_errors: u64,
    /// Total time spent fetching, in microseconds.
    pub fetch_micros_total: u64,
    /// The last fetch's duration, in microseconds.
    pub fetch_micros_last: u64,
    /// Calls that found both buffers empty and had to wait.
    pub waits: u64,
    /// The step the next fetch will ask for.
    pub step: u64,
    /// Ids buffered right now.
    pub buffered: u64,
}

/// Figures of the refill engine a generator shares with every generator of the process on the
/// same source (see `idforge_segments_engine_stats`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_engine_stats {
    /// Generators the process's refill engine for this source serves.
    pub generators: u64,
    /// Threads that engine runs now.
    pub threads: u64,
    /// Connections the source holds open in this process now.
    pub connections: u64,
    /// Requests made to the source, one under way included.
    pub round_trips: u64,
    /// Ranges the engine asked for, in all (failed ones included).
    pub refills: u64,
    /// Ranges asked for in a round trip shared with other tags' ranges.
    pub batched_refills: u64,
    /// Tags waiting for a range now, retries included.
    pub queued: u64,
}

/// The conversions from the runtime's records, made from their one declaration
/// (`idforge::with_stats_records!`): a counter that one of the structs above lacks, or has
/// beyond the runtime's, fails to compile here. (The structs stay written out for cbindgen, which
/// reads source, not macro output.)
macro_rules! c_stats {
    (
        segment { $( $(#[doc = $sd:tt])* $sf:ident, )* }
        engine { $( $(#[doc = $ed:tt])* $ef:ident, )* }
    ) => {
        impl From<&runtime::SegmentStats> for idforge_segment_stats {
            fn from(s: &runtime::SegmentStats) -> Self {
                idforge_segment_stats { $( $sf: s.$sf, )* }
            }
        }

        impl From<&runtime::EngineStats> for idforge_engine_stats {
            fn from(e: &runtime::EngineStats) -> Self {
                idforge_engine_stats { $( $ef: e.$ef, )* }
            }
        }
    };
}

runtime::with_stats_records!(c_stats);

/// Ids of one tag from a segment source. Thread-safe: every call but `idforge_segments_free`
/// may run concurrently on one handle. In a forked child the parent's ranges are dropped and
/// fresh ones fetched, so parent and child never return the same id.
pub struct idforge_segments {
    inner: Segments,
}

impl idforge_segment_options {
    /// The options in effect for these fields: a zero field is C's spelling of "not given".
    fn resolve(self) -> runtime::Result<SegmentOptions> {
        let given = |v: u64| (v != 0).then_some(v);
        SegmentOptions::resolve(SegmentOptionsInput {
            step: given(self.step),
            max_step: given(self.max_step),
            dynamic_step: self.fixed_step.then_some(false),
            target_ms: given(self.target_ms),
            prefetch_pct: (self.prefetch_pct != 0).then_some(self.prefetch_pct.into()),
            timeout_ms: given(self.timeout_ms),
        })
    }

    /// The fields for options in effect (every one set).
    fn of(o: SegmentOptions) -> idforge_segment_options {
        idforge_segment_options {
            step: o.step,
            max_step: o.max_step,
            fixed_step: !o.dynamic_step,
            target_ms: o.target_ms(),
            prefetch_pct: o.prefetch_pct,
            timeout_ms: o.timeout_ms(),
        }
    }
}

/// Creates a generator for `tag` over the source at `url`: `idforge://[user:pass@]host:port[,…]`
/// (the segment server; `?mode=any` for striped servers), `redis://[user:pass@]host:port[/db]`,
/// `postgres://…`, `mysql://…` or
/// `sqlite:///path` (Leaf's `leaf_alloc` table), `file:///abs/dir` (a locked counter file per
/// tag, shared by the processes of a host) or `memory:` (this process only); see the README's
/// "Segment sources". `options` may be NULL for the defaults. Joins the process's refill engine
/// for the URL (started with its thread on first use: one thread and one connection for every
/// generator on one `idforge://` or `redis://` URL) and asks for the first range at once;
/// network sources connect in the engine's thread, so their failures
/// (`SOURCE_UNAVAILABLE`, `TIMEOUT`, `INVALID_ARGUMENT` for an unknown tag) come from
/// `idforge_segments_next`. Fails with `INVALID_URL`, `INVALID_ARGUMENT` (tag, options) or `IO`.
///
/// # Safety
/// `url` and `tag` are NULL or NUL-terminated; `options` is NULL or readable; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_new(
    url: *const c_char,
    tag: *const c_char,
    options: *const idforge_segment_options,
    out: *mut *mut idforge_segments,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (url, tag, out) = unsafe {
            (
                ptr::cstr(url, "url")?,
                ptr::cstr(tag, "tag")?,
                ptr::out(out, "out")?,
            )
        };
        // SAFETY: the caller's guarantee (NULL is allowed and means the defaults).
        let options = unsafe { options.as_ref() }.map_or_else(
            || SegmentOptions::resolve(SegmentOptionsInput::default()),
            |o| o.resolve(),
        )?;
        let url = url
            .to_str()
            .map_err(|_| CoreError::InvalidUrl("the URL is not UTF-8"))?;
        let tag = tag
            .to_str()
            .map_err(|_| CoreError::InvalidArgument("the tag is not UTF-8"))?;
        let inner = Segments::open(url, tag, options)?;
        out.write(ptr::into_handle(idforge_segments { inner }));
        Ok(())
    })
}

/// Frees a generator (the last one on a source ends its refill engine); NULL is ignored. Ids still buffered are
/// dropped (never handed out again). No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_segments_new` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_free(handle: *mut idforge_segments) {
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// The next id, into `*out_id`. Usually one atomic add; waits up to the timeout when both
/// buffers are empty (`TIMEOUT`, or the source's error such as `SOURCE_UNAVAILABLE`).
///
/// # Safety
/// `handle` is NULL or a live generator; `out_id` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_next(
    handle: *const idforge_segments,
    out_id: *mut u64,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out_id, ("handle", "out_id"), |h| {
            Ok(h.inner.next()?)
        })
    }
}

/// Fills `out[0..len]` with ids. On failure the contents of `out` are unspecified: some may
/// have been written, and those ids are never handed out again.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to `len` writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_next_many(
    handle: *const idforge_segments,
    out: *mut u64,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out_slice(out, len, "out")?,
            )
        };
        h.inner.next_many(out).map_err(FfiError::from)
    })
}

/// The generator's counters, into `*out`.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_stats(
    handle: *const idforge_segments,
    out: *mut idforge_segment_stats,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(idforge_segment_stats::from(&h.inner.stats()))
        })
    }
}

/// The options in effect, into `*out`: every field set (none 0), as `idforge_segments_new`
/// resolved them.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_options(
    handle: *const idforge_segments,
    out: *mut idforge_segment_options,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(idforge_segment_options::of(h.inner.options()))
        })
    }
}

/// The figures of the refill engine serving the generator's source, into `*out`: one engine
/// (one thread and one connection for `idforge://` and `redis://`) serves every generator of
/// the process on the same source URL.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_segments_engine_stats(
    handle: *const idforge_segments,
    out: *mut idforge_engine_stats,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(handle, out, ("handle", "out"), |h| {
            Ok(idforge_engine_stats::from(&h.inner.engine_stats()))
        })
    }
}
