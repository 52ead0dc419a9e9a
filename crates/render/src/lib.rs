//! Pure, width-aware rendering of `resolve` for terminals (`docs/contract/rendering.md`), and
//! the escaping of control characters in any text from outside ([`escape_line`],
//! [`escape_text`]).
//!
//! Every function returns a `String`; nothing here prints or inspects the terminal. The
//! caller picks the width, whether to colour (see [`color_enabled`]) and the symbol preset.
//!
//! Library API besides what the CLI calls: `resolve_intent`, the status text while a `resolve`
//! call runs (the contract's), for a host that shows one.

#![deny(missing_docs)]

mod escape;
mod resolve;
mod style;

pub use crate::{
    escape::{escape_line, escape_text},
    resolve::{
        ResolveShown, render_resolve_block, render_resolve_call, render_resolve_result,
        resolve_intent,
    },
    style::{ColorChoice, RenderOptions, Symbols, color_enabled},
};
