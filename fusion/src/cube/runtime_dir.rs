//! A valid `XDG_RUNTIME_DIR` before any Vulkan call.
//!
//! Without one, the Vulkan loader's window-system code (libwayland-client, loaded by Mesa's
//! drivers) prints `error: XDG_RUNTIME_DIR is invalid or not set in the environment` several
//! times while cartfuse opens a compute device that never uses a window. When the variable
//! is unset or not an absolute path to a directory, cartfuse points it at a private
//! directory of its own (mode 0700) for this process and its children.

use std::path::{Path, PathBuf};

/// Makes `XDG_RUNTIME_DIR` valid for this process.
///
/// Call it at the start of `main` (or when a Python extension module is imported), before
/// cartfuse starts a thread or opens a device: it may set an environment variable.
pub fn ensure() {
    let current = std::env::var_os("XDG_RUNTIME_DIR");
    if current
        .as_deref()
        .is_some_and(|dir| is_valid(Path::new(dir)))
    {
        return;
    }
    match private_dir() {
        Ok(dir) => {
            // SAFETY: called first thing in `main`, while the process has a single thread,
            // or while Python imports the extension module (the GIL held, before cartfuse
            // starts a thread), so no thread of ours reads the environment concurrently.
            unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
            tracing::debug!(
                previous = ?current,
                dir = %dir.display(),
                "XDG_RUNTIME_DIR was unset or invalid; using a private directory"
            );
        }
        Err(error) => tracing::debug!("cannot create a private XDG_RUNTIME_DIR: {error}"),
    }
}

/// What libwayland accepts: an absolute path; we also require that it is a directory.
fn is_valid(dir: &Path) -> bool {
    dir.is_absolute() && dir.is_dir()
}

/// `$TMPDIR/cartfuse-runtime-<uid>`, created with mode 0700, or reused when it already is a
/// directory owned by this user with that mode.
#[cfg(unix)]
fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    let name = match uid {
        Some(uid) => format!("cartfuse-runtime-{uid}"),
        None => format!("cartfuse-runtime-pid{}", std::process::id()),
    };
    let dir = std::env::temp_dir().join(name);
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = std::fs::symlink_metadata(&dir)?;
            let private = meta.is_dir()
                && meta.permissions().mode() & 0o777 == 0o700
                && uid.is_none_or(|uid| meta.uid() == uid);
            if private {
                Ok(dir)
            } else {
                Err(std::io::Error::other(format!(
                    "{} exists and is not a private directory of this user",
                    dir.display()
                )))
            }
        }
        Err(error) => Err(error),
    }
}

#[cfg(not(unix))]
fn private_dir() -> std::io::Result<PathBuf> {
    Err(std::io::Error::other("only needed on Unix"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_or_missing_directories_are_invalid() {
        assert!(!is_valid(Path::new("relative/dir")));
        assert!(!is_valid(Path::new("/nonexistent/cartfuse-xdg")));
        assert!(is_valid(&std::env::temp_dir()));
    }

    #[cfg(unix)]
    #[test]
    fn the_private_directory_is_mode_0700_and_reusable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = private_dir().unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(private_dir().unwrap(), dir);
    }
}
