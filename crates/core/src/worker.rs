//! The message of a blocking worker that did not return: a tool or an action that runs its work
//! on `spawn_blocking` reports a [`JoinError`] through [`worker_failure`], never formatted raw,
//! so a panic's message reaches a model or a terminal cut short.

use tokio::task::JoinError;

/// How much of a panic's message a worker failure quotes.
const PANIC_MESSAGE_CHARS: usize = 200;

/// The message for a worker thread that did not return: `<what> worker failed: ...`, quoting at
/// most the first 200 characters of a panic's message (a panic of globset's or regex's can
/// carry a megabyte of generated regex, which must not reach a model or a terminal whole).
pub fn worker_failure(what: &str, err: JoinError) -> String {
    if !err.is_panic() {
        return format!("{what} worker failed: {err}");
    }
    let payload = err.into_panic();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("no message");
    let mut quoted: String = message.chars().take(PANIC_MESSAGE_CHARS).collect();
    if quoted.len() < message.len() {
        quoted.push('…');
    }
    format!("{what} worker failed: it panicked ({quoted})")
}
