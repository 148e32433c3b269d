/// Binary opcodes memstored understands (memcached's `protocol_binary.h`).
///
/// Anything else parses as [`crate::binary::Command::Unknown`] and must be
/// answered with [`crate::binary::Status::UnknownCommand`]; the connection
/// stays usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    Get = 0x00,
    Set = 0x01,
    Add = 0x02,
    Replace = 0x03,
    Delete = 0x04,
    Increment = 0x05,
    Decrement = 0x06,
    Quit = 0x07,
    Flush = 0x08,
    GetQ = 0x09,
    Noop = 0x0a,
    Version = 0x0b,
    GetK = 0x0c,
    GetKQ = 0x0d,
    Append = 0x0e,
    Prepend = 0x0f,
    Stat = 0x10,
    SetQ = 0x11,
    AddQ = 0x12,
    ReplaceQ = 0x13,
    DeleteQ = 0x14,
    IncrementQ = 0x15,
    DecrementQ = 0x16,
    QuitQ = 0x17,
    FlushQ = 0x18,
    AppendQ = 0x19,
    PrependQ = 0x1a,
    Touch = 0x1c,
    Gat = 0x1d,
    GatQ = 0x1e,
    SaslListMechs = 0x20,
    SaslAuth = 0x21,
    SaslStep = 0x22,
    GatK = 0x23,
    GatKQ = 0x24,
}

impl Opcode {
    /// Every known opcode, for tests and tools.
    pub const ALL: [Opcode; 35] = [
        Opcode::Get,
        Opcode::Set,
        Opcode::Add,
        Opcode::Replace,
        Opcode::Delete,
        Opcode::Increment,
        Opcode::Decrement,
        Opcode::Quit,
        Opcode::Flush,
        Opcode::GetQ,
        Opcode::Noop,
        Opcode::Version,
        Opcode::GetK,
        Opcode::GetKQ,
        Opcode::Append,
        Opcode::Prepend,
        Opcode::Stat,
        Opcode::SetQ,
        Opcode::AddQ,
        Opcode::ReplaceQ,
        Opcode::DeleteQ,
        Opcode::IncrementQ,
        Opcode::DecrementQ,
        Opcode::QuitQ,
        Opcode::FlushQ,
        Opcode::AppendQ,
        Opcode::PrependQ,
        Opcode::Touch,
        Opcode::Gat,
        Opcode::GatQ,
        Opcode::SaslListMechs,
        Opcode::SaslAuth,
        Opcode::SaslStep,
        Opcode::GatK,
        Opcode::GatKQ,
    ];

    /// The opcode for a wire byte, `None` if memstored does not know it.
    pub fn from_u8(byte: u8) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|op| *op as u8 == byte)
    }

    /// The wire byte.
    pub fn as_u8(self) -> u8 {
        self as u8
    }

    /// Quiet variants suppress success replies (GETQ-style hits are still
    /// sent); errors are always sent.
    pub fn is_quiet(self) -> bool {
        matches!(
            self,
            Opcode::GetQ
                | Opcode::GetKQ
                | Opcode::SetQ
                | Opcode::AddQ
                | Opcode::ReplaceQ
                | Opcode::DeleteQ
                | Opcode::IncrementQ
                | Opcode::DecrementQ
                | Opcode::QuitQ
                | Opcode::FlushQ
                | Opcode::AppendQ
                | Opcode::PrependQ
                | Opcode::GatQ
                | Opcode::GatKQ
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_byte() {
        for b in 0..=255u8 {
            if let Some(op) = Opcode::from_u8(b) {
                assert_eq!(op.as_u8(), b);
            }
        }
        assert_eq!(Opcode::from_u8(0x1b), None);
        assert_eq!(Opcode::from_u8(0x25), None);
        assert_eq!(Opcode::from_u8(0x24), Some(Opcode::GatKQ));
    }

    #[test]
    fn all_is_distinct() {
        for (i, a) in Opcode::ALL.iter().enumerate() {
            for b in Opcode::ALL.iter().skip(i + 1) {
                assert_ne!(a, b);
            }
        }
    }
}
