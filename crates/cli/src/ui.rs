//! `staged ui [--port PORT] [--no-open]`: serve the review page (crate `staged-ui`) on
//! 127.0.0.1 until Ctrl-C or SIGTERM.
//!
//! The process-wide parts live here: the lines printed for the person (the page's address,
//! carrying its token, on stdout, so a script can read it), opening the browser, and the
//! signal handlers. The workspace is opened as `staged mcp` opens it, creating `.staged`, so
//! previews staged after the page started show up on it.

use std::net::{Ipv4Addr, SocketAddr};

use staged_ui::UiServer;
use tokio_util::sync::CancellationToken;

use crate::{
    args::{GlobalArgs, UiArgs},
    context,
    exit::Exit,
};

pub(crate) fn run(global: &GlobalArgs, args: &UiArgs) -> anyhow::Result<Exit> {
    let ws = context::open(global)?;
    let runtime = context::runtime()?;
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    runtime.block_on(async move {
        let server = UiServer::bind(ws, addr).await.map_err(|err| anyhow::anyhow!("{err}"))?;
        let url = server.url();
        println!("{url}");
        eprintln!(
            "staged: the review page is at the address above (it carries the page's token: keep it to yourself). Ctrl-C stops it."
        );
        if !args.no_open {
            open_browser(&url);
        }
        let shutdown = CancellationToken::new();
        tokio::spawn(crate::mcp::stop_on_signal(shutdown.clone()));
        server.serve(shutdown).await.map_err(|err| anyhow::anyhow!("{err}"))
    })?;
    Ok(Exit::Success)
}

/// Opens `url` in the person's browser (`open` on macOS, `xdg-open` elsewhere); a failure is
/// a warning, since the address is printed.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let res = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(err) = res {
        context::warn(&format!(
            "could not open a browser with {opener} ({err}); open the address above"
        ));
    }
}
