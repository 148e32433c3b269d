//! Where each HTTP request handed to hyper begins and ends, followed byte
//! by byte beside hyper, so that a request whose head carries both
//! `Content-Length` and `Transfer-Encoding` can be refused (RFC 9112 §6.3:
//! such a message may be smuggling a second request in its body, which a
//! proxy in front reading the length would take for body bytes).
//!
//! Why not ask hyper: it drops the `Content-Length` header of such a
//! request before the service sees it (it uses the chunked framing and only
//! stops keeping the connection alive), so the service cannot tell it from
//! a plain chunked request. The framing is followed rather than only the
//! first head scanned because a client may pipeline: the next request's
//! head can arrive in the same read as this one's body.
//!
//! The rules are the ones hyper applies to the framings it accepts (a
//! length, chunked, or no body); on anything else the tracker gives up
//! (`Lost`) and says nothing more for the rest of the run: hyper refuses
//! such bytes itself and closes.

use std::collections::VecDeque;

/// Longest line kept whole; longer header lines are only needed for their
/// name, chunk-size lines never legitimately reach it.
const MAX_LINE: usize = 256;

/// What the tracker expects next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A request line or header line (`started`: the request line seen).
    Head { started: bool },
    /// `n` more body bytes of a request with a length.
    Body(u64),
    /// A chunk-size line.
    ChunkSize,
    /// `n` more bytes of chunk data, then the CRLF after it.
    ChunkData(u64),
    /// The empty line that ends a chunk's data.
    ChunkEnd,
    /// Trailer lines after the last chunk, until an empty one.
    Trailers,
    /// Framing not followed any more.
    Lost,
}

/// One run of HTTP requests (as many as hyper serves before the socket
/// goes back to the binary protocol).
#[derive(Debug)]
pub(super) struct Framing {
    state: State,
    /// The current line so far (at most `MAX_LINE` bytes of it).
    line: Vec<u8>,
    /// Headers of the head being read.
    length: Option<u64>,
    lengths: usize,
    encoding: Option<bool>,
    /// For each request head read whole and not yet served: true when it
    /// must be refused (a length and a transfer coding together).
    verdicts: VecDeque<bool>,
}

impl Default for Framing {
    fn default() -> Framing {
        Framing {
            state: State::Head { started: false },
            line: Vec::new(),
            length: None,
            lengths: 0,
            encoding: None,
            verdicts: VecDeque::new(),
        }
    }
}

impl Framing {
    /// Follows `bytes`, the next ones handed to hyper.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match self.state {
                State::Lost => return,
                State::Body(n) | State::ChunkData(n) => {
                    let take = usize::try_from(n).unwrap_or(usize::MAX).min(bytes.len());
                    bytes = &bytes[take..];
                    let left = n - take as u64;
                    self.state = match (self.state, left) {
                        (State::Body(_), 0) => State::Head { started: false },
                        (State::Body(_), _) => State::Body(left),
                        (_, 0) => State::ChunkEnd,
                        _ => State::ChunkData(left),
                    };
                }
                _ => {
                    let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
                        self.keep(bytes);
                        return;
                    };
                    self.keep(&bytes[..end]);
                    bytes = &bytes[end + 1..];
                    let mut line = std::mem::take(&mut self.line);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    self.line_done(&line);
                    self.line = line;
                    self.line.clear();
                }
            }
        }
    }

    /// Whether the next request hyper hands over must be refused; `None`
    /// when its head was not followed (the tracker lost the framing).
    pub(super) fn next_verdict(&mut self) -> Option<bool> {
        self.verdicts.pop_front()
    }

    fn keep(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }

    fn line_done(&mut self, line: &[u8]) {
        self.state = match self.state {
            // Empty lines before a request line are skipped, as hyper does.
            State::Head { started: false } if line.is_empty() => self.state,
            State::Head { started: false } => State::Head { started: true },
            State::Head { started: true } if line.is_empty() => self.head_done(),
            State::Head { started: true } => {
                self.header(line);
                self.state
            }
            State::ChunkSize => match chunk_size(line) {
                Some(0) => State::Trailers,
                Some(n) => State::ChunkData(n),
                None => State::Lost,
            },
            State::ChunkEnd if line.is_empty() => State::ChunkSize,
            State::Trailers if line.is_empty() => State::Head { started: false },
            State::Trailers => State::Trailers,
            _ => State::Lost,
        };
    }

    fn header(&mut self, line: &[u8]) {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return;
        };
        let name = &line[..colon];
        let value = String::from_utf8_lossy(&line[colon + 1..]);
        let value = value.trim();
        if name.eq_ignore_ascii_case(b"content-length") {
            self.lengths += 1;
            self.length = value.parse().ok();
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            let last = value.rsplit(',').next().unwrap_or("").trim();
            self.encoding = Some(last.eq_ignore_ascii_case("chunked"));
        }
    }

    /// The head is whole: its verdict, and where its body ends.
    fn head_done(&mut self) -> State {
        let (length, lengths, encoding) = (self.length.take(), self.lengths, self.encoding.take());
        self.lengths = 0;
        let refuse = lengths > 0 && encoding.is_some();
        self.verdicts.push_back(refuse);
        match (refuse, encoding, length) {
            // Refused: the connection closes after the answer.
            (true, _, _) => State::Lost,
            (false, Some(true), _) => State::ChunkSize,
            // A coding other than chunked: hyper answers 400 and closes.
            (false, Some(false), _) => State::Lost,
            (false, None, Some(0)) if lengths == 1 => State::Head { started: false },
            (false, None, Some(n)) if lengths == 1 => State::Body(n),
            (false, None, _) if lengths == 0 => State::Head { started: false },
            // Repeated or unreadable lengths: hyper decides.
            _ => State::Lost,
        }
    }
}

/// A chunk-size line's size (hex, before any `;` extension).
fn chunk_size(line: &[u8]) -> Option<u64> {
    let digits = line.split(|&b| b == b';').next()?;
    let digits = std::str::from_utf8(digits).ok()?.trim();
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(input: &[u8], step: usize) -> Vec<Option<bool>> {
        let mut f = Framing::default();
        for part in input.chunks(step) {
            f.feed(part);
        }
        (0..4).map(|_| f.next_verdict()).collect()
    }

    #[test]
    fn every_pipelined_head_is_judged_in_any_split() {
        let input = b"PUT /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
            POST /rpc/set HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\nT: 1\r\n\r\n\
            GET /b HTTP/1.1\r\n\r\n\
            PUT /c HTTP/1.1\r\ncontent-length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /d HTTP/1.1\r\n\r\n";
        for step in [1, 2, 7, input.len()] {
            assert_eq!(
                verdicts(input, step),
                [Some(false), Some(false), Some(false), Some(true)],
                "step {step}"
            );
        }
    }

    #[test]
    fn a_length_after_the_coding_is_refused_too_and_bodies_hide_nothing() {
        let te_first =
            b"PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(verdicts(te_first, 3)[0], Some(true));
        // Header-like text inside a body is body.
        let inner = "\r\nContent-Length: 1\r\nTransfer-Encoding: x\r\n\r\n";
        let body = format!(
            "PUT /x HTTP/1.1\r\nContent-Length: {}\r\n\r\n{inner}",
            inner.len()
        );
        assert_eq!(verdicts(body.as_bytes(), 5)[..2], [Some(false), None]);
    }
}
