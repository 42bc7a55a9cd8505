//! `Snowflake`: the generator. Synchronous calls never sleep (where the policy would wait for
//! the clock they throw `IDFORGE_CLOCK_BEHIND`); the `…Async` calls wait off the event loop.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use idforge::{Layout as CoreLayout, Policy, Snowflake as RtSnowflake, SnowflakeBuilder};
use napi::bindgen_prelude::{
    AsyncTask, BigInt, BigUint64Array, BigUint64ArraySlice, Either, Either3, Either4,
};
use napi_derive::napi;

use crate::args::{count, uint, uint64};
use crate::error::{OrThrow, Result, to_js};
use crate::layout::{self, IdBounds, LayoutSpec, SnowflakeParts, layout_of};
use crate::task::{self, Waiting};

/// Options of a `Snowflake`.
#[napi(object)]
pub struct SnowflakeOptions {
    /// A preset name (default `"twitter"`) or a layout (`Layout` or its fields).
    pub layout: Option<Either<String, LayoutSpec>>,
    /// This generator's node (worker) id (default 0); no two live generators may share one.
    pub node_id: Option<Either3<BigInt, f64, String>>,
    /// When a tick's sequence is used up: `"borrow"` (default: run ahead of the clock up to
    /// `maxWaitMs`, 1000), `"wait"` (wait for the clock, at most `maxWaitMs`) or `"error"`.
    #[napi(ts_type = "'borrow' | 'wait' | 'error'")]
    pub policy: Option<String>,
    /// The lead (borrow) or wait budget (wait), in milliseconds.
    pub max_wait_ms: Option<f64>,
    /// A file that persists the high-water time, so a restart with the clock set back cannot
    /// repeat ids.
    pub state_file: Option<String>,
    /// With `Snowflake.lease`: the lease's time to live in ms (default 10000; renewed every
    /// third of it).
    pub lease_ttl_ms: Option<f64>,
    /// Start each tick's sequence at a random value below half its range instead of 0
    /// (default false), so `id % n` spreads evenly over shards even at a few ids per tick. A
    /// tick then holds at least half its sequence range (2,048 ids per ms in the Twitter
    /// layout) before borrowing the next; ids still increase.
    pub random_start: Option<bool>,
}

/// The builder and layout of `options` (without a lease).
fn builder_of(options: Option<SnowflakeOptions>) -> Result<(SnowflakeBuilder, CoreLayout)> {
    let o = options.unwrap_or(SnowflakeOptions {
        layout: None,
        node_id: None,
        policy: None,
        max_wait_ms: None,
        state_file: None,
        lease_ttl_ms: None,
        random_start: None,
    });
    let layout = match o.layout {
        Some(l) => layout_of(l)?,
        None => CoreLayout::TWITTER,
    };
    let node = match o.node_id {
        Some(n) => uint64(n)?,
        None => 0,
    };
    let policy = policy_of(o.policy.as_deref(), o.max_wait_ms)?;
    let mut builder = RtSnowflake::builder(layout)
        .node(node)
        .policy(policy)
        .random_start(o.random_start.unwrap_or(false));
    if let Some(path) = o.state_file {
        builder = builder.state_file(path);
    }
    Ok((builder, layout))
}

/// `Snowflake.lease`: leases the node id (a round trip) on the libuv pool.
pub struct Leasing {
    builder: Option<SnowflakeBuilder>,
    layout: CoreLayout,
}

impl napi::Task for Leasing {
    type Output = std::result::Result<RtSnowflake, idforge::Error>;
    type JsValue = Snowflake;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        // A task computes once; a second call has no builder and leases nothing.
        Ok(self.builder.take().map_or_else(
            || Err(idforge::CoreError::InvalidArgument("already leased").into()),
            SnowflakeBuilder::build,
        ))
    }

    fn resolve(&mut self, env: napi::Env, output: Self::Output) -> napi::Result<Snowflake> {
        match output {
            Ok(inner) => Ok(Snowflake {
                inner: Arc::new(inner),
                layout: self.layout,
            }),
            Err(e) => Err(crate::error::rejection(&env, e)),
        }
    }
}

fn policy_of(name: Option<&str>, max_wait_ms: Option<f64>) -> Result<Policy> {
    let duration = match max_wait_ms {
        None => None,
        Some(ms) => Some(Duration::from_millis(uint(
            ms,
            "maxWaitMs must be a non-negative safe integer",
        )?)),
    };
    Policy::named(name.unwrap_or(Policy::NAMES[0]), duration).or_throw()
}

/// A snowflake generator: 64-bit ids, increasing, never repeated by this generator.
#[napi]
pub struct Snowflake {
    inner: Arc<RtSnowflake>,
    layout: CoreLayout,
}

#[napi]
impl Snowflake {
    /// A generator (default: the Twitter layout, node 0, the `borrow` policy).
    #[napi(constructor)]
    pub fn new(options: Option<SnowflakeOptions>) -> Result<Snowflake> {
        let (builder, layout) = builder_of(options)?;
        Ok(Snowflake {
            inner: Arc::new(builder.build().or_throw()?),
            layout,
        })
    }

