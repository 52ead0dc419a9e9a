//! The codecs of the clients whose events are not Claude Code's: each turns its client's event
//! into a [`HookEvent`] and a [`crate::Reply`] into its client's answer.

pub(crate) mod cursor;
pub(crate) mod opencode;

use crate::event::{Client, HookEvent};

/// `input` as a [`HookEvent`], read as `client` sends it.
pub(crate) fn decode(client: Client, input: &[u8]) -> Result<HookEvent, String> {
    match client {
        Client::ClaudeCode | Client::Codex => HookEvent::parse(input),
        Client::OpenCode => opencode::decode(input),
        Client::Cursor => cursor::decode(input),
    }
}
