//! Readers for the binary data files analysts have: Apache Parquet, Apache Arrow IPC
//! (file or stream, Feather v2) and Excel workbooks (`.xlsx`, `.xlsm`, `.xlsb`, `.xls`,
//! `.ods`). Each decodes bytes into a [`Table`] of JSON rows, which the core checks as
//! it checks a CSV file's (keys present and unique, nesting, stated types).
//!
//! Types map as a user would expect: integers and floats are numbers (an integer
//! beyond ±2^53, which the engine's floats would round, is kept as its text), text is
//! text, booleans are booleans, lists are arrays, structs and maps are objects, dates
//! and times are ISO 8601 text, decimals are numbers, binary is text (lossy UTF-8), and
//! a null or an empty cell is `null`. Excel stores every number as a float: a whole one
//! reads as an integer.
//!
//! Errors are located: a Parquet or Arrow error names the column and the row group (or
//! batch); an Excel error names the sheet and the cell.

use std::io::Cursor;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use rulebench_core::dataset::{
    BadRow, DataError, DataFormat, ReadOptions, RowPlace, Table, TableSink,
};
use rulebench_core::model::Row;
use serde_json::{Map, Number, Value};

/// Decodes a binary data file (`format` is Parquet, Arrow or Excel) into a [`Table`].
pub fn decode(
    bytes: &[u8],
    file: &str,
    format: DataFormat,
    read: &ReadOptions,
) -> Result<Table, DataError> {
    let mut table = Table::default();
    decode_into(bytes, file, format, read, &mut table)?;
    Ok(table)
}

/// Decodes a binary data file into `sink`: its columns, then its rows as they are
/// decoded (Parquet row group by row group, Arrow batch by batch; a workbook's sheet
/// whole, since its text columns are typed over all their cells).
pub fn decode_into(
    bytes: &[u8],
    file: &str,
    format: DataFormat,
    read: &ReadOptions,
    sink: &mut dyn TableSink,
) -> Result<(), DataError> {
    // The Arrow, Parquet and Excel libraries panic on some damaged files (fuzzing found
    // an Arrow buffer offset past its end): a damaged file is bad input, an error like
    // any other, never a crash. The panic's own message is silenced while the file is
    // read, on this thread only (the hook is process-wide, and an import decodes on a
    // worker thread while another writes): a panic elsewhere goes to the hook before.
    let before = std::sync::Arc::new(std::panic::take_hook());
    let reader = std::thread::current().id();
    let others = std::sync::Arc::clone(&before);
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != reader {
            others(info);
        }
    }));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decode_unguarded(bytes, file, format, read, sink)
    }));
    // Dropping this call's hook leaves `before` with one owner again.
    drop(std::panic::take_hook());
    if let Ok(before) = std::sync::Arc::try_unwrap(before) {
        std::panic::set_hook(before);
    }
    outcome.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("the reader stopped");
        Err(file_error(
            file,
            format!(
                "a damaged {} file: {}",
                format.name(),
                rulebench_core::text::sanitize(why)
            ),
        ))
    })
}

fn decode_unguarded(
    bytes: &[u8],
    file: &str,
    format: DataFormat,
    read: &ReadOptions,
    sink: &mut dyn TableSink,
) -> Result<(), DataError> {
    match format {
        DataFormat::Parquet => parquet(bytes, file, sink),
        DataFormat::Arrow => arrow_ipc(bytes, file, sink),
        DataFormat::Excel => {
            let table = excel(bytes, file, read)?;
            sink.start(table.fields, table.place)?;
            for b in table.bad {
                sink.bad(b);
            }
            for (line, row) in table.rows {
                sink.row(line, row);
            }
            Ok(())
        }
        other => Err(file_error(
            file,
            format!("{} is a text format, not read here", other.name()),
        )),
    }
}

fn file_error(file: &str, message: String) -> DataError {
    DataError::File {
        file: file.to_owned(),
        message,
    }
}

// ---------------------------------------------------------------------------------------------
// Parquet and Arrow
// ---------------------------------------------------------------------------------------------

