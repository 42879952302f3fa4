//! Ports for the throwaway servers perflab starts (PostgreSQL, MariaDB, memcached, Redis,
//! Dovecot): free now, and outside the kernel's ephemeral range.
//!
//! Binding port 0 hands out a port from the ephemeral range
//! (`/proc/sys/net/ipv4/ip_local_port_range`), the same range every outgoing connection
//! takes its local port from. A server that is killed and started again on its port (the
//! mail run's revived Dovecot, a restarted cache) can then find it taken by some client's
//! connection, and on a machine running thousands of connections (the test suite, a cache
//! benchmark) it sometimes did. Ports below the range are never handed to a client.

use std::net::{Ipv4Addr, TcpListener};
use std::time::{SystemTime, UNIX_EPOCH};

/// The lowest port handed out: above the well-known and most registered services' ports.
const FLOOR: u16 = 10_000;

/// `n` distinct ports of 127.0.0.1 that nobody listens on now, below the ephemeral range
/// (above it where the range starts too low to leave room). Another process may still take
/// one before the server binds it, which the servers' starts retry.
pub fn free_ports(n: usize) -> std::io::Result<Vec<u16>> {
    let (lo, hi) = pool(ephemeral_range());
    let span = u32::from(hi - lo) + 1;
    // A different start per process and call, so that servers started at once by parallel
    // tests do not race for the same first port.
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let mut held = Vec::with_capacity(n);
    for i in 0..span {
        if held.len() == n {
            break;
        }
        // A stride coprime with the span walks every port once.
        let port = lo + ((seed.wrapping_add(i.wrapping_mul(7_919))) % span) as u16;
        if let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
            held.push(l);
        }
    }
    if held.len() < n {
        // Nothing free below the range: fall back to the kernel's choice.
        while held.len() < n {
            held.push(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?);
        }
    }
    // Held together until all are known, so that no two are the same.
    held.iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect()
}

/// One free port, as [`free_ports`].
pub fn free_port() -> std::io::Result<u16> {
    Ok(free_ports(1)?[0])
}

/// The kernel's ephemeral range; Linux's default where it cannot be read.
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|w| w.parse::<u16>().ok());
            Some((it.next()??, it.next()??))
        })
        .unwrap_or((32_768, 60_999))
}

/// The ports to draw from, given the ephemeral range: below it, else above it.
fn pool((lo, hi): (u16, u16)) -> (u16, u16) {
    if lo > FLOOR + 1_000 {
        (FLOOR, lo - 1)
    } else if hi < u16::MAX - 1_000 {
        (hi + 1, u16::MAX)
    } else {
        (1_024, u16::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_stays_out_of_the_ephemeral_range() {
        assert_eq!(pool((32_768, 60_999)), (10_000, 32_767));
        assert_eq!(pool((1_024, 40_000)), (40_001, 65_535));
        assert_eq!(pool((1_024, 65_535)), (1_024, 65_535));
    }

    #[test]
    fn ports_are_distinct_free_and_below_the_range() {
        let ports = free_ports(5).unwrap();
        let (lo, _) = ephemeral_range();
        let mut seen = ports.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 5);
        for p in ports {
            assert!(lo <= FLOOR + 1_000 || p < lo, "{p}");
            TcpListener::bind((Ipv4Addr::LOCALHOST, p)).expect("free");
        }
    }
}
