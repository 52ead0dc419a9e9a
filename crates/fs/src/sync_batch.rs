//! Making many new files durable with one call instead of one `fsync` each.
//!
//! A commit that writes hundreds of files waits for the disk once per `fsync`: 300 new files
//! of 1.5 KB cost 33 to 49 ms of syncs on ext4 (with or without its journal) even on 16
//! threads, where writing them costs 6 ms. One `syncfs` of the filesystem makes all of them
//! durable, names included, in 10 to 13 ms. It also writes whatever else is dirty on that
//! filesystem, so a batch is used only where that is known to be little, and only where
//! `syncfs` is known to sync and to report a failed write:
//!
//! * Linux 5.8 or later: before, `syncfs` returned success even when a write back failed.
//!   From 5.8 it reports any write-back error on the filesystem since its file descriptor
//!   was opened, so [`SyncBatch::begin`] opens that descriptor before the first file is
//!   written: an error on one of the batch's files (or any other) fails [`SyncBatch::finish`],
//!   and the caller treats its files as not durable (it fails closed).
//! * A local filesystem whose `syncfs` writes everything: ext2/3/4, XFS, Btrfs, F2FS, tmpfs.
//!   Not a network or FUSE filesystem, where it may sync nothing.
//! * At least [`MIN_FILES`] files, and no more than [`DIRTY_PER_FILE`] bytes of other dirty
//!   data per file waiting in the whole system (`Dirty` and `Writeback` of `/proc/meminfo`,
//!   the one file this crate opens by a path of its own), so that writing out other
//!   programs' data costs no more than the syncs it saves.
//!
//! Anywhere else [`SyncBatch::begin`] says no, and the caller syncs each file, as before.

use std::{
    io,
    sync::atomic::{AtomicU8, AtomicU64, Ordering},
};

use crate::DirHandle;

/// When [`SyncBatch::begin`] makes a batch: the tests' choice (see [`set_sync_batch_policy`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncBatchPolicy {
    /// Where the module doc's conditions hold (the default).
    Auto,
    /// Wherever `syncfs` reports errors (Linux 5.8 or later), for any count of files, any
    /// filesystem and any dirty data: a test's way to take the batch's path for sure.
    Always,
    /// Never: every file synced on its own.
    Never,
}

static POLICY: AtomicU8 = AtomicU8::new(0);
static FINISHED: AtomicU64 = AtomicU64::new(0);

/// Sets when this process's [`SyncBatch::begin`] makes a batch. For tests.
#[doc(hidden)]
pub fn set_sync_batch_policy(policy: SyncBatchPolicy) {
    POLICY.store(policy as u8, Ordering::Relaxed);
}

/// How many batches this process has finished successfully. For tests.
#[doc(hidden)]
#[must_use]
pub fn sync_batches_finished() -> u64 {
    FINISHED.load(Ordering::Relaxed)
}

fn policy() -> SyncBatchPolicy {
    match POLICY.load(Ordering::Relaxed) {
        1 => SyncBatchPolicy::Always,
        2 => SyncBatchPolicy::Never,
        _ => SyncBatchPolicy::Auto,
    }
}

/// Fewer files than this are synced one by one: a batch saves nothing on them.
pub(crate) const MIN_FILES: usize = 8;

/// Other dirty data a batch may have to write along, per file it saves a sync of: about what
/// a disk writes in the time of one `fsync`.
pub(crate) const DIRTY_PER_FILE: u64 = 128 * 1024;

/// A batch of new files that one `syncfs` makes durable (see the module doc).
#[derive(Debug)]
pub struct SyncBatch {
    /// A descriptor of the folder the batch writes in, opened for reading before any of its
    /// files is written: `syncfs` reports the write-back errors since its opening.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    dir: std::fs::File,
}

impl SyncBatch {
    /// A batch for `files` new files written under `dir` (all on `dir`'s filesystem), if one
    /// `syncfs` is sound and cheaper than a sync each here; `None`: sync each file.
    #[must_use]
    pub fn begin(dir: &DirHandle, files: usize) -> Option<SyncBatch> {
        let policy = policy();
        if policy == SyncBatchPolicy::Never
            || (files < MIN_FILES && policy == SyncBatchPolicy::Auto)
        {
            return None;
        }
        let dir = dir.open_for_sync().ok()?;
        batch_fits(&dir, files, policy).then_some(SyncBatch { dir })
    }

    /// Makes every file written under the batch's folder since [`SyncBatch::begin`] durable,
    /// with their names (and everything else dirty on that filesystem).
    ///
    /// # Errors
    /// The error of `syncfs`, or of any write back on the filesystem since the batch began:
    /// then none of the batch's files may be taken as durable.
    pub fn finish(self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            rustix::fs::syncfs(&self.dir).map_err(io::Error::from)?;
            FINISHED.fetch_add(1, Ordering::Relaxed);
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        {
            Err(io::Error::other("a sync batch is only made on Linux"))
        }
    }
}

