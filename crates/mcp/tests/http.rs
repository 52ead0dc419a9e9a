//! Streamable HTTP with raw requests: the bearer token (401 without it or with a wrong one),
//! the `Origin` check (403 for another origin), the `Host` check (403 for a name that is not
//! this server), the generated token file, and what `HttpOptions::check` refuses.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::SocketAddr;

use common::Fixture;
use staged_mcp::{Approval, BearerToken, HTTP_PATH, HttpEndpoint, HttpOptions, StagedServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "test-token-0123456789abcdef";

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// A server on 127.0.0.1 with `options` (its address is replaced by a free port).
struct Running {
    addr: SocketAddr,
    token_file: Option<std::path::PathBuf>,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), staged_mcp::McpError>>,
}

impl Running {
    async fn start(fx: &Fixture, token: Option<&str>) -> Running {
        let options = HttpOptions {
            token: token.map(|t| BearerToken::parse(t).unwrap()),
            ..HttpOptions::loopback("127.0.0.1:0".parse().unwrap())
        };
        let server = StagedServer::new(fx.open_session(), Approval::None);
        let endpoint = HttpEndpoint::bind(options, &server).await.unwrap();
        let addr = endpoint.local_addr();
        assert_eq!(endpoint.url(), format!("http://{addr}{HTTP_PATH}"));
        let token_file = endpoint.token_file().map(ToOwned::to_owned);
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(endpoint.serve(server, shutdown.clone()));
        Running { addr, token_file, shutdown, task }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }

    /// POSTs `body` with the given headers; `Host` defaults to the server's address.
    async fn post(&self, body: &str, headers: &[(&str, &str)]) -> String {
        let mut all: Vec<(String, String)> =
            headers.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        if !all.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            all.push(("Host".to_owned(), self.addr.to_string()));
        }
        post(self.addr, body, &all).await
    }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[tokio::test]
async fn a_request_with_the_token_is_served_and_one_without_gets_401() {
    let fx = Fixture::new(&[]);
    let server = Running::start(&fx, Some(TOKEN)).await;
    assert_eq!(server.token_file, None, "a given token is not written anywhere");
    let auth = bearer(TOKEN);

    let response = server.post(INIT, &[]).await;
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    assert_eq!(header(&response, "www-authenticate").as_deref(), Some("Bearer realm=\"staged\""));
    assert!(response.contains("Authorization: Bearer <token>"), "{response}");
    for wrong in [bearer("test-token-0123456789abcdeF"), format!("Basic {TOKEN}"), TOKEN.to_owned()]
    {
        let response = server.post(INIT, &[("Authorization", &wrong)]).await;
        assert!(response.starts_with("HTTP/1.1 401"), "{wrong}: {response}");
    }

    let response = server.post(INIT, &[("Authorization", &auth)]).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"name\":\"staged\""), "{response}");
    let session = header(&response, "mcp-session-id").expect("a session id");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let response = server.post(initialized, &headers).await;
    assert!(response.starts_with("HTTP/1.1 202"), "{response}");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pending","arguments":{}}}"#;
    let response = server.post(call, &headers).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("No pending actions."), "{response}");

    // The session is no way around the token.
    let response = server.post(call, &headers[1..]).await;
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    server.stop().await;
}

#[tokio::test]
async fn a_foreign_origin_gets_403_and_a_local_one_is_served() {
    let fx = Fixture::new(&[]);
    let server = Running::start(&fx, Some(TOKEN)).await;
    let auth = bearer(TOKEN);
    let port = server.addr.port();
    for origin in [
        "http://evil.example".to_owned(),
        format!("http://evil.example:{port}"),
        "http://localhost:1".to_owned(),
        "null".to_owned(),
    ] {
        for with_token in [true, false] {
            let mut headers = vec![("Origin", origin.as_str())];
            if with_token {
                headers.push(("Authorization", &auth));
            }
            let response = server.post(INIT, &headers).await;
            assert!(response.starts_with("HTTP/1.1 403"), "{origin}: {response}");
            assert!(response.contains("Origin"), "{response}");
        }
    }
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        let response = server.post(INIT, &[("Origin", &origin), ("Authorization", &auth)]).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{origin}: {response}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_host_that_is_not_loopback_gets_403() {
    let fx = Fixture::new(&[]);
    let server = Running::start(&fx, Some(TOKEN)).await;
    let auth = bearer(TOKEN);
    for host in ["evil.example", "evil.example:8765", "10.0.0.1"] {
        let response = server.post(INIT, &[("Host", host), ("Authorization", &auth)]).await;
        assert!(response.starts_with("HTTP/1.1 403"), "{host}: {response}");
    }
    let response = server.post(INIT, &[("Host", "localhost"), ("Authorization", &auth)]).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    server.stop().await;
}

#[tokio::test]
async fn without_a_given_token_one_is_generated_into_a_private_file_removed_at_stop() {
    let fx = Fixture::new(&[]);
    let server = Running::start(&fx, None).await;
    let file = server.token_file.clone().expect("a token file");
    assert_eq!(file, fx.root().join(".staged").join(format!("mcp-{}.token", server.addr.port())));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let token = std::fs::read_to_string(&file).unwrap();
    let token = token.trim();
    assert_eq!(token.len(), 64);
    let response = server.post(INIT, &[("Authorization", &bearer(token))]).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let response = server.post(INIT, &[]).await;
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    server.stop().await;
    assert!(!file.exists(), "the token file is removed when the server stops");
}

#[tokio::test]
async fn bind_refuses_remote_addresses_without_allow_remote_and_a_token() {
    let fx = Fixture::new(&[]);
    let server = StagedServer::new(fx.open_session(), Approval::None);
    let remote = HttpOptions::loopback("0.0.0.0:0".parse().unwrap());
    let err = HttpEndpoint::bind(remote.clone(), &server).await.unwrap_err().to_string();
    assert!(err.contains("0.0.0.0:0 is not a loopback address"), "{err}");
    assert!(err.contains("--allow-remote"), "{err}");
    let err = HttpEndpoint::bind(HttpOptions { allow_remote: true, ..remote }, &server)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--allow-remote needs a token you chose"), "{err}");
    assert!(
        !fx.root()
            .join(".staged")
            .read_dir()
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().ends_with(".token") })
    );
}

/// One raw HTTP/1.1 POST to the MCP endpoint with `headers`; returns the whole response.
async fn post(addr: SocketAddr, body: &str, headers: &[(String, String)]) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let extra: String =
        headers.iter().map(|(name, value)| format!("{name}: {value}\r\n")).collect();
    let request = format!(
        "POST {HTTP_PATH} HTTP/1.1\r\n{extra}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(30), stream.read_to_end(&mut response))
            .await;
    assert!(read.is_ok(), "no answer; got so far: {}", String::from_utf8_lossy(&response));
    String::from_utf8_lossy(&response).into_owned()
}

/// A response header's value (case-insensitive name).
fn header(response: &str, name: &str) -> Option<String> {
    response.lines().take_while(|line| !line.is_empty()).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
    })
}
