//! The stream one client reads: its query, the handler, and the feed that
//! replays what it missed from the store, then follows the broadcast.

#[allow(clippy::wildcard_imports)]
use super::*;

/// `?after=ID`, for clients that cannot set `Last-Event-ID`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct EventsQuery {
    /// Replay the events after this id (as `Last-Event-ID`).
    after: Option<u64>,
}

/// The stream of changes.
#[utoipa::path(
    get,
    path = "/v1/events",
    tag = "events",
    params(
        EventsQuery,
        ("Last-Event-ID" = Option<u64>, Header, description = "Replay every event after this id, in order"),
    ),
    responses(
        (status = 200, description = "Server-sent events: `id` is the event's id, `event` its type, `data` its JSON. \
            A release is one `released` event whose `moves` list every prompt it moved (`prompt`, `from`, `to`); \
            a single move, by hand, by a rollback or by a push (`latest`), is a `label_moved`. \
            Each change to what a label resolves to ends with one `revision_created` \
            (`label`, `revision`, `digest`: the label's bundle ETag, `cause`, `actor`, `reason`). \
            A split's step is its own event, `split_start`, `split_share`, `split_promote` or `split_abort`, \
            whose data is a `split_changed` (`label`, `split`, `step`, `share`, `digest`, `actor`, `reason`). \
            A final `reconnect` event (no id) asks the client to reconnect with `Last-Event-ID`: \
            it fell too far behind, or the server is shutting down.", content_type = "text/event-stream", body = String),
        (status = 400, description = "Invalid Last-Event-ID", body = ProblemDetails, content_type = "application/problem+json"),
        crate::responses::KeyOrStore,
    ),
    security(("api_key" = [])),
)]
pub(crate) async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    Query(query): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, Problem> {
    let after = match headers.get("last-event-id") {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| {
                    Problem::bad_request(
                        ProblemCode::InvalidLastEventId,
                        "Last-Event-ID must be the id of an event this server sent (a number)",
                    )
                })?,
        ),
        None => query.after,
    };
    // A soft limit: two clients arriving together may both pass it.
    if state.events.clients() >= state.config.max_streams {
        state.metrics.overloaded("streams");
        return Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ProblemCode::TooManyStreams,
            format!(
                "the server follows {} event streams already, its limit: retry after Retry-After seconds",
                state.config.max_streams
            ),
        ));
    }
    // Subscribe before reading the past, so no event falls in between.
    let live = state.events.sender.subscribe();
    let last = match after {
        Some(after) => after,
        None => state.store.last_event_id().await?,
    };
    let secret = headers
        .get(header::AUTHORIZATION)
        .and_then(auth::bearer)
        .map(str::to_owned);
    let feed = Feed {
        state: state.clone(),
        refused: state.events.refused.subscribe(),
        joined: state.events.join(secret),
        live,
        shutdown: state.shutdown.subscribe(),
        pending: VecDeque::new(),
        last,
        replaying: after.is_some(),
        done: false,
        pack: caller.pack_filter(),
    };
    let stream = futures_util::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(state.config.keep_alive)))
}

/// One client's position in the stream.
struct Feed {
    state: AppState,
    /// The readers refused, as last checked.
    refused: watch::Receiver<Arc<HashSet<Reader>>>,
    /// The caller, counted among the readers.
    joined: Joined,
    live: broadcast::Receiver<Arc<Delivered>>,
    shutdown: watch::Receiver<bool>,
    pending: VecDeque<Arc<Delivered>>,
    /// The id of the last event sent (or skipped).
    last: u64,
    replaying: bool,
    done: bool,
    /// A key for one pack sees that pack's events only.
    pack: Option<String>,
}

impl Feed {
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if self.done {
                return None;
            }
            // Refused before this stream opened (its key still cached as
            // good when it did), or since.
            if self
                .refused
                .borrow_and_update()
                .contains(&self.joined.reader)
            {
                return Some(self.reconnect("unauthorized"));
            }
            if let Some(event) = self.pending.pop_front() {
                if event.id <= self.last {
                    continue;
                }
                self.last = event.id;
                if self.pack.as_ref().is_none_or(|p| *p == event.pack) {
                    return Some(event.to_sse());
                }
                continue;
            }
            if self.replaying {
                match self.state.store.events_since(self.last, PAGE).await {
                    Ok(batch) if batch.is_empty() => self.replaying = false,
                    Ok(batch) => self
                        .pending
                        .extend(batch.iter().map(|e| Arc::new(Delivered::of(e)))),
                    Err(_) => return Some(self.reconnect("store-unavailable")),
                }
                continue;
            }
            if *self.shutdown.borrow() {
                return Some(self.reconnect("shutdown"));
            }
            tokio::select! {
                received = self.live.recv() => match received {
                    Ok(event) => self.pending.push_back(event),
                    Err(broadcast::error::RecvError::Lagged(_)) => return Some(self.reconnect("too-slow")),
                    Err(broadcast::error::RecvError::Closed) => return Some(self.reconnect("shutdown")),
                },
                changed = self.shutdown.changed() => if changed.is_err() {
                    return Some(self.reconnect("shutdown"));
                },
                changed = self.refused.changed() => if changed.is_err() {
                    return Some(self.reconnect("shutdown"));
                },
            }
        }
    }

    /// The last event of a stream: reconnect with `Last-Event-ID` (the id
    /// of the last event received; this one has none).
    fn reconnect(&mut self, reason: &str) -> SseEvent {
        self.done = true;
        SseEvent::default()
            .event("reconnect")
            .retry(RETRY)
            .data(json!({ "reason": reason, "last_event_id": self.last }).to_string())
    }
}
