//! Exports from the workbench: the selection's matrix to a file, with the printers the
//! command line uses (`rulebench matrix`); the format follows the file's extension.

use std::path::Path;

use super::{AppError, Result};
use crate::print::matrix::{self, MatrixFormat};

/// The format a file name asks for: `.csv`, `.tsv`, `.md`/`.markdown`, `.json`, else an
/// aligned table.
pub fn format_of(path: &Path) -> MatrixFormat {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("csv") => MatrixFormat::Csv,
        Some("tsv") => MatrixFormat::Tsv,
        Some("md" | "markdown") => MatrixFormat::Md,
        Some("json") => MatrixFormat::Json,
        _ => MatrixFormat::Table,
    }
}

/// Writes the matrix of `result` to `path` (CSV cells guarded against formulas),
/// whole or not at all: a temporary file beside it is renamed over it.
pub fn write_matrix(
    path: &Path,
    result: &crate::app::types::SelectionResult,
    rules: &[crate::app::types::Rule],
) -> Result<MatrixFormat> {
    let format = format_of(path);
    let mut bytes = Vec::new();
    let io = |source| AppError::Io {
        path: path.display().to_string(),
        source,
    };
    matrix::write(&mut bytes, result, rules, format, true).map_err(io)?;
    let tmp = path.with_extension(format!(
        "{}.rulebench-tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, &bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    Ok(format)
}
