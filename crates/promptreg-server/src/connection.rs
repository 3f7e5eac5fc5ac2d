//! One connection's life, as data: what it is doing (reading a request's
//! head, running a request, idle between requests, carrying the event
//! stream) and so when it must be closed. A connection that takes longer
//! than the header timeout to send a request's head, or that stays idle
//! longer than the idle timeout, is closed; so is one whose client has
//! read nothing of a response for the write timeout.
//!
//! The stream ([`TimedStream`]) and the requests ([`RequestGuard`]) record
//! what happens in a few atomics; `listener.rs` watches the deadline that
//! follows from them ([`Activity::deadline`]) and drops the connection
//! when it passes. Its task looks again when its timer fires
//! ([`Activity::next_look`]), and is woken only when a deadline may have
//! come before that timer: when the head of a request begins on an idle
//! connection. A request's start and end, which move the deadline later or
//! away, wake nobody: a kept-alive connection costs no wake-up and no timer
//! change per request.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::{Sleep, sleep};

/// How long a connection may take at each step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// From the connection's start, or the first byte of a later request,
    /// until the request's head is complete.
    pub(crate) header: Duration,
    /// Between requests on a kept-alive connection.
    pub(crate) idle: Duration,
    /// While the client reads nothing of a response.
    pub(crate) write: Duration,
}

/// "No request head is being read."
const NONE: u64 = u64::MAX;

/// What one connection is doing, shared by its stream, its requests and
/// the task that serves it. Times are milliseconds since `opened`.
#[derive(Debug)]
pub(crate) struct Activity {
    opened: Instant,
    in_flight: AtomicU32,
    /// When the connection last went idle or wrote while idle.
    idle_since: AtomicU64,
    /// When the head of the next request began to arrive (`NONE`: not yet).
    head_since: AtomicU64,
    events: AtomicBool,
    /// A write failed because the client read nothing for the write timeout.
    write_timed_out: AtomicBool,
    /// Wakes the serving task when the deadline may have moved earlier: a
    /// head began on an idle connection.
    changed: Notify,
}

impl Activity {
    /// A connection just accepted: its first request's head is timed from now.
    pub(crate) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            opened: Instant::now(),
            in_flight: AtomicU32::new(0),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            events: AtomicBool::new(false),
            write_timed_out: AtomicBool::new(false),
            changed: Notify::new(),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn at(&self, millis: u64) -> Instant {
        self.opened + Duration::from_millis(millis)
    }

    /// When the connection is to be closed if nothing happens before, and
    /// why; `None` while a request runs or the event stream flows.
    pub(crate) fn deadline(&self, timeouts: &Timeouts) -> Option<(Instant, &'static str)> {
        if self.events.load(Ordering::Relaxed) || self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        match self.head_since.load(Ordering::Acquire) {
            NONE => Some((
                self.at(self.idle_since.load(Ordering::Acquire)) + timeouts.idle,
                "idle",
            )),
            head => Some((self.at(head) + timeouts.header, "header")),
        }
    }

    /// When the serving task is to look at the deadline again, if nothing
    /// wakes it before: at the deadline, and no later than one idle
    /// timeout from now (a request that starts now and ends at once makes
    /// the connection idle until then, and its start and end wake
    /// nobody); never for the event stream, which is never idle.
    pub(crate) fn next_look(&self, timeouts: &Timeouts) -> Option<Instant> {
        if self.events.load(Ordering::Relaxed) {
            return None;
        }
        let latest = Instant::now() + timeouts.idle;
        Some(
            self.deadline(timeouts)
                .map_or(latest, |(at, _)| at.min(latest)),
        )
    }

    /// Whether the connection was closed because its client read nothing
    /// of a response for the write timeout.
    pub(crate) fn write_timed_out(&self) -> bool {
        self.write_timed_out.load(Ordering::Acquire)
    }

    /// Completes when the deadline may have changed.
    pub(crate) async fn changed(&self) {
        self.changed.notified().await;
    }

