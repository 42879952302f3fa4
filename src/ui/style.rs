//! Colour for terminals. Off when NO_COLOR is set (https://no-color.org) or the stream is not
//! a terminal, so pipes and files get plain text.

use std::io::IsTerminal;

fn enabled_for_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}

/// A warning line for stderr: yellow on a terminal.
pub fn warning(text: &str) -> String {
    if enabled_for_stderr() {
        format!("\x1b[33mwarning:\x1b[0m {text}")
    } else {
        format!("warning: {text}")
    }
}
