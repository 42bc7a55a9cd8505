//! The line of argon2 checks: at most `auth-concurrency` run at once, in three lanes (trusted
//! addresses, unknown ones, then those that failed lately).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::serve::lock::lock;

/// How long an address that failed an AUTH waits behind those that did not.
pub const SUSPECT_FOR: Duration = Duration::from_secs(60);

/// How long an address that passed an AUTH goes first (while it fails none).
pub const TRUSTED_FOR: Duration = Duration::from_secs(3600);

/// Which lane of the [`Gate`] a check waits in, in the order they are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    /// From an address that passed an AUTH within [`TRUSTED_FOR`] and failed none since (and
    /// hashing new users' passwords).
    First,
    /// From an address neither trusted nor suspect.
    Unknown,
    /// From an address that failed an AUTH within [`SUSPECT_FOR`] and passed none since.
    Later,
}

/// At most `max` argon2 runs at once; a freed slot goes to the longest waiter of the first
/// lane that has one.
#[derive(Debug)]
pub(super) struct Gate {
    max: usize,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
pub(super) struct GateState {
    running: usize,
    /// By [`Lane`], in order.
    lanes: [VecDeque<oneshot::Sender<()>>; 3],
}

/// A slot of the [`Gate`], handed on when dropped.
#[derive(Debug)]
pub(super) struct Slot(Arc<Gate>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A place in line; if it is dropped (the client left) after the slot was handed to it, the
/// slot goes on to the next.
pub(super) struct Waiting {
    gate: Arc<Gate>,
    rx: oneshot::Receiver<()>,
    granted: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.granted {
            return;
        }
        self.rx.close();
        if self.rx.try_recv().is_ok() {
            self.gate.release();
        }
    }
}

impl Gate {
    pub(super) fn new(max: usize) -> Gate {
        Gate {
            max,
            state: Mutex::new(GateState::default()),
        }
    }

    /// Waits for a slot in `lane`.
    pub(super) async fn enter(self: &Arc<Gate>, lane: Lane) -> Slot {
        let rx = {
            let mut state = lock(&self.state);
            if state.running < self.max {
                state.running += 1;
                return Slot(self.clone());
            }
            let (tx, rx) = oneshot::channel();
            state.lanes[lane as usize].push_back(tx);
            rx
        };
        let mut waiting = Waiting {
            gate: self.clone(),
            rx,
            granted: false,
        };
        // The sender is only dropped unsent by `release` skipping a closed receiver, never
        // while this one waits: an error here cannot happen, and would mean no slot was given.
        let given = (&mut waiting.rx).await.is_ok();
        waiting.granted = given;
        if !given {
            // Unreachable in practice; take a slot the plain way rather than run unbounded.
            drop(waiting);
            return Box::pin(self.enter(lane)).await;
        }
        Slot(self.clone())
    }

    /// Hands a freed slot to the next waiter still there, or frees it.
    pub(super) fn release(&self) {
        let mut state = lock(&self.state);
        loop {
            let next = state.lanes.iter_mut().find_map(VecDeque::pop_front);
            match next {
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    state.running = state.running.saturating_sub(1);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a runtime of its own, on this thread.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_gate_serves_the_first_lane_first_and_loses_no_slot() {
        block_on(async {
            let gate = Arc::new(Gate::new(1));
            let held = gate.enter(Lane::Later).await;
            let order = Arc::new(Mutex::new(Vec::new()));
            let mut tasks = Vec::new();
            // Three from flooding addresses line up before one from an unknown address and two
            // from addresses with a client logged in.
            for (name, lane) in [
                ("later1", Lane::Later),
                ("later2", Lane::Later),
                ("later3", Lane::Later),
                ("unknown", Lane::Unknown),
                ("first1", Lane::First),
                ("first2", Lane::First),
            ] {
                let (gate, order) = (gate.clone(), order.clone());
                tasks.push(tokio::spawn(async move {
                    let _slot = gate.enter(lane).await;
                    lock(&order).push(name);
                    tokio::task::yield_now().await;
                }));
                tokio::task::yield_now().await;
            }
            // One waiter leaves (its client went away) before its turn.
            let gone = tasks.remove(1);
            gone.abort();
            let _ = gone.await;
            drop(held);
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(
                *lock(&order),
                ["first1", "first2", "unknown", "later1", "later3"]
            );
            // The slot came back.
            let a = gate.enter(Lane::Later).await;
            assert_eq!(lock(&gate.state).running, 1);
            drop(a);
            assert_eq!(lock(&gate.state).running, 0);
        });
    }

    #[test]
    fn a_slot_handed_to_a_waiter_that_left_goes_on() {
        block_on(async {
            let gate = Arc::new(Gate::new(1));
            let held = gate.enter(Lane::First).await;
            let mut waiter = Box::pin(gate.enter(Lane::First));
            // Registered in line, then the slot is handed to it while nobody polls it.
            assert!(futures_poll(&mut waiter).is_none());
            drop(held);
            drop(waiter);
            assert_eq!(lock(&gate.state).running, 0, "the slot came back");
            let _again = gate.enter(Lane::Later).await;
        });
    }

    /// Polls a future once.
    fn futures_poll<F: std::future::Future + Unpin>(f: &mut F) -> Option<F::Output> {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match std::pin::Pin::new(f).poll(&mut cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        }
    }
}
