//! A work queue that can hold items back for a while before queueing them.

use std::fmt;
use std::hash::Hash;
use std::ops::Deref;
use std::time::Duration;

use super::{Queue, QueueConfig};

/// A [`Queue`] with [`DelayingQueue::add_after`] (client-go's `DelayingInterface`). Every
/// [`Queue`] method is available through `Deref`.
///
/// ```
/// use std::time::Duration;
/// use kube_codegen_runtime::workqueue::DelayingQueue;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = DelayingQueue::new();
/// q.add_after("retry", Duration::from_secs(5));
/// assert_eq!(q.len(), 0);
/// assert_eq!(q.get().await, Some("retry")); // after 5 s
/// # }
/// ```
pub struct DelayingQueue<T> {
    queue: Queue<T>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
        }
    }
}

impl<T> fmt::Debug for DelayingQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DelayingQueue").field(&self.queue).finish()
    }
}

impl<T> Default for DelayingQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Deref for DelayingQueue<T> {
    type Target = Queue<T>;

    fn deref(&self) -> &Queue<T> {
        &self.queue
    }
}

impl<T> DelayingQueue<T>
where
    T: Clone + Eq + Hash + Send + Sync + 'static,
{
    /// An empty queue.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::DelayingQueue::<String>::new();
    /// assert!(q.is_empty());
    /// ```
    pub fn new() -> Self {
        DelayingQueue {
            queue: Queue::new(),
        }
    }

    /// A queue with a name and metrics (see [`QueueConfig`]).
    ///
    /// ```
    /// use kube_codegen_runtime::workqueue::{DelayingQueue, QueueConfig};
    /// let q = DelayingQueue::<String>::with_config(QueueConfig::named("retries"));
    /// ```
    pub fn with_config(config: QueueConfig) -> Self {
        DelayingQueue {
            queue: Queue::with_config(config),
        }
    }

    /// Queues `item` once `delay` has passed (at once for a zero delay). If the item is already
    /// waiting, whichever deadline is earlier wins. Ignored after shutdown.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let q = kube_codegen_runtime::workqueue::DelayingQueue::new();
    /// q.add_after(1, Duration::ZERO);
    /// q.add_after(2, Duration::from_secs(60));
    /// assert_eq!((q.len(), q.waiting()), (1, 1));
    /// ```
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.add_after(item, delay);
    }

    /// The plain queue this one extends.
    ///
    /// ```
    /// let q = kube_codegen_runtime::workqueue::DelayingQueue::<u8>::new();
    /// let plain: &kube_codegen_runtime::workqueue::Queue<u8> = q.queue();
    /// ```
    pub fn queue(&self) -> &Queue<T> {
        &self.queue
    }
}
