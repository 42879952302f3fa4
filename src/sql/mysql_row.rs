//! One row of a MySQL result, read where it lies in the packet: nothing is decoded or copied
//! until a caller asks for a cell, and then only the cells before it are stepped over.
//!
//! ```text
//!  text protocol (COM_QUERY):            binary protocol (COM_STMT_EXECUTE):
//!  ┌────────────┬────────────┬──        ┌──────┬─────────────┬──────────┬──────────┬──
//!  │ lenenc str │ 0xFB (NULL)│ …        │ 0x00 │ NULL bitmap │ value 1  │ value 3  │ …
//!  └────────────┴────────────┴──        └──────┴─────────────┴──────────┴──────────┴──
//!                                        (bitmap offset 2; a NULL has no value bytes; a value's
//!                                         size follows from its column's type)
//! ```
//!
//! [`Cell`] is a value as the wire has it; [`int_of`] and [`text_of`] are what perflab makes
//! of it: numbers as integers whatever their SQL type (DECIMAL arrives as text and is
//! parsed, a fraction cut off, NULL is 0), and anything as text for a script's `\gset`.

/// Which of MySQL's two row formats a result uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// COM_QUERY's: every value a length-encoded string.
    Text,
    /// COM_STMT_EXECUTE's: typed values.
    Binary,
}

/// What the binary format needs of a column: its type and whether it is unsigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub kind: u8,
    pub unsigned: bool,
}

/// Column types (`MYSQL_TYPE_*`) whose binary values are not length-encoded strings.
mod kind {
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
}

/// One value as the wire has it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    UInt(u64),
    Float(f32),
    Double(f64),
    /// Text, DECIMAL, blobs; every value of the text protocol.
    Bytes(&'a [u8]),
    /// A binary DATE, DATETIME, TIMESTAMP (`kind`) or TIME: its bytes after the length.
    Temporal {
        kind: u8,
        raw: &'a [u8],
    },
}

/// A row's bytes (one packet's payload) and the columns of its result.
#[derive(Debug, Clone, Copy)]
pub struct RowRef<'a> {
    pub protocol: Protocol,
    pub data: &'a [u8],
    pub columns: &'a [Column],
}

/// The cells of a row, in column order.
pub struct Cells<'a> {
    row: RowRef<'a>,
    /// The next value's first byte.
    at: usize,
    /// The next column.
    column: usize,
    /// The binary format's NULL bitmap (empty for text).
    nulls: &'a [u8],
}

/// A row that does not parse: the server's bytes do not follow the protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a row's bytes end early or do not match its columns")]
pub struct BadRow;

impl<'a> RowRef<'a> {
    pub fn cells(&self) -> Cells<'a> {
        let (at, nulls) = match self.protocol {
            Protocol::Text => (0, &[][..]),
            Protocol::Binary => {
                let len = (self.columns.len() + 7 + 2) / 8;
                let nulls = self.data.get(1..1 + len).unwrap_or(&[]);
                (1 + len, nulls)
            }
        };
        Cells {
            row: *self,
            at,
            column: 0,
            nulls,
        }
    }
}

/// A length-encoded integer at `b[*at..]`, moving `at` past it; None for the NULL marker
/// (0xFB) and for bytes that end early.
pub fn lenenc(b: &[u8], at: &mut usize) -> Option<u64> {
    let first = *b.get(*at)?;
    let (len, value) = match first {
        0..=0xFA => (1, u64::from(first)),
        0xFC => (3, u64::from(u16::from_le_bytes(fixed(b, *at + 1)?))),
        0xFD => {
            let [x, y, z] = fixed::<3>(b, *at + 1)?;
            (4, u64::from(u32::from_le_bytes([x, y, z, 0])))
        }
        0xFE => (9, u64::from_le_bytes(fixed(b, *at + 1)?)),
        _ => return None,
    };
    *at += len;
    Some(value)
}

/// `N` bytes at `b[at..]`.
pub fn fixed<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at + N)?.try_into().ok()
}

/// A length-encoded string at `b[*at..]`, moving `at` past it; `Ok(None)` for NULL.
pub fn lenenc_bytes<'b>(b: &'b [u8], at: &mut usize) -> Result<Option<&'b [u8]>, BadRow> {
    if b.get(*at) == Some(&0xFB) {
        *at += 1;
        return Ok(None);
    }
    let len = usize::try_from(lenenc(b, at).ok_or(BadRow)?).map_err(|_| BadRow)?;
    // A length past the end (a hostile one near 2^64 included) is a bad row.
    let end = at.checked_add(len).ok_or(BadRow)?;
    let s = b.get(*at..end).ok_or(BadRow)?;
    *at = end;
    Ok(Some(s))
}

