//! The peers' spellings: a kind's command line as fio's, pgbench's, redis-benchmark's or
//! memtier's users type it, read into perflab's own options before clap sees it.
//!
//! A kind names its peers ([`crate::workload::kind::Kind::peers`]); each [`Peer`] is a table of
//! [`Flag`]s in the kind's folder (`workload/io/peer.rs` is fio's). [`translate`] walks the
//! words after the kind's name and rewrites each peer flag into perflab's options (fio's
//! `--runtime=3` is `--duration 3s`), leaving perflab's own options and everything it does
//! not know to clap. What a peer flag cannot mean here is refused in one line that says what
//! to use instead, never left to clap's fuzzy guess (`--filename` is not `--files`).
//!
//! Which peer's meaning wins, when two spell a flag alike:
//! - perflab's own options keep perflab's meaning, unless the line is in a peer's *dialect*:
//!   it holds a flag only that peer has (pgbench's `-c`, redis-benchmark's `-h HOST`,
//!   memtier's `--server`), or `--like PEER`. Then that peer's flags mean what they mean to
//!   it, and where perflab spells the same flag differently a note says so (memtier's `-c` is
//!   per thread, perflab's `--clients` over all threads);
//! - two peers that spell a flag alike with different meanings (`-n`: redis-benchmark's total,
//!   memtier's per client) need the dialect; without one the flag is refused, naming `--like`.
//!
//! Notes (what a flag was read as, when that may surprise) go to stderr before the run.

use std::collections::BTreeMap;

/// A peer tool and the flags of its that a kind reads.
pub struct Peer {
    /// As its users call it: `fio`, `pgbench`.
    pub name: &'static str,
    pub flags: &'static [Flag],
    /// A word that is not a flag, in this peer's dialect (pgbench's database name): `Ok(true)`
    /// when taken.
    pub positional: fn(&mut Reading, &str) -> Result<bool, String>,
    /// Called once every flag is read: what the flags left in slots becomes perflab's options
    /// (a host and a port become one `--target`).
    pub finish: fn(&mut Reading) -> Result<(), String>,
    /// A line in this peer's dialect read as a whole before its flags one by one: fio's
    /// command line is a job file (options before the first `--name` its `[global]`, each
    /// `--name` a job), which this rewrites into perflab's words; the flags it leaves are
    /// read as usual.
    pub whole: Option<Whole>,
    /// Whether `name` is one of its options beyond `flags`, which [`Peer::whole`] reads
    /// (fio's job options): such a flag marks the line as this peer's.
    pub knows: Option<fn(&str) -> bool>,
    /// Whether a word that is not a flag marks the line as this peer's by itself, where no
    /// flag does (sysbench's test name: `oltp_point_select run`).
    pub marks: Option<fn(&str) -> bool>,
}

/// Reads a line in a peer's dialect as a whole ([`Peer::whole`]): perflab's words, or why not.
pub type Whole = fn(&[String]) -> Result<Vec<String>, String>;

/// A flag a peer knows beyond its table ([`Peer::knows`]): read with the whole line.
static KNOWN: Flag = Flag::value(
    &[],
    "one of the tool's options, read with the whole line",
    same,
);

/// Whether a peer flag takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A switch (`--time_based`); `--flag=VALUE` is still read (fio writes `--time_based=1`).
    Nothing,
    /// `--flag VALUE`, `--flag=VALUE`, `-fVALUE`.
    Value,
}

/// One flag of a peer and what it becomes. A table writes the simple ones in a line each:
/// [`to_option!`] (the flag is one of perflab's options, its value converted so),
/// [`to_seconds!`] (an option in seconds without a unit), [`to_switch!`] (one of perflab's
/// switches), [`to_slot!`] (a value [`Peer::finish`] puts together with others); the others
/// are [`Flag::value`] or [`Flag::switch`] with a reader of their own.
pub struct Flag {
    /// Its spellings: `--runtime`, `-T`.
    pub names: &'static [&'static str],
    pub takes: Takes,
    /// What it means here, for docs/options.md and for telling two peers' meanings apart:
    /// `--duration (seconds if no unit)`, or why it is refused.
    pub means: &'static str,
    /// Reads it: adds perflab's options to the [`Reading`], or says why it cannot mean
    /// anything here (one line, naming what to use instead).
    pub read: Read,
}

