//! The HTTP side of every provider: one POST with retries on 429 and 5xx (honouring
//! `Retry-After`), then the reply read as server-sent events with an idle timeout. Every wait
//! also watches the cancel token, so Ctrl-C stops the request in flight.

use std::{pin::Pin, time::Duration};

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use staged_core::CancelToken;

use crate::{ConfigError, ModelError, ProviderConfig};

/// The longest `Retry-After` honoured; a provider asking for more gets the request retried
/// after this long.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(120);
/// The first backoff without `Retry-After`; it doubles with each retry.
const BASE_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// A provider's HTTP endpoint with its headers and retry policy.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    provider: String,
    max_retries: u32,
    idle: Duration,
}

type EventStream =
    Pin<Box<dyn Stream<Item = Result<Event, EventStreamError<reqwest::Error>>> + Send>>;

/// The events of one streamed reply.
pub(crate) struct SseStream {
    events: EventStream,
    provider: String,
    idle: Duration,
}

impl std::fmt::Debug for SseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseStream").field("provider", &self.provider).finish_non_exhaustive()
    }
}

impl Http {
    /// An endpoint for `config`, sending `auth` headers (built from the API key) and the
    /// configured extra headers with every request.
    pub(crate) fn new(
        config: &ProviderConfig,
        auth: &[(&str, String)],
    ) -> Result<Self, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { name: config.name.clone(), message };
        let mut headers = HeaderMap::new();
        let pairs = auth
            .iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone()))
            .chain(config.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (name, value) in pairs {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|err| invalid(format!("header name `{name}`: {err}")))?;
            let mut value = HeaderValue::from_str(&value)
                .map_err(|err| invalid(format!("header `{name}` has an invalid value: {err}")))?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|err| invalid(format!("cannot build the HTTP client: {err}")))?;
        Ok(Self {
            client,
            url: config.endpoint_url(),
            headers,
            provider: config.name.clone(),
            max_retries: config.max_retries,
            idle: config.stream_idle_timeout,
        })
    }

    /// POSTs `body` and returns the event stream once the provider answered 2xx. 429 and 5xx
    /// are retried up to `max_retries` times, after `Retry-After` when the provider sent one.
    pub(crate) async fn post_stream(
        &self,
        body: &serde_json::Value,
        cancel: &CancelToken,
    ) -> Result<SseStream, ModelError> {
        let bytes = serde_json::to_vec(body).map_err(|err| ModelError::Protocol {
            provider: self.provider.clone(),
            message: format!("cannot encode the request: {err}"),
        })?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let request = self
                .client
                .post(&self.url)
                .headers(self.headers.clone())
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .body(bytes.clone())
                .send();
            let response = tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                res = request => res,
            };
            let response = match response {
                Ok(response) => response,
                Err(err) => return Err(self.send_error(&err)),
            };
            let status = response.status();
            if status.is_success() {
                let events = response.bytes_stream().eventsource();
                return Ok(SseStream {
                    events: Box::pin(events),
                    provider: self.provider.clone(),
                    idle: self.idle,
                });
            }
            let wait = retry_wait(response.headers(), attempt);
            let body_text = tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                text = response.text() => text.unwrap_or_default(),
            };
            let err = self.status_error(status.as_u16(), attempt, body_text);
            if !err.is_retryable() || attempt > self.max_retries {
                return Err(err);
            }
            tokio::select! {
                () = cancel.cancelled() => return Err(ModelError::Cancelled),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    fn send_error(&self, err: &reqwest::Error) -> ModelError {
        let mut message = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            message = format!("{message}: {cause}");
            source = cause.source();
        }
        ModelError::Unreachable { provider: self.provider.clone(), url: self.url.clone(), message }
    }

    fn status_error(&self, status: u16, attempts: u32, body: String) -> ModelError {
        let provider = self.provider.clone();
        match status {
            400 => ModelError::BadRequest { provider, body },
            401 | 403 => ModelError::Auth { provider, status, body },
            _ => ModelError::Status { provider, status, attempts, body },
        }
    }
}

impl SseStream {
    /// The next event; `None` at the end of the stream. Fails when nothing arrives for the
    /// idle timeout, when the connection breaks, or when `cancel` fires.
    pub(crate) async fn next(&mut self, cancel: &CancelToken) -> Result<Option<Event>, ModelError> {
        let next = tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            next = tokio::time::timeout(self.idle, self.events.next()) => next,
        };
        match next {
            Err(_) => {
                Err(ModelError::IdleTimeout { provider: self.provider.clone(), idle: self.idle })
            }
            Ok(None) => Ok(None),
            Ok(Some(Ok(event))) => Ok(Some(event)),
            Ok(Some(Err(err))) => Err(ModelError::Stream {
                provider: self.provider.clone(),
                message: err.to_string(),
            }),
        }
    }

    /// The provider's name, for errors raised while parsing.
    pub(crate) fn provider(&self) -> &str {
        &self.provider
    }

    /// A protocol error for this stream.
    pub(crate) fn malformed(&self, message: impl Into<String>) -> ModelError {
        ModelError::Protocol { provider: self.provider.clone(), message: message.into() }
    }
}

/// How long to wait before retry number `attempt`: the provider's `retry-after-ms` or
/// `Retry-After` (seconds) when present, else an exponential backoff.
fn retry_wait(headers: &HeaderMap, attempt: u32) -> Duration {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let hinted = header("retry-after-ms")
        .and_then(|ms| ms.parse::<f64>().ok())
        .map(|ms| ms / 1000.0)
        .or_else(|| header("retry-after").and_then(|secs| secs.parse::<f64>().ok()));
    match hinted {
        Some(secs) if secs.is_finite() && secs >= 0.0 => {
            Duration::from_secs_f64(secs).min(MAX_RETRY_WAIT)
        }
        _ => BASE_BACKOFF
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
            .min(MAX_BACKOFF),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_wins_over_backoff_and_is_capped() {
        assert_eq!(retry_wait(&headers(&[("retry-after", "3")]), 1), Duration::from_secs(3));
        assert_eq!(retry_wait(&headers(&[("retry-after", "0")]), 3), Duration::ZERO);
        assert_eq!(
            retry_wait(&headers(&[("retry-after-ms", "250"), ("retry-after", "9")]), 1),
            Duration::from_millis(250)
        );
        assert_eq!(retry_wait(&headers(&[("retry-after", "86400")]), 1), MAX_RETRY_WAIT);
        assert_eq!(retry_wait(&headers(&[]), 1), Duration::from_millis(500));
        assert_eq!(retry_wait(&headers(&[]), 2), Duration::from_secs(1));
        assert_eq!(retry_wait(&headers(&[("retry-after", "soon")]), 10), MAX_BACKOFF);
    }
}
