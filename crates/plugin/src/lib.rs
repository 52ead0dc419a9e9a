//! Plugins (placeholder while building).
