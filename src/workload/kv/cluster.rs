//! Redis Cluster, as a cluster-aware client sees it: 16384 hash slots, each served by one
//! master; a key's slot is CRC16 of the key (or of its `{hashtag}`) mod 16384.
//!
//! ```text
//!  seeds (--target ...) ──► CLUSTER SLOTS on the first that answers
//!                           ──► masters, numbered in the order of their first slot (shards)
//!                           ──► SlotMap: shard of each slot; every slot must be served
//!  a request ──► slot ──► shard ──► one of that shard's connections
//!  "-MOVED slot host:port" ──► the slot now lives there: update the map, send again
//!  "-ASK slot host:port"   ──► only this request, only once: ASKING, then the request there
//! ```
//!
//! The map is read once per step (a step's sessions open against it); each session keeps
//! its own copy and corrects it from `MOVED` answers, as clients do between refreshes. A
//! redirect to a node that was not a master when the map was read fails its request with a
//! message saying so: the next step reads the map again.

use super::endpoint::{Address, Control, Endpoint, EndpointError};
use super::resp::Value;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;
/// A slot served by no node.
const NOBODY: u16 = u16::MAX;

/// CRC16-CCITT as XMODEM computes it (polynomial 0x1021, initial 0, no reflection), one
/// table lookup per byte: the table is built at compile time.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// Redis Cluster's CRC16 (XMODEM).
#[inline]
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc = (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)];
    }
    crc
}

/// The slot of a key: of the part between the first `{` and the next `}` when that part is
/// not empty (so related keys can share a slot), else of the whole key.
#[inline]
pub fn hash_slot(key: &[u8]) -> usize {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        rest.iter()
            .position(|&b| b == b'}')
            .filter(|&close| close > 0)
            .map(|close| &rest[..close])
    });
    usize::from(crc16(tagged.unwrap_or(key))) % SLOTS
}

/// The shard (master) of every slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotMap {
    owner: Vec<u16>,
}

impl SlotMap {
    /// The shard of `key`.
    #[inline]
    pub fn shard_of(&self, key: &[u8]) -> usize {
        usize::from(self.owner[hash_slot(key)])
    }

    /// The shard of `slot`.
    #[inline]
    pub fn shard_of_slot(&self, slot: usize) -> usize {
        usize::from(self.owner[slot])
    }

    /// Slot `slot` now lives on `shard` (a `MOVED` answer).
    pub fn set(&mut self, slot: usize, shard: usize) {
        if slot < SLOTS {
            self.owner[slot] = shard as u16;
        }
    }
}

/// One line of `CLUSTER SLOTS`: slots `start..=end` served by the master at `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRange {
    pub start: u16,
    pub end: u16,
    /// As the node announced itself; empty means "the address you asked".
    pub host: String,
    pub port: u16,
}

/// The ranges of a `CLUSTER SLOTS` answer (RESP2 or RESP3: both are arrays).
pub fn parse_slots(value: &Value) -> Result<Vec<SlotRange>, String> {
    let Value::Array(entries) = value else {
        return Err(match value {
            Value::Error(m) => m.lines().next().unwrap_or("").to_string(),
            other => format!("CLUSTER SLOTS answered {other:?}, not a list of slot ranges"),
        });
    };
    let int = |v: &Value| match v {
        Value::Int(n) => Some(*n),
        _ => None,
    };
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let bad = || {
            format!("CLUSTER SLOTS: an entry that is not [start, end, [host, port, ...]]: {e:?}")
        };
        let Value::Array(parts) = e else {
            return Err(bad());
        };
        let (Some(start), Some(end), Some(Value::Array(master))) = (
            parts.first().and_then(int),
            parts.get(1).and_then(int),
            parts.get(2),
        ) else {
            return Err(bad());
        };
        let host = master.first().and_then(Value::as_text).ok_or_else(bad)?;
        let port = master.get(1).and_then(int).ok_or_else(bad)?;
        if !(0..SLOTS as i64).contains(&start)
            || !(start..SLOTS as i64).contains(&end)
            || !(1..=65535).contains(&port)
        {
            return Err(bad());
        }
        out.push(SlotRange {
            start: start as u16,
            end: end as u16,
            host,
            port: port as u16,
        });
    }
    Ok(out)
}

