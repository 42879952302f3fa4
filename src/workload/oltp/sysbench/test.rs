//! sysbench's OLTP tests by name: what one event of each does, and which tables it needs.

use serde::Serialize;

/// One of the Lua tests sysbench 1.0.20 ships in `/usr/share/sysbench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// BEGIN, point selects, the four kinds of range, both updates, delete and insert, COMMIT.
    OltpReadWrite,
    /// BEGIN, point selects and ranges, COMMIT.
    OltpReadOnly,
    /// BEGIN, both updates, delete and insert, COMMIT.
    OltpWriteOnly,
    /// One point select (`--point_selects` is forced to 1), no transaction.
    OltpPointSelect,
    /// `--index_updates` updates of k, no transaction.
    OltpUpdateIndex,
    /// `--non_index_updates` updates of c, no transaction.
    OltpUpdateNonIndex,
    /// One unprepared INSERT.
    OltpInsert,
    /// One DELETE of a random id.
    OltpDelete,
    /// `SELECT id, k, c, pad FROM sbtest1 WHERE k IN (...)`, on the client's slice of k.
    SelectRandomPoints,
    /// `SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ? OR ...`.
    SelectRandomRanges,
    /// A row `(n, n)` a event into the client's own table, sent as multi-row INSERTs.
    BulkInsert,
}

impl Test {
    pub const ALL: [Test; 11] = [
        Test::OltpReadWrite,
        Test::OltpReadOnly,
        Test::OltpWriteOnly,
        Test::OltpPointSelect,
        Test::OltpUpdateIndex,
        Test::OltpUpdateNonIndex,
        Test::OltpInsert,
        Test::OltpDelete,
        Test::SelectRandomPoints,
        Test::SelectRandomRanges,
        Test::BulkInsert,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Test::OltpReadWrite => "oltp_read_write",
            Test::OltpReadOnly => "oltp_read_only",
            Test::OltpWriteOnly => "oltp_write_only",
            Test::OltpPointSelect => "oltp_point_select",
            Test::OltpUpdateIndex => "oltp_update_index",
            Test::OltpUpdateNonIndex => "oltp_update_non_index",
            Test::OltpInsert => "oltp_insert",
            Test::OltpDelete => "oltp_delete",
            Test::SelectRandomPoints => "select_random_points",
            Test::SelectRandomRanges => "select_random_ranges",
            Test::BulkInsert => "bulk_insert",
        }
    }

    /// A test by its name, or by its script's path as sysbench takes it
    /// (`/usr/share/sysbench/oltp_read_write.lua`, `oltp_read_write.lua`).
    pub fn parse(word: &str) -> Option<Test> {
        let file = word.rsplit('/').next().unwrap_or(word);
        let name = file.strip_suffix(".lua").unwrap_or(file);
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The names, for messages.
    pub fn names() -> String {
        let names: Vec<&str> = Test::ALL.iter().map(|t| t.name()).collect();
        names.join(", ")
    }

    /// Whether its event is a transaction (BEGIN ... COMMIT) unless `--skip_trx`.
    pub fn transactional(self) -> bool {
        matches!(
            self,
            Test::OltpReadWrite | Test::OltpReadOnly | Test::OltpWriteOnly
        )
    }

    /// Whether it reads only: the transaction takes no write lock (SQLite).
    pub fn reads_only(self) -> bool {
        matches!(
            self,
            Test::OltpReadOnly
                | Test::OltpPointSelect
                | Test::SelectRandomPoints
                | Test::SelectRandomRanges
        )
    }

    /// Whether it works on `sbtest1` alone (sysbench refuses `--tables` above 1).
    pub fn one_table(self) -> bool {
        matches!(self, Test::SelectRandomPoints | Test::SelectRandomRanges)
    }

    /// Whether its tables are bulk_insert's: `(id, k)`, one per thread, loaded empty.
    pub fn bulk(self) -> bool {
        self == Test::BulkInsert
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_found_by_name_and_by_script_path() {
        for t in Test::ALL {
            assert_eq!(Test::parse(t.name()), Some(t));
        }
        assert_eq!(
            Test::parse("/usr/share/sysbench/oltp_read_write.lua"),
            Some(Test::OltpReadWrite)
        );
        assert_eq!(Test::parse("bulk_insert.lua"), Some(Test::BulkInsert));
        assert_eq!(Test::parse("fileio"), None);
        assert_eq!(Test::parse("oltp_common"), None);
    }
}
