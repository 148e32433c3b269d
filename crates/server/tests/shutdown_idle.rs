//! A stop reaches a connection that is blocked waiting for its next request:
//! connection.rs watches shutdown with one future that lives as long as the
//! connection (registered once, not per wait), and this proves it is woken.

mod common;
use common::{Server, Text};
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::time::Duration;

/// True once the server has closed `s` (end of stream or reset). Unlike
/// `common::is_closed`, a read timeout counts as still open.
fn closed_by_server(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn shutdown_closes_a_connection_waiting_for_input() {
    let srv = Server::start(&["-A"]);
    let mut idle = Text::new(srv.connect());
    // One request first, so the connection has served and gone back to waiting.
    assert!(idle.cmd("version\r\n").starts_with("VERSION "));
    let mut other = Text::new(srv.connect());
    other.send(b"shutdown\r\n");
    assert!(closed_by_server(&mut idle.w), "{}", srv.diagnose());
}
