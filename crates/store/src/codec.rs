//! How a row's details and payload are stored: zstd-compressed JSON, the details once; and a
//! log entry's columns: plain when small, compressed when not ([`log_json`], [`log_text`]).
//!
//! A preview's details hold its whole unified diff, and its payload holds the same details
//! again so that another process can rebuild the action. Stored as plain JSON text, 20 previews
//! of a 4 MB file grew the database by 200 MB. So each column holds compressed JSON (a diff
//! compresses about tenfold), and a payload whose `details` member equals the row's details is
//! stored without it (the row's `details_in_payload` flag says so) and gets it back on read:
//! what a reader sees is exactly what was pushed.
//!
//! Schema 1 stored both columns as JSON text; [`migrate_v1`] rewrites such rows, and [`decode`]
//! still reads a text column as plain JSON.

use std::io::BufWriter;

use rusqlite::{Connection, params, types::ValueRef};
use serde_json::Value;

/// The zstd level: the fastest, since a big diff is compressed while a person waits, and it
/// already compresses well.
const LEVEL: i32 = 1;

/// The stored form of one row's details and payload.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub(crate) details: Option<Vec<u8>>,
    pub(crate) payload: Vec<u8>,
    /// Whether the payload's `details` member was left out because it equals the details.
    pub(crate) details_in_payload: bool,
}

/// Compresses `details` and `payload`, leaving out a payload's copy of the details.
pub(crate) fn encode(details: Option<&Value>, payload: Option<Value>) -> std::io::Result<Encoded> {
    // An action without a replayable payload is stored with an empty payload column (no
    // compressed JSON is empty, so it cannot be mistaken for one).
    let Some(mut payload) = payload else {
        return Ok(Encoded {
            details: details.map(compress).transpose()?,
            payload: Vec::new(),
            details_in_payload: false,
        });
    };
    let details_in_payload = match (details, payload.as_object_mut()) {
        (Some(details), Some(object)) if object.get("details") == Some(details) => {
            object.remove("details");
            true
        }
        _ => false,
    };
    Ok(Encoded {
        details: details.map(compress).transpose()?,
        payload: compress(&payload)?,
        details_in_payload,
    })
}

/// The details and payload of a row as they were pushed. A column that does not decode reads
/// as no details, and as a `null` payload.
/// A row's details and payload as stored; `payload` is `None` for an action staged without a
/// replayable payload.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub(crate) details: Option<Value>,
    pub(crate) payload: Option<Value>,
}

pub(crate) fn decode(
    details: ValueRef<'_>,
    payload: ValueRef<'_>,
    details_in_payload: bool,
) -> Result<Decoded, String> {
    let details = json(details).map_err(|why| format!("its stored details are {why}"))?;
    let empty = matches!(payload, ValueRef::Blob(b) | ValueRef::Text(b) if b.is_empty());
    if empty {
        return Ok(Decoded { details, payload: None });
    }
    let mut payload = json(payload)
        .map_err(|why| format!("its stored payload is {why}"))?
        .ok_or("its stored payload is missing")?;
    if details_in_payload && let (Some(details), Some(object)) = (&details, payload.as_object_mut())
    {
        object.insert("details".to_owned(), details.clone());
    }
    Ok(Decoded { details, payload: Some(payload) })
}

/// Rewrites every schema-1 row (JSON text) in the stored form, inside the caller's
/// transaction, after adding the `details_in_payload` column.
pub(crate) fn migrate_v1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE pending ADD COLUMN details_in_payload INTEGER NOT NULL DEFAULT 0;",
    )?;
    let rows: Vec<(i64, Option<Value>, Value)> = {
        let mut stmt = conn.prepare("SELECT seq, details, payload FROM pending")?;
        stmt.query_map([], |row| {
            // A row that does not decode is left as it is: it reads back as unavailable,
            // saying why, and can still be discarded.
            Ok(decode(row.get_ref(1)?, row.get_ref(2)?, false)
                .ok()
                .and_then(|d| Some((row.get(0), d.details, d.payload?))))
        })?
        .filter_map(Result::transpose)
        .map(|row| row.and_then(|(seq, details, payload)| Ok((seq?, details, payload))))
        .collect::<rusqlite::Result<_>>()?
    };
    for (seq, details, payload) in rows {
        let encoded = encode(details.as_ref(), Some(payload))
            .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?;
        conn.execute(
            "UPDATE pending SET details = ?1, payload = ?2, details_in_payload = ?3 WHERE seq = ?4",
            params![encoded.details, encoded.payload, encoded.details_in_payload, seq],
        )?;
    }
    Ok(())
}

