//! redis-benchmark's tests (`-t`, perflab's `--tests`): each test one command on the keys
//! redis-benchmark uses, run as one step of its own, in redis-benchmark's order.
//!
//! Facts from redis-benchmark's source (redis 7.x, `src/redis-benchmark.c`, its default
//! suite), not its code:
//! - the order below is the order it runs them; `-t` selects by exact name (lower-cased,
//!   matched between commas, so `-t "set, get"` selects only `set`), and names it does not
//!   know select nothing; `ping` selects both pings and `lrange` every LRANGE test;
//! - any LRANGE test is preceded by "LPUSH (needed to benchmark LRANGE)", a test of its own
//!   that fills `mylist` again;
//! - without `-r` every `__rand_int__` is sent as written (one key); with it, each is a
//!   random number below N, 12 digits; ZADD's score is `0`, or `__rand_int__` with `-r`;
//! - the tests share keys in order: the pops drain what the pushes left.

use super::command::{Family, Template};

/// One test: its `-t` name, the title redis-benchmark prints (the record's group), the
/// command (perflab's words, `{data}` the `-d` value), and the reply types that answer it.
struct Test {
    name: &'static str,
    title: &'static str,
    command: &'static str,
    expect: &'static [u8],
    /// Other `-t` names that select it.
    also: &'static [&'static str],
}

/// A bulk string, or a nil (RESP2 `$-1`, RESP3 `_`).
const BULK_OR_NIL: &[u8] = b"$_";
const INTEGER: &[u8] = b":";
const OK: &[u8] = b"+";
const ARRAY: &[u8] = b"*";
const LRANGE: &[&str] = &["lrange"];

const MSET: &str = "MSET key:__rand_int__ {data} key:__rand_int__ {data} key:__rand_int__ {data} \
key:__rand_int__ {data} key:__rand_int__ {data} key:__rand_int__ {data} key:__rand_int__ {data} \
key:__rand_int__ {data} key:__rand_int__ {data} key:__rand_int__ {data}";

/// In redis-benchmark's order.
static TESTS: &[Test] = &[
    Test {
        name: "ping_inline",
        title: "PING_INLINE",
        command: "PING",
        expect: OK,
        also: &["ping"],
    },
    Test {
        name: "ping_mbulk",
        title: "PING_MBULK",
        command: "PING",
        expect: OK,
        also: &["ping"],
    },
    Test {
        name: "set",
        title: "SET",
        command: "SET key:__rand_int__ {data}",
        expect: OK,
        also: &[],
    },
    Test {
        name: "get",
        title: "GET",
        command: "GET key:__rand_int__",
        expect: BULK_OR_NIL,
        also: &[],
    },
    Test {
        name: "incr",
        title: "INCR",
        command: "INCR counter:__rand_int__",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "lpush",
        title: "LPUSH",
        command: "LPUSH mylist {data}",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "rpush",
        title: "RPUSH",
        command: "RPUSH mylist {data}",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "lpop",
        title: "LPOP",
        command: "LPOP mylist",
        expect: BULK_OR_NIL,
        also: &[],
    },
    Test {
        name: "rpop",
        title: "RPOP",
        command: "RPOP mylist",
        expect: BULK_OR_NIL,
        also: &[],
    },
    Test {
        name: "sadd",
        title: "SADD",
        command: "SADD myset element:__rand_int__",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "hset",
        title: "HSET",
        command: "HSET myhash element:__rand_int__ {data}",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "spop",
        title: "SPOP",
        command: "SPOP myset",
        expect: BULK_OR_NIL,
        also: &[],
    },
    Test {
        name: "zadd",
        title: "ZADD",
        command: "ZADD myzset 0 element:__rand_int__",
        expect: INTEGER,
        also: &[],
    },
    Test {
        name: "zpopmin",
        title: "ZPOPMIN",
        command: "ZPOPMIN myzset",
        expect: ARRAY,
        also: &[],
    },
    Test {
        name: "lpush_lrange",
        title: "LPUSH (needed to benchmark LRANGE)",
        command: "LPUSH mylist {data}",
        expect: INTEGER,
        also: &[
            "lrange",
            "lrange_100",
            "lrange_300",
            "lrange_500",
            "lrange_600",
        ],
    },
    Test {
        name: "lrange_100",
        title: "LRANGE_100 (first 100 elements)",
        command: "LRANGE mylist 0 99",
        expect: ARRAY,
        also: LRANGE,
    },
    Test {
        name: "lrange_300",
        title: "LRANGE_300 (first 300 elements)",
        command: "LRANGE mylist 0 299",
        expect: ARRAY,
        also: LRANGE,
    },
    Test {
        name: "lrange_500",
        title: "LRANGE_500 (first 500 elements)",
        command: "LRANGE mylist 0 499",
        expect: ARRAY,
        also: LRANGE,
    },
    Test {
        name: "lrange_600",
        title: "LRANGE_600 (first 600 elements)",
        command: "LRANGE mylist 0 599",
        expect: ARRAY,
        also: LRANGE,
    },
    Test {
        name: "mset",
        title: "MSET (10 keys)",
        command: MSET,
        expect: OK,
        also: &[],
    },
    Test {
        name: "xadd",
        title: "XADD",
        command: "XADD mystream * myfield {data}",
        expect: b"$",
        also: &[],
    },
];