/// How a [`Flag`] is read: its value (`None` for a switch written alone) into the
/// [`Reading`], or why it cannot mean anything here.
pub type Read = fn(&mut Reading, Option<&str>) -> Result<(), String>;

impl Flag {
    /// A flag that takes a value (`--runtime 30`, `--runtime=30`, `-T30`).
    pub const fn value(names: &'static [&'static str], means: &'static str, read: Read) -> Flag {
        Flag {
            names,
            takes: Takes::Value,
            means,
            read,
        }
    }

    /// A switch (`--time_based`; `--time_based=1` hands its reader the `1`).
    pub const fn switch(names: &'static [&'static str], means: &'static str, read: Read) -> Flag {
        Flag {
            names,
            takes: Takes::Nothing,
            means,
            read,
        }
    }
}

/// A [`Flag`] that is one of perflab's options, its value given as written or converted
/// first; what it means is the option's name unless said: `to_option!(["--blocksize"],
/// "--bs")`, `to_option!(["--filesize"], "--size", "--size (of each file)")`,
/// `to_option!(["--readwrite"], "--rw", "--rw", rw)` with a `fn(&str) -> String`. (A macro,
/// not a function: a table is a `static`, and a flag's reader a function pointer, which cannot
/// hold the option's name as a closure would.)
macro_rules! to_option {
    ([$($name:literal),+], $option:literal) => {
        $crate::workload::peer::to_option!([$($name),+], $option, $option)
    };
    ([$($name:literal),+], $option:literal, $means:expr) => {
        $crate::workload::peer::to_option!([$($name),+], $option, $means, str::to_string)
    };
    ([$($name:literal),+], $option:literal, $means:expr, $convert:expr) => {
        $crate::workload::peer::Flag::value(&[$($name),+], $means, |r, value| {
            r.opt($option, &$convert($crate::workload::peer::given(value)));
            Ok(())
        })
    };
}
pub(crate) use to_option;

/// A [`Flag`] that is one of perflab's times in the peers' way, seconds when it has no unit
/// ([`seconds`]): `to_seconds!(["--runtime"], "--duration")`.
macro_rules! to_seconds {
    ([$($name:literal),+], $option:literal) => {
        $crate::workload::peer::to_option!(
            [$($name),+],
            $option,
            concat!($option, " (seconds without a unit)"),
            $crate::workload::peer::seconds
        )
    };
}
pub(crate) use to_seconds;

/// A peer's switch that is one of perflab's switches (`-S` is `--select-only`), whatever
/// value it is written with; what it means is the switch's name unless said.
macro_rules! to_switch {
    ([$($name:literal),+], $word:literal) => {
        $crate::workload::peer::to_switch!([$($name),+], $word, $word)
    };
    ([$($name:literal),+], $word:literal, $means:expr) => {
        $crate::workload::peer::Flag::switch(&[$($name),+], $means, |r, _| {
            r.word($word);
            Ok(())
        })
    };
}
pub(crate) use to_switch;

/// A flag whose value is kept in a slot for [`Peer::finish`], which puts it together with
/// others (a host and a port become one `--target`): `to_slot!(["-U"], "user", "the user
/// (into --target)")`; with a check, which refuses a value first (`whole`: a whole number).
macro_rules! to_slot {
    ([$($name:literal),+], $slot:literal, $means:expr) => {
        $crate::workload::peer::Flag::value(&[$($name),+], $means, |r, value| {
            r.keep($slot, $crate::workload::peer::given(value));
            Ok(())
        })
    };
    ([$($name:literal),+], $slot:literal, $means:expr, $check:expr) => {
        $crate::workload::peer::Flag::value(&[$($name),+], $means, |r, value| {
            $check($crate::workload::peer::given(value))?;
            r.keep($slot, $crate::workload::peer::given(value));
            Ok(())
        })
    };
}
pub(crate) use to_slot;

/// The value a flag was given; empty for a switch written alone.
pub fn given(value: Option<&str>) -> &str {
    value.unwrap_or_default()
}

/// A no-op [`Flag::read`]: a peer flag whose meaning is perflab's default.
pub fn same(_: &mut Reading, _: Option<&str>) -> Result<(), String> {
    Ok(())
}