/// zstd-compressed `text` (a log entry's diff).
pub(crate) fn compress_text(text: &str) -> std::io::Result<Vec<u8>> {
    zstd::bulk::compress(text.as_bytes(), LEVEL)
}

/// A column written by [`compress_text`]; `Ok(None)` for NULL.
pub(crate) fn text(column: ValueRef<'_>) -> Result<Option<String>, String> {
    match column {
        ValueRef::Blob(bytes) => {
            let bytes = decompress(bytes)?;
            String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text".to_owned())
        }
        ValueRef::Text(text) => {
            String::from_utf8(text.to_vec()).map(Some).map_err(|_| "not UTF-8 text".to_owned())
        }
        ValueRef::Null => Ok(None),
        ValueRef::Integer(_) | ValueRef::Real(_) => Err("a number, not text".to_owned()),
    }
}

/// A column of compressed JSON (or plain JSON text), as [`decode`] reads each of its columns.
pub(crate) fn json_column(column: ValueRef<'_>) -> Result<Option<Value>, String> {
    json(column)
}

/// zstd-compressed JSON of `value`. A JSON text below [`WHOLE_BELOW`] bytes is compressed
/// whole, in one call that knows its size, so zstd sizes its tables to it: a stream (whose
/// size is unknown) sets up the tables of a large input, which for a hook call's small edit
/// cost more than the compression itself. A longer one is compressed as it is serialized
/// (the JSON text is never held whole). Both are one zstd frame, read back the same way.
pub(crate) fn compress<T: serde::Serialize + ?Sized>(value: &T) -> std::io::Result<Vec<u8>> {
    let mut out = Spill { plain: Vec::new(), compressed: None, below: WHOLE_BELOW };
    serde_json::to_writer(&mut out, value)?;
    match out.compressed {
        Some(encoder) => encoder.into_inner().map_err(|err| err.into_error())?.finish(),
        None => zstd::bulk::compress(&out.plain, LEVEL),
    }
}

/// Below this many bytes of JSON, [`compress`] compresses a value whole.
const WHOLE_BELOW: usize = 1 << 16;

/// Below this many bytes, a log entry's JSON or diff is stored as plain text: a small value
/// compresses little, and reading it back plain skips a zstd frame's table setup, which was
/// the largest single cost of reading a long session's log (`staged session show` of 1,000
/// entries). [`json_column`] and [`text`] read either form.
const PLAIN_BELOW: usize = 1024;

/// A log column's stored form: plain text when small, zstd-compressed otherwise.
#[derive(Debug)]
pub(crate) enum Column {
    Plain(String),
    Compressed(Vec<u8>),
}

impl rusqlite::ToSql for Column {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(match self {
            Column::Plain(text) => {
                rusqlite::types::ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes()))
            }
            Column::Compressed(bytes) => {
                rusqlite::types::ToSqlOutput::Borrowed(ValueRef::Blob(bytes))
            }
        })
    }
}

/// The JSON of `value` as a log column: plain below [`PLAIN_BELOW`] bytes, compressed as it
/// is serialized otherwise (a big value's JSON text is never held whole).
pub(crate) fn log_json<T: serde::Serialize + ?Sized>(value: &T) -> std::io::Result<Column> {
    let mut out = Spill { plain: Vec::new(), compressed: None, below: PLAIN_BELOW };
    serde_json::to_writer(&mut out, value)?;
    match out.compressed {
        Some(encoder) => {
            Ok(Column::Compressed(encoder.into_inner().map_err(|err| err.into_error())?.finish()?))
        }
        None => String::from_utf8(out.plain).map(Column::Plain).map_err(std::io::Error::other),
    }
}

/// `text` (a log entry's diff) as a log column: plain below [`PLAIN_BELOW`] bytes.
pub(crate) fn log_text(text: &str) -> std::io::Result<Column> {
    if text.len() < PLAIN_BELOW {
        Ok(Column::Plain(text.to_owned()))
    } else {
        compress_text(text).map(Column::Compressed)
    }
}

