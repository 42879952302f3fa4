//! Which server a key lives on when there are several: memcached's consistent hashing
//! (ketama, as libmemcached and spymemcached place keys) and the [`Router`] the session and
//! the loader ask. Redis Cluster's slots are in [`cluster`](super::cluster).
//!
//! ```text
//!  server "host:port"  ──► MD5("host:port-0") ... MD5("host:port-39")
//!                          each digest = four 32-bit points (little-endian slices)
//!                          ──► 160 points per server on a circle of 2^32
//!  key                 ──► first 4 bytes of MD5(key), little-endian: the key's point
//!                          ──► the first server point at or after it (wrapping to the first)
//! ```
//!
//! The scheme is the one other clients use, so perflab puts each key where a libmemcached
//! application sharing the servers would: libmemcached names a server on the default port
//! 11211 by its host alone (`host-N`), any other port as `host:port-N`, and perflab does the
//! same. A server added to the list takes about 1/N of the keys from the others and moves
//! no key between the others; a server removed gives its keys to the rest.

use super::cluster;
use md5::{Digest, Md5};

/// Digests per server; each gives four points.
const DIGESTS_PER_SERVER: u32 = 40;
/// memcached's default port, which libmemcached leaves out of a server's name.
const DEFAULT_PORT: u16 = 11211;

/// The name a server's points are hashed from, as libmemcached writes it.
pub fn ketama_name(host: &str, port: u16) -> String {
    if port == DEFAULT_PORT {
        host.to_string()
    } else {
        format!("{host}:{port}")
    }
}

/// The continuum: every server's points, sorted, with the server each belongs to.
#[derive(Debug, Clone)]
pub struct Ketama {
    /// Sorted points; `owners[i]` is the server of `points[i]`. Two arrays rather than pairs
    /// so the binary search reads only the points.
    points: Vec<u32>,
    owners: Vec<u16>,
}

impl Ketama {
    /// The ring of `names` (see [`ketama_name`]); server `i` is `names[i]`.
    pub fn new(names: &[String]) -> Ketama {
        let mut pairs: Vec<(u32, u16)> =
            Vec::with_capacity(names.len() * 4 * DIGESTS_PER_SERVER as usize);
        for (server, name) in names.iter().enumerate() {
            for n in 0..DIGESTS_PER_SERVER {
                let digest = Md5::digest(format!("{name}-{n}").as_bytes());
                for x in 0..4 {
                    let slice = [
                        digest[x * 4],
                        digest[x * 4 + 1],
                        digest[x * 4 + 2],
                        digest[x * 4 + 3],
                    ];
                    pairs.push((u32::from_le_bytes(slice), server as u16));
                }
            }
        }
        // Equal points (rare) keep the order of the server list, as a stable sort does.
        pairs.sort_by_key(|&(p, _)| p);
        Ketama {
            points: pairs.iter().map(|&(p, _)| p).collect(),
            owners: pairs.iter().map(|&(_, s)| s).collect(),
        }
    }

    /// A key's point on the circle.
    #[inline]
    pub fn point(key: &[u8]) -> u32 {
        let d = Md5::digest(key);
        u32::from_le_bytes([d[0], d[1], d[2], d[3]])
    }

    /// The server that holds `key`.
    #[inline]
    pub fn shard_of(&self, key: &[u8]) -> usize {
        self.shard_of_point(Ketama::point(key))
    }

    /// The server of the first point at or after `point`, wrapping past the top.
    #[inline]
    pub fn shard_of_point(&self, point: u32) -> usize {
        let i = self.points.partition_point(|&p| p < point);
        let i = if i == self.points.len() { 0 } else { i };
        self.owners[i] as usize
    }
}

/// How keys are spread over the servers of a run.
#[derive(Debug, Clone)]
pub enum Router {
    /// One server: every key on shard 0.
    Single,
    /// memcached servers, by consistent hashing.
    Ketama(Ketama),
    /// A Redis Cluster: shard of each of the 16384 slots, as the cluster said at the start.
    /// Sessions keep their own copy, which `-MOVED` answers update.
    Cluster(cluster::SlotMap),
}

