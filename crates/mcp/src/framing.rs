//! The stdio transport: newline-delimited JSON-RPC in front of rmcp, answering every frame
//! that is not a message the server can handle.
//!
//! A client waiting on a request id hangs if the server drops the frame silently, so a frame
//! that is not valid UTF-8, not JSON, nested too deep for the parser, longer than
//! [`MAX_FRAME_BYTES`], or JSON that is not a JSON-RPC message gets a JSON-RPC error reply
//! (-32700 parse error, -32600 invalid request) and the next frame is served. The reply
//! carries the frame's `id` when [`IdScanner`] can recover it, even from a frame that does not
//! parse, and `null` otherwise. Notifications (no `id`, a `method`) that do not parse get no
//! reply, as JSON-RPC requires, and neither do broken responses (a `result` or `error`
//! without `method`), beyond a `null`-id error.
//!
//! Memory stays bounded: at most [`MAX_FRAME_BYTES`] of a frame are buffered; the rest of a
//! longer one is read and dropped up to its newline, scanned only for its id.

use std::{borrow::Cow, collections::VecDeque};

use rmcp::{
    RoleServer,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Serialize;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    sync::mpsc,
    task::JoinHandle,
};

/// The longest frame accepted, in bytes, without its line ending: 16 MiB.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC's "Parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "Invalid Request".
const INVALID_REQUEST: i64 = -32600;

/// Frames queued for the writer before senders wait.
const OUT_QUEUE: usize = 64;

/// Newline-delimited JSON-RPC on a reader and a writer, for rmcp's server.
///
/// Outgoing frames go through one writer task, so a reply the transport writes itself never
/// interleaves with one rmcp sends; the task is spawned by [`LineTransport::new`], which must
/// run inside a Tokio runtime.
pub(crate) struct LineTransport<R> {
    reader: BufReader<R>,
    /// The frame read so far.
    line: Vec<u8>,
    /// While the rest of an oversized frame is being dropped: its id scanner.
    skipping: Option<IdScanner>,
    max_frame: usize,
    /// Error replies decided but not yet handed to the writer.
    replies: VecDeque<Vec<u8>>,
    out: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// A transport reading frames from `reader` and writing them to `writer`.
    pub(crate) fn new<W: AsyncWrite + Unpin + Send + 'static>(reader: R, writer: W) -> Self {
        Self::with_max_frame(reader, writer, MAX_FRAME_BYTES)
    }

    /// The same with another frame limit (tests use a small one).
    pub(crate) fn with_max_frame<W: AsyncWrite + Unpin + Send + 'static>(
        reader: R,
        writer: W,
        max_frame: usize,
    ) -> Self {
        let (out, frames) = mpsc::channel(OUT_QUEUE);
        let writer = tokio::spawn(write_frames(writer, frames));
        LineTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            skipping: None,
            max_frame,
            replies: VecDeque::new(),
            out: Some(out),
            writer: Some(writer),
        }
    }

    /// Reads the next frame. Cancel-safe: partial progress stays in `self`.
    async fn read_frame(&mut self) -> Frame {
        let LineTransport { reader, line, skipping, max_frame, .. } = self;
        loop {
            let (consumed, done) = {
                let buf = match reader.fill_buf().await {
                    Ok(buf) => buf,
                    Err(err) => return Frame::Failed(err),
                };
                if buf.is_empty() {
                    // The end of input: a last frame without a newline still counts.
                    if let Some(scanner) = skipping.take() {
                        return Frame::Oversized(scanner);
                    }
                    return if line.is_empty() { Frame::End } else { Frame::Line };
                }
                let newline = buf.iter().position(|b| *b == b'\n');
                let take = newline.map_or(buf.len(), |idx| idx + 1);
                let content = &buf[..newline.unwrap_or(buf.len())];
                if let Some(scanner) = skipping.as_mut() {
                    scanner.feed(content);
                    (take, newline.map(|_| Done::Oversized))
                } else if line.len() + content.len() > *max_frame {
                    let mut scanner = IdScanner::default();
                    scanner.feed(line);
                    scanner.feed(content);
                    line.clear();
                    line.shrink_to(64 * 1024);
                    *skipping = Some(scanner);
                    (take, newline.map(|_| Done::Oversized))
                } else {
                    line.extend_from_slice(content);
                    (take, newline.map(|_| Done::Line))
                }
            };
            reader.consume(consumed);
            match done {
                None => {}
                Some(Done::Line) => return Frame::Line,
                Some(Done::Oversized) => {
                    if let Some(scanner) = skipping.take() {
                        return Frame::Oversized(scanner);
                    }
                }
            }
        }
    }
}

/// One read.
enum Frame {
    /// A whole frame is in `line`.
    Line,
    /// A frame over the limit was dropped; its scanner saw all of it.
    Oversized(IdScanner),
    /// The input ended.
    End,
    /// Reading failed.
    Failed(std::io::Error),
}

