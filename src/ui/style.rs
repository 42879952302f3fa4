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

fn enabled_for_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// A good outcome on stdout (a verdict of "faster"): green on a terminal.
pub fn good(text: &str) -> String {
    paint(text, "32")
}

/// A bad outcome on stdout (a verdict of "slower"): red on a terminal.
pub fn bad(text: &str) -> String {
    paint(text, "31")
}

fn paint(text: &str, code: &str) -> String {
    if enabled_for_stdout() {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}
