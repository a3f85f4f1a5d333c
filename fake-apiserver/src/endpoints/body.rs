//! The response body of the fake server: a complete buffer, or a stream of watch lines. A
//! stream ends cleanly when its sender goes, or abruptly — as a dropped connection — when the
//! sender puts [`dropped_marker`] in it (a zero-length chunk, which no watch line is: each ends
//! with a newline).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;

/// A watch stream that ended as a dropped connection does (a fault injected through
/// [`Faults::drop_connections`](crate::faults::Faults::drop_connections), or replayed from a
/// recording where the stream was cut): over HTTPS the connection is closed without the
/// chunked body's end, and an in-process client reads this error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection was dropped in the middle of the response")]
pub struct ConnectionDropped;

/// The chunk that tells a streamed body to end as a dropped connection.
pub(crate) fn dropped_marker() -> Bytes {
    Bytes::new()
}

/// A response body: either complete, or the lines of a watch as they happen.
#[derive(Debug)]
pub struct ResponseBody {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Full(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl ResponseBody {
    /// A complete body.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        ResponseBody {
            inner: Inner::Full(Some(bytes.into())),
        }
    }

    /// An empty body.
    pub fn empty() -> Self {
        ResponseBody {
            inner: Inner::Full(None),
        }
    }

    /// Whether the whole body is in memory (not a stream).
    pub(crate) fn is_complete(&self) -> bool {
        matches!(self.inner, Inner::Full(_))
    }

    /// The bytes of a complete body (empty for an empty one), or the stream's receiver.
    pub(crate) fn into_parts(self) -> Result<Bytes, mpsc::Receiver<Bytes>> {
        match self.inner {
            Inner::Full(b) => Ok(b.unwrap_or_default()),
            Inner::Stream(rx) => Err(rx),
        }
    }

    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Self {
        ResponseBody {
            inner: Inner::Stream(rx),
        }
    }
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = ConnectionDropped;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, ConnectionDropped>>> {
        match &mut self.inner {
            Inner::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Inner::Stream(rx) => rx.poll_recv(cx).map(|o| {
                o.map(|b| {
                    if b.is_empty() {
                        // Nothing more comes: the stream is over, as its connection would be.
                        rx.close();
                        Err(ConnectionDropped)
                    } else {
                        Ok(Frame::data(b))
                    }
                })
            }),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.inner, Inner::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Inner::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Inner::Full(None) => SizeHint::with_exact(0),
            Inner::Stream(_) => SizeHint::default(),
        }
    }
}
