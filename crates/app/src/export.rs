//! Writes of what the fronts export (the selection's matrix, a compiled query): whole
//! or not at all. A temporary file beside the target is renamed over it, and the
//! database itself is refused as a target.

use std::path::Path;

use super::{AppError, Result};

/// Writes `bytes` to `path` whole or not at all: a temporary file beside it is renamed
/// over it, so a reader never sees half a file and a failed write leaves the old one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| AppError::Io {
        path: path.display().to_string(),
        source,
    };
    let tmp = path.with_extension(format!(
        "{}.rulebench-tmp",
        path.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    Ok(())
}
