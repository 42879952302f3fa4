//! STUB
use crate::workload::session::*;
pub struct LatencySession;
impl LatencySession {
    pub fn new(_k: usize, _e: usize, _s: u64) -> Result<Self, OpError> {
        Ok(Self)
    }
}
impl Session for LatencySession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Ok(OpOutcome::default())
    }
}
