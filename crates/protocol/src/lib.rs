//! Wire formats. See the crate description.
