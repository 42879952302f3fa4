//! Latency histograms: HDR, values in nanoseconds, three significant digits.
//!
//! Histograms are stored in records losslessly (compressed HDR V2, base64), so percentiles
//! can be recomputed and runs merged or compared later without rerunning anything.

use super::types::LatencySummary;
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Highest latency a histogram holds without saturating: one hour.
const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;

/// A latency histogram in nanoseconds.
pub type LatencyHistogram = Histogram<u64>;

/// A new, empty latency histogram (1 ns .. 1 h at 3 significant digits: 33,792 counters,
/// 264 KiB).
pub fn new_histogram() -> LatencyHistogram {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("constant bounds are valid")
}

/// Percentiles and moments of a histogram.
pub fn summarize(h: &LatencyHistogram) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    LatencySummary {
        count: h.len(),
        min_ns: h.min(),
        mean_ns: h.mean(),
        stdev_ns: h.stdev(),
        p50_ns: h.value_at_quantile(0.50),
        p90_ns: h.value_at_quantile(0.90),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
    }
}

/// Encodes a histogram as base64 of the compressed HDR V2 format.
pub fn encode(h: &LatencyHistogram) -> String {
    let mut bytes = Vec::new();
    // Serializing into a Vec cannot fail for a histogram of u64 counts.
    if V2DeflateSerializer::new().serialize(h, &mut bytes).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A histogram in a record that does not decode: what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DecodeError(String);

/// Decodes what [`encode`] wrote.
pub fn decode(text: &str) -> Result<LatencyHistogram, DecodeError> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| DecodeError(format!("histogram is not base64: {e}")))?;
    Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .map_err(|e| DecodeError(format!("histogram does not decode: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_every_count() {
        let mut h = new_histogram();
        for v in [1u64, 10, 100, 1_000, 1_000_000, 5_000_000_000] {
            h.saturating_record(v);
        }
        let back = decode(&encode(&h)).unwrap();
        assert_eq!(back.len(), 6);
        assert_eq!(summarize(&back), summarize(&h));
    }

    #[test]
    fn summary_of_known_values() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.saturating_record(v * 1000);
        }
        let s = summarize(&h);
        assert_eq!(s.count, 1000);
        assert!((s.p50_ns as f64 - 500_000.0).abs() / 500_000.0 < 0.002);
        assert!((s.p99_ns as f64 - 990_000.0).abs() / 990_000.0 < 0.002);
        assert!((s.mean_ns - 500_500.0).abs() / 500_500.0 < 0.002);
        assert_eq!(summarize(&new_histogram()), LatencySummary::default());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode("not base64!").is_err());
        assert!(decode("AAAA").is_err());
    }
}