/// A command line being read: perflab's words so far, notes, and values kept for
/// [`Peer::finish`].
#[derive(Debug, Default)]
pub struct Reading {
    args: Vec<String>,
    notes: Vec<String>,
    slots: BTreeMap<&'static str, String>,
    /// The peer whose dialect the line is in, if any.
    dialect: Option<&'static str>,
    /// The peers whose flags were read: each finishes its reading.
    used: Vec<&'static str>,
}

impl Reading {
    /// Adds perflab's `--name value`.
    pub fn opt(&mut self, name: &str, value: &str) {
        self.args.push(name.to_string());
        self.args.push(value.to_string());
    }

    /// Adds perflab's switch (`--select-only`) or positional word (`prepare`).
    pub fn word(&mut self, word: &str) {
        self.args.push(word.to_string());
    }

    /// Keeps a value for [`Peer::finish`] (a host, a port).
    pub fn keep(&mut self, slot: &'static str, value: &str) {
        self.slots.insert(slot, value.to_string());
    }

    /// A value kept by [`Reading::keep`].
    pub fn kept(&self, slot: &str) -> Option<&str> {
        self.slots.get(slot).map(String::as_str)
    }

    /// Says how a flag was read, when perflab's reading may surprise its peer's users.
    pub fn note(&mut self, text: String) {
        if !self.notes.contains(&text) {
            self.notes.push(text);
        }
    }

    /// Whether perflab's own option `name` (a long name, `--clients`) is on the line already.
    pub fn has(&self, name: &str) -> bool {
        self.args
            .iter()
            .any(|a| a == name || a.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
    }

    /// The peer whose dialect the line is in.
    pub fn dialect(&self) -> Option<&'static str> {
        self.dialect
    }
}

/// A command line in perflab's own words, with what to tell the user about the reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    pub args: Vec<String>,
    pub notes: Vec<String>,
}

/// perflab's own flags of one command: their spellings, and whether each takes a value
/// (`Some(true)`), may take one (`None`: `--direct`), or takes none (`Some(false)`).
#[derive(Debug, Default, Clone)]
pub struct OwnFlags {
    flags: BTreeMap<String, Option<bool>>,
}

impl OwnFlags {
    /// The flags of `command` (its long names, aliases and short forms).
    pub fn of(command: &clap::Command) -> OwnFlags {
        let mut own = OwnFlags::default();
        own.add(command);
        own
    }

    /// Adds `command`'s flags (the generic options every command takes, say).
    pub fn add(&mut self, command: &clap::Command) {
        for arg in command.get_arguments() {
            if arg.is_positional() {
                continue;
            }
            let takes = match arg.get_num_args() {
                Some(r) if r.min_values() == 0 && r.max_values() > 0 => None,
                Some(r) => Some(r.max_values() > 0),
                None => Some(arg.get_action().takes_values()),
            };
            let longs = arg
                .get_long()
                .into_iter()
                .chain(arg.get_all_aliases().unwrap_or_default());
            for long in longs {
                self.flags.insert(format!("--{long}"), takes);
            }
            for short in arg
                .get_short()
                .into_iter()
                .chain(arg.get_all_short_aliases().unwrap_or_default())
            {
                self.flags.insert(format!("-{short}"), takes);
            }
        }
        self.flags.insert("--help".into(), Some(false));
    }

    fn get(&self, name: &str) -> Option<Option<bool>> {
        self.flags.get(name).copied()
    }
}

/// One word of a command line, read as a flag: its name (`--runtime`, `-c`) and a value
/// written into the same word (`--runtime=3`, `-c10`).
fn flag_of(word: &str) -> Option<(&str, Option<&str>)> {
    if let Some(long) = word.strip_prefix("--") {
        if long.is_empty() {
            return None;
        }
        return Some(match word.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (word, None),
        });
    }
    let rest = word.strip_prefix('-')?;
    let first = rest.chars().next()?;
    // `-5` is a value (a negative number), not a flag.
    if !first.is_ascii_alphabetic() {
        return None;
    }
    let len = 1 + first.len_utf8();
    Some(match word.len() > len {
        true => (&word[..len], Some(word[len..].trim_start_matches('='))),
        false => (word, None),
    })
}

