//! The namespace a command runs in (Linux): a new user namespace (the caller's own user and
//! group mapped to themselves, so files the command makes are the caller's) and a new mount
//! namespace, where the workspace root is covered by an overlay whose lower layer is the real
//! tree and whose upper layer is the run's `upper/`. `.staged/` and `.git/` are bound back
//! over the overlay, so they are the real ones inside: staged's own state is never a
//! command's write, and a `git` command changes the repository for real (the contract says
//! what that means in gate mode).
//!
//! [`enter`] is called by a fresh, single-threaded process (the wrapper's child) just before
//! it runs the command; everything it does is undone when the namespace's last process ends.
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

/// Enters a new user and mount namespace in which `root` is the overlay of `root` (lower) and
/// `upper` (with `work` as its work folder), `root/.staged` and `root/.git` bound back, and
/// the current folder is `cwd` seen through the overlay.
///
/// # Errors
/// Why the namespace or a mount was refused; the process is then in no state to run the
/// command isolated, and must not.
#[cfg(target_os = "linux")]
pub fn enter(root: &Path, upper: &Path, work: &Path, cwd: &Path) -> Result<(), Unavailable> {
    use rustix::{
        fs::{CWD, Mode, OFlags, openat},
        mount::{MountFlags, MountPropagationFlags, mount, mount_bind, mount_change},
        thread::UnshareFlags,
    };
    fn step(what: &str) -> impl Fn(io::Error) -> Unavailable + '_ {
        move |err| Unavailable(format!("{what}: {err}"))
    }
    for path in [root, upper, work] {
        let text = path.to_string_lossy();
        if text.contains([',', ':', '\\']) || path.to_str().is_none() {
            return Err(Unavailable(format!(
                "the path {} holds a character an overlay mount cannot name",
                path.display()
            )));
        }
    }
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    // SAFETY: only new user and mount namespaces are asked for (not CLONE_FILES or CLONE_FS),
    // so no thread can observe a file descriptor table or a folder it did not expect; and the
    // caller is a fresh single-threaded process, as a new user namespace requires.
    #[allow(unsafe_code)]
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS) }
        .map_err(|err| step("a user and mount namespace was refused")(err.into()))?;
    std::fs::write("/proc/self/setgroups", "deny")
        .map_err(step("the namespace's groups could not be set"))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))
        .map_err(step("the namespace's user could not be mapped"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
        .map_err(step("the namespace's group could not be mapped"))?;
    mount_change("/", MountPropagationFlags::PRIVATE | MountPropagationFlags::REC)
        .map_err(|err| step("the mounts could not be made private")(err.into()))?;
    // Handles on the real folders to bind back, taken before the overlay hides them.
    let keep: Vec<(rustix::fd::OwnedFd, std::path::PathBuf)> = [".staged", ".git"]
        .iter()
        .filter_map(|name| {
            let path = root.join(name);
            let fd = openat(CWD, &path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).ok()?;
            Some((fd, path))
        })
        .collect();
    let options = format!(
        "lowerdir={},upperdir={},workdir={},userxattr",
        root.display(),
        upper.display(),
        work.display()
    );
    let options = std::ffi::CString::new(options)
        .map_err(|_| Unavailable("the overlay's options hold a NUL byte".to_owned()))?;
    mount("overlay", root, "overlay", MountFlags::empty(), Some(options.as_c_str()))
        .map_err(|err| step("the overlay could not be mounted")(err.into()))?;
    for (fd, path) in &keep {
        let source = format!("/proc/self/fd/{}", rustix::fd::AsRawFd::as_raw_fd(fd));
        mount_bind(source.as_str(), path).map_err(|err| {
            step(&format!("{} could not be bound back", path.display()))(err.into())
        })?;
    }
    drop(keep);
    std::env::set_current_dir(cwd).map_err(step("the command's folder could not be entered"))?;
    Ok(())
}

/// Not Linux: there is no unprivileged overlay (see the contract for macOS).
///
/// # Errors
/// Always.
#[cfg(not(target_os = "linux"))]
pub fn enter(root: &Path, upper: &Path, work: &Path, cwd: &Path) -> Result<(), Unavailable> {
    let _ = (root, upper, work, cwd);
    Err(Unavailable("this system has no unprivileged overlay filesystem".to_owned()))
}