    /// A request's head is complete and its handler runs.
    pub(crate) fn request_started(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(NONE, Ordering::Release);
        RequestGuard(self.clone())
    }

    fn received(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self
                .head_since
                .compare_exchange(NONE, self.now(), Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            // The header timeout may end before the idle one would have.
            self.changed.notify_one();
        }
    }

    fn wrote(&self) {
        // A response still being written to a client that reads is not idle.
        if self.in_flight.load(Ordering::Relaxed) == 0 {
            self.idle_since.store(self.now(), Ordering::Release);
        }
    }
}

/// Held while a request's handler runs; dropping it may make the
/// connection idle.
pub(crate) struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let activity = &self.0;
        activity.idle_since.store(activity.now(), Ordering::Release);
        activity.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What a request knows of its connection (as axum's `ConnectInfo`).
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    activity: Arc<Activity>,
}

impl Connection {
    pub(crate) fn new(activity: Arc<Activity>) -> Connection {
        Connection { activity }
    }

    /// The connection now carries the event stream: it is never idle
    /// (its keep-alive comments flow), though a client that reads nothing
    /// is still dropped by the write timeout.
    pub(crate) fn carries_events(&self) {
        self.activity.events.store(true, Ordering::Relaxed);
    }
}

/// A TCP stream that records what it reads and writes in its
/// [`Activity`], and whose writes fail with `TimedOut` once the client has
/// taken nothing for the write timeout; a slow client that reads keeps
/// going.
pub(crate) struct TimedStream {
    inner: TcpStream,
    activity: Arc<Activity>,
    timeout: Duration,
    /// Started when a write could not proceed; cleared by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl TimedStream {
    pub(crate) fn new(inner: TcpStream, activity: Arc<Activity>, timeout: Duration) -> Self {
        TimedStream {
            inner,
            activity,
            timeout,
            stalled: None,
        }
    }

    /// `poll` of a write, with the timeout applied while it is pending.
    fn timed<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut TcpStream>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if let Poll::Ready(result) = poll(Pin::new(&mut self.inner), cx) {
            self.stalled = None;
            self.activity.wrote();
            return Poll::Ready(result);
        }
        let timeout = self.timeout;
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(sleep(timeout)));
        ready!(stalled.as_mut().poll(cx));
        // Closed with a reset, not a FIN queued behind what the client
        // never read: a closed socket holding unsent data would linger in
        // the kernel as long as the client keeps its window shut, and the
        // client would learn of the end only after draining it.
        let _ = self.inner.set_zero_linger();
        self.activity.write_timed_out.store(true, Ordering::Release);
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
        let before = buf.filled().len();
        let result = ready!(Pin::new(&mut self.inner).poll_read(cx, buf));
        if buf.filled().len() > before {
            self.activity.received();
        }
        Poll::Ready(result)
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

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUTS: Timeouts = Timeouts {
        header: Duration::from_secs(10),
        idle: Duration::from_secs(60),
        write: Duration::from_secs(30),
    };

    #[test]
    fn a_new_connection_has_the_header_timeout_to_send_its_first_head() {
        let activity = Activity::new();
        let (at, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(why, "header");
        assert_eq!(at, activity.opened + TIMEOUTS.header);
    }

    #[test]
    fn a_running_request_has_no_deadline_and_its_end_starts_the_idle_one() {
        let activity = Activity::new();
        let guard = activity.request_started();
        assert!(activity.deadline(&TIMEOUTS).is_none());
        drop(guard);
        let (_, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(why, "idle");
        activity.received();
        let (_, why) = activity.deadline(&TIMEOUTS).unwrap();
        assert_eq!(
            why, "header",
            "the first byte of the next request starts its head"
        );
    }

    #[test]
    fn the_event_stream_is_never_idle() {
        let activity = Activity::new();
        drop(activity.request_started());
        Connection::new(activity.clone()).carries_events();
        assert!(activity.deadline(&TIMEOUTS).is_none());
    }
}
