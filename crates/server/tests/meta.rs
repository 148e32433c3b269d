//! Meta commands (mg ms md ma mn me) against the real server.

mod common;
use common::*;

#[test]
fn mg_ms_flags() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("mg nothing v\r\n"), "EN");
    let l = t.cmd("ms k 5 F7 T100 c\r\nhello\r\n");
    assert!(l.starts_with("HD c"), "{l}");
    let cas: u64 = l[4..].parse().unwrap();
    let l = t.cmd("mg k v f c t s k Oop\r\n");
    assert_eq!(l, format!("VA 5 f7 c{cas} t100 s5 kk Oop"));
    assert_eq!(t.line(), "hello");
    assert_eq!(t.cmd("mg k\r\n"), "HD");
    assert_eq!(t.cmd("mg k s q\r\n"), "HD s5");
    // q hides a miss; mn marks the end of the batch
    t.send(b"mg nothing v q\r\nmn\r\n");
    assert_eq!(t.line(), "MN");
    // T updates the TTL
    assert_eq!(t.cmd("mg k t T500\r\n"), "HD t500");
    // a touch keeps the CAS, as in memcached
    let cas: u64 = t.cmd("mg k c\r\n")[4..].parse().unwrap();
    // CAS compare on ms
    assert_eq!(t.cmd(&format!("ms k 1 C{}\r\nx\r\n", cas + 99)), "EX");
    assert!(t.cmd(&format!("ms k 1 C{cas}\r\nx\r\n")).starts_with("HD"));
    assert_eq!(t.cmd("ms nf 1 C5\r\nx\r\n"), "NF");
    // modes
    assert_eq!(t.cmd("ms k 1 ME\r\ny\r\n"), "NS");
    assert_eq!(t.cmd("ms k 2 MA\r\nyz\r\n"), "HD");
    assert_eq!(t.cmd("ms k 1 MP\r\n_\r\n"), "HD");
    assert_eq!(t.cmd("mg k v\r\n"), "VA 4");
    assert_eq!(t.line(), "_xyz");
    assert_eq!(t.cmd("ms zz 1 MR\r\ny\r\n"), "NS");
    assert_eq!(t.cmd("ms q 1 q\r\ny\r\nmn\r\n"), "MN");
    // vivify on miss
    assert_eq!(t.cmd("mg viv N30 s\r\n"), "HD s0 W");
    assert_eq!(
        t.cmd("ms k 1 MX\r\ny\r\n"),
        "CLIENT_ERROR invalid mode for ms M token"
    );
    assert_eq!(t.cmd("mg k v v\r\n"), "CLIENT_ERROR duplicate flag");
}

#[test]
fn md_ma_me_mn() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    assert_eq!(t.cmd("md none\r\n"), "NF");
    // quiet mode hides success only: a miss is still NF (memcached 1.6)
    assert_eq!(t.cmd("md none q\r\nmn\r\n"), "NF");
    assert_eq!(t.line(), "MN");
    assert_eq!(t.cmd("ms d 1\r\nx\r\n"), "HD");
    assert_eq!(t.cmd("md d Oab k\r\n"), "HD Oab kd");
    assert_eq!(t.cmd("ma cnt\r\n"), "NF");
    assert_eq!(t.cmd("ma cnt N0 J10 v\r\n"), "VA 2");
    assert_eq!(t.line(), "10");
    assert_eq!(t.cmd("ma cnt D5 v\r\n"), "VA 2");
    assert_eq!(t.line(), "15");
    assert_eq!(t.cmd("ma cnt MD D100 v\r\n"), "VA 1");
    assert_eq!(t.line(), "0");
    assert_eq!(t.cmd("ma cnt\r\n"), "HD");
    assert_eq!(t.cmd("ma cnt q\r\nmn\r\n"), "MN");
    assert_eq!(t.cmd("ms s 1\r\nx\r\n"), "HD");
    assert_eq!(
        t.cmd("ma s\r\n"),
        "CLIENT_ERROR cannot increment or decrement non-numeric value"
    );
    let l = t.cmd("me s\r\n");
    assert!(l.starts_with("ME s exp=-1 la=0 cas="), "{l}");
    assert!(l.ends_with("size=1"), "{l}");
    assert_eq!(t.cmd("me none\r\n"), "EN");
    assert_eq!(t.cmd("mn\r\n"), "MN");
}

