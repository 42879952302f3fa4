//! STUB (replaced by the pgexpr branch): pgbench's random generator.

#[derive(Debug, Clone)]
pub struct Prng(u64);

impl Prng {
    pub fn seeded(seed: u64) -> Prng {
        Prng(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [lo, hi], both inclusive.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }
}
