//! Fan-out of notifications to event handlers: one unbounded queue and one task per handler
//! (client-go's `sharedProcessor` / `processorListener`), so a slow handler delays only itself.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::handler::{DeletedObject, EventHandler};

/// One notification for one handler.
pub(crate) enum Notification<K> {
    Add(Arc<K>, bool),
    Update(Arc<K>, Arc<K>),
    Delete(DeletedObject<K>),
    /// Everything before this was part of the handler's initial state.
    Synced,
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add(o, i) => Notification::Add(o.clone(), *i),
            Notification::Update(a, b) => Notification::Update(a.clone(), b.clone()),
            Notification::Delete(d) => Notification::Delete(d.clone()),
            Notification::Synced => Notification::Synced,
        }
    }
}

/// The receiving end of a listener's queue and its handler, until its task is spawned.
type Pending<K> = (
    mpsc::UnboundedReceiver<Notification<K>>,
    Arc<dyn EventHandler<K>>,
);

/// A registered handler: its queue, and (until its task is spawned) the receiving end.
pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    tx: mpsc::UnboundedSender<Notification<K>>,
    pending: Option<Pending<K>>,
    pub(crate) synced: Arc<AtomicBool>,
    /// Cancels this listener's task only (removal of the handler).
    pub(crate) cancel: CancellationToken,
}

impl<K: Send + Sync + 'static> Listener<K> {
    pub(crate) fn new(
        id: u64,
        handler: Arc<dyn EventHandler<K>>,
        parent: &CancellationToken,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Listener {
            id,
            tx,
            pending: Some((rx, handler)),
            synced: Arc::new(AtomicBool::new(false)),
            cancel: parent.child_token(),
        }
    }

    pub(crate) fn send(&self, n: Notification<K>) {
        // The task ends only on cancellation, after which nobody cares about the notification.
        let _ = self.tx.send(n);
    }

    /// The future that delivers this listener's notifications, the first time it is asked for.
    pub(crate) fn take_task(&mut self) -> Option<impl Future<Output = ()> + Send + 'static> {
        let (rx, handler) = self.pending.take()?;
        Some(run(rx, handler, self.synced.clone(), self.cancel.clone()))
    }
}

async fn run<K: Send + Sync + 'static>(
    mut rx: mpsc::UnboundedReceiver<Notification<K>>,
    handler: Arc<dyn EventHandler<K>>,
    synced: Arc<AtomicBool>,
    cancel: CancellationToken,
) {
    loop {
        let n = tokio::select! {
            biased;
            _ = cancel.cancelled() => return,
            n = rx.recv() => match n {
                Some(n) => n,
                None => return,
            },
        };
        let h = handler.as_ref();
        let outcome = catch_unwind(AssertUnwindSafe(|| match n {
            Notification::Add(o, initial) => h.on_add(o, initial),
            Notification::Update(old, new) => h.on_update(old, new),
            Notification::Delete(d) => h.on_delete(d),
            Notification::Synced => synced.store(true, Ordering::Release),
        }));
        if outcome.is_err() {
            tracing::error!(
                "an informer event handler panicked; it keeps receiving later notifications"
            );
        }
        // `recv` takes part in Tokio's cooperative budget, so a long backlog does not starve
        // other tasks on this worker.
    }
}