impl Router {
    /// The shard of `key` (sessions route cluster keys through their own slot map).
    #[inline]
    pub fn shard_of(&self, key: &[u8]) -> usize {
        match self {
            Router::Single => 0,
            Router::Ketama(k) => k.shard_of(key),
            Router::Cluster(map) => map.shard_of(key),
        }
    }

    /// What the record calls this way of sharding, when there is one.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Router::Single => None,
            Router::Ketama(_) => Some("ketama"),
            Router::Cluster(_) => Some("cluster"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| ketama_name(&format!("10.0.0.{}", i + 1), 11211))
            .collect()
    }

    fn key(i: u64) -> Vec<u8> {
        format!("perflab:{i}").into_bytes()
    }

    #[test]
    fn the_key_point_is_the_first_four_bytes_of_md5_little_endian() {
        // MD5("") = d41d8cd98f00b204e9800998ecf8427e.
        assert_eq!(Ketama::point(b""), 0xd98c_1dd4);
        // MD5("a") = 0cc175b9c0f1b6a831c399e269772661.
        assert_eq!(Ketama::point(b"a"), 0xb975_c10c);
    }

    #[test]
    fn every_server_has_160_points_and_names_follow_libmemcached() {
        let k = Ketama::new(&names(3));
        assert_eq!(k.points.len(), 480);
        for s in 0..3 {
            assert_eq!(k.owners.iter().filter(|&&o| o == s).count(), 160);
        }
        assert!(k.points.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(ketama_name("cache1", 11211), "cache1");
        assert_eq!(ketama_name("cache1", 11212), "cache1:11212");
    }

    #[test]
    fn a_point_goes_to_the_next_server_point_and_wraps() {
        let k = Ketama::new(&names(2));
        let first = k.points[0];
        let last = *k.points.last().unwrap();
        assert_eq!(k.shard_of_point(first), k.owners[0] as usize);
        assert_eq!(
            k.shard_of_point(first.wrapping_sub(1)),
            k.owners[0] as usize
        );
        assert_eq!(k.shard_of_point(last), *k.owners.last().unwrap() as usize);
        assert_eq!(k.shard_of_point(last.wrapping_add(1)), k.owners[0] as usize);
        assert_eq!(k.shard_of_point(u32::MAX), k.owners[0] as usize);
        assert_eq!(k.shard_of_point(k.points[7] + 1), k.owners[8] as usize);
    }

    #[test]
    fn three_servers_get_about_a_third_of_the_keys_each() {
        let k = Ketama::new(&names(3));
        let mut counts = [0u32; 3];
        let n = 100_000;
        for i in 0..n {
            counts[k.shard_of(&key(i))] += 1;
        }
        for c in counts {
            let share = f64::from(c) / n as f64;
            // 160 points per server leave a few percent of imbalance, as in every client.
            assert!((share - 1.0 / 3.0).abs() < 0.05, "{counts:?}");
        }
    }

    #[test]
    fn adding_a_server_moves_about_a_quarter_of_the_keys_and_only_to_it() {
        let three = Ketama::new(&names(3));
        let four = Ketama::new(&names(4));
        let n = 100_000;
        let mut moved = 0;
        for i in 0..n {
            let (a, b) = (three.shard_of(&key(i)), four.shard_of(&key(i)));
            if a != b {
                assert_eq!(b, 3, "key {i} moved between old servers");
                moved += 1;
            }
        }
        let share = f64::from(moved) / n as f64;
        assert!((share - 0.25).abs() < 0.05, "moved {share}");
    }

    #[test]
    fn removing_a_server_moves_only_its_keys() {
        let three = Ketama::new(&names(3));
        // Server 1 gone: the others keep their names, so their points stay where they were.
        let two = Ketama::new(&[names(3)[0].clone(), names(3)[2].clone()]);
        for i in 0..20_000 {
            let before = three.shard_of(&key(i));
            let after = [0, 2][two.shard_of(&key(i))];
            if before != 1 {
                assert_eq!(before, after, "key {i}");
            }
        }
    }
}
