//! Where a running review page (`staged ui`) of a workspace is found, so the approval question
//! of `--approve human` can link to the preview on it.
//!
//! `staged ui` records its port in `.staged/ui.json` while it serves ([`PageRecord`], removed
//! when it stops); [`running_page`] reads it and believes it only when a page answers there as
//! `staged ui` answers a browser without its session (so a page that was killed, or a port
//! another program took since, is never linked). The link carries no token: the page opens in
//! the browser the person logged in with, and anyone else is refused by the page itself.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The file, in the workspace's state folder, that names the running page's port.
pub const PAGE_FILE: &str = "ui.json";

/// What a review page answers a request without its session cookie: the mark of a running
/// `staged ui`.
pub const PAGE_NO_SESSION_TEXT: &str = "Unauthorized: open the address `staged ui` printed (it carries the token); this browser has no session with this page";

/// How long the probe of a recorded page may take.
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// What [`PAGE_FILE`] holds: the page's process and port (its fields in sorted order, as the
/// file has always been written).
#[derive(Serialize, Deserialize)]
struct PageFile {
    #[serde(default)]
    pid: u32,
    port: u16,
}

/// The record of a serving page; dropping it removes the record if it is still this page's.
#[derive(Debug)]
pub struct PageRecord {
    path: PathBuf,
    text: String,
}

impl PageRecord {
    /// Records that the page of the workspace whose state folder is `state_dir` serves on
    /// `port` (written whole, then renamed into place).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(state_dir: &Path, port: u16) -> std::io::Result<PageRecord> {
        let path = state_dir.join(PAGE_FILE);
        let record = PageFile { pid: std::process::id(), port };
        let text = serde_json::to_string(&record).map_err(std::io::Error::other)?;
        let tmp = state_dir.join(format!("{PAGE_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &text)?;
        std::fs::rename(&tmp, &path)?;
        Ok(PageRecord { path, text })
    }
}

impl Drop for PageRecord {
    fn drop(&mut self) {
        // Another page started since owns the record now.
        if std::fs::read_to_string(&self.path).is_ok_and(|now| now == self.text) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The port of the review page serving the workspace whose state folder is `state_dir`, when
/// one is running there now.
pub async fn running_page(state_dir: &Path) -> Option<u16> {
    let text = tokio::fs::read_to_string(state_dir.join(PAGE_FILE)).await.ok()?;
    let PageFile { port, .. } = serde_json::from_str(&text).ok()?;
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let request =
            format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = Vec::new();
        stream.take(64 * 1024).read_to_end(&mut answer).await.ok()?;
        let answer = String::from_utf8_lossy(&answer);
        (answer.starts_with("HTTP/1.1 401") && answer.contains(PAGE_NO_SESSION_TEXT))
            .then_some(port)
    };
    tokio::time::timeout(PROBE_TIMEOUT, probe).await.ok().flatten()
}

/// The address of preview `id` on the page on `port`.
pub fn preview_link(port: u16, id: &str) -> String {
    let mut encoded = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    format!("http://127.0.0.1:{port}/?preview={encoded}")
}
