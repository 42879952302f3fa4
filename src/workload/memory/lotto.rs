//! STUB
use crate::workload::session::*;
pub struct LottoSession;
impl LottoSession {
    pub fn new(_e: usize, _s: u64) -> Result<Self, OpError> {
        Ok(Self)
    }
}
impl Session for LottoSession {
    fn execute(&mut self) -> Result<OpOutcome, OpError> {
        Ok(OpOutcome::default())
    }
}
