//! `get`/`gets` lines longer than the line limit, served in parts.
//!
//! memcached reads a get line of any length (it moves the connection to a
//! buffer that grows as needed: `try_read_command_ascii`), and its own test
//! suite sends one of 187 KB (`t/getset.t`, "large ASCII multigets").
//! Growing a connection's buffer without bound is what no client may make
//! this server do, so a get line that outgrows the line limit is served a
//! part at a time instead: the complete keys at its front become a
//! [`Command::GetPart`], answered as a get is but without the closing
//! `END`, and the buffer keeps `get ` and the rest of the line. A
//! connection then holds at most one line limit of it, however long it is.

use super::line::{tokenize, valid_key};
use super::request::multiget_prefix;
use super::Command;
use bytes::{Buf, Bytes, BytesMut};

/// Takes the complete keys of a `get`/`gets` line's first `max_line_len`
/// bytes out of `buf`, if the line has no newline in them; `buf` is left
/// holding `get ` (or `gets `) and the rest of the line.
///
/// `None` when the line cannot be served in parts, and is then too long:
/// it is not a get, a newline ends it within the limit (the parser's
/// business), no key ends within the limit (one key longer than it), or a
/// key in that part is not a valid key (memcached refuses the whole line;
/// its first part may already have been answered, so the connection is
/// closed instead).
pub(crate) fn take_part(buf: &mut BytesMut, max_line_len: usize) -> Option<Command> {
    if !multiget_prefix(buf) {
        return None;
    }
    let window = buf.get(..max_line_len.min(buf.len()))?;
    if window.contains(&b'\n') {
        return None;
    }
    // Every token before the window's last space is complete.
    let last_space = window.iter().rposition(|&b| b == b' ')?;
    let line = Bytes::copy_from_slice(window.get(..last_space)?);
    let mut tokens = tokenize(&line).into_iter();
    let return_cas = line.get(tokens.next()?)? == b"gets";
    let keys: Vec<Bytes> = tokens.map(|r| line.slice(r)).collect();
    if !keys.iter().all(|k| valid_key(k)) {
        return None;
    }
    let prefix: &[u8] = if return_cas { b"gets " } else { b"get " };
    // The prefix is written over the end of the part just taken, so the
    // rest of the line reads as a get line again.
    let keep_from = (last_space + 1).checked_sub(prefix.len())?;
    if keep_from == 0 {
        return None; // nothing taken: one key longer than the limit
    }
    buf.get_mut(keep_from..=last_space)?.copy_from_slice(prefix);
    buf.advance(keep_from);
    Some(Command::GetPart { keys, return_cas })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(cmd: &Command) -> (Vec<Vec<u8>>, bool) {
        match cmd {
            Command::GetPart { keys, return_cas } | Command::Get { keys, return_cas } => {
                (keys.iter().map(|k| k.to_vec()).collect(), *return_cas)
            }
            other => panic!("not a get: {other:?}"),
        }
    }

    #[test]
    fn a_long_get_line_is_taken_in_parts_that_keep_every_key_in_order() {
        let keys: Vec<String> = (0..40).map(|i| format!("key{i:03}")).collect();
        let mut buf = BytesMut::from(format!("gets {}", keys.join(" ")).as_bytes());
        let mut got = Vec::new();
        while let Some(part) = take_part(&mut buf, 50) {
            let (k, cas) = keys_of(&part);
            assert!(cas, "gets stays gets");
            assert!(!k.is_empty());
            got.extend(k);
            assert!(
                buf.starts_with(b"gets "),
                "{:?}",
                String::from_utf8_lossy(&buf)
            );
        }
        // What is left fits the limit: the last key has no space after it
        // yet, so it waits for the rest of the line.
        assert!(buf.len() <= 50);
        let want: Vec<Vec<u8>> = keys[..keys.len() - 1]
            .iter()
            .map(|k| k.clone().into_bytes())
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            &buf[..],
            format!("gets {}", keys[keys.len() - 1]).as_bytes()
        );
    }

    #[test]
    fn only_get_lines_without_a_newline_in_the_limit_are_taken() {
        let mut set = BytesMut::from(&b"set a 0 0 1 2 3 4 5 6 7 8 9"[..]);
        assert_eq!(take_part(&mut set, 10), None);
        let mut whole = BytesMut::from(&b"get a b\r\n"[..]);
        assert_eq!(take_part(&mut whole, 20), None);
        assert_eq!(whole.len(), 9, "untouched");
    }

    #[test]
    fn a_key_longer_than_the_limit_or_invalid_is_not_taken() {
        let mut long = BytesMut::from(format!("get {}", "k".repeat(100)).as_bytes());
        assert_eq!(take_part(&mut long, 50), None);
        let mut bad = BytesMut::from(format!("get a {} b ", "k".repeat(251)).as_bytes());
        assert_eq!(take_part(&mut bad, 300), None);
        assert_eq!(bad.len(), 4 + 2 + 251 + 3, "untouched");
    }

    #[test]
    fn leading_spaces_and_runs_of_spaces_make_progress() {
        let mut buf = BytesMut::from(format!("  get {}x", " ".repeat(60)).as_bytes());
        let mut parts = 0;
        while let Some(part) = take_part(&mut buf, 30) {
            assert_eq!(keys_of(&part).0, Vec::<Vec<u8>>::new());
            parts += 1;
            assert!(parts < 10, "no progress");
        }
        assert!(parts > 0);
        assert!(buf.starts_with(b"get ") && buf.ends_with(b"x"));
    }
}
