//! Replacing a file so that a failure never destroys what was there: the bytes go to a
//! temporary file next to the target, which is synced and then renamed over it. On any
//! error (EFBIG past `ulimit -f`, ENOSPC, ...) the temporary file is removed; after
//! [`install_signal_handlers`], SIGINT, SIGTERM or SIGHUP remove it before the signal
//! ends the process. Only SIGKILL can leave one behind (named `.NAME.ccoll-PID.tmp`).
//! The `ccoll` CLI writes its outputs so, and `xtask demo` its results.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The temporary file being written, as a C string for the signal handler (null when
/// there is none). Never freed: the handler may read it at any moment on any thread.
static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(core::ptr::null_mut());

/// Signals that end the process and after which the temporary file must not stay.
const CLEANUP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn remove_temp_and_die(sig: libc::c_int) {
    // Only async-signal-safe calls: unlink, then the default action of the signal.
    let path = TEMP.load(Ordering::SeqCst);
    unsafe {
        if !path.is_null() {
            libc::unlink(path);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Sets the process up for [`write_atomically`]: a write past the file-size limit must
/// fail with EFBIG (so the temporary file can be removed) rather than kill the process
/// with SIGXFSZ, and the termination signals must clean up.
pub fn install_signal_handlers() {
    let handler: extern "C" fn(libc::c_int) = remove_temp_and_die;
    // SAFETY: plain signal dispositions; the handler only makes async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        for sig in CLEANUP_SIGNALS {
            libc::signal(sig, handler as libc::sighandler_t);
        }
    }
}

/// The temporary file's path: hidden, in the target's directory (a rename does not
/// cross file systems), unique to this process.
fn temp_path(target: &Path) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.ccoll-{}.tmp", std::process::id()))
}

/// Replaces `target` with `bytes` ([`write_atomically`]).
pub fn write(target: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomically(target, |w| w.write_all(bytes))
}

/// Writes `target` through `fill`, which gets a buffered writer. A regular file (or a
/// new one) is replaced only once every byte is written and synced; anything else (a
/// device such as /dev/null, a pipe) is written in place, since renaming over it would
/// replace the device node.
pub fn write_atomically(target: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), String> {
    let fail = |what: &str, e: io::Error| format!("cannot write {}: {what}{e}", target.display());
    let existing = fs::metadata(target).ok();
    if existing.as_ref().is_some_and(|m| !m.is_file()) {
        let mut w = BufWriter::new(File::create(target).map_err(|e| fail("", e))?);
        return fill(&mut w).and_then(|()| w.flush()).map_err(|e| fail("", e));
    }
    let temp = temp_path(target);
    let c_temp = CString::new(temp.as_os_str().as_bytes()).map_err(|e| fail("", e.into()))?;
    // Published before the file exists: a signal right after its creation removes it.
    TEMP.store(c_temp.into_raw(), Ordering::SeqCst);
    let file = match OpenOptions::new().write(true).create_new(true).open(&temp) {
        Ok(file) => file,
        Err(e) => {
            TEMP.store(core::ptr::null_mut(), Ordering::SeqCst);
            return Err(fail("temporary file: ", e));
        }
    };
    let written = (|| {
        if let Some(m) = &existing {
            file.set_permissions(m.permissions())?;
        }
        let mut w = BufWriter::new(&file);
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        file.sync_all()?;
        fs::rename(&temp, target)
    })();
    // Cleared only after the rename: a signal in between unlinks a name already gone.
    TEMP.store(core::ptr::null_mut(), Ordering::SeqCst);
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(fail("", e));
    }
    // Makes the rename itself durable; the data is in place whether or not this works.
    if let Some(dir) = target.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d }) {
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary_one() {
        let dir = std::env::temp_dir().join(format!("ccoll-atomic-file-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let target = dir.join("results.csv");
        write(&target, b"old").unwrap();
        let err = write_atomically(&target, |w| {
            w.write_all(b"half of the new")?;
            Err(io::Error::other("stopped midway"))
        })
        .unwrap_err();
        assert!(err.contains("stopped midway"), "{err}");
        assert_eq!(fs::read(&target).unwrap(), b"old");
        write(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1, "a temporary file was left");
        fs::remove_dir_all(&dir).unwrap();
    }
}