/// A writer that keeps what it is given until `below` bytes, then compresses it all as a
/// stream (serde_json's many small writes buffered in front of the encoder).
struct Spill {
    plain: Vec<u8>,
    compressed: Option<BufWriter<zstd::Encoder<'static, Vec<u8>>>>,
    below: usize,
}

impl std::io::Write for Spill {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.compressed.is_none() && self.plain.len() + buf.len() < self.below {
            self.plain.extend_from_slice(buf);
            return Ok(buf.len());
        }
        let encoder = match &mut self.compressed {
            Some(encoder) => encoder,
            None => {
                let mut encoder =
                    BufWriter::with_capacity(1 << 16, zstd::Encoder::new(Vec::new(), LEVEL)?);
                encoder.write_all(&std::mem::take(&mut self.plain))?;
                self.compressed.insert(encoder)
            }
        };
        encoder.write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The most a stored value may decompress to: a planted row must not exhaust memory.
const MAX_DECODED_BYTES: u64 = 1 << 30;

/// A column's JSON: compressed (a blob), or plain text (schema 1); `Ok(None)` for NULL, and
/// an error saying what is wrong otherwise.
fn json(column: ValueRef<'_>) -> Result<Option<Value>, String> {
    match column {
        ValueRef::Blob(bytes) => {
            let text = decompress(bytes)?;
            serde_json::from_slice(&text).map(Some).map_err(|err| format!("not valid JSON ({err})"))
        }
        ValueRef::Text(text) => {
            serde_json::from_slice(text).map(Some).map_err(|err| format!("not valid JSON ({err})"))
        }
        ValueRef::Null => Ok(None),
        ValueRef::Integer(_) | ValueRef::Real(_) => Err("a number, not JSON".to_owned()),
    }
}

/// Decompresses a stored blob, refusing one that grows past [`MAX_DECODED_BYTES`]. Each
/// thread keeps one decompression context: making a new one per blob was the largest single
/// cost of reading a long session's log (14% of `staged session show` on 1,000 entries).
fn decompress(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|cell| {
        let mut slot = cell.borrow_mut();
        let context = slot.get_or_insert_with(zstd::zstd_safe::DCtx::create);
        // A blob that failed half-way must not leave its state to the next one.
        context.reset(zstd::zstd_safe::ResetDirective::SessionOnly).map_err(|code| {
            format!("not compressed data ({})", zstd::zstd_safe::get_error_name(code))
        })?;
        let decoder = zstd::stream::read::Decoder::with_context(bytes, context);
        let mut res = Vec::new();
        decoder
            .take(MAX_DECODED_BYTES + 1)
            .read_to_end(&mut res)
            .map_err(|err| format!("not compressed data ({err})"))?;
        if res.len() as u64 > MAX_DECODED_BYTES {
            return Err(format!("larger than {MAX_DECODED_BYTES} bytes"));
        }
        Ok(res)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(bytes: &[u8]) -> Value {
        json(ValueRef::Blob(bytes)).expect("decodes").expect("not null")
    }

    #[test]
    fn a_small_value_is_compressed_whole_and_a_large_one_as_a_stream_both_read_back() {
        let small = serde_json::json!({"diff": "-a\n+b\n", "files": ["src/a.ts"]});
        let bytes = compress(&small).expect("compresses");
        assert_eq!(read_back(&bytes), small);
        // Compressed whole, the frame says its size (a stream's cannot).
        let text_len = serde_json::to_vec(&small).expect("serializes").len() as u64;
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&bytes).ok(), Some(Some(text_len)));

        let line = "export const v = compute(1);\n";
        let large = serde_json::json!({"diff": line.repeat(WHOLE_BELOW / line.len() + 10)});
        let bytes = compress(&large).expect("compresses");
        assert_eq!(read_back(&bytes), large);
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&bytes).ok(), Some(None));
    }

    #[test]
    fn a_log_column_is_plain_when_small_and_compressed_when_not() {
        let small = serde_json::json!({"reason": "tidy"});
        assert!(matches!(log_json(&small).expect("encodes"), Column::Plain(_)));
        let large = serde_json::json!({"diff": "x".repeat(PLAIN_BELOW * 4)});
        match log_json(&large).expect("encodes") {
            Column::Compressed(bytes) => assert_eq!(read_back(&bytes), large),
            Column::Plain(_) => panic!("a large value is compressed"),
        }
    }
}