/// A redirection the cluster answered instead of doing a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `MOVED slot host:port`: the slot lives there now, for good.
    Moved {
        slot: usize,
        host: String,
        port: u16,
    },
    /// `ASK slot host:port`: the slot is being migrated; ask there, this once.
    Ask {
        slot: usize,
        host: String,
        port: u16,
    },
}

/// A `-MOVED` or `-ASK` error's message (without the `-`), or `None` for any other error.
pub fn parse_redirect(message: &[u8]) -> Option<Redirect> {
    let text = std::str::from_utf8(message).ok()?.trim_end();
    let (ask, rest) = if let Some(rest) = text.strip_prefix("MOVED ") {
        (false, rest)
    } else if let Some(rest) = text.strip_prefix("ASK ") {
        (true, rest)
    } else {
        return None;
    };
    let (slot, addr) = rest.split_once(' ')?;
    let slot: usize = slot.parse().ok().filter(|&s| s < SLOTS)?;
    // The port follows the last colon, so an IPv6 address keeps its own colons.
    let (host, port) = addr.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    Some(if ask {
        Redirect::Ask { slot, host, port }
    } else {
        Redirect::Moved { slot, host, port }
    })
}

/// The cluster's masters (in the order of their first slot) and its slot map, from the
/// first seed that answers `CLUSTER SLOTS`. The masters' endpoints are the seed's, with
/// their own address.
pub fn discover(seeds: &[Endpoint], timeout: Duration) -> Result<(Vec<Endpoint>, SlotMap), String> {
    let mut last = String::from("no seed given");
    for seed in seeds {
        if seed.db != 0 {
            return Err(format!(
                "{}: a Redis Cluster has only database 0; drop /{} from the URL",
                seed.shown, seed.db
            ));
        }
        let answer =
            Control::open(seed, timeout).and_then(|mut c| c.command(&[b"CLUSTER", b"SLOTS"]));
        let value = match answer {
            Ok(v) => v,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        let ranges = parse_slots(&value).map_err(|m| format!("{}: {m}", seed.shown))?;
        return build(seed, &ranges);
    }
    Err(last)
}

/// The cluster's map read again through `known` (the shards of the previous step): the
/// shards keep their numbers, so a step's shard 2 is the previous step's; masters not seen
/// before come after them.
pub fn refresh(known: &[Endpoint], timeout: Duration) -> Result<(Vec<Endpoint>, SlotMap), String> {
    let (found, map) = discover(known, timeout)?;
    Ok(renumber(known, found, &map))
}

/// `found` and its `map` renumbered so the `known` nodes keep their numbers.
fn renumber(known: &[Endpoint], found: Vec<Endpoint>, map: &SlotMap) -> (Vec<Endpoint>, SlotMap) {
    let mut nodes: Vec<Endpoint> = known.to_vec();
    let number: Vec<u16> = found
        .into_iter()
        .map(
            |n| match nodes.iter().position(|k| k.address == n.address) {
                Some(i) => i as u16,
                None => {
                    nodes.push(n);
                    (nodes.len() - 1) as u16
                }
            },
        )
        .collect();
    let owner = map.owner.iter().map(|&o| number[usize::from(o)]).collect();
    (nodes, SlotMap { owner })
}

/// The masters and slot map of `ranges`, as announced to `seed`.
pub fn build(seed: &Endpoint, ranges: &[SlotRange]) -> Result<(Vec<Endpoint>, SlotMap), String> {
    let mut sorted: Vec<&SlotRange> = ranges.iter().collect();
    sorted.sort_by_key(|r| r.start);
    let mut nodes: Vec<Endpoint> = Vec::new();
    let mut owner = vec![NOBODY; SLOTS];
    for r in sorted {
        let node = node_endpoint(seed, &r.host, r.port).map_err(|e| e.to_string())?;
        let shard = match nodes.iter().position(|n| n.address == node.address) {
            Some(i) => i,
            None => {
                nodes.push(node);
                nodes.len() - 1
            }
        };
        for slot in &mut owner[usize::from(r.start)..=usize::from(r.end)] {
            *slot = shard as u16;
        }
    }
    if let Some(first) = owner.iter().position(|&o| o == NOBODY) {
        let end = owner[first..]
            .iter()
            .position(|&o| o != NOBODY)
            .map_or(SLOTS - 1, |n| first + n - 1);
        return Err(format!(
            "{}: slots {first}-{end} are served by no node (CLUSTER SLOTS): the cluster is not ready; check CLUSTER INFO",
            seed.shown
        ));
    }
    Ok((nodes, SlotMap { owner }))
}

/// The endpoint of the node a cluster names, reached as `seed` is (same user, password and
/// protocol). An empty host is the seed's own address, as Redis means it.
pub fn node_endpoint(seed: &Endpoint, host: &str, port: u16) -> Result<Endpoint, EndpointError> {
    let seed_ip = match &seed.address {
        Address::Tcp(a) => Some(a.ip()),
        Address::Unix(_) => None,
    };
    let shown_host = if host.is_empty() || host == "?" {
        seed_ip.map(|ip| ip.to_string()).unwrap_or_default()
    } else {
        host.to_string()
    };
    let unreachable = |reason: String| EndpointError::Unreachable {
        shown: format!("redis://{shown_host}:{port}"),
        reason,
    };
    let address: SocketAddr = match shown_host.parse::<std::net::IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port),
        Err(_) if shown_host.is_empty() => {
            return Err(unreachable(
                "the cluster named no address for this node, and the seed is a Unix socket".into(),
            ));
        }
        Err(_) => (shown_host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| unreachable(format!("cannot resolve: {e}")))?
            .next()
            .ok_or_else(|| unreachable("the name has no address".into()))?,
    };
    let scheme = if seed.tls.is_some() {
        "rediss"
    } else {
        "redis"
    };
    let shown = match address {
        SocketAddr::V6(a) => format!("{scheme}://[{}]:{}", a.ip(), a.port()),
        SocketAddr::V4(a) => format!("{scheme}://{a}"),
    };
    Ok(Endpoint {
        address: Address::Tcp(address),
        shown,
        ..seed.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::kv::protocol::Protocol;

    fn seed() -> Endpoint {
        Endpoint {
            address: Address::Tcp("127.0.0.1:7000".parse().unwrap()),
            tls: None,
            protocol: Protocol::Resp2,
            user: None,
            password: None,
            db: 0,
            shown: "redis://127.0.0.1:7000".into(),
        }
    }

    #[test]
    fn crc16_is_xmodem() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn slots_follow_hashtags() {
        // Redis's own examples (CLUSTER KEYSLOT): foo is 12182, somekey 11058.
        assert_eq!(hash_slot(b"foo"), 12182);
        assert_eq!(hash_slot(b"somekey"), 11058);
        assert_eq!(hash_slot(b"{user1000}.following"), hash_slot(b"user1000"));
        assert_eq!(hash_slot(b"{user1000}.followers"), hash_slot(b"user1000"));
        // An empty tag does not count: the whole key is hashed.
        assert_eq!(
            hash_slot(b"foo{}{bar}"),
            usize::from(crc16(b"foo{}{bar}")) % SLOTS
        );
        // Only the first { and the first } after it.
        assert_eq!(hash_slot(b"foo{{bar}}zap"), hash_slot(b"{bar"));
        assert_eq!(hash_slot(b"foo{bar}{zap}"), hash_slot(b"bar"));
        assert_eq!(
            hash_slot(b"no{close"),
            usize::from(crc16(b"no{close")) % SLOTS
        );
    }

    fn range(start: i64, end: i64, port: i64) -> Value {
        Value::Array(vec![
            Value::Int(start),
            Value::Int(end),
            Value::Array(vec![
                Value::Bulk(b"127.0.0.1".to_vec()),
                Value::Int(port),
                Value::Bulk(b"0123abcd".to_vec()),
            ]),
            // A replica: ignored.
            Value::Array(vec![
                Value::Bulk(b"127.0.0.1".to_vec()),
                Value::Int(port + 100),
            ]),
        ])
    }

    #[test]
    fn cluster_slots_become_a_map_of_masters_in_slot_order() {
        let answer = Value::Array(vec![
            range(10923, 16383, 7002),
            range(0, 5460, 7000),
            range(5461, 10922, 7001),
        ]);
        let ranges = parse_slots(&answer).unwrap();
        assert_eq!(ranges.len(), 3);
        let (nodes, map) = build(&seed(), &ranges).unwrap();
        let shown: Vec<&str> = nodes.iter().map(|n| n.shown.as_str()).collect();
        assert_eq!(
            shown,
            [
                "redis://127.0.0.1:7000",
                "redis://127.0.0.1:7001",
                "redis://127.0.0.1:7002"
            ]
        );
        assert_eq!(map.shard_of_slot(0), 0);
        assert_eq!(map.shard_of_slot(5461), 1);
        assert_eq!(map.shard_of_slot(16383), 2);
        assert_eq!(map.shard_of(b"foo"), 2);
    }

    #[test]
    fn a_cluster_with_unserved_slots_is_refused() {
        let answer = Value::Array(vec![range(0, 5460, 7000), range(5470, 16383, 7001)]);
        let err = build(&seed(), &parse_slots(&answer).unwrap()).unwrap_err();
        assert!(err.contains("slots 5461-5469"), "{err}");
        let err = parse_slots(&Value::Error(
            "ERR This instance has cluster support disabled".into(),
        ))
        .unwrap_err();
        assert!(err.contains("cluster support disabled"), "{err}");
        assert!(parse_slots(&Value::Array(vec![Value::Int(3)])).is_err());
    }

    #[test]
    fn an_empty_host_is_the_seeds_address() {
        let n = node_endpoint(&seed(), "", 7005).unwrap();
        assert_eq!(n.shown, "redis://127.0.0.1:7005");
        assert_eq!(n.address, Address::Tcp("127.0.0.1:7005".parse().unwrap()));
    }

    #[test]
    fn moved_and_ask_answers_are_parsed() {
        assert_eq!(
            parse_redirect(b"MOVED 3999 127.0.0.1:6381"),
            Some(Redirect::Moved {
                slot: 3999,
                host: "127.0.0.1".into(),
                port: 6381
            })
        );
        assert_eq!(
            parse_redirect(b"ASK 3999 ::1:6381\r\n"),
            Some(Redirect::Ask {
                slot: 3999,
                host: "::1".into(),
                port: 6381
            })
        );
        assert_eq!(
            parse_redirect(b"MOVED 12 :7001"),
            Some(Redirect::Moved {
                slot: 12,
                host: String::new(),
                port: 7001
            })
        );
        for other in [
            &b"ERR unknown command"[..],
            b"MOVED 16384 127.0.0.1:1",
            b"MOVED x 127.0.0.1:1",
            b"MOVED 1 127.0.0.1",
            b"TRYAGAIN Multiple keys request during rehashing of slot",
        ] {
            assert_eq!(
                parse_redirect(other),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }

    #[test]
    fn a_refreshed_map_keeps_the_shard_numbers() {
        let answer = Value::Array(vec![range(0, 8191, 7001), range(8192, 16383, 7002)]);
        let (known, _) = build(&seed(), &parse_slots(&answer).unwrap()).unwrap();
        // Now 7000 has joined with the low slots, and 7001 lost them: 7000 sorts first in
        // CLUSTER SLOTS but is numbered after the shards already known.
        let later = Value::Array(vec![range(0, 4095, 7000), range(4096, 16383, 7002)]);
        let (found, map) = build(&seed(), &parse_slots(&later).unwrap()).unwrap();
        assert_eq!(found[0].shown, "redis://127.0.0.1:7000");
        let (nodes, map) = renumber(&known, found, &map);
        let shown: Vec<&str> = nodes.iter().map(|n| n.shown.as_str()).collect();
        assert_eq!(
            shown,
            [
                "redis://127.0.0.1:7001",
                "redis://127.0.0.1:7002",
                "redis://127.0.0.1:7000"
            ]
        );
        assert_eq!(map.shard_of_slot(0), 2);
        assert_eq!(map.shard_of_slot(4096), 1);
        assert_eq!(map.shard_of_slot(16383), 1);
    }

    #[test]
    fn moved_updates_the_map() {
        let answer = Value::Array(vec![range(0, 8191, 7000), range(8192, 16383, 7001)]);
        let (_, mut map) = build(&seed(), &parse_slots(&answer).unwrap()).unwrap();
        let slot = hash_slot(b"foo");
        assert_eq!(map.shard_of(b"foo"), 1);
        map.set(slot, 0);
        assert_eq!(map.shard_of(b"foo"), 0);
        assert_eq!(map.shard_of_slot(slot + 1), 1);
    }
}
