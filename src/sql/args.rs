//! The options every SQL kind takes about its database besides the URL, as one clap struct
//! that oltp, scan and olap flatten into their arguments: `--set` (session settings; several
//! values sweep), `--keep` (the tables after `all`) and `--op-timeout` (how long an answer
//! may take). What they mean is the same everywhere ([`super::target`] reads them); how each
//! kind's help words them, and how long its statements may run, is the kind's ([`Words`]).
//!
//! `--target` stays in each kind's arguments: oltp's repeats (one per shard), scan's also
//! takes `native`.

use clap::Args;
use std::marker::PhantomData;

/// How a kind's help words its SQL options, and its default op timeout.
pub trait Words {
    /// `--set`'s help.
    const SET: &'static str;
    /// `--set`'s other spellings, shown in the help (oltp's `--pg-set`).
    const SET_ALIASES: &'static [&'static str] = &[];
    /// `--keep`'s help.
    const KEEP: &'static str = "Keep the tables after `all` (drop them later with `cleanup`)";
    /// `--op-timeout`'s help: what fails when an answer takes too long.
    const OP_TIMEOUT: &'static str;
    /// `--op-timeout`'s default: longer than the kind's longest statement should take.
    const OP_TIMEOUT_DEFAULT: &'static str;
}

/// `--set`, `--keep` and `--op-timeout`, worded by `W`.
#[derive(Debug, Args)]
pub struct SqlArgs<W: Words> {
    #[arg(long, visible_aliases = W::SET_ALIASES, value_name = "NAME=VALUE", help = W::SET)]
    pub set: Vec<String>,
    #[arg(long, help = W::KEEP)]
    pub keep: bool,
    #[arg(long, value_name = "TIME", default_value = W::OP_TIMEOUT_DEFAULT, help = W::OP_TIMEOUT)]
    pub op_timeout: String,
    #[arg(skip)]
    words: PhantomData<W>,
}
