//! The codecs of the clients whose hook events are not Claude Code's: each turns its client's
//! event into a [`crate::HookEvent`] and a [`crate::Reply`] into its client's answer, and
//! holds its client's installer and `staged doctor` checks.

pub(crate) mod cline;
pub(crate) mod copilot;
