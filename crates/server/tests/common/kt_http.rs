//! The Kyoto Tycoon port (`--kt-listen`) seen from a test: a server with
//! it, and a small HTTP/1.1 client over one `TcpStream` that can also send
//! KT's binary requests on the same connection, as KT's own client does.

use super::Server;
use memstored_protocol::kt::tsv::{self, BodyKind, TsvMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// memstored with `args` and `--kt-listen 127.0.0.1:0`; the KT port it printed.
pub fn start_kt(args: &[&str]) -> (Server, u16) {
    let mut all = args.to_vec();
    all.extend(["--kt-listen", "127.0.0.1:0"]);
    let srv = Server::start(&all);
    let line = srv.stdout_line();
    let port = line
        .strip_prefix("memstored kt listening on ")
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("KT port line {line:?}"));
    (srv, port)
}

/// A reply: status, headers (names lower case), body.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The TSV body, decoded as its content type's `colenc` says.
    pub fn tsv(&self) -> TsvMap {
        let ct = self.header("content-type").unwrap_or("");
        let BodyKind::Tsv(enc) = tsv::body_kind(ct) else {
            panic!("content type {ct:?} of {self:?}")
        };
        let mut m = TsvMap::new();
        tsv::parse_tsv(&self.body, enc, &mut m);
        m
    }

    /// One field of the TSV body, as text.
    pub fn field(&self, name: &str) -> Option<String> {
        self.tsv()
            .get(name.as_bytes())
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// One client connection to the KT port.
pub struct Http {
    pub r: BufReader<TcpStream>,
    pub w: TcpStream,
}

impl Http {
    pub fn connect(port: u16) -> Http {
        let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the KT port");
        s.set_read_timeout(Some(Duration::from_secs(20))).ok();
        let w = s.try_clone().expect("clone");
        Http {
            r: BufReader::new(s),
            w,
        }
    }

    /// Sends one request (with `Content-Length` when there is a body) and
    /// reads its reply.
    pub fn request(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        self.send(method, target, headers, body);
        self.reply(method == "HEAD")
    }

    pub fn send(&mut self, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut req = format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\n");
        for (n, v) in headers {
            req.push_str(&format!("{n}: {v}\r\n"));
        }
        if !body.is_empty() || method == "PUT" || method == "POST" {
            req.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        req.push_str("\r\n");
        let mut bytes = req.into_bytes();
        bytes.extend_from_slice(body);
        self.w.write_all(&bytes).expect("send request");
    }

    /// Reads a reply (a HEAD reply has no body whatever its length says).
    pub fn reply(&mut self, head: bool) -> Resp {
        let status_line = self.line();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("status line {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let l = self.line();
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').expect("header line");
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .map_or(0, |(_, v)| v.parse().expect("content-length"));
        let mut body = vec![0; if head { 0 } else { len }];
        self.r.read_exact(&mut body).expect("reply body");
        Resp {
            status,
            headers,
            body,
        }
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).expect("reply line");
        assert!(l.ends_with("\r\n"), "line {l:?}");
        l.truncate(l.len() - 2);
        l
    }

    /// A TSV-RPC call: POST `/rpc/NAME` with a TSV body (`colenc` given or none).
    pub fn rpc(&mut self, name: &str, input: &[(&[u8], &[u8])], enc: Option<tsv::ColEnc>) -> Resp {
        let recs: Vec<(Vec<u8>, Vec<u8>)> = input
            .iter()
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
        let body = tsv::write_tsv(&recs, enc);
        let ct = tsv::content_type(enc);
        self.request(
            "POST",
            &format!("/rpc/{name}"),
            &[("Content-Type", &ct)],
            &body,
        )
    }

    /// Sends raw bytes (a binary request) and reads exactly `n` back.
    pub fn binary(&mut self, req: &[u8], n: usize) -> Vec<u8> {
        self.w.write_all(req).expect("send binary request");
        let mut b = vec![0; n];
        self.r.read_exact(&mut b).expect("binary reply");
        b
    }
}

/// set_bulk of one record (dbidx 0, no expiry): magic, flags, rnum, then
/// dbidx u16, ksiz u32, vsiz u32, xt i64, key, value.
pub fn kt_set_bulk(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut v = vec![0xB8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0];
    v.extend((key.len() as u32).to_be_bytes());
    v.extend((value.len() as u32).to_be_bytes());
    v.extend(i64::MAX.to_be_bytes());
    v.extend(key);
    v.extend(value);
    v
}
