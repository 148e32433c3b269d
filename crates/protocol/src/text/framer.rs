//! Framing of the text and meta protocols: command lines, data blocks and
//! the item limit. A storage command is one frame with its data block.

use super::multiget::take_part;
use super::{data_block_len, take_data_block, Command, TextError, TextErrorKind, TextParser};
use crate::{Frame, Framer};
use bytes::{Bytes, BytesMut};

/// Why a text request is not served as sent.
#[derive(Debug)]
pub enum Refusal {
    /// A storage command (`set` family, `ms`) whose data block is longer than
    /// the item limit; the block is skipped.
    TooLarge(Command),
    /// A malformed line or data block. Answer `error.reply()` when `reply`
    /// (memcached stays silent for `noreply` commands).
    Invalid { error: TextError, reply: bool },
}

/// Frames text commands; a data block longer than `max_value` is refused
/// from the command line, before it is read.
#[derive(Debug, Default)]
pub struct TextFramer {
    parser: TextParser,
    /// A storage command whose data block has not fully arrived.
    pending: Option<Command>,
    pub max_value: u64,
}

impl TextFramer {
    /// Forgets a storage command whose data block is still arriving: the
    /// server refused it (out of memory) and drops the rest of the block.
    pub fn forget_pending(&mut self) {
        self.pending = None;
    }

    pub fn new(max_value: u64) -> TextFramer {
        TextFramer {
            parser: TextParser::default(),
            pending: None,
            max_value,
        }
    }
}

impl Framer for TextFramer {
    /// A command and, for a storage command, its data block (an owned copy,
    /// unless large: [`crate::owned_value`]).
    type Request = (Command, Option<Bytes>);
    type Refusal = Refusal;

    #[inline]
    fn next(&mut self, buf: &mut BytesMut) -> Frame<Self::Request, Refusal> {
        loop {
            if let Some(cmd) = self.pending.take() {
                let len = cmd.data_len().unwrap_or(0);
                return match take_data_block(buf, len) {
                    Ok(None) => {
                        self.pending = Some(cmd);
                        Frame::Incomplete {
                            need: len.saturating_add(2),
                        }
                    }
                    Ok(Some(value)) => Frame::Request((cmd, Some(crate::owned_value(value)))),
                    Err(error) => Frame::Refused {
                        answer: Refusal::Invalid {
                            error,
                            reply: !cmd.noreply(),
                        },
                        skip: 0,
                    },
                };
            }
            let cmd = match self.parser.parse_buf(buf) {
                Ok(None) => return Frame::Incomplete { need: 0 },
                Ok(Some(cmd)) => cmd,
                Err(error) => {
                    if error.kind == TextErrorKind::LineTooLong {
                        if let Some(part) = take_part(buf, self.parser.max_line_len) {
                            return Frame::Request((part, None));
                        }
                    }
                    let reply = error.should_reply();
                    if error.must_close() {
                        return Frame::Close(Some(Refusal::Invalid { error, reply }));
                    }
                    let skip = error.swallow;
                    return Frame::Refused {
                        answer: Refusal::Invalid { error, reply },
                        skip,
                    };
                }
            };
            match cmd.data_len() {
                None => return Frame::Request((cmd, None)),
                Some(len) if len as u64 > self.max_value => {
                    return Frame::Refused {
                        answer: Refusal::TooLarge(cmd),
                        skip: data_block_len(len),
                    }
                }
                Some(_) => self.pending = Some(cmd),
            }
        }
    }
}
