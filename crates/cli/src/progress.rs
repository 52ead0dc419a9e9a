//! A spinner on stderr for work that takes more than about a second, only on a terminal.

use std::{io::IsTerminal, sync::mpsc, thread::JoinHandle, time::Duration};

/// Shows a spinner after a second, until dropped.
pub(crate) struct Progress {
    done: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    pub(crate) fn start(message: &str) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self { done: None, thread: None };
        }
        let (done, rx) = mpsc::channel::<()>();
        let message = message.to_owned();
        let thread = std::thread::spawn(move || {
            if rx.recv_timeout(Duration::from_secs(1)) != Err(mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            let bar = indicatif::ProgressBar::new_spinner().with_message(message);
            bar.enable_steady_tick(Duration::from_millis(100));
            let _ = rx.recv();
            bar.finish_and_clear();
        });
        Self { done: Some(done), thread: Some(thread) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
