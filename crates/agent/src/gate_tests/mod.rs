//! The loop's side of `resolve`, moved here from `staged-core` with the gate: the hard
//! directive queue, the session's directive for a staged preview, the soft requirement driven
//! through a small loop, and `resolve`'s dispatch through the loop's routes.

mod dispatch;
mod harness;
mod queue;
mod resolve_reminder;
mod settle;
mod soft_requirement;