/// The peers that define `name`, with their flag.
fn defining<'p>(peers: &'p [&'p Peer], name: &str) -> Vec<(&'p Peer, &'p Flag)> {
    peers
        .iter()
        .filter_map(|p| {
            p.flags
                .iter()
                .find(|f| f.names.contains(&name))
                .or_else(|| p.knows.filter(|k| k(name)).map(|_| &KNOWN))
                .map(|f| (*p, f))
        })
        .collect()
}

/// The dialect of a line: `--like PEER`, else the peer of the first flag only it has (one
/// perflab does not have either). `-h` marks a dialect only with a value after it: alone, it
/// is help.
fn dialect(
    peers: &[&Peer],
    own: &OwnFlags,
    argv: &[String],
) -> Result<(Option<&'static str>, Vec<String>), String> {
    let mut argv = argv.to_vec();
    let mut like = None;
    while let Some(i) = argv
        .iter()
        .position(|w| w == "--like" || w.starts_with("--like="))
    {
        let value = match argv[i].split_once('=') {
            Some((_, v)) => {
                let v = v.to_string();
                argv.remove(i);
                v
            }
            None if i + 1 < argv.len() => {
                argv.remove(i);
                argv.remove(i)
            }
            None => return Err(like_error(peers, "")),
        };
        match peers.iter().find(|p| p.name == value) {
            Some(p) => like = Some(p.name),
            None => return Err(like_error(peers, &value)),
        }
    }
    if like.is_some() {
        return Ok((like, argv));
    }
    let mut found: Option<(&'static str, String)> = None;
    for (i, word) in argv.iter().enumerate() {
        if word == "--" {
            break;
        }
        let Some((name, inline)) = flag_of(word) else {
            continue;
        };
        if name == "-h" && inline.is_none() && argv.get(i + 1).is_none_or(|n| n.starts_with('-')) {
            continue;
        }
        if own.get(name).is_some() && name != "-h" {
            continue;
        }
        let mut by = defining(peers, name);
        // Peers that spell a flag alike with different meanings are told apart by its value
        // where only one of them can read it (memtier's `-P memcache_text`, redis-benchmark's
        // `-P 16`; a socket path against a host).
        if by.len() > 1
            && by.iter().any(|(_, f)| f.means != by[0].1.means)
            && let Some(value) = inline.or(argv.get(i + 1).map(String::as_str))
        {
            by.retain(|(_, f)| (f.read)(&mut Reading::default(), Some(value)).is_ok());
        }
        if let [(peer, _)] = by[..] {
            match &found {
                Some((other, first)) if *other != peer.name => {
                    return Err(format!(
                        "{first} is {other}'s and {name} is {}'s: write the line in one tool's flags, or say which with --like {other}|{}",
                        peer.name, peer.name
                    ));
                }
                Some(_) => {}
                None => found = Some((peer.name, name.to_string())),
            }
        }
    }
    if found.is_none() {
        found = marked(peers, own, &argv);
    }
    Ok((found.map(|(p, _)| p), argv))
}

/// The peer whose word ([`Peer::marks`]) the line holds, where no flag named a dialect:
/// the values of perflab's own flags are passed over (`--workload oltp_read_write`).
fn marked(peers: &[&Peer], own: &OwnFlags, argv: &[String]) -> Option<(&'static str, String)> {
    let mut value_next = false;
    for word in argv {
        if word == "--" {
            break;
        }
        if std::mem::take(&mut value_next) {
            continue;
        }
        if let Some((name, inline)) = flag_of(word) {
            value_next = inline.is_none() && own.get(name) == Some(Some(true));
            continue;
        }
        if let Some(p) = peers.iter().find(|p| p.marks.is_some_and(|m| m(word))) {
            return Some((p.name, word.clone()));
        }
    }
    None
}

fn like_error(peers: &[&Peer], value: &str) -> String {
    let names: Vec<&str> = peers.iter().map(|p| p.name).collect();
    match names.is_empty() {
        true => "--like: this command reads no other tool's flags".to_string(),
        false => format!(
            "--like {value:?}: give the tool whose flags the line uses: {}",
            names.join(", ")
        ),
    }
}

/// Reads the words after a kind's name (`argv`) into perflab's own options: each of a peer's
/// flags rewritten, the rest as given. `own` holds perflab's flags of this command.
pub fn translate(peers: &[&Peer], own: &OwnFlags, argv: &[String]) -> Result<Translated, String> {
    if peers.is_empty() {
        return Ok(Translated {
            args: argv.to_vec(),
            notes: Vec::new(),
        });
    }
    let (dialect, argv) = dialect(peers, own, argv)?;
    let mut r = Reading {
        dialect,
        ..Reading::default()
    };
    let spoken = dialect.and_then(|d| peers.iter().find(|p| p.name == d).copied());
    let argv = match spoken.and_then(|p| p.whole) {
        Some(whole) => whole(&argv)?,
        None => argv,
    };
    let mut i = 0;
    while i < argv.len() {
        let word = &argv[i];
        i += 1;
        if word == "--" {
            r.args.extend(argv[i - 1..].iter().cloned());
            break;
        }
        let Some((name, inline)) = flag_of(word) else {
            // A word that is not a flag: the dialect's (a database name), else perflab's.
            if let Some(p) = spoken
                && (p.positional)(&mut r, word)?
            {
                continue;
            }
            r.args.push(word.clone());
            continue;
        };
        let mine = own.get(name).filter(|_| name != "-h");
        let by = defining(peers, name);
        let chosen = match (dialect, mine, &by[..]) {
            // The dialect's own flags first, even where perflab spells one alike.
            (Some(d), _, _) if by.iter().any(|(p, _)| p.name == d) => {
                by.iter().find(|(p, _)| p.name == d).copied()
            }
            (_, Some(_), _) => None,
            (_, None, []) => None,
            (_, None, [(p, f), rest @ ..]) => {
                if let Some((q, _)) = rest.iter().find(|(_, g)| g.means != f.means) {
                    return Err(format!(
                        "{name} means {} to {} and {} to {}: say whose with --like {}|{}",
                        f.means,
                        p.name,
                        rest.iter()
                            .find(|(x, _)| x.name == q.name)
                            .map_or("", |(_, g)| g.means),
                        q.name,
                        p.name,
                        q.name
                    ));
                }
                Some((*p, *f))
            }
        };
        let Some((peer, flag)) = chosen else {
            // perflab's own, or unknown to every table: clap reads it (a value after it too,
            // so that a value such as `-h` is never taken for a flag here).
            r.args.push(word.clone());
            if inline.is_none()
                && mine == Some(Some(true))
                && let Some(next) = argv.get(i)
            {
                r.args.push(next.clone());
                i += 1;
            }
            continue;
        };
        let value = match (flag.takes, inline) {
            (_, Some(v)) => Some(v.to_string()),
            (Takes::Nothing, None) => None,
            (Takes::Value, None) => match argv.get(i) {
                Some(next) if !(next.starts_with('-') && flag_of(next).is_some()) => {
                    i += 1;
                    Some(next.clone())
                }
                // `-h` alone is help, as everywhere.
                _ if name == "-h" => {
                    r.args.push(word.clone());
                    continue;
                }
                _ => return Err(format!("{}'s {name} needs a value", peer.name)),
            },
        };
        if !r.used.contains(&peer.name) {
            r.used.push(peer.name);
        }
        (flag.read)(&mut r, value.as_deref()).map_err(|why| match value.as_deref() {
            Some(v) if inline.is_some() || flag.takes == Takes::Value => {
                format!("{}'s {name} {v}: {why}", peer.name)
            }
            _ => format!("{}'s {name}: {why}", peer.name),
        })?;
    }
    // The dialect's peer finishes (its defaults, its target); without one, each peer whose
    // flags were read.
    for p in peers {
        if dialect == Some(p.name) || (dialect.is_none() && r.used.contains(&p.name)) {
            (p.finish)(&mut r)?;
        }
    }
    Ok(Translated {
        args: r.args,
        notes: r.notes,
    })
}

/// The kind's help, after its options: which tools' flags it reads too, and which.
pub fn help(peers: &[&Peer]) -> String {
    let lines: Vec<String> = peers
        .iter()
        .map(|p| {
            let names: Vec<&str> = p
                .flags
                .iter()
                .flat_map(|f| f.names.iter().copied())
                .collect();
            format!(
                "{}'s flags, as its users type them: {}",
                p.name,
                names.join(" ")
            )
        })
        .collect();
    format!(
        "{}\n(docs/options.md: what each means here; --like TOOL when two tools spell a flag alike)",
        lines.join("\n")
    )
}

/// A peer's flags as docs/options.md tables them for `perflab KIND` (a test keeps the docs
/// the same as the code).
pub fn markdown(kind: &str, peer: &Peer) -> String {
    let mut out = format!(
        "### perflab {kind}: {name}'s flags\n\n| {name} | perflab |\n|---|---|\n",
        name = peer.name
    );
    for f in peer.flags {
        let names: Vec<String> = f.names.iter().map(|n| format!("`{n}`")).collect();
        out.push_str(&format!("| {} | {} |\n", names.join(", "), f.means));
    }
    out
}

/// A time as the peers write it: seconds without a unit (fio's `--runtime=30`, pgbench's
/// `-T 30`), else perflab's units, which are the same letters.
pub fn seconds(value: &str) -> String {
    unitless(value, "s")
}

/// `value` with `unit` appended when it is a bare number.
pub fn unitless(value: &str, unit: &str) -> String {
    let v = value.trim();
    match !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') {
        true => format!("{v}{unit}"),
        false => v.to_string(),
    }
}

