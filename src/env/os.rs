//! Operating system: kernel, distribution and the small single-value files.

use serde::{Deserialize, Serialize};

/// Kernel and distribution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsInfo {
    /// `/proc/sys/kernel/osrelease` (what `uname -r` prints).
    pub kernel_release: Option<String>,
    /// `/proc/sys/kernel/version` (what `uname -v` prints).
    pub kernel_version: Option<String>,
    /// `PRETTY_NAME` of `/etc/os-release` (or `/usr/lib/os-release`).
    pub distro: Option<String>,
    /// The architecture perflab was built for (`std::env::consts::ARCH`).
    pub arch: String,
}

/// The first line of a one-value file, trimmed; `None` when blank.
pub fn single_value(text: &str) -> Option<String> {
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_string())
}

/// A shell-style os-release value: quotes removed, backslash escapes resolved.
fn unquote(value: &str) -> String {
    let value = value.trim();
    let inner = ['"', '\'']
        .iter()
        .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
        .unwrap_or(value);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The distribution's name from os-release: `PRETTY_NAME`, else `NAME VERSION`.
pub fn parse_os_release(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().split_once('='))
            .find(|(k, _)| k.trim() == key)
            .map(|(_, v)| unquote(v))
            .filter(|v| !v.trim().is_empty())
    };
    field("PRETTY_NAME").or_else(|| match (field("NAME"), field("VERSION")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (n, _) => n,
    })
}

/// `/proc/loadavg`: the 1, 5 and 15 minute load averages.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut words = text.split_whitespace();
    let mut next = || {
        words
            .next()?
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    Some([next()?, next()?, next()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str = r#"PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
"#;

    #[test]
    fn os_release() {
        assert_eq!(
            parse_os_release(DEBIAN).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release("NAME=Alpine\nVERSION='3.20 \"edge\"'\n").as_deref(),
            Some("Alpine 3.20 \"edge\"")
        );
        assert_eq!(
            parse_os_release("# comment\nPRETTY_NAME=\"Say \\\"hi\\\"\"\n").as_deref(),
            Some("Say \"hi\"")
        );
        assert_eq!(
            parse_os_release("NAME=\"Arch Linux\"\n").as_deref(),
            Some("Arch Linux")
        );
        assert_eq!(parse_os_release("PRETTY_NAME=\"\"\n"), None);
        assert_eq!(parse_os_release(""), None);
        assert_eq!(parse_os_release("\"\n=\n'"), None);
    }

    #[test]
    fn single_values() {
        assert_eq!(
            single_value("6.8.0-45-generic\n").as_deref(),
            Some("6.8.0-45-generic")
        );
        assert_eq!(
            single_value("#46-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:24:02 UTC 2024\n")
                .as_deref(),
            Some("#46-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:24:02 UTC 2024")
        );
        assert_eq!(single_value("  \n"), None);
        assert_eq!(single_value(""), None);
    }

    #[test]
    fn loadavg() {
        assert_eq!(
            parse_loadavg("0.52 1.07 2.50 3/1234 56789\n"),
            Some([0.52, 1.07, 2.5])
        );
        assert_eq!(parse_loadavg("0.52 1.07"), None);
        assert_eq!(parse_loadavg("nan 1 2"), None);
        assert_eq!(parse_loadavg("-1 1 2"), None);
        assert_eq!(parse_loadavg(""), None);
    }
}