fn parquet(bytes: &[u8], file: &str, sink: &mut dyn TableSink) -> Result<(), DataError> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let data = bytes::Bytes::copy_from_slice(bytes);
    let builder = ParquetRecordBatchReaderBuilder::try_new(data.clone())
        .map_err(|e| file_error(file, format!("not a readable Parquet file: {e}")))?;
    let groups = builder.metadata().num_row_groups();
    let fields: Vec<String> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    check_names(&fields, file)?;
    sink.start(fields, RowPlace::Row)?;
    let mut next = 1;
    for group in 0..groups {
        let reader = ParquetRecordBatchReaderBuilder::try_new(data.clone())
            .and_then(|b| b.with_row_groups(vec![group]).with_batch_size(8192).build())
            .map_err(|e| file_error(file, format!("row group {group}: {e}")))?;
        for batch in reader {
            let batch = batch.map_err(|e| file_error(file, format!("row group {group}: {e}")))?;
            add_batch(sink, &mut next, &batch, file, &format!("row group {group}"))?;
        }
    }
    Ok(())
}

fn arrow_ipc(bytes: &[u8], file: &str, sink: &mut dyn TableSink) -> Result<(), DataError> {
    let unreadable = |e: arrow_schema::ArrowError| {
        file_error(
            file,
            format!("not a readable Arrow IPC file or stream: {e}"),
        )
    };
    let (schema, batches): (_, Box<dyn Iterator<Item = _>>) = if bytes.starts_with(b"ARROW1") {
        arrow_blocks_fit(bytes, file)?;
        let reader =
            arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None).map_err(unreadable)?;
        (reader.schema(), Box::new(reader))
    } else {
        let reader = arrow_ipc::reader::StreamReader::try_new(Cursor::new(bytes), None)
            .map_err(unreadable)?;
        (reader.schema(), Box::new(reader))
    };
    let fields: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    check_names(&fields, file)?;
    sink.start(fields, RowPlace::Row)?;
    let mut next = 1;
    for (n, batch) in batches.enumerate() {
        let batch = batch.map_err(|e| file_error(file, format!("batch {n}: {e}")))?;
        add_batch(sink, &mut next, &batch, file, &format!("batch {n}"))?;
    }
    Ok(())
}

/// An Arrow IPC file's blocks all lie inside the file: the reader allocates what a
/// block's header says before reading it, so a damaged length (fuzzing found 880 GB)
/// would end the process rather than the read.
fn arrow_blocks_fit(bytes: &[u8], file: &str) -> Result<(), DataError> {
    let damaged = |why: String| file_error(file, format!("a damaged Arrow IPC file: {why}"));
    let n = bytes.len();
    let Some(tail) = bytes
        .get(n.saturating_sub(10)..)
        .and_then(|t| <[u8; 10]>::try_from(t).ok())
    else {
        return Err(damaged("too short for its footer".into()));
    };
    let footer_len =
        arrow_ipc::reader::read_footer_length(tail).map_err(|e| damaged(e.to_string()))?;
    let start = n
        .checked_sub(10 + footer_len)
        .ok_or_else(|| damaged("its footer is longer than the file".into()))?;
    let footer = arrow_ipc::root_as_footer(&bytes[start..n - 10])
        .map_err(|e| damaged(format!("its footer does not read: {e}")))?;
    for blocks in [footer.recordBatches(), footer.dictionaries()]
        .into_iter()
        .flatten()
    {
        for b in blocks.iter() {
            let end = i128::from(b.offset())
                + i128::from(b.metaDataLength())
                + i128::from(b.bodyLength());
            if b.offset() < 0 || b.metaDataLength() < 0 || b.bodyLength() < 0 || end > n as i128 {
                return Err(damaged(format!(
                    "a block at byte {} of {} bytes goes past the end ({n} bytes)",
                    b.offset(),
                    i128::from(b.metaDataLength()) + i128::from(b.bodyLength())
                )));
            }
        }
    }
    Ok(())
}

