//! `-l`: the memcached port's addresses, as memcached 1.6 takes them. One
//! address, or a list (`,` or `;` between), each with an optional TLS
//! prefix for that listener under `-Z`: `notls:` (plaintext), `btls:` (TLS,
//! no client certificate asked) or `mtls:` (TLS, a client certificate
//! required). An address may carry its port (`127.0.0.1:11311`,
//! `[::1]:11311`, memstored's bare `11311`); one without takes `-p`'s,
//! else 11211.

use crate::net::tls::PeerCheck;
use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// memcached's default port.
const DEFAULT_PORT: u16 = 11211;

/// How one listener of `-l` treats TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenTls {
    /// As the server: TLS under `-Z` (client certificates per
    /// `ssl_verify_mode`), plaintext without.
    Default,
    /// `notls:`: plaintext even under `-Z`.
    Off,
    /// `btls:` and `mtls:`: TLS with this client-certificate check.
    On(PeerCheck),
}

/// One address of `-l`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenAt {
    pub tls: ListenTls,
    pub ip: IpAddr,
    /// `None`: `-p`'s port, else 11211.
    pub port: Option<u16>,
}

/// `-l`'s addresses, in the order given (the first is the one `stats
/// settings` and `--port-file` report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listen(pub Vec<ListenAt>);

impl Listen {
    /// Each address with its port settled by `-p`.
    pub fn addrs(&self, port: Option<u16>) -> Vec<(ListenTls, SocketAddr)> {
        self.0
            .iter()
            .map(|a| {
                let p = a.port.or(port).unwrap_or(DEFAULT_PORT);
                (a.tls, SocketAddr::new(a.ip, p))
            })
            .collect()
    }

    /// The same list with every port settled by `-p` (`--print-config`).
    pub fn settled(&self, port: Option<u16>) -> Listen {
        let at = |(tls, a): (ListenTls, SocketAddr)| ListenAt {
            tls,
            ip: a.ip(),
            port: Some(a.port()),
        };
        Listen(self.addrs(port).into_iter().map(at).collect())
    }

    /// Whether any address carries a TLS prefix.
    pub fn has_prefix(&self) -> bool {
        self.0.iter().any(|a| a.tls != ListenTls::Default)
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let prefix = match a.tls {
                ListenTls::Default => "",
                ListenTls::Off => "notls:",
                ListenTls::On(PeerCheck::None) => "btls:",
                ListenTls::On(PeerCheck::Required) => "mtls:",
            };
            match (a.ip, a.port) {
                (IpAddr::V6(ip), Some(p)) => write!(f, "{sep}{prefix}[{ip}]:{p}")?,
                (ip, Some(p)) => write!(f, "{sep}{prefix}{ip}:{p}")?,
                (ip, None) => write!(f, "{sep}{prefix}{ip}")?,
            }
        }
        Ok(())
    }
}

/// Parses `-l`'s value (see the module doc).
pub fn parse_listen_list(s: &str) -> Result<Listen, String> {
    let all = s
        .split([',', ';'])
        .filter(|p| !p.trim().is_empty())
        .map(parse_one)
        .collect::<Result<Vec<_>, _>>()?;
    if all.is_empty() {
        return Err(format!("bad listen address {s:?}: no address"));
    }
    Ok(Listen(all))
}

fn parse_one(s: &str) -> Result<ListenAt, String> {
    let s = s.trim();
    let (tls, rest) = [
        ("notls:", ListenTls::Off),
        ("btls:", ListenTls::On(PeerCheck::None)),
        ("mtls:", ListenTls::On(PeerCheck::Required)),
    ]
    .into_iter()
    .find_map(|(p, t)| s.strip_prefix(p).map(|rest| (t, rest)))
    .unwrap_or((ListenTls::Default, s));
    let (ip, port) = parse_addr(rest)?;
    Ok(ListenAt { tls, ip, port })
}

