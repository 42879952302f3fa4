//! STREAM-style memory bandwidth kernels.
//!
//! Each session owns the `f64` arrays its kernel needs (allocated and first touched in
//! [`BandwidthSession::new`], so inside the worker thread) and an op is one full pass over them.
//! The kernels and the byte counting are STREAM's (McCalpin): a load and a store of an `f64`
//! count 8 bytes each, and the store's read-for-ownership is not counted.
//!
//! | kernel | does                  | arrays | bytes / element |
//! |--------|-----------------------|--------|-----------------|
//! | read   | `sum += a[i]`         | 1      | 8               |
//! | write  | `a[i] = v` (v per pass) | 1    | 8               |
//! | copy   | `c[i] = a[i]`         | 2      | 16              |
//! | scale  | `b[i] = q * c[i]`     | 2      | 16              |
//! | add    | `c[i] = a[i] + b[i]`  | 3      | 24              |
//! | triad  | `a[i] = b[i] + q * c[i]` | 3   | 24              |
//!
//! Each array starts on a cache-line boundary whatever the allocator returns, and the kernels
//! are zipped loops over whole slices, with no bounds checks, which the compiler turns into
//! plain vector loads, arithmetic and stores (SSE2 on the x86-64 baseline, AVX-512 with
//! `-C target-cpu=native` on a machine that has it). Copy moves a whole line per iteration so
//! that it stays such a loop rather than becoming a call to `memcpy` (which, for arrays this
//! large, switches to non-temporal stores and would measure something else than STREAM's
//! copy). No kernel uses non-temporal stores.
//!
//! Measured on the reference machine (2-core Zen 5 VM, arrays of 512 MiB) against the C
//! reference `scripts/ref/stream_ref.c` built with `-O3 -march=native`: copy and, with two
//! threads, triad are on par; single-thread triad built for the x86-64 baseline reaches about
//! 0.93-0.97 of it (16-byte SSE2 loads and stores), and about 0.99 when built with
//! `-C target-cpu=x86-64-v3` or `native`. With both cores the DRAM is the limit whatever the
//! instructions.
//!
//! Arrays start as `a = 1`, `b = 2`, `c = 0.5` and `q = 3`, so after one or more passes the
//! destination of each kernel holds a known value, which [`BandwidthSession::check`] verifies
//! the way STREAM does (average relative error below 1e-13).

use crate::engine::kernels::{add, copy, read, scale, triad, write};
use std::hint::black_box;

use crate::workload::session::{OpError, OpOutcome, Session};

/// The scalar of scale and triad.
const SCALAR: f64 = 3.0;
/// Initial values of the three arrays.
const INIT_A: f64 = 1.0;
const INIT_B: f64 = 2.0;
const INIT_C: f64 = 0.5;
/// STREAM's tolerance for the average relative error of an array.
const EPSILON: f64 = 1e-13;

use crate::engine::kernels::LANES;
/// Bytes the arrays are aligned to: a cache line.
const ALIGN: usize = 64;

/// An `f64` array whose first element sits on a cache-line boundary: the vector holds up to
/// seven more elements than needed and the array is the window starting at the first aligned
/// one (found from the address, so no `unsafe` is needed).
#[derive(Debug, Default)]
struct AlignedArray {
    buf: Vec<f64>,
    start: usize,
    len: usize,
}

impl AlignedArray {
    /// `len` elements set to `value`, or an error if the memory cannot be had.
    fn filled(len: usize, value: f64, what: &str) -> Result<Self, OpError> {
        let padded = len + (LANES - 1);
        let mut buf = Vec::new();
        buf.try_reserve_exact(padded).map_err(|e| {
            OpError::other(format!(
                "cannot allocate bandwidth array {what} of {} bytes ({e}): use fewer elements",
                padded.saturating_mul(8)
            ))
        })?;
        // Writing every element here is the first touch, so the pages are this thread's.
        buf.resize(padded, value);
        let misalign = buf.as_ptr() as usize % ALIGN;
        let start = if misalign == 0 {
            0
        } else {
            (ALIGN - misalign) / std::mem::size_of::<f64>()
        };
        Ok(AlignedArray { buf, start, len })
    }

    fn get(&self) -> &[f64] {
        &self.buf[self.start..self.start + self.len]
    }

    fn get_mut(&mut self) -> &mut [f64] {
        &mut self.buf[self.start..self.start + self.len]
    }

