//! Progress of long commands on stderr: an indicatif bar on a terminal; anywhere else (a log
//! file, a pipe, CI) plain lines, `[elapsed] message`, one per measurement and, while one
//! measurement runs long, a `still measuring` line at least every 30 seconds (indicatif
//! draws nothing when stderr is not a terminal).
// [`Progress`] serves the device commands (reproduce, crossover), which need a GPU feature.
#![cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code))]

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A bar of `len` steps labelled `label`.
pub fn bar(len: u64, label: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("[{bar:40}] {pos}/{len} {elapsed}/{eta} {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label);
    bar
}

/// Seconds without a line after which the plain progress repeats the current measurement.
const QUIET_S: u64 = 30;

/// Progress of `len` measurements: a bar on a terminal, plain lines elsewhere.
pub struct Progress {
    bar: Option<ProgressBar>,
    plain: Option<Plain>,
}

struct Plain {
    state: Arc<Mutex<PlainState>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

struct PlainState {
    start: Instant,
    last_line: Instant,
    done: u64,
    len: u64,
    message: String,
}

impl PlainState {
    fn line(&mut self, prefix: &str) {
        let elapsed = self.start.elapsed().as_secs();
        eprintln!(
            "[{:>3}:{:02}] {prefix}{} ({}/{})",
            elapsed / 60,
            elapsed % 60,
            self.message,
            self.done,
            self.len
        );
        self.last_line = Instant::now();
    }
}

impl Progress {
    /// Progress of `len` measurements labelled `label`; plain lines when stderr is not a
    /// terminal.
    pub fn new(len: u64, label: &'static str) -> Self {
        if std::io::stderr().is_terminal() {
            return Self {
                bar: Some(bar(len, label)),
                plain: None,
            };
        }
        let state = Arc::new(Mutex::new(PlainState {
            start: Instant::now(),
            last_line: Instant::now(),
            done: 0,
            len,
            message: label.to_string(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (state, stop) = (state.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let mut state = state.lock().expect("progress state");
                    if state.last_line.elapsed() >= Duration::from_secs(QUIET_S) {
                        state.line("still measuring: ");
                    }
                }
            })
        };
        Self {
            bar: None,
            plain: Some(Plain {
                state,
                stop,
                ticker: Some(ticker),
            }),
        }
    }

    /// The next measurement starts: `message` names it (section and size).
    pub fn start(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_string());
            bar.inc(1);
        }
        if let Some(plain) = &self.plain {
            let mut state = plain.state.lock().expect("progress state");
            state.done += 1;
            state.message = message.to_string();
            state.line("");
        }
    }

    /// Clears the bar or stops the plain lines.
    pub fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some(mut plain) = self.plain.take() {
            plain.stop.store(true, Ordering::Relaxed);
            if let Some(ticker) = plain.ticker.take() {
                ticker.join().ok();
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop();
    }
}