    /// A generator whose node id is leased from the idforge server at `url`
    /// (`idforge://[user:pass@]host:port[,…]`): the lowest id of `service` that no live process
    /// holds, renewed in the background and given back when the generator is garbage-collected.
    /// Resolves once leased (off the event loop); rejects with the error's `code`. If the lease
    /// is lost, every call throws `IDFORGE_LEASE_LOST`. `options.nodeId` is ignored.
    #[napi(ts_return_type = "Promise<Snowflake>")]
    pub fn lease(
        url: String,
        service: String,
        options: Option<SnowflakeOptions>,
    ) -> Result<AsyncTask<Leasing>> {
        let ttl = options.as_ref().and_then(|o| o.lease_ttl_ms);
        let (mut builder, layout) = builder_of(options)?;
        builder = builder.lease(url, service);
        if let Some(ms) = ttl {
            let ms = uint(ms, "leaseTtlMs must be a non-negative safe integer")?;
            builder = builder.lease_ttl(Duration::from_millis(ms));
        }
        Ok(AsyncTask::new(Leasing {
            builder: Some(builder),
            layout,
        }))
    }

    /// The next id. Never blocks: throws `IDFORGE_CLOCK_BEHIND` where the policy would wait
    /// for the clock (use `nextAsync`).
    #[napi]
    pub fn next(&self) -> Result<u64> {
        self.inner.next_now().or_throw()
    }

    /// The next id as a decimal string.
    #[napi]
    pub fn next_string(&self) -> Result<String> {
        Ok(self.next()?.to_string())
    }

    /// The next id as a `number`: only for layouts of at most 53 bits (such as `js_safe`),
    /// else `IDFORGE_INVALID_LAYOUT`.
    #[napi]
    pub fn next_number(&self) -> Result<f64> {
        if self.layout.total_bits() > 53 {
            return Err(to_js(idforge::CoreError::InvalidLayout(
                "ids of this layout do not fit a JavaScript number (more than 53 bits); use next()",
            )));
        }
        Ok(self.next()? as f64)
    }

    /// `n` fresh ids, in increasing order. Never blocks (see `next`).
    #[napi]
    pub fn next_many(&self, n: f64) -> Result<BigUint64Array> {
        let n = count(n)?;
        let mut ids = vec![0u64; n];
        self.inner.next_many_now(&mut ids).or_throw()?;
        Ok(BigUint64Array::new(ids))
    }

    /// The next id; waits for the clock off the event loop when the policy says so.
    #[napi(ts_return_type = "Promise<bigint>")]
    pub fn next_async(&self) -> AsyncTask<Waiting<BigInt>> {
        let g = self.inner.clone();
        AsyncTask::new(Waiting::new(
            Box::new(move || g.next().map(|id| vec![id])),
            task::one,
        ))
    }

    /// `n` fresh ids; waits for the clock off the event loop when the policy says so.
    #[napi(ts_return_type = "Promise<BigUint64Array>")]
    pub fn next_many_async(&self, n: f64) -> Result<AsyncTask<Waiting<BigUint64Array>>> {
        let n = count(n)?;
        let g = self.inner.clone();
        let job = move || {
            let mut ids = vec![0u64; n];
            g.next_many(&mut ids).map(|()| ids)
        };
        Ok(AsyncTask::new(Waiting::new(Box::new(job), task::many)))
    }

    /// Internal (the package's `nextMany` uses it): fills `buf` with fresh ids in increasing
    /// order; never blocks. An array made by JavaScript costs less than one handed over.
    #[napi(ts_args_type = "buf: BigUint64Array")]
    pub fn fill_many(&self, mut buf: BigUint64ArraySlice) -> Result<()> {
        // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else
        // reads or writes the array's memory until it returns.
        let out = unsafe { buf.as_mut() };
        self.inner.next_many_now(out).or_throw()
    }

    /// Internal (the package's `next` uses it): fills the start of `buf` with consecutive ids of
    /// one tick and returns how many; single ids are served from such runs.
    #[napi(ts_args_type = "buf: BigUint64Array")]
    pub fn fill_run(&self, mut buf: BigUint64ArraySlice) -> Result<u32> {
        // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else
        // reads or writes the array's memory until it returns.
        let out = unsafe { buf.as_mut() };
        crate::millis::touch();
        Ok(self.inner.next_run_now(out).or_throw()? as u32)
    }

    /// The fields of `id` (a `bigint`, a safe-integer `number` or a decimal string).
    #[napi]
    pub fn decode(&self, id: Either3<BigInt, f64, String>) -> Result<SnowflakeParts> {
        Ok(SnowflakeParts::of(
            self.inner.decode(uint64(id)?).or_throw()?,
        ))
    }

    /// The id for `time` (Unix ms or a `Date`), `node` (default: this generator's) and `seq`
    /// (default 0): for range queries and tests, not for issuing ids.
    #[napi]
    pub fn compose(
        &self,
        time: Either4<BigInt, f64, String, DateTime<Utc>>,
        node: Option<Either3<BigInt, f64, String>>,
        seq: Option<f64>,
    ) -> Result<u64> {
        let node = match node {
            Some(n) => uint64(n)?,
            None => self.inner.node(),
        };
        layout::compose(&self.layout, time, node, seq)
    }

    /// The smallest and largest ids of the tick holding `time`.
    #[napi]
    pub fn bounds_at(&self, time: Either4<BigInt, f64, String, DateTime<Utc>>) -> Result<IdBounds> {
        layout::bounds_at(&self.layout, time)
    }

    /// The layout.
    #[napi(getter)]
    pub fn layout(&self) -> crate::layout::Layout {
        crate::layout::Layout { inner: self.layout }
    }

    /// The node id (for a leased generator, the id leased).
    #[napi(getter)]
    pub fn node_id(&self) -> f64 {
        self.inner.node() as f64
    }

    /// Whether each tick's sequence starts at a random value (the `randomStart` option).
    #[napi(getter)]
    pub fn random_start(&self) -> bool {
        self.inner.random_start()
    }
}