    /// Bytes held, padding included.
    fn bytes(&self) -> usize {
        self.buf.len() * std::mem::size_of::<f64>()
    }
}

/// Which STREAM kernel a [`BandwidthSession`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthKernel {
    /// `sum += a[i]`, the sum kept alive with `black_box`.
    Read,
    /// `a[i] = v`, `v` different on every pass.
    Write,
    /// `c[i] = a[i]`.
    Copy,
    /// `b[i] = q * c[i]`.
    Scale,
    /// `c[i] = a[i] + b[i]`.
    Add,
    /// `a[i] = b[i] + q * c[i]`.
    Triad,
}

impl BandwidthKernel {
    /// Every kernel, in STREAM's order after read and write.
    pub const ALL: [BandwidthKernel; 6] = [
        BandwidthKernel::Read,
        BandwidthKernel::Write,
        BandwidthKernel::Copy,
        BandwidthKernel::Scale,
        BandwidthKernel::Add,
        BandwidthKernel::Triad,
    ];

    /// Lower-case name, as used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            BandwidthKernel::Read => "read",
            BandwidthKernel::Write => "write",
            BandwidthKernel::Copy => "copy",
            BandwidthKernel::Scale => "scale",
            BandwidthKernel::Add => "add",
            BandwidthKernel::Triad => "triad",
        }
    }

    /// The kernel called `name` (case-insensitive), or an error listing the valid names.
    pub fn from_name(name: &str) -> Result<Self, OpError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                OpError::other(format!(
                    "unknown bandwidth kernel {name:?}: use one of read, write, copy, scale, add, triad"
                ))
            })
    }

    /// How many `f64` arrays the kernel works on.
    pub fn arrays(self) -> usize {
        match self {
            BandwidthKernel::Read | BandwidthKernel::Write => 1,
            BandwidthKernel::Copy | BandwidthKernel::Scale => 2,
            BandwidthKernel::Add | BandwidthKernel::Triad => 3,
        }
    }

    /// Bytes moved per element, counted as STREAM counts them (8 per array touched).
    pub fn bytes_per_element(self) -> u64 {
        8 * self.arrays() as u64
    }
}

/// One worker's arrays and the kernel it runs over them.
#[derive(Debug)]
pub struct BandwidthSession {
    kernel: BandwidthKernel,
    elements: usize,
    a: AlignedArray,
    b: AlignedArray,
    c: AlignedArray,
    passes: u64,
    /// The sum of the last read pass.
    last_sum: f64,
    /// The value stored by the last write pass.
    last_written: f64,
}

/// The value the write kernel stores on pass number `pass` (counted from 1).
fn write_value(pass: u64) -> f64 {
    1.0 + (pass % 1024) as f64
}

impl BandwidthSession {
    /// Arrays of `elements` `f64` each for `kernel`, initialised (and so first touched) here.
    pub fn new(kernel: BandwidthKernel, elements: usize) -> Result<Self, OpError> {
        if elements == 0 {
            return Err(OpError::other(
                "bandwidth elements must be > 0: give the array length in f64 elements",
            ));
        }
        let fits = elements
            .checked_add(LANES)
            .and_then(|n| n.checked_mul(std::mem::size_of::<f64>()))
            .and_then(|b| b.checked_mul(kernel.arrays()))
            .is_some_and(|b| b <= isize::MAX as usize);
        if !fits {
            return Err(OpError::other(format!(
                "bandwidth elements {elements} is too large for the address space: use fewer elements"
            )));
        }
        let need = |used: bool, value: f64, what: &str| {
            if used {
                AlignedArray::filled(elements, value, what)
            } else {
                Ok(AlignedArray::default())
            }
        };
        use BandwidthKernel as K;
        let a = need(
            matches!(kernel, K::Read | K::Write | K::Copy | K::Add | K::Triad),
            INIT_A,
            "a",
        )?;
        let b = need(matches!(kernel, K::Scale | K::Add | K::Triad), INIT_B, "b")?;
        let c = need(
            matches!(kernel, K::Copy | K::Scale | K::Add | K::Triad),
            INIT_C,
            "c",
        )?;
        Ok(BandwidthSession {
            kernel,
            elements,
            a,
            b,
            c,
            passes: 0,
            last_sum: 0.0,
            last_written: INIT_A,
        })
    }

    /// The kernel this session runs.
    pub fn kernel(&self) -> BandwidthKernel {
        self.kernel
    }

