//! Pure, width-aware rendering of `resolve` for terminals (`docs/contract/rendering.md`).
//!
//! Every function returns a `String`; nothing here prints or inspects the terminal. The
//! caller picks the width, whether to colour (see [`color_enabled`]) and the symbol preset.

#![deny(missing_docs)]

mod resolve;
mod style;

pub use crate::{
    resolve::{render_resolve_call, render_resolve_result, resolve_intent},
    style::{ColorChoice, RenderOptions, Symbols, color_enabled},
};
