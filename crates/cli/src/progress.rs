//! Progress bars and spinners on stderr. indicatif hides them by itself when
//! stderr is not a terminal, so scripted runs and tests see clean output.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// A bar over `total` units.
pub fn bar(total: u64, label: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(label.to_string());
    pb
}

/// A bar over `total` bytes.
pub fn bytes_bar(total: u64, label: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(label.to_string());
    pb
}

/// A spinner for work whose length is unknown; it ticks by itself.
pub fn spinner(label: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}] {pos}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_message(label.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}