/// The anti-dogpiling promise of `md I` / `mg R`: of many clients fetching a
/// stale (or nearly expired) item at once, exactly one is told to recache
/// (`W`); the others get the stale value with `Z`.
#[test]
fn exactly_one_concurrent_fetch_wins_the_recache_token() {
    let srv = Server::start(&[]);
    let mut t = Text::new(srv.connect());
    for round in 0..20 {
        let key = format!("hot{round}");
        assert_eq!(t.cmd(&format!("ms {key} 3 T10\r\nold\r\n")), "HD");
        // even rounds: invalidated; odd rounds: TTL under the R threshold
        let fetch = if round % 2 == 0 {
            assert_eq!(t.cmd(&format!("md {key} I\r\n")), "HD");
            format!("mg {key} v\r\n")
        } else {
            format!("mg {key} v R30\r\n")
        };
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let replies: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (barrier, fetch, srv) = (barrier.clone(), fetch.clone(), &srv);
                    s.spawn(move || {
                        let mut c = Text::new(srv.connect());
                        barrier.wait();
                        let head = c.cmd(&fetch);
                        assert_eq!(c.line(), "old", "the stale value is still served");
                        head
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners = replies.iter().filter(|r| r.ends_with(" W")).count();
        let others = replies.iter().filter(|r| r.contains(" Z")).count();
        assert_eq!((winners, others), (1, 7), "round {round}: {replies:?}");
        // the winner's write makes a fresh version: no more flags
        assert_eq!(t.cmd(&format!("ms {key} 3 T100\r\nnew\r\n")), "HD");
        assert_eq!(t.cmd(&format!("mg {key} v R30\r\n")), "VA 3");
        assert_eq!(t.line(), "new");
    }
}

/// memcached 1.6.45's meta additions (issue 45): `E` sets the CAS an item
/// gets (ms, md x, mg's vivify), `mg C v` returns the value only when the
/// CAS differs, `ms s` returns the stored size (an append's new total),
/// `ms MA N` creates the item on a miss, `md x` empties the value and keeps
/// the item, and `lru_crawler mgdump` lists `mg` lines.
#[test]
fn meta_1_6_45_additions() {
    for store in ["*#capsiz=64m", "+"] {
        let srv = Server::start(&["-s", store]);
        let mut t = Text::new(srv.connect());
        assert_eq!(t.cmd("ms k 2 c E4000\r\nab\r\n"), "HD c4000", "{store}");
        assert_eq!(t.cmd("mg k c\r\n"), "HD c4000");
        // C matching: no value; not matching: the value.
        assert_eq!(t.cmd("mg k v C4000\r\n"), "HD");
        assert_eq!(t.cmd("mg k v C1\r\n"), "VA 2");
        assert_eq!(t.line(), "ab");
        // s: the size stored; an append's new total.
        assert_eq!(t.cmd("ms k 1 s\r\nx\r\n"), "HD s1");
        assert_eq!(t.cmd("ms k 3 MA s\r\nyz!\r\n"), "HD s4");
        // N on an append miss: created from the data, with N's TTL.
        assert_eq!(t.cmd("ms fresh 2 MA\r\nzz\r\n"), "NS");
        assert_eq!(t.cmd("ms fresh 2 MA N30\r\nzz\r\n"), "HD");
        assert_eq!(t.cmd("mg fresh v t\r\n"), "VA 2 t30");
        assert_eq!(t.line(), "zz");
        // md x: the item stays, empty, keeping its CAS unless E says.
        let cas: u64 = t.cmd("mg k c\r\n")[4..].parse().unwrap();
        assert_eq!(t.cmd("md k x F5\r\n"), "HD");
        assert_eq!(t.cmd("mg k v f c\r\n"), format!("VA 0 f5 c{cas}"));
        assert_eq!(t.line(), "");
        assert_eq!(t.cmd("md k x E77\r\n"), "HD");
        assert_eq!(t.cmd("mg k c\r\n"), "HD c77");
        assert_eq!(t.cmd("md nothing x\r\n"), "NF");
        // md I E: marked stale under E's CAS; ma E: the result's CAS,
        // created or counted (memcached's metaget.t).
        assert!(t.cmd("ms inv 1\r\nx\r\n").starts_with("HD"));
        assert_eq!(t.cmd("md inv I E5678\r\n"), "HD");
        assert_eq!(t.cmd("mg inv c\r\n"), "HD c5678 X W");
        assert_eq!(t.cmd("ma cnt v N0 c E4321 J5\r\n"), "VA 1 c4321");
        assert_eq!(t.line(), "5");
        assert_eq!(t.cmd("ma cnt c v E8765\r\n"), "VA 1 c8765");
        assert_eq!(t.line(), "6");
        // mg's vivify takes E's CAS.
        assert_eq!(t.cmd("mg viv c N30 E9876\r\n"), "HD c9876 W");
        // A bad E token is memcached's bad token.
        assert_eq!(
            t.cmd("ms k 1 Ex\r\ny\r\n"),
            "CLIENT_ERROR bad token in command line format"
        );
        // The dump, then the connection goes on.
        t.send(b"flush_all\r\n");
        assert_eq!(t.line(), "OK");
        assert_eq!(t.cmd("set one 0 0 1\r\n1\r\n"), "STORED");
        assert_eq!(t.cmd("lru_crawler mgdump all\r\n"), "OK");
        assert_eq!(t.line(), "mg one");
        assert_eq!(t.line(), "EN");
    }
}
