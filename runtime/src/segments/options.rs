//! The options of a [`Segments`](super::Segments) generator, declared once: their defaults,
//! their bounds and the message of each bound. Every binding hands the options its caller gave
//! to [`SegmentOptions::resolve`] (an absent one as `None`) and keeps none of its own, so one
//! value means one thing in every language. The shared vectors in
//! `core/testdata/segment_options.json` pin the rules.

use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::segment::SegmentBuffer;

use crate::error::Result;

/// The default first (and smallest) step.
pub const DEFAULT_STEP: u64 = 1000;
/// The default largest step (Leaf's); when `step` is above it and `max_step` is not given,
/// `max_step` is `step` (as Leaf does).
pub const DEFAULT_MAX_STEP: u64 = 1_000_000;
/// Dynamic step sizing is on by default (Leaf's).
pub const DEFAULT_DYNAMIC_STEP: bool = true;
/// The default time a segment should last: 15 min, in ms (Leaf's).
pub const DEFAULT_TARGET_MS: u64 = 15 * 60 * 1000;
/// The default percentage of a segment used before the next one is fetched.
pub const DEFAULT_PREFETCH_PCT: u8 = SegmentBuffer::DEFAULT_PREFETCH_PCT;
/// The default longest wait for a range, in ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 3000;

/// The smallest prefetch percentage: 0 would fetch the next segment at the first id, which no
/// binding offers (in C a zero field means "not given").
pub const MIN_PREFETCH_PCT: u32 = 1;
/// The largest prefetch percentage (at 100 the next segment would be fetched only once the
/// current one is used up).
pub const MAX_PREFETCH_PCT: u32 = 99;
/// The longest timeout, in ms (1 day): a deadline that far ahead fits every platform's clock.
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

const STEP_TOO_SMALL: &str = "step must be at least 1";
const MAX_STEP_BELOW_STEP: &str = "max_step must be at least step";
const TARGET_TOO_SHORT: &str = "target must be at least 1 ms";
const PREFETCH_OUT_OF_RANGE: &str = "prefetch_pct must be between 1 and 99";
const TIMEOUT_OUT_OF_RANGE: &str = "timeout must be between 1 ms and 1 day";

/// Options of a [`Segments`](super::Segments) generator, every one in effect (see
/// [`SegmentOptions::resolve`] for their defaults and bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentOptions {
    /// The first step, and the smallest one (default [`DEFAULT_STEP`]; at least 1).
    pub step: u64,
    /// The largest step dynamic sizing may reach (default [`DEFAULT_MAX_STEP`], or `step` when
    /// larger; at least `step`).
    pub max_step: u64,
    /// Double or halve the step to keep a segment lasting about `target` (Leaf's dynamic
    /// step); when false, every fetch asks for `step`.
    pub dynamic_step: bool,
    /// How long a segment should last (default 15 min; at least 1 ms).
    pub target: Duration,
    /// Percentage of a segment used before the next one is fetched (default 10; 1..=99).
    pub prefetch_pct: u8,
    /// The longest a call waits for a range when both buffers are empty (default 3 s; 1 ms to
    /// 1 day), through transient failures; also each request's budget unless the URL sets
    /// `timeout_ms`.
    pub timeout: Duration,
}

/// The options a caller gave, each `None` when not given (its default then applies). The names
/// are the neutral ones the documentation and the error messages use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentOptionsInput {
    /// `step`: at least 1.
    pub step: Option<u64>,
    /// `max_step`: at least `step`.
    pub max_step: Option<u64>,
    /// `dynamic_step`.
    pub dynamic_step: Option<bool>,
    /// `target`, in ms: at least 1.
    pub target_ms: Option<u64>,
    /// `prefetch_pct`: 1..=99.
    pub prefetch_pct: Option<u32>,
    /// `timeout`, in ms: 1 to [`MAX_TIMEOUT_MS`].
    pub timeout_ms: Option<u64>,
}

impl Default for SegmentOptions {
    fn default() -> Self {
        SegmentOptions {
            step: DEFAULT_STEP,
            max_step: DEFAULT_MAX_STEP,
            dynamic_step: DEFAULT_DYNAMIC_STEP,
            target: Duration::from_millis(DEFAULT_TARGET_MS),
            prefetch_pct: DEFAULT_PREFETCH_PCT,
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
        }
    }
}

impl SegmentOptions {
    /// The options in effect for what a caller gave: defaults for the absent ones, then every
    /// bound checked (`INVALID_ARGUMENT`, one message per bound, naming the option).
    pub fn resolve(input: SegmentOptionsInput) -> Result<SegmentOptions> {
        let step = input.step.unwrap_or(DEFAULT_STEP);
        let options = SegmentOptions {
            step,
            max_step: input.max_step.unwrap_or(DEFAULT_MAX_STEP.max(step)),
            dynamic_step: input.dynamic_step.unwrap_or(DEFAULT_DYNAMIC_STEP),
            target: Duration::from_millis(input.target_ms.unwrap_or(DEFAULT_TARGET_MS)),
            // Past u8: still out of bounds, so `check` refuses it with the same message.
            prefetch_pct: input.prefetch_pct.map_or(DEFAULT_PREFETCH_PCT, |pct| {
                u8::try_from(pct).unwrap_or(u8::MAX)
            }),
            timeout: Duration::from_millis(input.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)),
        };
        options.check()?;
        Ok(options)
    }

    /// Checks every bound (what [`Segments`](super::Segments) does with options built directly).
    pub fn check(&self) -> Result<()> {
        let refused = |message| Err(CoreError::InvalidArgument(message).into());
        if self.step == 0 {
            return refused(STEP_TOO_SMALL);
        }
        if self.max_step < self.step {
            return refused(MAX_STEP_BELOW_STEP);
        }
        if self.target < Duration::from_millis(1) {
            return refused(TARGET_TOO_SHORT);
        }
        if !(MIN_PREFETCH_PCT..=MAX_PREFETCH_PCT).contains(&u32::from(self.prefetch_pct)) {
            return refused(PREFETCH_OUT_OF_RANGE);
        }
        if self.timeout < Duration::from_millis(1)
            || self.timeout > Duration::from_millis(MAX_TIMEOUT_MS)
        {
            return refused(TIMEOUT_OUT_OF_RANGE);
        }
        Ok(())
    }

    /// `target` in whole ms, as the bindings report it.
    pub fn target_ms(&self) -> u64 {
        u64::try_from(self.target.as_millis()).unwrap_or(u64::MAX)
    }

    /// `timeout` in whole ms, as the bindings report it.
    pub fn timeout_ms(&self) -> u64 {
        u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX)
    }
}
