//! pgbench's hash functions of a 64-bit integer with a seed: `hash` and `hash_murmur2`
//! (MurmurHash64A on the value's 8 bytes) and `hash_fnv1a` (FNV-1a 64 over its bytes, the
//! least significant first), both with pgbench's way of mixing in the seed.

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
/// `MM2_MUL * 8`: MurmurHash64A's seed is mixed with the key's length, 8 bytes.
const MM2_MUL_TIMES_8: u64 = 0x3525_3c9a_de8f_4ca8;
const MM2_ROT: u32 = 47;

/// `getHashFnv1a`: the seed XORed into the offset basis, then the 8 bytes.
pub fn fnv1a(val: i64, seed: i64) -> i64 {
    let mut result = FNV_OFFSET_BASIS ^ seed as u64;
    let mut v = val as u64;
    for _ in 0..8 {
        result ^= v & 0xff;
        v >>= 8;
        result = result.wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// `getHashMurmur2`: MurmurHash64A of one 8-byte block.
pub fn murmur2(val: i64, seed: i64) -> i64 {
    let mut result = seed as u64 ^ MM2_MUL_TIMES_8;
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplier_times_eight() {
        assert_eq!(MM2_MUL.wrapping_mul(8), MM2_MUL_TIMES_8);
    }

    /// t/001_pgbench_with_server.pl's values, and more from pgbench 15's `debug()`.
    #[test]
    fn hashes_match_pgbench() {
        assert_eq!(murmur2(10, 5432), -5817877081768721676);
        assert_eq!(fnv1a(10, 5432), -7793829335365542153);
        assert_eq!(murmur2(-1, 0), 4219408603045787357);
        assert_eq!(murmur2(0, 0), 8217090173679840641);
        assert_eq!(murmur2(123456789, 987654321), -3046098614147007385);
        assert_eq!(fnv1a(i64::MIN, -1), 4052607191188198810);
        assert_eq!(fnv1a(0, 0), -6284781860667377211);
        // hash(10) under --random-seed=5432, whose :default_seed is 7590783070443337668.
        assert_eq!(murmur2(10, 7590783070443337668), 4313776982099445391);
        // hash(1.5, 2.5): both rounded half to even, so hash(2, 2).
        assert_eq!(murmur2(2, 2), 8628357597987678224);
    }
}
