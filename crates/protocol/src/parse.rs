/// Outcome of trying to parse one frame from the front of a buffer.
///
/// Errors are reported separately (as the `Err` side of a `Result`) because
/// each protocol's errors carry different recovery instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Parse<T> {
    /// A whole frame was present. The `usize` is how many bytes of the buffer
    /// it used; the caller drops exactly that many before parsing the next one.
    Complete(T, usize),
    /// The buffer holds only a prefix of a frame. Read more and call again;
    /// the parser keeps no state between calls.
    Incomplete,
}

impl<T> Parse<T> {
    /// Transforms the parsed value, keeping the consumed count.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Parse<U> {
        match self {
            Parse::Complete(value, used) => Parse::Complete(f(value), used),
            Parse::Incomplete => Parse::Incomplete,
        }
    }

    /// True for [`Parse::Complete`].
    pub fn is_complete(&self) -> bool {
        matches!(self, Parse::Complete(..))
    }

    /// The parsed value and consumed count, if complete.
    pub fn complete(self) -> Option<(T, usize)> {
        match self {
            Parse::Complete(value, used) => Some((value, used)),
            Parse::Incomplete => None,
        }
    }
}