/// `[ADDR:]PORT`, `ADDR`, `[V6]:PORT`, `*[:PORT]` (every address) or a
/// host name with or without a port.
fn parse_addr(s: &str) -> Result<(IpAddr, Option<u16>), String> {
    let any = IpAddr::from([0, 0, 0, 0]);
    if let Ok(port) = s.parse::<u16>() {
        return Ok((IpAddr::from([127, 0, 0, 1]), Some(port)));
    }
    if s == "*" {
        return Ok((any, None));
    }
    if let Some(port) = s.strip_prefix("*:") {
        let port = port
            .parse()
            .map_err(|e| format!("bad port in {s:?}: {e}"))?;
        return Ok((any, Some(port)));
    }
    if let Ok(ip) = s
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    {
        return Ok((ip, None));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok((a.ip(), Some(a.port())));
    }
    let bad = |e: String| format!("bad listen address {s:?}: {e}");
    let (resolved, port) = match s.rsplit_once(':') {
        Some((_, p)) if p.parse::<u16>().is_ok() => (s.to_socket_addrs(), p.parse().ok()),
        _ => ((s, DEFAULT_PORT).to_socket_addrs(), None),
    };
    let first = resolved
        .map_err(|e| bad(e.to_string()))?
        .next()
        .ok_or_else(|| bad("no address".into()))?;
    Ok((first.ip(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(tls: ListenTls, a: &str) -> (ListenTls, SocketAddr) {
        (tls, a.parse().unwrap())
    }

    #[test]
    fn one_address_takes_p_only_without_a_port_of_its_own() {
        let l = parse_listen_list("127.0.0.1").unwrap();
        assert_eq!(l.addrs(None), [at(ListenTls::Default, "127.0.0.1:11211")]);
        assert_eq!(l.addrs(Some(7)), [at(ListenTls::Default, "127.0.0.1:7")]);
        let l = parse_listen_list("0.0.0.0:5").unwrap();
        assert_eq!(l.addrs(Some(7)), [at(ListenTls::Default, "0.0.0.0:5")]);
        assert_eq!(
            parse_listen_list("11222").unwrap().addrs(None),
            [at(ListenTls::Default, "127.0.0.1:11222")]
        );
        assert_eq!(
            parse_listen_list("::1").unwrap().addrs(None),
            [at(ListenTls::Default, "[::1]:11211")]
        );
        assert_eq!(
            parse_listen_list("[::1]:9").unwrap().addrs(None),
            [at(ListenTls::Default, "[::1]:9")]
        );
        assert_eq!(
            parse_listen_list("*:9").unwrap().addrs(None),
            [at(ListenTls::Default, "0.0.0.0:9")]
        );
    }

    /// memcached's t/ssl_ports.t.
    #[test]
    fn a_list_with_tls_prefixes() {
        let l = parse_listen_list("notls:127.0.0.1:1,127.0.0.1:2;mtls:127.0.0.1:3,btls:127.0.0.1")
            .unwrap();
        assert!(l.has_prefix());
        assert_eq!(
            l.addrs(Some(2)),
            [
                at(ListenTls::Off, "127.0.0.1:1"),
                at(ListenTls::Default, "127.0.0.1:2"),
                at(ListenTls::On(PeerCheck::Required), "127.0.0.1:3"),
                at(ListenTls::On(PeerCheck::None), "127.0.0.1:2"),
            ]
        );
        let shown = l.to_string();
        assert_eq!(parse_listen_list(&shown).unwrap(), l, "{shown}");
        assert!(!parse_listen_list("127.0.0.1").unwrap().has_prefix());
    }

    #[test]
    fn bad_addresses_are_named() {
        for bad in ["", ",", "notls:", "tls:127.0.0.1", "127.0.0.1:99999"] {
            let e = parse_listen_list(bad).unwrap_err();
            assert!(
                e.contains("listen address") || e.contains("port"),
                "{bad}: {e}"
            );
        }
    }
}