/// The names `-t` takes, for messages.
pub fn names() -> String {
    let mut n: Vec<&str> = TESTS
        .iter()
        .filter(|t| t.name != "lpush_lrange")
        .map(|t| t.name)
        .collect();
    n.extend(["ping", "lrange"]);
    n.join(", ")
}

/// Whether `word` is a name `-t` knows.
pub fn known(word: &str) -> bool {
    TESTS
        .iter()
        .any(|t| (t.name == word && t.name != "lpush_lrange") || t.also.contains(&word))
}

/// The tests a `-t` list selects (`None`: the default suite, every test), in
/// redis-benchmark's order, by name: as redis-benchmark selects them (see the module's docs).
pub fn select(list: Option<&str>) -> Vec<&'static str> {
    let Some(list) = list else {
        return TESTS.iter().map(|t| t.name).collect();
    };
    let list = list.to_ascii_lowercase();
    let words: Vec<&str> = list.split(',').collect();
    TESTS
        .iter()
        .filter(|t| {
            words
                .iter()
                .any(|w| (*w == t.name && t.name != "lpush_lrange") || t.also.contains(w))
        })
        .map(|t| t.name)
        .collect()
}

/// The command of test `name`; `rand_int`: with redis-benchmark's `-r`.
pub fn template(name: &str, rand_int: bool) -> Result<Template, String> {
    let t = TESTS
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("no test {name:?}; redis-benchmark's tests: {}", names()))?;
    let command = match (t.name, rand_int) {
        ("zadd", true) => "ZADD myzset __rand_int__ element:__rand_int__",
        _ => t.command,
    };
    let template = Template::parse(command, Family::Redis, Some(t.title), rand_int)?;
    let template = template.expecting(t.expect);
    Ok(match t.name {
        "ping_inline" => template.inline(),
        _ => template,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_follows_redis_benchmark() {
        assert_eq!(select(Some("get,SET")), ["set", "get"]);
        assert_eq!(select(Some("set, get")), ["set"]);
        assert_eq!(select(Some("ping")), ["ping_inline", "ping_mbulk"]);
        assert_eq!(select(Some("lrange_300")), ["lpush_lrange", "lrange_300"]);
        assert_eq!(select(Some("lrange")).len(), 5);
        assert!(select(Some("nope")).is_empty());
        assert_eq!(select(None).len(), 21);
        assert!(known("lrange") && known("xadd") && !known("lpush_lrange"));
    }

    #[test]
    fn every_test_compiles() {
        for name in select(None) {
            for r in [false, true] {
                let t = template(name, r).unwrap();
                assert!(!t.expect.is_empty(), "{name}");
            }
        }
    }
}
