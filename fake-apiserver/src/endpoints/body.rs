//! The response body of the fake server: a complete buffer, or a stream of watch lines.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;

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

    pub(crate) fn stream(rx: mpsc::Receiver<Bytes>) -> Self {
        ResponseBody {
            inner: Inner::Stream(rx),
        }
    }
}

impl http_body::Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.inner {
            Inner::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Inner::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
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
