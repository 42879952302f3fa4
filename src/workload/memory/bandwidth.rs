//! STUB
use crate::workload::session::*;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandwidthKernel {
    Read,
    Write,
    Copy,
    Scale,
    Add,
    Triad,
}
impl BandwidthKernel {
    pub fn arrays(self) -> usize {
        3
    }
}
pub struct BandwidthSession;
impl BandwidthSession {
    pub fn new(_k: BandwidthKernel, _e: usize) -> Result<Self, OpError> {
        Ok(Self)
    }
}
impl Session for BandwidthSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Ok(OpOutcome::default())
    }
}