    /// Elements per array.
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// Passes run so far.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Bytes of all this session's arrays (what it holds, not what a pass counts).
    pub fn footprint_bytes(&self) -> u64 {
        (self.a.bytes() + self.b.bytes() + self.c.bytes()) as u64
    }

    /// One pass of the kernel over the whole arrays.
    fn pass(&mut self) {
        let q = SCALAR;
        match self.kernel {
            BandwidthKernel::Read => self.last_sum = black_box(read(self.a.get())),
            BandwidthKernel::Write => {
                let v = write_value(self.passes + 1);
                write(self.a.get_mut(), v);
                self.last_written = v;
            }
            BandwidthKernel::Copy => copy(self.c.get_mut(), self.a.get()),
            BandwidthKernel::Scale => scale(self.b.get_mut(), self.c.get(), q),
            BandwidthKernel::Add => add(self.c.get_mut(), self.a.get(), self.b.get()),
            BandwidthKernel::Triad => triad(self.a.get_mut(), self.b.get(), self.c.get(), q),
        }
        self.passes += 1;
    }

    /// STREAM's validation: every array holds the value it must after the passes run so far
    /// (average relative error below 1e-13), and a read pass summed to `elements`.
    pub fn check(&self) -> bool {
        let n = self.elements as f64;
        let ran = self.passes > 0;
        let (a, b, c) = (self.a.get(), self.b.get(), self.c.get());
        match self.kernel {
            BandwidthKernel::Read => {
                close(a, INIT_A) && (!ran || (self.last_sum - n).abs() <= EPSILON * n)
            }
            BandwidthKernel::Write => close(a, self.last_written),
            BandwidthKernel::Copy => {
                close(a, INIT_A) && close(c, if ran { INIT_A } else { INIT_C })
            }
            BandwidthKernel::Scale => {
                close(c, INIT_C) && close(b, if ran { SCALAR * INIT_C } else { INIT_B })
            }
            BandwidthKernel::Add => {
                close(a, INIT_A)
                    && close(b, INIT_B)
                    && close(c, if ran { INIT_A + INIT_B } else { INIT_C })
            }
            BandwidthKernel::Triad => {
                close(b, INIT_B)
                    && close(c, INIT_C)
                    && close(
                        a,
                        if ran {
                            INIT_B + SCALAR * INIT_C
                        } else {
                            INIT_A
                        },
                    )
            }
        }
    }
}

impl Session for BandwidthSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        self.pass();
        Ok(OpOutcome {
            bytes: self.elements as u64 * self.kernel.bytes_per_element(),
            items: self.elements as u64,
            ..Default::default()
        })
    }
}

