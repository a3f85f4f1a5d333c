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

/// A notification bound to its handler, ready to run on the listener's task. Queues carry these
/// rather than `Notification<K>`s so that the queue and the task are compiled once, not once for
/// every object type.
type Delivery = Box<dyn FnOnce() + Send>;

/// A registered handler: its queue, and (until its task is spawned) the receiving end.
pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    tx: mpsc::UnboundedSender<Delivery>,
    handler: Arc<dyn EventHandler<K>>,
    pending: Option<mpsc::UnboundedReceiver<Delivery>>,
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
            handler,
            pending: Some(rx),
            synced: Arc::new(AtomicBool::new(false)),
            cancel: parent.child_token(),
        }
    }

    pub(crate) fn send(&self, n: Notification<K>) {
        let h = self.handler.clone();
        let synced = self.synced.clone();
        let delivery: Delivery = Box::new(move || match n {
            Notification::Add(o, initial) => h.on_add(o, initial),
            Notification::Update(old, new) => h.on_update(old, new),
            Notification::Delete(d) => h.on_delete(d),
            Notification::Synced => synced.store(true, Ordering::Release),
        });
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
