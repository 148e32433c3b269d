//! Kyoto Tycoon's binary protocol requests, written out byte by byte from
//! spex.html's layouts (not with the server's own encoder).

use std::io::Read;
use std::net::TcpStream;

pub const SET_BULK: u8 = 0xB8;
pub const REMOVE_BULK: u8 = 0xB9;
pub const GET_BULK: u8 = 0xBA;
pub const ERROR: u8 = 0xBF;

/// set_bulk: magic, flags u32, rnum u32, then per record dbidx u16, ksiz u32,
/// vsiz u32, xt i64, key, value.
pub fn set_bulk(flags: u32, recs: &[(u16, &[u8], &[u8], i64)]) -> Vec<u8> {
    let mut v = vec![SET_BULK];
    v.extend_from_slice(&flags.to_be_bytes());
    v.extend_from_slice(&(recs.len() as u32).to_be_bytes());
    for (db, k, val, xt) in recs {
        v.extend_from_slice(&db.to_be_bytes());
        v.extend_from_slice(&(k.len() as u32).to_be_bytes());
        v.extend_from_slice(&(val.len() as u32).to_be_bytes());
        v.extend_from_slice(&xt.to_be_bytes());
        v.extend_from_slice(k);
        v.extend_from_slice(val);
    }
    v
}

/// remove_bulk / get_bulk: magic, flags u32, rnum u32, then per key dbidx
/// u16, ksiz u32, key.
pub fn keys_req(magic: u8, flags: u32, keys: &[(u16, &[u8])]) -> Vec<u8> {
    let mut v = vec![magic];
    v.extend_from_slice(&flags.to_be_bytes());
    v.extend_from_slice(&(keys.len() as u32).to_be_bytes());
    for (db, k) in keys {
        v.extend_from_slice(&db.to_be_bytes());
        v.extend_from_slice(&(k.len() as u32).to_be_bytes());
        v.extend_from_slice(k);
    }
    v
}

pub fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    s.read_exact(&mut b).expect("reply");
    b
}

pub fn u32_at(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}
