//! The memory bandwidth kernels (STREAM's copy, scale, add and triad, and a read and a write
//! pass), each compiled three times and chosen at run time by what the CPU has: AVX-512,
//! AVX2 with FMA, or the build's baseline. A portable build (`x86-64-v2`) so runs as fast as
//! one built for this very CPU (`target-cpu=native`), and a binary copied to an older host
//! (an MPI rank) never meets an instruction its CPU lacks (docs/performance.md has both).
//!
//! The loops are plain Rust over whole cache lines; the compiler turns them into vector
//! code for whichever feature set the copy is compiled with. `unsafe` is only the call of a
//! copy compiled with `#[target_feature]`, made after the CPU was seen to have the features.

use std::sync::OnceLock;

/// Elements of one 64-byte cache line.
pub const LANES: usize = 8;

/// Which copy of the kernels this CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Avx512,
    Avx2,
    Baseline,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Avx512 => "avx512",
            Level::Avx2 => "avx2",
            Level::Baseline => "baseline",
        }
    }
}

/// The widest copy this CPU can run, found once.
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Level::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Level::Avx2;
            }
        }
        Level::Baseline
    })
}

/// Defines a kernel `$name` from its body: the baseline copy, one compiled with AVX2 and FMA
/// and one with AVX-512, and the public function that picks among them.
macro_rules! kernel {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        $(#[$doc])*
        pub fn $name($($arg: $ty),*) -> $ret {
            #[inline(always)]
            fn body($($arg: $ty),*) -> $ret $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2($($arg: $ty),*) -> $ret { body($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f")]
            fn avx512($($arg: $ty),*) -> $ret { body($($arg),*) }
            match level() {
                // SAFETY: `level()` saw the CPU report these features, which is all
                // `#[target_feature]` asks of the caller.
                #[cfg(target_arch = "x86_64")]
                Level::Avx512 => unsafe { avx512($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Level::Avx2 => unsafe { avx2($($arg),*) },
                _ => body($($arg),*),
            }
        }
    };
}

kernel! {
    /// Sum of `a`, in eight partial sums (one per lane of a line) so the additions can run as
    /// vectors; the last `len % 8` elements are added at the end.
    fn read(a: &[f64]) -> f64 {
        let (lines, rest) = a.as_chunks::<LANES>();
        let mut acc = [0.0f64; LANES];
        for line in lines {
            for (s, x) in acc.iter_mut().zip(line) {
                *s += *x;
            }
        }
        acc.iter().sum::<f64>() + rest.iter().sum::<f64>()
    }
}

kernel! {
    /// `a[i] = v`.
    fn write(a: &mut [f64], v: f64) -> () {
        a.fill(v);
    }
}

kernel! {
    /// `c[i] = a[i]`, a whole line (`[f64; 8]`) per iteration: an element-wise loop would be
    /// recognised as a copy idiom and replaced by a call to `memcpy`, which for large arrays
    /// uses non-temporal stores and so measures something else than STREAM's copy.
    fn copy(c: &mut [f64], a: &[f64]) -> () {
        let (dst, dst_rest) = c.as_chunks_mut::<LANES>();
        let (src, src_rest) = a.as_chunks::<LANES>();
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
        for (d, s) in dst_rest.iter_mut().zip(src_rest) {
            *d = *s;
        }
    }
}

kernel! {
    /// `b[i] = q * c[i]`.
    fn scale(b: &mut [f64], c: &[f64], q: f64) -> () {
        for (x, y) in b.iter_mut().zip(c) {
            *x = q * *y;
        }
    }
}

kernel! {
    /// `c[i] = a[i] + b[i]`.
    fn add(c: &mut [f64], a: &[f64], b: &[f64]) -> () {
        for ((r, x), y) in c.iter_mut().zip(a).zip(b) {
            *r = *x + *y;
        }
    }
}

kernel! {
    /// `a[i] = b[i] + q * c[i]` (a multiply and an add, not fused: STREAM's C does the same
    /// unless told to contract, and the checks compare exact values).
    fn triad(a: &mut [f64], b: &[f64], c: &[f64], q: f64) -> () {
        for ((r, x), y) in a.iter_mut().zip(b).zip(c) {
            *r = *x + q * *y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_copy_gives_the_same_answers() {
        let a: Vec<f64> = (0..1003).map(|i| i as f64).collect();
        let b = vec![2.0; 1003];
        let mut c = vec![0.0; 1003];
        assert_eq!(read(&a), (0..1003).sum::<i64>() as f64);
        triad(&mut c, &a, &b, 3.0);
        assert_eq!(c[1002], 1002.0 + 6.0);
        add(&mut c, &a, &b);
        assert_eq!(c[7], 9.0);
        scale(&mut c, &b, 0.5);
        assert!(c.iter().all(|&x| x == 1.0));
        copy(&mut c, &a);
        assert_eq!(c, a);
        write(&mut c, 4.0);
        assert!(c.iter().all(|&x| x == 4.0));
        // The dispatch found something, and the baseline body agrees with it.
        assert!(matches!(
            level(),
            Level::Avx512 | Level::Avx2 | Level::Baseline
        ));
    }
}