enum Done {
    Line,
    Oversized,
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for LineTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let frame = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            bytes
        });
        async move {
            let frame = frame.map_err(std::io::Error::other)?;
            let Some(out) = out else { return Err(closed()) };
            out.send(frame).await.map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // Hand queued replies to the writer first. `reserve` is cancel-safe: a reply is
            // only taken off the queue once it has a slot.
            while !self.replies.is_empty() {
                let out = self.out.as_ref()?;
                let permit = out.reserve().await.ok()?;
                if let Some(reply) = self.replies.pop_front() {
                    permit.send(reply);
                }
            }
            let frame = self.read_frame().await;
            let decoded = match frame {
                Frame::Line => {
                    let decoded = decode(&self.line);
                    self.line.clear();
                    decoded
                }
                Frame::Oversized(scanner) => Decoded::Reply(error_reply(
                    scanner.reply_id(),
                    INVALID_REQUEST,
                    &format!(
                        "Invalid request: the frame is longer than {} bytes; it was dropped",
                        self.max_frame
                    ),
                )),
                Frame::End => return None,
                Frame::Failed(err) => {
                    tracing::error!(%err, "reading stdin failed");
                    return None;
                }
            };
            match decoded {
                Decoded::Message(message) => return Some(*message),
                Decoded::Ignore => {}
                Decoded::Reply(reply) => self.replies.push_back(reply),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out = None;
        if let Some(writer) = self.writer.take() {
            // The writer ends once every queued frame is written and every sender is gone.
            let _ = writer.await;
        }
        Ok(())
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "the output is closed")
}

async fn write_frames<W: AsyncWrite + Unpin>(mut writer: W, mut frames: mpsc::Receiver<Vec<u8>>) {
    while let Some(frame) = frames.recv().await {
        if let Err(err) = writer.write_all(&frame).await {
            tracing::error!(%err, "writing stdout failed");
            return;
        }
        if frames.is_empty()
            && let Err(err) = writer.flush().await
        {
            tracing::error!(%err, "writing stdout failed");
            return;
        }
    }
    let _ = writer.flush().await;
}

/// What a frame is.
#[derive(Debug)]
enum Decoded {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to do: a blank line, or a notification that does not parse.
    Ignore,
    /// An error reply to write.
    Reply(Vec<u8>),
}

/// Decodes one frame (without its `\n`).
fn decode(frame: &[u8]) -> Decoded {
    let frame = frame.strip_suffix(b"\r").unwrap_or(frame);
    let frame = frame.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(frame);
    if frame.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Ignore;
    }
    let Ok(text) = std::str::from_utf8(frame) else {
        let id = IdScanner::scan(frame).reply_id();
        return Decoded::Reply(error_reply(
            id,
            PARSE_ERROR,
            "Parse error: the frame is not valid UTF-8",
        ));
    };
    let err = match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(message) => return Decoded::Message(Box::new(message)),
        Err(err) => err,
    };
    let scan = IdScanner::scan(frame);
    let message: Cow<'_, str> = match err.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            if err.to_string().starts_with("recursion limit exceeded") {
                "Parse error: the JSON nests deeper than 128 levels".into()
            } else {
                format!("Parse error: {err}").into()
            }
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            if scan.is_notification() {
                tracing::debug!(%err, "ignoring a notification that does not parse");
                return Decoded::Ignore;
            }
            return Decoded::Reply(error_reply(
                scan.reply_id(),
                INVALID_REQUEST,
                &format!("Invalid request: {err}"),
            ));
        }
    };
    Decoded::Reply(error_reply(scan.reply_id(), PARSE_ERROR, &message))
}

/// A JSON-RPC error response, its fields in sorted order (as the frame has always been
/// written).
#[derive(Serialize)]
struct ErrorReply<'a> {
    error: ErrorObject<'a>,
    id: Value,
    jsonrpc: &'static str,
}

/// A JSON-RPC error object.
#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
}

/// A JSON-RPC error response frame, newline included.
fn error_reply(id: Value, code: i64, message: &str) -> Vec<u8> {
    let reply = ErrorReply { error: ErrorObject { code, message }, id, jsonrpc: "2.0" };
    let mut frame = serde_json::to_vec(&reply).unwrap_or_default();
    frame.push(b'\n');
    frame
}

