//! Server-side snowflake ids (`IDF.SNOWFLAKE name [COUNT n]`).
//!
//! Each name has a generator on the server's layout and node id, and a persisted time: ids are
//! made only in ticks that start before it, and it is moved ahead (with the tags, in the same
//! transactions) while ids are being made. A restart resumes after the persisted time, so even a
//! clock that stepped back across the restart cannot repeat an id.

use idforge::Clock;
use idforge::idforge_core::snowflake::SnowflakeGen;
use idforge::idforge_core::tick::Next;

use super::engine::Engine;
use super::lock::lock;
use super::tags::AllocError;

/// How far (ms) a generator may run ahead of the clock when a tick's sequence is used up.
const LEAD_MS: u64 = 1000;

/// One name's generator.
#[derive(Debug)]
pub(super) struct ClockState {
    generator: SnowflakeGen,
    /// Ids are made only in ticks starting before this persisted time (Unix ms).
    covered_ms: u64,
    wanted: bool,
    in_flight: Option<u64>,
}

impl Engine {
    /// Appends `n` fresh snowflake ids of `name` to `out`, in increasing order.
    pub async fn snowflakes(
        &self,
        name: &str,
        n: usize,
        out: &mut Vec<u64>,
    ) -> Result<(), AllocError> {
        let deadline = tokio::time::Instant::now() + self.policy.alloc_timeout;
        let goal = out.len() + n;
        loop {
            let persisted = self.persisted.notified();
            tokio::pin!(persisted);
            let mut sleep_until = None;
            let mut ask = false;
            let mut missing = false;
            'locked: {
                let mut clocks = lock(&self.clocks);
                if !self.leadership.serving() {
                    return Err(AllocError::NotLeader);
                }
                let Some(c) = clocks.get_mut(name) else {
                    missing = true;
                    break 'locked;
                };
                let now = self.clock.now_ms();
                let tick_ms = self.snowflake.tick_ms();
                // The latest time any id of this call may carry.
                let horizon = now.max(c.generator.high_water_ms()) + LEAD_MS + tick_ms;
                if horizon + self.policy.clock_window_ms / 2 >= c.covered_ms
                    && !c.wanted
                    && c.in_flight.is_none()
                {
                    c.wanted = true;
                    ask = true;
                }
                if horizon < c.covered_ms {
                    while out.len() < goal {
                        let at = out.len();
                        out.resize(goal, 0);
                        match c.generator.next_run(now, &mut out[at..]) {
                            Ok(Next::Id(k)) => out.truncate(at + k),
                            Ok(Next::Pending { until_ms }) => {
                                out.truncate(at);
                                sleep_until = Some(until_ms);
                                break;
                            }
                            Err(e) => {
                                out.truncate(at);
                                return Err(AllocError::Clock(e.to_string()));
                            }
                        }
                    }
                    if out.len() == goal {
                        drop(clocks);
                        if ask {
                            self.wake.notify_one();
                        }
                        self.metrics.ids(n as u64);
                        return Ok(());
                    }
                } else {
                    c.wanted = true;
                    ask = true;
                    persisted.as_mut().enable();
                }
            }
            if missing {
                self.load_clock(name).await?;
                continue;
            }
            if ask {
                self.wake.notify_one();
            }
            if let Some(until_ms) = sleep_until {
                let wait = until_ms.saturating_sub(self.clock.now_ms()).max(1);
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                continue;
            }
            if tokio::time::timeout_at(deadline, persisted).await.is_err() {
                let why = self
                    .failing()
                    .unwrap_or_else(|| "the store did not answer in time".into());
                return Err(AllocError::Store(why));
            }
        }
    }

    async fn load_clock(&self, name: &str) -> Result<(), AllocError> {
        let persisted = self.store.clock(name).await?;
        let generator = SnowflakeGen::new(self.snowflake, self.node, LEAD_MS)
            .map_err(|e| AllocError::Clock(e.to_string()))?;
        let covered_ms = match persisted {
            Some(ms) => {
                let ms = u64::try_from(ms).unwrap_or(0);
                generator.resume_after_ms(ms);
                ms
            }
            None => 0,
        };
        lock(&self.clocks).entry(name.into()).or_insert(ClockState {
            generator,
            covered_ms,
            wanted: false,
            in_flight: None,
        });
        Ok(())
    }

    /// Takes the clocks that asked for a persist: (name, new persisted time).
    pub(super) fn clock_moves(&self) -> Vec<(String, i64)> {
        let now = self.clock.now_ms();
        let mut moves = Vec::new();
        for (name, c) in lock(&self.clocks).iter_mut() {
            if !c.wanted || c.in_flight.is_some() {
                continue;
            }
            let target = now.max(c.generator.high_water_ms()) + self.policy.clock_window_ms;
            c.wanted = false;
            c.in_flight = Some(target);
            moves.push((name.to_string(), target as i64));
        }
        moves
    }

    /// Applies committed clock moves.
    pub(super) fn clocks_persisted(&self, moves: &[(String, i64)]) {
        let mut clocks = lock(&self.clocks);
        for (name, target) in moves {
            if let Some(c) = clocks.get_mut(name.as_str()) {
                c.in_flight = None;
                c.covered_ms = c.covered_ms.max(*target as u64);
            }
        }
    }

    /// Puts back clock moves whose transaction failed.
    pub(super) fn clocks_unpersisted(&self, moves: &[(String, i64)]) {
        let mut clocks = lock(&self.clocks);
        for (name, _) in moves {
            if let Some(c) = clocks.get_mut(name.as_str()) {
                c.in_flight = None;
                c.wanted = true;
            }
        }
    }
}
