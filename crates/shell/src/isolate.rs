//! The namespace a command runs in (Linux): a new user namespace (the caller's own user and
//! group mapped to themselves, so files the command makes are the caller's) and a new mount
//! namespace, where the workspace root is covered by an overlay whose lower layer is the real
//! tree and whose upper layer is the run's `upper/`. `.staged/` and `.git/` are bound back
//! over the overlay, so they are the real ones inside: staged's own state is never a
//! command's write, and a `git` command changes the repository for real (the contract says
//! what that means in gate mode).
//!
//! [`Isolation::enter`] is called by the wrapper's child between `fork` and `exec` of the
//! command's shell (its `pre_exec`), so it makes no allocation: [`Isolation::new`] prepares
//! every path and text beforehand. Everything it does is undone when the namespace's last
//! process ends.
//! On other systems, and where the kernel refuses an unprivileged user namespace (Ubuntu's
//! AppArmor restriction, a container's seccomp profile), it fails, and the caller says so.

use std::{io, path::Path};

/// Why the namespace could not be entered.
#[derive(Debug)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Everything [`Isolation::enter`] needs, made beforehand (paths as C strings, the id maps), so
/// that entering is system calls only: a child between `fork` and `exec` (the wrapper's
/// `pre_exec`) enters it without allocating.
#[derive(Debug)]
pub struct Isolation {
    root: std::ffi::CString,
    cwd: std::ffi::CString,
    /// The overlay's options, with `volatile` and without.
    options: [std::ffi::CString; 2],
    /// `.staged` and `.git` of the root, bound back over the overlay.
    keep: [std::ffi::CString; 2],
    uid_map: String,
    gid_map: String,
}

impl Isolation {
    /// The isolation of `root`: the overlay of `root` (lower) and `upper` (with `work` as its
    /// work folder), `root/.staged` and `root/.git` bound back, the current folder `cwd` seen
    /// through the overlay.
    ///
    /// # Errors
    /// When a path cannot be named to the overlay (a `,`, `:` or `\\`, a NUL byte, not UTF-8).
    pub fn new(root: &Path, upper: &Path, work: &Path, cwd: &Path) -> Result<Self, Unavailable> {
        for path in [root, upper, work] {
            let text = path.to_string_lossy();
            if text.contains([',', ':', '\\']) || path.to_str().is_none() {
                return Err(Unavailable(format!(
                    "the path {} holds a character an overlay mount cannot name",
                    path.display()
                )));
            }
        }
        let c = |text: String| {
            std::ffi::CString::new(text)
                .map_err(|_| Unavailable("a path holds a NUL byte".to_owned()))
        };
        let options = |volatile: &str| {
            c(format!(
                "lowerdir={},upperdir={},workdir={},userxattr{volatile}",
                root.display(),
                upper.display(),
                work.display()
            ))
        };
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        Ok(Isolation {
            root: c(root.display().to_string())?,
            cwd: c(cwd.to_string_lossy().into_owned())?,
            // `volatile` (Linux 5.10 and later): the overlay syncs nothing to the upper layer,
            // neither each copied-up file nor the whole filesystem when it is unmounted; the
            // wrapper makes what it keeps durable itself, and a run of an earlier boot is never
            // trusted (`Run::from_earlier_boot`). Refused by an older kernel, the mount is made
            // without it.
            options: [options(",volatile")?, options("")?],
            keep: [
                c(root.join(".staged").display().to_string())?,
                c(root.join(".git").display().to_string())?,
            ],
            uid_map: format!("{uid} {uid} 1\n"),
            gid_map: format!("{gid} {gid} 1\n"),
        })
    }

