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
    let tmp = temp_beside(path);
    std::fs::write(&tmp, bytes).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    Ok(())
}

/// A temporary file's name beside `path`, its own to this process and this call (two
/// runs writing one file never share one): `verdicts.csv.1234-0.rulebench-tmp`.
pub fn temp_beside(path: &Path) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{}-{n}.rulebench-tmp", std::process::id()));
    path.with_file_name(name)
}
