/// Response status codes (the `vbucket` slot of a response header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Status {
    NoError = 0x00,
    KeyNotFound = 0x01,
    KeyExists = 0x02,
    /// Value larger than the item limit; the server skips the request body.
    TooLarge = 0x03,
    /// Malformed request; memcached closes the connection after sending it.
    InvalidArguments = 0x04,
    NotStored = 0x05,
    /// INCR/DECR on a value that is not a decimal number.
    NonNumeric = 0x06,
    AuthError = 0x20,
    AuthContinue = 0x21,
    UnknownCommand = 0x81,
    OutOfMemory = 0x82,
}

impl Status {
    /// The status for a wire value, `None` if unknown.
    pub fn from_u16(value: u16) -> Option<Status> {
        use Status::*;
        [
            NoError,
            KeyNotFound,
            KeyExists,
            TooLarge,
            InvalidArguments,
            NotStored,
            NonNumeric,
            AuthError,
            AuthContinue,
            UnknownCommand,
            OutOfMemory,
        ]
        .into_iter()
        .find(|s| *s as u16 == value)
    }

    /// The wire value.
    pub fn as_u16(self) -> u16 {
        self as u16
    }

    /// The body memcached sends with an error status (`write_bin_error`).
    /// Clients show it to users, so we keep memcached's exact wording.
    pub fn message(self) -> &'static str {
        match self {
            Status::NoError => "",
            Status::KeyNotFound => "Not found",
            Status::KeyExists => "Data exists for key.",
            Status::TooLarge => "Too large.",
            Status::InvalidArguments => "Invalid arguments",
            Status::NotStored => "Not stored.",
            Status::NonNumeric => "Non-numeric server-side value for incr or decr",
            Status::AuthError => "Auth failure.",
            Status::AuthContinue => "Auth continue",
            Status::UnknownCommand => "Unknown command",
            Status::OutOfMemory => "Out of memory",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values() {
        assert_eq!(Status::TooLarge.as_u16(), 3);
        assert_eq!(Status::UnknownCommand.as_u16(), 0x81);
        assert_eq!(Status::from_u16(0x82), Some(Status::OutOfMemory));
        assert_eq!(Status::from_u16(0x21), Some(Status::AuthContinue));
        assert_eq!(Status::from_u16(0x07), None);
        for v in 0..=u16::MAX {
            if let Some(s) = Status::from_u16(v) {
                assert_eq!(s.as_u16(), v);
            }
        }
    }
}