fn check_names(fields: &[String], file: &str) -> Result<(), DataError> {
    if fields.is_empty() {
        return Err(file_error(
            file,
            "no columns: a table with no columns has no rows to read".into(),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for f in fields {
        if !seen.insert(f) {
            return Err(file_error(file, format!("two columns are named `{f}`")));
        }
    }
    Ok(())
}

/// Hands a batch's rows to `sink`, numbered on from `next`.
fn add_batch(
    sink: &mut dyn TableSink,
    next: &mut usize,
    batch: &RecordBatch,
    file: &str,
    part: &str,
) -> Result<(), DataError> {
    // Rows with no column that holds data cost the file nothing to claim (fuzzing
    // found a 2 KB Arrow file of no columns and 2^64 rows): none is read.
    if batch.num_rows() > 0
        && batch
            .columns()
            .iter()
            .all(|c| c.data_type() == &arrow_schema::DataType::Null)
    {
        return Err(file_error(
            file,
            format!(
                "{part}: {} rows and no column that holds a value",
                batch.num_rows()
            ),
        ));
    }
    let columns: Vec<Vec<Value>> = batch
        .columns()
        .iter()
        .zip(batch.schema().fields())
        .map(|(array, field)| {
            values(array)
                .map_err(|e| file_error(file, format!("column `{}`, {part}: {e}", field.name())))
        })
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = batch
        .schema_ref()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut columns: Vec<std::vec::IntoIter<Value>> =
        columns.into_iter().map(Vec::into_iter).collect();
    // Each row goes as its cells (no row map is built for it).
    let mut cells = Vec::with_capacity(names.len());
    for _ in 0..batch.num_rows() {
        cells.clear();
        cells.extend(
            columns
                .iter_mut()
                .map(|column| column.next().unwrap_or(Value::Null)),
        );
        sink.cells(*next, &names, &mut cells);
        *next += 1;
    }
    Ok(())
}

/// An integer as a JSON value: beyond ±2^53 its text (exact), as CSV cells are.
fn int(i: i128) -> Value {
    if i.unsigned_abs() <= u128::from(rulebench_core::diag::MAX_EXACT_INTEGER) {
        Value::Number(Number::from(i as i64))
    } else {
        Value::String(i.to_string())
    }
}

fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// A column of integers: numbers, or — when any value is beyond ±2^53, which the
/// engine's floats would round — every value as its exact text (one type per column, as
/// CSV decides it).
fn int_column(values: impl Iterator<Item = Option<i128>> + Clone) -> Vec<Value> {
    let limit = i128::from(rulebench_core::diag::MAX_EXACT_INTEGER);
    let as_text = values.clone().flatten().any(|v| v.abs() > limit);
    values
        .map(|v| match v {
            None => Value::Null,
            Some(v) if as_text => Value::String(v.to_string()),
            Some(v) => int(v),
        })
        .collect()
}

macro_rules! ints {
    ($array:expr, $t:ty) => {
        int_column(
            $array
                .as_primitive::<$t>()
                .iter()
                .map(|v| v.map(|v| v as i128)),
        )
    };
}

/// Every value of an Arrow array as JSON, nulls as `null`.
fn values(array: &ArrayRef) -> Result<Vec<Value>, String> {
    let nulls = |out: Vec<Value>| -> Vec<Value> {
        if array.null_count() == 0 {
            return out;
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| if array.is_null(i) { Value::Null } else { v })
            .collect()
    };
    Ok(match array.data_type() {
        DataType::Null => vec![Value::Null; array.len()],
        DataType::Boolean => array
            .as_boolean()
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Bool))
            .collect(),
        DataType::Int8 => ints!(array, Int8Type),
        DataType::Int16 => ints!(array, Int16Type),
        DataType::Int32 => ints!(array, Int32Type),
        DataType::Int64 => ints!(array, Int64Type),
        DataType::UInt8 => ints!(array, UInt8Type),
        DataType::UInt16 => ints!(array, UInt16Type),
        DataType::UInt32 => ints!(array, UInt32Type),
        DataType::UInt64 => ints!(array, UInt64Type),
        DataType::Float16 => array
            .as_primitive::<Float16Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| float(f64::from(v))))
            .collect(),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, |v| float(f64::from(v))))
            .collect(),
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .map(|v| v.map_or(Value::Null, float))
            .collect(),
        DataType::Utf8 => strings(array.as_string::<i32>().iter()),
        DataType::LargeUtf8 => strings(array.as_string::<i64>().iter()),
        DataType::Utf8View => strings(array.as_string_view().iter()),
        DataType::Binary => binaries(array.as_binary::<i32>().iter()),
        DataType::LargeBinary => binaries(array.as_binary::<i64>().iter()),
        DataType::BinaryView => binaries(array.as_binary_view().iter()),
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let items = values(list.values())?;
            let offsets: Vec<usize> = list.value_offsets().iter().map(|o| *o as usize).collect();
            nulls(spans(&items, &offsets))
        }
        DataType::LargeList(_) => {
            let list = array.as_list::<i64>();
            let items = values(list.values())?;
            let offsets: Vec<usize> = list.value_offsets().iter().map(|o| *o as usize).collect();
            nulls(spans(&items, &offsets))
        }
        DataType::FixedSizeList(_, n) => {
            let list = array.as_fixed_size_list();
            let items = values(list.values())?;
            let n = *n as usize;
            let offsets: Vec<usize> = (0..=list.len()).map(|i| i * n).collect();
            nulls(spans(&items, &offsets))
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let children: Vec<Vec<Value>> =
                s.columns().iter().map(values).collect::<Result<_, _>>()?;
            let out = (0..s.len())
                .map(|i| {
                    Value::Object(
                        fields
                            .iter()
                            .zip(&children)
                            .map(|(f, c)| (f.name().clone(), c[i].clone()))
                            .collect(),
                    )
                })
                .collect();
            nulls(out)
        }
        DataType::Map(_, _) => {
            let m = array.as_map();
            let keys = values(m.keys())?;
            let vals = values(m.values())?;
            let offsets: Vec<usize> = m.value_offsets().iter().map(|o| *o as usize).collect();
            let out = offsets
                .windows(2)
                .map(|w| {
                    let mut obj = Map::new();
                    for j in w[0]..w[1] {
                        let k = match &keys[j] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        obj.insert(k, vals[j].clone());
                    }
                    Value::Object(obj)
                })
                .collect();
            nulls(out)
        }
        DataType::Dictionary(_, value_type) => {
            let plain = arrow_cast::cast(array, value_type).map_err(|e| e.to_string())?;
            values(&plain)?
        }
        // Decimals: a scale of 0 is an integer (`NUMBER(38,0)` ids), as integers are
        // read; else numbers when a float says every value exactly, else text.
        DataType::Decimal32(_, scale)
        | DataType::Decimal64(_, scale)
        | DataType::Decimal128(_, scale)
        | DataType::Decimal256(_, scale) => {
            let texts = displayed(array)?;
            if *scale <= 0 {
                let parsed: Vec<Option<i128>> = texts
                    .iter()
                    .map(|v| v.as_str().and_then(|s| s.parse::<i128>().ok()))
                    .collect();
                if parsed
                    .iter()
                    .zip(&texts)
                    .all(|(p, t)| p.is_some() || t.is_null())
                {
                    return Ok(int_column(parsed.into_iter()));
                }
            }
            // Numbers when every value is one exactly, else every value as its text
            // (one type per column).
            let numbers: Vec<Option<Number>> = texts
                .iter()
                .map(|v| {
                    v.as_str().and_then(|s| {
                        s.parse::<f64>()
                            .ok()
                            .filter(|f| exact_decimal(s, *f))
                            .and_then(Number::from_f64)
                    })
                })
                .collect();
            if numbers
                .iter()
                .zip(&texts)
                .all(|(n, t)| n.is_some() || t.is_null())
            {
                numbers
                    .into_iter()
                    .map(|n| n.map_or(Value::Null, Value::Number))
                    .collect()
            } else {
                texts
            }
        }
        // Dates, times, timestamps, durations, intervals and anything newer: as the
        // Arrow formatter writes them (ISO 8601 for dates and times).
        _ => displayed(array)?,
    })
}