impl<'a> Iterator for Cells<'a> {
    type Item = Result<Cell<'a>, BadRow>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.column;
        let column = *self.row.columns.get(i)?;
        self.column += 1;
        let b = self.row.data;
        Some(match self.row.protocol {
            Protocol::Text => {
                lenenc_bytes(b, &mut self.at).map(|v| v.map_or(Cell::Null, Cell::Bytes))
            }
            Protocol::Binary => {
                let bit = i + 2;
                if self
                    .nulls
                    .get(bit / 8)
                    .is_some_and(|n| n & (1 << (bit % 8)) != 0)
                {
                    Ok(Cell::Null)
                } else {
                    binary(b, &mut self.at, column)
                }
            }
        })
    }
}

/// One binary value of `column` at `b[*at..]`.
fn binary<'b>(b: &'b [u8], at: &mut usize, column: Column) -> Result<Cell<'b>, BadRow> {
    let take = |at: &mut usize, n: usize| -> Result<&'b [u8], BadRow> {
        let s = b.get(*at..*at + n).ok_or(BadRow)?;
        *at += n;
        Ok(s)
    };
    let int = |signed: i64, unsigned: u64| match column.unsigned {
        true => Cell::UInt(unsigned),
        false => Cell::Int(signed),
    };
    Ok(match column.kind {
        kind::NULL => Cell::Null,
        kind::TINY => {
            let s = take(at, 1)?;
            int(i64::from(s[0] as i8), u64::from(s[0]))
        }
        kind::SHORT | kind::YEAR => {
            let s = take(at, 2)?;
            let v = [s[0], s[1]];
            int(
                i64::from(i16::from_le_bytes(v)),
                u64::from(u16::from_le_bytes(v)),
            )
        }
        kind::LONG | kind::INT24 => {
            let s = take(at, 4)?;
            let v = [s[0], s[1], s[2], s[3]];
            int(
                i64::from(i32::from_le_bytes(v)),
                u64::from(u32::from_le_bytes(v)),
            )
        }
        kind::LONGLONG => {
            let v: [u8; 8] = take(at, 8)?.try_into().map_err(|_| BadRow)?;
            int(i64::from_le_bytes(v), u64::from_le_bytes(v))
        }
        kind::FLOAT => {
            let v: [u8; 4] = take(at, 4)?.try_into().map_err(|_| BadRow)?;
            Cell::Float(f32::from_le_bytes(v))
        }
        kind::DOUBLE => {
            let v: [u8; 8] = take(at, 8)?.try_into().map_err(|_| BadRow)?;
            Cell::Double(f64::from_le_bytes(v))
        }
        kind::DATE | kind::DATETIME | kind::TIMESTAMP | kind::TIME => {
            let len = usize::from(take(at, 1)?[0]);
            Cell::Temporal {
                kind: column.kind,
                raw: take(at, len)?,
            }
        }
        _ => Cell::Bytes(lenenc_bytes(b, at)?.ok_or(BadRow)?),
    })
}

/// A value as an integer: integers as they are, NULL as 0, text (DECIMAL in either
/// protocol, anything in the text protocol) parsed with any fraction cut off.
pub fn int_of(c: Cell<'_>) -> Result<i64, String> {
    match c {
        Cell::Null => Ok(0),
        Cell::Int(i) => Ok(i),
        Cell::UInt(u) => i64::try_from(u).map_err(|_| format!("{u} is out of range")),
        Cell::Float(f) => float_to_int(f64::from(f)),
        Cell::Double(f) => float_to_int(f),
        Cell::Bytes(b) => parse_int(b),
        t @ Cell::Temporal { .. } => Err(format!("{} is not a number", text_of(t))),
    }
}

fn float_to_int(f: f64) -> Result<i64, String> {
    if f.is_finite() && f.abs() < 9.2e18 {
        Ok(f.trunc() as i64)
    } else {
        Err(format!("{f} is out of range"))
    }
}

/// `123`, `-123.45` (DECIMAL), `1.5e3` (a DOUBLE in the text protocol).
pub fn parse_int(b: &[u8]) -> Result<i64, String> {
    let not_a_number = || format!("{:?} is not a number", String::from_utf8_lossy(b));
    let s = std::str::from_utf8(b).map_err(|_| not_a_number())?.trim();
    if let Ok(i) = s.parse::<i64>() {
        return Ok(i);
    }
    if let Some((whole, frac)) = s.split_once('.')
        && frac.bytes().all(|c| c.is_ascii_digit())
    {
        match whole {
            "" | "-" | "+" if !frac.is_empty() => return Ok(0),
            _ => {
                if let Ok(i) = whole.parse::<i64>() {
                    return Ok(i);
                }
            }
        }
    }
    match s.parse::<f64>() {
        Ok(f) => float_to_int(f),
        Err(_) => Err(not_a_number()),
    }
}

/// A value as text, as the text protocol would have sent it (NULL as an empty string).
pub fn text_of(c: Cell<'_>) -> String {
    match c {
        Cell::Null => String::new(),
        Cell::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Cell::Int(i) => i.to_string(),
        Cell::UInt(u) => u.to_string(),
        Cell::Float(f) => f.to_string(),
        Cell::Double(f) => f.to_string(),
        Cell::Temporal { kind, raw } => temporal(kind, raw),
    }
}

