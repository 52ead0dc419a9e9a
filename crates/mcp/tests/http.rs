//! Streamable HTTP: non-loopback addresses are refused without `allow_remote`, and a server on
//! 127.0.0.1 answers MCP requests at `/mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Fixture;
use staged_mcp::{Approval, HTTP_PATH, McpOptions, StagedServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn run_refuses_a_non_loopback_address_without_allow_remote() {
    let fx = Fixture::new(&[]);
    let options = McpOptions {
        workspace_root: fx.root().to_path_buf(),
        http: Some("0.0.0.0:0".parse().unwrap()),
        allow_remote: false,
        approve: Approval::None,
    };
    let err = staged_mcp::run(options).await.unwrap_err().to_string();
    assert!(err.contains("0.0.0.0:0 is not a loopback address"), "{err}");
    assert!(err.contains("--allow-remote"), "{err}");
    assert!(!err.contains('\n'));
}

#[tokio::test]
async fn serves_a_session_on_loopback() {
    let fx = Fixture::new(&[]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let server = StagedServer::new(fx.open_session(), Approval::None);
    let task = tokio::spawn(staged_mcp::serve_http(listener, server, false, shutdown.clone()));

    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let response = post(addr, init, None, &[]).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"name\":\"staged\""), "{response}");
    let session = header(&response, "mcp-session-id").expect("a session id");
    let headers = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = post(addr, initialized, None, &headers).await;
    assert!(response.starts_with("HTTP/1.1 202"), "{response}");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pending","arguments":{}}}"#;
    let response = post(addr, call, None, &headers).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("No pending actions."), "{response}");

    shutdown.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn refuses_a_non_loopback_host_header() {
    let fx = Fixture::new(&[]);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let server = StagedServer::new(fx.open_session(), Approval::None);
    let task = tokio::spawn(staged_mcp::serve_http(listener, server, false, shutdown.clone()));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let response = post(addr, init, Some("evil.example"), &[]).await;
    assert!(!response.starts_with("HTTP/1.1 200"), "{response}");
    shutdown.cancel();
    task.await.unwrap().unwrap();
}

/// One raw HTTP/1.1 POST to the MCP endpoint with extra `headers`; returns the whole response.
async fn post(
    addr: std::net::SocketAddr,
    body: &str,
    host: Option<&str>,
    headers: &[(&str, &str)],
) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let host = host.map(str::to_owned).unwrap_or_else(|| addr.to_string());
    let extra: String =
        headers.iter().map(|(name, value)| format!("{name}: {value}\r\n")).collect();
    let request = format!(
        "POST {HTTP_PATH} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(10), stream.read_to_end(&mut response))
            .await;
    assert!(read.is_ok(), "timed out; got so far: {}", String::from_utf8_lossy(&response));
    String::from_utf8_lossy(&response).into_owned()
}

/// A response header's value (case-insensitive name).
fn header(response: &str, name: &str) -> Option<String> {
    response.lines().take_while(|line| !line.is_empty()).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
    })
}
