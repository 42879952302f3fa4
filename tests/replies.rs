//! Hostile server replies: every reply parser perflab has (RESP2 and RESP3, memcached's text
//! and meta protocols and its `stats`, PostgreSQL's messages, the IMAP, POP3 and SMTP/LMTP
//! readers) gets arbitrary bytes and near-valid replies whose headers claim huge sizes
//! (`$536870911`, `VALUE k 0 4294967295`, `{268435455}`, a PostgreSQL length of 2 GB). None
//! may panic, and what parsing costs in memory is bounded by the bytes received plus a
//! documented limit, whatever a reply claims: measured with dhat's heap profiler in its
//! testing mode (the whole test binary's heap), not with new unsafe code.
//!
//! One test, run in order: dhat measures the process, so nothing else may run beside it. A
//! fixed number of cases with a fixed seed (CI); `PROPTEST_CASES` asks for more, and
//! `scripts/fuzz-replies.sh` runs a long session.

use bytes::BytesMut;
use perflab::sql::postgres::frame;
use perflab::target::tls::Trust;
use perflab::workload::kv::protocol::{Command, Parsed, Protocol};
use perflab::workload::kv::{memcache, resp};
use perflab::workload::mail::endpoint::{Endpoint, Security};
use perflab::workload::mail::imap::ImapClient;
use perflab::workload::mail::pop3::Pop3Client;
use perflab::workload::mail::smtp::{Dialect, SmtpClient};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The most the whole test may hold on the heap at once. A parser that set aside what a
/// header claims would pass it at the first such reply (the smallest claim below is 256 MiB).
const HEAP_BUDGET: usize = 48 << 20;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn runner() -> TestRunner {
    let seed: [u8; 32] = *b"perflab hostile replies, seeded.";
    TestRunner::new_with_rng(
        Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed),
    )
}

/// Near-valid starts of replies, the huge claims among them, and arbitrary bytes after.
fn hostile(starts: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(starts),
        prop::collection::vec(any::<u8>(), 0..512),
        prop::collection::vec(prop::sample::select(BITS), 0..8),
    )
        .prop_map(|(start, tail, bits)| {
            let mut v = start.to_vec();
            for (i, b) in bits.iter().enumerate() {
                v.extend_from_slice(b);
                v.extend_from_slice(&tail[..tail.len().min(i * 8)]);
            }
            v.extend_from_slice(&tail);
            v
        })
}

/// Pieces of framing mixed into the tail.
const BITS: &[&[u8]] = &[b"\r\n", b"\n", b"\r", b"0", b"-1", b"*", b"$", b" "];

const RESP: &[&[u8]] = &[
    b"$536870911\r\n",
    b"$4294967296\r\n",
    b"*1048576\r\n",
    b"*99999999999\r\n",
    b"%524288\r\n",
    b">3\r\n",
    b"|1\r\n",
    b"=4294967295\r\ntxt:",
    b"+OK\r\n",
    b"-ERR x\r\n",
    b":-9223372036854775809\r\n",
    b",nan\r\n",
    b"(1\r\n",
    b"_\r\n",
    b"",
];

const MEMCACHED: &[&[u8]] = &[
    b"VALUE k 0 4294967295\r\n",
    b"VALUE k 0 536870912\r\n",
    b"VA 4294967295 O1\r\n",
    b"VA 536870912 t1 O1\r\n",
    b"END\r\n",
    b"HD O1\r\n",
    b"EN\r\n",
    b"STORED\r\n",
    b"SERVER_ERROR out of memory\r\n",
    b"STAT pid 1\r\nSTAT ",
    b"",
];

const POSTGRES: &[&[u8]] = &[
    b"D\x7f\xff\xff\xff",
    b"D\xff\xff\xff\xff",
    b"T\x10\x00\x00\x00",
    b"Z\x00\x00\x00\x05I",
    b"E\x00\x00\x00\x03",
    b"C\x00\x00\x00\x0dSELECT 1\x00",
    b"D\x00\x00\x00\x0b\x00\x01\x7f\xff\xff\xff",
    b"R\x00\x00\x00\x08\x00\x00\x00\x00",
    b"",
];

const IMAP: &[&[u8]] = &[
    b"* OK ready\r\na1 OK done\r\n* 1 FETCH (BODY[] {268435455}\r\n",
    b"* OK ready\r\n* 1 FETCH (BODY[] {4294967296}\r\n",
    b"* OK ready\r\na1 OK\r\n* SEARCH 1 2 99999999999\r\n",
    b"* OK ready\r\n* CAPABILITY IMAP4rev1\r\na1 OK\r\n",
    b"* BYE\r\n",
    b"",
];

const POP3: &[&[u8]] = &[
    b"+OK ready\r\n+OK\r\n+OK 1 4294967295\r\n",
    b"+OK ready\r\n+OK\r\n+OK\r\n+OK 1 100\r\n1 ",
    b"+OK ready\r\n+OK\r\n+OK\r\n+OK\r\n1 uid\r\n.\r\n",
    b"-ERR no\r\n",
    b"",
];