    /// Enters a new user and mount namespace holding the isolation. Only system calls, but for
    /// the text of an error.
    ///
    /// # Errors
    /// Why the namespace or a mount was refused; the process is then in no state to run the
    /// command isolated, and must not.
    #[cfg(target_os = "linux")]
    pub fn enter(&self) -> Result<(), Unavailable> {
        use rustix::{
            fd::OwnedFd,
            fs::{CWD, Mode, OFlags, open, openat},
            mount::{MountFlags, MountPropagationFlags, mount, mount_bind, mount_change},
            thread::UnshareFlags,
        };
        fn step(what: &str) -> impl Fn(rustix::io::Errno) -> Unavailable + '_ {
            move |err| Unavailable(format!("{what}: {}", io::Error::from(err)))
        }
        fn write(path: &std::ffi::CStr, bytes: &[u8]) -> rustix::io::Result<()> {
            let fd = open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
            rustix::io::write(&fd, bytes).map(|_| ())
        }
        // SAFETY: only new user and mount namespaces are asked for (not CLONE_FILES or
        // CLONE_FS), so no thread can observe a file descriptor table or a folder it did not
        // expect; and the caller is a single-threaded process (a new user namespace requires
        // it): a fresh child of the wrapper.
        #[allow(unsafe_code)]
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS) }
            .map_err(step("a user and mount namespace was refused"))?;
        write(c"/proc/self/setgroups", b"deny")
            .map_err(step("the namespace's groups could not be set"))?;
        write(c"/proc/self/uid_map", self.uid_map.as_bytes())
            .map_err(step("the namespace's user could not be mapped"))?;
        write(c"/proc/self/gid_map", self.gid_map.as_bytes())
            .map_err(step("the namespace's group could not be mapped"))?;
        mount_change(c"/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)
            .map_err(step("the mounts could not be made private"))?;
        // Handles on the real folders to bind back, taken before the overlay hides them.
        let keep: [Option<OwnedFd>; 2] = [0, 1].map(|i| {
            openat(CWD, self.keep[i].as_c_str(), OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()
        });
        let [volatile, plain] = &self.options;
        mount(
            c"overlay",
            self.root.as_c_str(),
            c"overlay",
            MountFlags::empty(),
            Some(volatile.as_c_str()),
        )
        .or_else(|_| {
            mount(
                c"overlay",
                self.root.as_c_str(),
                c"overlay",
                MountFlags::empty(),
                Some(plain.as_c_str()),
            )
        })
        .map_err(step("the overlay could not be mounted"))?;
        for (fd, path) in keep.iter().zip(&self.keep) {
            let Some(fd) = fd else { continue };
            let mut source = ProcFd::default();
            mount_bind(source.of(fd), path.as_c_str()).map_err(|err| {
                Unavailable(format!(
                    "{} could not be bound back: {}",
                    path.to_string_lossy(),
                    io::Error::from(err)
                ))
            })?;
        }
        drop(keep);
        rustix::process::chdir(self.cwd.as_c_str())
            .map_err(step("the command's folder could not be entered"))?;
        Ok(())
    }

    /// Not Linux: there is no unprivileged overlay (see the contract for macOS).
    ///
    /// # Errors
    /// Always.
    #[cfg(not(target_os = "linux"))]
    pub fn enter(&self) -> Result<(), Unavailable> {
        Err(Unavailable("this system has no unprivileged overlay filesystem".to_owned()))
    }
}

/// `/proc/self/fd/<n>` as a C string, written in place (no allocation).
#[cfg(target_os = "linux")]
#[derive(Default)]
struct ProcFd([u8; 32]);

#[cfg(target_os = "linux")]
impl ProcFd {
    fn of(&mut self, fd: &impl rustix::fd::AsRawFd) -> &std::ffi::CStr {
        const PREFIX: &[u8] = b"/proc/self/fd/";
        let mut digits = [0u8; 12];
        let mut n = u32::try_from(fd.as_raw_fd()).unwrap_or(0);
        let mut len = 0;
        loop {
            if let Some(d) = digits.get_mut(len) {
                *d = b'0' + (n % 10) as u8;
            }
            len += 1;
            n /= 10;
            if n == 0 || len == digits.len() {
                break;
            }
        }
        for (at, &b) in PREFIX.iter().chain(digits.iter().take(len).rev()).enumerate() {
            if let Some(slot) = self.0.get_mut(at) {
                *slot = b;
            }
        }
        // The buffer was zeroed, so the byte after the digits ends the string.
        std::ffi::CStr::from_bytes_until_nul(&self.0).unwrap_or(c"/proc/self/fd/")
    }
}

/// Enters a new user and mount namespace in which `root` is the overlay of `root` (lower) and
/// `upper` (with `work` as its work folder), `root/.staged` and `root/.git` bound back, and
/// the current folder is `cwd` seen through the overlay: [`Isolation::new`], then
/// [`Isolation::enter`].
///
/// # Errors
/// Why the namespace or a mount was refused; the process is then in no state to run the
/// command isolated, and must not.
pub fn enter(root: &Path, upper: &Path, work: &Path, cwd: &Path) -> Result<(), Unavailable> {
    Isolation::new(root, upper, work, cwd)?.enter()
}
