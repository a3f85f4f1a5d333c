//! Fan-out of notifications to event handlers: one unbounded queue and one task per handler
//! (client-go's `sharedProcessor` / `processorListener`), so a slow handler delays only itself.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::handler::DeletedObject;
use super::metrics::{Queued, QueuedGuard};
use crate::store::{Obj, typed};

/// One notification for one handler, about objects of whatever kind the informer holds (the
/// handler's own delivery function gives them back their type).
#[derive(Clone)]
pub(crate) enum Notification {
    Add(Obj, bool),
    Update(Obj, Obj),
    Delete(Deleted),
    /// Everything before this was part of the handler's initial state.
    Synced,
}

/// [`DeletedObject`] of a stored object.
#[derive(Clone)]
pub(crate) enum Deleted {
    Obj(Obj),
    Tombstone {
        key: String,
        last_known: Option<Obj>,
    },
}

impl Deleted {
    /// The same, typed (`None` only for an object of another type, which does not happen).
    pub(crate) fn typed<K: Send + Sync + 'static>(&self) -> Option<DeletedObject<K>> {
        Some(match self {
            Deleted::Obj(o) => DeletedObject::Obj(typed(o)?),
            Deleted::Tombstone { key, last_known } => DeletedObject::Tombstone {
                key: key.clone(),
                last_known: match last_known {
                    Some(o) => Some(typed(o)?),
                    None => None,
                },
            },
        })
    }
}

/// A handler as the informer sees it: a function taking any notification but `Synced` (made
/// for each handler by `add_event_handler`, which knows the object type).
pub(crate) type Deliver = Arc<dyn Fn(Notification) + Send + Sync>;

/// A notification bound to its handler, ready to run on the listener's task. Queues carry these
/// so that the queue and the task are compiled once, not once for every object type.
type Delivery = Box<dyn FnOnce() + Send>;

/// A registered handler: its queue, and (until its task is spawned) the receiving end.
pub(crate) struct Listener {
    pub(crate) id: u64,
    tx: mpsc::UnboundedSender<Delivery>,
    deliver: Deliver,
    pending: Option<mpsc::UnboundedReceiver<Delivery>>,
    pub(crate) synced: Arc<AtomicBool>,
    /// Cancels this listener's task only (removal of the handler).
    pub(crate) cancel: CancellationToken,
    /// The informer's queued-items gauge, if it has metrics.
    queued: Option<Arc<Queued>>,
}

impl Listener {
    pub(crate) fn new(
        id: u64,
        deliver: Deliver,
        parent: &CancellationToken,
        queued: Option<Arc<Queued>>,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Listener {
            id,
            tx,
            deliver,
            pending: Some(rx),
            synced: Arc::new(AtomicBool::new(false)),
            cancel: parent.child_token(),
            queued,
        }
    }

    pub(crate) fn send(&self, n: Notification) {
        let delivery: Delivery = match n {
            Notification::Synced => {
                let synced = self.synced.clone();
                Box::new(move || synced.store(true, Ordering::Release))
            }
            n => {
                let deliver = self.deliver.clone();
                match &self.queued {
                    None => Box::new(move || deliver(n)),
                    Some(q) => {
                        q.inc();
                        // Counted until delivered, or dropped with the queue.
                        let guard = QueuedGuard(q.clone());
                        Box::new(move || {
                            deliver(n);
                            drop(guard);
                        })
                    }
                }
            }
        };
        // The task ends only on cancellation, after which nobody cares about the notification.
        let _ = self.tx.send(delivery);
    }

    /// The task that delivers this listener's notifications, the first time it is asked for.
    pub(crate) fn take_task(&mut self) -> Option<ListenerTask> {
        let rx = self.pending.take()?;
        Some(ListenerTask {
            rx,
            cancel: self.cancel.clone(),
        })
    }
}

/// A listener's delivery loop, not yet running (the same type for every object type).
pub(crate) struct ListenerTask {
    rx: mpsc::UnboundedReceiver<Delivery>,
    cancel: CancellationToken,
}

impl ListenerTask {
    /// Runs the loop on `rt`.
    pub(crate) fn spawn(self, rt: &tokio::runtime::Handle) -> tokio::task::JoinHandle<()> {
        rt.spawn(run(self.rx, self.cancel))
    }
}

async fn run(mut rx: mpsc::UnboundedReceiver<Delivery>, cancel: CancellationToken) {
    loop {
        let deliver = tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            n = rx.recv() => match n {
                Some(n) => n,
                None => return,
            },
        };
        if catch_unwind(AssertUnwindSafe(deliver)).is_err() {
            tracing::error!(
                "an informer event handler panicked; it keeps receiving later notifications"
            );
        }
        // `recv` takes part in Tokio's cooperative budget, so a long backlog does not starve
        // other tasks on this worker.
    }
}
