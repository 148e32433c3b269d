//! Framing of MessagePack-RPC: one msgpack array per message, bounded by
//! [`Limits`]. A frame that decodes but is not a valid message is answered
//! by msgid and skipped; anything else ends the connection.

use super::{Decoder, FrameError, Limits, Message};
use crate::{Frame, Framer, Parse};
use bytes::{Buf, BytesMut};

/// Frames RPC messages.
#[derive(Debug)]
pub struct RpcFramer {
    decoder: Decoder,
}

impl RpcFramer {
    pub fn new(limits: Limits) -> RpcFramer {
        RpcFramer {
            decoder: Decoder::new(limits),
        }
    }
}

/// `Refused` carries an error to answer by its msgid (the bad frame is
/// already dropped); `Close` an error that leaves the stream unframeable.
impl Framer for RpcFramer {
    type Request = Message;
    type Refusal = FrameError;

    #[inline]
    fn next(&mut self, buf: &mut BytesMut) -> Frame<Message, FrameError> {
        match self.decoder.decode(buf) {
            Ok(Parse::Complete(msg, used)) => {
                buf.advance(used);
                Frame::Request(msg)
            }
            Ok(Parse::Incomplete) => Frame::Incomplete { need: 0 },
            Err(e) => match (e.msgid(), e.frame_len()) {
                (Some(_), Some(len)) if len <= buf.len() => {
                    buf.advance(len);
                    self.decoder.reset();
                    Frame::Refused { answer: e, skip: 0 }
                }
                _ => Frame::Close(Some(e)),
            },
        }
    }
}