/// Whether `f` is the decimal `text` exactly as JSON writes numbers back (`0.10` and
/// `0.1` alike; `12345678901234567.89` not).
fn exact_decimal(text: &str, f: f64) -> bool {
    let trim = |s: &str| -> String {
        let s = s.trim_start_matches('+');
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    f.is_finite() && trim(text) == trim(&format!("{f}"))
}

/// Each list's items: `offsets` has one more entry than there are lists.
fn spans(items: &[Value], offsets: &[usize]) -> Vec<Value> {
    offsets
        .windows(2)
        .map(|w| Value::Array(items[w[0]..w[1]].to_vec()))
        .collect()
}

fn strings<'a>(iter: impl Iterator<Item = Option<&'a str>>) -> Vec<Value> {
    iter.map(|v| v.map_or(Value::Null, |s| Value::String(s.to_owned())))
        .collect()
}

fn binaries<'a>(iter: impl Iterator<Item = Option<&'a [u8]>>) -> Vec<Value> {
    iter.map(|v| {
        v.map_or(Value::Null, |b| {
            Value::String(String::from_utf8_lossy(b).into_owned())
        })
    })
    .collect()
}

/// Values as the Arrow formatter writes them.
fn displayed(array: &ArrayRef) -> Result<Vec<Value>, String> {
    let options = arrow_cast::display::FormatOptions::default();
    let formatter = arrow_cast::display::ArrayFormatter::try_new(array.as_ref(), &options)
        .map_err(|e| format!("cannot read its type {}: {e}", array.data_type()))?;
    Ok((0..array.len())
        .map(|i| {
            if array.is_null(i) {
                Value::Null
            } else {
                Value::String(formatter.value(i).to_string())
            }
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Excel
// ---------------------------------------------------------------------------------------------

/// A cell's address: `B7` (0-based row and column).
fn cell_name(row: u32, col: u32) -> String {
    let mut letters = String::new();
    let mut c = col + 1;
    while c > 0 {
        let r = (c - 1) % 26;
        letters.insert(0, char::from(b'A' + r as u8));
        c = (c - 1) / 26;
    }
    format!("{letters}{}", row + 1)
}

fn excel(bytes: &[u8], file: &str, read: &ReadOptions) -> Result<Table, DataError> {
    use calamine::{Data, Reader};
    let mut book = calamine::open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| file_error(file, format!("not a readable workbook: {e}")))?;
    let names = book.sheet_names();
    if names.is_empty() {
        return Err(file_error(file, "the workbook has no sheets".to_owned()));
    }
    let sheet = match read.sheet.as_deref() {
        None => names[0].clone(),
        Some(wanted) => match names.iter().find(|n| n.as_str() == wanted) {
            Some(n) => n.clone(),
            None => match wanted.parse::<usize>() {
                Ok(i) if i >= 1 && i <= names.len() => names[i - 1].clone(),
                _ => {
                    return Err(file_error(
                        file,
                        format!(
                            "no sheet `{}` (the sheets are {}; a sheet may also be named by its 1-based index)",
                            rulebench_core::text::sanitize(wanted),
                            names
                                .iter()
                                .map(|n| format!("`{}`", rulebench_core::text::sanitize(n)))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            },
        },
    };
    let place_err = |message: String| {
        file_error(
            file,
            format!(
                "sheet `{}`: {message}",
                rulebench_core::text::sanitize(&sheet)
            ),
        )
    };
    let range = book
        .worksheet_range(&sheet)
        .map_err(|e| place_err(format!("cannot be read: {e}")))?;
    let Some((top, left)) = range.start() else {
        return Err(place_err("the sheet is empty".to_owned()));
    };
    let mut rows = range.rows();
    let Some(header) = rows.next() else {
        return Err(place_err("the sheet is empty".to_owned()));
    };
    // Header cells name columns; a column with no name and no values is left out.
    let mut columns: Vec<(usize, String)> = Vec::new();
    let body: Vec<&[Data]> = rows.collect();
    for (c, cell) in header.iter().enumerate() {
        let name = match cell {
            Data::Empty => String::new(),
            Data::String(s) => s.trim().to_owned(),
            Data::Float(f) if f.fract() == 0.0 => format!("{}", *f as i64),
            other => other.to_string(),
        };
        let at = cell_name(top, left + c as u32);
        if name.is_empty() {
            if body
                .iter()
                .any(|r| r.get(c).is_some_and(|d| *d != Data::Empty))
            {
                return Err(place_err(format!(
                    "cell {at}: the column has values but no name in the header row"
                )));
            }
            continue;
        }
        if let Some((first, _)) = columns.iter().find(|(_, n)| *n == name) {
            return Err(place_err(format!(
                "cell {at}: a second column named `{}` (the first is at {})",
                rulebench_core::text::sanitize(&name),
                cell_name(top, left + *first as u32)
            )));
        }
        columns.push((c, name));
    }
    if columns.is_empty() {
        return Err(place_err("the header row names no column".to_owned()));
    }
    let mut table = Table {
        fields: columns.iter().map(|(_, n)| n.clone()).collect(),
        place: RowPlace::Sheet(sheet.clone()),
        ..Table::default()
    };
    'rows: for (i, cells) in body.iter().enumerate() {
        let sheet_row = top + 1 + i as u32;
        if cells.iter().all(|d| *d == Data::Empty) {
            continue;
        }
        let mut row = Row::with_capacity(columns.len());
        for (c, name) in &columns {
            let cell = cells.get(*c).unwrap_or(&Data::Empty);
            let value = excel_value(cell);
            let value = match read.types.get(name) {
                Some(ty) => match rulebench_core::dataset::coerce(value, *ty) {
                    Ok(v) => v,
                    Err(e) => {
                        table.bad.push(BadRow {
                            line: sheet_row as usize + 1,
                            message: format!(
                                "cell {} (`{}`): {e}",
                                cell_name(sheet_row, left + *c as u32),
                                rulebench_core::text::sanitize(name)
                            ),
                        });
                        continue 'rows;
                    }
                },
                None => value,
            };
            row.insert(name.clone(), value);
        }
        table.rows.push((sheet_row as usize + 1, row));
    }
    rulebench_core::dataset::json_text_columns(&mut table, read);
    Ok(table)
}

/// A cell as JSON: whole floats as integers, dates as ISO 8601, errors as `null`.
fn excel_value(cell: &calamine::Data) -> Value {
    use calamine::Data;
    match cell {
        Data::Empty | Data::Error(_) => Value::Null,
        Data::Int(i) => int(i128::from(*i)),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
            Value::from(*f as i64)
        }
        Data::Float(f) => float(*f),
        Data::String(s) => Value::String(s.clone()),
        Data::Bool(b) => Value::Bool(*b),
        Data::DateTimeIso(s) | Data::DurationIso(s) => Value::String(s.clone()),
        Data::DateTime(dt) => {
            let (y, mo, d, h, mi, s, ms) = dt.to_ymd_hms_milli();
            if dt.is_duration() {
                Value::String(format!("PT{}S", dt.as_f64() * 86_400.0))
            } else if (h, mi, s, ms) == (0, 0, 0, 0) {
                Value::String(format!("{y:04}-{mo:02}-{d:02}"))
            } else if ms == 0 {
                Value::String(format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}"))
            } else {
                Value::String(format!(
                    "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzzing (AddressSanitizer) found a block whose length says 880 GB: the reader
    /// allocated it before reading. The blocks are checked against the file first.
    #[test]
    fn an_arrow_block_past_the_end_of_the_file_is_refused_before_reading() {
        let damaged = include_bytes!("../../../tests/data/real/damaged-huge.bin");
        let mut bytes = b"ARROW1\0\0".to_vec();
        bytes.extend_from_slice(damaged);
        bytes.extend_from_slice(b"ARROW1\0\0");
        let e = arrow_blocks_fit(&bytes, "x.arrow").unwrap_err();
        assert!(e.to_string().contains("a damaged Arrow IPC file"), "{e}");
        // A good file passes.
        let good = include_bytes!("../../../tests/data/real/clients.arrow");
        arrow_blocks_fit(good, "clients.arrow").unwrap();
    }

    #[test]
    fn cells_are_named_as_excel_names_them() {
        assert_eq!(cell_name(0, 0), "A1");
        assert_eq!(cell_name(6, 1), "B7");
        assert_eq!(cell_name(0, 25), "Z1");
        assert_eq!(cell_name(0, 26), "AA1");
        assert_eq!(cell_name(9, 701), "ZZ10");
        assert_eq!(cell_name(0, 702), "AAA1");
    }
}
