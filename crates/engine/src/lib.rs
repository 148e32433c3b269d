//! Storage engine.
