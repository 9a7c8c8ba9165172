//! The progress bar every long command draws on stderr.

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
