//! STUB
use crate::workload::session::*;
pub const DEFAULT_SIDE: usize = 64;
pub const DEFAULT_MAX_ITER: u32 = 256;
pub struct FractalSession;
impl FractalSession {
    pub fn new(_k: usize, _e: u32, _s: u64) -> Result<Self, OpError> {
        Ok(Self)
    }
}
impl Session for FractalSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Ok(OpOutcome::default())
    }
}