#[cfg(target_os = "linux")]
fn batch_fits(dir: &std::fs::File, files: usize, policy: SyncBatchPolicy) -> bool {
    let uname = rustix::system::uname();
    let osrelease = uname.release().to_string_lossy();
    if policy == SyncBatchPolicy::Always {
        return reports_errors(&osrelease);
    }
    let Ok(stat) = rustix::fs::fstatfs(dir) else { return false };
    let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") else { return false };
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let fs_type = i64::from(stat.f_type as i64);
    decide(fs_type, &osrelease, &meminfo, files)
}

#[cfg(not(target_os = "linux"))]
fn batch_fits(_dir: &std::fs::File, _files: usize, _policy: SyncBatchPolicy) -> bool {
    false
}

/// The filesystems whose `syncfs` writes every dirty file and its metadata: ext2/3/4, XFS,
/// Btrfs, F2FS, tmpfs (`statfs`'s `f_type`, from the kernel's `magic.h`).
const SYNCS_ALL: [i64; 5] = [0xEF53, 0x5846_5342, 0x9123_683E, 0xF2F5_2010, 0x0102_1994];

/// Whether a batch of `files` fits: see the module doc. Pure, for the tests.
fn decide(fs_type: i64, osrelease: &str, meminfo: &str, files: usize) -> bool {
    files >= MIN_FILES
        && SYNCS_ALL.contains(&fs_type)
        && reports_errors(osrelease)
        && dirty_bytes(meminfo)
            .is_some_and(|dirty| dirty <= DIRTY_PER_FILE.saturating_mul(files as u64))
}

/// Whether the kernel of release `osrelease` (`6.1.0-13-amd64`) is 5.8 or later.
fn reports_errors(osrelease: &str) -> bool {
    let mut parts = osrelease.trim().split(['.', '-']);
    let major = parts.next().and_then(|p| p.parse::<u32>().ok());
    let minor = parts.next().and_then(|p| p.parse::<u32>().ok());
    match (major, minor) {
        (Some(major), Some(minor)) => (major, minor) >= (5, 8),
        _ => false,
    }
}

/// The bytes dirty or being written back, system-wide, from `/proc/meminfo`'s text; `None`
/// when either line is missing or unreadable.
fn dirty_bytes(meminfo: &str) -> Option<u64> {
    let field = |name: &str| {
        meminfo.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            let kb = rest.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
            kb.checked_mul(1024)
        })
    };
    field("Dirty")?.checked_add(field("Writeback")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXT4: i64 = 0xEF53;
    const NFS: i64 = 0x6969;

    fn meminfo(dirty_kb: u64, writeback_kb: u64) -> String {
        format!(
            "MemTotal:       24000000 kB\nDirty:          {dirty_kb} kB\nWriteback:      {writeback_kb} kB\nWritebackTmp:   0 kB\n"
        )
    }

    #[test]
    fn a_batch_needs_enough_files_a_known_filesystem_and_a_kernel_that_reports_errors() {
        let quiet = meminfo(20, 0);
        assert!(decide(EXT4, "6.1.0-13-amd64", &quiet, 300));
        assert!(decide(EXT4, "5.8.0", &quiet, MIN_FILES));
        assert!(!decide(EXT4, "6.1.0", &quiet, MIN_FILES - 1), "too few files");
        assert!(!decide(NFS, "6.1.0", &quiet, 300), "a network filesystem");
        assert!(!decide(EXT4, "5.7.19", &quiet, 300), "syncfs hid write-back errors before 5.8");
        assert!(!decide(EXT4, "4.19.0", &quiet, 300));
        assert!(!decide(EXT4, "garbage", &quiet, 300), "an unknown kernel");
    }

    #[test]
    fn a_batch_is_refused_where_other_dirty_data_outweighs_the_syncs_it_saves() {
        let per_file_kb = DIRTY_PER_FILE / 1024;
        assert!(decide(EXT4, "6.1.0", &meminfo(per_file_kb * 300, 0), 300));
        assert!(!decide(EXT4, "6.1.0", &meminfo(per_file_kb * 300, 1), 300));
        assert!(!decide(EXT4, "6.1.0", &meminfo(0, per_file_kb * 10 + 1), 10), "write back counts");
        assert!(!decide(EXT4, "6.1.0", "MemTotal: 1 kB\n", 300), "no Dirty line: no batch");
        assert!(!decide(EXT4, "6.1.0", "Dirty: x kB\nWriteback: 0 kB\n", 300));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_finished_batch_syncs_its_filesystem() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = crate::Root::open(tmp.path()).unwrap().handle().unwrap();
        let batch = SyncBatch { dir: dir.open_for_sync().unwrap() };
        dir.create_new_unsynced("a", b"a\n", &crate::NewFileMode::Default).unwrap();
        batch.finish().unwrap();
        assert_eq!(std::fs::read(tmp.path().join("a")).unwrap(), b"a\n");
    }
}
