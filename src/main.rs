//! The perflab binary: parse, run, print the error on one line, exit with its code.

use std::process::ExitCode;

fn main() -> ExitCode {
    perflab::main_with_args(std::env::args_os())
}
