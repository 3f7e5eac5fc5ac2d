//! Connections with a write timeout: a client that stops reading a
//! response does not hold its connection (and the response's memory)
//! forever. The event stream is exempt: its slow clients are dropped by
//! the ring of `events.rs`, with a `reconnect` event.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Sleep, sleep};

/// Accepts TCP connections whose writes time out.
pub(crate) struct TimedListener {
    listener: TcpListener,
    write_timeout: Duration,
}

impl TimedListener {
    pub(crate) fn new(listener: TcpListener, write_timeout: Duration) -> TimedListener {
        TimedListener {
            listener,
            write_timeout,
        }
    }
}

impl Listener for TimedListener {
    type Io = TimedStream;
    type Addr = Connection;

    async fn accept(&mut self) -> (TimedStream, Connection) {
        let (stream, _) = Listener::accept(&mut self.listener).await;
        let connection = Connection {
            events: Arc::new(AtomicBool::new(false)),
        };
        let stream = TimedStream {
            inner: stream,
            timeout: self.write_timeout,
            stalled: None,
            events: connection.events.clone(),
        };
        (stream, connection)
    }

    fn local_addr(&self) -> io::Result<Connection> {
        self.listener.local_addr()?;
        Ok(Connection {
            events: Arc::new(AtomicBool::new(false)),
        })
    }
}

/// What a request knows of its connection (as axum's `ConnectInfo`).
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    /// Set once the connection carries the event stream: its writes may
    /// then wait as long as the stream's own rule allows.
    events: Arc<AtomicBool>,
}

impl Connection {
    /// Exempts the connection from the write timeout.
    pub(crate) fn carries_events(&self) {
        self.events.store(true, Ordering::Relaxed);
    }
}

impl Connected<IncomingStream<'_, TimedListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, TimedListener>) -> Connection {
        stream.remote_addr().clone()
    }
}

/// A TCP stream whose writes fail with `TimedOut` once the client has
/// taken nothing for the timeout; a slow client that reads keeps going.
pub(crate) struct TimedStream {
    inner: TcpStream,
    timeout: Duration,
    /// Started when a write could not proceed; cleared by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
    events: Arc<AtomicBool>,
}

impl TimedStream {
    /// `poll` of a write, with the timeout applied while it is pending.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if let Poll::Ready(result) = poll(Pin::new(&mut self.inner), cx) {
            self.stalled = None;
            return Poll::Ready(result);
        }
        if self.events.load(Ordering::Relaxed) {
            return Poll::Pending;
        }
        let timeout = self.timeout;
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(sleep(timeout)));
        ready!(stalled.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client read nothing for {} s: connection closed",
                timeout.as_secs_f64()
            ),
        )))
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.timed(cx, |inner, cx| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.timed(cx, |inner, cx| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.timed(cx, AsyncWrite::poll_flush)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
