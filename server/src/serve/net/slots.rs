//! A port's table of open connections, bounded: a connection arriving past the cap closes the
//! oldest one still waiting for a request (an idle flood only ever evicts itself, since a real
//! client sends its request as soon as it connects), or is refused when every open connection
//! is answering one. Used by the metrics and HTTP ports.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::task::AbortHandle;

use crate::serve::lock::lock;

/// One open connection.
struct Open {
    /// Waiting for a request (handshake included): the kind a new one may evict.
    waiting: Arc<AtomicBool>,
    task: AbortHandle,
}

/// The open connections of one port, oldest first.
pub(crate) struct Slots {
    open: Mutex<BTreeMap<u64, Open>>,
    next_id: std::sync::atomic::AtomicU64,
    max: usize,
}

/// One connection's place in [`Slots`]: marks it busy or waiting, and leaves the table when
/// dropped, however its task ends (done, timed out, aborted).
pub(crate) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    waiting: Arc<AtomicBool>,
}

impl Slot {
    /// Marks the connection as answering a request (`false`) or waiting for one (`true`).
    pub(crate) fn set_waiting(&self, waiting: bool) {
        self.waiting.store(waiting, Ordering::Relaxed);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        lock(&self.slots.open).remove(&self.id);
    }
}

impl Slots {
    /// A table of at most `max` connections.
    pub(crate) fn new(max: usize) -> Arc<Slots> {
        Arc::new(Slots {
            open: Mutex::new(BTreeMap::new()),
            next_id: std::sync::atomic::AtomicU64::new(0),
            max,
        })
    }

    /// Admits one more connection, whose task `spawn` starts with its [`Slot`]: how many
    /// waiting connections were closed to make room, or `None` (nothing spawned) when every
    /// open connection is answering.
    pub(crate) fn admit(
        self: &Arc<Self>,
        spawn: impl FnOnce(Slot) -> AbortHandle,
    ) -> Option<usize> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        // Held while the task is spawned, so its `Slot` cannot leave before it is listed.
        let mut open = lock(&self.open);
        let closed = make_room(&mut open, self.max)?;
        let waiting = Arc::new(AtomicBool::new(true));
        let task = spawn(Slot {
            slots: self.clone(),
            id,
            waiting: waiting.clone(),
        });
        open.insert(id, Open { waiting, task });
        Some(closed)
    }

    /// Closes every open connection (a shutdown that did not drain in time).
    pub(crate) fn abort_all(&self) {
        for (_, c) in std::mem::take(&mut *lock(&self.open)) {
            c.task.abort();
        }
    }

    /// How many connections are open.
    pub(crate) fn len(&self) -> usize {
        lock(&self.open).len()
    }
}

/// Makes room for one more under `max` by closing the oldest connections still waiting for
/// their request: how many it closed, or `None` when every open connection is answering.
fn make_room(open: &mut BTreeMap<u64, Open>, max: usize) -> Option<usize> {
    let mut closed = 0;
    while open.len() >= max {
        let oldest = open
            .iter()
            .find(|(_, c)| c.waiting.load(Ordering::Relaxed))
            .map(|(id, _)| *id)?;
        if let Some(c) = open.remove(&oldest) {
            c.task.abort();
            closed += 1;
        }
    }
    Some(closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_table_evicts_the_oldest_waiting_connection_or_refuses() {
        let slots = Slots::new(2);
        let park = || {
            let (tx, rx) = std::sync::mpsc::channel::<Slot>();
            let task = tokio::spawn(std::future::pending::<()>());
            (tx, rx, task.abort_handle())
        };
        let mut held = Vec::new();
        for _ in 0..2 {
            let (tx, rx, handle) = park();
            assert_eq!(
                slots.admit(|slot| {
                    tx.send(slot).unwrap();
                    handle
                }),
                Some(0)
            );
            held.push(rx.recv().unwrap());
        }
        held[0].set_waiting(false);
        let (tx, rx, handle) = park();
        assert_eq!(
            slots.admit(|slot| {
                tx.send(slot).unwrap();
                handle
            }),
            Some(1),
            "the waiting one goes"
        );
        let third = rx.recv().unwrap();
        drop(held.pop());
        third.set_waiting(false);
        let (_, _, handle) = park();
        assert_eq!(slots.len(), 2);
        let refused = slots.admit(|_| handle);
        assert_eq!(refused, None, "every connection is answering");
    }
}
