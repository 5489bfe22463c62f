//! The file trees of a coding agent's run: copying a workspace ([`copy_tree`]), hashing the
//! harness folder around each agent step ([`hash_tree`]) and naming what changed
//! ([`changed`]), so that an agent that writes into its tests or graders fails the run.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Files hashed for the integrity check, at most (a bigger tree is refused).
const MAX_HARNESS_FILES: usize = 20_000;

/// Copies a folder's files (symlinks are not followed, they are skipped).
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let ty = e.file_type()?;
        let dest = to.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else if ty.is_file() {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// Every file under `dir` (relative path) and the SHA-256 of its bytes (a symlink: of its
/// target's name), skipping `skip` (the run's own output when it lies inside).
pub fn hash_tree(dir: &Path, skip: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let path = e.path();
            if path.starts_with(skip) || e.file_name() == "__pycache__" {
                continue;
            }
            let ty = e.file_type()?;
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            if ty.is_dir() {
                stack.push(path);
            } else {
                let bytes = if ty.is_symlink() {
                    std::fs::read_link(&path)?
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&path)?
                };
                out.insert(
                    rel,
                    Sha256::digest(&bytes)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                );
                if out.len() > MAX_HARNESS_FILES {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_HARNESS_FILES} files in the folder of the tests and graders"
                    )));
                }
            }
        }
    }
    Ok(out)
}

/// The files whose hash differs between two hashings (added, removed or changed), sorted,
/// at most 20.
pub fn changed(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    let mut v: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    v.sort();
    v.dedup();
    v.truncate(20);
    v
}

/// Whether two files hold the same bytes (false when either cannot be read).
pub fn same_bytes(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