const SMTP: &[&[u8]] = &[
    b"220 hi\r\n250-x\r\n250 PIPELINING\r\n250 ok\r\n250 ok\r\n354 go\r\n",
    b"220 hi\r\n250 ok\r\n250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n",
    b"220-",
    b"554 no\r\n",
    b"",
];

/// Serves `bytes` to one client on a fresh port, reading (and dropping) what it sends.
fn serve(bytes: Vec<u8>) -> std::net::SocketAddr {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        if let Ok((mut s, _)) = listener.accept() {
            let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
            let _ = s.write_all(&bytes);
            let mut sink = [0u8; 4096];
            // Until the client is done: it reads what it can and gives up.
            while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
        }
    });
    addr
}

fn endpoint(addr: std::net::SocketAddr) -> Endpoint {
    Endpoint {
        addr,
        host: "127.0.0.1".into(),
        security: Security::Plain,
        trust: Trust::unverified(),
    }
}

/// Every parser on `bytes`; none may panic. The mail readers run a short conversation
/// against a server that answers with `bytes` whatever is asked.
fn kv_and_postgres(bytes: &[u8]) {
    for command in [Command::Get, Command::Set, Command::Delete] {
        for p in [
            Protocol::Resp2,
            Protocol::Resp3,
            Protocol::MemcacheText,
            Protocol::MemcacheMeta,
        ] {
            // As the session does: skip what parsed, stop where it is incomplete or invalid.
            let mut at = 0;
            while at < bytes.len() {
                match p.parse(&bytes[at..], command, 1) {
                    Parsed::Reply { consumed, .. } if consumed > 0 => at += consumed,
                    _ => break,
                }
            }
        }
        let _ = resp::parse(bytes, command);
    }
    let _ = resp::parse_value(bytes);
    let _ = memcache::parse_stats(bytes);
    let mut inb = BytesMut::from(bytes);
    while let Ok(Some(_)) = frame(&mut inb) {}
}

fn mail(bytes: &[u8], which: usize) {
    let t = Duration::from_millis(200);
    let e = endpoint(serve(bytes.to_vec()));
    match which {
        0 => {
            if let Ok(mut c) = ImapClient::open(&e, t) {
                let _ = c.login("u", "p");
                let _ = c.uid_search("ALL");
                let _ = c.uid_fetch("1:*", "BODY.PEEK[]", &mut Vec::new());
            }
        }
        1 => {
            if let Ok(mut c) = Pop3Client::open(&e, t) {
                let _ = c.login("u", "p");
                let _ = c.stat();
                let _ = c.uidl();
                let mut out = Vec::new();
                let _ = c.retr(1, &mut out);
            }
        }
        _ => {
            for dialect in [Dialect::Smtp, Dialect::Lmtp] {
                let e = endpoint(serve(bytes.to_vec()));
                if let Ok(mut c) = SmtpClient::open(&e, dialect, t) {
                    let _ = c.hello("perflab");
                    if let Ok(env) = c.envelope("a@b", &["c@d", "e@f"]) {
                        let _ = c.data(&env, b"Subject: x\r\n\r\nhello\r\n");
                    }
                }
            }
        }
    }
}

#[track_caller]
fn within_budget(what: &str) {
    let stats = dhat::HeapStats::get();
    assert!(
        stats.max_bytes <= HEAP_BUDGET,
        "{what}: the heap peaked at {} bytes, past the {HEAP_BUDGET}-byte budget",
        stats.max_bytes
    );
}

#[test]
fn hostile_replies_never_panic_and_cost_what_they_send() {
    let _profiler = dhat::Profiler::builder().testing().build();
    for (name, starts) in [
        ("RESP", RESP),
        ("memcached", MEMCACHED),
        ("PostgreSQL", POSTGRES),
    ] {
        runner()
            .run(&hostile(starts), |bytes| {
                kv_and_postgres(&bytes);
                within_budget(name);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // The mail readers talk over sockets: fewer cases, each a short conversation.
    for (which, (name, starts)) in [("IMAP", IMAP), ("POP3", POP3), ("SMTP", SMTP)]
        .into_iter()
        .enumerate()
    {
        let mut r = runner();
        r = TestRunner::new_with_rng(
            Config {
                cases: (cases() / 10).max(20),
                failure_persistence: None,
                ..Config::default()
            },
            r.new_rng(),
        );
        r.run(&hostile(starts), |bytes| {
            mail(&bytes, which);
            within_budget(name);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // The claims themselves, each alone and then with its bytes trickling in: the cost is
    // what arrived, not what was claimed.
    for claim in [
        &b"$536870911\r\n"[..],
        b"VALUE k 0 536870912\r\n",
        b"VA 536870912 O1\r\n",
        b"D\x03\xff\xff\xff",
    ] {
        let mut bytes = claim.to_vec();
        bytes.extend(std::iter::repeat_n(b'x', 1 << 20));
        kv_and_postgres(&bytes);
    }
    mail(
        b"* OK ready\r\na1 OK\r\na2 OK\r\n* 1 FETCH (BODY[] {268435455}\r\nxxxx",
        0,
    );
    within_budget("the claims");
    let stats = dhat::HeapStats::get();
    eprintln!(
        "REPLIES heap peak {} bytes over {} allocations (budget {HEAP_BUDGET})",
        stats.max_bytes, stats.total_blocks
    );
}