/// Finds a frame's top-level `id` (and whether it has `method`, `result`, `error`) in one
/// pass over its bytes, in constant memory, without parsing: it works on frames that are not
/// UTF-8, not whole, or nested deeper than any parser would go.
#[derive(Debug, Default)]
pub(crate) struct IdScanner {
    /// Open containers.
    depth: usize,
    /// Whether the first non-blank byte was `{`; `None` before it.
    object: Option<bool>,
    in_string: bool,
    escaped: bool,
    /// What the next token at depth 1 is.
    expect: Expect,
    /// The key being read at depth 1, up to `KEY_CAP` bytes.
    key: Vec<u8>,
    key_too_long: bool,
    /// The raw bytes of the `id` value being read, while it is.
    id_raw: Option<Vec<u8>>,
    id: Option<Value>,
    saw_id: bool,
    saw_method: bool,
    saw_result: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Expect {
    #[default]
    Key,
    Colon,
    Value,
    Comma,
}

const KEY_CAP: usize = 8;
const ID_CAP: usize = 1024;

impl IdScanner {
    /// Scans a whole frame.
    pub(crate) fn scan(frame: &[u8]) -> IdScanner {
        let mut scanner = IdScanner::default();
        scanner.feed(frame);
        scanner
    }

    /// Scans the next bytes of a frame.
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.step(byte);
        }
    }

    /// The id to answer with: the frame's `id` if it is a request (it has `method`, or
    /// neither `result` nor `error`) whose id is a string or an integer; else `null`.
    pub(crate) fn reply_id(&self) -> Value {
        match &self.id {
            Some(id) if self.saw_method || !self.saw_result => id.clone(),
            _ => Value::Null,
        }
    }

    /// Whether the frame is a notification: an object with `method` and no `id`.
    pub(crate) fn is_notification(&self) -> bool {
        self.object == Some(true) && self.saw_method && !self.saw_id
    }

    fn step(&mut self, byte: u8) {
        let at_top = self.depth == 1 && self.object == Some(true);
        if let Some(raw) = &mut self.id_raw {
            let ends = !self.in_string && self.depth == 1 && (byte == b',' || byte == b'}');
            if !ends {
                if raw.len() < ID_CAP {
                    raw.push(byte);
                } else {
                    self.id_raw = None;
                }
            }
        }
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if at_top && self.expect == Expect::Key {
                    self.end_key();
                    return;
                }
            }
            if at_top && self.expect == Expect::Key && self.in_string {
                if self.key.len() < KEY_CAP {
                    self.key.push(byte);
                } else {
                    self.key_too_long = true;
                }
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if at_top && self.expect == Expect::Key {
                    self.key.clear();
                    self.key_too_long = false;
                } else if at_top && self.expect == Expect::Value {
                    self.expect = Expect::Comma;
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && self.object.is_none() {
                    self.object = Some(byte == b'{');
                    self.expect = Expect::Key;
                } else if at_top && self.expect == Expect::Value {
                    self.expect = Expect::Comma;
                }
                self.depth = self.depth.saturating_add(1);
            }
            b'}' | b']' => {
                if at_top {
                    self.end_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if at_top && self.expect == Expect::Colon => {
                self.expect = Expect::Value;
                if self.key == b"id" && !self.key_too_long {
                    self.saw_id = true;
                    self.id_raw = Some(Vec::new());
                }
            }
            b',' if at_top => {
                self.end_value();
                self.expect = Expect::Key;
            }
            byte if byte.is_ascii_whitespace() => {}
            _ => {
                if self.depth == 0 && self.object.is_none() {
                    self.object = Some(false);
                } else if at_top && self.expect == Expect::Value {
                    self.expect = Expect::Comma;
                }
            }
        }
    }

    fn end_key(&mut self) {
        self.expect = Expect::Colon;
        if self.key_too_long {
            return;
        }
        match self.key.as_slice() {
            b"method" => self.saw_method = true,
            b"result" | b"error" => self.saw_result = true,
            _ => {}
        }
    }

    fn end_value(&mut self) {
        let Some(raw) = self.id_raw.take() else { return };
        let id = serde_json::from_slice::<Value>(raw.trim_ascii()).ok();
        // JSON-RPC ids are strings or integers; the first `id` key wins.
        if self.id.is_none() {
            self.id = id.filter(|id| id.is_string() || id.is_i64() || id.is_u64());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The typed error frame is the bytes `json!` printed (its keys sorted).
    #[test]
    fn an_error_frame_is_the_bytes_it_always_was() {
        for id in [json!(7), json!("abc"), Value::Null] {
            let frame = error_reply(id.clone(), PARSE_ERROR, "Parse error: \"x\"");
            let before = json!({"jsonrpc": "2.0", "id": id, "error": {"code": PARSE_ERROR, "message": "Parse error: \"x\""}});
            assert_eq!(String::from_utf8(frame).unwrap(), format!("{before}\n"));
        }
    }

    fn reply_of(frame: &[u8]) -> Value {
        match decode(frame) {
            Decoded::Reply(bytes) => {
                assert_eq!(bytes.last(), Some(&b'\n'));
                serde_json::from_slice(&bytes).unwrap()
            }
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn the_scanner_finds_the_top_level_id_wherever_it_is() {
        for (frame, id) in [
            (&br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#[..], json!(7)),
            (br#"{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":"abc"}"#, json!("abc")),
            (br#"{"method":"x","params":"has \"id\": 3 inside","id":4}"#, json!(4)),
            (br#" { "id" : 12 , "method" : "x" "#, json!(12)),
            (b"{\"id\":5,\"method\":\"x\",\"params\":\"\xff\xfe\"}", json!(5)),
            (br#"{"id":1.5,"method":"x"}"#, Value::Null),
            (br#"{"id":null,"method":"x"}"#, Value::Null),
            (br#"{"id":{"a":1},"method":"x"}"#, Value::Null),
            (br#"{"id":3,"result":{}}"#, Value::Null),
            (br#"{"id":3}"#, json!(3)),
            (br#"[{"id":3,"method":"x"}]"#, Value::Null),
            (br#""id""#, Value::Null),
        ] {
            assert_eq!(IdScanner::scan(frame).reply_id(), id, "{}", String::from_utf8_lossy(frame));
        }
        let deep = format!(
            r#"{{"id":9,"method":"x","params":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(IdScanner::scan(deep.as_bytes()).reply_id(), json!(9));
        assert!(IdScanner::scan(br#"{"method":"notifications/x"}"#).is_notification());
        assert!(!IdScanner::scan(br#"{"method":"x","id":null}"#).is_notification());
    }

    #[test]
    fn bad_frames_get_parse_or_invalid_request_errors_with_their_id() {
        let reply = reply_of(b"{not json");
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        assert_eq!(reply["jsonrpc"], "2.0");

        let reply = reply_of(
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\x28\"}}",
        );
        assert_eq!(reply["id"], 4);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        assert_eq!(reply["error"]["message"], "Parse error: the frame is not valid UTF-8");

        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}}}}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let reply = reply_of(deep.as_bytes());
        assert_eq!(reply["id"], "d");
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        assert_eq!(reply["error"]["message"], "Parse error: the JSON nests deeper than 128 levels");

        let reply = reply_of(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":7}"#);
        assert_eq!(reply["id"], 5);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);

        let reply = reply_of(b"[1,2]");
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn blank_lines_and_unparsable_notifications_get_no_reply() {
        assert!(matches!(decode(b""), Decoded::Ignore));
        assert!(matches!(decode(b"  \r"), Decoded::Ignore));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            Decoded::Ignore
        ));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Decoded::Message(_)
        ));
    }

    /// Reads every frame `input` holds through a transport with a `max_frame` limit; returns
    /// how many messages rmcp got and the replies written.
    async fn run(input: Vec<u8>, max_frame: usize) -> (usize, Vec<Value>) {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut client_in) = tokio::io::duplex(1 << 16);
        let writer = tokio::spawn(async move {
            let mut client_out = client_out;
            client_out.write_all(&input).await.unwrap();
        });
        let mut transport = LineTransport::with_max_frame(server_in, server_out, max_frame);
        let mut messages = 0;
        while Transport::<RoleServer>::receive(&mut transport).await.is_some() {
            messages += 1;
        }
        writer.await.unwrap();
        Transport::<RoleServer>::close(&mut transport).await.unwrap();
        drop(transport);
        let mut out = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut client_in, &mut out).await.unwrap();
        let replies = out
            .split(|b| *b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| serde_json::from_slice(line).unwrap())
            .collect();
        (messages, replies)
    }

    #[tokio::test]
    async fn an_oversized_frame_is_dropped_answered_and_the_next_one_served() {
        let mut input = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
        input.push(b'\n');
        input.extend_from_slice(br#"{"jsonrpc":"2.0","method":"tools/call","params":{"pad":""#);
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend_from_slice(br#""},"id":77}"#);
        input.push(b'\n');
        input.extend_from_slice(b"garbage\n");
        input.extend_from_slice(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
        let (messages, replies) = run(input, 4096).await;
        assert_eq!(messages, 2, "both pings reach the server, the last one without a newline");
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert_eq!(replies[0]["id"], 77);
        assert_eq!(replies[0]["error"]["code"], INVALID_REQUEST);
        assert_eq!(
            replies[0]["error"]["message"],
            "Invalid request: the frame is longer than 4096 bytes; it was dropped"
        );
        assert_eq!(replies[1]["id"], Value::Null);
        assert_eq!(replies[1]["error"]["code"], PARSE_ERROR);
    }

    #[tokio::test]
    async fn a_frame_of_exactly_the_limit_is_read() {
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let mut input = frame.to_vec();
        input.push(b'\n');
        let (messages, replies) = run(input, frame.len()).await;
        assert_eq!((messages, replies.len()), (1, 0));
        let (messages, replies) = run(frame.to_vec(), frame.len() - 1).await;
        assert_eq!((messages, replies.len()), (0, 1));
    }
}