/// A binary DATE/DATETIME/TIMESTAMP (`YYYY-MM-DD[ HH:MM:SS[.ffffff]]`) or TIME
/// (`[-]HH:MM:SS[.ffffff]`, days folded into the hours) as MySQL writes it.
fn temporal(kind: u8, raw: &[u8]) -> String {
    let at = |i: usize| raw.get(i).copied().unwrap_or(0);
    let micros = |i: usize| u32::from_le_bytes([at(i), at(i + 1), at(i + 2), at(i + 3)]);
    let fraction = |us: u32| match us {
        0 => String::new(),
        us => format!(".{us:06}"),
    };
    if kind == kind::TIME {
        let sign = if at(0) == 1 { "-" } else { "" };
        let days = u32::from_le_bytes([at(1), at(2), at(3), at(4)]);
        let hours = days * 24 + u32::from(at(5));
        return format!(
            "{sign}{hours:02}:{:02}:{:02}{}",
            at(6),
            at(7),
            fraction(micros(8))
        );
    }
    let year = u16::from_le_bytes([at(0), at(1)]);
    let date = format!("{year:04}-{:02}-{:02}", at(2), at(3));
    if kind == kind::DATE {
        return date;
    }
    format!(
        "{date} {:02}:{:02}:{:02}{}",
        at(4),
        at(5),
        at(6),
        fraction(micros(7))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_from_text() {
        for (text, want) in [
            ("123", Ok(123)),
            (" -42 ", Ok(-42)),
            ("1234.00", Ok(1234)),
            ("-7.9", Ok(-7)),
            ("-0.5", Ok(0)),
            (".5", Ok(0)),
            ("99999999999999999999.5", Err(())),
            ("1.5e3", Ok(1500)),
            ("abc", Err(())),
            ("", Err(())),
        ] {
            assert_eq!(parse_int(text.as_bytes()).map_err(|_| ()), want, "{text:?}");
        }
        assert_eq!(int_of(Cell::Null), Ok(0));
        assert_eq!(int_of(Cell::UInt(7)), Ok(7));
        assert!(int_of(Cell::UInt(u64::MAX)).is_err());
        assert_eq!(int_of(Cell::Double(-2.5)), Ok(-2));
    }

    #[test]
    fn text_rows_step_over_cells_and_nulls() {
        let columns = [Column {
            kind: 253,
            unsigned: false,
        }; 3];
        let data = [2, b'4', b'2', 0xFB, 0xFC, 3, 0, b'a', b'b', b'c'];
        let row = RowRef {
            protocol: Protocol::Text,
            data: &data,
            columns: &columns,
        };
        let cells: Vec<_> = row.cells().collect::<Result<_, _>>().unwrap();
        assert_eq!(cells, [Cell::Bytes(b"42"), Cell::Null, Cell::Bytes(b"abc")]);
        // Bytes that end early are a bad row, not a panic; so is a length near 2^64.
        let short = RowRef {
            data: &data[..6],
            ..row
        };
        assert_eq!(short.cells().nth(2), Some(Err(BadRow)));
        let huge = [0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, b'a'];
        let huge = RowRef { data: &huge, ..row };
        assert_eq!(huge.cells().next(), Some(Err(BadRow)));
    }

    #[test]
    fn binary_rows_by_type() {
        let col = |kind, unsigned| Column { kind, unsigned };
        let columns = [
            col(kind::LONGLONG, false),
            col(kind::TINY, true),
            col(253, false),
            col(kind::DATETIME, false),
            col(kind::LONG, false),
            col(kind::DOUBLE, false),
        ];
        // Column 2 (the string) is NULL: bit 2 + 2 of the bitmap, one byte for six columns.
        let mut data = vec![0x00, 0b0001_0000];
        data.extend((-5i64).to_le_bytes());
        data.push(200);
        data.extend([7, 0xE8, 0x07, 12, 6, 13, 14, 15]);
        data.extend((-3i32).to_le_bytes());
        data.extend(2.75f64.to_le_bytes());
        let row = RowRef {
            protocol: Protocol::Binary,
            data: &data,
            columns: &columns,
        };
        let cells: Vec<_> = row.cells().collect::<Result<_, _>>().unwrap();
        assert_eq!(cells[0], Cell::Int(-5));
        assert_eq!(cells[1], Cell::UInt(200));
        assert_eq!(cells[2], Cell::Null);
        assert_eq!(text_of(cells[3]), "2024-12-06 13:14:15");
        assert_eq!(cells[4], Cell::Int(-3));
        assert_eq!(int_of(cells[5]), Ok(2));
        assert!(int_of(cells[3]).is_err());
        let time = [1, 1, 0, 0, 0, 2, 3, 4, 0x20, 0xA1, 0x07, 0];
        assert_eq!(temporal(kind::TIME, &time), "-26:03:04.500000");
    }
}