/// Whether all of `v` is `expected`, judged as STREAM judges: the average absolute error
/// relative to `expected` is at most [`EPSILON`]. An empty array fails.
fn close(v: &[f64], expected: f64) -> bool {
    if v.is_empty() {
        return false;
    }
    let err: f64 = v.iter().map(|x| (x - expected).abs()).sum();
    let scale = if expected == 0.0 { 1.0 } else { expected.abs() };
    err / v.len() as f64 / scale <= EPSILON
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_table() {
        let expect = [
            (BandwidthKernel::Read, "read", 1, 8),
            (BandwidthKernel::Write, "write", 1, 8),
            (BandwidthKernel::Copy, "copy", 2, 16),
            (BandwidthKernel::Scale, "scale", 2, 16),
            (BandwidthKernel::Add, "add", 3, 24),
            (BandwidthKernel::Triad, "triad", 3, 24),
        ];
        for (k, name, arrays, bytes) in expect {
            assert_eq!(k.name(), name);
            assert_eq!(k.arrays(), arrays);
            assert_eq!(k.bytes_per_element(), bytes);
            assert_eq!(BandwidthKernel::from_name(name), Ok(k));
        }
        assert_eq!(
            BandwidthKernel::from_name("TRIAD"),
            Ok(BandwidthKernel::Triad)
        );
        let err = BandwidthKernel::from_name("daxpy").unwrap_err();
        assert!(err.message.contains("triad"), "{err}");
    }

    #[test]
    fn zero_or_huge_elements_is_an_error() {
        let err = BandwidthSession::new(BandwidthKernel::Copy, 0).unwrap_err();
        assert!(err.message.contains("> 0"), "{err}");
        let err = BandwidthSession::new(BandwidthKernel::Triad, usize::MAX / 4).unwrap_err();
        assert!(err.message.contains("fewer elements"), "{err}");
    }

    #[test]
    fn arrays_are_line_aligned_and_sized() {
        for n in [1, 7, 8, 9, 1000] {
            let s = BandwidthSession::new(BandwidthKernel::Add, n).unwrap();
            for arr in [&s.a, &s.b, &s.c] {
                assert_eq!(arr.get().len(), n);
                assert_eq!(arr.get().as_ptr() as usize % ALIGN, 0);
            }
            assert_eq!(s.footprint_bytes(), 3 * (n as u64 + 7) * 8);
            let s = BandwidthSession::new(BandwidthKernel::Read, n).unwrap();
            assert!(s.b.get().is_empty() && s.c.get().is_empty());
        }
    }

    #[test]
    fn each_kernel_validates_after_passes() {
        // Sizes with and without a partial last line.
        for n in [1, 7, 8, 9, 1000, 4099] {
            for k in BandwidthKernel::ALL {
                let mut s = BandwidthSession::new(k, n).unwrap();
                assert!(s.check(), "{} n={n} before any pass", k.name());
                for pass in 1..=5u64 {
                    let out = s.execute().unwrap();
                    assert_eq!(out.items, n as u64);
                    assert_eq!(out.bytes, n as u64 * k.bytes_per_element());
                    assert_eq!(s.passes(), pass);
                    assert!(s.check(), "{} n={n} after {pass} passes", k.name());
                }
            }
        }
    }

    #[test]
    fn check_catches_a_wrong_element() {
        let mut s = BandwidthSession::new(BandwidthKernel::Triad, 100).unwrap();
        s.execute().unwrap();
        assert!(s.check());
        s.a.get_mut()[37] = 0.0;
        assert!(!s.check());

        // An element in the partial last line counts too.
        let mut s = BandwidthSession::new(BandwidthKernel::Copy, 13).unwrap();
        s.execute().unwrap();
        s.c.get_mut()[12] = 7.0;
        assert!(!s.check());
    }

    #[test]
    fn kernels_do_not_touch_past_the_array() {
        // The padding after the window keeps its initial value.
        let mut s = BandwidthSession::new(BandwidthKernel::Triad, 10).unwrap();
        s.execute().unwrap();
        let end = s.a.start + s.a.len;
        assert_eq!(s.a.buf[end - 1], 3.5);
        assert_eq!(s.a.buf[end], INIT_A);
        if s.a.start > 0 {
            assert_eq!(s.a.buf[s.a.start - 1], INIT_A);
        }
    }

    #[test]
    fn write_value_changes_per_pass() {
        let mut s = BandwidthSession::new(BandwidthKernel::Write, 17).unwrap();
        s.execute().unwrap();
        let first = s.a.get()[0];
        s.execute().unwrap();
        assert_ne!(first, s.a.get()[0]);
        assert_eq!(s.a.get()[16], s.a.get()[0]);
        assert!(s.check());
    }

    #[test]
    fn read_sums() {
        let mut s = BandwidthSession::new(BandwidthKernel::Read, 12345).unwrap();
        s.a.get_mut()[12344] = 2.0;
        s.execute().unwrap();
        assert_eq!(s.last_sum, 12346.0);
        assert!(!s.check()); // a no longer all 1
    }

    /// STREAM's own validation: the four kernels in sequence over shared arrays, then compare
    /// with the scalar recurrence (a = 1, b = 2, c = 0, a *= 2, then NTIMES rounds).
    #[test]
    fn stream_sequence_matches_recurrence() {
        let n: usize = 1003;
        let mut a = vec![1.0; n];
        let mut b = vec![2.0; n];
        let mut c = vec![0.0; n];
        let (mut aj, mut bj, mut cj) = (1.0f64, 2.0f64, 0.0f64);
        a.iter_mut().for_each(|x| *x *= 2.0);
        aj *= 2.0;
        for _ in 0..10 {
            copy(&mut c, &a);
            scale(&mut b, &c, SCALAR);
            add(&mut c, &a, &b);
            triad(&mut a, &b, &c, SCALAR);
            cj = aj;
            bj = SCALAR * cj;
            cj = aj + bj;
            aj = bj + SCALAR * cj;
        }
        assert!(close(&a, aj), "a");
        assert!(close(&b, bj), "b");
        assert!(close(&c, cj), "c");
        assert_eq!(read(&a), aj * n as f64);
    }
}