/// A whole number, or why not.
pub fn whole(value: &str) -> Result<u64, String> {
    value
        .trim()
        .parse::<u64>()
        .map_err(|_| "expected a whole number".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(r: &mut Reading, v: Option<&str>) -> Result<(), String> {
        r.opt("--duration", &seconds(v.unwrap_or_default()));
        Ok(())
    }
    fn refuse(_: &mut Reading, _: Option<&str>) -> Result<(), String> {
        Err("use perflab export".into())
    }
    fn host(r: &mut Reading, v: Option<&str>) -> Result<(), String> {
        r.keep("host", v.unwrap_or_default());
        Ok(())
    }
    fn total(r: &mut Reading, v: Option<&str>) -> Result<(), String> {
        r.opt("--ops", v.unwrap_or_default());
        Ok(())
    }
    fn per_client(r: &mut Reading, v: Option<&str>) -> Result<(), String> {
        r.keep("per_client", v.unwrap_or_default());
        Ok(())
    }
    fn no_word(_: &mut Reading, _: &str) -> Result<bool, String> {
        Ok(false)
    }
    fn finish(r: &mut Reading) -> Result<(), String> {
        if let Some(h) = r.kept("host").map(str::to_string) {
            r.opt("--target", &format!("redis://{h}"));
        }
        Ok(())
    }
    fn nothing(_: &mut Reading) -> Result<(), String> {
        Ok(())
    }

    static A: Peer = Peer {
        name: "a",
        flags: &[
            Flag {
                names: &["--runtime", "-T"],
                takes: Takes::Value,
                means: "--duration",
                read: runtime,
            },
            Flag {
                names: &["--output"],
                takes: Takes::Value,
                means: "refused",
                read: refuse,
            },
            Flag {
                names: &["-h"],
                takes: Takes::Value,
                means: "host",
                read: host,
            },
            Flag {
                names: &["-n"],
                takes: Takes::Value,
                means: "total requests",
                read: total,
            },
            Flag {
                names: &["--time_based"],
                takes: Takes::Nothing,
                means: "the default",
                read: same,
            },
        ],
        positional: no_word,
        finish,
        whole: None,
        knows: None,
        marks: None,
    };
    static B: Peer = Peer {
        name: "b",
        flags: &[
            Flag {
                names: &["-n"],
                takes: Takes::Value,
                means: "requests per client",
                read: per_client,
            },
            Flag {
                names: &["--server"],
                takes: Takes::Value,
                means: "host",
                read: host,
            },
        ],
        positional: no_word,
        finish: nothing,
        whole: None,
        knows: None,
        marks: None,
    };

    fn own() -> OwnFlags {
        OwnFlags::of(
            &clap::Command::new("x")
                .arg(clap::Arg::new("threads").long("threads").short('t'))
                .arg(
                    clap::Arg::new("q")
                        .long("quiet")
                        .action(clap::ArgAction::SetTrue),
                ),
        )
    }

    fn tr(line: &str) -> Result<Translated, String> {
        let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
        translate(&[&A, &B], &own(), &argv)
    }

    #[test]
    fn peer_flags_become_perflabs_options() {
        let t = tr("--runtime=3 -t 2 --time_based -T5").unwrap();
        assert_eq!(t.args, ["--duration", "3s", "-t", "2", "--duration", "5s"]);
        let t = tr("-h 127.0.0.1 --quiet").unwrap();
        assert_eq!(t.args, ["--quiet", "--target", "redis://127.0.0.1"]);
    }

    #[test]
    fn refusals_and_missing_values_are_one_line_naming_the_peer() {
        assert_eq!(
            tr("--output=x").unwrap_err(),
            "a's --output x: use perflab export"
        );
        assert_eq!(tr("--runtime").unwrap_err(), "a's --runtime needs a value");
    }

    #[test]
    fn help_stays_help_and_values_of_own_flags_are_not_read_as_flags() {
        assert_eq!(tr("-h").unwrap().args, ["-h"]);
        assert_eq!(tr("-t -n").unwrap().args, ["-t", "-n"]);
    }

    #[test]
    fn a_flag_two_peers_read_differently_needs_the_dialect() {
        let e = tr("-n 5").unwrap_err();
        assert!(e.contains("--like a|b"), "{e}");
        assert_eq!(
            tr("-h x -n 5").unwrap().args,
            ["--ops", "5", "--target", "redis://x"]
        );
        assert_eq!(tr("--server x -n 5").unwrap().args, Vec::<String>::new());
        assert_eq!(tr("--like b -n 5").unwrap().args, Vec::<String>::new());
        let e = tr("-h x --server y").unwrap_err();
        assert!(e.contains("--like a|b"), "{e}");
        assert!(tr("--like c").unwrap_err().contains("a, b"));
    }

    static C: Peer = Peer {
        name: "c",
        flags: &[
            to_option!(["--bsize"], "--bs"),
            to_option!(["--loops", "-L"], "--repeat", "--repeat (runs)"),
            to_option!(["--log_msec"], "--interval", "--interval (ms)", |v| {
                unitless(v, "ms")
            }),
            to_seconds!(["--runtime"], "--duration"),
            to_switch!(["--quiet-please"], "--quiet"),
            to_slot!(["--server"], "host", "host"),
            to_slot!(["--port"], "port", "port", whole),
        ],
        positional: no_word,
        finish,
        whole: None,
        knows: None,
        marks: None,
    };

    #[test]
    fn the_constructors_make_the_flags_they_say() {
        let tr = |line: &str| {
            let argv: Vec<String> = line.split_whitespace().map(String::from).collect();
            translate(&[&C], &own(), &argv)
        };
        let t = tr("--bsize 4k -L2 --log_msec=500 --runtime 3 --quiet-please=0").unwrap();
        assert_eq!(
            t.args,
            [
                "--bs",
                "4k",
                "--repeat",
                "2",
                "--interval",
                "500ms",
                "--duration",
                "3s",
                "--quiet"
            ]
        );
        assert_eq!(
            tr("--server x --port 1").unwrap().args,
            ["--target", "redis://x"]
        );
        assert_eq!(
            tr("--port x").unwrap_err(),
            "c's --port x: expected a whole number"
        );
        let means: Vec<&str> = C.flags.iter().map(|f| f.means).collect();
        assert_eq!(
            means,
            [
                "--bs",
                "--repeat (runs)",
                "--interval (ms)",
                "--duration (seconds without a unit)",
                "--quiet",
                "host",
                "port"
            ]
        );
        let takes: Vec<Takes> = C.flags.iter().map(|f| f.takes).collect();
        assert_eq!(takes[4], Takes::Nothing);
        assert!(
            takes
                .iter()
                .enumerate()
                .all(|(i, t)| i == 4 || *t == Takes::Value)
        );
    }

    #[test]
    fn words_are_read_as_flags_only_where_they_are_flags() {
        assert_eq!(flag_of("--rw=randread"), Some(("--rw", Some("randread"))));
        assert_eq!(flag_of("-c10"), Some(("-c", Some("10"))));
        assert_eq!(flag_of("-5"), None);
        assert_eq!(flag_of("--"), None);
        assert_eq!(seconds("30"), "30s");
        assert_eq!(seconds("2m"), "2m");
        assert_eq!(unitless("100", "us"), "100us");
    }
}
